package pop

import (
	"math"

	"github.com/popmon/popmon/measure"
)

// Metric ids of model talp (POP-METRICS.md §9).
const (
	IDParallelEfficiency         = "parallel_efficiency"
	IDMPIParallelEfficiency      = "mpi_parallel_efficiency"
	IDMPICommunicationEfficiency = "mpi_communication_efficiency"
	IDMPILoadBalance             = "mpi_load_balance"
	IDMPILoadBalanceIn           = "mpi_load_balance_in"
	IDMPILoadBalanceOut          = "mpi_load_balance_out"
	IDOMPParallelEfficiency      = "omp_parallel_efficiency"
	IDOMPSerializationEfficiency = "omp_serialization_efficiency"
	IDOMPLoadBalance             = "omp_load_balance"
	IDOMPSchedulingEfficiency    = "omp_scheduling_efficiency"
	IDDeviceOffloadEfficiency    = "device_offload_efficiency"
	IDGPUParallelEfficiency      = "gpu_parallel_efficiency"
	IDGPULoadBalance             = "gpu_load_balance"
	IDGPUCommunicationEfficiency = "gpu_communication_efficiency"
	IDGPUOrchestrationEfficiency = "gpu_orchestration_efficiency"
)

// Metric ids of the computational metrics, computed by every model when the
// measurement has hardware counters.
const (
	IDIPC          = "ipc"
	IDFrequencyGHz = "frequency_ghz"
	IDInstructions = "instructions"
	IDCycles       = "cycles"
)

// features says which programming models a measurement shows. They are
// decided once per file, so that every region of a run has the same tree.
type features struct {
	mpi, openmp, gpu, counters bool
	// devices is the number of GPU devices with per-device accounts
	// (len(gpu_devices)); 0: no device tree. gpuDevices are they.
	devices    int
	gpuDevices []measure.GPUDevice
	// ompNotMeasured is why OpenMP was not measured although the program
	// used an OpenMP runtime ("" when it was measured or not used).
	ompNotMeasured string
}

// detect decides the features of m. OpenMP is measured when the file's
// "openmp" object says OMPT was active, even if every OpenMP idle time is
// 0, and not measured when it says OMPT was not. A file without the object
// (older libpopmon, or no OpenMP runtime) shows OpenMP when a process has
// several CPUs or any OpenMP time or count.
func detect(m *measure.Measurement) features {
	f := features{
		mpi:      m.MPI != nil,
		gpu:      m.Resources.GPUs > 0 || len(m.GPUDevices) > 0,
		counters: m.Resources.HardwareCounters,
		devices:  len(m.GPUDevices),

		gpuDevices: m.GPUDevices,
	}
	for _, p := range m.Processes {
		if p.CPUs > 1 {
			f.openmp = true
		}
	}
	nodeOf := m.NodeOf()
	for i := range m.Regions {
		a := m.Regions[i].Aggregates(nodeOf)
		u := &a.Sum
		if a.MaxCPUs > 1 || u.OMPSerializationNS > 0 || u.OMPLoadImbalanceNS > 0 ||
			u.OMPSchedulingNS > 0 || u.MPIWorkerIdleNS > 0 || u.OMPParallels > 0 {
			f.openmp = true
		}
		if u.GPURuntimeNS > 0 || u.GPURuntimeCalls > 0 {
			f.gpu = true
		}
	}
	if m.OpenMP != nil {
		f.openmp = m.OpenMP.Measured()
		f.ompNotMeasured = m.OpenMP.NotMeasured()
	}
	return f
}

// computeTALP implements model talp, POP-METRICS.md §2:
//
//	Iser         = omp_serialization_ns + mpi_worker_idle_ns (Mw)
//	active       = U + M + O + Iser + Ilb + Isch + G
//	active_nomp  = U + M + O + G
//	mpi_app      = (M + Mw + O) / C, minima per process and node likewise
//
// so that Mw is a loss of both branches, as DLB/TALP counts it after 3.7.0
// (DLB 3.6.2–3.7.0 count it twice; docs/metrics.md).
func computeTALP(m *measure.Measurement) *Report {
	f := detect(m)
	nodeOf := m.NodeOf()
	rep := &Report{Model: ModelTALP, Regions: make([]RegionReport, len(m.Regions))}
	for i := range m.Regions {
		rep.Regions[i] = talpRegion(&m.Regions[i], m.Regions[i].Aggregates(nodeOf), m.Resources.GPUs, f)
	}
	return rep
}

// sums are a region's sums over processes, as floats.
type sums struct {
	u, mpi, mw, iser, ilb, isch, g float64
	other                          float64 // O: charged with M (imported traces only)
}

// talpRegion computes model talp for region g from its aggregates a (the
// same from the full and the summary form).
func talpRegion(g *measure.Region, a measure.RegionSummary, gpus int, f features) RegionReport {
	r := RegionReport{Name: g.Name, GPUs: gpus}
	t := &r.Totals
	u := &a.Sum
	r.Processes = a.Processes
	r.CPUs = a.CPUs
	r.ElapsedNS = a.ElapsedMaxNS
	r.Nodes = a.Nodes
	t.Visits, t.UsefulNS, t.MPINS, t.MPIWorkerIdleNS = u.Visits, u.UsefulNS, u.MPINS, u.MPIWorkerIdleNS
	t.OMPSerializationNS, t.OMPLoadImbalanceNS, t.OMPSchedulingNS = u.OMPSerializationNS, u.OMPLoadImbalanceNS, u.OMPSchedulingNS
	t.GPURuntimeNS, t.OtherNS, t.MPICalls, t.OMPParallels = u.GPURuntimeNS, u.OtherNS, u.MPICalls, u.OMPParallels
	t.OMPTasks, t.GPURuntimeCalls, t.Cycles, t.Instructions = u.OMPTasks, u.GPURuntimeCalls, u.Cycles, u.Instructions
	s := sums{u: float64(u.UsefulNS), mpi: float64(u.MPINS), mw: float64(u.MPIWorkerIdleNS), other: float64(u.OtherNS),
		iser: float64(u.OMPSerializationNS), ilb: float64(u.OMPLoadImbalanceNS), isch: float64(u.OMPSchedulingNS),
		g: float64(u.GPURuntimeNS)}
	if r.Processes == 0 {
		return r // nobody visited the region: no metrics
	}
	minProc, minNode := a.MinMPIProcessNS, a.MinMPINodeNS
	T := float64(r.ElapsedNS)
	C := float64(r.CPUs)
	t.MPIAppNS = (s.mpi + s.mw + s.other) / C
	t.MinMPIProcNS = minProc
	t.MinMPINodeNS = minNode

	tree := &builder{}
	// POP-METRICS.md §2: workers idle while their primary is in MPI (Mw)
	// are OpenMP serialization for the OpenMP branch (the measurement
	// keeps them apart from omp_serialization_ns, so the model's Iser is
	// the sum) and MPI time for the MPI branch (mpi_app and the minima
	// above count M + Mw + O). Other time (imported traces only) is
	// charged like MPI time.
	iser := s.iser + s.mw
	active := s.u + s.mpi + s.other + s.ilb + s.isch + iser + s.g
	activeNoMP := s.u + s.mpi + s.other + s.g
	tree.add(IDParallelEfficiency, "Parallel efficiency", "", KindEfficiency)(ratio(s.u, active))

	if f.mpi && T > 0 {
		nonMPIApp := T - t.MPIAppNS
		nonMPIProc := T - minProc
		nonMPINode := T - minNode
		tree.add(IDMPIParallelEfficiency, "MPI Parallel efficiency", IDParallelEfficiency, KindEfficiency)(ratio(nonMPIApp, T))
		tree.add(IDMPICommunicationEfficiency, "Communication efficiency", IDMPIParallelEfficiency, KindEfficiency)(ratio(nonMPIProc, T))
		tree.add(IDMPILoadBalance, "Load Balance", IDMPIParallelEfficiency, KindEfficiency)(ratio(nonMPIApp, nonMPIProc))
		tree.add(IDMPILoadBalanceIn, "In", IDMPILoadBalance, KindEfficiency)(ratio(nonMPINode, nonMPIProc))
		tree.add(IDMPILoadBalanceOut, "Out", IDMPILoadBalance, KindEfficiency)(ratio(nonMPIApp, nonMPINode))
	}
	if f.ompNotMeasured != "" {
		tree.notMeasured(IDOMPParallelEfficiency, "OpenMP Parallel efficiency", IDParallelEfficiency, KindEfficiency, f.ompNotMeasured)
	}
	if f.openmp {
		tree.add(IDOMPParallelEfficiency, "OpenMP Parallel efficiency", IDParallelEfficiency, KindEfficiency)(ratio(activeNoMP, active))
		tree.add(IDOMPSerializationEfficiency, "Serialization efficiency", IDOMPParallelEfficiency, KindEfficiency)(ratio(activeNoMP, activeNoMP+iser))
		tree.add(IDOMPLoadBalance, "Load Balance", IDOMPParallelEfficiency, KindEfficiency)(ratio(activeNoMP+iser, activeNoMP+iser+s.ilb))
		tree.add(IDOMPSchedulingEfficiency, "Scheduling efficiency", IDOMPParallelEfficiency, KindEfficiency)(ratio(activeNoMP+iser+s.ilb, active))
	}
	if f.gpu {
		host := s.u + s.ilb + s.isch + iser // TALP: useful + OpenMP not useful
		tree.add(IDDeviceOffloadEfficiency, "Device offload efficiency", IDParallelEfficiency, KindEfficiency)(ratio(host, host+s.g))
	}
	if f.devices > 0 {
		r.Device = RegionDeviceTimes(&a, f.devices)
		addDeviceTree(tree, r.Device, T)
		r.DeviceWork = RegionDeviceWork(&a, f.gpuDevices)
	}
	if f.counters && t.Cycles > 0 { // a region without cycles has no counter data
		tree.add(IDIPC, "IPC", "", KindRatio)(ratio(float64(t.Instructions), float64(t.Cycles)))
		tree.add(IDFrequencyGHz, "Frequency", "", KindFrequency)(ratio(float64(t.Cycles), s.u))
		tree.add(IDInstructions, "Instructions", "", KindCount)(float64(t.Instructions), true)
		tree.add(IDCycles, "Cycles", "", KindCount)(float64(t.Cycles), true)
	}
	addDeviceComputational(tree, r.DeviceWork)
	r.Metrics = tree.metrics
	return r
}

// builder collects metrics in tree order, dropping a metric whose parent is
// absent. A not-measured parent is present: its children attach to it.
type builder struct {
	metrics []Metric
	depth   map[string]int
}

// add returns a function that adds the metric with value v when ok and v is
// finite.
func (b *builder) add(id, name, parent string, kind Kind) func(v float64, ok bool) {
	return func(v float64, ok bool) {
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		b.put(Metric{ID: id, Name: name, Value: v, Parent: parent, Kind: kind})
	}
}

// notMeasured adds the metric as not measured, for the given reason.
func (b *builder) notMeasured(id, name, parent string, kind Kind, reason string) {
	b.put(Metric{ID: id, Name: name, Parent: parent, Kind: kind, NotMeasured: reason})
}

// addOr is add when reason is empty, else notMeasured (the value is then
// ignored).
func (b *builder) addOr(id, name, parent string, kind Kind, reason string) func(v float64, ok bool) {
	if reason != "" {
		return func(float64, bool) { b.notMeasured(id, name, parent, kind, reason) }
	}
	return b.add(id, name, parent, kind)
}

// put appends x at its depth, unless its parent is absent.
func (b *builder) put(x Metric) {
	if x.Parent != "" {
		d, present := b.depth[x.Parent]
		if !present {
			return
		}
		x.Depth = d + 1
	}
	if b.depth == nil {
		b.depth = make(map[string]int)
	}
	b.depth[x.ID] = x.Depth
	b.metrics = append(b.metrics, x)
}
