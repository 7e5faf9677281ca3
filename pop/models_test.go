package pop_test

import (
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// tproc is one process of a synthetic hybrid measurement, in seconds: the
// process accounts and the per-thread accounts of docs/measurement-format.md.
// Zero per-thread fields are omitted, as writers do.
type tproc struct {
	cpus                      int
	e, u, m                   float64
	pu, pm, pp, psu, par, tum float64 // primary useful, MPI, parallel, serial useful; parallel useful; thread useful max
}

// buildThreads makes a valid measurement with one region "R" from procs, all
// on one node. omp is the file's "openmp" object (nil: none).
func buildThreads(mpi bool, omp *measure.OpenMP, procs ...tproc) *measure.Measurement {
	m := build(mpi, 0)
	m.OpenMP = omp
	m.Resources.Nodes = 1
	for i, p := range procs {
		m.Processes = append(m.Processes, measure.Process{Rank: i, CPUs: p.cpus})
		m.Resources.CPUs += p.cpus
		m.Regions[0].Processes = append(m.Regions[0].Processes, measure.ProcessAccounts{
			Rank: i, CPUs: p.cpus, Visits: 1, ElapsedNS: ns(p.e), UsefulNS: ns(p.u), MPINS: ns(p.m),
			PrimaryUsefulNS: ns(p.pu), PrimaryMPINS: ns(p.pm), PrimaryParallelNS: ns(p.pp),
			PrimarySerialUsefulNS: ns(p.psu), ParallelUsefulNS: ns(p.par), ThreadUsefulMaxNS: ns(p.tum),
			// The threads' idle time, which the hybrid models do not
			// read: with it the accounts add up (POP-METRICS.md §1), as
			// every region's must for metrics.
			OMPSchedulingNS: max(ns(p.e)*int64(p.cpus)-ns(p.u)-ns(p.m), 0),
		})
	}
	m.Resources.Processes = len(procs)
	return m
}

var llvm = &measure.OpenMP{Runtime: "LLVM OMP version: 5.0.20140926", OMPT: true, MaxThreads: 4}

const libgompReason = "GNU libgomp has no OMPT: run with popmon run --openmp=libomp"

var libgomp = &measure.OpenMP{Runtime: "GNU libgomp", Reason: libgompReason, MaxThreads: 4}

// libgomp1 is libgomp with one thread per process (OMP_NUM_THREADS=1).
var libgomp1 = &measure.OpenMP{Runtime: "GNU libgomp", Reason: libgompReason, MaxThreads: 1}

// Hand-built runs, in seconds, following the OpenMP accounting (outside
// parallel regions only the primary thread works).
var (
	// twoByTwo: 2 processes × 2 threads, R = 10. Process 0: the primary
	// computes 1 s serially, is 1 s in MPI and 8 s in parallel regions,
	// where it is useful 8 s and its worker 6 s. Process 1: serial 2 s,
	// MPI 3 s, parallel 5 s with both threads useful 5 s.
	twoByTwo = []tproc{
		{cpus: 2, e: 10, u: 15, m: 1, pu: 9, pm: 1, pp: 8, psu: 1, par: 14, tum: 9},
		{cpus: 2, e: 10, u: 12, m: 3, pu: 7, pm: 3, pp: 5, psu: 2, par: 10, tum: 7},
	}
	// uneven: a 4-thread process (serial 0.5 s, MPI 0.5 s, parallel 3 s with
	// thread useful times 3, 3, 2.5, 2 s) and a 1-CPU process written
	// without per-thread keys (useful 3 s, MPI 1 s), R = 4.
	uneven = []tproc{
		{cpus: 4, e: 4, u: 11, m: 0.5, pu: 3.5, pm: 0.5, pp: 3, psu: 0.5, par: 10.5, tum: 3.5},
		{cpus: 1, e: 4, u: 3, m: 1},
	}
	// pureMPI: 4 ranks of 1 CPU, useful 1, 2, 3, 4 s, R = 4; no per-thread
	// keys (the fallbacks apply).
	pureMPI = []tproc{
		{cpus: 1, e: 4, u: 1, m: 3}, {cpus: 1, e: 4, u: 2, m: 2}, {cpus: 1, e: 4, u: 3, m: 1}, {cpus: 1, e: 4, u: 4},
	}
	// openMPOnly: 1 process × 8 threads, R = 5, no MPI: serial 0.4 s (the
	// 7 workers idle 2.8 s), parallel 4.6 s with 33.6 s useful thread time.
	openMPOnly = []tproc{
		{cpus: 8, e: 5, u: 34, pu: 4.675, pp: 4.6, psu: 0.4, par: 33.6, tum: 4.675},
	}
)

func TestPOPHybrid(t *testing.T) {
	tests := []struct {
		name   string
		m      *measure.Measurement
		want   want
		absent []string
		nm     map[string]string // not measured: id → reason
	}{
		{
			// meanU = 27/4, maxU = 9; NonMPI 9, 7.
			name: "2 processes × 2 threads",
			m:    buildThreads(true, llvm, twoByTwo...),
			want: want{
				"hybrid_parallel_efficiency": 0.675, "hybrid_load_balance": 0.75, "hybrid_communication_efficiency": 0.9,
				"mpi_parallel_efficiency": 0.8, "mpi_load_balance": 8.0 / 9, "mpi_communication_efficiency": 0.9,
				"omp_parallel_efficiency": 0.675 / 0.8, "omp_load_balance": 0.75 * 9 / 8, "omp_communication_efficiency": 1,
			},
		},
		{
			// ΣU = 14 over Tt = 5 threads, maxU = 3.5; NonMPI 3.5, 3 (mean over
			// processes, unweighted).
			name: "uneven threads, 1-CPU fallbacks",
			m:    buildThreads(true, llvm, uneven...),
			want: want{
				"hybrid_parallel_efficiency": 0.7, "hybrid_load_balance": 0.8, "hybrid_communication_efficiency": 0.875,
				"mpi_parallel_efficiency": 0.8125, "mpi_load_balance": 3.25 / 3.5, "mpi_communication_efficiency": 0.875,
				"omp_parallel_efficiency": 0.7 / 0.8125, "omp_load_balance": 0.8 / (3.25 / 3.5), "omp_communication_efficiency": 1,
			},
		},
		{
			// Without OpenMP the hybrid and MPI trees coincide and the OpenMP
			// efficiencies are 1 (reported: their inputs are there).
			name: "pure MPI",
			m:    buildThreads(true, nil, pureMPI...),
			want: want{
				"hybrid_parallel_efficiency": 0.625, "hybrid_load_balance": 0.625, "hybrid_communication_efficiency": 1,
				"mpi_parallel_efficiency": 0.625, "mpi_load_balance": 0.625, "mpi_communication_efficiency": 1,
				"omp_parallel_efficiency": 1, "omp_load_balance": 1, "omp_communication_efficiency": 1,
			},
		},
		{
			// No MPI: no MPI branch; OpenMP = hybrid.
			name: "OpenMP without MPI",
			m:    buildThreads(false, llvm, openMPOnly...),
			want: want{
				"hybrid_parallel_efficiency": 0.85, "hybrid_load_balance": 4.25 / 4.675, "hybrid_communication_efficiency": 4.675 / 5,
				"omp_parallel_efficiency": 0.85, "omp_load_balance": 4.25 / 4.675, "omp_communication_efficiency": 4.675 / 5,
			},
			absent: []string{"mpi_parallel_efficiency", "mpi_load_balance", "mpi_communication_efficiency"},
		},
		{
			// OMPT not active but one thread per process (max_threads 1):
			// no workers, so the OpenMP factors are 1 and every metric has
			// its value.
			name: "OpenMP not measured, one thread per process",
			m:    buildThreads(true, libgomp1, tproc{cpus: 1, e: 3, u: 2.4, m: 0.6}, tproc{cpus: 1, e: 3, u: 1.8, m: 1.2}),
			want: want{"hybrid_parallel_efficiency": 0.7, "hybrid_load_balance": 2.1 / 2.4, "hybrid_communication_efficiency": 0.8,
				"mpi_parallel_efficiency": 0.7, "mpi_load_balance": 2.1 / 2.4, "mpi_communication_efficiency": 0.8,
				"omp_parallel_efficiency": 1, "omp_load_balance": 1, "omp_communication_efficiency": 1},
		},
		{
			// OMPT not active with 4 threads per process: what needs the
			// threads is not measured (the file has 1 CPU per process, the
			// primary, as the workers were not seen); the MPI side
			// (primary threads) is.
			name: "OpenMP not measured",
			m:    buildThreads(true, libgomp, tproc{cpus: 1, e: 3, u: 2.4, m: 0.6}, tproc{cpus: 1, e: 3, u: 1.8, m: 1.2}),
			want: want{"mpi_parallel_efficiency": 0.7, "mpi_load_balance": 2.1 / 2.4, "mpi_communication_efficiency": 0.8},
			nm: map[string]string{
				"hybrid_parallel_efficiency": libgompReason, "hybrid_load_balance": libgompReason, "hybrid_communication_efficiency": libgompReason,
				"omp_parallel_efficiency": libgompReason, "omp_load_balance": libgompReason, "omp_communication_efficiency": libgompReason,
			},
		},
		{
			name: "no per-thread accounts",
			m:    buildThreads(true, nil, tproc{cpus: 4, e: 1, u: 3, m: 0.25}, tproc{cpus: 4, e: 1, u: 3.5}),
			nm:   allNotMeasured(pop.ModelPOPHybrid, "lacks the per-thread accounts"),
		},
		{
			name:   "zero-time region",
			m:      buildThreads(true, llvm, tproc{cpus: 2}, tproc{cpus: 2}),
			absent: []string{"hybrid_parallel_efficiency", "mpi_parallel_efficiency", "omp_parallel_efficiency"},
		},
		{
			// Every primary thread in MPI all the time: NonMPI = 0, so the MPI
			// balance and the OpenMP quotients are undefined (absent).
			name:   "all primaries in MPI",
			m:      buildThreads(true, llvm, tproc{cpus: 2, e: 1, u: 0.5, m: 1, pm: 1, tum: 0.5}, tproc{cpus: 2, e: 1, m: 1, pm: 1}),
			want:   want{"hybrid_parallel_efficiency": 0.125, "hybrid_load_balance": 0.25, "mpi_parallel_efficiency": 0, "mpi_communication_efficiency": 0},
			absent: []string{"mpi_load_balance", "omp_parallel_efficiency", "omp_load_balance", "omp_communication_efficiency"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := computeOne(t, tt.m, pop.ModelPOPHybrid)
			checkModel(t, r, tt.want, tt.absent, tt.nm)
			product(t, r, "hybrid_parallel_efficiency", "hybrid_load_balance", "hybrid_communication_efficiency")
			product(t, r, "hybrid_parallel_efficiency", "mpi_parallel_efficiency", "omp_parallel_efficiency")
			product(t, r, "mpi_parallel_efficiency", "mpi_load_balance", "mpi_communication_efficiency")
			product(t, r, "omp_parallel_efficiency", "omp_load_balance", "omp_communication_efficiency")
			product(t, r, "hybrid_load_balance", "mpi_load_balance", "omp_load_balance")
		})
	}
}

func TestPOPAdditive(t *testing.T) {
	tests := []struct {
		name   string
		m      *measure.Measurement
		want   want
		absent []string
		nm     map[string]string
	}{
		{
			// Tt = 4, Avg(U) = 6.75, Avg(OMP) = 6.5, Avg(SerialUseful) = 1.5,
			// Avg(NonMPI) = 8, max NonMPI = 9, ΣParallelUseful/Tt = 6,
			// Σ SerialUseful·(t−1)/Tt = 0.75.
			name: "2 processes × 2 threads",
			m:    buildThreads(true, llvm, twoByTwo...),
			want: want{
				"parallel_efficiency": 0.675, "process_efficiency": 0.8, "mpi_load_balance": 0.9, "mpi_communication_efficiency": 0.9,
				"thread_efficiency": 0.875, "omp_region_efficiency": 0.95, "serial_region_efficiency": 0.925,
			},
			nm: map[string]string{"serialisation_efficiency": pop.ReasonIdealNetwork, "transfer_efficiency": pop.ReasonIdealNetwork},
		},
		{
			// Tt = 5, Avg(U) = 2.8, Avg(OMP) = 12/5, Avg(SerialUseful) =
			// (4·0.5 + 3)/5 = 1, Avg(NonMPI) = (4·3.5 + 3)/5 = 3.4,
			// ΣParallelUseful/Tt = 2.1, Σ SerialUseful·(t−1)/Tt = 0.3.
			name: "uneven threads, 1-CPU fallbacks",
			m:    buildThreads(true, llvm, uneven...),
			want: want{
				"parallel_efficiency": 0.7, "process_efficiency": 0.85, "mpi_load_balance": 0.975, "mpi_communication_efficiency": 0.875,
				"thread_efficiency": 0.85, "omp_region_efficiency": 0.925, "serial_region_efficiency": 0.925,
			},
		},
		{
			name: "pure MPI",
			m:    buildThreads(true, nil, pureMPI...),
			want: want{
				"parallel_efficiency": 0.625, "process_efficiency": 0.625, "mpi_load_balance": 0.625, "mpi_communication_efficiency": 1,
				"thread_efficiency": 1, "omp_region_efficiency": 1, "serial_region_efficiency": 1,
			},
		},
		{
			// Avg(OMP) = 4.6, Avg(SerialUseful) = 0.4, Avg(U) = 4.25,
			// ΣParallelUseful/Tt = 4.2, 0.4·7/8 = 0.35 idle.
			name: "OpenMP without MPI",
			m:    buildThreads(false, llvm, openMPOnly...),
			want: want{
				"parallel_efficiency": 0.85, "process_efficiency": 1, "thread_efficiency": 0.85,
				"omp_region_efficiency": 0.92, "serial_region_efficiency": 0.93,
			},
			absent: []string{"mpi_load_balance", "mpi_communication_efficiency", "serialisation_efficiency", "transfer_efficiency"},
		},
		{
			// primary_serial_useful_ns omitted: derived as useful − parallel
			// useful (9 − 8 = 1 s), which matches the writer's value.
			name: "serial useful derived",
			m: buildThreads(true, llvm,
				tproc{cpus: 2, e: 5, u: 9, m: 0.5, pu: 5, pm: 0.5, pp: 3.5, par: 8, tum: 5},
				tproc{cpus: 2, e: 5, u: 9, m: 0.5, pu: 5, pm: 0.5, pp: 3.5, psu: 1, par: 8, tum: 5}),
			want: want{"parallel_efficiency": 0.9, "process_efficiency": 0.9, "mpi_load_balance": 1, "mpi_communication_efficiency": 0.9,
				"thread_efficiency": 1, "omp_region_efficiency": 1 - (3.5-4)/5, "serial_region_efficiency": 0.9},
		},
		{
			// One thread per process: the thread side is 1 without OMPT.
			name: "OpenMP not measured, one thread per process",
			m:    buildThreads(true, libgomp1, tproc{cpus: 1, e: 3, u: 2.4, m: 0.6}, tproc{cpus: 1, e: 3, u: 1.8, m: 1.2}),
			want: want{"parallel_efficiency": 0.7, "process_efficiency": 0.7, "mpi_load_balance": 0.9, "mpi_communication_efficiency": 0.8,
				"thread_efficiency": 1, "omp_region_efficiency": 1, "serial_region_efficiency": 1},
		},
		{
			name: "OpenMP not measured",
			m:    buildThreads(true, libgomp, tproc{cpus: 1, e: 3, u: 2.4, m: 0.6}, tproc{cpus: 1, e: 3, u: 1.8, m: 1.2}),
			want: want{"mpi_load_balance": 0.9, "mpi_communication_efficiency": 0.8},
			nm: map[string]string{
				"parallel_efficiency": libgompReason, "process_efficiency": libgompReason, "thread_efficiency": libgompReason,
				"omp_region_efficiency": libgompReason, "serial_region_efficiency": libgompReason,
				"serialisation_efficiency": pop.ReasonIdealNetwork, "transfer_efficiency": pop.ReasonIdealNetwork,
			},
		},
		{
			name: "no per-thread accounts",
			m:    buildThreads(true, llvm, tproc{cpus: 4, e: 1, u: 3, m: 0.25}, tproc{cpus: 1, e: 1, u: 1}),
			nm:   allNotMeasured(pop.ModelPOPAdditive, "lacks the per-thread accounts"),
		},
		{
			name:   "zero-time region",
			m:      buildThreads(true, llvm, tproc{cpus: 2}),
			absent: []string{"parallel_efficiency", "process_efficiency", "serialisation_efficiency", "transfer_efficiency"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := computeOne(t, tt.m, pop.ModelPOPAdditive)
			checkModel(t, r, tt.want, tt.absent, tt.nm)
			checkAdditive(t, r, 1e-9)
		})
	}
}

// checkAdditive asserts the additive identities of POP-METRICS.md §4
// wherever the metrics are present: a parent's inefficiency is the sum of
// its children's.
func checkAdditive(t *testing.T, r *pop.RegionReport, tol float64) {
	t.Helper()
	sum := func(parent string, children ...string) {
		p, ok := r.Value(parent)
		if !ok {
			return
		}
		loss := 0.0
		for _, c := range children {
			v, ok := r.Value(c)
			if !ok {
				return
			}
			loss += 1 - v
		}
		if math.Abs((1-p)-loss) > tol {
			t.Errorf("1 − %s = %.9f but the children %v lose %.9f", parent, 1-p, children, loss)
		}
	}
	sum("parallel_efficiency", "process_efficiency", "thread_efficiency")
	sum("process_efficiency", "mpi_load_balance", "mpi_communication_efficiency")
	sum("thread_efficiency", "omp_region_efficiency", "serial_region_efficiency")
}

// TestPOPAdditiveIdentities checks the additive identities on random runs
// that follow the measurement's OpenMP accounting: per process a serial
// phase (primary useful, workers idle), MPI outside parallel regions, and
// parallel regions with random per-thread useful times.
func TestPOPAdditiveIdentities(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for run := 0; run < 200; run++ {
		var procs []tproc
		for i := 0; i < 1+rng.Intn(6); i++ {
			threads := 1 + rng.Intn(8)
			serial, mpi, par := rng.Float64(), rng.Float64(), 4*rng.Float64()
			p := tproc{cpus: threads, e: serial + mpi + par, m: mpi, pm: mpi, pp: par, psu: serial}
			for j := 0; j < threads; j++ {
				u := par * rng.Float64()
				if j == 0 {
					p.pu = serial + u
					p.tum = p.pu
				}
				p.par += u
				p.tum = max(p.tum, u)
			}
			p.u = serial + p.par
			procs = append(procs, p)
		}
		r := computeOne(t, buildThreads(true, llvm, procs...), pop.ModelPOPAdditive)
		checkAdditive(t, r, 1e-6) // ns rounding of the inputs
		if t.Failed() {
			t.Fatalf("run %d: %+v", run, procs)
		}
		h := computeOne(t, buildThreads(true, llvm, procs...), pop.ModelPOPHybrid)
		product(t, h, "hybrid_parallel_efficiency", "mpi_parallel_efficiency", "omp_parallel_efficiency")
		// All three models agree on parallel efficiency = mean useful / R
		// when every CPU's time is accounted (talp: U / (C·T) with all
		// processes lasting T).
		a, _ := r.Value("parallel_efficiency")
		hp, _ := h.Value("hybrid_parallel_efficiency")
		if math.Abs(a-hp) > 1e-12 {
			t.Fatalf("run %d: additive PE %v ≠ hybrid PE %v", run, a, hp)
		}
	}
}

// allNotMeasured maps every efficiency of model to reason (the ideal-network
// ones of pop-additive keep their own).
func allNotMeasured(model pop.Model, reason string) map[string]string {
	ids := map[pop.Model][]string{
		pop.ModelPOPHybrid: {"hybrid_parallel_efficiency", "hybrid_load_balance", "hybrid_communication_efficiency",
			"mpi_parallel_efficiency", "mpi_load_balance", "mpi_communication_efficiency",
			"omp_parallel_efficiency", "omp_load_balance", "omp_communication_efficiency"},
		pop.ModelPOPAdditive: {"parallel_efficiency", "process_efficiency", "mpi_load_balance", "mpi_communication_efficiency",
			"thread_efficiency", "omp_region_efficiency", "serial_region_efficiency"},
	}
	nm := map[string]string{"serialisation_efficiency": pop.ReasonIdealNetwork, "transfer_efficiency": pop.ReasonIdealNetwork}
	if model != pop.ModelPOPAdditive {
		nm = map[string]string{}
	}
	for _, id := range ids[model] {
		nm[id] = reason
	}
	return nm
}

func computeOne(t *testing.T, m *measure.Measurement, model pop.Model) *pop.RegionReport {
	t.Helper()
	rep, err := pop.Compute(m, model)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Model != model || len(rep.Regions) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	return &rep.Regions[0]
}

// checkModel checks values, absent metrics and not-measured metrics (the
// reason must contain the given text), and the tree invariants.
func checkModel(t *testing.T, r *pop.RegionReport, w want, absent []string, nm map[string]string) {
	t.Helper()
	for id, v := range w {
		got, ok := r.Value(id)
		if !ok {
			t.Errorf("%s absent, want %.9f", id, v)
		} else if math.Abs(got-v) > tol {
			t.Errorf("%s = %.9f, want %.9f", id, got, v)
		}
	}
	for _, id := range absent {
		if x, ok := r.Metric(id); ok {
			t.Errorf("%s = %+v, want absent", id, x)
		}
	}
	for id, reason := range nm {
		x, ok := r.Metric(id)
		if !ok || x.Measured() || !strings.Contains(x.NotMeasured, reason) {
			t.Errorf("%s = %+v (%v), want not measured: %q", id, x, ok, reason)
		}
		if v, ok := r.Value(id); ok {
			t.Errorf("Value(%s) = %v for a metric not measured", id, v)
		}
	}
	for _, x := range r.Metrics {
		if !x.Measured() && nm[x.ID] == "" && x.NotMeasured != pop.ReasonIdealNetwork {
			t.Errorf("%s unexpectedly not measured: %s", x.ID, x.NotMeasured)
		}
		if !x.Measured() && x.Value != 0 {
			t.Errorf("%s not measured but has value %v", x.ID, x.Value)
		}
	}
	checkInvariants(t, r)
}

// product asserts whole = Π parts where all are present.
func product(t *testing.T, r *pop.RegionReport, whole string, parts ...string) {
	t.Helper()
	w, ok := r.Value(whole)
	if !ok {
		return
	}
	p := 1.0
	for _, id := range parts {
		x, ok := r.Value(id)
		if !ok {
			return
		}
		p *= x
	}
	if math.Abs(w-p) > 1e-9 {
		t.Errorf("%s = %.9f but the product of %v = %.9f", whole, w, parts, p)
	}
}

func TestModelTrees(t *testing.T) {
	m := buildThreads(true, llvm, twoByTwo...)
	m.Resources.HardwareCounters = true
	m.Regions[0].Processes[0].Cycles = 3 * s
	m.Regions[0].Processes[0].Instructions = 6 * s
	tests := []struct {
		model pop.Model
		want  []string
	}{
		{pop.ModelPOPHybrid, []string{
			"hybrid_parallel_efficiency<>",
			".hybrid_load_balance<hybrid_parallel_efficiency>",
			".hybrid_communication_efficiency<hybrid_parallel_efficiency>",
			".mpi_parallel_efficiency<hybrid_parallel_efficiency>",
			"..mpi_load_balance<mpi_parallel_efficiency>",
			"..mpi_communication_efficiency<mpi_parallel_efficiency>",
			".omp_parallel_efficiency<hybrid_parallel_efficiency>",
			"..omp_load_balance<omp_parallel_efficiency>",
			"..omp_communication_efficiency<omp_parallel_efficiency>",
			"ipc<>", "frequency_ghz<>", "instructions<>", "cycles<>",
		}},
		{pop.ModelPOPAdditive, []string{
			"parallel_efficiency<>",
			".process_efficiency<parallel_efficiency>",
			"..mpi_load_balance<process_efficiency>",
			"..mpi_communication_efficiency<process_efficiency>",
			"...serialisation_efficiency<mpi_communication_efficiency>?",
			"...transfer_efficiency<mpi_communication_efficiency>?",
			".thread_efficiency<parallel_efficiency>",
			"..omp_region_efficiency<thread_efficiency>",
			"..serial_region_efficiency<thread_efficiency>",
			"ipc<>", "frequency_ghz<>", "instructions<>", "cycles<>",
		}},
	}
	for _, tt := range tests {
		rep, err := pop.Compute(m, tt.model)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range rep.Regions[0].Metrics {
			line := strings.Repeat(".", x.Depth) + x.ID + "<" + x.Parent + ">"
			if !x.Measured() {
				line += "?"
			}
			got = append(got, line)
			if x.Name == "" {
				t.Errorf("%s %s has no name", tt.model, x.ID)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s tree:\n%s\nwant:\n%s", tt.model, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		if v, ok := rep.Regions[0].Value("ipc"); !ok || v != 2 {
			t.Errorf("%s ipc = %v, %v", tt.model, v, ok)
		}
		if rep.Regions[0].Totals.UsefulNS != 27*s || rep.Regions[0].CPUs != 4 || rep.Regions[0].ElapsedNS != 10*s {
			t.Errorf("%s region sizes = %+v", tt.model, rep.Regions[0])
		}
	}
}

// TestTALPOpenMPBranch checks that the file's "openmp" object decides the
// OpenMP branch of model talp.
func TestTALPOpenMPBranch(t *testing.T) {
	oneCPU := []tproc{{cpus: 1, e: 2, u: 1.5, m: 0.5}, {cpus: 1, e: 2, u: 2}}
	tests := []struct {
		name   string
		omp    *measure.OpenMP
		procs  []tproc
		want   want
		nm     map[string]string
		absent []string
	}{
		{"OMPT measured, no idle time: branch shown", llvm, oneCPU,
			want{"omp_parallel_efficiency": 1, "omp_serialization_efficiency": 1, "omp_load_balance": 1, "omp_scheduling_efficiency": 1}, nil, nil},
		{"no OpenMP runtime: branch absent", nil, oneCPU, want{"parallel_efficiency": 3.5 / 4}, nil,
			[]string{"omp_parallel_efficiency", "omp_load_balance"}},
		{"OMPT not active: not measured, with the reason", libgomp, oneCPU, want{"parallel_efficiency": 3.5 / 4},
			map[string]string{"omp_parallel_efficiency": libgompReason}, []string{"omp_serialization_efficiency", "omp_load_balance"}},
		{"OMPT not active, even with several CPUs", libgomp, []tproc{{cpus: 2, e: 1, u: 2, tum: 1}}, want{"parallel_efficiency": 1},
			map[string]string{"omp_parallel_efficiency": libgompReason}, []string{"omp_scheduling_efficiency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := computeOne(t, buildThreads(true, tt.omp, tt.procs...), pop.ModelTALP)
			checkModel(t, r, tt.want, tt.absent, tt.nm)
		})
	}
}

func TestParseModels(t *testing.T) {
	tests := []struct {
		in   string
		want []pop.Model
		err  string
	}{
		{"", []pop.Model{pop.ModelTALP}, ""},
		{"pop-hybrid", []pop.Model{pop.ModelPOPHybrid}, ""},
		{"POP-Additive", []pop.Model{pop.ModelPOPAdditive}, ""},
		{"all", []pop.Model{pop.ModelTALP, pop.ModelPOPHybrid, pop.ModelPOPAdditive}, ""},
		{"ALL", []pop.Model{pop.ModelTALP, pop.ModelPOPHybrid, pop.ModelPOPAdditive}, ""},
		{"pop", nil, `unknown metric model "pop": use one of talp, pop-hybrid, pop-additive, all`},
	}
	for _, tt := range tests {
		got, err := pop.ParseModels(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseModels(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseModels(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if _, err := pop.ParseModel("all"); err == nil {
		t.Error(`ParseModel("all") succeeded: "all" is not one model`)
	}
	if _, err := pop.Compute(buildThreads(true, nil, pureMPI...), "all"); err == nil || !strings.Contains(err.Error(), "use one of talp, pop-hybrid, pop-additive") {
		t.Errorf(`Compute(all) err = %v`, err)
	}
	for _, model := range pop.Models() {
		if model.Description() == "" {
			t.Errorf("%s has no description", model)
		}
	}
}

func TestComputeAll(t *testing.T) {
	m := buildThreads(true, llvm, twoByTwo...)
	reps, err := pop.ComputeAll(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != len(pop.Models()) {
		t.Fatalf("%d reports", len(reps))
	}
	for i, rep := range reps {
		want, err := pop.Compute(m, pop.Models()[i])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep, want) {
			t.Errorf("ComputeAll[%d] differs from Compute(%s)", i, want.Model)
		}
	}
	if _, err := pop.ComputeAll(nil); err == nil {
		t.Error("ComputeAll(nil) succeeded")
	}
}

// TestModelsOnTestdata checks the hybrid models on the testdata files,
// whose per-thread accounts follow the OpenMP accounting.
func TestModelsOnTestdata(t *testing.T) {
	tests := []struct {
		file, region string
		model        pop.Model
		want         want
	}{
		{"hybrid_2nodes.json", "Global", pop.ModelPOPHybrid, want{"hybrid_parallel_efficiency": 0.775, "mpi_parallel_efficiency": 0.825, "omp_parallel_efficiency": 0.775 / 0.825}},
		{"hybrid_2nodes.json", "Global", pop.ModelPOPAdditive, want{"parallel_efficiency": 0.775, "process_efficiency": 0.825, "thread_efficiency": 0.95,
			"omp_region_efficiency": 0.98, "serial_region_efficiency": 0.97, "mpi_load_balance": 0.925, "mpi_communication_efficiency": 0.9}},
		{"openmp_only.json", "Global", pop.ModelPOPAdditive, want{"parallel_efficiency": 0.85, "thread_efficiency": 0.85, "omp_region_efficiency": 0.92}},
		{"mpi_imbalance.json", "Global", pop.ModelPOPHybrid, want{"hybrid_load_balance": 0.625, "omp_load_balance": 1}},
		{"hybrid_libgomp.json", "Global", pop.ModelPOPHybrid, want{"mpi_load_balance": 0.875}},
	}
	for _, tt := range tests {
		m, err := measure.ReadFile("../measure/testdata/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := pop.Compute(m, tt.model)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Regions {
			checkInvariants(t, &r)
			if tt.model == pop.ModelPOPAdditive {
				checkAdditive(t, &r, 1e-6)
			}
		}
		r, _ := rep.Region(tt.region)
		for id, w := range tt.want {
			if got, ok := r.Value(id); !ok || math.Abs(got-w) > 1e-6 {
				t.Errorf("%s %s %s: %s = %v (%v), want %v", tt.file, tt.region, tt.model, id, got, ok, w)
			}
		}
	}
}
