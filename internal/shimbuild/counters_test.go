package shimbuild

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildCountersTest compiles shim/test/counters_test.c with shim/counters.c
// (the hardware-counter code, with rdpmc and rdtsc replaced by the test's
// scripts) and the bottom layer (shim/base) with compiler cc, warnings as
// errors, and returns the program.
func buildCountersTest(t *testing.T, cc string) string {
	t.Helper()
	shim := filepath.Join("..", "..", "shim")
	bin := filepath.Join(t.TempDir(), "counters_test")
	args := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-DPOPMON_COUNTERS_TEST",
		"-I", shim}
	args = append(args, baseSources(t, shim)...)
	args = append(args, filepath.Join(shim, "counters.c"), filepath.Join(shim, "test", "counters_test.c"),
		"-ldl", "-lpthread", "-o", bin)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return bin
}

// baseSources returns the C files of the library's bottom layer (shim/base:
// the clock, the process, warnings, the thread table), which the C unit
// tests link as they are rather than stub.
func baseSources(t *testing.T, shim string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(shim, "base", "*.c"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shim/base/*.c: %v", err)
	}
	return files
}

// cCompilers returns the C compilers to build the unit test with: cc, and
// clang when it is another compiler; skips when there is none.
func cCompilers(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, cc := range []string{"cc", "clang"} {
		if _, err := exec.LookPath(cc); err == nil {
			out = append(out, cc)
		}
	}
	if len(out) == 0 {
		t.Skip("no C compiler (apt-get install gcc)")
	}
	return out
}

// TestCountersC runs the C unit tests of the hardware-counter code with
// recorded counter sequences, on any machine (no PMU needed): counting during
// useful time only (MPI calls, nested calls, OpenMP idle time, snapshots),
// multiplexing scaling (time_enabled/time_running), 48-bit and 64-bit
// counter wrap-around and the perf page's seqlock protocol, counters opened
// lazily by threads that become useful (and never by threads that are not
// CPUs of the model) and closed at their exit, a thread whose counters fail,
// and the probe in modes auto (silent), on (one warning) and off.
func TestCountersC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	scenarios := []struct{ name, what string }{
		{"useful", "counting during useful time only, through the MPI hot path"},
		{"multiplex", "scaling by time_enabled/time_running; read() group parsing"},
		{"wrap", "48-bit PMC sign extension, 64-bit wrap, seqlock retry, index 0, multiplexed page times"},
		{"threads", "lazy per-thread open, unaccounted threads, close at thread exit"},
		{"thread-failure", "a thread's open fails: counting stops, reason, one warning"},
		{"probe-auto", "no PMU in mode auto: reason, silent, no counter code on the hot path"},
		{"probe-on", "no PMU in mode on: one warning"},
		{"probe-off", "mode off: never probed"},
		{"doctor-probe", "popmon doctor's probe: opens and closes the group whatever the mode, prints the library's reason"},
		{"real", "the read() backend on this machine's PMU (skipped without one)"},
	}
	for _, cc := range cCompilers(t) {
		bin := buildCountersTest(t, cc)
		for _, s := range scenarios {
			t.Run(cc+"/"+s.name, func(t *testing.T) {
				out, err := exec.Command(bin, s.name).CombinedOutput()
				if err != nil {
					t.Fatalf("%s (%s): %v\n%s", s.name, s.what, err, out)
				}
				if !strings.Contains(string(out), "ok "+s.name+"\n") {
					t.Fatalf("%s: no ok line:\n%s", s.name, out)
				}
				if strings.HasPrefix(string(out), "skip ") {
					t.Log(strings.TrimSpace(string(out)))
				}
			})
		}
	}
}

// TestCountersReasons: the library's reasons for perf_event_open errors
// (popmon_ctr_reason), which the measurement file records and popmon doctor
// prints through the library's probe (POPMON_COUNTERS_PROBE).
func TestCountersReasons(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	out, err := exec.Command(buildCountersTest(t, cCompilers(t)[0]), "reasons").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ENOENT|2|0|counters unavailable: the CPU's performance monitoring unit is not exposed here (perf_event_open: ENOENT)",
		"EACCES|4|0|counters unavailable: not permitted: kernel.perf_event_paranoid=4 must be 2 or lower (perf_event_open: EACCES)",
		"EACCES|1|0|counters unavailable: not permitted, kernel.perf_event_paranoid=1 (perf_event_open: EACCES)",
		"EACCES||0|counters unavailable: not permitted (perf_event_open: EACCES)",
		"EPERM|2|1|counters unavailable: perf_event_open is blocked by a seccomp filter (perf_event_open: EPERM)",
		"ENOSYS||0|counters unavailable: the kernel has no perf_event support (perf_event_open: ENOSYS)",
		"ENOSYS|2|1|counters unavailable: perf_event_open is blocked by a seccomp filter (perf_event_open: ENOSYS)",
		"EINVAL|2|0|counters unavailable: the PMU cannot count cycles and instructions in user space (perf_event_open: EINVAL)",
		"EMFILE|2|0|counters unavailable: too many open files (perf_event_open: EMFILE)",
		"EBUSY|2|0|counters unavailable: the PMU is in use by another tool (perf_event_open: EBUSY)",
	} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("reasons lack %q:\n%s", want, out)
		}
	}
}
