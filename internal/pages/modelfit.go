package pages

import (
	"fmt"
	"math"

	"github.com/popmon/popmon/internal/model"
	"github.com/popmon/popmon/internal/runs"
)

// modelFit is the model of a strong-scaling chart: the runtime model popmon model
// fits by default (basicanalysis' amdahl factor projection, or Amdahl on
// the runtime when the factors cannot be composed) drawn as a speedup
// curve over the measured CPUs and predicted at 2× and 4× the largest.
// nil when no model can be fitted (fewer than three configurations, weak
// scaling, a failed fit).
func modelFit(in FitInput) *ModelCurve {
	if in.Region == nil || len(in.Points) < 3 {
		return nil
	}
	minCPU, maxCPU := 0, 0
	for _, p := range in.Points {
		if minCPU == 0 || p.CPUs < minCPU {
			minCPU = p.CPUs
		}
		maxCPU = max(maxCPU, p.CPUs)
	}
	if minCPU <= 0 {
		return nil
	}
	pts, factors := runs.ModelPoints(in.Runs, in.Region)
	res, err := model.Fit(pts, model.Options{
		Models:  []string{"amdahl", "runtime"},
		Factors: factors,
		Predict: []int{2 * maxCPU, 4 * maxCPU},
	})
	if err != nil || res.Mode != "strong" {
		return nil
	}
	var c *model.Curve
	for _, id := range []string{model.CurveFactorsAmdahl, model.CurveRuntimeAmdahl} {
		for _, k := range res.Curves {
			if k.ID == id && k.OK() && c == nil {
				c = k
			}
		}
	}
	if c == nil {
		return nil
	}
	mc := &ModelCurve{Name: c.Name}
	// 8 points per doubling from the smallest to 4× the largest CPUs.
	for x := float64(minCPU); x <= 4*float64(maxCPU)*1.0001; x *= math.Pow(2, 1.0/8) {
		if s := c.Speedup(x); !math.IsNaN(s) && !math.IsInf(s, 0) {
			mc.Curve = append(mc.Curve, Point{X: x, Y: s})
		}
	}
	for _, x := range []int{2 * maxCPU, 4 * maxCPU} {
		if s := c.Speedup(float64(x)); !math.IsNaN(s) && !math.IsInf(s, 0) {
			mc.Predicted = append(mc.Predicted, Point{X: float64(x), Y: s})
		}
	}
	mc.Note = fmt.Sprintf("model %s fitted on %d configurations", c.Name, len(res.Fitted))
	if r2 := float64(c.R2); !math.IsNaN(r2) {
		mc.Note += fmt.Sprintf(", R² %.3f", r2)
	}
	if loo := float64(c.LOORelErr); !math.IsNaN(loo) {
		mc.Note += fmt.Sprintf(", leave-one-out error %.1f %%", 100*loo)
	}
	mc.Note += " (popmon model gives the detail; docs/model.md)."
	return mc
}
