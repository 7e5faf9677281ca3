// Package pop computes POP efficiency metrics from a measurement
// (package measure). Every function is pure: no I/O, no globals, and the
// same measurement always gives the same report.
//
// A metric model turns the time accounts of a measurement into a tree of
// named efficiencies per region. The definitions are those of
// POP-METRICS.md; metric ids are the stable snake_case ids of its §9. A
// metric whose inputs are absent (no MPI, no OpenMP, no GPU, no counters,
// zero time) is absent from the report, never 0 and never NaN.
//
// Three models are implemented: talp (POP-METRICS.md §2, the default),
// pop-hybrid (§3, BSC's multiplicative hybrid model) and pop-additive (§4,
// the additive hybrid model of NAG PyPOP). In model talp the time OpenMP
// workers are idle while their primary thread is inside MPI (Mw, recorded
// apart from omp_serialization_ns in the measurement) is OpenMP
// serialization for the OpenMP branch and MPI time for the MPI branch, as
// DLB/TALP counts it after 3.7.0 (POP-METRICS.md §2; docs/metrics.md says
// how DLB 3.7.0 itself differs).
//
// A metric of a model's tree that the measurement cannot give (it needs an
// ideal-network replay, or OpenMP was not measured) is reported as not
// measured: it is in [RegionReport.Metrics] with a reason in
// [Metric.NotMeasured] and no value, and [RegionReport.Value] reports it as
// absent.
package pop

import (
	"fmt"
	"strings"

	"github.com/popmon/popmon/measure"
)

// Model names a metric model.
type Model string

// The metric models.
const (
	// ModelTALP is the model of DLB/TALP 3.7 ("hybrid-v2"), POP-METRICS.md
	// §2: the default.
	ModelTALP Model = "talp"
	// ModelPOPHybrid is BSC's multiplicative hybrid MPI+OpenMP model,
	// POP-METRICS.md §3: hybrid efficiencies over all threads, MPI
	// efficiencies from the primary threads' time outside MPI, and OpenMP
	// efficiencies as their quotients.
	ModelPOPHybrid Model = "pop-hybrid"
	// ModelPOPAdditive is the additive hybrid MPI+OpenMP model of NAG PyPOP,
	// POP-METRICS.md §4: a parent's inefficiency (1 − efficiency) is the sum
	// of its children's.
	ModelPOPAdditive Model = "pop-additive"
)

// AllModels is the name that selects every model ([ParseModels]).
const AllModels = "all"

// Models returns the models Compute supports, the default first.
func Models() []Model {
	return []Model{ModelTALP, ModelPOPHybrid, ModelPOPAdditive}
}

// Description returns a one-line description of the model for report
// headers; "" for an unknown model.
func (m Model) Description() string {
	switch m {
	case ModelTALP:
		return "DLB/TALP hybrid-v2 efficiencies, POP-METRICS.md §2"
	case ModelPOPHybrid:
		return "POP multiplicative hybrid MPI+OpenMP efficiencies, POP-METRICS.md §3"
	case ModelPOPAdditive:
		return "POP additive hybrid MPI+OpenMP efficiencies, POP-METRICS.md §4"
	}
	return ""
}

// ParseModel returns the model called name (case-insensitive; "" is the
// default model). The error lists the supported models.
func ParseModel(name string) (Model, error) {
	if name == "" {
		return ModelTALP, nil
	}
	for _, m := range Models() {
		if strings.EqualFold(string(m), name) {
			return m, nil
		}
	}
	return "", unknownModel(Model(name), false)
}

// ParseModels returns the models a --model argument names: every model of
// [Models] for [AllModels] ("all", case-insensitive), else the one model
// [ParseModel] returns.
func ParseModels(name string) ([]Model, error) {
	if strings.EqualFold(name, AllModels) {
		return Models(), nil
	}
	m, err := ParseModel(name)
	if err != nil {
		return nil, unknownModel(Model(name), true)
	}
	return []Model{m}, nil
}

func unknownModel(m Model, all bool) error {
	names := make([]string, 0, len(Models())+1)
	for _, s := range Models() {
		names = append(names, string(s))
	}
	if all {
		names = append(names, AllModels)
	}
	return fmt.Errorf("unknown metric model %q: use one of %s", string(m), strings.Join(names, ", "))
}

// Report is the result of one model applied to one measurement.
type Report struct {
	// Model is the model that computed the report.
	Model Model
	// Source optionally names where the measurement came from (a file
	// name); Compute leaves it empty for the caller to fill.
	Source string
	// Regions holds one entry per region of the measurement, in file order.
	Regions []RegionReport
	// Refused, when not empty, says in one sentence why no metric of the
	// report can be trusted (measure.Measurement.Refusal: the measurement
	// lacks processes of the job, or MPI calls that never reached the
	// library). Every region's Metrics is then empty; renderers print the
	// sentence instead of the trees. A single region can be refused too
	// ([RegionReport.Refused]).
	Refused string
	// SerTransfer is the definition of serialisation and transfer
	// efficiency the report computed them with; "" when it has none
	// (another model, or no ideal-network replay).
	SerTransfer SerTransfer
	// Run is what renderers say about the run beside the metrics (its
	// header, tables, warnings and notes, the accounts invariant's
	// violations that the refusals come from): [NewRun] of the
	// measurement. Nil for a report built without one.
	Run *Run
}

// Region returns the report of the region called name, exactly (names are
// case-sensitive: [measure.NameIndex]; [measure.MatchRegion] suggests the
// name when only the case differs).
func (r *Report) Region(name string) (*RegionReport, bool) {
	if r == nil {
		return nil, false
	}
	i := measure.NameIndex(len(r.Regions), func(i int) string { return r.Regions[i].Name }, name)
	if i < 0 {
		return nil, false
	}
	return &r.Regions[i], true
}

// RegionNames returns the names of the regions in report order.
func (r *Report) RegionNames() []string {
	if r == nil {
		return nil
	}
	names := make([]string, len(r.Regions))
	for i := range r.Regions {
		names[i] = r.Regions[i].Name
	}
	return names
}

// RegionReport holds the metrics of one region. Only processes that visited
// the region count.
type RegionReport struct {
	// Name is the region name.
	Name string
	// ElapsedNS is T = max_i E_i over the processes that visited the region.
	ElapsedNS int64
	// Processes is the number of processes that visited the region.
	Processes int
	// Nodes is the number of distinct nodes of those processes.
	Nodes int
	// CPUs is C = Σ_i cpus_i over those processes.
	CPUs int
	// Threads, for a region measured per thread (started inside OpenMP
	// parallel regions: each process's record has 1 CPU), is Σ over the
	// processes of the threads that measured it; 0 otherwise.
	Threads int
	// GPUs is the number of GPU devices of the run.
	GPUs int
	// Totals are the sums and derived times the metrics are computed from.
	Totals Totals
	// Device are the GPU device times of the region, merged per device
	// (model talp with per-device accounts only; N is 0 otherwise).
	Device DeviceTimes
	// DeviceWork are the device computation inputs (model talp; zero
	// without devices).
	DeviceWork DeviceWork
	// Metrics are the metrics that apply, in tree order (a parent before
	// its children, siblings in the order of POP-METRICS.md). Metrics of
	// the model's tree that the measurement cannot give are included with
	// [Metric.NotMeasured] set. Empty when the region is refused.
	Metrics []Metric
	// Refused, when not empty, says in one sentence why no metric of this
	// region can be trusted: a process's accounts in it break the
	// invariant of POP-METRICS.md §1 (accountsRefusal). Metrics is then
	// empty; renderers print the sentence instead of the region's tree,
	// and the other regions as usual. (A refusal of the whole report,
	// [Report.Refused], leaves this empty.)
	Refused string
}

// Totals are the inputs of the metrics of one region: sums over all CPUs of
// all processes that visited it (POP-METRICS.md §1), and the normalised MPI
// times of §2.
type Totals struct {
	// Visits is Σ visits (TALP's numMeasurements).
	Visits int64
	// UsefulNS is U.
	UsefulNS int64
	// MPINS is M.
	MPINS int64
	// MPIWorkerIdleNS is Mw: workers idle while their primary thread is in
	// MPI (the measurement's mpi_worker_idle_ns).
	MPIWorkerIdleNS int64
	// OMPSerializationNS is the measurement's omp_serialization_ns: workers
	// idle outside parallel regions while the primary is not in MPI. Model
	// talp's Iser is OMPSerializationNS + MPIWorkerIdleNS.
	OMPSerializationNS int64
	// OMPLoadImbalanceNS is Ilb.
	OMPLoadImbalanceNS int64
	// OMPSchedulingNS is Isch.
	OMPSchedulingNS int64
	// GPURuntimeNS is G.
	GPURuntimeNS int64
	// OtherNS is O: time neither useful nor in a runtime (imported traces
	// only), charged with MPI time.
	OtherNS int64
	// InstrumentationNS is X = Σ_i X_i: popmon's own cost in the wrapped
	// calls, which the metrics leave out (docs/metrics.md, "popmon's own
	// cost"); 0 for files without the account.
	InstrumentationNS int64
	// MPICalls is Σ MPI calls.
	MPICalls int64
	// OMPParallels is Σ OpenMP parallel regions.
	OMPParallels int64
	// OMPTasks is Σ OpenMP explicit tasks.
	OMPTasks int64
	// GPURuntimeCalls is Σ GPU runtime calls.
	GPURuntimeCalls int64
	// Cycles is Σ cycles during useful time (0 without counters).
	Cycles int64
	// Instructions is Σ instructions during useful time (0 without
	// counters).
	Instructions int64
	// MPIAppNS is mpi_app = (M + Mw + O) / C.
	MPIAppNS float64
	// MinMPIProcNS is mpi_proc_min = min_i (M_i + Mw_i + O_i) / cpus_i (TALP's
	// minMpiNormdProc).
	MinMPIProcNS float64
	// MinMPINodeNS is mpi_node_min = min_n Σ_{i∈n} (M_i + Mw_i + O_i) / C_node
	// (TALP's minMpiNormdNode), with the true C_node.
	MinMPINodeNS float64
}

// Metric is one node of a region's metric tree.
type Metric struct {
	// ID is the stable snake_case id of POP-METRICS.md §9.
	ID string
	// Name is the human label, as TALP prints it where TALP has the metric.
	Name string
	// Value is the metric at full precision. Efficiencies are ratios
	// (usually in [0, 1]); see Kind.
	Value float64
	// Parent is the id of the parent metric; "" for a root.
	Parent string
	// Depth is the depth in the tree: 0 for a root.
	Depth int
	// Kind says what the value is.
	Kind Kind
	// NotMeasured, when not empty, says why the metric has no value (for
	// example "needs a trace: measure with popmon run --trace, or report a Paraver trace"): it belongs to the
	// model's tree, but the measurement cannot give it. Value is then 0 and
	// meaningless; renderers print the reason instead of a number, and
	// omit the metric where only numbers go.
	NotMeasured string
}

// Measured reports whether the metric has a value (NotMeasured is empty).
func (x Metric) Measured() bool {
	return x.NotMeasured == ""
}

// Kind classifies metrics for renderers.
type Kind int

// Metric kinds.
const (
	// KindEfficiency is a ratio of times, ideally 1.
	KindEfficiency Kind = iota
	// KindRatio is another dimensionless ratio (IPC).
	KindRatio
	// KindFrequency is a frequency in GHz.
	KindFrequency
	// KindCount is an event count (instructions, cycles).
	KindCount
)

// Value returns the value of the metric with the given id; false when the
// metric is absent from the region or not measured.
func (r *RegionReport) Value(id string) (float64, bool) {
	if m, ok := r.Metric(id); ok && m.Measured() {
		return m.Value, true
	}
	return 0, false
}

// Metric returns the metric with the given id, measured or not (see
// [Metric.Measured]); false when it is absent.
func (r *RegionReport) Metric(id string) (Metric, bool) {
	if r == nil {
		return Metric{}, false
	}
	for _, m := range r.Metrics {
		if m.ID == id {
			return m, true
		}
	}
	return Metric{}, false
}

// Compute applies model to m and returns one region report per region of
// m; an empty model is the default, ModelTALP. It fails for an unknown
// model or a measurement that does not pass measure's validation.
func Compute(m *measure.Measurement, model Model) (*Report, error) {
	return ComputeWith(m, model, Options{})
}

// ComputeWith is [Compute] with options (the definition of serialisation
// and transfer efficiency).
func ComputeWith(m *measure.Measurement, model Model, opt Options) (*Report, error) {
	if model == "" {
		model = ModelTALP
	}
	known := false
	for _, k := range Models() {
		known = known || k == model
	}
	if !known {
		return nil, unknownModel(model, false)
	}
	if m == nil {
		return nil, fmt.Errorf("compute %s metrics: no measurement", model)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("compute %s metrics: %w", model, err)
	}
	// popmon's own cost is neither useful nor MPI time: the metrics see
	// each process as if it had run without it (docs/metrics.md).
	wo := m.WithoutInstrumentation()
	var rep *Report
	switch model {
	case ModelPOPHybrid:
		rep = computeHybrid(wo)
	case ModelPOPAdditive:
		rep = computeAdditive(wo, opt)
	default:
		rep = computeTALP(wo)
	}
	if wo != m {
		restoreWallTime(rep, m)
	}
	rep.Run = NewRun(m)
	for i := range rep.Regions {
		if g, ok := m.Region(rep.Regions[i].Name); ok {
			rep.Regions[i].Threads = g.Threads()
		}
	}
	if why := m.Refusal(); why != "" {
		// A number a user cannot trust is worse than none.
		rep.Refused = why
		for i := range rep.Regions {
			rep.Regions[i].Metrics = nil
		}
		return rep, nil
	}
	if why := accountRefusals(m, rep.Run.AccountViolations); why != nil {
		// Accounts that do not add up were measured or converted wrongly:
		// the region's efficiencies would be wrong by as much.
		for i := range rep.Regions {
			g := &rep.Regions[i]
			if s, ok := why[g.Name]; ok {
				g.Refused, g.Metrics = s, nil
			}
		}
	}
	return rep, nil
}

// restoreWallTime gives rep's regions, computed from m without popmon's own
// cost, their wall time back (T = max_i E_i of m) and the instrumentation
// total (Totals.InstrumentationNS): the run's time stays what the clock
// said; only the metrics leave popmon's own cost out.
func restoreWallTime(rep *Report, m *measure.Measurement) {
	for i := range rep.Regions {
		r := &rep.Regions[i]
		for j := range m.Regions {
			g := &m.Regions[j]
			if g.Name != r.Name {
				continue
			}
			if g.Summary != nil {
				r.Totals.InstrumentationNS = g.Summary.Sum.InstrumentationNS
				break
			}
			var el, x int64
			for _, p := range g.Processes {
				el = max(el, p.ElapsedNS)
				x += p.InstrumentationNS
			}
			r.ElapsedNS, r.Totals.InstrumentationNS = el, x
			break
		}
	}
}

// ComputeAll applies every model of [Models] to m, in that order.
func ComputeAll(m *measure.Measurement) ([]*Report, error) {
	reps := make([]*Report, 0, len(Models()))
	for _, model := range Models() {
		rep, err := Compute(m, model)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// ratio returns num/den, false when den is not positive (the metric is then
// absent).
func ratio(num, den float64) (float64, bool) {
	if !(den > 0) {
		return 0, false
	}
	return num / den, true
}
