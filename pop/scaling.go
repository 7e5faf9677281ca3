package pop

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Metric ids of the scaling metrics (POP-METRICS.md §6, §9).
const (
	IDGlobalEfficiency       = "global_efficiency"
	IDComputationScalability = "computation_scalability"
	IDInstructionScaling     = "instruction_scaling"
	IDIPCScaling             = "ipc_scaling"
	IDFrequencyScaling       = "frequency_scaling"
	IDSpeedup                = "speedup"
	IDSpeedupEfficiency      = "speedup_efficiency"
	IDElapsedS               = "elapsed_s"

	// Device computation scalability (runs with GPUs):
	// gpu_computation_scalability = ΣGu_ref/ΣGu = the product of the
	// four below (DeviceWork says why).
	IDGPUComputationScalability = "gpu_computation_scalability"
	IDGPUInstructionScaling     = "gpu_instruction_scaling"
	IDGPUIPCScaling             = "gpu_ipc_scaling"
	IDGPUSMFrequencyScaling     = "gpu_sm_frequency_scaling"
	IDGPUSMUseScaling           = "gpu_sm_use_scaling"
)

// ScalingMode says how runs of a scaling study relate.
type ScalingMode string

// Scaling modes.
const (
	// ScalingAuto decides between strong and weak ([DetectScalingMode]).
	ScalingAuto ScalingMode = "auto"
	// ScalingStrong: the same problem on more resources.
	ScalingStrong ScalingMode = "strong"
	// ScalingWeak: the problem grows with the resources.
	ScalingWeak ScalingMode = "weak"
)

// WeakScalingThreshold is the instructions-per-CPU ratio (run over
// reference) at or above which every run must be for auto mode to decide
// weak scaling (POP-METRICS.md §6).
const WeakScalingThreshold = 0.75

// ScalingRun is one run in one region: the inputs of the scaling metrics.
type ScalingRun struct {
	// ID identifies the run across regions (the caller's index).
	ID int
	// Label names the configuration ("4xMPI 2xOpenMP"); Source the file.
	Label, Source string
	// CPUs is C of the region.
	CPUs int
	// Time orders runs with the same CPUs.
	Time time.Time
	// ElapsedNS is T of the region.
	ElapsedNS int64
	// UsefulNS is ΣU of the region.
	UsefulNS float64
	// Instructions and Cycles are Σ over useful time; used only when
	// HasCounters.
	Instructions, Cycles float64
	// HasCounters says the run has counter data in this region.
	HasCounters bool
	// Device are the run's device computation inputs in this region (nil
	// without GPU devices).
	Device *DeviceWork
	// Metrics are the run's own metrics of the region by id (its model's
	// tree); the parallel efficiency root is parallel_efficiency, or
	// hybrid_parallel_efficiency for model pop-hybrid.
	Metrics map[string]float64
	// Refused, when not empty, says why the run has no metrics in the
	// region ([RegionReport.Refused]): its column has no value, and it is
	// neither the reference nor part of the choice of mode.
	Refused string
}

// ScalingNode is one efficiency of a model's tree, for the rows of a
// scaling table.
type ScalingNode struct {
	// ID and Name of the metric.
	ID, Name string
	// Depth is 0 for the tree's root.
	Depth int
}

// ScalingRegionInput is one region and its runs.
type ScalingRegionInput struct {
	// Name is the region name.
	Name string
	// Runs are the runs that have the region, in any order.
	Runs []ScalingRun
	// Tree is the efficiency tree of the runs' model, in order; rows
	// appear for nodes that at least one run has.
	Tree []ScalingNode
}

// ScalingInput is a whole scaling study.
type ScalingInput struct {
	// Model names the metric model of the runs' metrics.
	Model Model
	// Mode is ScalingStrong, ScalingWeak or ScalingAuto ("" is auto).
	Mode ScalingMode
	// Reference is the ID of the reference run; a negative value (or a
	// run absent from a region) selects the run with the fewest CPUs,
	// the earliest of those.
	Reference int
	// Regions are the regions, the first (Global) decides auto mode.
	Regions []ScalingRegionInput
}

// Scaling is the result of [Scale].
type Scaling struct {
	// Model is the input's model.
	Model Model
	// Mode is ScalingStrong or ScalingWeak.
	Mode ScalingMode
	// ModeReason says how the mode was decided.
	ModeReason string
	// Regions hold one table per input region.
	Regions []ScalingRegion
}

// ScalingRegion is the scaling table of one region.
type ScalingRegion struct {
	// Name is the region name.
	Name string
	// Runs are the columns: sorted by CPUs, then time.
	Runs []ScalingRun
	// Reference is the index in Runs of the reference run.
	Reference int
	// Rows are the metrics, in display order.
	Rows []ScalingRow
}

// ScalingRow is one metric across the runs of a region.
type ScalingRow struct {
	// ID and Name of the metric; Depth is its indentation.
	ID, Name string
	Depth    int
	// Kind says how to show the values; efficiencies (KindEfficiency)
	// are ideally 1 and may exceed it for scaling metrics.
	Kind Kind
	// Values holds one value per run; Has[i] false means absent.
	Values []float64
	Has    []bool
}

// Value returns the row's value for run i; false when absent.
func (r *ScalingRow) Value(i int) (float64, bool) {
	if i < 0 || i >= len(r.Values) || !r.Has[i] {
		return 0, false
	}
	return r.Values[i], true
}

// Row returns the row with the given id.
func (r *ScalingRegion) Row(id string) (*ScalingRow, bool) {
	for i := range r.Rows {
		if r.Rows[i].ID == id {
			return &r.Rows[i], true
		}
	}
	return nil, false
}

// ParseScalingMode parses a --mode value: auto, strong or weak.
func ParseScalingMode(s string) (ScalingMode, error) {
	switch ScalingMode(s) {
	case "", ScalingAuto:
		return ScalingAuto, nil
	case ScalingStrong, ScalingWeak:
		return ScalingMode(s), nil
	}
	return "", fmt.Errorf("unknown scaling mode %q: use auto, strong or weak", s)
}

// sortRuns sorts runs by CPUs, then time, then ID.
func sortRuns(runs []ScalingRun) {
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if a.CPUs != b.CPUs {
			return a.CPUs < b.CPUs
		}
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		return a.ID < b.ID
	})
}

// referenceIndex returns the index of the run with ID ref in sorted runs,
// else of the first (the fewest CPUs, earliest) that is not refused; 0
// when every run is.
func referenceIndex(runs []ScalingRun, ref int) int {
	if ref >= 0 {
		for i := range runs {
			if runs[i].ID == ref && runs[i].Refused == "" {
				return i
			}
		}
	}
	for i := range runs {
		if runs[i].Refused == "" {
			return i
		}
	}
	return 0
}

// DetectScalingMode decides strong or weak scaling from runs (one region)
// and the index of the reference in runs, POP-METRICS.md §6: weak when
// every run and the reference have hardware counters and every run's
// instructions per CPU are at least [WeakScalingThreshold] times the
// reference's; otherwise strong (also when a run lacks counters: then only
// the user can say weak). The reason says which rule applied.
func DetectScalingMode(runs []ScalingRun, ref int) (ScalingMode, string) {
	if ref < 0 || ref >= len(runs) {
		return ScalingStrong, "auto: no reference run"
	}
	r := runs[ref]
	if len(runs) < 2 {
		return ScalingStrong, "auto: one run"
	}
	for _, x := range runs {
		if !x.HasCounters || x.Instructions <= 0 || x.CPUs <= 0 {
			return ScalingStrong, "auto: not every run has hardware counters; --mode weak if the problem grows with the resources"
		}
	}
	if r.CPUs <= 0 {
		return ScalingStrong, "auto: reference without CPUs"
	}
	refPerCPU := r.Instructions / float64(r.CPUs)
	lowest := math.Inf(1)
	for i, x := range runs {
		if i == ref {
			continue
		}
		lowest = min(lowest, (x.Instructions/float64(x.CPUs))/refPerCPU)
	}
	if lowest >= WeakScalingThreshold {
		return ScalingWeak, fmt.Sprintf("auto: instructions per CPU ≥ %.2f × the reference's in every run (lowest %.2f)", WeakScalingThreshold, lowest)
	}
	return ScalingStrong, fmt.Sprintf("auto: instructions per CPU fall to %.2f × the reference's, below %.2f", lowest, WeakScalingThreshold)
}

// Scale computes the scaling tables of in (POP-METRICS.md §6). It fails
// only for an unknown mode. Values may exceed 1 (super-linear effects);
// a metric whose inputs are missing or zero is absent.
func Scale(in ScalingInput) (*Scaling, error) {
	mode := in.Mode
	if mode == "" {
		mode = ScalingAuto
	}
	if _, err := ParseScalingMode(string(mode)); err != nil {
		return nil, err
	}
	out := &Scaling{Model: in.Model, Mode: mode}
	if mode != ScalingAuto {
		out.ModeReason = "--mode " + string(mode)
	}
	for k, reg := range in.Regions {
		runs := append([]ScalingRun(nil), reg.Runs...)
		sortRuns(runs)
		ref := referenceIndex(runs, in.Reference)
		if k == 0 && mode == ScalingAuto {
			tr, tref := trusted(runs, ref)
			out.Mode, out.ModeReason = DetectScalingMode(tr, tref)
			if n := len(runs) - len(tr); n > 0 {
				out.ModeReason += fmt.Sprintf("; %d of %d runs without POP metrics in %s", n, len(runs), reg.Name)
			}
		}
		out.Regions = append(out.Regions, scaleRegion(reg.Name, runs, ref, reg.Tree, out.Mode))
	}
	if out.Mode == ScalingAuto { // no regions
		out.Mode, out.ModeReason = ScalingStrong, "auto: no runs"
	}
	return out, nil
}

// trusted returns the runs that are not refused, and ref, an index into
// runs, as an index into them (−1 when the reference is refused).
func trusted(runs []ScalingRun, ref int) ([]ScalingRun, int) {
	out := make([]ScalingRun, 0, len(runs))
	r := -1
	for i, x := range runs {
		if x.Refused != "" {
			continue
		}
		if i == ref {
			r = len(out)
		}
		out = append(out, x)
	}
	return out, r
}

// parallelRoot returns the parallel-efficiency root of a run's metrics.
func parallelRoot(m map[string]float64) (float64, bool) {
	if v, ok := m[IDParallelEfficiency]; ok {
		return v, true
	}
	v, ok := m[IDHybridParallelEfficiency]
	return v, ok
}

// scaleRegion computes the rows of one region.
func scaleRegion(name string, runs []ScalingRun, ref int, tree []ScalingNode, mode ScalingMode) ScalingRegion {
	out := ScalingRegion{Name: name, Runs: runs, Reference: ref}
	n := len(runs)
	newRow := func(id, label string, depth int, kind Kind) *ScalingRow {
		return &ScalingRow{ID: id, Name: label, Depth: depth, Kind: kind, Values: make([]float64, n), Has: make([]bool, n)}
	}
	set := func(r *ScalingRow, i int, v float64, ok bool) {
		if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			r.Values[i], r.Has[i] = v, true
		}
	}
	var rows []*ScalingRow
	add := func(r *ScalingRow) {
		for _, h := range r.Has {
			if h {
				rows = append(rows, r)
				return
			}
		}
	}
	if n == 0 {
		return out
	}
	R := runs[ref]
	weak := mode == ScalingWeak
	cpuRatio := func(x ScalingRun) (float64, bool) { return ratio(float64(x.CPUs), float64(R.CPUs)) }
	counters := func(x ScalingRun) bool { return x.HasCounters && x.Cycles > 0 && x.Instructions > 0 }

	global := newRow(IDGlobalEfficiency, "Global efficiency", 0, KindEfficiency)
	comp := newRow(IDComputationScalability, "Computation scalability", 1, KindEfficiency)
	instr := newRow(IDInstructionScaling, "Instruction scaling", 2, KindEfficiency)
	ipcS := newRow(IDIPCScaling, "IPC scaling", 2, KindEfficiency)
	freqS := newRow(IDFrequencyScaling, "Frequency scaling", 2, KindEfficiency)
	speedup := newRow(IDSpeedup, "Speedup", 0, KindRatio)
	speedEff := newRow(IDSpeedupEfficiency, "Efficiency by speedup", 0, KindEfficiency)
	elapsed := newRow(IDElapsedS, "Elapsed time (s)", 0, KindRatio)
	ipc := newRow(IDIPC, "IPC", 0, KindRatio)
	freq := newRow(IDFrequencyGHz, "Frequency (GHz)", 0, KindFrequency)
	gComp := newRow(IDGPUComputationScalability, "Device computation scalability", 0, KindEfficiency)
	gInstr := newRow(IDGPUInstructionScaling, "Device instruction scaling", 1, KindEfficiency)
	gIPC := newRow(IDGPUIPCScaling, "Device IPC scaling", 1, KindEfficiency)
	gFreq := newRow(IDGPUSMFrequencyScaling, "SM frequency scaling", 1, KindEfficiency)
	gUse := newRow(IDGPUSMUseScaling, "SM use scaling", 1, KindEfficiency)
	gIPCv := newRow(IDGPUIPC, "Device IPC", 0, KindRatio)
	gFreqv := newRow(IDGPUSMFrequencyGHz, "SM frequency (GHz)", 0, KindFrequency)

	if R.Refused != "" {
		return out // every run is refused: no value at all
	}
	for i, x := range runs {
		if x.Refused != "" {
			continue // no value from accounts that do not add up
		}
		cr, crOK := cpuRatio(x)
		cs, csOK := ratio(R.UsefulNS, x.UsefulNS)
		if weak {
			cs, csOK = cs*cr, csOK && crOK
		}
		set(comp, i, cs, csOK)
		if pe, ok := parallelRoot(x.Metrics); ok {
			set(global, i, pe*cs, csOK)
		}
		if counters(x) && counters(R) {
			is, ok := ratio(R.Instructions, x.Instructions)
			if weak {
				is, ok = is*cr, ok && crOK
			}
			set(instr, i, is, ok)
			set(ipcS, i, (x.Instructions/x.Cycles)/(R.Instructions/R.Cycles), true)
			if x.UsefulNS > 0 && R.UsefulNS > 0 {
				set(freqS, i, (x.Cycles/x.UsefulNS)/(R.Cycles/R.UsefulNS), true)
			}
		}
		sp, spOK := ratio(float64(R.ElapsedNS), float64(x.ElapsedNS))
		set(speedup, i, sp, spOK)
		if spOK && crOK && cr > 0 {
			set(speedEff, i, sp/cr, true)
		}
		set(elapsed, i, float64(x.ElapsedNS)/1e9, x.ElapsedNS > 0)
		scaleDevice(x.Device, R.Device, weak, func(r *ScalingRow, v float64, ok bool) { set(r, i, v, ok) },
			gComp, gInstr, gIPC, gFreq, gUse, gIPCv, gFreqv)
		if counters(x) {
			set(ipc, i, x.Instructions/x.Cycles, true)
			if x.UsefulNS > 0 {
				set(freq, i, x.Cycles/x.UsefulNS, true)
			}
		}
	}
	add(global)
	for _, node := range tree {
		r := newRow(node.ID, node.Name, node.Depth+1, KindEfficiency)
		for i, x := range runs {
			v, ok := x.Metrics[node.ID]
			set(r, i, v, ok && x.Refused == "")
		}
		add(r)
	}
	for _, r := range []*ScalingRow{comp, instr, ipcS, freqS, gComp, gInstr, gIPC, gFreq, gUse, speedup, speedEff,
		elapsed, ipc, freq, gIPCv, gFreqv} {
		add(r)
	}
	out.Rows = make([]ScalingRow, len(rows))
	for i, r := range rows {
		out.Rows[i] = *r
	}
	return out
}

// scaleDevice sets one run's device computation scalability and its
// factors against the reference's (POP-METRICS.md §6 applied to the
// device, DeviceWork): weak scaling counts instructions per GPU and scales
// the computation scalability by N/N_ref, as the host's by CPUs.
func scaleDevice(x, ref *DeviceWork, weak bool, set func(*ScalingRow, float64, bool), comp, instr, ipcS, freqS, useS, ipc, freq *ScalingRow) {
	if x == nil || x.Devices == 0 {
		return
	}
	if v, ok := x.IPC(); ok {
		set(ipc, v, true)
	}
	if v, ok := x.SMFrequencyGHz(); ok {
		set(freq, v, true)
	}
	if ref == nil || ref.Devices == 0 || !(x.UsefulNS > 0) || !(ref.UsefulNS > 0) {
		return
	}
	nr := float64(x.Devices) / float64(ref.Devices)
	cs := ref.UsefulNS / x.UsefulNS
	if weak {
		cs *= nr
	}
	set(comp, cs, true)
	if !x.HasCounters || !ref.HasCounters || !(x.Instructions > 0) || !(ref.Instructions > 0) {
		return
	}
	is := ref.Instructions / x.Instructions
	if weak {
		is *= nr
	}
	set(instr, is, true)
	a, okA := x.IPC()
	b, okB := ref.IPC()
	if okA && okB {
		set(ipcS, a/b, true)
	}
	fa, okA := x.SMFrequencyGHz()
	fb, okB := ref.SMFrequencyGHz()
	if okA && okB {
		set(freqS, fa/fb, true)
	}
	ua, okA := x.SMUse()
	ub, okB := ref.SMUse()
	if okA && okB {
		set(useS, ua/ub, true)
	}
}
