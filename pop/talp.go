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
	// (len(gpu_devices)); 0: no device tree.
	devices int
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
	}
	for _, p := range m.Processes {
		if p.CPUs > 1 {
			f.openmp = true
		}
	}
	for _, g := range m.Regions {
		for _, a := range g.Processes {
			if a.CPUs > 1 || a.OMPSerializationNS > 0 || a.OMPLoadImbalanceNS > 0 ||
				a.OMPSchedulingNS > 0 || a.MPIWorkerIdleNS > 0 || a.OMPParallels > 0 {
				f.openmp = true
			}
			if a.GPURuntimeNS > 0 || a.GPURuntimeCalls > 0 {
				f.gpu = true
			}
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
	nodeOf := make(map[int]int, len(m.Processes))
	for _, p := range m.Processes {
		nodeOf[p.Rank] = p.Node
	}
	rep := &Report{Model: ModelTALP, Regions: make([]RegionReport, len(m.Regions))}
	for i := range m.Regions {
		rep.Regions[i] = talpRegion(&m.Regions[i], nodeOf, m.Resources.GPUs, f)
	}
	return rep
}

// sums holds the float64 sums the formulas use (int64 totals may saturate
// on absurd input; these do not wrap).
type sums struct {
	u, mpi, mw, iser, ilb, isch, g float64
	other                          float64 // O: charged with M (imported traces only)
}

func talpRegion(g *measure.Region, nodeOf map[int]int, gpus int, f features) RegionReport {
	r := RegionReport{Name: g.Name, GPUs: gpus}
	var s sums
	t := &r.Totals
	type node struct {
		mpi  float64 // Σ (M_i + Mw_i + O_i)
		cpus int     // C_node
	}
	nodes := make(map[int]*node)
	var order []int // node ids in first-seen order, for determinism
	minProc := math.Inf(1)
	for _, a := range g.Processes {
		cpus := max(a.CPUs, 1) // validated ≥ 1; guard anyway
		r.Processes++
		r.CPUs += cpus
		r.ElapsedNS = max(r.ElapsedNS, a.ElapsedNS)
		t.Visits = add(t.Visits, a.Visits)
		t.UsefulNS = add(t.UsefulNS, a.UsefulNS)
		t.MPINS = add(t.MPINS, a.MPINS)
		t.MPIWorkerIdleNS = add(t.MPIWorkerIdleNS, a.MPIWorkerIdleNS)
		t.OMPSerializationNS = add(t.OMPSerializationNS, a.OMPSerializationNS)
		t.OMPLoadImbalanceNS = add(t.OMPLoadImbalanceNS, a.OMPLoadImbalanceNS)
		t.OMPSchedulingNS = add(t.OMPSchedulingNS, a.OMPSchedulingNS)
		t.GPURuntimeNS = add(t.GPURuntimeNS, a.GPURuntimeNS)
		t.OtherNS = add(t.OtherNS, a.OtherNS)
		t.MPICalls = add(t.MPICalls, a.MPICalls)
		t.OMPParallels = add(t.OMPParallels, a.OMPParallels)
		t.OMPTasks = add(t.OMPTasks, a.OMPTasks)
		t.GPURuntimeCalls = add(t.GPURuntimeCalls, a.GPURuntimeCalls)
		t.Cycles = add(t.Cycles, a.Cycles)
		t.Instructions = add(t.Instructions, a.Instructions)
		s.u += float64(a.UsefulNS)
		s.mpi += float64(a.MPINS)
		s.mw += float64(a.MPIWorkerIdleNS)
		s.other += float64(a.OtherNS)
		s.iser += float64(a.OMPSerializationNS)
		s.ilb += float64(a.OMPLoadImbalanceNS)
		s.isch += float64(a.OMPSchedulingNS)
		s.g += float64(a.GPURuntimeNS)

		mpi := float64(a.MPINS) + float64(a.MPIWorkerIdleNS) + float64(a.OtherNS)
		minProc = min(minProc, mpi/float64(cpus))
		id, ok := nodeOf[a.Rank]
		if !ok {
			id = -1 - a.Rank // unknown placement: a node of its own
		}
		n := nodes[id]
		if n == nil {
			n = &node{}
			nodes[id] = n
			order = append(order, id)
		}
		n.mpi += mpi
		n.cpus += cpus
	}
	r.Nodes = len(nodes)
	if r.Processes == 0 {
		return r // nobody visited the region: no metrics
	}
	minNode := math.Inf(1)
	for _, id := range order {
		n := nodes[id]
		minNode = min(minNode, n.mpi/float64(n.cpus))
	}
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
		r.Device = RegionDeviceTimes(g, f.devices)
		addDeviceTree(tree, r.Device, T)
	}
	if f.counters && t.Cycles > 0 { // a region without cycles has no counter data
		tree.add(IDIPC, "IPC", "", KindRatio)(ratio(float64(t.Instructions), float64(t.Cycles)))
		tree.add(IDFrequencyGHz, "Frequency", "", KindFrequency)(ratio(float64(t.Cycles), s.u))
		tree.add(IDInstructions, "Instructions", "", KindCount)(float64(t.Instructions), true)
		tree.add(IDCycles, "Cycles", "", KindCount)(float64(t.Cycles), true)
	}
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

// add returns a + b, saturating at the int64 range.
func add(a, b int64) int64 {
	c := a + b
	if (c > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}
