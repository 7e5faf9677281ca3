package pages

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/pop"
)

// maxCommitTicks is the number of commits labelled on an x axis.
const maxCommitTicks = 8

// evolutionAxis returns the x value of each run of e (in e.Runs order)
// and the x-axis settings: over commits (x = the commit's index among the
// experiment's commits in the order they first appear, so that the runs
// of one commit share a position; ticks the short commit hashes) when
// every run has a commit, else over time (x = Unix seconds).
func evolutionAxis(e *Experiment) (xs []float64, label string, tick func(float64) string, ticks []float64) {
	xs = make([]float64, len(e.Runs))
	if e.ByCommit {
		pos := map[string]int{}
		var commits []string
		for i, r := range e.Runs {
			k, ok := pos[r.Git.Commit]
			if !ok {
				k = len(commits)
				pos[r.Git.Commit] = k
				commits = append(commits, r.Git.Commit)
			}
			xs[i] = float64(k)
		}
		for _, i := range evenIndices(len(commits), maxCommitTicks) {
			ticks = append(ticks, float64(i))
		}
		tick = func(x float64) string {
			i := int(math.Round(x))
			if i < 0 || i >= len(commits) {
				return ""
			}
			return shortCommit(commits[i])
		}
		return xs, "commit (in the order of their first run)", tick, ticks
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

// CheckMaxDrop is the drop of an efficiency, against the previous run of
// the same configuration, at which the history marks a run as a
// regression: the default --max-drop of popmon check (docs/ci.md), which
// records nothing in the run files itself.
const CheckMaxDrop = 0.05

// maxLabelledPoints is the most points of a history line whose values are
// written next to them.
const maxLabelledPoints = 12

// config is one resource configuration of an experiment and its runs.
type config struct {
	label string
	cpus  int
	idx   []int // run indices in e.Runs, oldest first
}

// configKey identifies a resource configuration (label, nodes, CPUs).
func configKey(r *runs.Run) string {
	return fmt.Sprintf("%s|%d|%d", r.Label, r.Resources.Nodes, r.Resources.CPUs)
}

// configsOf groups the runs of e that have region name by configuration,
// sorted by CPUs.
func configsOf(e *Experiment, name string) []*config {
	byKey := map[string]*config{}
	var cfgs []*config
	for i, r := range e.Runs {
		g, ok := r.Region(name)
		if !ok {
			continue
		}
		k := configKey(r)
		c := byKey[k]
		if c == nil {
			c = &config{label: r.Label, cpus: g.CPUs}
			byKey[k] = c
			cfgs = append(cfgs, c)
		}
		c.idx = append(c.idx, i)
	}
	sort.SliceStable(cfgs, func(i, j int) bool { return cfgs[i].cpus < cfgs[j].cpus })
	return cfgs
}

// regression is an efficiency of a run that fell by more than
// CheckMaxDrop against the previous run of its configuration.
type regression struct {
	id, name   string
	prev, this float64
}

func (r regression) String() string {
	return fmt.Sprintf("%s fell from %.2f to %.2f (more than %.2f)", r.name, r.prev, r.this, CheckMaxDrop)
}

// regressions returns, by run index, the efficiencies of region name that
// popmon check with its default tolerance would fail on, each run compared
// with the previous run of its configuration.
func regressions(e *Experiment, name string) map[int][]regression {
	out := map[int][]regression{}
	for _, c := range configsOf(e, name) {
		for k := 1; k < len(c.idx); k++ {
			p, _ := e.Runs[c.idx[k-1]].Region(name)
			g, _ := e.Runs[c.idx[k]].Region(name)
			for _, n := range g.Tree {
				a, okA := p.Metrics[n.ID]
				b, okB := g.Metrics[n.ID]
				if okA && okB && a-b > CheckMaxDrop+1e-9 {
					out[c.idx[k]] = append(out[c.idx[k]], regression{id: n.ID, name: treeName(g.Tree, n), prev: a, this: b})
				}
			}
		}
	}
	return out
}

// evolutionCharts returns the history charts of region name: for the
// configurations with several runs, the elapsed time and then one chart
// per efficiency of the region's tree, one line per configuration; a
// point where popmon check's default gate would fail is marked. Without
// any such configuration there are no charts and the note says so.
func evolutionCharts(e *Experiment, name string) ([]template.HTML, string) {
	cfgs := configsOf(e, name)
	var multi []*config
	var single []string
	for _, c := range cfgs {
		if len(c.idx) > 1 {
			multi = append(multi, c)
		} else {
			single = append(single, c.label)
		}
	}
	switch {
	case len(cfgs) == 0:
		return nil, ""
	case len(multi) == 0 && len(cfgs) == 1:
		return nil, "No history yet: one run of this configuration. Charts over time (or commits) appear once it has several runs."
	case len(multi) == 0:
		return nil, fmt.Sprintf("No history yet: one run of each configuration (%s). Charts over time (or commits) appear once a configuration has several runs.", strings.Join(single, ", "))
	}
	note := ""
	if len(single) > 0 {
		note = fmt.Sprintf("No history yet for %s (one run each).", strings.Join(single, ", "))
	}
	xs, xlabel, tick, ticks := evolutionAxis(e)
	regs := regressions(e, name)
	line := func(c *config, v func(*runs.Region) (float64, bool), id string) Series {
		s := Series{Name: c.label, Labels: len(c.idx) <= maxLabelledPoints}
		if id == pop.IDElapsedS {
			s.Format = func(v float64) string { return FormatValue(pop.IDElapsedS, v) }
		}
		for _, i := range c.idx {
			g, _ := e.Runs[i].Region(name)
			y, ok := v(g)
			if !ok {
				continue
			}
			s.Points = append(s.Points, Point{xs[i], y})
			for _, r := range regs[i] {
				if r.id == id {
					s.Marks = append(s.Marks, Mark{Point{xs[i], y}, fmt.Sprintf("−%.2f", r.prev-r.this)})
				}
			}
		}
		return s
	}
	const w, h = 580.0, 250.0
	elapsed := LineChart{Title: fmt.Sprintf("%s: elapsed time", name), XLabel: xlabel, YLabel: "elapsed time (s)",
		XTick: tick, XTicks: ticks, YFixed: true, Width: w, Height: h}
	for _, c := range multi {
		elapsed.Series = append(elapsed.Series, line(c, func(g *runs.Region) (float64, bool) { return float64(g.ElapsedNS) / 1e9, g.ElapsedNS > 0 }, pop.IDElapsedS))
	}
	partial := partialSeries(e, multi, xs, name, func(g *runs.Region) (float64, bool) { return float64(g.ElapsedNS) / 1e9, g.ElapsedNS > 0 })
	if partial != nil {
		elapsed.Series = append(elapsed.Series, *partial)
	}
	out := []template.HTML{template.HTML(elapsed.SVG())}
	var ids, names []string
	seen := map[string]bool{}
	for _, c := range multi {
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
	}
	for k, id := range ids {
		ch := LineChart{Title: fmt.Sprintf("%s: %s", name, names[k]), XLabel: xlabel, YLabel: "efficiency (1 = ideal)",
			XTick: tick, XTicks: ticks, YFixed: true, YMin: 0, YMax: 1, Width: w, Height: h}
		metric := func(g *runs.Region) (float64, bool) { v, ok := g.Metrics[id]; return v, ok }
		for _, c := range multi {
			ch.Series = append(ch.Series, line(c, metric, id))
		}
		if p := partialSeries(e, multi, xs, name, metric); p != nil {
			ch.Series = append(ch.Series, *p)
		}
		out = append(out, template.HTML(ch.SVG()))
	}
	return out, note
}

// partialSeries returns the partial runs of the configurations cfgs as
// hollow grey markers over their points (nil: none), so that a history
// shows which points measured only part of a run.
func partialSeries(e *Experiment, cfgs []*config, xs []float64, name string, v func(*runs.Region) (float64, bool)) *Series {
	s := Series{Name: "partial run (cut short)", NoLine: true, Open: true, Colour: "#c0392b"}
	for _, c := range cfgs {
		for _, i := range c.idx {
			if !isPartial(e.Runs[i]) {
				continue
			}
			g, _ := e.Runs[i].Region(name)
			if y, ok := v(g); ok {
				s.Points = append(s.Points, Point{xs[i], y})
			}
		}
	}
	if len(s.Points) == 0 {
		return nil
	}
	return &s
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
