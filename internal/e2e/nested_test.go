package e2e

import (
	"encoding/json"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Nested OpenMP teams and regions started inside parallel regions, as DLB
// counts and measures them (issue 32; DLB's tests/functional/talp/omp/
// test_omp_nested): examples/omp_nested.c, on GNU libgomp in place (gcc
// build) and on LLVM's libomp through OMPT (clang build). Its work is
// sleeping, so the designed times hold on 2 cores too.

// TestOpenMPNested checks the design of examples/omp_nested.c: the process
// has the 4 threads of its 2 × 2 teams as CPUs and 4 parallel regions per
// repetition; region "Thread", started by threads inside parallel regions,
// is measured per thread (4 measurements per repetition by 3 threads, one
// thread's time each, parallel efficiency 1); "Small" has the 4 CPUs; every
// time and efficiency of the header, in popmon's measurement and in its
// TALP JSON.
func TestOpenMPNested(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	const u, n = 40e6, 2 // ns per unit, repetitions (the program's defaults)
	for _, cc := range compilers(t, dir, "omp_nested") {
		t.Run(cc, func(t *testing.T) {
			m, reps, file := ompRun(t, []string{"OMP_NUM_THREADS=2,2"}, []string{"--no-mpi"}, filepath.Join(dir, "omp_nested."+cc))
			wantRuntime := map[string]string{"gcc": "GOMP interposition", "clang": "OMPT"}[cc]
			if m.OpenMP.Method != wantRuntime {
				t.Errorf("OpenMP measured by %q, want %q", m.OpenMP.Method, wantRuntime)
			}
			for _, w := range m.Warnings {
				if strings.Contains(w, "already open") || strings.Contains(w, "not open") {
					t.Errorf("warning %q: regions started inside parallel regions are measured per thread", w)
				}
			}

			// Structure.
			g := oneProcess(t, m, "Global")
			if g.CPUs != 4 || m.Processes[0].CPUs != 4 {
				t.Errorf("Global cpus %d, process cpus %d, want 4 (the threads of the 2 × 2 teams)", g.CPUs, m.Processes[0].CPUs)
			}
			if g.OMPParallels != 4*n {
				t.Errorf("Global omp_parallels = %d, want %d (outer, 2 nested, Small's per repetition)", g.OMPParallels, 4*n)
			}
			th := oneProcess(t, m, "Thread")
			if th.CPUs != 1 || th.Threads != 3 || th.Visits != 4*n || th.OMPParallels != 0 {
				t.Errorf("Thread: cpus %d threads %d visits %d omp_parallels %d, want 1, 3, %d, 0 (measured per thread)",
					th.CPUs, th.Threads, th.Visits, th.OMPParallels, 4*n)
			}
			sm := oneProcess(t, m, "Small")
			if sm.CPUs != 4 || sm.Visits != n || sm.OMPParallels != n {
				t.Errorf("Small: cpus %d visits %d omp_parallels %d, want 4, %d, %d", sm.CPUs, sm.Visits, sm.OMPParallels, n, n)
			}

			// Times (relative tolerance, as DLB's test) and efficiencies.
			near := func(what string, got int64, units float64) {
				t.Helper()
				if want := units * u * n; math.Abs(float64(got)-want) > 0.1*want {
					t.Errorf("%s = %.3f s, want %.3f s ± 10%% (%s)", what, float64(got)/1e9, want/1e9, file)
				}
			}
			near("Global elapsed", g.ElapsedNS, 12.5)
			near("Global useful", g.UsefulNS, 20)
			near("Global serialization", g.OMPSerializationNS, 22.5)
			near("Global load imbalance", g.OMPLoadImbalanceNS, 7.5)
			near("Thread useful", th.UsefulNS, 17.5)
			near("Thread elapsed (the measurements' sum)", th.ElapsedNS, 17.5)
			near("Small useful", sm.UsefulNS, 1)
			near("Small serialization", sm.OMPSerializationNS, 3)
			checkAll(t, reps, file, []want{
				{pop.ModelTALP, "Global", "parallel_efficiency", 0.40},
				{pop.ModelTALP, "Global", "omp_load_balance", 0.85},
				{pop.ModelTALP, "Global", "omp_serialization_efficiency", 0.47},
				{pop.ModelTALP, "Global", "omp_scheduling_efficiency", 1},
				{pop.ModelTALP, "Thread", "parallel_efficiency", 1},
				{pop.ModelTALP, "Small", "parallel_efficiency", 0.25},
				{pop.ModelTALP, "Small", "omp_serialization_efficiency", 0.25},
				{pop.ModelTALP, "Small", "omp_load_balance", 1},
			})

			// The report says how "Thread" was measured.
			so, se, code := popmon(t, nil, "report", file)
			if code != 0 || !strings.Contains(so, "measured per thread: 3 threads") {
				t.Errorf("popmon report: exit %d, no \"measured per thread: 3 threads\"\n%s%s", code, so, se)
			}

			// TALP JSON: DLB's counts (numCpus: hardware CPUs, at most the
			// affinity's, as DLB after 3.7.0 and test_omp_nested.py).
			so, se, code = popmon(t, nil, "report", "--format", "talp-json", file)
			if code != 0 {
				t.Fatalf("talp-json: exit %d\n%s", code, se)
			}
			var doc struct {
				Application map[string]map[string]float64
			}
			if err := json.Unmarshal([]byte(so), &doc); err != nil {
				t.Fatalf("talp-json: %v\n%s", err, so)
			}
			cpus := runtime.NumCPU()
			if a := m.Processes[0].AffinityCPUs; a > 0 {
				cpus = a
			}
			checks := []struct {
				region, key string
				want        float64
			}{
				{"Global", "numCpus", float64(min(4, cpus))},
				{"Global", "numOmpThreads", 4},
				{"Global", "numOmpParallels", 4 * n},
				{"Thread", "numCpus", float64(min(3, cpus))},
				{"Thread", "numOmpThreads", 3},
				{"Thread", "numMeasurements", 4 * n},
				{"Thread", "numOmpParallels", 0},
				{"Thread", "parallelEfficiency", 1},
				{"Small", "numOmpThreads", 4},
				{"Small", "numOmpParallels", n},
			}
			for _, c := range checks {
				got, ok := doc.Application[c.region][c.key]
				if !ok || math.Abs(got-c.want) > 0.02 {
					t.Errorf("talp-json %s %s = %v (present %v), want %v", c.region, c.key, got, ok, c.want)
				}
			}
		})
	}
}

// oneProcess returns the record of region name's one process.
func oneProcess(t *testing.T, m *measure.Measurement, name string) measure.ProcessAccounts {
	t.Helper()
	g, ok := m.Region(name)
	if !ok || len(g.Processes) != 1 {
		t.Fatalf("region %q: %v, want one process", name, ok)
	}
	return g.Processes[0]
}
