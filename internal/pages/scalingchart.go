package pages

import (
	"fmt"
	"html/template"
	"math"
	"slices"

	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/pop"
)

// ModelCurve is a fitted scaling model drawn on a region's speedup chart
// (the runtime model of `popmon model`, modelFit): the curve as a dashed
// grey line named "model: <Name>", and the predictions beyond the
// measured range as hollow markers with their values written next to
// them.
type ModelCurve struct {
	// Name names the model ("amdahl"); the legend says "model: amdahl".
	Name string
	// Curve are (CPUs, speedup) points of the fitted curve, in CPU order;
	// speedup relative to the region's reference run, like the measured
	// points.
	Curve []Point
	// Predicted are (CPUs, speedup) predictions, usually beyond the
	// measured CPUs; each is labelled with its value.
	Predicted []Point
	// Note is one sentence shown under the chart (the fitted parameters,
	// the fit's quality).
	Note string
}

// FitInput is what modelFit gets for one region of a strong-scaling
// experiment with two configurations or more.
type FitInput struct {
	// Experiment and the region's scaling table (Region.Name is the
	// region; Region.Runs are the columns, their ID an index in Runs).
	Experiment string
	Region     *pop.ScalingRegion
	// Runs are the experiment's runs that are columns of the tables (the
	// newest of each configuration): runs.ModelPoints(Runs, Region) gives
	// popmon model's inputs.
	Runs []*runs.Run
	// Points are the columns in brief.
	Points []ScalingPoint
}

// ScalingPoint is one measured column of a region's scaling table.
type ScalingPoint struct {
	// Label and CPUs name the configuration; Reference is true for the
	// reference column.
	Label     string
	CPUs      int
	Reference bool
	// ElapsedS is the region's elapsed time in seconds; Speedup T_ref/T
	// (NaN when absent).
	ElapsedS, Speedup float64
}

// scalingPoints returns the columns of g as fit input.
func scalingPoints(g *pop.ScalingRegion) []ScalingPoint {
	sp, _ := g.Row(pop.IDSpeedup)
	out := make([]ScalingPoint, 0, len(g.Runs))
	for i, x := range g.Runs {
		p := ScalingPoint{Label: x.Label, CPUs: x.CPUs, Reference: i == g.Reference && x.Refused == "",
			ElapsedS: float64(x.ElapsedNS) / 1e9, Speedup: math.NaN()}
		if sp != nil {
			if v, ok := sp.Value(i); ok {
				p.Speedup = v
			}
		}
		out = append(out, p)
	}
	return out
}

// factorGroups are the two factor charts: the parallel efficiency's tree,
// and the global efficiency with its two factors and the computation
// scalability's children.
func factorGroups(g *pop.ScalingRegion) [][]*pop.ScalingRow {
	var tree, global []*pop.ScalingRow
	for i := range g.Rows {
		r := &g.Rows[i]
		switch r.ID {
		case pop.IDGlobalEfficiency, pop.IDComputationScalability, pop.IDInstructionScaling, pop.IDIPCScaling, pop.IDFrequencyScaling:
			global = append(global, r)
		case pop.IDSpeedupEfficiency:
		default:
			if r.Kind == pop.KindEfficiency {
				tree = append(tree, r)
			}
		}
	}
	// The parallel efficiency (the tree's root) is the global efficiency's
	// other factor: draw it there too.
	if len(tree) > 0 && len(global) > 0 {
		global = append([]*pop.ScalingRow{global[0], tree[0]}, global[1:]...)
	}
	return [][]*pop.ScalingRow{tree, global}
}

// scalingCharts draws the charts of a region's scaling table: the factors
// against CPUs (two charts) and the speedup (strong scaling; with the
// model curve when fit is set) or the weak-scaling efficiency. Every
// point's value is written next to it with the table's formatting.
func scalingCharts(g *pop.ScalingRegion, mode pop.ScalingMode, model *ModelCurve) []template.HTML {
	if len(g.Runs) < 2 {
		return nil
	}
	cpus := make([]float64, len(g.Runs))
	var ticks []float64 // the measured CPUs (and predicted ones) are the x ticks
	for i, x := range g.Runs {
		cpus[i] = float64(x.CPUs)
		if len(ticks) == 0 || ticks[len(ticks)-1] != cpus[i] {
			ticks = append(ticks, cpus[i])
		}
	}
	series := func(r *pop.ScalingRow) Series {
		s := Series{Name: r.Name, ID: r.ID, Labels: true}
		id := r.ID
		s.Format = func(v float64) string { return FormatValue(id, v) }
		for i := range g.Runs {
			if v, ok := r.Value(i); ok {
				s.Points = append(s.Points, Point{cpus[i], v})
			}
		}
		return s
	}
	var out []template.HTML
	titles := []string{"parallel efficiency and its factors", "global efficiency = parallel efficiency × computation scalability"}
	for k, rows := range factorGroups(g) {
		if len(rows) == 0 {
			continue
		}
		ch := LineChart{Title: fmt.Sprintf("%s: %s", g.Name, titles[k]), XLabel: "CPUs (log scale)", YLabel: "efficiency (1 = ideal)",
			LogX: true, XTicks: ticks, YFixed: true, YMin: 0, YMax: 1, Height: 340}
		for _, r := range rows {
			ch.Series = append(ch.Series, series(r))
		}
		out = append(out, template.HTML(ch.SVG()))
	}
	sp, ok := g.Row(pop.IDSpeedup)
	if !ok {
		return out
	}
	ref := float64(g.Runs[g.Reference].CPUs)
	lo, hi := cpus[0], cpus[len(cpus)-1]
	if model != nil {
		for _, p := range append(append([]Point(nil), model.Curve...), model.Predicted...) {
			if p.X > 0 {
				lo, hi = math.Min(lo, p.X), math.Max(hi, p.X)
			}
		}
		for _, p := range model.Predicted {
			if p.X > 0 && !slices.Contains(ticks, p.X) {
				ticks = append(ticks, p.X)
			}
		}
		slices.Sort(ticks)
	}
	ideal := Series{Name: "ideal", Dash: "4 3", NoMarkers: true, Colour: "#888"}
	measured := series(sp)
	ch := LineChart{XLabel: "CPUs (log scale)", LogX: true, XTicks: ticks, Height: 340}
	if mode == pop.ScalingWeak {
		ch.Title = g.Name + ": weak-scaling efficiency T_ref / T (problem grows with the CPUs; 1 = ideal)"
		ch.YLabel = "efficiency (1 = ideal)"
		ch.YFixed, ch.YMin, ch.YMax = true, 0, 1
		measured.Name = "weak-scaling efficiency"
		ideal.Points = []Point{{lo, 1}, {hi, 1}}
	} else {
		ch.Title = g.Name + ": speedup T_ref / T against CPUs (ideal: CPUs / reference CPUs)"
		ch.YLabel = "speedup (log scale)"
		ch.LogY = true
		measured.Name = "measured speedup"
		ideal.Points = []Point{{lo, lo / ref}, {hi, hi / ref}}
	}
	ch.Series = []Series{measured, ideal}
	if model != nil {
		if len(model.Curve) > 0 {
			ch.Series = append(ch.Series, Series{Name: "model: " + model.Name, ID: "model", Points: model.Curve, Dash: "8 3 2 3", NoMarkers: true, Colour: "#555"})
		}
		if len(model.Predicted) > 0 {
			ch.Series = append(ch.Series, Series{Name: "predicted (" + model.Name + ")", ID: "predicted", Points: model.Predicted,
				NoLine: true, Open: true, Labels: true, Colour: "#555"})
		}
	}
	out = append(out, template.HTML(ch.SVG()))
	return out
}

// modeSentence says in plain words which kind of scaling study the
// experiment is and why popmon thinks so (the rule of docs/scaling.md,
// "Mode detection").
func modeSentence(sc *pop.Scaling) (head, why string) {
	head = "Strong scaling: the same problem on more CPUs"
	if sc.Mode == pop.ScalingWeak {
		head = "Weak scaling: a problem that grows with the CPUs"
	}
	if len(sc.Regions) == 0 || len(sc.Regions[0].Runs) < 2 {
		return "One configuration so far", "Scaling charts need runs of at least two resource configurations; with one, the table shows its own efficiencies."
	}
	g := &sc.Regions[0]
	r := g.Runs[g.Reference]
	lowest, counters := math.Inf(1), r.HasCounters && r.Instructions > 0 && r.CPUs > 0
	for i, x := range g.Runs {
		if !x.HasCounters || x.Instructions <= 0 || x.CPUs <= 0 {
			counters = false
			break
		}
		if i != g.Reference {
			lowest = min(lowest, (x.Instructions/float64(x.CPUs))/(r.Instructions/float64(r.CPUs)))
		}
	}
	switch {
	case sc.ModeReason != "" && sc.ModeReason[0] == '-': // --mode given
		why = "As asked."
	case !counters && sc.Mode == pop.ScalingStrong:
		why = "Assumed, because not every run has hardware counters, which popmon needs to tell a growing problem from a fixed one."
	case sc.Mode == pop.ScalingWeak:
		why = fmt.Sprintf("Each CPU executes at least %.2f times the instructions it did in the reference run (%.2f or more means the problem grew with the CPUs).", lowest, pop.WeakScalingThreshold)
	default:
		why = fmt.Sprintf("With more CPUs each CPU executes fewer instructions: down to %.2f times as many as in the reference run, so the work is shared (a growing problem would keep this above %.2f).", lowest, pop.WeakScalingThreshold)
	}
	return head, why
}
