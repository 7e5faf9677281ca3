package pop

import (
	"math"

	"github.com/popmon/popmon/measure"
)

// Metric ids of model pop-hybrid (POP-METRICS.md §9) besides those it shares
// with talp (mpi_parallel_efficiency, mpi_load_balance,
// mpi_communication_efficiency, omp_parallel_efficiency, omp_load_balance),
// which in pop-hybrid have the meanings of POP-METRICS.md §3.
const (
	IDHybridParallelEfficiency      = "hybrid_parallel_efficiency"
	IDHybridLoadBalance             = "hybrid_load_balance"
	IDHybridCommunicationEfficiency = "hybrid_communication_efficiency"
	IDOMPCommunicationEfficiency    = "omp_communication_efficiency"
)

// reasonNoThreadAccounts is why the hybrid models have no metrics for a
// region of a file written without the per-thread accounts.
const reasonNoThreadAccounts = "the measurement lacks the per-thread accounts (thread_useful_max_ns, primary_*_ns) of processes with several CPUs: measure again with a current libpopmon"

// reasonTALPSums is why the hybrid models have no metrics for a region
// of a measurement converted from DLB/TALP JSON whose per-process times
// the conversion could not derive: TALP writes sums over processes and
// threads, and these models need each process's and each primary
// thread's own times. internal/talpjson derives them only for one CPU per
// process, with DLB's per-process MPI minimum, when the sums fit equal
// elapsed times (docs/import.md); it marks such processes with
// thread_useful_max_ns = useful_ns.
const reasonTALPSums = "DLB/TALP JSON holds sums over all processes and threads, not each process's and primary thread's times (popmon derives them only for one CPU per process, with DLB's MPI minima, when every process spent the region's whole elapsed time in it): use model talp, or measure with popmon run"

// threadInputs are the inputs of the hybrid models (POP-METRICS.md §3, §4)
// for one region, over the processes that visited it. Process i has
// t_i = cpus_i threads; "primary" quantities are those of its primary
// thread (see measure.ProcessAccounts' accessors for absent keys).
type threadInputs struct {
	procs int     // processes that visited the region
	tt    float64 // Tt = Σ t_i
	r     float64 // R = T = max E_i

	useful    float64 // Σ U_i, all threads
	maxUseful float64 // max over all threads of U: max_i ThreadUsefulMax_i

	nonMPISum, nonMPIMax float64 // Σ_i and max_i of NonMPI_i = E_i − PrimaryMPI_i
	nonMPIWeighted       float64 // Σ t_i·NonMPI_i

	omp        float64 // Σ t_i·OMP_i, OMP_i = PrimaryParallel_i
	serial     float64 // Σ t_i·SerialUseful_i, SerialUseful_i = PrimarySerialUseful_i
	serialIdle float64 // Σ SerialUseful_i·(t_i − 1): workers idle while the primary computes serially
	ompUseful  float64 // Σ ParallelUseful_i, all threads

	// noAccounts says that some process lacks the per-thread accounts:
	// no hybrid metric can be computed.
	noAccounts bool
	// oneCPU says that every process has one CPU: with one thread per
	// process (no OpenMP runtime, or max_threads 1), the OpenMP factors
	// are 1 whether or not the runtime was measured. (An unmeasured
	// runtime with more threads leaves 1 CPU per process in the file: the
	// workers were not seen.)
	oneCPU bool
	// talpDerived says that every process is marked as having per-process
	// times derived by internal/talpjson (see reasonTALPSums).
	talpDerived bool
}

// hybridInputs sums the inputs of the hybrid models over the processes of g.
func hybridInputs(a measure.RegionSummary) threadInputs {
	return threadInputs{
		procs:          a.Processes,
		tt:             float64(a.CPUs),
		r:              float64(a.ElapsedMaxNS),
		useful:         float64(a.Sum.UsefulNS),
		maxUseful:      float64(a.ThreadUsefulMaxNS),
		nonMPISum:      a.NonMPISumNS,
		nonMPIMax:      a.NonMPIMaxNS,
		nonMPIWeighted: a.NonMPIWeightedNS,
		omp:            a.ParallelWeightedNS,
		serial:         a.SerialWeightedNS,
		serialIdle:     a.SerialIdleNS,
		ompUseful:      float64(a.Sum.ParallelUsefulNS),
		noAccounts:     a.WithoutThreadAccounts > 0,
		oneCPU:         a.MultiCPU == 0,
		talpDerived:    a.TALPDerived == a.Processes && a.WithThreadUseful > 0,
	}
}

// modelFeatures are the file-wide facts the hybrid models depend on.
type modelFeatures struct {
	mpi bool
	// ompNotMeasured is why the OpenMP side was not measured (the file's
	// "openmp" object says OMPT was not active); "" otherwise.
	ompNotMeasured string
	// ideal is the ideal-network replay of the whole run (nil without
	// one); global says the region is Global, the one it covers.
	ideal  *measure.IdealNetwork
	global bool
	// serTransfer is the definition of serialisation and transfer.
	serTransfer SerTransfer
}

// computeModel computes a report with the region trees of fn, which gets
// the region's inputs and the reasons why all metrics (all) or the metrics
// that need OpenMP measurements (threads) are not measured ("" when they
// are). Region sizes, totals and the computational metrics are those of
// model talp.
func computeModel(m *measure.Measurement, model Model, opt Options, fn func(b *builder, in threadInputs, mf modelFeatures, all, threads string)) *Report {
	talp := computeTALP(m)
	mf := modelFeatures{mpi: m.MPI != nil, ompNotMeasured: m.OpenMP.NotMeasured(), ideal: m.IdealNetwork, serTransfer: opt.SerTransfer}
	if mf.serTransfer == "" {
		mf.serTransfer = SerTransferBSC
	}
	rep := &Report{Model: model, Regions: talp.Regions}
	nodeOf := m.NodeOf()
	for i := range rep.Regions {
		r := &rep.Regions[i]
		b := &builder{}
		if r.Processes > 0 && r.ElapsedNS > 0 { // else no time: no efficiencies, as in talp
			in := hybridInputs(m.Regions[i].Aggregates(nodeOf))
			all, threads := "", mf.ompNotMeasured
			if in.oneCPU && (m.OpenMP == nil || m.OpenMP.MaxThreads <= 1) {
				threads = "" // no worker threads: the OpenMP factors are 1
			}
			switch {
			case m.Source != nil && m.Source.Kind == measure.SourceTALP && !in.talpDerived:
				all, threads = reasonTALPSums, reasonTALPSums
			case in.noAccounts:
				all, threads = reasonNoThreadAccounts, reasonNoThreadAccounts
			}
			rmf := mf
			rmf.global = r.Name == measure.GlobalRegion
			fn(b, in, rmf, all, threads)
		}
		for _, x := range r.Metrics {
			if x.Parent == "" && x.Kind != KindEfficiency {
				b.put(x) // ipc, frequency_ghz, instructions, cycles
			}
		}
		r.Metrics = b.metrics
	}
	return rep
}

// computeHybrid implements model pop-hybrid, POP-METRICS.md §3.
func computeHybrid(m *measure.Measurement) *Report {
	return computeModel(m, ModelPOPHybrid, Options{}, hybridTree)
}

// hybridTree builds the pop-hybrid tree:
//
//	hybrid_parallel_efficiency      = mean(U)/R           (mean over all threads)
//	  hybrid_load_balance           = mean(U)/max(U)      (max over all threads)
//	  hybrid_communication_eff.     = max(U)/R
//	  mpi_parallel_efficiency       = mean(NonMPI)/R      (mean over processes)
//	    mpi_load_balance            = mean(NonMPI)/max(NonMPI)
//	    mpi_communication_eff.      = max(NonMPI)/R
//	  omp_parallel_efficiency       = hybrid PE / MPI PE
//	    omp_load_balance            = hybrid LB / MPI LB
//	    omp_communication_eff.      = hybrid CommE / MPI CommE
//
// The MPI branch is absent without MPI; the OpenMP quotients use the MPI
// efficiencies even then (they are 1 for a single process that never waits
// for MPI), and are reported (as ≈ 1) for runs without OpenMP too.
func hybridTree(b *builder, in threadInputs, mf modelFeatures, all, threads string) {
	meanU := in.useful / in.tt
	meanN := in.nonMPISum / float64(in.procs)
	type pair struct {
		v  float64
		ok bool
	}
	p := func(v float64, ok bool) pair { return pair{v, ok} }
	hPE, hLB, hCE := p(ratio(meanU, in.r)), p(ratio(meanU, in.maxUseful)), p(ratio(in.maxUseful, in.r))
	mPE, mLB, mCE := p(ratio(meanN, in.r)), p(ratio(meanN, in.nonMPIMax)), p(ratio(in.nonMPIMax, in.r))
	quot := func(h, m pair) (float64, bool) {
		if !h.ok || !m.ok {
			return 0, false
		}
		return ratio(h.v, m.v)
	}
	b.addOr(IDHybridParallelEfficiency, "Hybrid Parallel efficiency", "", KindEfficiency, threads)(hPE.v, hPE.ok)
	b.addOr(IDHybridLoadBalance, "Load Balance", IDHybridParallelEfficiency, KindEfficiency, threads)(hLB.v, hLB.ok)
	b.addOr(IDHybridCommunicationEfficiency, "Communication efficiency", IDHybridParallelEfficiency, KindEfficiency, threads)(hCE.v, hCE.ok)
	if mf.mpi {
		b.addOr(IDMPIParallelEfficiency, "MPI Parallel efficiency", IDHybridParallelEfficiency, KindEfficiency, all)(mPE.v, mPE.ok)
		b.addOr(IDMPILoadBalance, "Load Balance", IDMPIParallelEfficiency, KindEfficiency, all)(mLB.v, mLB.ok)
		b.addOr(IDMPICommunicationEfficiency, "Communication efficiency", IDMPIParallelEfficiency, KindEfficiency, all)(mCE.v, mCE.ok)
	}
	b.addOr(IDOMPParallelEfficiency, "OpenMP Parallel efficiency", IDHybridParallelEfficiency, KindEfficiency, threads)(quot(hPE, mPE))
	b.addOr(IDOMPLoadBalance, "Load Balance", IDOMPParallelEfficiency, KindEfficiency, threads)(quot(hLB, mLB))
	b.addOr(IDOMPCommunicationEfficiency, "Communication efficiency", IDOMPParallelEfficiency, KindEfficiency, threads)(quot(hCE, mCE))
}

// oneMinus returns 1 − num/den, false when den is not positive.
func oneMinus(num, den float64) (float64, bool) {
	v, ok := ratio(num, den)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return 1 - v, true
}
