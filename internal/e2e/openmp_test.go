package e2e

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// OpenMP validation (examples/omp_*.c, hybrid_*.c): each program is built
// with gcc (GNU libgomp, measured in place through its entry points; the
// same programs on LLVM's libomp, --openmp=libomp: gomp_test.go) and with
// clang (LLVM libomp, measured through OMPT), and its metrics are checked in
// all three models against the values derived in the program's header.

// ompEnv keeps idle OpenMP threads from spinning on the 2 cores (the
// validation programs sleep; spinning waiters would delay their wake-ups).
var ompEnv = []string{"OMP_WAIT_POLICY=passive"}

// compilers lists the OpenMP builds examples/build.sh produced.
func compilers(t *testing.T, dir string, prog string) []string {
	t.Helper()
	var out []string
	for _, c := range []string{"gcc", "clang"} {
		if _, err := os.Stat(filepath.Join(dir, prog+"."+c)); err == nil {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Skipf("%s was not built (no OpenMP compiler: apt-get install clang libomp-dev)", prog)
	}
	return out
}

func findFile(glob string) string {
	m, _ := filepath.Glob(glob)
	if len(m) > 0 {
		return m[0]
	}
	return ""
}

// ompRun measures argv with popmon run and returns the measurement and the
// reports of all models.
func ompRun(t *testing.T, env []string, popmonArgs []string, argv ...string) (*measure.Measurement, map[pop.Model]*pop.Report, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.json")
	args := append(append([]string{"run", "--format", "none", "-o", out}, popmonArgs...), "--")
	args = append(args, argv...)
	so, se, code := popmon(t, append(append([]string{}, ompEnv...), env...), args...)
	if code != 0 {
		t.Fatalf("popmon %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, so, se)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := measure.ValidateSchema(raw); err != nil {
		t.Errorf("measurement does not match the schema: %v", err)
	}
	m, err := measure.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.OpenMP == nil || !m.OpenMP.OMPT {
		t.Fatalf("OpenMP not measured: %+v\nstderr:\n%s", m.OpenMP, se)
	}
	for _, v := range measure.CheckAccounts(m) {
		t.Errorf("accounts invariant (POP-METRICS.md §1) broken: %+v", v)
	}
	return m, computeAll(t, m), out
}

// computeAll computes the reports of m in the three models.
func computeAll(t *testing.T, m *measure.Measurement) map[pop.Model]*pop.Report {
	t.Helper()
	reps := map[pop.Model]*pop.Report{}
	for _, model := range []pop.Model{pop.ModelTALP, pop.ModelPOPHybrid, pop.ModelPOPAdditive} {
		reps[model] = compute(t, m, model)
	}
	return reps
}

// want is one expected metric value.
type want struct {
	model  pop.Model
	region string
	id     string
	value  float64
}

func checkAll(t *testing.T, reps map[pop.Model]*pop.Report, file string, wants []want) {
	t.Helper()
	for _, w := range wants {
		g, ok := reps[w.model].Region(w.region)
		if !ok {
			t.Errorf("%s: no region %q", w.model, w.region)
			continue
		}
		got, ok := g.Value(w.id)
		if !ok {
			t.Errorf("%s %s: %s absent", w.model, w.region, w.id)
			continue
		}
		if got < w.value-effTol || got > w.value+effTol {
			t.Errorf("%s %s: %s = %.4f, want %.4f ± %.2f (%s)", w.model, w.region, w.id, got, w.value, effTol, file)
		}
	}
}

// pragmaLines returns the lines of `#pragma omp parallel` in an example.
func pragmaLines(t *testing.T, name string) []int {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []int
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "#pragma omp parallel") {
			lines = append(lines, n)
		}
	}
	return lines
}

// checkRegionLines asserts that every row of the per-parallel-region table
// names the example's source file and one of its `omp parallel` lines.
func checkRegionLines(t *testing.T, file, source string) {
	t.Helper()
	so, se, code := popmon(t, nil, "report", "--format", "omp-regions-csv", file)
	if code != 0 {
		t.Fatalf("omp-regions-csv: exit %d: %s", code, se)
	}
	rows, err := csv.NewReader(strings.NewReader(so)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("omp-regions-csv: %v\n%s", err, so)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	lines := pragmaLines(t, source)
	for _, r := range rows[1:] {
		if filepath.Base(r[col["file"]]) != source {
			t.Errorf("region in %q, want %s (row %v)", r[col["file"]], source, r)
			continue
		}
		line, _ := strconv.Atoi(r[col["line"]])
		ok := false
		for _, l := range lines {
			// gcc -O2 may attribute the runtime call to the line before.
			ok = ok || line == l || line == l-1 || line == l+1
		}
		if !ok {
			t.Errorf("region at %s:%d, want one of the pragma lines %v", source, line, lines)
		}
	}
}

func TestOpenMPSerialization(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	for _, cc := range compilers(t, dir, "omp_serial") {
		t.Run(cc, func(t *testing.T) {
			m, reps, file := ompRun(t, []string{"OMP_NUM_THREADS=4"}, []string{"--no-mpi"}, filepath.Join(dir, "omp_serial."+cc))
			const q = 0.625 // (S+T*W)/(T*(S+W)) with S = W, T = 4
			checkAll(t, reps, file, []want{
				{pop.ModelTALP, "Global", "parallel_efficiency", q},
				{pop.ModelTALP, "Global", "omp_parallel_efficiency", q},
				{pop.ModelTALP, "Global", "omp_serialization_efficiency", q},
				{pop.ModelTALP, "Global", "omp_load_balance", 1},
				{pop.ModelTALP, "Global", "omp_scheduling_efficiency", 1},
				{pop.ModelPOPHybrid, "Global", "hybrid_parallel_efficiency", q},
				{pop.ModelPOPHybrid, "Global", "hybrid_load_balance", q},
				{pop.ModelPOPHybrid, "Global", "hybrid_communication_efficiency", 1},
				{pop.ModelPOPAdditive, "Global", "parallel_efficiency", q},
				{pop.ModelPOPAdditive, "Global", "thread_efficiency", q},
				{pop.ModelPOPAdditive, "Global", "serial_region_efficiency", q},
				{pop.ModelPOPAdditive, "Global", "omp_region_efficiency", 1},
			})
			if m.OpenMP.MaxThreads != 4 {
				t.Errorf("max_threads = %d, want 4", m.OpenMP.MaxThreads)
			}
			if g, _ := m.Global(); g.Processes[0].CPUs != 4 {
				t.Errorf("cpus = %d, want 4", g.Processes[0].CPUs)
			}
			checkRegionLines(t, file, "omp_serial.c")
		})
	}
}

func TestOpenMPLoadImbalance(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	for _, cc := range compilers(t, dir, "omp_imbalance") {
		t.Run(cc, func(t *testing.T) {
			_, reps, file := ompRun(t, []string{"OMP_NUM_THREADS=4"}, []string{"--no-mpi"}, filepath.Join(dir, "omp_imbalance."+cc))
			const q = 0.625 // (T+1)/(2T), T = 4
			checkAll(t, reps, file, []want{
				{pop.ModelTALP, "Global", "parallel_efficiency", q},
				{pop.ModelTALP, "Global", "omp_load_balance", q},
				{pop.ModelTALP, "Global", "omp_serialization_efficiency", 1},
				{pop.ModelTALP, "Global", "omp_scheduling_efficiency", 1},
				{pop.ModelPOPHybrid, "Global", "hybrid_load_balance", q},
				{pop.ModelPOPHybrid, "Global", "omp_load_balance", q},
				{pop.ModelPOPAdditive, "Global", "thread_efficiency", q},
				{pop.ModelPOPAdditive, "Global", "omp_region_efficiency", q},
				{pop.ModelPOPAdditive, "Global", "serial_region_efficiency", 1},
			})
			so, _, _ := popmon(t, nil, "report", file)
			if !strings.Contains(so, "OpenMP parallel regions") || !strings.Contains(so, "omp_imbalance.c:") {
				t.Errorf("text report lacks the parallel-region table with source lines:\n%s", so)
			}
			checkRegionLines(t, file, "omp_imbalance.c")
		})
	}
}

// hybridPhasesWants are the designed values of examples/hybrid_phases.c
// with P = T = 2 (examples/README.md), for each rank on its own node or all
// on one: no value here depends on the node layout.
var hybridPhasesWants = []want{
	// Phase 1: OpenMP is to blame.
	{pop.ModelTALP, "phase1", "parallel_efficiency", 0.75},
	{pop.ModelTALP, "phase1", "mpi_load_balance", 1},
	{pop.ModelTALP, "phase1", "omp_load_balance", 0.75},
	{pop.ModelPOPHybrid, "phase1", "mpi_load_balance", 1},
	{pop.ModelPOPHybrid, "phase1", "omp_load_balance", 0.75},
	{pop.ModelPOPAdditive, "phase1", "process_efficiency", 1},
	{pop.ModelPOPAdditive, "phase1", "omp_region_efficiency", 0.75},
	// Phase 2: MPI is to blame; rank 0's workers idle while
	// it waits in MPI: serialization of the OpenMP branch
	// (seed 000, DLB/TALP after 3.7.0).
	{pop.ModelTALP, "phase2", "parallel_efficiency", 0.75},
	{pop.ModelTALP, "phase2", "mpi_load_balance", 0.75},
	{pop.ModelTALP, "phase2", "mpi_parallel_efficiency", 0.75},
	{pop.ModelTALP, "phase2", "omp_serialization_efficiency", 0.875},
	{pop.ModelTALP, "phase2", "omp_parallel_efficiency", 0.875},
	{pop.ModelTALP, "phase2", "omp_load_balance", 1},
	{pop.ModelPOPHybrid, "phase2", "mpi_load_balance", 0.75},
	{pop.ModelPOPHybrid, "phase2", "omp_load_balance", 1},
	{pop.ModelPOPAdditive, "phase2", "mpi_load_balance", 0.75},
	{pop.ModelPOPAdditive, "phase2", "thread_efficiency", 1},
	// The whole run.
	{pop.ModelTALP, "Global", "parallel_efficiency", 0.75},
	{pop.ModelTALP, "Global", "mpi_load_balance", 0.875},
	{pop.ModelTALP, "Global", "omp_load_balance", 0.875},
	{pop.ModelTALP, "Global", "omp_serialization_efficiency", 13.0 / 14},
	{pop.ModelTALP, "Global", "omp_parallel_efficiency", 13.0 / 16},
	{pop.ModelPOPHybrid, "Global", "hybrid_parallel_efficiency", 0.75},
	{pop.ModelPOPHybrid, "Global", "mpi_parallel_efficiency", 0.875},
	{pop.ModelPOPHybrid, "Global", "omp_parallel_efficiency", 6.0 / 7},
	{pop.ModelPOPAdditive, "Global", "parallel_efficiency", 0.75},
	{pop.ModelPOPAdditive, "Global", "process_efficiency", 0.875},
	{pop.ModelPOPAdditive, "Global", "thread_efficiency", 0.875},
}

// TestHybridTwoPhases is seed 001's synthetic experiment: the report blames
// OpenMP for phase 1 and MPI for phase 2, in all three models.
func TestHybridTwoPhases(t *testing.T) {
	for _, impl := range impls(t) {
		dir := examples(t, impl)
		for _, cc := range compilers(t, dir, "hybrid_phases") {
			impl, cc := impl, cc
			t.Run(impl.name+"/"+cc, func(t *testing.T) {
				args := []string{"100", "2"}
				if busyWaitOversubscribed(impl, 4) {
					args = []string{"300", "1"}
				}
				argv := append(append([]string{impl.mpirun}, impl.extra...), "-np", "2", filepath.Join(dir, "hybrid_phases."+cc))
				_, reps, file := ompRun(t, []string{"OMP_NUM_THREADS=2"}, []string{"--mpicc", impl.mpicc}, append(argv, args...)...)
				checkAll(t, reps, file, hybridPhasesWants)
			})
		}
	}
}

// TestHybridMPIWorkerIdle: the primary waits in MPI while its workers idle.
func TestHybridMPIWorkerIdle(t *testing.T) {
	for _, impl := range impls(t) {
		dir := examples(t, impl)
		for _, cc := range compilers(t, dir, "hybrid_mpi_idle") {
			impl, cc := impl, cc
			t.Run(impl.name+"/"+cc, func(t *testing.T) {
				args := []string{"100", "3"}
				if busyWaitOversubscribed(impl, 4) {
					args = []string{"300", "1"}
				}
				argv := append(append([]string{impl.mpirun}, impl.extra...), "-np", "2", filepath.Join(dir, "hybrid_mpi_idle."+cc))
				m, reps, file := ompRun(t, []string{"OMP_NUM_THREADS=2"}, []string{"--mpicc", impl.mpicc}, append(argv, args...)...)
				const e = 2.0 / 3 // 2/(P+1), P = 2
				checkAll(t, reps, file, []want{
					{pop.ModelTALP, "Global", "parallel_efficiency", e},
					{pop.ModelTALP, "Global", "mpi_parallel_efficiency", e},
					{pop.ModelTALP, "Global", "mpi_communication_efficiency", e},
					{pop.ModelTALP, "Global", "mpi_load_balance", 1},
					// Workers idle while their primary is in MPI:
					// serialization, (2T+P-1)/(T(P+1)) = 5/6.
					{pop.ModelTALP, "Global", "omp_parallel_efficiency", 5.0 / 6},
					{pop.ModelTALP, "Global", "omp_serialization_efficiency", 5.0 / 6},
					{pop.ModelTALP, "Global", "omp_load_balance", 1},
					{pop.ModelPOPHybrid, "Global", "hybrid_parallel_efficiency", e},
					{pop.ModelPOPHybrid, "Global", "mpi_communication_efficiency", e},
					{pop.ModelPOPAdditive, "Global", "process_efficiency", e},
					{pop.ModelPOPAdditive, "Global", "thread_efficiency", 1},
				})
				// Mw = (T-1) x M per rank: the idle workers of a primary in MPI.
				g, _ := m.Global()
				for _, p := range g.Processes {
					if p.MPINS == 0 || p.MPIWorkerIdleNS < p.MPINS*9/10 || p.MPIWorkerIdleNS > p.MPINS*11/10 {
						t.Errorf("rank %d: mpi_worker_idle_ns %d, want ≈ mpi_ns %d (T-1 = 1)", p.Rank, p.MPIWorkerIdleNS, p.MPINS)
					}
				}
			})
		}
	}
}

// TestOpenMPNative: --openmp=native is auto since GNU libgomp is measured in
// place: a GCC program runs on libgomp, and its OpenMP metrics are there.
func TestOpenMPNative(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	prog := filepath.Join(dir, "omp_serial.gcc")
	if _, err := os.Stat(prog); err != nil {
		t.Skip("omp_serial.gcc not built")
	}
	out := filepath.Join(t.TempDir(), "n.json")
	_, se, code := popmon(t, append([]string{"OMP_NUM_THREADS=2"}, ompEnv...), "run", "--no-mpi", "--openmp", "native", "-o", out, "--", prog, "100", "100", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	if !strings.Contains(se, "\nOpenMP:    GNU libgomp · measured by GOMP interposition · 2 threads per process\n") {
		t.Errorf("the report header does not say how OpenMP was measured:\n%s", se)
	}
	m, err := measure.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.OpenMP == nil || !m.OpenMP.OMPT || m.OpenMP.Method != "GOMP interposition" || m.OpenMP.Reason != "" {
		t.Errorf("openmp = %+v, want GNU libgomp measured by GOMP interposition", m.OpenMP)
	}
	rep, _ := pop.Compute(m, pop.ModelTALP)
	g, _ := rep.Region("Global")
	// (S + T W)/(T (S + W)) with S = W, T = 2.
	if v, ok := g.Value("omp_serialization_efficiency"); !ok || v < 0.75-effTol || v > 0.75+effTol {
		t.Errorf("omp_serialization_efficiency = %.3f (measured %v), want 0.75", v, ok)
	}
}

// TestOpenMPOutputUnchanged: a measured OpenMP program prints what it
// prints without popmon.
func TestOpenMPOutputUnchanged(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	for _, cc := range compilers(t, dir, "omp_imbalance") {
		prog := filepath.Join(dir, "omp_imbalance."+cc)
		cmd := exec.Command(prog, "20", "1")
		cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=3")
		plain, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		so, se, code := popmon(t, []string{"OMP_NUM_THREADS=3"}, "run", "--no-mpi", "--format", "none", "-o", filepath.Join(t.TempDir(), "u.json"), "--", prog, "20", "1")
		if code != 0 || !bytes.Equal([]byte(so), plain) {
			t.Errorf("%s: output %q (exit %d), plain %q\n%s", cc, so, code, plain, se)
		}
	}
}
