package pop

import "github.com/popmon/popmon/measure"

// Metric ids of model pop-additive (POP-METRICS.md §9) besides those it
// shares with talp (parallel_efficiency, mpi_load_balance,
// mpi_communication_efficiency), which in pop-additive have the meanings of
// POP-METRICS.md §4.
const (
	IDProcessEfficiency       = "process_efficiency"
	IDThreadEfficiency        = "thread_efficiency"
	IDOMPRegionEfficiency     = "omp_region_efficiency"
	IDSerialRegionEfficiency  = "serial_region_efficiency"
	IDSerialisationEfficiency = "serialisation_efficiency"
	IDTransferEfficiency      = "transfer_efficiency"
)

// ReasonIdealNetwork is why serialisation_efficiency and transfer_efficiency
// are not measured: splitting communication into transfer and
// serialisation needs a replay of the run on an ideal network.
const ReasonIdealNetwork = "needs a trace: measure with popmon run --trace, or report a Paraver trace"

// computeAdditive implements model pop-additive, POP-METRICS.md §4.
func computeAdditive(m *measure.Measurement, opt Options) *Report {
	rep := computeModel(m, ModelPOPAdditive, opt, additiveTree)
	if m.IdealNetwork != nil && m.MPI != nil {
		rep.SerTransfer = opt.SerTransfer
		if rep.SerTransfer == "" {
			rep.SerTransfer = SerTransferBSC
		}
	}
	return rep
}

// additiveTree builds the pop-additive tree. With t_i the threads of
// process i, Tt = Σ t_i, Avg(X) = Σ_i t_i·X_i / Tt for a quantity X of the
// primary threads, and OMP_i the primary's time inside parallel regions:
//
//	parallel_efficiency         = (ΣU/Tt) / R
//	  process_efficiency        = Avg(OMP + SerialUseful) / R
//	    mpi_load_balance        = 1 − (max NonMPI − Avg(NonMPI)) / R
//	    mpi_communication_eff.  = max NonMPI / R
//	      serialisation_eff.    from the ideal-network replay (Global only;
//	      transfer_efficiency   see SerTransfer), else not measured (ReasonIdealNetwork)
//	  thread_efficiency         = 1 − (Avg(OMP) + Avg(SerialUseful) − ΣU/Tt) / R
//	    omp_region_efficiency   = 1 − (Avg(OMP) − ΣParallelUseful/Tt) / R
//	    serial_region_eff.      = 1 − (Σ SerialUseful_i·(t_i − 1) / Tt) / R
//
// So 1 − parallel = (1 − process) + (1 − thread) exactly, and
// 1 − thread = (1 − omp_region) + (1 − serial_region) whenever
// U_i = ParallelUseful_i + SerialUseful_i (only the primary thread works
// outside parallel regions, as the OpenMP accounting of the measurement
// guarantees). 1 − process = (1 − load balance) + (1 − communication) when
// NonMPI_i = OMP_i + SerialUseful_i, i.e. when the primary thread is not in
// MPI inside parallel regions and has no other non-useful serial time.
// Avg(NonMPI) is thread-weighted like the other averages, which is PyPOP's
// plain mean when every process has the same number of threads. The MPI
// branch is absent without MPI.
func additiveTree(b *builder, in threadInputs, mf modelFeatures, all, threads string) {
	meanU := in.useful / in.tt
	avgOMP := in.omp / in.tt
	avgSerial := in.serial / in.tt
	avgNonMPI := in.nonMPIWeighted / in.tt
	b.addOr(IDParallelEfficiency, "Parallel efficiency", "", KindEfficiency, threads)(ratio(meanU, in.r))
	b.addOr(IDProcessEfficiency, "Process efficiency", IDParallelEfficiency, KindEfficiency, threads)(ratio(avgOMP+avgSerial, in.r))
	if mf.mpi {
		b.addOr(IDMPILoadBalance, "Load Balance", IDProcessEfficiency, KindEfficiency, all)(oneMinus(in.nonMPIMax-avgNonMPI, in.r))
		b.addOr(IDMPICommunicationEfficiency, "Communication efficiency", IDProcessEfficiency, KindEfficiency, all)(ratio(in.nonMPIMax, in.r))
		why := all
		switch {
		case mf.ideal == nil:
			why = ReasonIdealNetwork
		case why != "":
		case !mf.global:
			why = ReasonReplayGlobal
		}
		ser, trans, ok := 0.0, 0.0, false
		if commE, commOK := ratio(in.nonMPIMax, in.r); why == "" && commOK {
			ser, trans, ok = serTransfer(mf.serTransfer, mf.ideal, in.r, in.nonMPIMax, commE)
		}
		b.addOr(IDSerialisationEfficiency, "Serialisation efficiency", IDMPICommunicationEfficiency, KindEfficiency, why)(ser, ok)
		b.addOr(IDTransferEfficiency, "Transfer efficiency", IDMPICommunicationEfficiency, KindEfficiency, why)(trans, ok)
	}
	b.addOr(IDThreadEfficiency, "Thread efficiency", IDParallelEfficiency, KindEfficiency, threads)(oneMinus(avgOMP+avgSerial-meanU, in.r))
	b.addOr(IDOMPRegionEfficiency, "OpenMP region efficiency", IDThreadEfficiency, KindEfficiency, threads)(oneMinus(avgOMP-in.ompUseful/in.tt, in.r))
	b.addOr(IDSerialRegionEfficiency, "Serial region efficiency", IDThreadEfficiency, KindEfficiency, threads)(oneMinus(in.serialIdle/in.tt, in.r))
}
