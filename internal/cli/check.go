package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

const checkHelp = `
Compares a new run against a baseline and fails (exit 1) when an
efficiency dropped by more than --max-drop: a regression gate for CI.

  popmon check --baseline main.json new.json
  popmon check --baseline history/ new.json     newest run in history/ with
                                                the same resources as new.json
  popmon check --baseline old.json --metric parallel_efficiency \
      --max-drop 0.05 --max-drop mpi_load_balance=0.02 new.json
  popmon check --baseline old.json --max-slowdown 0.10 new.json

Every region present in both runs is compared (or those --region names,
exact and case-sensitive),
for parallel_efficiency and every efficiency of the new run's tree that the
baseline has too (or those --metric names). --max-drop is absolute, in
efficiency units: 0.05 lets 0.80 fall to 0.75 but not to 0.74; ID=VALUE sets
it for one metric. --max-slowdown is relative: 0.10 fails when the elapsed
time grows by more than 10 % (off by default). The table lists regressions
and changes of at least half the allowed drop (--all: every value).
Exit codes: 0 no regression (also when a baseline directory has no run with
the same resources), 1 regression, 2 usage, 3 unusable input: a new run or
baseline that is missing, not a run file, invalid or a truncated trace, a
compared region without POP metrics in either run (its accounts do not add
up), or runs with no region or no value in common (0 values compared). NEW and a
baseline file are read like 'popmon report' reads them; --skip-bad leaves
unusable files of a baseline directory out and imports traces skipping
malformed lines. See docs/ci.md.`

// listFlag is a repeatable flag; each value may hold several,
// comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// dropFlag holds --max-drop: a default and per-metric values.
type dropFlag struct {
	def    float64
	metric map[string]float64
}

func (d *dropFlag) String() string {
	if d == nil {
		return ""
	}
	return strconv.FormatFloat(d.def, 'g', -1, 64)
}

func (d *dropFlag) Set(s string) error {
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

func (d *dropFlag) For(id string) float64 {
	if v, ok := d.metric[id]; ok {
		return v
	}
	return d.def
}

// checkRow is one compared value.
type checkRow struct {
	region, metric    string
	base, new, change float64
	relative          bool // change is relative (elapsed time)
	regression        bool
}

func checkCmd(env *Env, args []string) error {
	fs := newFlags("check", "--baseline FILE|DIR [--metric ID ...] [--max-drop 0.05] [--max-drop ID=0.02] [--region NAME ...] [--max-slowdown R] [--model M] NEW", checkHelp, env.Stderr)
	baseline := fs.String("baseline", "", "baseline run file, or a directory of runs (the newest with the same resources is used)")
	var metrics, regions listFlag
	fs.Var(&metrics, "metric", "metric id to compare (repeatable; default: parallel_efficiency and the efficiencies of the tree)")
	fs.Var(&regions, "region", "region to compare, exact name (repeatable; default: every region of both runs)")
	drops := &dropFlag{def: 0.05}
	fs.Var(drops, "max-drop", "largest allowed drop, absolute in efficiency units; ID=VALUE for one metric (repeatable)")
	slowdown := fs.Float64("max-slowdown", 0, "largest allowed relative growth of elapsed time (0.10 = 10 %); 0 is off")
	model := fs.String("model", string(pop.ModelTALP), "metric model: talp, pop-hybrid, pop-additive (TALP files: talp only)")
	all := fs.Bool("all", false, "list every compared value, not only what moved")
	skipBad := fs.Bool("skip-bad", false, "leave unusable files of a baseline directory out (with a warning); import traces skipping malformed lines")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *baseline == "" {
		fs.Usage()
		return fail(ExitUsage, "--baseline FILE|DIR is required")
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fail(ExitUsage, "expected exactly one new run file, got %d", fs.NArg())
	}
	if *slowdown < 0 || math.IsNaN(*slowdown) {
		return fail(ExitUsage, "--max-slowdown must be ≥ 0 (0 is off), got %v", *slowdown)
	}
	m, err := pop.ParseModel(*model)
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}
	newPath := fs.Arg(0)
	ro := runs.ReadOptions{SkipBad: *skipBad, ToolVersion: Version}
	nr, err := runs.LoadWith(newPath, m, ro)
	if err != nil {
		return fail(ExitInput, "new run %v", err)
	}
	warnRun(env, "check", nr)
	br, err := pickBaseline(env, *baseline, nr, m, ro)
	if err != nil {
		return err
	}
	if br == nil {
		fmt.Fprintf(env.Stdout, "popmon check: no run with the resources of %s (%s) in %s: nothing to compare\n", newPath, nr.Label, *baseline)
		return nil
	}
	rows, err := compareRuns(br, nr, metrics, regions, drops, *slowdown)
	if err != nil {
		return err
	}
	return printCheck(env, br, nr, rows, drops, *all)
}

// warnRun prints the run's warnings (a trace's skipped malformed lines, a
// TALP file's impossible load balance), as runs.LoadAll passes them for
// directories.
func warnRun(env *Env, cmd string, r *runs.Run) {
	for _, w := range r.Warnings {
		fmt.Fprintf(env.Stderr, "popmon %s: %v\n", cmd, &runs.Warning{Path: r.Source, Text: w})
	}
}

// pickBaseline loads the baseline file, or the newest run of the directory
// with the same resource configuration as nr (nil when there is none).
func pickBaseline(env *Env, path string, nr *runs.Run, m pop.Model, ro runs.ReadOptions) (*runs.Run, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		r, err := runs.LoadWith(path, m, ro)
		if err != nil {
			return nil, fail(ExitInput, "baseline %v", err)
		}
		warnRun(env, "check", r)
		return r, nil
	}
	all, err := runs.LoadAll([]string{path}, m, ro.SkipBad, loadWarner(env, "check"))
	if err != nil {
		return nil, fail(ExitInput, "baseline %v (--skip-bad skips such files)", err)
	}
	self, _ := filepath.Abs(nr.Source)
	var best *runs.Run
	for _, r := range all {
		if abs, _ := filepath.Abs(r.Source); abs == self {
			continue
		}
		if !r.Resources.SameConfiguration(nr.Resources) {
			continue
		}
		if best == nil || !r.Timestamp.Before(best.Timestamp) {
			best = r
		}
	}
	return best, nil
}

// compareRuns compares the chosen metrics of every chosen region present
// in both runs (names match exactly). Runs that share no region, or whose
// shared regions have no value to compare, are unusable inputs (exit 3).
func compareRuns(br, nr *runs.Run, metrics, regions []string, drops *dropFlag, slowdown float64) ([]checkRow, error) {
	var names []string
	for _, g := range nr.Regions {
		if _, ok := br.Region(g.Name); ok {
			names = append(names, g.Name)
		}
	}
	if len(names) == 0 {
		return nil, fail(ExitInput, "baseline %s and new run %s have no region in common (baseline: %s; new: %s): compare runs of the same program",
			br.Source, nr.Source, quoteList(br.RegionNames()), quoteList(nr.RegionNames()))
	}
	if len(regions) > 0 {
		var chosen []string
		for _, want := range regions {
			n, err := measure.MatchRegion(names, want, "in both runs")
			if err != nil {
				return nil, fail(ExitUsage, "%v", err)
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
				return nil, fail(ExitInput, "%s %s, region %q: No POP metrics: %s (popmon report %s shows it): %s, or name the regions to compare with --region",
					r.role, r.run.Source, name, g.Refused, r.run.Source, r.fix)
			}
		}
		if !hasEfficiencies(r.run, names) {
			return nil, fail(ExitInput, "%s %s has no efficiency value in %s (no useful time measured there?): %s",
				r.role, r.run.Source, regionPhrase(names), r.fix)
		}
	}
	var rows []checkRow
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
			rows = append(rows, checkRow{
				region: name, metric: id, base: bv, new: nv, change: nv - bv,
				regression: bv-nv > drops.For(id)+1e-9,
			})
		}
		if slowdown > 0 && bg.ElapsedNS > 0 {
			rel := float64(ng.ElapsedNS-bg.ElapsedNS) / float64(bg.ElapsedNS)
			rows = append(rows, checkRow{
				region: name, metric: pop.IDElapsedS, base: float64(bg.ElapsedNS) / 1e9, new: float64(ng.ElapsedNS) / 1e9,
				change: rel, relative: true, regression: rel > slowdown+1e-9,
			})
		}
	}
	for _, id := range metrics {
		if !seenMetric[id] {
			return nil, fail(ExitUsage, "metric %q is in no region of both runs (%s, %s): use a metric id of POP-METRICS.md §9 that both runs have", id, br.Source, nr.Source)
		}
	}
	for id := range drops.metric {
		if !seenMetric[id] {
			return nil, fail(ExitUsage, "--max-drop %s=…: metric %q is not compared: use an id of the compared metrics", id, id)
		}
	}
	if len(rows) == 0 {
		return nil, fail(ExitInput, "no metric of new run %s is in baseline %s for %s (0 values compared): compare runs measured the same way (same model and kind of file), or name metrics both have with --metric",
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
func (r checkRow) moved(drop float64) bool {
	if r.regression {
		return true
	}
	if r.relative {
		return math.Abs(r.change) >= 0.05
	}
	return math.Abs(r.change) >= max(min(drop/2, 0.02), 0.005)
}

func printCheck(env *Env, br, nr *runs.Run, rows []checkRow, drops *dropFlag, all bool) error {
	out := env.Stdout
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
		return fail(ExitFailure, "%v", err)
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
	if regressions > 0 {
		return fail(ExitFailure, "%d regression(s) against the baseline %s", regressions, br.Source)
	}
	return nil
}
