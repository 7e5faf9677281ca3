// Package compare is popmon check's comparison of a new run with a
// baseline: the values compared per region and metric, their verdicts
// against the allowed drops (--max-drop, --max-slowdown), and the table.
package compare

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Drops holds --max-drop: a default and per-metric values.
type Drops struct {
	def    float64
	metric map[string]float64
}

func (d *Drops) String() string {
	if d == nil {
		return ""
	}
	return strconv.FormatFloat(d.def, 'g', -1, 64)
}

func (d *Drops) Set(s string) error {
	id, val, per := strings.Cut(s, "=")
	if !per {
		val = id
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("want a number ≥ 0 or ID=NUMBER (e.g. 0.05 or mpi_load_balance=0.02), got %q", s)
	}
	if !per {
		d.def = v
		return nil
	}
	if d.metric == nil {
		d.metric = map[string]float64{}
	}
	d.metric[strings.TrimSpace(id)] = v
	return nil
}

func (d *Drops) For(id string) float64 {
	if v, ok := d.metric[id]; ok {
		return v
	}
	return d.def
}

// NewDrops is a --max-drop of def for every metric.
func NewDrops(def float64) *Drops { return &Drops{def: def} }

// Row is one compared value.
type Row struct {
	region, metric    string
	base, new, change float64
	relative          bool // change is relative (elapsed time)
	regression        bool
}

// Runs compares the chosen metrics of every chosen region present
// in both runs (names match exactly). Runs that share no region, or whose
// shared regions have no value to compare, are unusable inputs (an *Error, not Usage).
func Runs(br, nr *runs.Run, metrics, regions []string, drops *Drops, slowdown float64) ([]Row, error) {
	var names []string
	for _, g := range nr.Regions {
		if _, ok := br.Region(g.Name); ok {
			names = append(names, g.Name)
		}
	}
	if len(names) == 0 {
		return nil, fault.Inputf("baseline %s and new run %s have no region in common (baseline: %s; new: %s): compare runs of the same program",
			br.Source, nr.Source, quoteList(br.RegionNames()), quoteList(nr.RegionNames()))
	}
	if len(regions) > 0 {
		var chosen []string
		for _, want := range regions {
			n, err := measure.MatchRegion(names, want, "in both runs")
			if err != nil {
				return nil, fault.Usagef("%v", err)
			}
			chosen = append(chosen, n)
		}
		names = chosen
	}
	for _, r := range []struct {
		run  *runs.Run
		role string
		fix  string
	}{{nr, "new run", "measure it again"}, {br, "baseline", "choose another baseline"}} {
		for _, name := range names {
			// A region whose metrics cannot be trusted cannot pass or
			// fail a comparison: "improved" from accounts that do not add
			// up would be a lie.
			if g, ok := r.run.Region(name); ok && g.Refused != "" {
				return nil, fault.Inputf("%s %s, region %q: No POP metrics: %s (popmon report %s shows it): %s, or name the regions to compare with --region",
					r.role, r.run.Source, name, g.Refused, r.run.Source, r.fix)
			}
		}
		if !hasEfficiencies(r.run, names) {
			return nil, fault.Inputf("%s %s has no efficiency value in %s (no useful time measured there?): %s",
				r.role, r.run.Source, regionPhrase(names), r.fix)
		}
	}
	var rows []Row
	seenMetric := map[string]bool{}
	for _, name := range names {
		ng, _ := nr.Region(name)
		bg, _ := br.Region(name)
		ids := metrics
		if len(ids) == 0 {
			ids = []string{pop.IDParallelEfficiency}
			for _, n := range ng.Tree {
				if n.ID != pop.IDParallelEfficiency {
					ids = append(ids, n.ID)
				}
			}
		}
		for _, id := range ids {
			bv, bok := bg.Metrics[id]
			nv, nok := ng.Metrics[id]
			if !bok || !nok {
				continue
			}
			seenMetric[id] = true
			rows = append(rows, Row{
				region: name, metric: id, base: bv, new: nv, change: nv - bv,
				regression: bv-nv > drops.For(id)+1e-9,
			})
		}
		if slowdown > 0 && bg.ElapsedNS > 0 {
			rel := float64(ng.ElapsedNS-bg.ElapsedNS) / float64(bg.ElapsedNS)
			rows = append(rows, Row{
				region: name, metric: pop.IDElapsedS, base: float64(bg.ElapsedNS) / 1e9, new: float64(ng.ElapsedNS) / 1e9,
				change: rel, relative: true, regression: rel > slowdown+1e-9,
			})
		}
	}
	for _, id := range metrics {
		if !seenMetric[id] {
			return nil, fault.Usagef("metric %q is in no region of both runs (%s, %s): use a metric id of POP-METRICS.md §9 that both runs have", id, br.Source, nr.Source)
		}
	}
	for id := range drops.metric {
		if !seenMetric[id] {
			return nil, fault.Usagef("--max-drop %s=…: metric %q is not compared: use an id of the compared metrics", id, id)
		}
	}
	if len(rows) == 0 {
		return nil, fault.Inputf("no metric of new run %s is in baseline %s for %s (0 values compared): compare runs measured the same way (same model and kind of file), or name metrics both have with --metric",
			nr.Source, br.Source, regionPhrase(names))
	}
	return rows, nil
}

// hasEfficiencies reports whether run has an efficiency value in one of
// the regions names.
func hasEfficiencies(run *runs.Run, names []string) bool {
	for _, n := range names {
		g, ok := run.Region(n)
		if !ok {
			continue
		}
		if _, ok := g.Metrics[pop.IDParallelEfficiency]; ok || len(g.Tree) > 0 {
			return true
		}
	}
	return false
}

// regionPhrase names regions: `region "Global"` or `regions "Global", "solve"`.
func regionPhrase(names []string) string {
	if len(names) == 1 {
		return "region " + quoteList(names)
	}
	return "regions " + quoteList(names)
}

// quoteList quotes names and joins them with ", ".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// moved says whether a row is worth showing: a regression, or a change of
// at least half the allowed drop (0.02 at most; 5 % for elapsed time).
func (r Row) moved(drop float64) bool {
	if r.regression {
		return true
	}
	if r.relative {
		return math.Abs(r.change) >= 0.05
	}
	return math.Abs(r.change) >= max(min(drop/2, 0.02), 0.005)
}

// Print writes the comparison: the runs, the values that moved (every one
// with all) with their verdicts, the drops allowed; it returns how many
// values are regressions.
func Print(out io.Writer, br, nr *runs.Run, rows []Row, drops *Drops, all bool) (int, error) {
	fmt.Fprintf(out, "baseline: %s (%s, %s)\nnew:      %s (%s, %s)\n", br.Source, br.Label, br.Timestamp.Format("2006-01-02 15:04:05Z"),
		nr.Source, nr.Label, nr.Timestamp.Format("2006-01-02 15:04:05Z"))
	if !br.Resources.SameConfiguration(nr.Resources) {
		fmt.Fprintf(out, "note: the runs used different resources (%s vs %s)\n", br.Label, nr.Label)
	}
	regressions, shown := 0, 0
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		if r.regression {
			regressions++
		}
		if !all && !r.moved(drops.For(r.metric)) {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(out)
			fmt.Fprintln(tw, "region\tmetric\tbaseline\tnew\tchange\tverdict\t")
		}
		shown++
		verdict := "ok"
		switch {
		case r.regression:
			verdict = "REGRESSION"
		case r.change > 0 && !r.relative, r.change < 0 && r.relative:
			verdict = "improved"
		}
		change := fmt.Sprintf("%+.2f", r.change)
		if r.relative {
			change = fmt.Sprintf("%+.1f%%", 100*r.change)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%s\t%s\t\n", r.region, r.metric, r.base, r.new, change, verdict)
	}
	if err := tw.Flush(); err != nil {
		return regressions, err
	}
	if shown == 0 {
		fmt.Fprintln(out, "\nnothing moved (--all lists every compared value)")
	}
	fmt.Fprintf(out, "\n%d values compared (max drop %g", len(rows), drops.def)
	ids := make([]string, 0, len(drops.metric))
	for id := range drops.metric {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(out, ", %s %g", id, drops.metric[id])
	}
	fmt.Fprintf(out, "): %d regression(s)\n", regressions)
	return regressions, nil
}
