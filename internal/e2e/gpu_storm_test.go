package e2e

// What GPU users run (issue 22, item 3), on the fake CUDA stack: V9, a
// launch storm of 10⁶ short kernels from 1 and from 4 host threads, each on
// its own stream, must lose no record and give exact device times; V10,
// four threads launching concurrently with a designed device load, its
// designed metrics; and the CUPTI floor tool (examples/gpu/floor), which
// gpu-validate.sh's overhead table compares popmon with, must record every
// kernel of the storm. Timelines: examples/gpu/README.md.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	stormLaunches = 1000000 // the done-when's size, not a smaller stand-in
	stormKernelNS = 2000    // gpu_pop V9's default kernel: 2 µs
)

// openMPI is the Open MPI of impls (one MPI is enough for the storm).
func openMPI(t *testing.T) mpiImpl {
	t.Helper()
	for _, impl := range impls(t) {
		if impl.name == "openmpi" {
			return impl
		}
	}
	t.Skip("the launch storm runs with Open MPI, which is not installed")
	return mpiImpl{}
}

// TestGPUStorm: V9 under popmon run --gpu on. Every launch is recorded and
// none is dropped or rejected; the kernels' durations add up exactly (the
// fake device runs a kernel for exactly the time asked); region work's
// device useful time is that sum with one thread (one stream: kernels never
// overlap), and with 4 threads lies between the longest stream's sum and
// the sum (4 streams run concurrently). The program's own expect lines pass
// scripts/gpu-validate.sh --compare, which reads them from the reports.
func TestGPUStorm(t *testing.T) {
	impl := openMPI(t)
	needGPUMeasurement(t)
	dir := fakeCUDA(t, impl.mpicc)
	for _, threads := range []int{1, 4} {
		t.Run(fmt.Sprintf("threads%d", threads), func(t *testing.T) {
			o := runOpts{env: fakeEnv(dir), flags: []string{"--gpu", "on"}, dir: dir}
			start := time.Now()
			r := measureRunWith(t, impl, o, 1, "gpu_pop", "V9", "--launches", fmt.Sprint(stormLaunches),
				"--threads", fmt.Sprint(threads))
			t.Logf("%d launches from %d threads: popmon run took %.1f s", stormLaunches, threads, time.Since(start).Seconds())
			if !strings.HasPrefix(r.stdout, fmt.Sprintf("ok V9 launches=%d threads=%d", stormLaunches, threads)) {
				t.Errorf("program output %q", r.stdout)
			}
			m := r.m
			if m.GPU == nil || !m.GPU.Available {
				t.Fatalf("gpu = %+v, want available", m.GPU)
			}
			if m.GPU.DroppedRecords != 0 || m.GPU.RejectedRecords != 0 {
				t.Errorf("records lost: %d dropped, %d rejected", m.GPU.DroppedRecords, m.GPU.RejectedRecords)
			}
			for _, line := range gpuLines(r.stderr) {
				t.Errorf("GPU warning: %s", line)
			}
			var count, sum, lo, hi int64
			for _, k := range m.GPUKernels {
				if k.Name == "storm_kernel" {
					count, sum, lo, hi = count+k.Count, sum+k.TimeNS, k.MinNS, k.MaxNS
				}
			}
			if count != stormLaunches || sum != stormLaunches*stormKernelNS || lo != stormKernelNS || hi != stormKernelNS {
				t.Errorf("storm_kernel: %d executions, %d ns in all (%d … %d), want %d, %d ns (%d each): %+v",
					count, sum, lo, hi, stormLaunches, int64(stormLaunches*stormKernelNS), stormKernelNS, m.GPUKernels)
			}
			w, ok := m.Region("work")
			if !ok || len(w.Processes) != 1 || len(w.Processes[0].GPUDevices) != 1 {
				t.Fatalf("region work: want one process on one device: %+v", w)
			}
			d := w.Processes[0].GPUDevices[0]
			longest := int64((stormLaunches+threads-1)/threads) * stormKernelNS // thread 0's stream
			switch {
			case threads == 1 && d.UsefulNS != sum:
				t.Errorf("work: device useful %d ns, want the kernels' sum %d ns exactly", d.UsefulNS, sum)
			case d.UsefulNS < longest || d.UsefulNS > sum:
				t.Errorf("work: device useful %d ns, want between the longest stream's %d ns and the sum %d ns", d.UsefulNS, longest, sum)
			}
			if d.ActiveNS != d.UsefulNS {
				t.Errorf("work: device active %d ns, useful %d ns: no copies, want equal", d.ActiveNS, d.UsefulNS)
			}
			if e := w.Processes[0].ElapsedNS; d.UsefulNS > e {
				t.Errorf("work: device useful %d ns longer than the region (%d ns)", d.UsefulNS, e)
			}
			// The same, as gpu-validate.sh checks it from the reports.
			out, code := validateCompare(t, r)
			if code != 0 || strings.Count(out, "  PASS") != 6 {
				t.Errorf("gpu-validate.sh --compare: exit %d, want 0 and 6 PASS:\n%s", code, out)
			}
			for _, want := range []string{"kernels:storm_kernel", "gpu_records_lost", "kernel_s:storm_kernel", "useful_ratio:storm_kernel"} {
				if !strings.Contains(out, want) {
					t.Errorf("gpu-validate.sh --compare does not check %s:\n%s", want, out)
				}
			}
		})
	}
}

// TestGPUStormLossCaught: where records are lost (libpopmon's buffer cap
// set below what 4 launching threads need, as in TestGPUFakeBufferCap),
// V9's expected values fail in gpu-validate.sh --compare: the records lost
// and the kernel count, read from the JSON report, catch it.
func TestGPUStormLossCaught(t *testing.T) {
	impl := openMPI(t)
	needGPUMeasurement(t)
	dir := fakeCUDA(t, impl.mpicc)
	o := runOpts{env: fakeEnv(dir, "POPMON_GPU_BUFFER_MB=8", "FAKECUPTI_PER_THREAD=1"), flags: []string{"--gpu", "on"}, dir: dir}
	r := measureRunWith(t, impl, o, 1, "gpu_pop", "V9", "--launches", "400000", "--threads", "4")
	if r.m.GPU == nil || r.m.GPU.DroppedRecords <= 0 {
		t.Skipf("no record lost with 2 buffers for 4 threads (gpu = %+v): nothing to catch", r.m.GPU)
	}
	out, code := validateCompare(t, r)
	lost := fmt.Sprintf(`(?m)^-  +gpu_records_lost +0 ± 0 +%d  FAIL$`, r.m.GPU.DroppedRecords+r.m.GPU.RejectedRecords)
	if code != 1 || !regexp.MustCompile(lost).MatchString(out) ||
		!regexp.MustCompile(`(?m)^-  +kernels:storm_kernel +400000 ± 0 +[0-9]+  FAIL$`).MatchString(out) {
		t.Errorf("gpu-validate.sh --compare: exit %d, want 1 with gpu_records_lost (%d) and kernels:storm_kernel FAIL:\n%s",
			code, r.m.GPU.DroppedRecords, out)
	}
}

// validateCompare runs scripts/gpu-validate.sh --compare on a run's expect
// lines with its CSV (region work) and JSON reports.
func validateCompare(t *testing.T, r *result) (string, int) {
	t.Helper()
	dir := t.TempDir()
	var expect []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "expect ") {
			expect = append(expect, l)
		}
	}
	files := map[string]string{"expect": strings.Join(expect, "\n") + "\n"}
	for _, f := range []struct{ name, format, region string }{{"csv", "csv", "work"}, {"json", "json", ""}} {
		args := []string{"report", "--format", f.format}
		if f.region != "" {
			args = append(args, "--region", f.region)
		}
		so, se, code := popmon(t, nil, append(args, r.file)...)
		if code != 0 {
			t.Fatalf("popmon %v: exit %d\n%s", args, code, se)
		}
		files[f.name] = so
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", filepath.Join(repoRoot, "scripts", "gpu-validate.sh"), "--compare",
		filepath.Join(dir, "expect"), filepath.Join(dir, "csv"), filepath.Join(dir, "json"))
	b, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(b), code
}

// TestGPUThreads: V10 with every MPI: four threads on four streams, kernels
// of u/2 starting u/4 apart; the device is busy 5u/4 of 2u per repetition
// (device PE = orchestration = 0.625), the primary thread waits u/2 for its
// kernel (PE = offload = 0.75).
func TestGPUThreads(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			needGPUMeasurement(t)
			dir := fakeCUDA(t, impl.mpicc)
			o := runOpts{env: fakeEnv(dir), flags: []string{"--gpu", "auto"}, dir: dir}
			r := measureRunWith(t, impl, o, 1, "gpu_pop", "V10", fmt.Sprint(gpuReps), fmt.Sprint(gpuUnitMS))
			want := effs(0.75, 0.75, 0.625, 1, 1, 0.625, oneRank)
			for id, v := range want {
				r.expect(t, "work", id, v, effTol)
			}
			u := float64(gpuUnitMS) * 1e6 * gpuReps
			w := r.region(t, "work")
			if !within(float64(w.ElapsedNS), 2*u, 0) {
				t.Errorf("work: elapsed %d ns, want %.0f ± 10%%", w.ElapsedNS, 2*u)
			}
			if m := r.m.GPU; m == nil || !m.Available || m.DroppedRecords != 0 || m.RejectedRecords != 0 {
				t.Errorf("gpu = %+v, want available, nothing lost", m)
			}
			for _, line := range gpuLines(r.stderr) {
				t.Errorf("GPU warning: %s", line)
			}
			var spins int64
			for _, k := range r.m.GPUKernels {
				if k.Name == "spin_kernel" {
					spins += k.Count
				}
			}
			if spins != 4*gpuReps {
				t.Errorf("spin_kernel launched %d times, want %d (4 threads × %d)", spins, 4*gpuReps, gpuReps)
			}
			wm, _ := r.m.Region("work")
			slack := 5e6 * gpuReps
			for _, p := range wm.Processes {
				if want := 0.5 * u; !within(float64(p.GPURuntimeNS), want, slack) {
					t.Errorf("primary thread: gpu_runtime_ns %d, want %.0f ± 10%% (its own kernel's wait only)", p.GPURuntimeNS, want)
				}
				if len(p.GPUDevices) != 1 || !within(float64(p.GPUDevices[0].UsefulNS), 1.25*u, slack) {
					t.Errorf("device accounts %+v, want one device busy %.0f ns (the union, not the sum %.0f)", p.GPUDevices, 1.25*u, 2*u)
				}
			}
			out, code := validateCompare(t, r)
			if code != 0 || strings.Count(out, "  PASS") != 10 {
				t.Errorf("gpu-validate.sh --compare: exit %d, want 0 and 10 PASS:\n%s", code, out)
			}
		})
	}
}

// buildFloor compiles examples/gpu/floor/cupti_floor.c with cc (C11,
// -Wall -Wextra -Werror) and, when present, clang; returns the cc build.
func buildFloor(t *testing.T) string {
	t.Helper()
	src := filepath.Join(repoRoot, "examples", "gpu", "floor", "cupti_floor.c")
	var first string
	for _, cc := range []string{"cc", "clang"} {
		if _, err := exec.LookPath(cc); err != nil {
			continue
		}
		so := filepath.Join(t.TempDir(), "cupti_floor-"+cc+".so")
		out, err := exec.Command(cc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-o", so, src, "-ldl").CombinedOutput()
		if err != nil {
			t.Fatalf("%s cupti_floor.c: %v\n%s", cc, err, out)
		}
		if first == "" {
			first = so
		}
	}
	if first == "" {
		t.Skip("no C compiler")
	}
	return first
}

var floorLine = regexp.MustCompile(`(?m)^cupti-floor: records=(\d+) dropped=(\d+) buffers=(\d+) cupti=(\S+)$`)

// TestGPUFloor: the floor tool, injected alone (no popmon) into the storm
// from 4 threads on the fake stack, records every kernel (the storm's and
// the warm-up's) and drops none; without a CUPTI it says so and the program
// runs as usual.
func TestGPUFloor(t *testing.T) {
	impl := openMPI(t)
	dir := fakeCUDA(t, impl.mpicc)
	floor := buildFloor(t)
	run := func(env ...string) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := append(append([]string{}, impl.extra...), "-np", "1", filepath.Join(dir, "gpu_pop"), "V9",
			"--launches", fmt.Sprint(stormLaunches), "--threads", "4")
		cmd := exec.CommandContext(ctx, impl.mpirun, args...)
		cmd.Env = append(os.Environ(), env...)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %v: %v\n%s%s", impl.mpirun, args, err, so.String(), se.String())
		}
		return so.String(), se.String()
	}
	start := time.Now()
	so, se := run(fakeEnv(dir, "CUDA_INJECTION64_PATH="+floor)...)
	t.Logf("%d launches from 4 threads with the floor tool: %.1f s", stormLaunches, time.Since(start).Seconds())
	m := floorLine.FindStringSubmatch(se)
	if m == nil || !strings.HasPrefix(so, "ok V9") {
		t.Fatalf("no cupti-floor line or no ok line:\nstdout:\n%s\nstderr:\n%s", so, se)
	}
	records, _ := strconv.Atoi(m[1])
	if records != stormLaunches+1 || m[2] != "0" || m[4] != filepath.Join(dir, "libcupti.so") {
		t.Errorf("floor: %s, want records=%d (the storm and one warm-up kernel), dropped=0, the fake libcupti", m[0], stormLaunches+1)
	}
	_, se = run("LD_LIBRARY_PATH="+dir, "CUPTI_FLOOR_LIBRARY="+filepath.Join(dir, "nonexistent.so"), "CUDA_INJECTION64_PATH="+floor)
	if !strings.Contains(se, "cupti-floor: not measuring: no usable libcupti") || floorLine.MatchString(se) {
		t.Errorf("without CUPTI: stderr\n%s", se)
	}
}

// TestTorchOverheadScript runs examples/gpu/torch_overhead.py against a
// stand-in torch module (no PyTorch here): its loop, the profiler branch and
// the line gpu-validate.sh reads; the stand-in's profiler keeps one kernel
// event per operation, and one more CPU event that is not counted.
func TestTorchOverheadScript(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	stub := filepath.Join(t.TempDir(), "torch")
	for name, text := range map[string]string{
		"__init__.py": `from . import cuda, profiler, autograd
class _T:
    def __init__(self):
        self.adds = 0
    def add_(self, v):
        self.adds += 1
        profiler._ops.append(1)
        return self
def zeros(n, device=None):
    assert device == "cuda"
    return _T()
`,
		"cuda.py": `calls = 0
def is_available():
    return True
def synchronize():
    global calls
    calls += 1
`,
		"autograd.py": `class DeviceType:
    CPU = 0
    CUDA = 1
`,
		"profiler.py": `from .autograd import DeviceType
_ops = []
class ProfilerActivity:
    CPU = 0
    CUDA = 1
class _E:
    def __init__(self, d):
        self.device_type = d
class profile:
    def __init__(self, activities):
        assert set(activities) == {ProfilerActivity.CPU, ProfilerActivity.CUDA}
    def __enter__(self):
        del _ops[:]
        return self
    def __exit__(self, *a):
        return False
    def events(self):
        return [_E(DeviceType.CUDA) for _ in _ops] + [_E(DeviceType.CPU)]
`,
	} {
		if err := os.MkdirAll(stub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stub, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(repoRoot, "examples", "gpu", "torch_overhead.py")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ops", "1000"}, `^torch loop_ns=[0-9]+\.[0-9] ops=1000\n$`},
		{[]string{"--ops", "1000", "--profile"}, `^torch loop_ns=[0-9]+\.[0-9] ops=1000 kernels=1000\n$`},
	} {
		cmd := exec.Command(py, append([]string{"-B", script}, c.args...)...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Dir(stub))
		out, err := cmd.CombinedOutput()
		if err != nil || !regexp.MustCompile(c.want).Match(out) {
			t.Errorf("torch_overhead.py %v: %v\n%s", c.args, err, out)
		}
	}
}
