package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Hardware counters. Where the machine has no PMU (virtual machines,
// containers, most CI runners; this one), the library records why and nothing
// else changes. On any machine, a stand-in PMU (testdata/fakepmu.c: software
// clock events in place of cycles and instructions) runs the library's whole
// counter path on real kernel counts.

// computational are the metric ids that need counters.
var computational = []string{pop.IDIPC, pop.IDFrequencyGHz, pop.IDInstructions, pop.IDCycles}

// countersRun runs `popmon run [flags] -- mpirun -np np prog args...` with
// env added and returns the measurement, the raw file and popmon's stderr
// (the report).
func countersRun(t *testing.T, impl mpiImpl, env, flags []string, np int, prog string, args ...string) (*measure.Measurement, []byte, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.json")
	argv := append([]string{"run", "--mpicc", impl.mpicc, "-o", out}, flags...)
	argv = append(argv, "--", impl.mpirun)
	argv = append(argv, impl.extra...)
	argv = append(argv, "-np", fmt.Sprint(np), prog)
	argv = append(argv, args...)
	so, se, code := popmon(t, env, argv...)
	if code != 0 {
		t.Fatalf("popmon %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := measure.ValidateSchema(raw); err != nil {
		t.Errorf("measurement does not match docs/measurement.schema.json: %v", err)
	}
	m, err := measure.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return m, raw, se
}

// skipIfCounters skips a test of the unavailable path on a machine that
// has hardware counters.
func skipIfCounters(t *testing.T, m *measure.Measurement) {
	t.Helper()
	if m.Counters != nil && m.Counters.Available {
		t.Skip("this machine has hardware counters: the unavailable path cannot be observed here")
	}
}

// TestCountersUnavailable: on a machine without counters (this one), the file
// says why (counters.available false with the library's reason, the same as
// popmon doctor's), has no cycles or instructions, the reports have no
// computational metrics and the text report says why; the POP metrics are
// those of a run without counter code. Mode auto is silent, on warns once,
// off says so.
func TestCountersUnavailable(t *testing.T) {
	for i, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			m, raw, se := countersRun(t, impl, nil, nil, 2, filepath.Join(dir, "imbalance"), "50", "4")
			skipIfCounters(t, m)
			c := m.Counters
			if c == nil || c.Mode != measure.CountersAuto || c.Available || c.Method != "" ||
				!strings.HasPrefix(c.Reason, "counters unavailable: ") || m.Resources.HardwareCounters {
				t.Fatalf("counters %+v, hardware_counters %v: want auto, unavailable, with a reason", c, m.Resources.HardwareCounters)
			}
			if bytes.Contains(raw, []byte(`"cycles"`)) || bytes.Contains(raw, []byte(`"instructions"`)) {
				t.Errorf("the file has counter keys without counters:\n%s", raw)
			}
			if !strings.Contains(se, "Counters:  no computational metrics: "+c.Reason+"\n") {
				t.Errorf("the report does not say why counters are missing:\n%s", se)
			}
			if strings.Contains(se, "Computational metrics") || strings.Contains(se, "popmon: hardware counters") {
				t.Errorf("computational metrics or a counter warning in auto mode:\n%s", se)
			}
			if len(m.Warnings) != 0 {
				t.Errorf("warnings in auto mode: %q", m.Warnings)
			}
			// Nothing else changes: the designed load balance of 2 ranks.
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			g, _ := rep.Region("Global")
			if v, ok := g.Value(pop.IDMPILoadBalance); !ok || v < 0.75-effTol || v > 0.75+effTol {
				t.Errorf("load balance %.3f (present %v), want 0.75", v, ok)
			}

			// JSON and CSV reports: no computational metric, not even 0.
			file := filepath.Join(t.TempDir(), "m.json")
			if err := os.WriteFile(file, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"json", "csv"} {
				so, se, code := popmon(t, nil, "report", "--model", "all", "--format", format, file)
				if code != 0 {
					t.Fatalf("report %s: exit %d: %s", format, code, se)
				}
				for _, id := range computational {
					if regexp.MustCompile(`\b` + id + `\b`).MatchString(so) {
						t.Errorf("%s report has %s without counters:\n%s", format, id, so)
					}
				}
			}

			// popmon doctor gives the library's reason.
			so, _, _ := popmon(t, nil, "doctor", "--mpicc", impl.mpicc)
			if !strings.Contains(so, "hardware counters      "+c.Reason) {
				t.Errorf("doctor does not give the library's reason %q:\n%s", c.Reason, so)
			}

			if i > 0 {
				return // the modes do not depend on the MPI
			}
			// on: one warning line (rank 0's), also in the file.
			m, _, se = countersRun(t, impl, nil, []string{"--counters", "on", "--format", "none"}, 3, filepath.Join(dir, "imbalance"), "20", "2")
			if n := strings.Count(se, "popmon: hardware counters requested (POPMON_COUNTERS=on) but "+c.Reason); n != 1 {
				t.Errorf("--counters on: %d warning lines, want 1:\n%s", n, se)
			}
			if m.Counters == nil || m.Counters.Mode != measure.CountersOn || len(m.Warnings) != 1 {
				t.Errorf("--counters on: counters %+v, warnings %q", m.Counters, m.Warnings)
			}
			// off: never probed.
			m, _, se = countersRun(t, impl, nil, []string{"--counters", "off"}, 2, filepath.Join(dir, "imbalance"), "20", "2")
			if m.Counters == nil || m.Counters.Mode != measure.CountersOff || m.Counters.Reason != "counters off (POPMON_COUNTERS=off)" {
				t.Errorf("--counters off: counters %+v", m.Counters)
			}
			if !strings.Contains(se, "Counters:  no computational metrics: counters off (POPMON_COUNTERS=off)\n") {
				t.Errorf("--counters off: report:\n%s", se)
			}
			// popmon exec takes the flag too; bad values are usage errors.
			if _, se, code := popmon(t, nil, "exec", "--counters", "sometimes", "--", "/bin/true"); code != 2 || !strings.Contains(se, `unknown --counters mode "sometimes"`) {
				t.Errorf("exec --counters sometimes: exit %d: %s", code, se)
			}
		})
	}
}

// fakePMU builds the stand-in PMU, testdata/fakepmu.c (checkFakeCounters
// skips where the kernel does not let a process count even software
// events).
func fakePMU(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	lib := filepath.Join(t.TempDir(), "fakepmu.so")
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o", lib,
		filepath.Join(repoRoot, "internal", "e2e", "testdata", "fakepmu.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("building fakepmu.so: %v\n%s", err, out)
	}
	return lib
}

// buildMPI compiles a testdata program with impl's compiler wrapper.
func buildMPI(t *testing.T, impl mpiImpl, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, impl.mpicc, "-O2", "-o", bin,
		filepath.Join(repoRoot, "internal", "e2e", "testdata", name+".c")).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// checkFakeCounters checks a measurement taken with the stand-in PMU of a
// program that computes while useful: every rank counted, and "cycles" (CPU
// time in ns) during useful time are at most the useful time, so the
// frequency is at most 1 GHz (about 1 on an idle machine; busy-waiting in
// MPI or at OpenMP barriers would raise it if it were counted), and IPC is
// about 1 (two clocks).
func checkFakeCounters(t *testing.T, m *measure.Measurement, se string) {
	t.Helper()
	if c := m.Counters; c != nil && !c.Available && strings.Contains(c.Reason, "perf_event_open") {
		t.Skipf("software perf events are not available either: %s", c.Reason)
	}
	if c := m.Counters; c == nil || !c.Available || c.Method != "read" || !m.Resources.HardwareCounters {
		t.Fatalf("counters %+v, hardware_counters %v: want available, read\n%s", c, m.Resources.HardwareCounters, se)
	}
	g, _ := m.Global()
	for _, p := range g.Processes {
		if p.Cycles <= 0 || p.Instructions <= 0 {
			t.Errorf("rank %d: cycles %d, instructions %d", p.Rank, p.Cycles, p.Instructions)
		}
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := rep.Region("Global")
	for _, c := range []struct {
		id     string
		lo, hi float64
	}{
		// CPU time never exceeds the useful wall time it is counted in:
		// counted waiting (busy in MPI or at a barrier) would raise it
		// above 1. Descheduled useful time (a busy machine) lowers it, so
		// the lower bound only says that something was counted.
		{pop.IDFrequencyGHz, 0.05, 1.05},
		{pop.IDIPC, 0.5, 1.5}, // two clocks of the same CPU time
	} {
		if v, ok := r.Value(c.id); !ok || v < c.lo || v > c.hi {
			t.Errorf("%s = %.3f (present %v), want in [%.2f, %.2f]\n%s", c.id, v, ok, c.lo, c.hi, se)
		}
	}
	for _, want := range []string{"Computational metrics\n", "  Average useful IPC ..", "  Average useful frequency ..", "  Number of instructions .."} {
		if !strings.Contains(se, want) {
			t.Errorf("report lacks %q:\n%s", want, se)
		}
	}
}

// TestCountersFakePMU measures busy-computing MPI ranks (rank r computes
// (r+1)·K, the others busy-wait in MPI_Allreduce) with the stand-in PMU:
// the counters are gathered from every rank, written, and count useful time
// only.
func TestCountersFakePMU(t *testing.T) {
	lib := fakePMU(t)
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			bin := buildMPI(t, impl, "busy")
			m, raw, se := countersRun(t, impl, []string{"LD_PRELOAD=" + lib}, nil, 2, bin, "40", "4")
			checkFakeCounters(t, m, se)
			if !bytes.Contains(raw, []byte(`"counters": {"mode": "auto", "available": true, "method": "read"}`)) {
				t.Errorf("counters object:\n%s", raw)
			}
		})
	}
}

// TestCountersProbeFakePMU: the library's counter probe (what popmon doctor
// runs, POPMON_COUNTERS_PROBE=1) opens the library's counter group, so with
// the stand-in PMU it finds counters, read with read(); it measures nothing.
func TestCountersProbeFakePMU(t *testing.T) {
	impl := impls(t)[0]
	fake := fakePMU(t)
	so, se, code := popmon(t, nil, "build", "--mpicc", impl.mpicc)
	if code != 0 {
		t.Fatalf("popmon build: exit %d: %s", code, se)
	}
	lib := strings.TrimSpace(so)
	dir := t.TempDir()
	cmd := exec.Command("/bin/true")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib+" "+fake, "POPMON_COUNTERS_PROBE=1", "POPMON_OUTPUT="+filepath.Join(dir, "m.json"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "counters_reason=counters unavailable: ") && strings.Contains(string(out), "perf_event_open") {
		t.Skipf("software perf events are not available either:\n%s", out)
	}
	if !strings.HasPrefix(string(out), "counters_available=1\ncounters_method=read\nperf_event_paranoid=") {
		t.Errorf("probe output:\n%s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the probe wrote %v", entries)
	}
}

// TestCountersFakePMUOpenMP: OpenMP threads open their counters lazily and
// count only their useful time (the waiting threads spin in the barrier:
// OMP_WAIT_POLICY=active).
func TestCountersFakePMUOpenMP(t *testing.T) {
	impls(t) // end-to-end
	lib := fakePMU(t)
	if _, err := exec.LookPath("clang"); err != nil {
		t.Skip("no clang (apt-get install clang libomp-dev)")
	}
	if findFile("/usr/lib/x86_64-linux-gnu/libomp.so.5") == "" && findFile("/usr/lib/llvm-*/lib/libomp.so.5") == "" {
		t.Skip("LLVM libomp not installed (apt-get install libomp-dev)")
	}
	bin := filepath.Join(t.TempDir(), "ompbusy")
	if out, err := exec.Command("clang", "-O2", "-fopenmp", "-o", bin,
		filepath.Join(repoRoot, "internal", "e2e", "testdata", "ompbusy.c")).CombinedOutput(); err != nil {
		t.Skipf("clang -fopenmp cannot build: %v\n%s", err, out)
	}
	out := filepath.Join(t.TempDir(), "m.json")
	_, se, code := popmon(t, []string{"LD_PRELOAD=" + lib, "OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=active"},
		"run", "--no-mpi", "-o", out, "--", bin)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, se)
	}
	m, err := measure.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.OpenMP == nil || !m.OpenMP.OMPT || m.Processes[0].CPUs != 2 {
		t.Fatalf("OpenMP not measured on 2 threads: %+v\n%s", m.OpenMP, se)
	}
	checkFakeCounters(t, m, se)
}

// scalingRun writes a measurement of p ranks, each with the given useful
// time, cycles and instructions (counters 0: none), and MPI time up to the
// elapsed time.
func scalingRun(t *testing.T, dir string, p int, elapsed, useful, cycles, instructions int64) string {
	t.Helper()
	var procs, accs []string
	for r := 0; r < p; r++ {
		procs = append(procs, fmt.Sprintf(`{"rank": %d, "node": 0, "hostname": "n1", "pid": %d, "cpus": 1}`, r, 100+r))
		acc := fmt.Sprintf(`{"rank": %d, "cpus": 1, "visits": 1, "elapsed_ns": %d, "useful_ns": %d, "mpi_ns": %d, "mpi_calls": 10`,
			r, elapsed, useful, elapsed-useful)
		if cycles > 0 {
			acc += fmt.Sprintf(`, "cycles": %d, "instructions": %d`, cycles, instructions)
		}
		accs = append(accs, acc+"}")
	}
	counters := `{"mode": "auto", "available": true, "method": "rdpmc"}`
	if cycles == 0 {
		counters = `{"mode": "auto", "available": false, "reason": "counters unavailable: the CPU's performance monitoring unit is not exposed here (perf_event_open: ENOENT)"}`
	}
	doc := fmt.Sprintf(`{"format": "popmon-measurement", "version": 1, "tool": {"name": "popmon", "version": "0.1.0"},
 "timestamp": "2026-11-21T10:00:0%dZ", "command": ["./app"], "cwd": "/w", "launcher": {"kind": "openmpi"},
 "mpi": {"library": "Open MPI v4.1.4", "standard": "3.1", "thread_level": "single"}, "clock": {"source": "tsc"},
 "counters": %s,
 "resources": {"processes": %d, "nodes": 1, "cpus": %d, "gpus": 0, "hardware_counters": %v},
 "processes": [%s],
 "regions": [{"name": "Global", "processes": [%s]}],
 "mpi_calls": [], "warnings": []}`, p, counters, p, p, cycles > 0, strings.Join(procs, ", "), strings.Join(accs, ", "))
	path := filepath.Join(dir, fmt.Sprintf("run%d.json", p))
	if err := measure.ValidateSchema([]byte(doc)); err != nil {
		t.Fatalf("scaling fixture: %v\n%s", err, doc)
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCountersScaling: popmon scaling uses the counters of popmon's own
// files (POP-METRICS.md §6): 1 rank (U 1 s, 2 G cycles, 4 G instructions)
// against 2 ranks (U 0.6 s, 1.5 G cycles, 2.2 G instructions each):
// instruction scaling 4/4.4, IPC scaling (4.4/3)/2, frequency scaling
// 2.5/2, their product the computation scalability 1/1.2; without counters
// only the computation scalability remains.
func TestCountersScaling(t *testing.T) {
	type row = map[string]float64
	tests := []struct {
		name     string
		counters bool
		want     row // 2-rank run; absent ids must be absent
	}{
		{"with counters", true, row{
			pop.IDInstructionScaling:     4.0 / 4.4,
			pop.IDIPCScaling:             (4.4 / 3) / 2,
			pop.IDFrequencyScaling:       2.5 / 2,
			pop.IDComputationScalability: 1 / 1.2,
			pop.IDIPC:                    4.4 / 3,
			pop.IDFrequencyGHz:           2.5,
		}},
		{"without counters", false, row{pop.IDComputationScalability: 1 / 1.2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			k := int64(0)
			if tt.counters {
				k = 1
			}
			a := scalingRun(t, dir, 1, 1e9, 1e9, k*2e9, k*4e9)
			b := scalingRun(t, dir, 2, 0.7e9, 0.6e9, k*1.5e9, k*2.2e9)
			so, se, code := popmon(t, nil, "scaling", "--format", "json", a, b)
			if code != 0 {
				t.Fatalf("scaling: exit %d: %s", code, se)
			}
			var table struct {
				Mode    string `json:"mode"`
				Regions []struct {
					Runs []struct {
						CPUs    int                `json:"cpus"`
						Metrics map[string]float64 `json:"metrics"`
					} `json:"runs"`
				} `json:"regions"`
			}
			if err := json.Unmarshal([]byte(so), &table); err != nil || len(table.Regions) == 0 || len(table.Regions[0].Runs) != 2 {
				t.Fatalf("%v\n%s", err, so)
			}
			if table.Mode != "strong" {
				t.Errorf("mode %s, want strong (instructions per CPU fall to 0.55 of the reference's)", table.Mode)
			}
			got := table.Regions[0].Runs[1].Metrics
			for _, id := range []string{pop.IDInstructionScaling, pop.IDIPCScaling, pop.IDFrequencyScaling, pop.IDComputationScalability, pop.IDIPC, pop.IDFrequencyGHz} {
				v, ok := got[id]
				w, wantOK := tt.want[id]
				if ok != wantOK || (ok && (v < w-1e-6 || v > w+1e-6)) {
					t.Errorf("%s = %v (present %v), want %v (present %v)", id, v, ok, w, wantOK)
				}
			}
		})
	}
}
