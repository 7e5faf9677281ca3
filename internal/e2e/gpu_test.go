package e2e

// GPU measurement without a GPU (issue 12): the validation scenarios V1–V7
// (examples/gpu/scenarios.h, research gpu.md §5) run under `popmon run --gpu
// auto` on the fake CUDA stack of examples/gpu/fake (a fake libcuda.so.1 and
// libcupti.so, built here with cc), through the whole chain: injection →
// callbacks → records → unions → regions → measurement file → pop.Compute.
// And the CUDA-absent path: --gpu auto silent and identical to --gpu off,
// --gpu on one warning.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// fakeCUDA builds the fake CUDA stack (and, with an MPI, the fake-CUDA
// program gpu_pop) once per MPI and returns its folder.
func fakeCUDA(t *testing.T, mpicc string) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) to build the fake CUDA stack")
	}
	builtMu.Lock()
	defer builtMu.Unlock()
	key := "fakecuda-" + mpicc
	if dir, ok := built[key]; ok {
		return dir
	}
	dir := filepath.Join(filepath.Dir(popmonBin), key)
	args := []string{filepath.Join(repoRoot, "examples", "gpu", "fake", "build.sh"), dir}
	if mpicc != "" {
		args = append(args, mpicc)
	}
	cmd := exec.Command("sh", args...)
	cmd.Env = append(os.Environ(), "CC=cc")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the fake CUDA stack: %v\n%s", err, out)
	}
	built[key] = dir
	return dir
}

// needGPUMeasurement skips a test that needs libpopmon's GPU measurement
// while it is not in this tree.
func needGPUMeasurement(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot, "shim", "gpu.c")); err != nil {
		t.Skip("libpopmon's GPU measurement (shim/gpu.c, issue 12 part 1) is not in this tree yet")
	}
	so, se, _ := popmon(t, nil, "run", "--help")
	if !strings.Contains(so+se, "-gpu") {
		t.Skip("popmon run has no --gpu option in this tree yet (issue 12 part 1)")
	}
}

// fakeEnv is the environment that puts the fake stack in front of the
// program: its libcuda.so.1 on the loader path, its libcupti for popmon.
func fakeEnv(dir string, extra ...string) []string {
	ld := dir
	if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
		ld += ":" + old
	}
	return append([]string{"LD_LIBRARY_PATH=" + ld, "POPMON_CUPTI_LIBRARY=" + filepath.Join(dir, "libcupti.so")}, extra...)
}

// TestGPUFakeStack runs the fake stack's own smoke test: a tool injected
// through CUDA_INJECTION64_PATH that subscribes as libpopmon does and checks
// the callbacks and records it gets (no popmon involved).
func TestGPUFakeStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C libraries")
	}
	dirs := map[string]string{"cc": fakeCUDA(t, "")}
	if _, err := exec.LookPath("clang"); err == nil { // the fakes are -Werror clean with clang too
		dirs["clang"] = filepath.Join(t.TempDir(), "clang")
		cmd := exec.Command("sh", filepath.Join(repoRoot, "examples", "gpu", "fake", "build.sh"), dirs["clang"])
		cmd.Env = append(os.Environ(), "CC=clang")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building the fake CUDA stack with clang: %v\n%s", err, out)
		}
	}
	for cc, dir := range dirs {
		cmd := exec.Command(filepath.Join(dir, "smoke"))
		cmd.Env = append(os.Environ(), "CUDA_INJECTION64_PATH="+filepath.Join(dir, "libsmoke.so"),
			"POPMON_CUPTI_LIBRARY="+filepath.Join(dir, "libcupti.so"), "FAKECUDA_DEVICES=2")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("smoke test (%s): %v\n%s", cc, err, out)
		}
	}
}

// gpuCase is one scenario of examples/gpu/scenarios.h with u = c = 100 ms:
// the per-repetition times in units of u, and the expected metrics of
// region "work".
type gpuCase struct {
	mode    string
	np      int
	devices int       // FAKECUDA_DEVICES; rank r uses device r mod devices
	t       float64   // T
	g       []float64 // per rank: host time in the CUDA runtime
	k       []float64 // per rank: kernel time on its device (all its devices)
	a       []float64 // per rank: kernels ∪ copies on its device (all its devices)
	want    map[string]float64
	uses    int // devices each rank uses
}

// hostMPI is the MPI branch of V6 and V7 (one node).
var hostMPI = map[string]float64{
	"mpi_parallel_efficiency": 0.875, "mpi_load_balance": 0.875, "mpi_load_balance_in": 0.875,
	"mpi_load_balance_out": 1, "mpi_communication_efficiency": 1,
}

func effs(pe, off, gpe, glb, gcomm, gorch float64, mpi map[string]float64) map[string]float64 {
	m := map[string]float64{
		"parallel_efficiency": pe, "device_offload_efficiency": off,
		"gpu_parallel_efficiency": gpe, "gpu_load_balance": glb,
		"gpu_communication_efficiency": gcomm, "gpu_orchestration_efficiency": gorch,
	}
	for k, v := range mpi {
		m[k] = v
	}
	return m
}

var oneRank = map[string]float64{"mpi_parallel_efficiency": 1, "mpi_load_balance": 1, "mpi_communication_efficiency": 1}

// gpuCases is the table of research gpu.md §5 with c = u.
var gpuCases = []gpuCase{
	{"V1", 1, 1, 2, []float64{1}, []float64{1}, []float64{1}, effs(0.5, 0.5, 0.5, 1, 1, 0.5, oneRank), 1},
	{"V2", 1, 1, 2, []float64{0}, []float64{2}, []float64{2}, effs(1, 1, 1, 1, 1, 1, oneRank), 1},
	{"V3", 1, 1, 2, []float64{0.5}, []float64{0.5}, []float64{0.5}, effs(0.75, 0.75, 0.25, 1, 1, 0.25, oneRank), 1},
	{"V4", 1, 1, 3, []float64{2}, []float64{1}, []float64{2}, effs(1.0/3, 1.0/3, 1.0/3, 1, 0.5, 2.0/3, oneRank), 1},
	{"V5", 1, 1, 4, []float64{2}, []float64{2}, []float64{2}, effs(0.5, 0.5, 0.5, 1, 1, 0.5, oneRank), 1},
	{"V6", 2, 2, 2, []float64{1, 0.5}, []float64{1, 0.5}, []float64{1, 0.5}, effs(0.5, 4.0/7, 0.375, 0.75, 1, 0.5, hostMPI), 1},
	// One shared GPU: max-merge counts it once (0.50, not 0.75 as a sum would).
	{"V6", 2, 1, 2, []float64{1, 0.5}, []float64{1, 0.5}, []float64{1, 0.5}, effs(0.5, 4.0/7, 0.5, 1, 1, 0.5, hostMPI), 1},
	{"V7", 2, 2, 2, []float64{1, 1}, []float64{1, 1}, []float64{1, 1}, effs(0.375, 3.0/7, 0.5, 1, 1, 0.5, hostMPI), 1},
	{"V7", 2, 1, 2, []float64{1, 1}, []float64{1, 1}, []float64{1, 1}, effs(0.375, 3.0/7, 0.5, 1, 1, 0.5, hostMPI), 1},
	// One process on two GPUs: device maxima over devices, not per process
	// (DLB's per-process maxima would give device PE 0.75 and LB 1).
	{"V8", 1, 2, 2, []float64{1}, []float64{1.5}, []float64{1.5}, effs(0.5, 0.5, 0.375, 0.75, 1, 0.5, oneRank), 2},
}

const (
	gpuUnitMS = 100
	gpuReps   = 3
)

// within reports whether got is within 10 % of want, plus slack ns.
func within(got, want, slack float64) bool {
	return math.Abs(got-want) <= 0.1*want+slack
}

// TestGPUFake asserts V1–V8 on the fake CUDA stack with every MPI: V1–V5 on
// one rank, V6 and V7 on two ranks with two fake GPUs and with one shared,
// V8 on one rank using two GPUs.
func TestGPUFake(t *testing.T) {
	for _, impl := range impls(t) {
		for _, c := range gpuCases {
			impl, c := impl, c
			t.Run(fmt.Sprintf("%s/%s/gpus%d", impl.name, c.mode, c.devices), func(t *testing.T) {
				needGPUMeasurement(t)
				dir := fakeCUDA(t, impl.mpicc)
				o := runOpts{
					env:   fakeEnv(dir, fmt.Sprintf("FAKECUDA_DEVICES=%d", c.devices), "GPU_POP_COPY_MS="),
					flags: []string{"--gpu", "auto"},
					dir:   dir,
				}
				r := measureRunWith(t, impl, o, c.np, "gpu_pop", c.mode, fmt.Sprint(gpuReps), fmt.Sprint(gpuUnitMS))
				checkGPURun(t, r, c)
			})
		}
	}
}

func checkGPURun(t *testing.T, r *result, c gpuCase) {
	t.Helper()
	if !strings.HasPrefix(r.stdout, "ok "+c.mode) {
		t.Errorf("program output %q", r.stdout)
	}
	for _, line := range gpuLines(r.stderr) {
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
	if m.GPU == nil || !m.GPU.Available || m.GPU.Method != "cupti" || m.GPU.Clock != "monotonic" || m.GPU.Mode != "auto" {
		t.Errorf("gpu = %+v, want available, mode auto, method cupti, clock monotonic", m.GPU)
	} else if m.GPU.DroppedRecords != 0 || m.GPU.RejectedRecords != 0 {
		t.Errorf("gpu: %d records dropped, %d rejected", m.GPU.DroppedRecords, m.GPU.RejectedRecords)
	}
	if len(m.GPUDevices) != c.devices || m.Resources.GPUs != c.devices {
		t.Errorf("%d devices (resources.gpus %d), want %d: %+v", len(m.GPUDevices), m.Resources.GPUs, c.devices, m.GPUDevices)
	}
	uuids := map[string]bool{}
	for _, d := range m.GPUDevices {
		uuids[d.UUID] = true
		if !strings.HasPrefix(d.Name, "Fake GPU ") {
			t.Errorf("device %d named %q", d.Index, d.Name)
		}
	}
	if len(uuids) != len(m.GPUDevices) {
		t.Errorf("device UUIDs not distinct: %+v", m.GPUDevices)
	}
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
		if cp.Kind == "HtoD" {
			copies += cp.Count
		}
	}
	if want := map[string]int64{"V4": gpuReps, "V5": gpuReps}[c.mode]; copies != want {
		t.Errorf("%d HtoD copies, want %d: %+v", copies, want, m.GPUCopies)
	}
	// Per process: G, and useful/active time on its device.
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

// deviceOf is the file's index of the fake device with that ordinal (its
// UUID ends in the ordinal), or -1.
func deviceOf(m *measure.Measurement, ordinal int) int {
	suffix := fmt.Sprintf("%02x", ordinal)
	for _, d := range m.GPUDevices {
		if strings.HasSuffix(strings.ToLower(d.UUID), suffix) {
			return d.Index
		}
	}
	return -1
}

// reportMetrics returns the values of popmon's CSV report of file, keyed
// region/metric.
func reportMetrics(t *testing.T, file string) map[string]float64 {
	t.Helper()
	so, se, code := popmon(t, nil, "report", "--format", "csv", file)
	if code != 0 {
		t.Fatalf("report %s: exit %d\n%s", file, code, se)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(so), "\n")[1:] {
		f := strings.Split(line, ",")
		if len(f) != 3 {
			t.Fatalf("csv line %q", line)
		}
		var v float64
		if _, err := fmt.Sscan(f[2], &v); err != nil {
			t.Fatalf("csv value %q: %v", line, err)
		}
		out[f[0]+"/"+f[1]] = v
	}
	return out
}

// jsonShapeDiff appends to diffs the paths where two JSON documents differ
// in keys, types, lengths or strings (numbers are not compared).
func jsonShapeDiff(a, b any, path string, diffs *[]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*diffs = append(*diffs, path)
			return
		}
		for k := range x {
			if _, ok := y[k]; !ok {
				*diffs = append(*diffs, path+"/"+k)
			}
		}
		for k, v := range y {
			if w, ok := x[k]; ok {
				jsonShapeDiff(w, v, path+"/"+k, diffs)
			} else {
				*diffs = append(*diffs, path+"/"+k)
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*diffs = append(*diffs, path)
			return
		}
		for i := range x {
			jsonShapeDiff(x[i], y[i], fmt.Sprintf("%s[%d]", path, i), diffs)
		}
	case float64:
		if _, ok := b.(float64); !ok {
			*diffs = append(*diffs, path)
		}
	default:
		if a != b {
			*diffs = append(*diffs, path)
		}
	}
}

// gpuLines are the popmon lines on stderr that speak of GPUs or CUDA (the
// line naming the measurement file aside: test folders are named after the
// tests).
func gpuLines(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "popmon: measurement written to ") {
			continue
		}
		l := strings.ToLower(line)
		if strings.HasPrefix(line, "popmon:") && (strings.Contains(l, "gpu") || strings.Contains(l, "cuda") || strings.Contains(l, "cupti")) {
			out = append(out, line)
		}
	}
	return out
}

// TestGPUAbsent: on a machine without CUDA (CI), --gpu auto is silent and
// measures as --gpu off does; --gpu on says once that it cannot measure;
// exit codes are the program's.
func TestGPUAbsent(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			needGPUMeasurement(t)
			dir := examples(t, impl)
			reports := map[string]map[string]float64{}
			jsonReports := map[string]any{}
			for _, mode := range []string{"off", "auto", "on"} {
				out := filepath.Join(t.TempDir(), mode+".json")
				args := append([]string{"run", "--mpicc", impl.mpicc, "--gpu", mode, "-o", out, "--", impl.mpirun}, impl.extra...)
				k, iters := imbalanceArgs(impl, 2) // longer phases where MPICH busy-waits
				args = append(args, "-np", "2", filepath.Join(dir, "imbalance"), fmt.Sprint(k), fmt.Sprint(iters))
				so, se, code := popmon(t, nil, args...)
				if code != 0 || !strings.Contains(so, "ok ") {
					t.Fatalf("--gpu %s: exit %d, stdout %q\n%s", mode, code, so, se)
				}
				lines := gpuLines(se)
				switch mode {
				case "on":
					if len(lines) != 1 {
						t.Errorf("--gpu on: %d GPU lines, want exactly one:\n%s", len(lines), se)
					}
				default:
					if len(lines) != 0 {
						t.Errorf("--gpu %s: GPU lines on a program without CUDA:\n%s", mode, strings.Join(lines, "\n"))
					}
				}
				m, err := measure.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if m.Resources.GPUs != 0 || len(m.GPUDevices) != 0 {
					t.Errorf("--gpu %s: %d GPUs, devices %+v", mode, m.Resources.GPUs, m.GPUDevices)
				}
				if mode != "off" && (m.GPU == nil || m.GPU.Available || m.GPU.Mode != mode) {
					t.Errorf("--gpu %s: gpu = %+v, want mode %s, not available", mode, m.GPU, mode)
				}
				reports[mode] = reportMetrics(t, out)
				so, se, code = popmon(t, nil, "report", "--format", "json", out)
				if code != 0 {
					t.Fatalf("report --format json: exit %d\n%s", code, se)
				}
				var doc any
				if err := json.Unmarshal([]byte(so), &doc); err != nil {
					t.Fatalf("JSON report: %v", err)
				}
				jsonReports[mode] = doc
			}
			// The JSON reports have the same structure and texts; only the
			// file name and the gpu object's mode and reason differ (numbers
			// are compared above, within the tolerances).
			for _, mode := range []string{"auto", "on"} {
				var diffs []string
				jsonShapeDiff(jsonReports["off"], jsonReports[mode], "", &diffs)
				for _, d := range diffs {
					if d != "/source" && d != "/gpu/mode" && d != "/gpu/reason" {
						t.Errorf("JSON report with --gpu %s differs from --gpu off at %s", mode, d)
					}
				}
			}
			// The same metrics. Each run is held to the design (imbalance on
			// 2 ranks: LB = PE = 0.75 ± 0.02), and two runs may then differ by
			// twice the rule's tolerance (timing noise, not the GPU mode).
			for mode, rep := range reports {
				for _, id := range []string{"mpi_load_balance", "parallel_efficiency"} {
					if v := rep["Global/"+id]; math.Abs(v-0.75) > effTol {
						t.Errorf("--gpu %s: Global %s = %v, want 0.75 ± %v", mode, id, v, effTol)
					}
				}
			}
			for _, mode := range []string{"auto", "on"} {
				if len(reports[mode]) != len(reports["off"]) {
					t.Errorf("--gpu %s reports %d values, --gpu off %d", mode, len(reports[mode]), len(reports["off"]))
				}
				for k, v := range reports["off"] {
					got, ok := reports[mode][k]
					switch {
					case !ok:
						t.Errorf("--gpu %s lacks %s", mode, k)
					case strings.HasSuffix(k, "/elapsed_s"):
						if !within(got, v, 0.05) {
							t.Errorf("--gpu %s: %s = %v, --gpu off %v", mode, k, got, v)
						}
					case math.Abs(got-v) > 2*effTol:
						t.Errorf("--gpu %s: %s = %v, --gpu off %v", mode, k, got, v)
					}
				}
				for k := range reports[mode] {
					if strings.Contains(k, "gpu") || strings.Contains(k, "device") {
						t.Errorf("--gpu %s: %s reported for a program without CUDA", mode, k)
					}
				}
			}
			// Exit codes stay the program's: a rank that exits 3 early (one
			// rank: with two, which exit status MPICH's launcher reports
			// depends on timing). --gpu on says it once there too (at exit).
			codes := map[string]int{}
			for _, mode := range []string{"off", "auto", "on"} {
				args := append([]string{"run", "--mpicc", impl.mpicc, "--gpu", mode, "--format", "none", "-o", filepath.Join(t.TempDir(), "x.json"), "--", impl.mpirun}, impl.extra...)
				args = append(args, "-np", "1", filepath.Join(dir, "ending"), "20", "100", "3", "1", "3")
				_, se, code := popmon(t, nil, args...)
				codes[mode] = code
				if n := len(gpuLines(se)); n != map[string]int{"on": 1}[mode] {
					t.Errorf("--gpu %s: %d GPU lines from a program that exits 3:\n%s", mode, n, se)
				}
			}
			if codes["off"] == 0 || codes["auto"] != codes["off"] || codes["on"] != codes["off"] {
				t.Errorf("exit codes %v: want the same, non-zero, for every --gpu mode", codes)
			}
		})
	}
}

// TestGPUFakeExec: the per-rank form (mpirun … popmon exec --gpu auto)
// injects libpopmon too; V6 on two fake GPUs gives its designed values.
func TestGPUFakeExec(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			needGPUMeasurement(t)
			dir := fakeCUDA(t, impl.mpicc)
			out := filepath.Join(t.TempDir(), "exec.json")
			args := append(append([]string{}, impl.extra...), "-np", "2", popmonBin, "exec", "--mpicc", impl.mpicc,
				"--gpu", "auto", "-o", out, "--", filepath.Join(dir, "gpu_pop"), "V6", fmt.Sprint(gpuReps), fmt.Sprint(gpuUnitMS))
			cmd := exec.Command(impl.mpirun, args...)
			cmd.Env = append(os.Environ(), fakeEnv(dir, "FAKECUDA_DEVICES=2")...)
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			m := readChecked(t, out)
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			r := &result{file: out, m: m, rep: rep, stderr: string(b)}
			for _, c := range gpuCases {
				if c.mode == "V6" && c.devices == 2 {
					for id, want := range c.want {
						r.expect(t, "work", id, want, effTol)
					}
				}
			}
			if len(m.GPUDevices) != 2 {
				t.Errorf("devices %+v, want 2", m.GPUDevices)
			}
		})
	}
}

// TestGPUFakeCUPTIVariants: CUPTI without the timestamp callback (records on
// CLOCK_REALTIME: libpopmon calibrates an offset) still gives V4's values;
// 20 000 launches between two flushes are all counted, none dropped, and
// 20 000 cudaGetDevice calls (a trivial getter: no callback) are not among
// the GPU runtime calls (the 20 000 launches and ~200 synchronisations of
// the overhead mode's loop are).
func TestGPUFakeCUPTIVariants(t *testing.T) {
	impl := impls(t)[0]
	needGPUMeasurement(t)
	dir := fakeCUDA(t, impl.mpicc)
	t.Run("calibrated clock", func(t *testing.T) {
		o := runOpts{env: fakeEnv(dir, "FAKECUPTI_NO_TIMESTAMP_CALLBACK=1"), flags: []string{"--gpu", "auto"}, dir: dir}
		r := measureRunWith(t, impl, o, 1, "gpu_pop", "V4", fmt.Sprint(gpuReps), fmt.Sprint(gpuUnitMS))
		if r.m.GPU == nil || !r.m.GPU.Available || r.m.GPU.Clock != "calibrated" {
			t.Errorf("gpu = %+v, want available with clock calibrated", r.m.GPU)
		}
		for _, c := range gpuCases {
			if c.mode == "V4" {
				for id, want := range c.want {
					r.expect(t, "work", id, want, effTol)
				}
			}
		}
	})
	t.Run("many launches", func(t *testing.T) {
		o := runOpts{env: fakeEnv(dir), flags: []string{"--gpu", "auto"}, dir: dir}
		r := measureRunWith(t, impl, o, 1, "gpu_pop", "overhead", "20000")
		if r.m.GPU == nil || !r.m.GPU.Available || r.m.GPU.DroppedRecords != 0 || r.m.GPU.RejectedRecords != 0 {
			t.Errorf("gpu = %+v, want available, nothing dropped or rejected", r.m.GPU)
		}
		var n int64
		for _, k := range r.m.GPUKernels {
			if k.Name == "empty_kernel" {
				n += k.Count
			}
		}
		if n != 20000 {
			t.Errorf("%d empty kernels counted, want 20000: %+v", n, r.m.GPUKernels)
		}
		g, _ := r.m.Global()
		// The overhead mode also runs its launch-bound loop: 20000 more
		// launches and a stream synchronisation every 100.
		if len(g.Processes) != 1 || g.Processes[0].GPURuntimeCalls < 40000 || g.Processes[0].GPURuntimeCalls > 40300 {
			t.Errorf("Global: GPU runtime calls %+v, want 40000 launches and a few hundred synchronisations, "+
				"not the 20000 cudaGetDevice calls", g.Processes)
		}
		if lines := gpuLines(r.stderr); len(lines) != 0 {
			t.Errorf("GPU warnings: %v", lines)
		}
	})
}

// TestGPUFakePartial: a GPU job killed mid-run keeps its device time in the
// partial measurement (live files; CUPTI's worker delivers records every
// second, so up to a second of device time may be missing at the cut).
func TestGPUFakePartial(t *testing.T) {
	impl := impls(t)[0]
	needGPUMeasurement(t)
	dir := fakeCUDA(t, impl.mpicc)
	o := runOpts{env: fakeEnv(dir, "FAKECUDA_DEVICES=2"), flags: []string{"--gpu", "auto"}, dir: dir}
	s := startPartialWith(t, impl, o, 2, nil, "gpu_pop", "V7", "100", "100")
	time.Sleep(7 * time.Second)
	for _, pid := range s.ranks {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	s.wait(t)
	m := readChecked(t, s.out)
	if m.Partial == nil || m.Partial.Reason != measure.PartialKilled {
		t.Fatalf("not a partial measurement of a killed job: %+v\n%s", m.Partial, s.se.String())
	}
	if m.GPU == nil || !m.GPU.Available || len(m.GPUDevices) != 2 {
		t.Errorf("gpu = %+v, devices %+v: want available, 2 devices", m.GPU, m.GPUDevices)
	}
	// V7 keeps each device busy half the time of region work, not of
	// the start-up before it (MPI, contexts, the copy calibration: over
	// a second on a loaded machine).
	g, ok := m.Region("work")
	if !ok {
		t.Fatalf("no region work in the partial measurement: %v", m.RegionNames())
	}
	if len(g.Processes) != 2 {
		t.Fatalf("%d processes in region work", len(g.Processes))
	}
	for _, p := range g.Processes {
		// The records of the last moments never reach the file: CUPTI
		// delivers them once a second, and on a loaded machine the
		// pool's thread decodes them later still (CI lost 2.2 s of
		// 3.2 s once). At most 2.5 s lost.
		var useful int64
		for _, d := range p.GPUDevices {
			useful += d.UsefulNS
		}
		lo := 0.5 * float64(p.ElapsedNS-2500e6) / float64(p.ElapsedNS)
		t.Logf("rank %d: device useful %.3f s in region work's %.3f s", p.Rank, float64(useful)/1e9, float64(p.ElapsedNS)/1e9)
		if f := float64(useful) / float64(p.ElapsedNS); f < lo || f > 0.55 {
			t.Errorf("rank %d: device useful %d ns in %d ns (%.2f), want about half, less at most the last 2.5 s (%.2f–0.55)", p.Rank, useful, p.ElapsedNS, f, lo)
		}
	}
}

// TestGPUFakeUnavailable: CUDA used but not measurable — CUPTI refuses a
// second subscriber or is older than the driver allows, no CUPTI, another
// tool holds the injection hook — keeps the host metrics and records why;
// --gpu auto is silent, --gpu on says it once.
func TestGPUFakeUnavailable(t *testing.T) {
	impl := impls(t)[0]
	needGPUMeasurement(t)
	dir := fakeCUDA(t, impl.mpicc)
	for _, c := range []struct {
		name, reason string // reason: a part of gpu.reason
		env          []string
	}{
		{"multiple subscribers", "another profiler", append(fakeEnv(dir), "FAKECUPTI_SUBSCRIBE_RESULT=39")},
		{"not initialised", "driver is older than this CUPTI", append(fakeEnv(dir), "FAKECUPTI_SUBSCRIBE_RESULT=15")},
		// The program finds the fake libcuda.so.1 through its rpath; no
		// libcupti is on the loader path.
		{"no libcupti", "no usable CUPTI", []string{"POPMON_CUPTI_LIBRARY=" + filepath.Join(dir, "nonexistent", "libcupti.so")}},
		// Another tool (the smoke test's, which uses CUPTI too) holds the
		// injection hook: popmon leaves it alone.
		{"another tool injected", "another CUDA tool", append(fakeEnv(dir), "CUDA_INJECTION64_PATH="+filepath.Join(dir, "libsmoke.so"))},
	} {
		for _, mode := range []string{"auto", "on"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				o := runOpts{env: c.env, flags: []string{"--gpu", mode}, dir: dir}
				r := measureRunWith(t, impl, o, 1, "gpu_pop", "V1", "2", "50")
				if r.m.GPU == nil || r.m.GPU.Available || r.m.GPU.Mode != mode || !strings.Contains(r.m.GPU.Reason, c.reason) {
					t.Errorf("gpu = %+v, want mode %s, not available, reason with %q", r.m.GPU, mode, c.reason)
				}
				want := map[string]int{"on": 1}[mode]
				if lines := gpuLines(r.stderr); len(lines) != want {
					t.Errorf("%d GPU warnings, want %d:\n%s", len(lines), want, r.stderr)
				}
				// The host still measures: the work region lasts 2·2u.
				if g := r.region(t, "work"); !within(float64(g.ElapsedNS), 200e6, 0) {
					t.Errorf("work elapsed %d ns, want 200 ms", g.ElapsedNS)
				}
				if _, ok := r.region(t, "work").Value("gpu_parallel_efficiency"); ok {
					t.Error("device metrics reported for an unmeasured GPU")
				}
			})
		}
	}
}

// TestGPUProgramParses: the real CUDA programs (gpu_pop.cu, gpu_counters.cu)
// cannot be built here (no
// CUDA), but clang parses it, host and device side, against the
// declarations in examples/gpu/fake/syntax, with each MPI's headers.
func TestGPUProgramParses(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			if _, err := exec.LookPath("clang++"); err != nil {
				t.Skip("no clang++ to parse CUDA")
			}
			show := map[string][]string{"openmpi": {"--showme:compile"}, "mpich": {"-compile-info"}}[impl.name]
			cxx := strings.Replace(impl.mpicc, "mpicc", "mpicxx", 1)
			info, err := exec.Command(cxx, show...).Output()
			if err != nil {
				t.Skipf("%s %v: %v", cxx, show, err)
			}
			args := []string{"-x", "cuda", "--cuda-gpu-arch=sm_70", "-nocudainc", "-nocudalib", "-fsyntax-only",
				"-Wall", "-Wextra", "-Werror", "-DOMPI_SKIP_MPICXX", "-DMPICH_SKIP_MPICXX",
				"-I" + filepath.Join(repoRoot, "examples", "gpu", "fake", "syntax"),
				"-I" + filepath.Join(repoRoot, "shim"), "-I" + filepath.Join(repoRoot, "examples", "gpu")}
			for _, f := range strings.Fields(string(info)) {
				if strings.HasPrefix(f, "-I") {
					args = append(args, f)
				}
			}
			for _, prog := range []string{"gpu_pop.cu", "gpu_counters.cu"} {
				a := append(args[:len(args):len(args)], filepath.Join(repoRoot, "examples", "gpu", prog))
				if out, err := exec.Command("clang++", a...).CombinedOutput(); err != nil {
					t.Errorf("clang++ %s: %v\n%s", strings.Join(a, " "), err, out)
				}
			}
		})
	}
}

// TestGPUValidateScript: scripts/gpu-validate.sh's argument checks and its
// comparison, and, once libpopmon measures GPUs, a whole run on the fake
// stack (every value PASS).
func TestGPUValidateScript(t *testing.T) {
	script := filepath.Join(repoRoot, "scripts", "gpu-validate.sh")
	run := func(env []string, args ...string) (string, int) {
		cmd := exec.Command("sh", append([]string{script}, args...)...)
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
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--bogus"}, "unknown argument '--bogus'"},
		{[]string{"--reps", "0"}, "--reps wants a positive integer"},
		{[]string{"--unit", "ten"}, "--unit wants a positive integer"},
		{[]string{"--only", "V1,V14"}, "unknown scenario 'V14'"},
		{[]string{"--launches", "0"}, "--launches wants a positive integer"},
		{[]string{"--overhead", "many"}, "--overhead wants an integer"},
		{[]string{"--mpi", "lam"}, "--mpi openmpi or mpich"},
		{[]string{"--reps"}, "Usage:"},
	} {
		out, code := run(nil, c.args...)
		if code != 2 || !strings.Contains(out, c.msg) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, code, c.msg, out)
		}
	}
	dir := t.TempDir()
	exp := filepath.Join(dir, "expect")
	os.WriteFile(exp, []byte("ok V4 reps=3\nexpect work elapsed_s 0.9 0.09\nexpect work parallel_efficiency 0.333333 0.02\n"+
		"expect work gpu_communication_efficiency 0.5 0.02\nexpect work gpu_load_balance 1 0.02\n"), 0o644)
	for _, c := range []struct {
		name, csv string
		code      int
		lines     []string
	}{
		{"pass", "region,metric,value\nwork,elapsed_s,0.95\nwork,parallel_efficiency,0.34\nwork,gpu_communication_efficiency,0.51\nwork,gpu_load_balance,1\n", 0,
			[]string{"elapsed_s .* 0.950  PASS", "gpu_load_balance .* 1.000  PASS"}},
		{"outside", "region,metric,value\nwork,elapsed_s,1.0\nwork,parallel_efficiency,0.34\nwork,gpu_communication_efficiency,0.53\nwork,gpu_load_balance,1\n", 1,
			[]string{"elapsed_s .* 1.000  FAIL", "gpu_communication_efficiency .* 0.530  FAIL", "parallel_efficiency .* 0.340  PASS"}},
		{"absent", "region,metric,value\nwork,elapsed_s,0.9\nwork,parallel_efficiency,0.33\nwork,gpu_communication_efficiency,0.5\nGlobal,gpu_load_balance,1\n", 1,
			[]string{"gpu_load_balance .* absent  FAIL"}},
	} {
		csv := filepath.Join(dir, c.name+".csv")
		os.WriteFile(csv, []byte(c.csv), 0o644)
		out, code := run(nil, "--compare", exp, csv)
		if code != c.code {
			t.Errorf("compare %s: exit %d, want %d\n%s", c.name, code, c.code, out)
		}
		for _, l := range c.lines {
			if !regexp.MustCompile(l).MatchString(out) {
				t.Errorf("compare %s: no line like %q:\n%s", c.name, l, out)
			}
		}
	}
	// Nsight Compute's CSV (ncu 2025: progress lines, then one row per
	// kernel and metric, numbers with thousands separators) into scenario
	// C's expected values.
	ncu := filepath.Join(dir, "ncu.csv")
	rows := "==PROF== Connected to process 4242 (gpu_counters)\n" +
		`"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"` + "\n"
	for id, k := range []struct {
		name            string
		inst, rd, wr, w string
	}{{"instr_kernel", "1,208,221,696", "1,024", "0", "49.5"}, {"copy_kernel", "12,058,624", "536,870,912", "536,870,912", "48.0"},
		{"occ_kernel", "302,055,424", "0", "0", "91.2"}, {"occ_kernel", "302,055,424", "0", "0", "24.9"}} {
		for _, m := range [][2]string{{"sm__inst_executed.sum", k.inst}, {"dram__bytes_read.sum", k.rd},
			{"dram__bytes_write.sum", k.wr}, {"sm__warps_active.avg.pct_of_peak_sustained_active", k.w}} {
			rows += fmt.Sprintf(`"%d","4242","gpu_counters","host","%s","1","13","(256, 1, 1)","(528, 1, 1)","0","9.0","Command line profiler metrics","%s","","%s"`+"\n", id, k.name, m[0], m[1])
		}
	}
	os.WriteFile(ncu, []byte(rows), 0o644)
	if out, code := run(nil, "--ncu-expect", ncu, "10"); code != 0 || out != "expect instr gpu_instructions 12082216960 241644339\n"+
		"expect dram gpu_instructions 120586240 2411725\nexpect dram gpu_dram_bytes 10737418240 214748365\n"+
		"expect occ_full gpu_instructions 3020554240 60411085\nexpect occ_full gpu_achieved_occupancy 0.9120 0.05\n"+
		"expect occ_quarter gpu_instructions 3020554240 60411085\nexpect occ_quarter gpu_achieved_occupancy 0.2490 0.05\n" {
		t.Errorf("--ncu-expect: exit %d\n%s", code, out)
	}
	impl := impls(t)[0]
	needGPUMeasurement(t)
	// V9 with 10⁵ launches here (TestGPUStorm runs 10⁶).
	out, code := run([]string{"POPMON=" + popmonBin}, "--fake", "--mpi", impl.name, "--reps", fmt.Sprint(gpuReps),
		"--launches", "100000", "--overhead", "20000", "--rounds", "2", "--out", filepath.Join(dir, "run"))
	if code != 0 {
		t.Fatalf("gpu-validate.sh --fake: exit %d\n%s", code, out)
	}
	if n, want := len(regexp.MustCompile(`(?m)^V.*  PASS$`).FindAllString(out, -1)), 10*(5+2*3+1+1+3)+2*6+5; n != want {
		t.Errorf("%d values PASS, want %d (10 per run of V1-V8 and V10-V12, 16 runs; 6 per V9 run, 2 runs; 5 of V13)\n%s", n, want, out)
	}
	if n := len(regexp.MustCompile(`(?m)^ACC .*device_offload_efficiency.*  PASS$`).FindAllString(out, -1)); n != 1 {
		t.Errorf("%d values of scenario ACC PASS, want 1 (its device offload efficiency)\n%s", n, out)
	}
	if n, want := len(regexp.MustCompile(`(?m)^C .*  PASS$`).FindAllString(out, -1)), 4*4; n != want {
		t.Errorf("%d values of scenario C PASS, want %d (4 per region: instructions, DRAM bytes, occupancy, SM frequency)\n%s", n, want, out)
	}
	checkOverheadTable(t, out, false)
	for _, want := range []string{"V6-2gpus     gpu_load_balance                  0.750", "V6-shared    gpu_load_balance                  1.000",
		"V6-distinct  gpu_load_balance                  0.750", "V8           gpu_load_balance                  0.750",
		"V9-1thread   kernels:storm_kernel             100000 ± 0         100000  PASS",
		"V9-4threads  gpu_records_lost                      0 ± 0              0  PASS",
		"V9-1thread   useful_ratio:storm_kernel      1.000000 ± 1e-06   1.000000  PASS",
		"V10          gpu_parallel_efficiency           0.625 ± 0.02 ",
		"(PyTorch rows: not on the fake stack)", "thresholds not judged on the fake stack",
		"C            instr/gpu_instructions", "C            occ_quarter/gpu_achieved_occupancy    0.250 ± 0.03       0.250  PASS",
		"C            dram/gpu_dram_bytes", "C            long-kernel loop:",
		"V11          gpu_communication_efficiency      0.500 ± 0.02 ", "V12-peer     gpu_communication_efficiency      0.500 ± 0.02 ",
		"V13          gpu_communication_efficiency      0.500 ± 0.02 ",
		"gpu-validate: all 22 runs PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`(?m)^V[1-7][-a-z0-9]*: popmon:`).MatchString(out) {
		t.Errorf("popmon warned:\n%s", out)
	}
}

// TestGPUValidateScriptGPUPath runs scripts/gpu-validate.sh as on a GPU
// machine, with stand-ins for nvidia-smi (1 or 2 GPUs), nvcc (which builds
// the fake-CUDA program instead of gpu_pop.cu) and a Python with PyTorch
// (PYTHON: it runs some fake-CUDA work and prints what
// examples/gpu/torch_overhead.py prints): the machine report, the build
// step, the choice of V6 runs (1 GPU: shared and distinct; 2: two GPUs and
// shared through CUDA_VISIBLE_DEVICES=0), V9 from 1 and 4 threads, V10, and
// the overhead table with its floor and PyTorch rows and its judged
// thresholds (on the fake stack they may pass or fail: its costs are not
// real, so only their form is checked). u = 200 ms: on a loaded 2-core
// machine a V6 barrier wait is otherwise sometimes a few ms off (MPI load
// balance 0.90 instead of 0.875, seen once).
func TestGPUValidateScriptGPUPath(t *testing.T) {
	impl := impls(t)[0]
	needGPUMeasurement(t)
	fake := fakeCUDA(t, "")
	fakeProg := filepath.Join(fakeCUDA(t, impl.mpicc), "gpu_pop")
	stubs := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("python-torch", `#!/bin/sh
# stand-in for a Python with PyTorch and CUDA: the probe (-c) succeeds;
# torch_overhead.py [--ops N] [--profile] runs some fake-CUDA work (measured
# when under popmon) and prints the script's line
case "$1" in -c) exit 0 ;; esac
[ "$(basename "$1")" = torch_overhead.py ] || exit 9
shift
ops=100000 kernels=""
while [ $# -gt 0 ]; do
	case "$1" in
	--ops) ops=$2 && shift ;;
	--profile) kernels=yes ;;
	esac
	shift
done
"`+fakeProg+`" overhead 100 >/dev/null || exit 1
echo "torch loop_ns=12345.6 ops=$ops${kernels:+ kernels=$ops}"
`)
	write("nvidia-smi", `#!/bin/sh
# stand-in for nvidia-smi: STUB_GPUS GPUs
i=0
while [ "$i" -lt "${STUB_GPUS:-1}" ]; do
	case "$1" in
	-L) echo "GPU $i: Fake GPU $i (UUID: GPU-stub-$i)" ;;
	*) echo "$i, Fake GPU $i, 580.00, Default, GPU-stub-$i" ;;
	esac
	i=$((i + 1))
done
`)
	write("nvcc", `#!/bin/sh
# stand-in for nvcc: builds the fake-CUDA program instead of the .cu
if [ "$1" = --version ]; then
	echo "nvcc stand-in"
	echo "Cuda compilation tools, release 13.0 (stand-in)"
	exit 0
fi
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=$2 && shift ;;
	-ccbin) ccbin=$2 && shift ;;
	esac
	shift
done
d=$(mktemp -d "`+t.TempDir()+`/nvcc.XXXXXX")
sh "`+filepath.Join(repoRoot, "examples", "gpu", "fake", "build.sh")+`" "$d" "$(echo "$ccbin" | sed s/mpicxx/mpicc/)" && cp "$d/gpu_pop" "$out"
`)
	for _, c := range []struct {
		gpus   int
		labels []string
	}{{1, []string{"V6-shared", "V6-distinct", "V8           skipped: needs 2 GPUs"}}, {2, []string{"V6-2gpus", "V6-shared", "V8           gpu_load_balance"}}} {
		t.Run(fmt.Sprintf("gpus%d", c.gpus), func(t *testing.T) {
			cmd := exec.Command("sh", filepath.Join(repoRoot, "scripts", "gpu-validate.sh"), "--mpi", impl.name,
				"--only", "V1,V6,V8,V9,V10", "--reps", fmt.Sprint(gpuReps), "--unit", "200", "--launches", "20000", "--overhead", "20000", "--rounds", "1")
			cmd.Env = append(os.Environ(), "PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"), "POPMON="+popmonBin,
				fmt.Sprintf("STUB_GPUS=%d", c.gpus), fmt.Sprintf("FAKECUDA_DEVICES=%d", c.gpus),
				"POPMON_CUPTI_LIBRARY="+filepath.Join(fake, "libcupti.so"), "CUDA_HOME="+t.TempDir(),
				"PYTHON="+filepath.Join(stubs, "python-torch"))
			b, err := cmd.CombinedOutput()
			out := string(b)
			runs := 7 + c.gpus - 1 // V1, V6 twice, (V8), V9 twice, V10, overhead
			summary := fmt.Sprintf("gpu-validate: all %d runs PASS", runs)
			if err != nil {
				// Only the overhead thresholds may fail here.
				fails := regexp.MustCompile(`(?m)^.*FAIL.*$`).FindAllString(out, -1)
				for _, f := range fails {
					if !regexp.MustCompile(`^  per (trivial call|launch|loop launch) ≤ .*  FAIL$|^gpu-validate: 1 of \d+ runs with a FAIL`).MatchString(f) {
						t.Errorf("gpu-validate.sh: %v: a FAIL other than an overhead threshold: %q", err, f)
					}
				}
				summary = fmt.Sprintf("gpu-validate: 1 of %d runs with a FAIL", runs)
			}
			for _, want := range append([]string{"== machine", "Fake GPU 0, 580.00", "release 13.0 (stand-in)",
				"V1           gpu_parallel_efficiency", "V9-1thread   kernels:storm_kernel              20000 ± 0          20000  PASS",
				"V9-4threads  useful_ratio:storm_kernel", "V10          gpu_orchestration_efficiency",
				"  (PyTorch: " + filepath.Join(stubs, "python-torch") + ";", summary}, c.labels...) {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			checkOverheadTable(t, out, true)
			for _, l := range []string{`(?m)^  PyTorch loop, uninstrumented +- +- +12\.346 +-$`,
				`(?m)^  PyTorch loop, popmon --gpu on +- +- +12\.346 +0$`, `(?m)^  PyTorch loop, torch\.profiler +- +- +12\.346 +0$`} {
				if !regexp.MustCompile(l).MatchString(out) {
					t.Errorf("no line like %s:\n%s", l, out)
				}
			}
			if n, want := len(regexp.MustCompile(`(?m)^V.*  PASS$`).FindAllString(out, -1)), 10*(4+c.gpus-1)+2*6; n != want {
				t.Errorf("%d values PASS, want %d\n%s", n, want, out)
			}
		})
	}
}

// checkOverheadTable checks the overhead table of gpu-validate.sh's output:
// the uninstrumented, --gpu off, --gpu on and floor rows (records lost "-"
// where nothing records kernels, 0 where popmon and the floor do), the
// difference line, and, when judged (a GPU, or its stand-ins), the
// thresholds' lines.
func checkOverheadTable(t *testing.T, out string, judged bool) {
	t.Helper()
	num := ` +[0-9]+\.[0-9] +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +`
	lines := []string{
		`(?m)^  uninstrumented` + num + `-$`,
		`(?m)^  popmon --gpu off` + num + `-$`,
		`(?m)^  popmon --gpu on` + num + `0$`,
		`(?m)^  popmon --gpu on --gpu-counters off` + num + `0$`,
		`(?m)^  CUPTI records only \(floor\)` + num + `0$`,
		`(?m)^  popmon --gpu on: [-+][0-9.]+ ns per call over uninstrumented; [-+][0-9.]+ µs per launch and [-+][0-9.]+ µs per loop launch over the floor$`,
	}
	if judged {
		lines = append(lines, `(?m)^  per trivial call ≤ uninstrumented \+ 100 ns: +[-+][0-9.]+ ns  (PASS|FAIL)$`,
			`(?m)^  per launch ≤ floor \+ 0.300 µs: +[-+][0-9.]+ µs  (PASS|FAIL)$`,
			`(?m)^  per loop launch ≤ floor \+ 0.300 µs: +[-+][0-9.]+ µs  (PASS|FAIL)$`,
			`(?m)^  records lost by popmon --gpu on = 0: +0 +PASS$`)
	} else {
		lines = append(lines, `(?m)^  thresholds not judged on the fake stack`)
	}
	for _, l := range lines {
		if !regexp.MustCompile(l).MatchString(out) {
			t.Errorf("overhead table: no line like %s:\n%s", l, out)
		}
	}
}

func TestJSONShapeDiff(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want []string
	}{
		{`{"x": 1, "s": "a", "l": [1, 2]}`, `{"x": 2, "s": "a", "l": [3, 4]}`, nil},
		{`{"x": 1, "s": "a"}`, `{"x": "1", "s": "b"}`, []string{"/s", "/x"}},
		{`{"g": {"m": "off"}, "l": [1]}`, `{"g": {"m": "auto", "n": 1}, "l": [1, 2]}`, []string{"/g/m", "/g/n", "/l"}},
		{`{"a": 1}`, `{}`, []string{"/a"}},
	} {
		var a, b any
		json.Unmarshal([]byte(c.a), &a)
		json.Unmarshal([]byte(c.b), &b)
		var got []string
		jsonShapeDiff(a, b, "", &got)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s vs %s: %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestGPUFakeSummaryForm: above the per-process record limit finalize does
// not reduce device accounts: the file says so in gpu.reason and shows no
// device tree, rather than one of rank 0's devices alone; the host side
// (device offload) is still measured.
func TestGPUFakeSummaryForm(t *testing.T) {
	impl := impls(t)[0]
	needGPUMeasurement(t)
	dir := fakeCUDA(t, impl.mpicc)
	o := runOpts{
		env:   fakeEnv(dir, "FAKECUDA_DEVICES=2", "GPU_POP_COPY_MS=", "POPMON_MAX_PROCESS_RECORDS=1"),
		flags: []string{"--gpu", "auto"},
		dir:   dir,
	}
	r := measureRunWith(t, impl, o, 2, "gpu_pop", "V6", fmt.Sprint(gpuReps), fmt.Sprint(gpuUnitMS))
	if r.m.Summarized == nil {
		t.Fatalf("not the summary form:\n%s", r.stderr)
	}
	if r.m.GPU == nil || r.m.GPU.Available || !strings.Contains(r.m.GPU.Reason, "per-process record limit") {
		t.Errorf("gpu = %+v, want not available above the record limit", r.m.GPU)
	}
	work := r.region(t, "work")
	if _, ok := work.Value("gpu_parallel_efficiency"); ok {
		t.Error("device metrics reported above the record limit")
	}
	if v, ok := work.Value("device_offload_efficiency"); !ok || !within(v, 4.0/7, effTol) {
		t.Errorf("device offload %.3f (present %v), want %.3f", v, ok, 4.0/7)
	}
}
