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

	"github.com/popmon/popmon/measure"
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

// TestTraceBufferBounded: `popmon run --trace --trace-buffer 100000g` (a
// typo for 100m; a rank reached 12 GB and was killed by the OOM killer) is
// refused before anything runs, with a usage error that says the value, the
// limit and why.
func TestTraceBufferBounded(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	for _, c := range []struct{ flag, value, want string }{
		{"--trace-buffer", "100000g", "popmon run: --trace-buffer 100000g: more than "},
		{"--trace-buffer", "64x", `popmon run: --trace-buffer "64x": not a size`},
		{"--max-process-records", "99999999", "popmon run: --max-process-records 99999999: more than 1048576"},
	} {
		t.Run(c.flag+"="+c.value, func(t *testing.T) {
			start := time.Now()
			out := filepath.Join(t.TempDir(), "m.json")
			so, se, code := popmon(t, nil, append([]string{"run", "--trace", c.flag, c.value, "-o", out, "--"},
				append(launch(impl, 2), filepath.Join(dir, "balanced"), "20", "1")...)...)
			lines := strings.Split(strings.TrimSpace(se), "\n")
			if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], c.want) || so != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line %q", code, so, se, c.want)
			}
			if _, err := os.Stat(out); err == nil || time.Since(start) > 10*time.Second {
				t.Errorf("the job ran (%v, output %v)", time.Since(start), err)
			}
		})
	}
}

// badValues are hostile values of the library's variables, each of which
// must give one line "popmon: POPMON_X=value: why; using fallback" and the
// fallback (they used to be accepted silently, or not checked against
// memory).
var badValues = []struct{ name, value, why string }{
	{"POPMON_MAX_PROCESS_RECORDS", "many", "not a number; using 4096"},
	{"POPMON_COUNTERS", "maybe", "not one of auto, on, off"},
	{"POPMON_BYTES", "-1", "not one of 1, 0"},
	{"POPMON_SIGNALS", "sure", "not one of 1, 0"},
	{"POPMON_CLOCK", "fast", "not one of auto, tsc, monotonic; using auto"},
}

// gpuBadValues are those of the GPU measurement, read with the fake CUDA
// stack.
var gpuBadValues = []struct{ name, value, why string }{
	{"POPMON_GPU_BUFFER_MB", "-5", "outside 8-4096; using 256"},
	{"POPMON_GPU_COUNTERS", "sometimes", "not one of auto, on, off"},
	{"POPMON_GPU_COUNTERS_PERIOD_US", "100us", "trailing characters after the number; using 1000"},
}

// checkOneLine checks that stderr says, once, what each bad value was and
// which fallback was used.
func checkOneLine(t *testing.T, stderr string, bad []struct{ name, value, why string }) {
	t.Helper()
	for _, b := range bad {
		prefix := "popmon: " + b.name + "=" + b.value + ": "
		n := 0
		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(l, prefix) {
				n++
				if !strings.Contains(l, b.why) || !strings.Contains(l, "; using ") {
					t.Errorf("%s=%s: %q, want it to say %q and the fallback", b.name, b.value, l, b.why)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s=%s: %d lines %q, want one\n%s", b.name, b.value, n, prefix, stderr)
		}
	}
}

// TestBadLibraryValues: hostile values of every POPMON_* variable the
// library reads by number or word give one line each, and the run still
// measures (with both MPIs; the GPU ones on the fake CUDA stack).
func TestBadLibraryValues(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			var env []string
			for _, b := range badValues {
				env = append(env, b.name+"="+b.value)
			}
			r := measureRunWith(t, impl, runOpts{env: env}, 2, "balanced", "20", "2")
			checkOneLine(t, r.stderr, badValues)
			if r.m.Resources.Processes != 2 || !strings.Contains(r.stdout, "ok 4") {
				t.Errorf("%d processes, stdout %q", r.m.Resources.Processes, r.stdout)
			}
		})
		t.Run(impl.name+"/exec", func(t *testing.T) { execBadValues(t, impl) })
	}
	t.Run("gpu", func(t *testing.T) {
		needGPUMeasurement(t)
		impl := impls(t)[0]
		dir := fakeCUDA(t, impl.mpicc)
		var env []string
		for _, b := range gpuBadValues {
			env = append(env, b.name+"="+b.value)
		}
		r := measureRunWith(t, impl, runOpts{env: fakeEnv(dir, env...), flags: []string{"--gpu", "on"}, dir: dir}, 1, "gpu_counters", "--reps", "1")
		checkOneLine(t, r.stderr, gpuBadValues)
		if len(r.m.GPUDevices) != 1 || r.m.GPU == nil || r.m.GPU.Counters == nil || r.m.GPU.Counters.PeriodNS != 1000000 {
			t.Errorf("gpu_devices %+v, gpu %+v: want the device measured, its counters every 1000 µs", r.m.GPUDevices, r.m.GPU)
		}
	})
}

// execBadValues: under `popmon exec` (popmon run sets the trace variables
// itself), a trace buffer set by hand beyond a quarter of the node's
// memory, and a bad POPMON_QUIET, give one line each; the ranks trace with
// the default buffer and the measurement is written.
func execBadValues(t *testing.T, impl mpiImpl) {
	dir := examples(t, impl)
	tmp := t.TempDir()
	out, traceDir := filepath.Join(tmp, "m.json"), filepath.Join(tmp, "trace")
	bad := []struct{ name, value, why string }{
		{"POPMON_TRACE_BUFFER", "100000g", "more than "},
		{"POPMON_QUIET", "perhaps", "not one of 1, 0"},
	}
	env := []string{"POPMON_TRACE=1", "POPMON_TRACE_DIR=" + traceDir}
	for _, b := range bad {
		env = append(env, b.name+"="+b.value)
	}
	argv := append(launch(impl, 2), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--", filepath.Join(dir, "balanced"), "20", "2")
	so, se, code := runCommand(t, 2*time.Minute, env, argv...)
	if code != 0 || !strings.Contains(so, "ok 4") {
		t.Fatalf("exit %d, stdout %q\n%s", code, so, se)
	}
	checkOneLine(t, se, bad)
	if strings.Contains(se, "measurement written") {
		t.Errorf("POPMON_QUIET=perhaps (taken as 1) still announced the file:\n%s", se)
	}
	m, err := measure.ReadFile(out)
	if err != nil || m.Resources.Processes != 2 {
		t.Fatalf("measurement: %v", err)
	}
	for _, r := range []string{"rank-000000.trace", "rank-000001.trace"} {
		if st, err := os.Stat(filepath.Join(traceDir, r)); err != nil || st.Size() == 0 {
			t.Errorf("trace %s: %v", r, err)
		}
	}
}
