package e2e

// AMD GPU measurement without an AMD GPU (issue 23): the validation
// scenarios V1–V8 (examples/gpu/scenarios.h) as a HIP program on the fake
// ROCm stack of examples/gpu/fake_rocm (a fake libamdhip64.so and
// librocprofiler-sdk.so, built here with cc), under `popmon run --gpu auto`
// with every MPI: registration → rocprofiler-sdk's HIP API callbacks and
// kernel dispatch and memory copy records → libpopmon's accounts and regions
// → the measurement file → pop.Compute. The HIP-absent path: a HIP program
// without rocprofiler-sdk keeps its host metrics and says why. The real HIP
// program (examples/gpu/gpu_pop_hip.cpp) is parsed by clang, and
// scripts/gpu-validate.sh --vendor amd runs on the fake stack (--fake) and
// as on an AMD machine (stand-ins for hipcc and rocminfo).
//
// The fake program is examples/gpu/fake/fake_pop.c built with -DFAKE_HIP
// against the fake HIP runtime: gpu_pop_hip in the fake stack's folder, with
// gpu_pop's arguments (MODE [REPS [UNIT_MS]]) and output.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// fakeROCm builds the fake ROCm stack (examples/gpu/fake_rocm/build.sh)
// and, with an MPI, the fake-HIP program gpu_pop_hip (build.sh's: fake_pop.c
// with FAKE_HIP), once per MPI; returns their folder.
func fakeROCm(t *testing.T, mpicc string) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) to build the fake ROCm stack")
	}
	script := filepath.Join(repoRoot, "examples", "gpu", "fake_rocm", "build.sh")
	if _, err := os.Stat(script); err != nil {
		t.Skip("the fake ROCm stack (examples/gpu/fake_rocm) is not in this tree yet")
	}
	builtMu.Lock()
	defer builtMu.Unlock()
	key := "fakerocm-" + mpicc
	if dir, ok := built[key]; ok {
		return dir
	}
	dir := filepath.Join(filepath.Dir(popmonBin), key)
	args := []string{script, dir}
	if mpicc != "" {
		args = append(args, mpicc)
	}
	cmd := exec.Command("sh", args...)
	cmd.Env = append(os.Environ(), "CC=cc")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("building the fake ROCm stack: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "gpu_pop_hip")); mpicc != "" && err != nil {
		t.Fatalf("the fake ROCm stack's build made no gpu_pop_hip: %v\n%s", err, out)
	}
	built[key] = dir
	return dir
}

// buildFakeHIPProgram builds fake_pop.c with FAKE_HIP as out, linked with
// the fake HIP runtime of the folder dir (rpath), as fake_rocm/build.sh
// does.
func buildFakeHIPProgram(mpicc, dir, out string) ([]byte, error) {
	gpu := filepath.Join(repoRoot, "examples", "gpu")
	return exec.Command(mpicc, "-O2", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-DFAKE_HIP",
		"-I"+filepath.Join(repoRoot, "shim"), "-I"+filepath.Join(gpu, "fake"), "-I"+filepath.Join(gpu, "fake_rocm"),
		"-I"+gpu, "-I"+filepath.Join(repoRoot, "examples"), "-o", out, filepath.Join(gpu, "fake", "fake_pop.c"),
		"-L"+dir, "-Wl,-rpath,"+dir, "-lamdhip64", "-lm").CombinedOutput()
}

// needAMDMeasurement skips a test that needs libpopmon's rocprofiler-sdk
// backend while it is not in this tree.
func needAMDMeasurement(t *testing.T) {
	t.Helper()
	needGPUMeasurement(t)
	if _, err := os.Stat(filepath.Join(repoRoot, "shim", "gpu_rocm.c")); err != nil {
		t.Skip("libpopmon's AMD backend (shim/gpu_rocm.c, issue 23) is not in this tree yet")
	}
}

// fakeHIPEnv is the environment that puts the fake ROCm stack in front of
// the program: its libraries on the loader path (the program also finds
// libamdhip64.so through its rpath; the runtime finds librocprofiler-sdk.so
// by name or next to itself).
func fakeHIPEnv(dir string, extra ...string) []string {
	ld := dir
	if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
		ld += ":" + old
	}
	return append([]string{"LD_LIBRARY_PATH=" + ld}, extra...)
}

// amdLines are the popmon lines on stderr that speak of GPUs, HIP, ROCm or
// rocprofiler-sdk (the line naming the measurement file aside).
func amdLines(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "popmon: measurement written to ") {
			continue
		}
		l := strings.ToLower(line)
		if strings.HasPrefix(line, "popmon:") && (strings.Contains(l, "gpu") || strings.Contains(l, "hip") ||
			strings.Contains(l, "rocm") || strings.Contains(l, "rocprofiler") || strings.Contains(l, "cuda")) {
			out = append(out, line)
		}
	}
	return out
}

// TestGPUFakeHIP asserts V1–V8 of the HIP program on the fake ROCm stack
// with every MPI (the cases of TestGPUFake: V1–V5 on one rank, V6 and V7 on
// two ranks with two fake GPUs and with one shared, V8 on one rank using two
// GPUs), within ±0.02.
func TestGPUFakeHIP(t *testing.T) {
	for _, impl := range impls(t) {
		for _, c := range gpuCases {
			impl, c := impl, c
			t.Run(fmt.Sprintf("%s/%s/gpus%d", impl.name, c.mode, c.devices), func(t *testing.T) {
				needAMDMeasurement(t)
				dir := fakeROCm(t, impl.mpicc)
				o := runOpts{
					env:   fakeHIPEnv(dir, fmt.Sprintf("FAKEHIP_DEVICES=%d", c.devices), "GPU_POP_COPY_MS="),
					flags: []string{"--gpu", "auto"},
					dir:   dir,
				}
				r := measureRunWith(t, impl, o, c.np, "gpu_pop_hip", c.mode, fmt.Sprint(gpuReps), fmt.Sprint(gpuUnitMS))
				checkHIPRun(t, r, c)
				// No device counters on AMD yet: said, never zeros.
				if g := r.m.GPU; g == nil || g.Counters == nil || g.Counters.Available ||
					!strings.Contains(g.Counters.Reason, "read on NVIDIA GPUs only") {
					t.Errorf("gpu.counters = %+v, want unavailable on AMD with its reason", g)
				}
			})
		}
	}
}

// checkHIPRun is checkGPURun for an AMD run: the designed metrics of region
// work, the gpu object (rocprofiler-sdk, nothing lost), the devices (AMD,
// distinct UUIDs), the kernels and copies counted, and per process G and the
// device's useful and active time.
func checkHIPRun(t *testing.T, r *result, c gpuCase) {
	t.Helper()
	if !strings.HasPrefix(r.stdout, "ok "+c.mode) {
		t.Errorf("program output %q", r.stdout)
	}
	for _, line := range amdLines(r.stderr) {
		t.Errorf("GPU warning on a measurable run: %s", line)
	}
	ids := make([]string, 0, len(c.want))
	for id := range c.want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r.expect(t, "work", id, c.want[id], effTol)
	}
	u := float64(gpuUnitMS) * 1e6 * gpuReps // one unit over all repetitions, ns
	if g := r.region(t, "work"); !within(float64(g.ElapsedNS), c.t*u, 0) {
		t.Errorf("work: elapsed %d ns, want %.0f ± 10%%", g.ElapsedNS, c.t*u)
	}
	m := r.m
	if m.GPU == nil || !m.GPU.Available || m.GPU.Method != measure.GPUMethodROCprofilerSDK || m.GPU.Mode != "auto" ||
		m.GPU.ROCprofilerSDKVersion <= 0 || m.GPU.HIPRuntimeVersion <= 0 || m.GPU.CUPTIVersion != 0 {
		t.Errorf("gpu = %+v, want available, mode auto, method rocprofiler-sdk with its and HIP's versions", m.GPU)
	} else if m.GPU.DroppedRecords != 0 || m.GPU.RejectedRecords != 0 {
		t.Errorf("gpu: %d records dropped, %d rejected", m.GPU.DroppedRecords, m.GPU.RejectedRecords)
	}
	if len(m.GPUDevices) != c.devices || m.Resources.GPUs != c.devices {
		t.Errorf("%d devices (resources.gpus %d), want %d: %+v", len(m.GPUDevices), m.Resources.GPUs, c.devices, m.GPUDevices)
	}
	uuids := map[string]bool{}
	for _, d := range m.GPUDevices {
		uuids[d.UUID] = true
		if d.Vendor != measure.GPUVendorAMD || !strings.HasPrefix(d.Name, "Fake AMD GPU ") {
			t.Errorf("device %d: vendor %q, name %q; want amd, Fake AMD GPU N", d.Index, d.Vendor, d.Name)
		}
	}
	if len(uuids) != len(m.GPUDevices) {
		t.Errorf("device UUIDs not distinct: %+v", m.GPUDevices)
	}
	// Kernels are named as the program names them (rocprofiler-sdk's
	// symbol "spin_kernel.kd" is the kernel spin_kernel).
	var spins int64
	for _, k := range m.GPUKernels {
		if k.Name == "spin_kernel" {
			spins += k.Count
		}
	}
	want := int64(gpuReps * c.np * c.uses)
	if c.mode == "V8" {
		want++ // device 1's warm-up launch
	}
	if spins != want {
		t.Errorf("spin_kernel launched %d times, want %d: %+v", spins, want, m.GPUKernels)
	}
	var copies int64
	for _, cp := range m.GPUCopies {
		if cp.Kind == measure.GPUCopyHtoD {
			copies += cp.Count
		}
	}
	if want := map[string]int64{"V4": gpuReps, "V5": gpuReps}[c.mode]; copies != want {
		t.Errorf("%d HtoD copies, want %d: %+v", copies, want, m.GPUCopies)
	}
	w, ok := m.Region("work")
	if !ok {
		t.Fatal("no region work in the file")
	}
	slack := 5e6 * gpuReps // launch and callback costs, scheduling
	for _, p := range w.Processes {
		if p.Rank < 0 || p.Rank >= c.np {
			t.Fatalf("rank %d in a %d-rank run", p.Rank, c.np)
		}
		if got, want := float64(p.GPURuntimeNS), c.g[p.Rank]*u; !within(got, want, slack) {
			t.Errorf("rank %d: gpu_runtime_ns %.0f, want %.0f ± 10%%", p.Rank, got, want)
		}
		if p.GPURuntimeCalls <= 0 {
			t.Errorf("rank %d: no GPU runtime calls counted", p.Rank)
		}
		if len(p.GPUDevices) != c.uses {
			t.Errorf("rank %d: accounts on %d devices, want %d: %+v", p.Rank, len(p.GPUDevices), c.uses, p.GPUDevices)
			continue
		}
		var useful, active int64
		for _, d := range p.GPUDevices {
			useful += d.UsefulNS
			active += d.ActiveNS
		}
		if d := p.GPUDevices[0]; c.uses == 1 && d.Device != deviceOf(m, p.Rank%c.devices) {
			t.Errorf("rank %d: device %d, want %d (fake ordinal %d)", p.Rank, d.Device, deviceOf(m, p.Rank%c.devices), p.Rank%c.devices)
		}
		if want := c.k[p.Rank] * u; !within(float64(useful), want, slack) {
			t.Errorf("rank %d: useful_ns %d, want %.0f ± 10%%", p.Rank, useful, want)
		}
		if want := c.a[p.Rank] * u; !within(float64(active), want, slack) {
			t.Errorf("rank %d: active_ns %d, want %.0f ± 10%%", p.Rank, active, want)
		}
	}
}

// TestGPUFakeHIPAbsent: a HIP program on a machine whose ROCm has no
// rocprofiler-sdk (the fake HIP runtime alone in a folder, and the fake's
// own switch FAKEHIP_NO_SDK=1) runs to its end under every --gpu mode with
// its host metrics; --gpu auto and on record why the device was not
// measured (gpu.reason names rocprofiler-sdk), --gpu on says it in one line
// and auto says nothing; --gpu off measures nothing of the GPU and says
// nothing.
func TestGPUFakeHIPAbsent(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			needAMDMeasurement(t)
			stack := fakeROCm(t, "")
			dir := t.TempDir()
			libs, _ := filepath.Glob(filepath.Join(stack, "libamdhip64.so*"))
			if len(libs) == 0 {
				t.Fatalf("no libamdhip64.so* in %s", stack)
			}
			for _, lib := range libs {
				b, err := os.ReadFile(lib)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(lib)), b, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if out, err := buildFakeHIPProgram(impl.mpicc, dir, filepath.Join(dir, "gpu_pop_hip")); err != nil {
				t.Fatalf("building gpu_pop_hip: %v\n%s", err, out)
			}
			for _, mode := range []string{"off", "auto", "on"} {
				t.Run(mode, func(t *testing.T) {
					o := runOpts{env: []string{"LD_LIBRARY_PATH=" + dir, "FAKEHIP_NO_SDK=1"}, flags: []string{"--gpu", mode}, dir: dir}
					r := measureRunWith(t, impl, o, 1, "gpu_pop_hip", "V1", "2", "50")
					if !strings.HasPrefix(r.stdout, "ok V1") {
						t.Errorf("program output %q", r.stdout)
					}
					m := r.m
					switch mode {
					case "off":
						if m.GPU != nil && (m.GPU.Available || m.GPU.Mode != "off") {
							t.Errorf("--gpu off: gpu = %+v", m.GPU)
						}
					default:
						if m.GPU == nil || m.GPU.Available || m.GPU.Mode != mode || !strings.Contains(m.GPU.Reason, "rocprofiler-sdk") {
							t.Errorf("gpu = %+v, want mode %s, not available, a reason naming rocprofiler-sdk", m.GPU, mode)
						}
					}
					want := map[string]int{"on": 1}[mode]
					if lines := amdLines(r.stderr); len(lines) != want {
						t.Errorf("--gpu %s: %d GPU lines, want %d:\n%s", mode, len(lines), want, r.stderr)
					}
					if m.Resources.GPUs != 0 || len(m.GPUDevices) != 0 || len(m.GPUKernels) != 0 || len(m.GPUCopies) != 0 {
						t.Errorf("--gpu %s: GPUs %d, devices %+v, kernels %+v, copies %+v: want none",
							mode, m.Resources.GPUs, m.GPUDevices, m.GPUKernels, m.GPUCopies)
					}
					// The host still measures: the work region lasts 2·2u.
					work := r.region(t, "work")
					if !within(float64(work.ElapsedNS), 200e6, 0) {
						t.Errorf("work elapsed %d ns, want 200 ms", work.ElapsedNS)
					}
					for _, id := range []string{"gpu_parallel_efficiency", "device_offload_efficiency"} {
						if _, ok := work.Value(id); ok {
							t.Errorf("--gpu %s: %s reported for an unmeasured GPU", mode, id)
						}
					}
					if w, ok := m.Region("work"); ok {
						for _, p := range w.Processes {
							if p.GPURuntimeNS != 0 || len(p.GPUDevices) != 0 {
								t.Errorf("--gpu %s: rank %d: gpu_runtime_ns %d, devices %+v: want none", mode, p.Rank, p.GPURuntimeNS, p.GPUDevices)
							}
						}
					}
				})
			}
		})
	}
}

// TestGPUProgramParsesHIP: the real HIP program cannot be built here (no
// ROCm), but clang parses it as HIP, host and device side, against the
// declarations in examples/gpu/fake/syntax-hip, with each MPI's headers.
func TestGPUProgramParsesHIP(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			if _, err := exec.LookPath("clang++"); err != nil {
				t.Skip("no clang++ to parse HIP")
			}
			show := map[string][]string{"openmpi": {"--showme:compile"}, "mpich": {"-compile-info"}}[impl.name]
			cxx := strings.Replace(impl.mpicc, "mpicc", "mpicxx", 1)
			info, err := exec.Command(cxx, show...).Output()
			if err != nil {
				t.Skipf("%s %v: %v", cxx, show, err)
			}
			args := []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpuinc", "-nogpulib", "-fsyntax-only",
				"-Wall", "-Wextra", "-Werror", "-DOMPI_SKIP_MPICXX", "-DMPICH_SKIP_MPICXX",
				"-I" + filepath.Join(repoRoot, "examples", "gpu", "fake", "syntax-hip"),
				"-I" + filepath.Join(repoRoot, "shim"), "-I" + filepath.Join(repoRoot, "examples", "gpu")}
			for _, f := range strings.Fields(string(info)) {
				if strings.HasPrefix(f, "-I") {
					args = append(args, f)
				}
			}
			args = append(args, filepath.Join(repoRoot, "examples", "gpu", "gpu_pop_hip.cpp"))
			if out, err := exec.Command("clang++", args...).CombinedOutput(); err != nil {
				if strings.Contains(string(out), "unsupported option") || strings.Contains(string(out), "invalid target ID") {
					t.Skipf("this clang++ does not compile HIP: %s", out)
				}
				t.Errorf("clang++ %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		})
	}
}

// gpuValidate runs scripts/gpu-validate.sh with args and env; returns its
// output and exit status.
func gpuValidate(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{filepath.Join(repoRoot, "scripts", "gpu-validate.sh")}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// checkAMDOverheadTable checks the overhead table of a --vendor amd run:
// the uninstrumented, --gpu off and --gpu on rows, no floor row (said), the
// difference line against the uninstrumented program, and, when judged (an
// AMD machine, or its stand-ins), the per-call and records-lost thresholds.
func checkAMDOverheadTable(t *testing.T, out string, judged bool) {
	t.Helper()
	num := ` +[0-9]+\.[0-9] +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +`
	lines := []string{
		`(?m)^overhead: [0-9]+ trivial runtime calls \(hipGetDevice\)`,
		`(?m)^  uninstrumented` + num + `-$`,
		`(?m)^  popmon --gpu off` + num + `-$`,
		`(?m)^  popmon --gpu on` + num + `0$`,
		`(?m)^  \(no floor row for AMD: `,
		`(?m)^  popmon --gpu on: [-+][0-9.]+ ns per call, [-+][0-9.]+ µs per launch and [-+][0-9.]+ µs per loop launch over uninstrumented$`,
	}
	if judged {
		lines = append(lines, `(?m)^  per trivial call ≤ uninstrumented \+ 100 ns: +[-+][0-9.]+ ns  (PASS|FAIL)$`,
			`(?m)^  per launch and per loop launch: not judged \(no floor for AMD\)$`,
			`(?m)^  records lost by popmon --gpu on = 0: +0 +PASS$`)
	} else {
		lines = append(lines, `(?m)^  thresholds not judged on the fake stack`)
	}
	for _, l := range lines {
		if !regexp.MustCompile(l).MatchString(out) {
			t.Errorf("overhead table: no line like %s:\n%s", l, out)
		}
	}
	if strings.Contains(out, "CUPTI records only") {
		t.Errorf("overhead table of an AMD run has a CUPTI floor row:\n%s", out)
	}
}

// TestGPUValidateScriptAMD: scripts/gpu-validate.sh --vendor: its argument
// check, and a whole --vendor amd --fake run on the fake ROCm stack (every
// value PASS, V9's storm counted exactly).
func TestGPUValidateScriptAMD(t *testing.T) {
	out, code := gpuValidate(t, nil, "--vendor", "intel")
	if code != 2 || !strings.Contains(out, "--vendor nvidia or amd") {
		t.Errorf("--vendor intel: exit %d, want 2 and the usage:\n%s", code, out)
	}
	impl := impls(t)[0]
	needAMDMeasurement(t)
	fakeROCm(t, "")
	out, code = gpuValidate(t, []string{"POPMON=" + popmonBin}, "--vendor", "amd", "--fake", "--mpi", impl.name,
		"--reps", fmt.Sprint(gpuReps), "--launches", "100000", "--overhead", "20000", "--out", filepath.Join(t.TempDir(), "run"))
	if code != 0 {
		t.Fatalf("gpu-validate.sh --vendor amd --fake: exit %d\n%s", code, out)
	}
	if n, want := len(regexp.MustCompile(`(?m)^V.*  PASS$`).FindAllString(out, -1)), 10*(5+2*3+1+1)+2*6; n != want {
		t.Errorf("%d values PASS, want %d (10 per run of V1-V8 and V10, 13 runs; 6 per V9 run, 2 runs)\n%s", n, want, out)
	}
	checkAMDOverheadTable(t, out, false)
	for _, want := range []string{"== fake ROCm stack (examples/gpu/fake_rocm)",
		"V6-2gpus     gpu_load_balance                  0.750", "V6-shared    gpu_load_balance                  1.000",
		"V6-distinct  gpu_load_balance                  0.750", "V8           gpu_load_balance                  0.750",
		"V9-1thread   kernels:storm_kernel             100000 ± 0         100000  PASS",
		"V9-4threads  gpu_records_lost                      0 ± 0              0  PASS",
		"V9-1thread   useful_ratio:storm_kernel      1.000000 ± 1e-06   1.000000  PASS",
		"V10          gpu_parallel_efficiency           0.625 ± 0.02 ",
		"(PyTorch rows: not on the fake stack)", "thresholds not judged on the fake stack",
		"gpu-validate: all 16 runs PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`(?m)^V[1-7][-a-z0-9]*: popmon:`).MatchString(out) {
		t.Errorf("popmon warned:\n%s", out)
	}
}

// TestGPUValidateScriptAMDPath runs scripts/gpu-validate.sh --vendor amd as
// on an AMD machine, with stand-ins for rocminfo (1 or 2 GPU agents next to
// a CPU agent), hipcc (called by mpicxx as its compiler: it builds the
// fake-HIP program instead of gpu_pop_hip.cpp) and a ROCm folder holding the
// fake librocprofiler-sdk.so: the machine report, the build step, the choice
// of V6 runs (1 GPU: shared and distinct; 2: two GPUs and shared through
// HIP_VISIBLE_DEVICES=0), V9, V10, and the overhead table's AMD form (no
// floor; the per-call and records-lost thresholds judged: on the fake stack
// the per-call one may pass or fail, its costs are not real). u = 200 ms,
// as in TestGPUValidateScriptGPUPath.
func TestGPUValidateScriptAMDPath(t *testing.T) {
	impl := impls(t)[0]
	needAMDMeasurement(t)
	stack := fakeROCm(t, "")
	stubs, rocm := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(rocm, ".info"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(rocm, ".info", "version"), []byte("7.0.0-stand-in\n"), 0o644)
	os.MkdirAll(filepath.Join(rocm, "lib"), 0o755)
	if err := os.Symlink(filepath.Join(stack, "librocprofiler-sdk.so"), filepath.Join(rocm, "lib", "librocprofiler-sdk.so")); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("rocminfo", `#!/bin/sh
# stand-in for rocminfo: a CPU agent, then STUB_GPUS GPU agents
cat <<EOF
ROCk module is loaded
=====================
HSA Agents
==========
*******
Agent 1
*******
  Name:                    Fake CPU
  Uuid:                    CPU-XX
  Marketing Name:          Fake CPU
  Vendor Name:             CPU
  Device Type:             CPU
EOF
i=0
while [ "$i" -lt "${STUB_GPUS:-1}" ]; do
	cat <<EOF
*******
Agent $((i + 2))
*******
  Name:                    gfx90a
  Uuid:                    GPU-66616b6568697$i
  Marketing Name:          Fake AMD GPU $i
  Vendor Name:             AMD
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
EOF
	i=$((i + 1))
done
`)
	gpu := filepath.Join(repoRoot, "examples", "gpu")
	write("hipcc", `#!/bin/sh
# stand-in for hipcc (as mpicxx's compiler): builds the fake-HIP program
# instead of gpu_pop_hip.cpp
if [ "$1" = --version ]; then
	echo "HIP version: 7.0.0-stand-in"
	echo "AMD clang version 20.0.0 (stand-in)"
	exit 0
fi
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=$2 && shift ;;
	--offload-arch=*) arch=${1#--offload-arch=} ;;
	esac
	shift
done
[ "$arch" = native ] || exit 9
exec `+impl.mpicc+` -O2 -std=c11 -DFAKE_HIP -I`+filepath.Join(repoRoot, "shim")+` -I`+filepath.Join(gpu, "fake")+` \
	-I`+filepath.Join(gpu, "fake_rocm")+` -I`+gpu+` -I`+filepath.Join(repoRoot, "examples")+` -o "$out" \
	`+filepath.Join(gpu, "fake", "fake_pop.c")+` -L`+stack+` -Wl,-rpath,`+stack+` -lamdhip64 -lm
`)
	for _, c := range []struct {
		gpus   int
		labels []string
	}{{1, []string{"V6-shared", "V6-distinct", "V8           skipped: needs 2 GPUs"}}, {2, []string{"V6-2gpus", "V6-shared", "V8           gpu_load_balance"}}} {
		t.Run(fmt.Sprintf("gpus%d", c.gpus), func(t *testing.T) {
			out, code := gpuValidate(t, []string{"PATH=" + stubs + string(os.PathListSeparator) + os.Getenv("PATH"), "POPMON=" + popmonBin,
				fmt.Sprintf("STUB_GPUS=%d", c.gpus), fmt.Sprintf("FAKEHIP_DEVICES=%d", c.gpus), "ROCM_PATH=" + rocm,
				"LD_LIBRARY_PATH=" + stack, "PYTHON=" + filepath.Join(stubs, "no-python")},
				"--vendor", "amd", "--mpi", impl.name, "--only", "V1,V6,V8,V9,V10", "--reps", fmt.Sprint(gpuReps),
				"--unit", "200", "--launches", "20000", "--overhead", "20000")
			runs := 7 + c.gpus - 1 // V1, V6 twice, (V8), V9 twice, V10, overhead
			summary := fmt.Sprintf("gpu-validate: all %d runs PASS", runs)
			if code != 0 {
				// Only the per-call threshold may fail here.
				for _, f := range regexp.MustCompile(`(?m)^.*FAIL.*$`).FindAllString(out, -1) {
					if !regexp.MustCompile(`^  per trivial call ≤ .*  FAIL$|^gpu-validate: 1 of \d+ runs with a FAIL`).MatchString(f) {
						t.Errorf("gpu-validate.sh: exit %d: a FAIL other than the per-call threshold: %q", code, f)
					}
				}
				summary = fmt.Sprintf("gpu-validate: 1 of %d runs with a FAIL", runs)
			}
			for _, want := range append([]string{"== machine", "GPU 0: gfx90a, Fake AMD GPU 0, GPU-66616b65686970",
				"ROCm: 7.0.0-stand-in (" + rocm + ")", "HIP version: 7.0.0-stand-in",
				"rocprofiler-sdk: " + filepath.Join(rocm, "lib", "librocprofiler-sdk.so"),
				"V1           gpu_parallel_efficiency", "V9-1thread   kernels:storm_kernel              20000 ± 0          20000  PASS",
				"V9-4threads  useful_ratio:storm_kernel", "V10          gpu_orchestration_efficiency",
				"(PyTorch rows: no Python with PyTorch for ROCm and an AMD GPU found: set PYTHON)", summary}, c.labels...) {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if c.gpus == 2 && !strings.Contains(out, "GPU 1: gfx90a, Fake AMD GPU 1") {
				t.Errorf("machine report lacks GPU 1:\n%s", out)
			}
			checkAMDOverheadTable(t, out, true)
			if n, want := len(regexp.MustCompile(`(?m)^V.*  PASS$`).FindAllString(out, -1)), 10*(4+c.gpus-1)+2*6; n != want {
				t.Errorf("%d values PASS, want %d\n%s", n, want, out)
			}
		})
	}
}
