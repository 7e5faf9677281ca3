package model

import (
	"math"
)

// Projection is one of basicanalysis's projection functions of a POP
// factor y over x CPUs, with the two parameters x0 and f.
type Projection string

// The projection functions of BSC basicanalysis (modelfactors.py
// compute_projection).
const (
	// ProjAmdahl is x0 / (f + (1−f)·x).
	ProjAmdahl Projection = "amdahl"
	// ProjPipe is x0·x / ((1−f) + f·(2x−1)).
	ProjPipe Projection = "pipe"
	// ProjLinear is x0 + f·x.
	ProjLinear Projection = "linear"
)

// Projections lists the projection functions in display order.
var Projections = []Projection{ProjAmdahl, ProjPipe, ProjLinear}

// Eval returns the projection at x with parameters x0 and f.
func (p Projection) Eval(x, x0, f float64) float64 {
	switch p {
	case ProjLinear:
		return x0 + f*x
	default:
		return x0 * p.shape(x, f)
	}
}

// shape is the projection's factor of x0 (amdahl, pipe).
func (p Projection) shape(x, f float64) float64 {
	if p == ProjPipe {
		return x / ((1 - f) + f*(2*x-1))
	}
	return 1 / (f + (1-f)*x)
}

// fitProjection fits y ≈ p(x; x0, f) by weighted least squares
// (minimising Σ w·(y − p(x))²) with x0 free and f ∈ [0, 1], the
// bounds of basicanalysis's "--bounds yes". x0 enters every projection
// linearly, so for a given f its optimum is closed-form; f is then found
// by a bounded one-dimensional search ([minimize01]), which finds the
// global minimum on [0, 1] of these smooth one-parameter problems rather
// than the local one a gradient method starting at f = 1 may stop in.
// The linear projection is a convex quadratic, solved exactly and clamped.
func fitProjection(p Projection, xs, ys, ws []float64) (x0, f float64) {
	if p == ProjLinear {
		var sw, sx, sy float64
		for i := range xs {
			sw += ws[i]
			sx += ws[i] * xs[i]
			sy += ws[i] * ys[i]
		}
		xm, ym := sx/sw, sy/sw
		var sxy, sxx float64
		for i := range xs {
			sxy += ws[i] * (xs[i] - xm) * (ys[i] - ym)
			sxx += ws[i] * (xs[i] - xm) * (xs[i] - xm)
		}
		if sxx > 0 {
			f = clamp01(sxy / sxx)
		}
		return ym - f*xm, f
	}
	bestX0 := func(f float64) (float64, float64) {
		var num, den float64
		for i := range xs {
			g := p.shape(xs[i], f)
			num += ws[i] * ys[i] * g
			den += ws[i] * g * g
		}
		if den == 0 {
			return 0, math.Inf(1)
		}
		a := num / den
		var sse float64
		for i := range xs {
			r := ys[i] - a*p.shape(xs[i], f)
			sse += ws[i] * r * r
		}
		return a, sse
	}
	f = minimize01(func(f float64) float64 { _, s := bestX0(f); return s })
	x0, _ = bestX0(f)
	return x0, f
}

// minimize01 returns the argument in [0, 1] that minimises fn: the best
// of a grid of 2001 points, refined by golden-section search between its
// neighbours (to about 1e-12).
func minimize01(fn func(float64) float64) float64 {
	const n = 2000
	best, bestV := 0.0, math.Inf(1)
	for i := 0; i <= n; i++ {
		x := float64(i) / n
		if v := fn(x); v < bestV {
			best, bestV = x, v
		}
	}
	lo, hi := math.Max(0, best-1.0/n), math.Min(1, best+1.0/n)
	const g = 0.6180339887498949
	a, b := hi-g*(hi-lo), lo+g*(hi-lo)
	fa, fb := fn(a), fn(b)
	for hi-lo > 1e-13 {
		if fa < fb {
			hi, b, fb = b, a, fa
			a = hi - g*(hi-lo)
			fa = fn(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + g*(hi-lo)
			fb = fn(b)
		}
	}
	x := (lo + hi) / 2
	if fn(x) <= bestV {
		return x
	}
	return best
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// rSquared is the coefficient of determination 1 − SSres/SStot of the
// predictions pred of ys (unweighted); NaN when ys are all equal and the
// predictions are not exact, 1 when they are.
func rSquared(ys, pred []float64) float64 {
	var mean float64
	for _, y := range ys {
		mean += y
	}
	mean /= float64(len(ys))
	var res, tot float64
	for i, y := range ys {
		res += (y - pred[i]) * (y - pred[i])
		tot += (y - mean) * (y - mean)
	}
	switch {
	case res <= 1e-24*math.Max(1, tot):
		return 1
	case tot == 0:
		return math.NaN()
	}
	return 1 - res/tot
}

// linearLS solves the weighted least-squares problem y ≈ Σ_k c_k·X[i][k]
// through the normal equations (Gaussian elimination with partial
// pivoting); ok is false when the design is singular.
func linearLS(X [][]float64, ys, ws []float64) (c []float64, ok bool) {
	if len(X) == 0 {
		return nil, false
	}
	k := len(X[0])
	// Columns are scaled to a largest magnitude of 1 first, so that
	// designs mixing bytes (1e7) and constants stay well conditioned.
	cs := make([]float64, k)
	for _, row := range X {
		for j, v := range row {
			cs[j] = math.Max(cs[j], math.Abs(v))
		}
	}
	for j := range cs {
		if cs[j] == 0 {
			return nil, false
		}
	}
	a := make([][]float64, k)
	for r := range a {
		a[r] = make([]float64, k+1)
	}
	for i, row := range X {
		w := 1.0
		if ws != nil {
			w = ws[i]
		}
		for r := 0; r < k; r++ {
			for s := 0; s < k; s++ {
				a[r][s] += w * row[r] / cs[r] * row[s] / cs[s]
			}
			a[r][k] += w * row[r] / cs[r] * ys[i]
		}
	}
	scale := 0.0
	for r := 0; r < k; r++ {
		scale = math.Max(scale, math.Abs(a[r][r]))
	}
	for col := 0; col < k; col++ {
		piv := col
		for r := col + 1; r < k; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) <= 1e-12*scale {
			return nil, false
		}
		a[col], a[piv] = a[piv], a[col]
		for r := 0; r < k; r++ {
			if r == col {
				continue
			}
			m := a[r][col] / a[col][col]
			for s := col; s <= k; s++ {
				a[r][s] -= m * a[col][s]
			}
		}
	}
	c = make([]float64, k)
	for r := 0; r < k; r++ {
		c[r] = a[r][k] / a[r][r] / cs[r]
		if math.IsNaN(c[r]) || math.IsInf(c[r], 0) {
			return nil, false
		}
	}
	return c, true
}
