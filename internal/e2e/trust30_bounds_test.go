package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 30, item 5: inputs and options bounded by what the machine can
// hold.

// cost is what one popmon command cost: wall and CPU time, peak RSS.
type cost struct {
	wall, cpu time.Duration
	rssKB     int64
}

// measureCommand runs popmon with args and returns its output, exit code
// and cost (Maxrss is in KB on Linux).
func measureCommand(t *testing.T, dir string, args ...string) (string, int, cost) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, popmonBin, args...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	c := cost{wall: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("popmon %s: still running after 60 s", strings.Join(args, " "))
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("popmon %s: %v", strings.Join(args, " "), err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	c.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	c.rssKB = ru.Maxrss
	return string(out), cmd.ProcessState.ExitCode(), c
}

// talpBomb is a DLB/TALP file of under 200 bytes that declares 2^20 ranks
// (CPUs, nodes, GPUs), less 2^16 per i.
func talpBomb(i int) string {
	return fmt.Sprintf(`{"dlbVersion":"3.7.0","Application":{"Global":{"numMpiRanks":%d,"numCpus":%[1]d,"numNodes":%[1]d,"numGpus":1048576,"elapsedTime":1e12,"usefulTime":9e17,"mpiTime":1e17}}}`, 1048576-65536*i)
}

// TestTALPDeclaredSizeCost: a DLB/TALP file of a few bytes that declares
// 2^20 ranks costs what a small file does in report, scaling, model,
// check and pages (it took 7.3 s and 1.08 GB in report, 33 s and 2.5 GB
// in pages of 8 such files), and the report shows what the file says; a
// file declaring 2^20 GPUs with device times is refused in one line.
func TestTALPDeclaredSizeCost(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		doc := talpBomb(i)
		if len(doc) > 200 {
			t.Fatalf("the bomb has %d bytes", len(doc))
		}
		if err := os.WriteFile(filepath.Join(runs, fmt.Sprintf("r%d.json", i)), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gpus := `{"dlbVersion":"3.7.0","resources":{"numMpiRanks":1048576,"numGpus":1048576},"Application":{"Global":{"elapsedTime":1e12,"usefulTime":9e17,"gpuUsefulTime":9e17}}}`
	if err := os.WriteFile(filepath.Join(dir, "gpus.json"), []byte(gpus), 0o644); err != nil {
		t.Fatal(err)
	}
	r0, r1, r2 := filepath.Join(runs, "r0.json"), filepath.Join(runs, "r1.json"), filepath.Join(runs, "r2.json")
	for _, c := range []struct {
		name  string
		args  []string
		codes []int  // accepted exit codes
		want  string // in the output
	}{
		{"report", []string{"report", r0}, []int{0}, "1048576 processes on 1048576 nodes, 1048576 CPUs"},
		{"report json", []string{"report", "--format", "json", r0}, []int{0}, `"processes": 1048576`},
		{"scaling", []string{"scaling", r0, r1}, []int{0}, "983040 CPUs  1048576 CPUs"},
		{"model", []string{"model", r0, r1, r2}, []int{0}, "Fitted on 917504, 983040, 1048576 CPUs"},
		// check refuses TALP files without per-process useful times (no
		// efficiency value in its default model), whatever their size.
		{"check", []string{"check", "--baseline", r1, r0}, []int{0, 1, 3}, "r0.json"},
		{"pages", []string{"pages", "-i", runs, "-o", filepath.Join(dir, "site")}, []int{0}, "8 run(s)"},
		{"GPUs", []string{"report", filepath.Join(dir, "gpus.json")}, []int{3}, "the file declares 1048576 GPUs (numGpus) with device times; popmon converts at most 65536"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code, k := measureCommand(t, dir, c.args...)
			t.Logf("popmon %s: exit %d, %v wall, %v CPU, %d MB", c.args[0], code, k.wall.Round(time.Millisecond), k.cpu.Round(time.Millisecond), k.rssKB>>10)
			ok := false
			for _, w := range c.codes {
				ok = ok || code == w
			}
			if !ok || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want one of %v, output containing %q:\n%s", code, c.codes, c.want, out)
			}
			// The goal is < 0.5 s and < 100 MB; the CPU time leaves the
			// wall time of a busy machine out, the wall time only catches
			// a stall.
			if k.cpu > 500*time.Millisecond || k.rssKB > 100<<10 || k.wall > 5*time.Second {
				t.Errorf("cost %v CPU, %v wall, %d MB; want < 0.5 s and < 100 MB", k.cpu, k.wall, k.rssKB>>10)
			}
		})
	}
}
