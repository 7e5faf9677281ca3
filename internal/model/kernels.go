package model

import (
	"math"
	"sort"
)

// Kernel is one part of the program (useful computation, a region or an
// MPI call) across the runs, with its trend.
type Kernel struct {
	// Kind is PartUseful, PartRegion or PartMPI; Name the part's name.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Times are its mean time per process (s) by run, ascending CPUs.
	Times []KernelTime `json:"times"`
	// Share is its time per process over the runtime in the largest run.
	Share float64 `json:"share"`
	// Exponent is α of the least-squares fit time ∝ x^α over the runs
	// with a time > 0 (NaN with fewer than 2): −1 scales perfectly, 0
	// does not fall at all, > 0 grows; R2 is that fit's R² in log-log.
	Exponent Num `json:"exponent"`
	R2       Num `json:"r2"`
	// NeverFalls says its time did not decrease from any run to the next.
	NeverFalls bool `json:"never_falls"`
	// Key says its share is at least the threshold.
	Key bool `json:"key"`
	// NonScalable says its exponent is above −0.1 (its time per process
	// hardly falls or grows with the CPUs) and its share is at least
	// 0.1 %.
	NonScalable bool `json:"non_scalable"`
}

// KernelTime is a kernel's time in one run.
type KernelTime struct {
	CPUs         int     `json:"cpus"`
	PerProcessS  float64 `json:"per_process_s"`
	ShareOfTotal float64 `json:"share"`
}

// Listed reports whether the kernel is flagged (key or non-scalable).
func (k Kernel) Listed() bool { return k.Key || k.NonScalable }

// kernels builds the kernel list from all runs (held-out ones included:
// the list describes the measurements, it predicts nothing).
func kernels(pts []Point, threshold float64) []Kernel {
	type key struct{ kind, name string }
	idx := map[key]int{}
	var out []Kernel
	for _, p := range pts {
		for _, part := range p.Parts {
			k := key{part.Kind, part.Name}
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, Kernel{Kind: part.Kind, Name: part.Name})
			}
			out[i].Times = append(out[i].Times, KernelTime{CPUs: p.CPUs, PerProcessS: part.PerProcessS, ShareOfTotal: part.PerProcessS / p.ElapsedS})
		}
	}
	last := pts[len(pts)-1].CPUs
	for i := range out {
		k := &out[i]
		var lx, ly []float64
		k.NeverFalls = len(k.Times) >= 2
		for j, t := range k.Times {
			if t.CPUs == last {
				k.Share = t.ShareOfTotal
			}
			if j > 0 && t.PerProcessS < k.Times[j-1].PerProcessS {
				k.NeverFalls = false
			}
			if t.PerProcessS > 0 {
				lx = append(lx, math.Log(float64(t.CPUs)))
				ly = append(ly, math.Log(t.PerProcessS))
			}
		}
		k.Exponent, k.R2 = Num(math.NaN()), Num(math.NaN())
		if len(lx) >= 2 {
			X := make([][]float64, len(lx))
			for j := range lx {
				X[j] = []float64{lx[j], 1}
			}
			if c, ok := linearLS(X, ly, nil); ok {
				k.Exponent = Num(c[0])
				pred := make([]float64, len(lx))
				for j := range lx {
					pred[j] = c[0]*lx[j] + c[1]
				}
				k.R2 = Num(rSquared(ly, pred))
			}
		}
		k.Key = k.Share >= threshold
		k.NonScalable = k.Exponent.Valid() && float64(k.Exponent) > nonScalableExponent && k.Share >= nonScalableMinShare
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Listed() != out[j].Listed() {
			return out[i].Listed()
		}
		return out[i].Share > out[j].Share
	})
	return out
}

// predictions evaluates every fitted curve at the held-out and requested
// CPU counts.
func predictions(r *Result, pts []Point, held map[int]bool, predict []int) []Prediction {
	measured := map[int]float64{}
	set := map[int]bool{}
	for _, p := range pts {
		if held[p.CPUs] {
			measured[p.CPUs] = p.ElapsedS
			set[p.CPUs] = true
		}
	}
	for _, x := range predict {
		if x > 0 {
			set[x] = true
		}
	}
	var xs []int
	for x := range set {
		xs = append(xs, x)
	}
	sort.Ints(xs)
	var out []Prediction
	for _, x := range xs {
		pr := Prediction{CPUs: x, MeasuredS: Num(math.NaN()), MinS: Num(math.NaN()), MaxS: Num(math.NaN())}
		m, hasM := measured[x]
		if hasM {
			pr.MeasuredS = Num(m)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range r.Curves {
			if !c.OK() {
				continue
			}
			t := c.Time(float64(x))
			mp := ModelPrediction{Curve: c.ID, TimeS: Num(t), ErrS: Num(float64(c.LOORelErr) * t),
				Speedup: Num(c.Speedup(float64(x))), RelErr: Num(math.NaN())}
			if hasM {
				mp.RelErr = Num(t/m - 1)
			}
			if !math.IsNaN(t) && !math.IsInf(t, 0) {
				lo, hi = math.Min(lo, t), math.Max(hi, t)
			}
			pr.Models = append(pr.Models, mp)
		}
		if lo <= hi {
			pr.MinS, pr.MaxS = Num(lo), Num(hi)
		}
		out = append(out, pr)
	}
	return out
}

// Curve returns the result's curve with id, or nil.
func (r *Result) Curve(id string) *Curve {
	for _, c := range r.Curves {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// Prediction returns the prediction at x CPUs of the curve with id; ok is
// false when there is none.
func (r *Result) Prediction(x int, id string) (ModelPrediction, bool) {
	for _, p := range r.Predictions {
		if p.CPUs != x {
			continue
		}
		for _, m := range p.Models {
			if m.Curve == id {
				return m, true
			}
		}
	}
	return ModelPrediction{}, false
}
