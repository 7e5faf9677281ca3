package pages

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"time"

	"github.com/popmon/popmon/internal/runs"
)

// maxCommitTicks is the number of commits labelled on an x axis.
const maxCommitTicks = 8

// evolutionAxis returns the x value of each run of e (in e.Runs order)
// and the x-axis settings: over commits (x = the run's index, ticks the
// short commit hashes) when every run has a commit, else over time (x =
// Unix seconds).
func evolutionAxis(e *Experiment) (xs []float64, label string, tick func(float64) string, ticks []float64) {
	xs = make([]float64, len(e.Runs))
	if e.ByCommit {
		for i := range e.Runs {
			xs[i] = float64(i)
		}
		for _, i := range evenIndices(len(e.Runs), maxCommitTicks) {
			ticks = append(ticks, float64(i))
		}
		tick = func(x float64) string {
			i := int(math.Round(x))
			if i < 0 || i >= len(e.Runs) {
				return ""
			}
			return shortCommit(e.Runs[i].Git.Commit)
		}
		return xs, "commit (runs in time order)", tick, ticks
	}
	for i, r := range e.Runs {
		xs[i] = float64(r.Timestamp.Unix())
	}
	layout := "2006-01-02"
	if n := len(xs); n > 0 && xs[n-1]-xs[0] < 2*3600 {
		layout = "15:04:05"
	} else if n > 0 && xs[n-1]-xs[0] < 3*24*3600 {
		layout = "01-02 15:04"
	}
	tick = func(x float64) string { return time.Unix(int64(math.Round(x)), 0).UTC().Format(layout) }
	return xs, "run time (UTC)", tick, nil
}

// shortCommit returns the first 8 characters of a commit hash (never a
// part of a multi-byte character).
func shortCommit(c string) string {
	n := 0
	for i := range c {
		if n == 8 {
			return c[:i]
		}
		n++
	}
	return c
}

// evolutionCharts returns the charts of region name: the elapsed time of
// every configuration, then per configuration every efficiency of the
// region's tree.
func evolutionCharts(e *Experiment, name string) []template.HTML {
	xs, xlabel, tick, ticks := evolutionAxis(e)
	type cfg struct {
		label string
		cpus  int
		idx   []int // run indices
	}
	byLabel := map[string]*cfg{}
	var cfgs []*cfg
	for i, r := range e.Runs {
		g, ok := r.Region(name)
		if !ok {
			continue
		}
		c := byLabel[r.Label]
		if c == nil {
			c = &cfg{label: r.Label, cpus: g.CPUs}
			byLabel[r.Label] = c
			cfgs = append(cfgs, c)
		}
		c.idx = append(c.idx, i)
	}
	if len(cfgs) == 0 {
		return nil
	}
	sort.SliceStable(cfgs, func(i, j int) bool { return cfgs[i].cpus < cfgs[j].cpus })

	elapsed := LineChart{Title: fmt.Sprintf("%s: elapsed time", name), XLabel: xlabel, YLabel: "elapsed time (s)",
		XTick: tick, XTicks: ticks, YFixed: true}
	for _, c := range cfgs {
		s := Series{Name: c.label}
		for _, i := range c.idx {
			g, _ := e.Runs[i].Region(name)
			s.Points = append(s.Points, Point{xs[i], float64(g.ElapsedNS) / 1e9})
		}
		elapsed.Series = append(elapsed.Series, s)
	}
	out := []template.HTML{template.HTML(elapsed.SVG())}

	for _, c := range cfgs {
		var ids, names []string
		seen := map[string]bool{}
		for _, i := range c.idx {
			g, _ := e.Runs[i].Region(name)
			for _, n := range g.Tree {
				if !seen[n.ID] {
					seen[n.ID] = true
					ids = append(ids, n.ID)
					names = append(names, treeName(g.Tree, n))
				}
			}
		}
		if len(ids) == 0 {
			continue
		}
		ch := LineChart{Title: fmt.Sprintf("%s: efficiencies, %s", name, c.label), XLabel: xlabel, YLabel: "efficiency",
			XTick: tick, XTicks: ticks, YFixed: true, YMin: 0, YMax: 1}
		for k, id := range ids {
			s := Series{Name: names[k]}
			for _, i := range c.idx {
				g, _ := e.Runs[i].Region(name)
				if v, ok := g.Metrics[id]; ok {
					s.Points = append(s.Points, Point{xs[i], v})
				}
			}
			ch.Series = append(ch.Series, s)
		}
		out = append(out, template.HTML(ch.SVG()))
	}
	return out
}

// treeName returns a node's name qualified by its parent's when the name
// alone is ambiguous ("Load Balance" under MPI and OpenMP).
func treeName(tree []runs.Node, n runs.Node) string {
	count := 0
	for _, m := range tree {
		if m.Name == n.Name {
			count++
		}
	}
	if count < 2 {
		return n.Name
	}
	for i := range tree {
		if tree[i].ID != n.ID {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if tree[j].Depth < n.Depth {
				return tree[j].Name + ": " + n.Name
			}
		}
	}
	return n.Name
}
