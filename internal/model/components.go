package model

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/popmon/popmon/internal/trace"
)

// Law is a growth law y(x) = a + b·g(x) of a component over x CPUs.
type Law string

// The growth laws the component model chooses from.
const (
	LawConst  Law = "const"
	LawLog    Law = "log2"
	LawSqrt   Law = "sqrt"
	LawLinear Law = "linear"
)

// Laws lists the growth laws, simplest first (ties go to the simpler).
var Laws = []Law{LawConst, LawLog, LawSqrt, LawLinear}

// g returns the law's function of x.
func (l Law) g(x float64) float64 {
	switch l {
	case LawLog:
		return math.Log2(x)
	case LawSqrt:
		return math.Sqrt(x)
	case LawLinear:
		return x
	}
	return 0
}

// LawFit is a fitted growth law.
type LawFit struct {
	// Law is the growth law; A and B its coefficients: y = A + B·g(x).
	Law Law     `json:"law"`
	A   float64 `json:"a"`
	B   float64 `json:"b"`
	// R2 is R² on the fitted runs; LOORelErr the root mean square
	// relative error of leave-one-out predictions, the criterion the law
	// was chosen by.
	R2        Num `json:"r2"`
	LOORelErr Num `json:"loo_rel_err"`
}

// At returns the law's value at x.
func (f LawFit) At(x float64) float64 { return f.A + f.B*f.Law.g(x) }

// fitLaw fits y = a + b·g(x) by least squares (const: the mean).
func fitLaw(l Law, xs, ys []float64) LawFit {
	if l == LawConst {
		var m float64
		for _, y := range ys {
			m += y
		}
		return LawFit{Law: l, A: m / float64(len(ys))}
	}
	X := make([][]float64, len(xs))
	for i, x := range xs {
		X[i] = []float64{1, l.g(x)}
	}
	c, ok := linearLS(X, ys, nil)
	if !ok {
		return LawFit{Law: l, A: math.NaN(), B: math.NaN()}
	}
	return LawFit{Law: l, A: c[0], B: c[1]}
}

// chooseLaw fits every law to (xs, ys) and returns the one with the
// smallest leave-one-out error (all laws, with their errors, in all).
func chooseLaw(xs, ys []float64) (best LawFit, all []LawFit) {
	bestErr := math.Inf(1)
	for _, l := range Laws {
		f := fitLaw(l, xs, ys)
		pred := make([]float64, len(xs))
		for i, x := range xs {
			pred[i] = f.At(x)
		}
		f.R2 = Num(rSquared(ys, pred))
		var sum float64
		n := 0
		for i := range xs {
			rx := append(append([]float64(nil), xs[:i]...), xs[i+1:]...)
			ry := append(append([]float64(nil), ys[:i]...), ys[i+1:]...)
			lf := fitLaw(l, rx, ry)
			if ys[i] == 0 {
				continue
			}
			e := lf.At(xs[i])/ys[i] - 1
			if math.IsNaN(e) {
				continue
			}
			sum += e * e
			n++
		}
		f.LOORelErr = Num(math.NaN())
		if n > 0 {
			f.LOORelErr = Num(math.Sqrt(sum / float64(n)))
		}
		all = append(all, f)
		if e := float64(f.LOORelErr); n > 0 && e < bestErr-1e-12 {
			best, bestErr = f, e
		}
	}
	if math.IsInf(bestErr, 1) {
		best = all[0]
	}
	return best, all
}

// Component ids ([Component.ID]).
const (
	CompInstructions = "instructions"
	CompUseful       = "useful_s"
	CompIPC          = "ipc"
	CompFrequency    = "frequency_hz"
	CompLoadBalance  = "load_balance"
	CompRest         = "non_useful_s"
)

// Component is one input of the component model with its growth law.
type Component struct {
	// ID is a Comp* id; Name a label.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Fit is the chosen law; Candidates all laws tried (nil for a
	// component held constant).
	Fit        LawFit   `json:"fit"`
	Candidates []LawFit `json:"candidates,omitempty"`
	// Constant says the component is held at its value in the largest
	// fitted run rather than extrapolated.
	Constant bool `json:"held_constant,omitempty"`
	// Measured are its values by CPUs (all runs).
	Measured map[int]float64 `json:"-"`
	// Holdout compares prediction and measurement at the held-out runs.
	Holdout []HoldoutValue `json:"holdout,omitempty"`
}

// HoldoutValue is a component's prediction and measurement at a held-out
// run.
type HoldoutValue struct {
	CPUs      int     `json:"cpus"`
	Predicted float64 `json:"predicted"`
	Measured  float64 `json:"measured"`
	RelErr    float64 `json:"rel_err"`
}

// Components is the component model: after RAT, the runtime is the
// useful time of the slowest process, ΣU(x)/(x·LB(x)) with
// ΣU = I(x)/(IPC·F), plus the rest of the time (communication,
// synchronisation, other), T(x) − U_max(x), each with its growth law.
type Components struct {
	// Parts are the components in order: instructions (or useful time
	// without counters), IPC, frequency, load balance, the rest.
	Parts []Component `json:"parts"`
	// Comm are the communication cost fits from message sizes.
	Comm CommFits `json:"communication"`
	// Assumptions say what the model assumed.
	Assumptions []string `json:"assumptions"`
}

// Part returns the component with id, or nil.
func (c *Components) Part(id string) *Component {
	for i := range c.Parts {
		if c.Parts[i].ID == id {
			return &c.Parts[i]
		}
	}
	return nil
}

// componentValues returns the per-run values of the model's inputs.
func componentValues(p Point) map[string]float64 {
	v := map[string]float64{CompUseful: p.UsefulS}
	if p.HasCounters && p.Cycles > 0 && p.UsefulS > 0 {
		v[CompInstructions] = p.Instructions
		v[CompIPC] = p.Instructions / p.Cycles
		v[CompFrequency] = p.Cycles / p.UsefulS
	}
	if p.UsefulMaxS > 0 {
		v[CompLoadBalance] = p.UsefulS / (float64(p.CPUs) * p.UsefulMaxS)
		v[CompRest] = p.ElapsedS - p.UsefulMaxS
	}
	return v
}

// fitComponents fits the component model to the fitted points.
func fitComponents(fit []Point) (*Components, error) {
	counters := true
	for _, p := range fit {
		v := componentValues(p)
		if _, ok := v[CompLoadBalance]; !ok {
			return nil, errors.New("needs each process's useful time (popmon measurements in full form, or traces; DLB/TALP files and summarized measurements lack it)")
		}
		if _, ok := v[CompIPC]; !ok {
			counters = false
		}
	}
	xs := make([]float64, len(fit))
	for i, p := range fit {
		xs[i] = float64(p.CPUs)
	}
	series := func(id string) []float64 {
		ys := make([]float64, len(fit))
		for i, p := range fit {
			ys[i] = componentValues(p)[id]
		}
		return ys
	}
	c := &Components{}
	law := func(id, name string) {
		best, all := chooseLaw(xs, series(id))
		c.Parts = append(c.Parts, Component{ID: id, Name: name, Fit: best, Candidates: all})
	}
	last := len(fit) - 1
	held := func(id, name string) {
		v := series(id)[last]
		c.Parts = append(c.Parts, Component{ID: id, Name: name, Constant: true, Fit: LawFit{Law: LawConst, A: v, R2: Num(math.NaN()), LOORelErr: Num(math.NaN())}})
	}
	if counters {
		law(CompInstructions, "instructions (useful, all CPUs)")
		held(CompIPC, "IPC")
		held(CompFrequency, "frequency (Hz)")
		c.Assumptions = append(c.Assumptions,
			fmt.Sprintf("ΣU(x) = I(x)/(IPC·F): instructions grow by the law with the smallest leave-one-out error among const, log2 x, √x and x; IPC and frequency are held constant at their values with %d CPUs (not extrapolated: memory and clock effects at larger x are not modelled)", fit[last].CPUs))
	} else {
		law(CompUseful, "useful time ΣU (s)")
		c.Assumptions = append(c.Assumptions, "no hardware counters in every run: ΣU(x) is extrapolated directly by the law with the smallest leave-one-out error (instructions, IPC and frequency cannot be separated)")
	}
	law(CompLoadBalance, "load balance ΣU/(x·U_max)")
	law(CompRest, "non-useful time of the slowest process T − U_max (s)")
	c.Assumptions = append(c.Assumptions,
		"T(x) = ΣU(x)/(x·LB(x)) + (T − U_max)(x): the useful time of the slowest process plus the rest of its time (communication, waiting, other), each part by its own growth law; the extrapolated LB is kept within [0.01, 1] and the times at or above 0")
	return c, nil
}

// eval returns the component model's runtime at x.
func (c *Components) eval(x float64) float64 {
	var u float64
	if p := c.Part(CompInstructions); p != nil {
		u = p.Fit.At(x) / (c.Part(CompIPC).Fit.A * c.Part(CompFrequency).Fit.A)
	} else {
		u = c.Part(CompUseful).Fit.At(x)
	}
	lb := math.Min(1, math.Max(minLoadBalance, c.Part(CompLoadBalance).Fit.At(x)))
	return math.Max(0, u)/(x*lb) + math.Max(0, c.Part(CompRest).Fit.At(x))
}

// minLoadBalance is the floor of the extrapolated load balance (a linear
// law falls below 0 far enough out); the ceiling is 1.
const minLoadBalance = 0.01

// componentCurve is the component model as a runtime curve.
func componentCurve(fit []Point) (*Curve, error) {
	cur := &Curve{ID: CurveComponents, Name: "components (RAT)", Params: map[string]float64{}}
	c, err := fitComponents(fit)
	if err != nil {
		return cur, err
	}
	cur.Assumptions = c.Assumptions
	for _, p := range c.Parts {
		cur.Params[p.ID+"."+string(p.Fit.Law)+".a"] = p.Fit.A
		if p.Fit.Law != LawConst {
			cur.Params[p.ID+"."+string(p.Fit.Law)+".b"] = p.Fit.B
		}
	}
	cur.t = c.eval
	return cur, nil
}

// addHoldout records the measured values of every component and the
// prediction errors at the held-out runs, and fits the communication
// costs from all runs (held-out ones too: like the kernel list, these fits
// describe the measurements, and the runtime does not use them).
func (c *Components) addHoldout(pts []Point, held map[int]bool) {
	for i := range c.Parts {
		comp := &c.Parts[i]
		comp.Measured = map[int]float64{}
		for _, p := range pts {
			v, ok := componentValues(p)[comp.ID]
			if !ok {
				continue
			}
			comp.Measured[p.CPUs] = v
			if held[p.CPUs] {
				pred := comp.Fit.At(float64(p.CPUs))
				comp.Holdout = append(comp.Holdout, HoldoutValue{CPUs: p.CPUs, Predicted: pred, Measured: v, RelErr: pred/v - 1})
			}
		}
	}
	c.Comm = fitComm(pts)
}

// CommFits are the communication cost models fitted from the runs' call
// profiles: T_p2p = a·S^b + c per protocol regime and
// T_coll = a·log2 x + b·S + c, S the mean bytes per call.
type CommFits struct {
	// Fits are the fits made (absent when data are missing).
	Fits []CommFit `json:"fits"`
	// Missing says what data the fits lack, when they lack any.
	Missing string `json:"missing,omitempty"`
}

// CommFit is one communication cost fit.
type CommFit struct {
	// ID is "p2p-eager", "p2p-rendezvous" or "collective".
	ID string `json:"id"`
	// Formula says what was fitted; A, B and C its coefficients (seconds
	// and bytes).
	Formula string  `json:"formula"`
	A       float64 `json:"a"`
	B       float64 `json:"b"`
	C       float64 `json:"c"`
	// R2 is R² of the per-call times (weighted by call counts in the
	// fit, unweighted in R²); N the number of samples (call kind × run).
	R2 Num `json:"r2"`
	N  int `json:"samples"`
}

// EagerLimit is the message size from which point-to-point messages are
// taken to use the rendezvous protocol (32 KiB, Dimemas's and most MPI
// libraries' default on shared memory).
const EagerLimit = 32 << 10

// commCall classifies an MPI call for the communication models by
// trace.CallKind, the one classification of MPI calls: point-to-point
// (blocking or not, Sendrecv included), or a blocking collective that moves
// data over the whole communicator (not MPI_Barrier, which moves none, nor
// the neighbourhood collectives, whose cost follows the topology rather
// than log2 x).
func commCall(name string) (p2p, coll bool) {
	kind, op := trace.CallKind(name)
	switch kind {
	case trace.KindSend, trace.KindRecv, trace.KindSendrecv, trace.KindIsend, trace.KindIrecv:
		return true, false
	case trace.KindCollective:
		return false, op != trace.CollBarrier && op != trace.CollOther
	}
	return false, false
}

// Sample is one (message size, time per call) observation with its
// weight (the calls it stands for) and the CPUs of its run.
type Sample struct {
	// Call is the MPI call (collective samples of a trace).
	Call   string
	X      float64
	Bytes  float64
	TimeS  float64
	Weight float64
}

// fitComm builds samples from the call profiles (mean bytes and time per
// call of each call kind and run) and fits the communication models.
func fitComm(fit []Point) CommFits {
	if out, ok := fitTraceComm(fit); ok {
		return out
	}
	var eager, rdv, colls []Sample
	var bytes, calls bool
	for _, p := range fit {
		for _, c := range p.Calls {
			p2p, coll := commCall(c.Name)
			if c.Calls <= 0 || (!p2p && !coll) {
				continue
			}
			calls = true
			b := float64(max(c.BytesSent, c.BytesRecv))
			if b == 0 {
				continue
			}
			bytes = true
			s := Sample{X: float64(p.CPUs), Bytes: b / float64(c.Calls), TimeS: c.TimeS / float64(c.Calls), Weight: float64(c.Calls)}
			switch {
			case coll:
				colls = append(colls, s)
			case s.Bytes < EagerLimit:
				eager = append(eager, s)
			default:
				rdv = append(rdv, s)
			}
		}
	}
	var out CommFits
	if !calls {
		out.Missing = "no MPI call profile in the runs: T_p2p and T_coll need per-call times and bytes"
		return out
	}
	if !bytes {
		out.Missing = "the runs' MPI call profiles have no bytes per call (measure.MPICall bytes_sent/bytes_recv): T_p2p = a·S^b + c and T_coll = a·log2 x + b·S + c need message sizes, which popmon records only with byte accounting (imported traces and older measurements lack them)"
		return out
	}
	var missing []string
	for _, g := range []struct {
		id string
		s  []Sample
	}{{"p2p-eager", eager}, {"p2p-rendezvous", rdv}} {
		if f, ok := FitP2P(g.s); ok {
			f.ID = g.id
			out.Fits = append(out.Fits, f)
		} else if len(g.s) > 0 {
			missing = append(missing, fmt.Sprintf("%s: %d samples, too few or too alike for 3 parameters", g.id, len(g.s)))
		}
	}
	if f, ok := FitColl(colls); ok {
		out.Fits = append(out.Fits, f)
	} else if len(colls) > 0 {
		missing = append(missing, fmt.Sprintf("collective: %d samples, too few or too alike (needs several CPU counts and sizes)", len(colls)))
	}
	out.Missing = strings.Join(missing, "; ")
	return out
}

// FitP2P fits T = a·S^b + c (S in bytes, T in seconds) to the samples by
// least squares weighted by the samples' call counts: b on a grid of
// 0.01 steps in [0, 3], a and c linear for each b. ok is false with fewer
// than 3 samples of at least 2 sizes.
func FitP2P(samples []Sample) (CommFit, bool) {
	if len(samples) < 3 || distinct(samples, func(s Sample) float64 { return s.Bytes }) < 2 {
		return CommFit{}, false
	}
	ys := make([]float64, len(samples))
	ws := make([]float64, len(samples))
	for i, s := range samples {
		ys[i], ws[i] = s.TimeS, s.Weight
	}
	best := CommFit{Formula: "a·S^b + c", R2: Num(math.NaN())}
	bestSSE := math.Inf(1)
	for k := 0; k <= 300; k++ {
		b := float64(k) / 100
		X := make([][]float64, len(samples))
		for i, s := range samples {
			X[i] = []float64{math.Pow(s.Bytes, b), 1}
		}
		c, ok := linearLS(X, ys, ws)
		if !ok {
			continue
		}
		var sse float64
		for i := range X {
			r := ys[i] - c[0]*X[i][0] - c[1]
			sse += ws[i] * r * r
		}
		if sse < bestSSE {
			bestSSE = sse
			best.A, best.B, best.C = c[0], b, c[1]
		}
	}
	if math.IsInf(bestSSE, 1) {
		return CommFit{}, false
	}
	pred := make([]float64, len(samples))
	for i, s := range samples {
		pred[i] = best.A*math.Pow(s.Bytes, best.B) + best.C
	}
	best.R2 = Num(rSquared(ys, pred))
	best.N = len(samples)
	return best, true
}

// FitColl fits T = a·log2 x + b·S + c by least squares weighted by call
// counts. When all samples share one CPU count (or one size) that term
// cannot be identified and is left out (a or b is 0, and Formula says
// so); ok is false with fewer samples than coefficients or when neither
// varies.
func FitColl(samples []Sample) (CommFit, bool) {
	nx := distinct(samples, func(s Sample) float64 { return s.X })
	ns := distinct(samples, func(s Sample) float64 { return s.Bytes })
	cols := 1
	if nx >= 2 {
		cols++
	}
	if ns >= 2 {
		cols++
	}
	if cols == 1 || len(samples) < cols+1 {
		return CommFit{}, false
	}
	X := make([][]float64, len(samples))
	ys := make([]float64, len(samples))
	ws := make([]float64, len(samples))
	for i, s := range samples {
		var row []float64
		if nx >= 2 {
			row = append(row, math.Log2(s.X))
		}
		if ns >= 2 {
			row = append(row, s.Bytes)
		}
		X[i] = append(row, 1)
		ys[i], ws[i] = s.TimeS, s.Weight
	}
	c, ok := linearLS(X, ys, ws)
	if !ok {
		return CommFit{}, false
	}
	f := CommFit{ID: "collective", Formula: "a·log2 x + b·S + c", N: len(samples)}
	k := 0
	if nx >= 2 {
		f.A = c[k]
		k++
	} else {
		f.Formula = "b·S + c (one communicator size: a not identified)"
	}
	if ns >= 2 {
		f.B = c[k]
		k++
	} else {
		f.Formula = "a·log2 x + c (one message size: b not identified)"
	}
	f.C = c[k]
	pred := make([]float64, len(samples))
	for i, s := range samples {
		pred[i] = f.A*math.Log2(s.X) + f.B*s.Bytes + f.C
	}
	f.R2 = Num(rSquared(ys, pred))
	return f, true
}

func distinct(s []Sample, key func(Sample) float64) int {
	seen := map[float64]bool{}
	for _, x := range s {
		seen[key(x)] = true
	}
	return len(seen)
}
