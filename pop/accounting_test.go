package pop_test

import (
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// hproc is one process of a designed hybrid phase, in seconds: the process
// accounts of POP-METRICS.md §1 as the measurement file keeps them (Mw apart
// from Iser) and the per-thread accounts the hybrid models read.
type hproc struct {
	cpus                      int
	e, u, m, mw, iser         float64
	pu, pm, pp, psu, par, tum float64 // primary useful, MPI, parallel, serial useful; parallel useful; thread useful max
}

// buildHybrid makes a valid measurement with one region "R", every process
// on node 0, OpenMP measured.
func buildHybrid(mpi bool, procs ...hproc) *measure.Measurement {
	m := build(mpi, 0)
	m.OpenMP = &measure.OpenMP{Runtime: "LLVM OMP", OMPT: true, MaxThreads: 4}
	m.Resources.Nodes = 1
	for i, p := range procs {
		m.Processes = append(m.Processes, measure.Process{Rank: i, CPUs: p.cpus})
		m.Resources.CPUs += p.cpus
		m.Regions[0].Processes = append(m.Regions[0].Processes, measure.ProcessAccounts{
			Rank: i, CPUs: p.cpus, Visits: 1, ElapsedNS: ns(p.e), UsefulNS: ns(p.u), MPINS: ns(p.m),
			MPIWorkerIdleNS: ns(p.mw), OMPSerializationNS: ns(p.iser),
			PrimaryUsefulNS: ns(p.pu), PrimaryMPINS: ns(p.pm), PrimaryParallelNS: ns(p.pp),
			PrimarySerialUsefulNS: ns(p.psu), ParallelUsefulNS: ns(p.par), ThreadUsefulMaxNS: ns(p.tum),
		})
	}
	m.Resources.Processes = len(procs)
	return m
}

// Designed programs of issue 10, one iteration, accounts derived by hand.
var (
	// barrierPhase: 2 ranks × 2 threads. Rank 0 runs a balanced 100 ms
	// parallel region (both threads useful 100 ms), then waits 100 ms in
	// MPI_Barrier while its worker idles (M 0.1, Mw 0.1); rank 1's balanced
	// region lasts 200 ms. Every process: U + M + Mw = 2 × 0.2 s.
	barrierPhase = []hproc{
		{cpus: 2, e: 0.2, u: 0.2, m: 0.1, mw: 0.1, pu: 0.1, pm: 0.1, pp: 0.1, par: 0.2, tum: 0.1},
		{cpus: 2, e: 0.2, u: 0.4, pu: 0.2, pp: 0.2, par: 0.4, tum: 0.2},
	}
	// numThreadsOverride: one process whose num_threads(4) clause
	// overrides OMP_NUM_THREADS=2: 100 ms serial before the first parallel
	// region (3 CPUs idle: Iser 0.3), then a balanced 4-thread region of
	// 100 ms. CPUs = 4, the largest team; U + Iser = 4 × 0.2 s.
	numThreadsOverride = []hproc{
		{cpus: 4, e: 0.2, u: 0.5, iser: 0.3, pu: 0.2, pp: 0.1, psu: 0.1, par: 0.4, tum: 0.2},
	}
)

// TestWorkerIdleAccounting pins the OpenMP accounting of POP-METRICS.md §1–§2
// on the designed programs of issue 10, in all three models: in model talp
// the workers' idle time while their primary is in MPI is serialization
// (0.875) and MPI time (load balance 0.75) at once; pop-hybrid and
// pop-additive see the wait on the primary thread only, as MPI time.
func TestWorkerIdleAccounting(t *testing.T) {
	tests := []struct {
		name  string
		m     *measure.Measurement
		model pop.Model
		want  want
	}{
		{"barrier phase talp", buildHybrid(true, barrierPhase...), pop.ModelTALP, want{
			"parallel_efficiency":          0.75, // U 0.6 / 0.8
			"mpi_parallel_efficiency":      0.75, // 1 − (M + Mw)/C/T = 1 − 0.05/0.2
			"mpi_communication_efficiency": 1,    // rank 1 never waits
			"mpi_load_balance":             0.75,
			"mpi_load_balance_in":          0.75,
			"mpi_load_balance_out":         1,
			"omp_parallel_efficiency":      0.875, // (U + M) / active = 0.7 / 0.8
			"omp_serialization_efficiency": 0.875, // 0.7 / (0.7 + Mw 0.1)
			"omp_load_balance":             1,
			"omp_scheduling_efficiency":    1,
		}},
		{"barrier phase pop-hybrid", buildHybrid(true, barrierPhase...), pop.ModelPOPHybrid, want{
			"hybrid_parallel_efficiency":      0.75,
			"hybrid_load_balance":             0.75,
			"hybrid_communication_efficiency": 1,
			"mpi_parallel_efficiency":         0.75, // NonMPI 0.1, 0.2
			"mpi_load_balance":                0.75,
			"mpi_communication_efficiency":    1,
			"omp_parallel_efficiency":         1,
			"omp_load_balance":                1,
			"omp_communication_efficiency":    1,
		}},
		{"barrier phase pop-additive", buildHybrid(true, barrierPhase...), pop.ModelPOPAdditive, want{
			"parallel_efficiency":          0.75,
			"process_efficiency":           0.75,
			"mpi_load_balance":             0.75,
			"mpi_communication_efficiency": 1,
			"thread_efficiency":            1,
			"omp_region_efficiency":        1,
			"serial_region_efficiency":     1,
		}},
		{"num_threads override talp", buildHybrid(false, numThreadsOverride...), pop.ModelTALP, want{
			"parallel_efficiency":          0.625, // U 0.5 / (4 × 0.2)
			"omp_parallel_efficiency":      0.625,
			"omp_serialization_efficiency": 0.625,
			"omp_load_balance":             1,
			"omp_scheduling_efficiency":    1,
		}},
		{"num_threads override pop-hybrid", buildHybrid(false, numThreadsOverride...), pop.ModelPOPHybrid, want{
			"hybrid_parallel_efficiency":      0.625,
			"hybrid_load_balance":             0.625,
			"hybrid_communication_efficiency": 1,
			"omp_parallel_efficiency":         0.625,
		}},
		{"num_threads override pop-additive", buildHybrid(false, numThreadsOverride...), pop.ModelPOPAdditive, want{
			"parallel_efficiency":      0.625,
			"process_efficiency":       1,
			"thread_efficiency":        0.625,
			"omp_region_efficiency":    1,
			"serial_region_efficiency": 0.625, // 1 − 0.1·(1 − 1/4)/0.2
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v := measure.CheckAccounts(tt.m); len(v) != 0 {
				t.Fatalf("designed accounts break the invariant: %v", v)
			}
			r := computeOne(t, tt.m, tt.model)
			checkModel(t, r, tt.want, nil, nil)
		})
	}
}

// TestHybridModelsOnTALPSums: a measurement converted from DLB/TALP JSON
// has the hybrid models' values only in regions whose per-process times
// internal/talpjson derived (one CPU per process, marked with
// thread_useful_max_ns = useful_ns); elsewhere they are not measured.
func TestHybridModelsOnTALPSums(t *testing.T) {
	talp := func(procs ...proc) *measure.Measurement {
		m := build(true, 0, procs...)
		m.Source = &measure.Source{Kind: measure.SourceTALP, Path: "x.json"}
		return m
	}
	mark := func(m *measure.Measurement) *measure.Measurement {
		for i := range m.Regions[0].Processes {
			a := &m.Regions[0].Processes[i]
			a.ThreadUsefulMaxNS = a.UsefulNS
		}
		return m
	}
	// 1, 2, 3, 4 s useful of T = 4 s, the rest MPI.
	pureMPI := []proc{{cpus: 1, e: 4, u: 1, m: 3}, {cpus: 1, e: 4, u: 2, m: 2}, {cpus: 1, e: 4, u: 3, m: 1}, {cpus: 1, e: 4, u: 4}}
	values := map[pop.Model]want{
		pop.ModelPOPHybrid: {"hybrid_parallel_efficiency": 0.625, "hybrid_load_balance": 0.625, "hybrid_communication_efficiency": 1,
			"mpi_parallel_efficiency": 0.625, "mpi_load_balance": 0.625, "mpi_communication_efficiency": 1,
			"omp_parallel_efficiency": 1, "omp_load_balance": 1, "omp_communication_efficiency": 1},
		pop.ModelPOPAdditive: {"parallel_efficiency": 0.625, "process_efficiency": 0.625, "mpi_load_balance": 0.625,
			"mpi_communication_efficiency": 1, "thread_efficiency": 1, "omp_region_efficiency": 1, "serial_region_efficiency": 1},
	}
	for _, model := range []pop.Model{pop.ModelPOPHybrid, pop.ModelPOPAdditive} {
		t.Run(string(model), func(t *testing.T) {
			checkModel(t, computeOne(t, mark(talp(pureMPI...)), model), values[model], nil, nil)
			// Unmarked: the conversion split the sums without deriving
			// per-process times.
			checkModel(t, computeOne(t, talp(pureMPI...), model), nil, nil, allNotMeasured(model, "DLB/TALP JSON holds sums"))
			// Several CPUs per process: never derived.
			twoCPUs := mark(talp(proc{cpus: 2, e: 1, u: 2}, proc{cpus: 2, e: 1, u: 1, m: 1}))
			checkModel(t, computeOne(t, twoCPUs, model), nil, nil, allNotMeasured(model, "DLB/TALP JSON holds sums"))
		})
	}
}
