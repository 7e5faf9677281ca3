package measure

import (
	"fmt"
	"math"
)

// HistogramBins is the number of bins of a [Distribution]'s histogram.
const HistogramBins = 20

// DefaultProcessRecordLimit is libpopmon's default limit on per-process
// records (POPMON_MAX_PROCESS_RECORDS): a job with more processes gets the
// summary form.
const DefaultProcessRecordLimit = 4096

// SummaryVersion is the format version of a measurement in summary form:
// a reader that does not know "summary" must refuse it rather than find no
// processes.
const SummaryVersion = 4

// Summarized says that a measurement is in summary form: its "processes"
// list and every region's "processes" list are empty, and each region
// carries a [RegionSummary] instead (docs/measurement-format.md, "Summary
// form").
type Summarized struct {
	// Processes is the number of processes measured (resources.processes).
	Processes int `json:"processes"`
	// Limit is the per-process record limit the job ran under.
	Limit int `json:"limit"`
}

// RegionSummary holds, for one region, everything the models talp,
// pop-hybrid and pop-additive use, reduced over the processes that visited
// it, plus the distribution of useful and MPI time per process. Sums are
// exact integer sums (saturating); the *Weighted terms are sums over
// processes of t_i·x_i with t_i the process's CPUs.
type RegionSummary struct {
	// Processes is the number of processes that visited the region.
	Processes int `json:"processes"`
	// Nodes is the number of nodes of those processes.
	Nodes int `json:"nodes"`
	// CPUs is Σ max(cpus_i, 1); MaxCPUs is the largest cpus_i.
	CPUs    int `json:"cpus"`
	MaxCPUs int `json:"max_cpus"`
	// Sum holds the sums over processes of every account (Rank is 0,
	// CPUs is the CPUs above; GPUDevices holds, per device, the maximum
	// over processes).
	Sum ProcessAccounts `json:"sum"`
	// ElapsedMaxNS is max_i E_i.
	ElapsedMaxNS int64 `json:"elapsed_max_ns"`
	// MinMPIProcessNS is min_i (M_i+Mw_i+O_i)/t_i; MinMPINodeNS the same
	// per node, Σ over the node's processes divided by the node's CPUs.
	MinMPIProcessNS float64 `json:"min_mpi_process_ns"`
	MinMPINodeNS    float64 `json:"min_mpi_node_ns"`
	// ThreadUsefulMaxNS is max_i ThreadUsefulMax_i.
	ThreadUsefulMaxNS int64 `json:"thread_useful_max_ns"`
	// NonMPI_i = max(E_i − PrimaryMPI_i − PrimaryOther_i, 0).
	NonMPISumNS      float64 `json:"non_mpi_sum_ns"`
	NonMPIMaxNS      float64 `json:"non_mpi_max_ns"`
	NonMPIWeightedNS float64 `json:"non_mpi_weighted_ns"`
	// Σ t_i·PrimaryParallel_i, Σ t_i·SerialUseful_i and
	// Σ SerialUseful_i·(t_i − 1).
	ParallelWeightedNS float64 `json:"parallel_weighted_ns"`
	SerialWeightedNS   float64 `json:"serial_weighted_ns"`
	SerialIdleNS       float64 `json:"serial_idle_ns"`
	// WithoutThreadAccounts counts processes lacking the per-thread
	// accounts; MultiCPU those with several CPUs; TALPDerived those with
	// one CPU whose thread_useful_max equals useful; WithThreadUseful
	// those with thread_useful_max > 0.
	WithoutThreadAccounts int `json:"without_thread_accounts"`
	MultiCPU              int `json:"multi_cpu"`
	TALPDerived           int `json:"talp_derived"`
	WithThreadUseful      int `json:"with_thread_useful"`
	// Useful and MPI are the distributions of useful_ns and mpi_ns over
	// the processes.
	Useful Distribution `json:"useful_ns"`
	MPI    Distribution `json:"mpi_ns"`
}

// Distribution is a per-process quantity's distribution: its extremes with
// the ranks that have them (the lowest rank on ties) and a histogram of
// [HistogramBins] equal bins over [Min, Max]: value v is in bin
// (v−Min)·Bins/(Max−Min+1).
type Distribution struct {
	Min       int64   `json:"min"`
	MinRank   int     `json:"min_rank"`
	Max       int64   `json:"max"`
	MaxRank   int     `json:"max_rank"`
	Histogram []int64 `json:"histogram"`
}

// Bin is the histogram bin of v in d.
func (d *Distribution) Bin(v int64) int {
	if v <= d.Min {
		return 0
	}
	if v >= d.Max {
		return HistogramBins - 1
	}
	w := float64(d.Max) - float64(d.Min) + 1
	b := int(float64(v-d.Min) * HistogramBins / w)
	return min(max(b, 0), HistogramBins-1)
}

// Quantile is the q-quantile (0 ≤ q ≤ 1) estimated from the histogram: the
// middle of the bin that holds it (Min and Max exactly at q = 0 and 1).
func (d *Distribution) Quantile(q float64) float64 {
	var n int64
	for _, c := range d.Histogram {
		n += c
	}
	switch {
	case n == 0:
		return 0
	case q <= 0:
		return float64(d.Min)
	case q >= 1:
		return float64(d.Max)
	}
	target := int64(math.Ceil(q * float64(n)))
	var seen int64
	w := (float64(d.Max) - float64(d.Min) + 1) / HistogramBins
	for b, c := range d.Histogram {
		seen += c
		if seen >= target {
			return min(float64(d.Min)+(float64(b)+0.5)*w, float64(d.Max))
		}
	}
	return float64(d.Max)
}

// Aggregates returns the region's reduced accounts: its summary in summary
// form, else computed from its per-process accounts with nodeOf giving
// each rank's node (a rank missing there is a node of its own). The models
// use only these, so the full and the summary form of a run give the same
// metrics.
func (g *Region) Aggregates(nodeOf map[int]int) RegionSummary {
	if g.Summary != nil {
		return *g.Summary
	}
	return summarize(g, nodeOf)
}

// NodeOf maps every listed process's rank to its node.
func (m *Measurement) NodeOf() map[int]int {
	nodeOf := make(map[int]int, len(m.Processes))
	for _, p := range m.Processes {
		nodeOf[p.Rank] = p.Node
	}
	return nodeOf
}

func summarize(g *Region, nodeOf map[int]int) RegionSummary {
	type node struct {
		mpi  float64
		cpus int
	}
	nodes := make(map[int]*node)
	var order []int
	b := NewSummaryBuilder()
	for i := range g.Processes {
		a := &g.Processes[i]
		b.Add(a, a.Rank, 1)
		id, ok := nodeOf[a.Rank]
		if !ok {
			id = -1 - a.Rank
		}
		n := nodes[id]
		if n == nil {
			n = &node{}
			nodes[id] = n
			order = append(order, id)
		}
		n.mpi += float64(a.MPINS) + float64(a.MPIWorkerIdleNS) + float64(a.OtherNS)
		n.cpus += max(a.CPUs, 1)
	}
	for _, id := range order {
		b.AddNode(nodes[id].mpi, nodes[id].cpus, 1)
	}
	return b.Summary()
}

// SummaryBuilder computes a [RegionSummary] from the processes of a
// region given in groups of processes with equal accounts (ranks
// first … first+count−1), and from its nodes, so that a region of many
// processes described by a few groups (a DLB/TALP file's synthesized
// processes) is summarized without listing them.
type SummaryBuilder struct {
	s           RegionSummary
	devs        map[int]*GPUDeviceAccount
	maxDev      int
	useful, mpi []group
}

// group is count processes from rank first on with value v.
type group struct {
	v     int64
	first int
	count int64
}

// NewSummaryBuilder returns an empty builder.
func NewSummaryBuilder() *SummaryBuilder {
	return &SummaryBuilder{
		s:      RegionSummary{MinMPIProcessNS: math.Inf(1), MinMPINodeNS: math.Inf(1)},
		devs:   map[int]*GPUDeviceAccount{},
		maxDev: -1,
	}
}

// Add adds count processes, ranks first … first+count−1, each with the
// accounts a (a.Rank is ignored; a's GPU device accounts are merged once,
// as per-device maxima).
func (b *SummaryBuilder) Add(a *ProcessAccounts, first, count int) {
	if count <= 0 {
		return
	}
	s := &b.s
	c := int64(count)
	cpus := max(a.CPUs, 1)
	t := float64(cpus)
	fc := float64(count)
	s.Processes += count
	s.CPUs += cpus * count
	s.MaxCPUs = max(s.MaxCPUs, a.CPUs)
	s.ElapsedMaxNS = max(s.ElapsedMaxNS, a.ElapsedNS)
	u := &s.Sum
	for _, f := range []struct{ dst, v *int64 }{
		{&u.Visits, &a.Visits}, {&u.ElapsedNS, &a.ElapsedNS}, {&u.UsefulNS, &a.UsefulNS},
		{&u.MPINS, &a.MPINS}, {&u.MPIWorkerIdleNS, &a.MPIWorkerIdleNS},
		{&u.OMPSerializationNS, &a.OMPSerializationNS}, {&u.OMPLoadImbalanceNS, &a.OMPLoadImbalanceNS},
		{&u.OMPSchedulingNS, &a.OMPSchedulingNS}, {&u.GPURuntimeNS, &a.GPURuntimeNS},
		{&u.InstrumentationNS, &a.InstrumentationNS},
		{&u.OtherNS, &a.OtherNS}, {&u.MPICalls, &a.MPICalls}, {&u.OMPParallels, &a.OMPParallels},
		{&u.OMPTasks, &a.OMPTasks}, {&u.GPURuntimeCalls, &a.GPURuntimeCalls},
		{&u.Cycles, &a.Cycles}, {&u.Instructions, &a.Instructions},
		{&u.PrimaryUsefulNS, &a.PrimaryUsefulNS}, {&u.PrimaryMPINS, &a.PrimaryMPINS},
		{&u.PrimaryOtherNS, &a.PrimaryOtherNS}, {&u.PrimaryParallelNS, &a.PrimaryParallelNS},
		{&u.PrimarySerialUsefulNS, &a.PrimarySerialUsefulNS}, {&u.ParallelUsefulNS, &a.ParallelUsefulNS},
		{&u.ThreadUsefulMaxNS, &a.ThreadUsefulMaxNS},
	} {
		*f.dst = satAdd(*f.dst, satMul(*f.v, c))
	}
	for _, d := range a.GPUDevices {
		x := b.devs[d.Device]
		if x == nil {
			x = &GPUDeviceAccount{Device: d.Device}
			b.devs[d.Device] = x
			b.maxDev = max(b.maxDev, d.Device)
		}
		x.UsefulNS = max(x.UsefulNS, d.UsefulNS)
		x.ActiveNS = max(x.ActiveNS, d.ActiveNS, d.UsefulNS)
		// Counters are the whole device's: those of the process that
		// sampled it longest.
		if k := d.Counters; k != nil && (x.Counters == nil || k.SampledNS > x.Counters.SampledNS) {
			x.Counters = k
		}
	}
	mpi := float64(a.MPINS) + float64(a.MPIWorkerIdleNS) + float64(a.OtherNS)
	s.MinMPIProcessNS = min(s.MinMPIProcessNS, mpi/t)
	s.ThreadUsefulMaxNS = max(s.ThreadUsefulMaxNS, a.ThreadUsefulMax())
	nonMPI := max(float64(a.ElapsedNS)-float64(a.PrimaryMPI())-float64(a.PrimaryOtherNS), 0)
	s.NonMPISumNS += fc * nonMPI
	s.NonMPIMaxNS = max(s.NonMPIMaxNS, nonMPI)
	s.NonMPIWeightedNS += fc * t * nonMPI
	su := float64(a.PrimarySerialUseful())
	s.ParallelWeightedNS += fc * t * float64(a.PrimaryParallelNS)
	s.SerialWeightedNS += fc * t * su
	s.SerialIdleNS += fc * su * (t - 1)
	if !a.HasThreadAccounts() {
		s.WithoutThreadAccounts += count
	}
	if a.CPUs > 1 {
		s.MultiCPU += count
	}
	if a.CPUs <= 1 && a.ThreadUsefulMaxNS == a.UsefulNS {
		s.TALPDerived += count
	}
	if a.ThreadUsefulMaxNS > 0 {
		s.WithThreadUseful += count
	}
	b.useful = append(b.useful, group{a.UsefulNS, first, c})
	b.mpi = append(b.mpi, group{a.MPINS, first, c})
}

// AddNode adds count nodes, each with mpiNS of MPI time (Σ over its
// processes of mpi_ns + mpi_worker_idle_ns + other_ns) on cpus CPUs
// (Σ max(cpus_i, 1)).
func (b *SummaryBuilder) AddNode(mpiNS float64, cpus, count int) {
	if count <= 0 {
		return
	}
	b.s.Nodes += count
	b.s.MinMPINodeNS = min(b.s.MinMPINodeNS, mpiNS/float64(max(cpus, 1)))
}

// Summary returns the summary of what was added.
func (b *SummaryBuilder) Summary() RegionSummary {
	s := b.s
	u := &s.Sum
	u.GPUDevices = nil
	for d := 0; d <= b.maxDev; d++ {
		if x := b.devs[d]; x != nil {
			u.GPUDevices = append(u.GPUDevices, *x)
		}
	}
	u.CPUs = s.CPUs
	if s.Processes == 0 {
		s.MinMPIProcessNS, s.MinMPINodeNS = 0, 0
	}
	if s.Nodes == 0 {
		s.MinMPINodeNS = 0
	}
	s.Useful = distribution(b.useful)
	s.MPI = distribution(b.mpi)
	return s
}

func distribution(gs []group) Distribution {
	d := Distribution{Histogram: make([]int64, HistogramBins)}
	for i, g := range gs {
		if i == 0 || g.v < d.Min || (g.v == d.Min && g.first < d.MinRank) {
			d.Min, d.MinRank = g.v, g.first
		}
		if i == 0 || g.v > d.Max || (g.v == d.Max && g.first < d.MaxRank) {
			d.Max, d.MaxRank = g.v, g.first
		}
	}
	for _, g := range gs {
		d.Histogram[d.Bin(g.v)] += g.count
	}
	return d
}

// satMul returns a·c for c ≥ 0, saturating.
func satMul(a, c int64) int64 {
	if c == 1 || a == 0 {
		return a
	}
	p := a * c
	if p/c != a {
		if a > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return p
}

func satAdd(a, b int64) int64 {
	c := a + b
	if (c > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}

// Summarize returns m in summary form (a copy; m is not modified): every
// region's per-process accounts replaced by its [RegionSummary], the
// process list dropped. The models give the same metrics from both. A
// measurement already in summary form is returned as is.
func Summarize(m *Measurement, limit int) *Measurement {
	if m.Summarized != nil {
		return m
	}
	c := *m
	nodeOf := m.NodeOf()
	c.Regions = make([]Region, len(m.Regions))
	for i := range m.Regions {
		s := summarize(&m.Regions[i], nodeOf)
		c.Regions[i] = Region{Name: m.Regions[i].Name, Summary: &s}
	}
	c.Processes = nil
	c.Summarized = &Summarized{Processes: len(m.Processes), Limit: limit}
	c.Version = max(c.Version, SummaryVersion)
	return &c
}

// validateSummary checks a measurement in summary form.
func (m *Measurement) validateSummary(p *problems) {
	s := m.Summarized
	if m.Version < SummaryVersion {
		p.add("summary", "needs version %d", SummaryVersion)
	}
	if s.Processes < 1 || s.Processes != m.Resources.Processes {
		p.add("summary", "has %d processes; resources.processes is %d", s.Processes, m.Resources.Processes)
	}
	if len(m.Processes) > 0 {
		p.add("processes", "is not empty in summary form")
	}
	for i := range m.Regions {
		g := &m.Regions[i]
		path := fmt.Sprintf("regions[%d] %q", i, g.Name)
		switch {
		case g.Summary == nil:
			p.add(path, "has no summary in summary form")
		case len(g.Processes) > 0:
			p.add(path, "lists processes in summary form")
		case g.Summary.Processes < 0 || g.Summary.Processes > s.Processes || g.Summary.CPUs < g.Summary.Processes:
			p.add(path, "has a summary of %d processes with %d CPUs", g.Summary.Processes, g.Summary.CPUs)
		case len(g.Summary.Useful.Histogram) != HistogramBins || len(g.Summary.MPI.Histogram) != HistogramBins:
			p.add(path, "has a histogram without %d bins", HistogramBins)
		default:
			for _, f := range g.Summary.Sum.fields() {
				if f.v < 0 {
					p.add(path, "has a negative sum of %s (%d)", f.name, f.v)
				}
			}
		}
	}
}
