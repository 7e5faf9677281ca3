package shimbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLewiC runs the C tests of LeWI's foundation (shim/lewi_shm.c, the
// node's CPU registry, and shim/lewi.c, DLB's LeWI calls on it) with gcc and
// clang, warnings as errors: forked processes on one registry of their own
// (a key per run) lend, borrow, reclaim and return and get DLB's documented
// codes and states (sequence); --lewi-keep-one-cpu keeps a CPU in a
// blocking call (keep); LeWI off answers DLB_ERR_NOLEWI, a process is dead
// when reaped, a zombie or its pid reused, and a registry open to others or
// of another layout is refused (off); a process
// SIGKILLed while its CPUs are lent and borrowed (kill-lent, left a zombie)
// or while it holds borrowed CPUs (kill-borrowed, reaped) leaves the others
// with their CPUs back; four processes hammering the registry, one killed
// in the middle, end with exactly their own CPUs and no hang (stress); the
// CPU time lent in a blocking call and borrowed in a region is counted
// (account); DROM's new masks change the own CPUs in the registry and the
// own CPU time (drom); with --lewi-respect-cpuset=no the CPUs nobody
// registered, and those of a process that died, are free to borrow
// (public); lent CPUs of its own NUMA node are borrowed first
// (--lewi-affinity=nearby-first, the default), or only those (nearby-only)
// (nearby, on a fake topology).
func TestLewiC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	shim := filepath.Join("..", "..", "shim")
	// A topology of two NUMA nodes, CPUs 0-1 and 2-3 (the nearby
	// scenarios'; the others' CPUs 0-3 too).
	sysfs := t.TempDir()
	for node, cpus := range []string{"0-1\n", "2-3\n"} {
		dir := filepath.Join(sysfs, "devices", "system", "node", fmt.Sprintf("node%d", node))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cpulist"), []byte(cpus), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, cc := range cCompilers(t) {
		bin := filepath.Join(t.TempDir(), "lewi_test")
		args := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-I", shim}
		args = append(args, baseSources(t, shim)...)
		args = append(args, filepath.Join(shim, "lewi_shm.c"), filepath.Join(shim, "lewi.c"),
			filepath.Join(shim, "test", "lewi_test.c"), "-ldl", "-lpthread", "-o", bin)
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
		}
		for _, c := range []struct{ scenario, dlbArgs string }{
			{"off", ""},
			{"sequence", "--lewi"},
			{"keep", "--lewi --lewi-keep-one-cpu"},
			{"kill-lent", "--lewi"},
			{"kill-borrowed", "--lewi"},
			{"stress", "--lewi"},
			{"account", "--lewi"},
			{"giveback", "--lewi"},
			{"drom", "--lewi"},
			{"public", "--lewi --lewi-respect-cpuset=no"},
			{"nearby", "--lewi"},
			{"nearby-only", "--lewi --lewi-affinity=nearby-only"},
		} {
			t.Run(cc+"/"+c.scenario, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, c.scenario)
				key := fmt.Sprintf("test-%d-%d", os.Getpid(), time.Now().UnixNano())
				cmd.Env = []string{"POPMON_LEWI_KEY=" + key, "PATH=" + os.Getenv("PATH"), "POPMON_SYSFS=" + sysfs}
				if c.dlbArgs != "" {
					cmd.Env = append(cmd.Env, "DLB_ARGS="+c.dlbArgs)
				}
				out, err := cmd.CombinedOutput()
				// The registry is the test's: gone however it ended.
				os.Remove(fmt.Sprintf("/dev/shm/popmon-lewi-%d-%s", os.Geteuid(), key))
				if err != nil || !strings.Contains(string(out), "ok "+c.scenario) {
					t.Fatalf("%s: %v\n%s", c.scenario, err, out)
				}
			})
		}
	}
}
