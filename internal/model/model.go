// Package model predicts how a program scales from a few of its runs and
// finds the parts that will not scale: BSC basicanalysis's projections of
// the POP factors (amdahl, pipe and linear fits, composed into a runtime),
// Amdahl's law fitted to the runtime, a component model after RAT
// (instructions, IPC, frequency, load balance and the rest of the time,
// each with its own growth law; point-to-point and collective costs from
// message sizes) and the kernel list (regions and MPI calls above a
// time share, and those whose time per process does not fall with the
// CPUs). It is pure: callers build the [Point]s from their runs
// (internal/cli does it for `popmon model`, internal/pages may do it for
// its charts) and render the [Result]. docs/model.md describes the models.
package model

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Curve ids ([Curve.ID]), stable for scripts reading `popmon model -o json`.
const (
	CurveFactorsAmdahl = "factors-amdahl"
	CurveFactorsPipe   = "factors-pipe"
	CurveFactorsLinear = "factors-linear"
	CurveRuntimeAmdahl = "runtime-amdahl"
	CurveComponents    = "components"
)

// Model names accepted in [Options.Models]: the three projections, the
// runtime Amdahl ("runtime-amdahl" or "runtime") and "components".
const (
	ModelRuntime    = "runtime"
	ModelComponents = "components"
)

// Factor ids with a special role in the runtime composition.
const (
	IDParallelEfficiency  = "parallel_efficiency"
	IDLoadBalance         = "mpi_load_balance"
	IDCommEfficiency      = "mpi_communication_efficiency"
	IDCompScalability     = "computation_scalability"
	IDGlobalEfficiency    = "global_efficiency"
	DefaultThreshold      = 0.05
	nonScalableExponent   = -0.1
	nonScalableMinShare   = 0.001
	firstSigma            = 0.1
	defaultComposeEpsilon = 1e-6
)

// Point is one run of the experiment, as the models need it. Times are in
// seconds.
type Point struct {
	// CPUs is x, the resources the projections are functions of (MPI
	// ranks × threads per rank; the processes for pure MPI).
	CPUs int `json:"cpus"`
	// Processes is the number of processes (MPI ranks).
	Processes int `json:"processes"`
	// Label and Source name the run ("4xMPI 1xOpenMP", its file).
	Label  string `json:"label"`
	Source string `json:"source"`
	// Reference marks the run the scalability factors are relative to
	// (POP-METRICS.md §6); at most one. Without one the first fitted run
	// is the reference.
	Reference bool `json:"reference,omitempty"`
	// ElapsedS is the runtime T.
	ElapsedS float64 `json:"elapsed_s"`
	// UsefulS is ΣU, the useful time summed over CPUs.
	UsefulS float64 `json:"useful_s"`
	// UsefulMaxS is the largest useful time of one process per CPU
	// (max over processes of U_i / CPUs_i); 0 when unknown (TALP files).
	UsefulMaxS float64 `json:"useful_max_s,omitempty"`
	// Factors are the POP factors of the run as fractions, by metric id
	// (POP-METRICS.md §9): its own efficiencies and the scalability
	// factors relative to the reference (computation_scalability,
	// instruction_scaling, ipc_scaling, frequency_scaling,
	// global_efficiency).
	Factors map[string]float64 `json:"factors"`
	// Instructions and Cycles are Σ over useful time; used only when
	// HasCounters.
	Instructions float64 `json:"instructions,omitempty"`
	Cycles       float64 `json:"cycles,omitempty"`
	HasCounters  bool    `json:"has_counters"`
	// Parts are the candidate kernels of the run: useful computation,
	// user regions and MPI calls, with their mean time per process.
	Parts []Part `json:"parts,omitempty"`
	// Calls is the run's MPI call profile (for the communication fits).
	Calls []Call `json:"calls,omitempty"`
	// Trace holds the samples of the run's event trace
	// ([SamplesFromTrace]); nil without a trace. When the fitted runs
	// have traces, the communication fits use them instead of Calls.
	Trace *TraceSamples `json:"-"`
}

// Part kinds ([Part.Kind]).
const (
	PartUseful = "useful"
	PartRegion = "region"
	PartMPI    = "mpi"
)

// Part is a candidate kernel of one run.
type Part struct {
	// Kind is PartUseful, PartRegion or PartMPI.
	Kind string `json:"kind"`
	// Name is "useful computation", the region name or the MPI call.
	Name string `json:"name"`
	// PerProcessS is the mean time per process in it (useful: per CPU).
	PerProcessS float64 `json:"per_process_s"`
}

// Call is one MPI call kind of a run's profile (measure.MPICall).
type Call struct {
	// Name is the C name ("MPI_Bcast").
	Name string `json:"name"`
	// Calls and TimeS are summed over processes.
	Calls int64   `json:"calls"`
	TimeS float64 `json:"time_s"`
	// BytesSent and BytesRecv are summed over processes; both 0 when the
	// measurement has no byte accounting.
	BytesSent int64 `json:"bytes_sent,omitempty"`
	BytesRecv int64 `json:"bytes_recv,omitempty"`
}

// FactorInfo names a factor to fit, in display order.
type FactorInfo struct {
	// ID is the metric id, Name its label; Depth its indentation.
	ID    string `json:"id"`
	Name  string `json:"name"`
	Depth int    `json:"depth"`
}

// Options control [Fit].
type Options struct {
	// Models selects the models: "amdahl", "pipe", "linear" (the factor
	// projections), "runtime" (Amdahl on the runtime), "components";
	// empty or "all": every one.
	Models []string
	// Holdout are CPU counts of runs left out of every fit, to be
	// predicted and compared with their measurements.
	Holdout []int
	// Predict are further CPU counts to predict.
	Predict []int
	// Threshold is the time share above which a part is a key kernel
	// (default DefaultThreshold).
	Threshold float64
	// Weak says the runs are a weak-scaling study (the factors' and the
	// runtime's formulas differ; runtime Amdahl does not apply).
	Weak bool
	// Factors lists the factors to fit, in display order; empty: every
	// factor id that all fitted runs have, sorted.
	Factors []FactorInfo
	// Notes are the caller's sentences for Result.Notes (e.g. traces
	// that could not be read).
	Notes []string
}

// Result is the outcome of [Fit].
type Result struct {
	// Mode is "strong" or "weak".
	Mode string `json:"mode"`
	// Reference is the CPUs of the reference run, ReferenceTimeS its
	// runtime (speedups are relative to it).
	Reference      int     `json:"reference_cpus"`
	ReferenceTimeS float64 `json:"reference_time_s"`
	// Fitted and Holdout are the CPUs of the runs fitted and left out.
	Fitted  []int `json:"fitted_cpus"`
	Holdout []int `json:"holdout_cpus"`
	// Points are the runs, sorted by CPUs.
	Points []Point `json:"-"`
	// Factors are the factor projections (one per projection and factor).
	Factors []FactorFit `json:"factor_fits"`
	// Curves are the runtime models, evaluable at any CPU count.
	Curves []*Curve `json:"curves"`
	// Components is the component model's detail (nil when not asked or
	// impossible; Curves then says why).
	Components *Components `json:"components,omitempty"`
	// Predictions are per CPU count of Holdout and Predict, ascending.
	Predictions []Prediction `json:"predictions"`
	// Kernels are the parts of the runs with their trend, flagged ones
	// first.
	Kernels []Kernel `json:"kernels"`
	// Threshold is the key-kernel time share used.
	Threshold float64 `json:"threshold"`
	// Notes are assumptions and missing data that concern the whole
	// result, one sentence each.
	Notes []string `json:"notes,omitempty"`
}

// FactorFit is one projection of one factor.
type FactorFit struct {
	// Projection is "amdahl", "pipe" or "linear"; Factor the metric id.
	Projection Projection `json:"projection"`
	Factor     string     `json:"factor"`
	Name       string     `json:"name"`
	// Depth is the factor's depth in the efficiency tree.
	Depth int `json:"depth"`
	// X0 and F are the fitted parameters (X0 in percent, as
	// basicanalysis fits the factors in percent; F ∈ [0, 1]).
	X0 float64 `json:"x0"`
	F  float64 `json:"f"`
	// R2 is the fit's R² on the fitted runs (NaN: undefined).
	R2 Num `json:"r2"`
	// Measured are the factor values (fractions) of all runs by CPUs.
	Measured map[int]float64 `json:"-"`
}

// At returns the projected factor (a fraction) at x CPUs.
func (f FactorFit) At(x float64) float64 { return f.Projection.Eval(x, f.X0, f.F) / 100 }

// Curve is a runtime model: T(x) for any CPU count x.
type Curve struct {
	// ID is a Curve* id; Name a human label.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Params are the fitted parameters by name (e.g. "s" for
	// runtime-amdahl).
	Params map[string]float64 `json:"params,omitempty"`
	// R2 is R² of the runtime on the fitted runs.
	R2 Num `json:"r2"`
	// LOORelErr is the leave-one-out error: the root mean square of the
	// relative errors of predicting each fitted run (other than the
	// reference) from a fit of the others; NaN with fewer than 3 runs.
	LOORelErr Num `json:"loo_rel_err"`
	// Assumptions say what the model assumed, one sentence each.
	Assumptions []string `json:"assumptions"`
	// Err, when not empty, says why the model could not be fitted; the
	// curve then has no values.
	Err string `json:"error,omitempty"`

	t    func(x float64) float64
	tRef float64
}

// OK reports whether the curve was fitted.
func (c *Curve) OK() bool { return c != nil && c.t != nil }

// Time returns the predicted runtime in seconds at x CPUs (NaN when the
// curve was not fitted).
func (c *Curve) Time(x float64) float64 {
	if !c.OK() {
		return math.NaN()
	}
	return c.t(x)
}

// Speedup returns the predicted speedup over the reference run's
// measured runtime at x CPUs.
func (c *Curve) Speedup(x float64) float64 { return c.tRef / c.Time(x) }

// Prediction is every curve's prediction at one CPU count.
type Prediction struct {
	// CPUs is x.
	CPUs int `json:"cpus"`
	// MeasuredS is the measured runtime of a held-out run (NaN: none).
	MeasuredS Num `json:"measured_s"`
	// Models holds one entry per fitted curve.
	Models []ModelPrediction `json:"models"`
	// MinS and MaxS are the spread of the curves' predictions.
	MinS Num `json:"min_s"`
	MaxS Num `json:"max_s"`
}

// ModelPrediction is one curve's prediction at one CPU count.
type ModelPrediction struct {
	// Curve is the curve id.
	Curve string `json:"curve"`
	// TimeS is the predicted runtime, ErrS its uncertainty: the curve's
	// leave-one-out relative error times TimeS (NaN: unknown).
	TimeS Num `json:"time_s"`
	ErrS  Num `json:"uncertainty_s"`
	// Speedup is over the reference run's measured runtime.
	Speedup Num `json:"speedup"`
	// RelErr is (predicted − measured)/measured for a held-out run.
	RelErr Num `json:"rel_err"`
}

// Num is a float64 that encodes NaN and infinities as JSON null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(fmt.Sprintf("%.10g", f)), nil
}

// Valid reports whether n is a finite number.
func (n Num) Valid() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// Fit fits the selected models to points (at least 3 runs of one program
// at different CPU counts after removing opt.Holdout; of several runs with
// the same CPU count it uses the reference or else the last one, and says
// so in Result.Notes) and predicts the runtime at the held-out and
// requested CPU counts. Result.Curves are evaluable at any x:
// Curve.Time(x) and Curve.Speedup(x) give the chart's lines, Predictions
// the points with their uncertainty, Kernels the parts that will not
// scale.
func Fit(points []Point, opt Options) (*Result, error) {
	if opt.Threshold <= 0 {
		opt.Threshold = DefaultThreshold
	}
	sel, err := selectModels(opt.Models)
	if err != nil {
		return nil, err
	}
	pts, dupNotes := onePerCPUs(points)
	held := map[int]bool{}
	for _, h := range opt.Holdout {
		held[h] = true
	}
	var fit []Point
	found := map[int]bool{}
	for _, p := range pts {
		if p.CPUs <= 0 || !(p.ElapsedS > 0) {
			return nil, fmt.Errorf("run %s: needs CPUs and a runtime > 0", p.Source)
		}
		found[p.CPUs] = true
		if !held[p.CPUs] {
			fit = append(fit, p)
		}
	}
	for _, h := range opt.Holdout {
		if !found[h] {
			return nil, fmt.Errorf("holdout %d: no run has %d CPUs", h, h)
		}
	}
	if len(fit) < 3 {
		return nil, fmt.Errorf("%d runs left to fit: the models need at least 3 runs at different CPU counts", len(fit))
	}
	ref := fit[0]
	for _, p := range pts {
		if p.Reference {
			ref = p
		}
	}
	r := &Result{Mode: "strong", Reference: ref.CPUs, ReferenceTimeS: ref.ElapsedS, Points: pts,
		Threshold: opt.Threshold, Fitted: cpusOf(fit), Holdout: []int{}}
	if opt.Weak {
		r.Mode = "weak"
	}
	for _, p := range pts {
		if held[p.CPUs] {
			r.Holdout = append(r.Holdout, p.CPUs)
		}
	}
	r.Notes = append(append(r.Notes, opt.Notes...), dupNotes...)
	if held[ref.CPUs] {
		r.Notes = append(r.Notes, fmt.Sprintf("the reference run (%d CPUs) is held out: the factors stay relative to it, the fits do not use it", ref.CPUs))
	}
	factors := opt.Factors
	if len(factors) == 0 {
		factors = commonFactors(fit)
	}
	ctx := &fitContext{uRef: ref.UsefulS, cRef: float64(ref.CPUs), weak: opt.Weak}
	for _, proj := range Projections {
		if !sel[string(proj)] {
			continue
		}
		for _, fi := range factors {
			ff, ok := fitFactor(proj, fi, fit)
			if !ok {
				continue
			}
			ff.Measured = map[int]float64{}
			for _, p := range pts {
				if v, ok := p.Factors[fi.ID]; ok {
					ff.Measured[p.CPUs] = v
				}
			}
			r.Factors = append(r.Factors, ff)
		}
		r.Curves = append(r.Curves, fitCurve(fit, ref.ElapsedS, func(f []Point) (*Curve, error) { return factorCurve(ctx, proj, f) }))
	}
	if sel[ModelRuntime] {
		r.Curves = append(r.Curves, fitCurve(fit, ref.ElapsedS, func(f []Point) (*Curve, error) { return runtimeAmdahl(ctx, f) }))
	}
	if sel[ModelComponents] {
		r.Curves = append(r.Curves, fitCurve(fit, ref.ElapsedS, func(f []Point) (*Curve, error) { return componentCurve(f) }))
		if c, err := fitComponents(fit); err == nil {
			c.addHoldout(pts, held)
			r.Components = c
		}
	}
	r.Predictions = predictions(r, pts, held, opt.Predict)
	r.Kernels = kernels(pts, opt.Threshold)
	return r, nil
}

// onePerCPUs sorts the points by CPUs and keeps one per CPU count: the
// reference if it is among them, else the last one given (the latest in a
// scaling table, which sorts runs of equal CPUs by time). It says which
// runs it left out.
func onePerCPUs(points []Point) ([]Point, []string) {
	pts := append([]Point(nil), points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].CPUs < pts[j].CPUs })
	var out []Point
	var notes []string
	for i := 0; i < len(pts); {
		j := i
		keep := i
		for ; j < len(pts) && pts[j].CPUs == pts[i].CPUs; j++ {
			if pts[j].Reference || !pts[keep].Reference {
				keep = j
			}
		}
		for k := i; k < j; k++ {
			if k != keep {
				notes = append(notes, fmt.Sprintf("%s has %d CPUs like %s: the models use %s only", pts[k].Source, pts[k].CPUs, pts[keep].Source, pts[keep].Source))
			}
		}
		out = append(out, pts[keep])
		i = j
	}
	return out, notes
}

// selectModels parses Options.Models.
func selectModels(models []string) (map[string]bool, error) {
	all := []string{string(ProjAmdahl), string(ProjPipe), string(ProjLinear), ModelRuntime, ModelComponents}
	sel := map[string]bool{}
	if len(models) == 0 {
		models = []string{"all"}
	}
	for _, m := range models {
		switch m {
		case "all":
			for _, a := range all {
				sel[a] = true
			}
		case string(ProjAmdahl), string(ProjPipe), string(ProjLinear), ModelComponents:
			sel[m] = true
		case ModelRuntime, CurveRuntimeAmdahl:
			sel[ModelRuntime] = true
		default:
			return nil, fmt.Errorf("unknown model %q: use amdahl, pipe, linear, runtime, components or all", m)
		}
	}
	return sel, nil
}

func cpusOf(pts []Point) []int {
	out := make([]int, len(pts))
	for i, p := range pts {
		out[i] = p.CPUs
	}
	return out
}

// commonFactors returns the factor ids every point has, sorted.
func commonFactors(pts []Point) []FactorInfo {
	var out []FactorInfo
	for id := range pts[0].Factors {
		all := true
		for _, p := range pts[1:] {
			if _, ok := p.Factors[id]; !ok {
				all = false
			}
		}
		if all {
			out = append(out, FactorInfo{ID: id, Name: id})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// weights returns basicanalysis's "--sigma first" weights 1/σ²: σ = 0.1
// for the smallest run, 1 for the others.
func weights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	w[0] = 1 / (firstSigma * firstSigma)
	return w
}

// fitFactor fits one projection to one factor over the fitted points (in
// percent, as basicanalysis does); ok is false when a point lacks it.
func fitFactor(proj Projection, fi FactorInfo, fit []Point) (FactorFit, bool) {
	xs := make([]float64, len(fit))
	ys := make([]float64, len(fit))
	for i, p := range fit {
		v, ok := p.Factors[fi.ID]
		if !ok || math.IsNaN(v) {
			return FactorFit{}, false
		}
		xs[i], ys[i] = float64(p.CPUs), v*100
	}
	x0, f := fitProjection(proj, xs, ys, weights(len(xs)))
	pred := make([]float64, len(xs))
	for i, x := range xs {
		pred[i] = proj.Eval(x, x0, f)
	}
	return FactorFit{Projection: proj, Factor: fi.ID, Name: fi.Name, Depth: fi.Depth, X0: x0, F: f, R2: Num(rSquared(ys, pred))}, true
}

// fitContext holds what the runtime compositions need of the reference.
type fitContext struct {
	uRef, cRef float64
	weak       bool
}

// fitCurve fits a curve with fitter and adds its R² and leave-one-out
// error; a fitter's error becomes the curve's Err.
func fitCurve(fit []Point, tRef float64, fitter func([]Point) (*Curve, error)) *Curve {
	c, err := fitter(fit)
	if err != nil {
		c.Err = err.Error()
		c.R2, c.LOORelErr = Num(math.NaN()), Num(math.NaN())
		return c
	}
	c.tRef = tRef
	ys := make([]float64, len(fit))
	pred := make([]float64, len(fit))
	for i, p := range fit {
		ys[i], pred[i] = p.ElapsedS, c.t(float64(p.CPUs))
	}
	c.R2 = Num(rSquared(ys, pred))
	var sum float64
	n := 0
	for i := 1; i < len(fit) && len(fit) >= 3; i++ {
		rest := append(append([]Point(nil), fit[:i]...), fit[i+1:]...)
		lc, err := fitter(rest)
		if err != nil {
			continue
		}
		e := lc.t(float64(fit[i].CPUs))/fit[i].ElapsedS - 1
		if math.IsNaN(e) || math.IsInf(e, 0) {
			continue
		}
		sum += e * e
		n++
	}
	c.LOORelErr = Num(math.NaN())
	if n > 0 {
		c.LOORelErr = Num(math.Sqrt(sum / float64(n)))
	}
	return c
}

// composable reports whether parallel_efficiency is the product of the
// MPI load balance and communication efficiency in every point (pure MPI
// runs), so that the runtime can compose their projections as
// basicanalysis plots para(x) = load(x)·comm(x).
func composable(fit []Point) bool {
	for _, p := range fit {
		pe, ok1 := p.Factors[IDParallelEfficiency]
		lb, ok2 := p.Factors[IDLoadBalance]
		ce, ok3 := p.Factors[IDCommEfficiency]
		if !ok1 || !ok2 || !ok3 || math.Abs(pe-lb*ce) > defaultComposeEpsilon {
			return false
		}
	}
	return true
}

// factorCurve composes a projection of the factors into a runtime:
// T(x) = ΣU_ref / (x·GE(x)) in strong scaling (ΣU_ref / (C_ref·GE(x)) in
// weak scaling), with GE(x) = LB(x)·CommE(x)·CompScal(x) (or the
// projected parallel efficiency times CompScal(x) when the tree is not
// pure MPI).
func factorCurve(ctx *fitContext, proj Projection, fit []Point) (*Curve, error) {
	c := &Curve{ID: "factors-" + string(proj), Name: "factor projection (" + string(proj) + ")", Params: map[string]float64{}}
	c.Assumptions = []string{
		fmt.Sprintf("each POP factor follows %s (basicanalysis), fitted in percent with f in [0,1] and the smallest run weighted 100 times (sigma 0.1)", projFormula(proj)),
	}
	var ids []string
	if composable(fit) {
		ids = []string{IDLoadBalance, IDCommEfficiency, IDCompScalability}
		c.Assumptions = append(c.Assumptions, "T(x) = ΣU_ref / (x·LB(x)·CommE(x)·CompScal(x))")
	} else {
		ids = []string{IDParallelEfficiency, IDCompScalability}
		c.Assumptions = append(c.Assumptions, "T(x) = ΣU_ref / (x·PE(x)·CompScal(x)), the parallel efficiency projected as a whole (not a pure MPI tree)")
	}
	if ctx.weak {
		c.Assumptions[len(c.Assumptions)-1] = "weak scaling: T(x) = ΣU_ref / (C_ref·GE(x)), GE the product of the projected factors"
	}
	var fits []FactorFit
	for _, id := range ids {
		ff, ok := fitFactor(proj, FactorInfo{ID: id, Name: id}, fit)
		if !ok {
			return c, fmt.Errorf("the runs lack %s (computation scalability needs useful times; LB and CommE an MPI run)", id)
		}
		c.Params[id+".x0"] = ff.X0
		c.Params[id+".f"] = ff.F
		fits = append(fits, ff)
	}
	if !(ctx.uRef > 0) {
		return c, errors.New("the reference run has no useful time")
	}
	uRef, cRef, weak := ctx.uRef, ctx.cRef, ctx.weak
	c.t = func(x float64) float64 {
		ge := 1.0
		for _, f := range fits {
			ge *= f.At(x)
		}
		if weak {
			return uRef / (cRef * ge)
		}
		return uRef / (x * ge)
	}
	return c, nil
}

func projFormula(p Projection) string {
	switch p {
	case ProjPipe:
		return "pipe x0·x/((1−f)+f·(2x−1))"
	case ProjLinear:
		return "linear x0+f·x"
	}
	return "amdahl x0/(f+(1−f)·x)"
}

// runtimeAmdahl fits Amdahl's law to the runtime anchored at the smallest
// fitted run: T(x) = T0·(s + (1−s)/x) / (s + (1−s)/x0) (T0 = T1·(s + (1−s))
// when x0 = 1), s ∈ [0, 1] minimising the squared relative errors.
func runtimeAmdahl(ctx *fitContext, fit []Point) (*Curve, error) {
	c := &Curve{ID: CurveRuntimeAmdahl, Name: "Amdahl on the runtime", Params: map[string]float64{}}
	c.Assumptions = []string{"T(x) = T1·(s + (1−s)/x): a serial fraction s that no CPU speeds up, the rest perfectly parallel, anchored at the smallest fitted run's measured time; s minimises the squared relative errors"}
	if ctx.weak {
		return c, errors.New("these runs are weak scaling, and Amdahl's law is a strong-scaling model")
	}
	t0, x0 := fit[0].ElapsedS, float64(fit[0].CPUs)
	shape := func(s, x float64) float64 { return s + (1-s)/x }
	s := minimize01(func(s float64) float64 {
		var sse float64
		for _, p := range fit {
			e := t0*shape(s, float64(p.CPUs))/shape(s, x0)/p.ElapsedS - 1
			sse += e * e
		}
		return sse
	})
	t1 := t0 / shape(s, x0)
	c.Params["s"] = s
	c.Params["t1_s"] = t1
	c.t = func(x float64) float64 { return t1 * shape(s, x) }
	return c, nil
}
