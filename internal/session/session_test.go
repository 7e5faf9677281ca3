package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestCollectPrefersMPIThenChild(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	single := func(pid, elapsed int) string {
		return `{"command":["x"],"processes":[{"pid":` + strconv.Itoa(pid) + `}],"regions":[{"processes":[{"elapsed_ns":` + strconv.Itoa(elapsed) + `}]}]}`
	}
	write("proc-h-10.json", single(10, 5))
	write("proc-h-11.json", single(11, 50))
	res, err := Read(dir, 10)
	if got := res.Files; err != nil || len(got) != 1 || got[0].PID != 10 {
		t.Fatalf("child's file not chosen: %+v %v", got, err)
	}
	res, _ = Read(dir, 99)
	if got := res.Files; len(got) != 1 || got[0].PID != 11 {
		t.Fatalf("longest file not chosen: %+v", got)
	}
	write("mpi-h-12.json", single(12, 1))
	res, _ = Read(dir, 10)
	if got := res.Files; len(got) != 1 || got[0].PID != 12 || !got[0].MPI {
		t.Fatalf("MPI file not preferred: %+v", got)
	}
}

func TestSessionExplainsUnmeasured(t *testing.T) {
	dir := t.TempDir()
	for r := 1; r <= 3; r++ {
		body := "rank " + strconv.Itoa(r) + "\nrank 0 did not take part in popmon's finalize: no measurement written\n"
		if err := os.WriteFile(filepath.Join(dir, "unmeasured-h-"+strconv.Itoa(100+r)+".txt"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "unmeasured-h-9.txt"), []byte("garbage"), 0o600)
	res, err := Read(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res.Explain("mpirun", nil, 0), "\n")
	want := "rank 0 did not take part in popmon's finalize: no measurement written (ranks 1-3)\nno measurement was written"
	if got != want {
		t.Errorf("explain:\n%s\nwant:\n%s", got, want)
	}
	empty, _ := Read(t.TempDir(), 1)
	if got := strings.Join(empty.Explain("job.sh", nil, 0), "\n"); !strings.Contains(got, "job.sh ran no program popmon could measure") ||
		!strings.Contains(got, "LD_PRELOAD") {
		t.Errorf("explain without notes: %s", got)
	}
	if got := strings.Join(empty.Explain("mpirun", nil, syscall.SIGTERM), "\n"); got != "no measurement was written: mpirun was killed by SIGTERM before its processes finished (the library writes the measurement at MPI_Finalize, or at exit without MPI)" {
		t.Errorf("explain of a killed job: %s", got)
	}
}

func TestRankList(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{{[]int{3}, "rank 3"}, {[]int{3, 1, 2, 7}, "ranks 1-3, 7"}, {[]int{0, 2}, "ranks 0, 2"}} {
		if got := rankList(tt.in); got != tt.want {
			t.Errorf("rankList(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCheckLiveDir: the live folders popmon run makes are accepted.
func TestCheckLiveDir(t *testing.T) {
	oldBase := LiveBase
	LiveBase = t.TempDir()
	defer func() { LiveBase = oldBase }()
	session := t.TempDir()
	d, err := MakeLiveDir(session)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLiveDir(session, d); err != nil {
		t.Errorf("MakeLiveDir's %s refused: %v", d, err)
	}
	in := filepath.Join(session, "live")
	os.Mkdir(in, 0o700)
	if err := CheckLiveDir(session, in); err != nil {
		t.Errorf("the session's own live folder %s refused: %v", in, err)
	}
	other := t.TempDir()
	if err := CheckLiveDir(session, filepath.Join(other, "live")); err == nil {
		t.Errorf("another folder's live folder accepted")
	}
}
