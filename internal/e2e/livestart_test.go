package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/live"
)

// TestLiveStartTime: a live file's header names its process by pid and
// start time (/proc/PID/stat field 22), so that a reader does not take
// another process that reuses the pid for it (live.Alive). The library
// preloaded into a sleeping program with a private live folder: while it
// runs, its live file's start time is that field of its pid, not 0 (which
// readers take as "not compared").
func TestLiveStartTime(t *testing.T) {
	lib, se, code := popmon(t, nil, "build", "--no-mpi")
	if code != 0 {
		t.Fatalf("popmon build --no-mpi: exit %d\n%s", code, se)
	}
	dir, err := os.MkdirTemp(t.TempDir(), "live-")
	if err != nil {
		t.Fatal(err)
	}
	// sleep under another name: named sleep, it is a job script's utility,
	// which the library leaves dormant (no live file).
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(t.TempDir(), "app")
	if err := os.WriteFile(app, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, app, "5")
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+strings.TrimSpace(lib), "POPMON_LIVE_DIR="+dir,
		"POPMON_OUTPUT="+filepath.Join(t.TempDir(), "m.json"), "POPMON_QUIET=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var files []string
	for deadline := time.Now().Add(20 * time.Second); len(files) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		files, _ = filepath.Glob(filepath.Join(dir, "*.live"))
	}
	if len(files) != 1 {
		t.Fatalf("live files %v, want the sleeping program's", files)
	}
	f, err := live.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	pid, start, _ := f.Process()
	b, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	want, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if pid != cmd.Process.Pid || start != want || start == 0 {
		t.Errorf("live file names pid %d started at %d, want pid %d started at %d", pid, start, cmd.Process.Pid, want)
	}
	if !live.Alive(pid, start) {
		t.Errorf("live.Alive(%d, %d) = false for the running program", pid, start)
	}
}
