// Package pages writes popmon's static site (popmon pages): an index of
// experiments, and per experiment the POP scaling table coloured by
// value, evolution charts over time or commits, per-process times of the
// newest run and a badge. Everything is inline or local: the site makes
// no network request. docs/pages.md describes the site.
package pages

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// DefaultTitle is the site title when Options.Title is empty.
const DefaultTitle = "POP efficiency"

// maxRunRows is the number of runs listed on an experiment page.
const maxRunRows = 100

// Options configure [Generate].
type Options struct {
	// Input is the folder of experiments; Output the site folder.
	Input, Output string
	// Model is the metric model (empty: talp).
	Model pop.Model
	// Regions are the regions shown (empty: Global).
	Regions []string
	// Read says how runs are read, the traces of traced runs included
	// (the runs of a popmon pages command line); Read.SkipBad
	// also leaves unreadable files out (Warn gets the errors) instead of
	// failing.
	Read runs.ReadOptions
	// Title is the site title (empty: DefaultTitle).
	Title string
	// Warn receives warnings (nil: dropped).
	Warn func(error)
	// Progress receives progress lines for long work (nil: quiet); the
	// caller sets it only for a terminal.
	Progress io.Writer

	// fit and runTables replace, in tests, the fitted runtime model
	// (modelFit) and a traced run's wait-state tables (waitStates).
	fit       func(in FitInput) *ModelCurve
	runTables func(r *runs.Run, region string) []Table
}

// Result says what Generate did.
type Result struct {
	// Experiments and Runs are the numbers shown; Skipped the files left
	// out with SkipBad.
	Experiments, Runs, Skipped int
	// Files are the site files written, relative to Output.
	Files []string
}

// Generate reads the experiments below opts.Input and writes the site to
// opts.Output. Errors name the file or folder at fault.
func Generate(opts Options) (*Result, error) {
	if opts.Input == "" || opts.Output == "" {
		return nil, fmt.Errorf("pages: an input folder and an output folder are needed")
	}
	if opts.Model == "" {
		opts.Model = pop.ModelTALP
	}
	if len(opts.Regions) == 0 {
		opts.Regions = []string{measure.GlobalRegion}
	}
	if opts.Title == "" {
		opts.Title = DefaultTitle
	}
	if opts.fit == nil {
		opts.fit = modelFit
	}
	if opts.runTables == nil {
		opts.runTables = waitStates(opts.Read)
	}
	// Refuse a foreign output folder before any long work.
	if _, err := checkOutput(opts.Output); err != nil {
		return nil, err
	}
	exps, err := Discover(opts.Input, opts.Output)
	if err != nil {
		return nil, err
	}
	nfiles := 0
	for _, e := range exps {
		nfiles += len(e.Files)
	}
	if nfiles == 0 {
		return nil, fmt.Errorf("input %s: no run files (*.json, *.prv, *.prv.gz) below it", opts.Input)
	}
	prog := newProgress(opts.Progress, fmt.Sprintf("reading %d files", nfiles), nfiles)
	exps, skipped, err := loadExperiments(exps, opts.Model, opts.Read, opts.Warn, prog)
	if err != nil {
		return nil, err
	}
	if len(exps) == 0 {
		return nil, fmt.Errorf("input %s: no readable run files", opts.Input)
	}
	if err := checkRegions(exps, opts.Regions); err != nil {
		return nil, err
	}
	files, nruns, err := buildSite(exps, opts)
	if err != nil {
		return nil, err
	}
	if err := writeSite(opts.Output, files); err != nil {
		return nil, err
	}
	res := &Result{Experiments: len(exps), Runs: nruns, Skipped: skipped}
	for n := range files {
		res.Files = append(res.Files, n)
	}
	return res, nil
}

// checkRegions refuses a region name that no run has but that differs
// only in case from one that some run has (a *measure.RegionError suggesting
// it): names are case-sensitive. A name that no run has in any case is
// kept: its experiment pages say that no run has it.
func checkRegions(exps []*Experiment, want []string) error {
	seen := map[string]bool{}
	var names []string
	for _, e := range exps {
		for _, r := range e.Runs {
			for _, n := range r.RegionNames() {
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
	}
	for _, w := range want {
		_, err := measure.MatchRegion(names, w, "in any run")
		var re *measure.RegionError
		if errors.As(err, &re) && len(re.Suggest) > 0 {
			return fmt.Errorf("--region: %w", err)
		}
	}
	return nil
}

// buildSite renders every file of the site in memory.
func buildSite(exps []*Experiment, opts Options) (map[string][]byte, int, error) {
	files := map[string][]byte{}
	scale := scaleLegend()
	idx := indexPage{Title: opts.Title, Model: string(opts.Model), CSS: template.CSS(pageCSS), Regions: opts.Regions, Scale: scale}
	var newest *runs.Run
	prog := newProgress(opts.Progress, fmt.Sprintf("writing %d experiments", len(exps)), len(exps))
	for _, e := range exps {
		page, err := experimentPage(e, opts)
		if err != nil {
			return nil, 0, err
		}
		page.Scale = scale
		html, err := render(expTmpl, page)
		if err != nil {
			return nil, 0, fmt.Errorf("experiment %s: %w", safetext.Text(e.Name), err)
		}
		files[e.Slug+"/index.html"] = html
		n := e.Newest()
		pe := parallelEfficiency(n)
		files[e.Slug+"/badge.svg"] = []byte(Badge("parallel efficiency", pe))
		idx.Runs += len(e.Runs)
		idx.Experiments = append(idx.Experiments, indexRow{
			Name: e.Name, Slug: e.Slug, Runs: len(e.Runs), Time: runTime(n), Label: n.Label,
			Commit: shortCommit(n.Git.Commit), PE: effCell(pe),
			Partial: isPartial(n),
		})
		row := &idx.Experiments[len(idx.Experiments)-1]
		row.Trend, row.TrendNote = trend(e)
		if newest == nil || n.Timestamp.After(newest.Timestamp) {
			newest = n
		}
		prog.step()
	}
	prog.finish()
	files["badge.svg"] = []byte(Badge("parallel efficiency", parallelEfficiency(newest)))
	html, err := render(indexTmpl, idx)
	if err != nil {
		return nil, 0, fmt.Errorf("index: %w", err)
	}
	files["index.html"] = html
	for n, b := range files {
		files[n] = safeDocument(b)
	}
	return files, idx.Runs, nil
}

// safeDocument returns the page or SVG b with every character that came
// from a file and is not safe to show (control characters, bidi
// overrides, invalid UTF-8) escaped visibly (safetext.Lines). html/template
// and esc have already escaped HTML; this pass makes every file valid
// UTF-8 (and the SVG valid XML) whatever the names were.
func safeDocument(b []byte) []byte {
	s := string(b)
	if t := safetext.Lines(s); t != s {
		return []byte(t)
	}
	return b
}

// maxTrend is the number of newest runs in an index sparkline.
const maxTrend = 20

// trend is the index's sparkline of e and what it shows: the Global
// parallel efficiency of the newest runs (at most maxTrend) of the newest
// run's configuration when it has several; otherwise, for a scaling
// study, that of the newest run of each configuration by CPUs.
func trend(e *Experiment) (template.HTML, string) {
	n := e.Newest()
	var same []*runs.Run
	for _, r := range e.Runs {
		if configKey(r) == configKey(n) {
			same = append(same, r)
		}
	}
	var vs []float64
	var what string
	if cfgs := configsOf(e, measure.GlobalRegion); len(same) < 2 && len(cfgs) > 1 {
		for _, c := range cfgs {
			vs = append(vs, parallelEfficiency(e.Runs[c.idx[len(c.idx)-1]]))
		}
		what = fmt.Sprintf("by CPUs: %d to %d", cfgs[0].cpus, cfgs[len(cfgs)-1].cpus)
	} else {
		same = same[max(0, len(same)-maxTrend):]
		for _, r := range same {
			vs = append(vs, parallelEfficiency(r))
		}
		what = fmt.Sprintf("%s, newest %d run(s)", n.Label, len(same))
	}
	return template.HTML(Sparkline(fmt.Sprintf("parallel efficiency of %s, %s", e.Name, what), vs)), what
}

// experimentPage computes the data of one experiment's page.
func experimentPage(e *Experiment, opts Options) (*expPage, error) {
	n := e.Newest()
	p := &expPage{
		Title: opts.Title, Model: string(opts.Model), CSS: template.CSS(pageCSS), Exp: e,
		Newest: runInfo(n, opts.Input),
	}
	sc, cols, err := scaling(e, opts.Model)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", safetext.Text(e.Name), err)
	}
	p.Mode = string(sc.Mode)
	p.ModeHead, p.ModeWhy = modeSentence(sc)
	if e.ByCommit {
		p.EvolutionNote = "Every run has git metadata: runs are plotted over commits, in time order."
	} else {
		p.EvolutionNote = "Runs are plotted over their time (UTC); with git metadata in every run they would be plotted over commits."
	}
	used := map[string]bool{}
	for _, name := range opts.Regions {
		rv := regionView{Name: name, Anchor: "region-" + uniqueSlug(slug(name), used)}
		for k := range sc.Regions {
			if g := &sc.Regions[k]; g.Name == name { // names are case-sensitive
				rv.Table = tableOf(g, cols, opts.Input)
				var model *ModelCurve
				if sc.Mode == pop.ScalingStrong && len(g.Runs) > 1 {
					model = opts.fit(FitInput{Experiment: e.Name, Region: g, Runs: cols, Points: scalingPoints(g)})
				}
				if model != nil {
					rv.ModelNote = model.Note
				}
				rv.ScalingCharts = scalingCharts(g, sc.Mode, model)
				break
			}
		}
		rv.Charts, rv.HistoryNote = evolutionCharts(e, rv.Name)
		rv.OverTime, rv.OverTimeNote = overTimeChart(n, rv.Name, opts.Model)
		procs, note := processTimes(n, rv.Name)
		rv.ProcNote = note
		if len(procs) > 0 {
			rv.ProcChart = template.HTML(ProcessChart(fmt.Sprintf("%s: useful and MPI time per process, %s", rv.Name, n.Label), procs))
		} else if u, mp, np, ok := processDistribution(n, rv.Name); ok {
			rv.ProcChart = template.HTML(DistributionChart(fmt.Sprintf("%s: distribution of useful and MPI time per process, %s", rv.Name, n.Label), u, mp))
			rv.Tables = append(rv.Tables, distributionTable(u, mp, np))
		}
		rv.Tables = append(rv.Tables, gpuTables(n, rv.Name)...)
		rv.Tables = append(rv.Tables, opts.runTables(n, rv.Name)...)
		p.Regions = append(p.Regions, rv)
	}
	if t := mpiCallTable(n.Measurement); t != nil {
		p.RunTables = append(p.RunTables, *t)
	}
	regs := regressions(e, opts.Regions[0])
	for i := len(e.Runs) - 1; i >= 0 && len(p.RunRows) < maxRunRows; i-- {
		row := runInfo(e.Runs[i], opts.Input)
		for _, r := range regs[i] {
			if row.Regression != "" {
				row.Regression += "; "
			}
			row.Regression += r.String()
		}
		p.RunRows = append(p.RunRows, row)
	}
	p.MoreRuns = len(e.Runs) - len(p.RunRows)
	return p, nil
}

// scaling computes the scaling tables of e with the scaling package: the
// columns are the newest run of each resource configuration (returned:
// the tables' run IDs index them), the reference the fewest CPUs, the
// mode detected.
func scaling(e *Experiment, model pop.Model) (*pop.Scaling, []*runs.Run, error) {
	var sel []*runs.Run
	pos := map[string]int{}
	for _, r := range e.Runs { // oldest first: later runs replace earlier
		key := configKey(r)
		if i, ok := pos[key]; ok {
			sel[i] = r
			continue
		}
		pos[key] = len(sel)
		sel = append(sel, r)
	}
	in, err := runs.ScalingInput(sel, model, pop.ScalingAuto, -1, "")
	if err != nil {
		return nil, nil, err
	}
	sc, err := pop.Scale(in)
	return sc, sel, err
}

// isPartial reports whether r is a partial run (cut short: only the
// measured part counts).
func isPartial(r *runs.Run) bool { return r.Measurement != nil && r.Measurement.Partial != nil }

// tableOf turns a scaling region into table cells: efficiencies coloured,
// other rows plain; a column whose run (cols[ID]) is partial says so.
func tableOf(g *pop.ScalingRegion, cols []*runs.Run, input string) *tableView {
	t := &tableView{}
	for i, x := range g.Runs {
		c := colView{Label: x.Label, Source: relPath(x.Source, input), CPUs: x.CPUs, Ref: i == g.Reference && x.Refused == ""}
		if x.ID >= 0 && x.ID < len(cols) {
			c.Partial = isPartial(cols[x.ID])
		}
		t.Cols = append(t.Cols, c)
		if x.Refused != "" {
			t.Refused = append(t.Refused, fmt.Sprintf("%s, %d CPUs (%s): no POP metrics: %s.",
				x.Label, x.CPUs, relPath(x.Source, input), safetext.Text(x.Refused)))
		}
	}
	if len(g.Runs) > 0 {
		ref := g.Runs[g.Reference]
		t.Reference = fmt.Sprintf("%s, %d CPUs (%s)", ref.Label, ref.CPUs, relPath(ref.Source, input))
		if ref.Refused != "" {
			t.Reference = "none (no run has POP metrics in this region)"
		}
	}
	for j := range g.Rows {
		r := &g.Rows[j]
		rv := rowView{ID: r.ID, Name: r.Name, Depth: r.Depth}
		for i := range g.Runs {
			v, ok := r.Value(i)
			switch {
			case g.Runs[i].Refused != "":
				rv.Cells = append(rv.Cells, cell{Text: "refused", Style: "color:#999"})
			case !ok:
				rv.Cells = append(rv.Cells, cell{Text: "-", Style: "color:#999"})
			case r.Kind == pop.KindEfficiency:
				rv.Cells = append(rv.Cells, effCell(v))
			default:
				rv.Cells = append(rv.Cells, cell{Text: FormatValue(r.ID, v)})
			}
		}
		t.Rows = append(t.Rows, rv)
	}
	return t
}

// FormatValue formats a table value: elapsed seconds with 3 decimals,
// everything else with 2 (as popmon scaling's text output).
func FormatValue(id string, v float64) string {
	if id == pop.IDElapsedS {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// effCell is a cell showing efficiency v (NaN: absent) in its colour.
func effCell(v float64) cell {
	if math.IsNaN(v) {
		return cell{Text: "-", Style: template.CSS("background:" + CellColour(v))}
	}
	return cell{Text: fmt.Sprintf("%.2f", v), Style: template.CSS("background:" + CellColour(v))}
}

// scaleLegend is the colour legend 0, 0.1, …, 1.
func scaleLegend() []cell {
	var out []cell
	for i := 0; i <= 10; i++ {
		out = append(out, effCell(float64(i)/10))
	}
	return out
}

// parallelEfficiency returns the parallel efficiency of r's Global region
// (parallel_efficiency, or hybrid_parallel_efficiency for model
// pop-hybrid); NaN when absent.
func parallelEfficiency(r *runs.Run) float64 {
	if r == nil {
		return math.NaN()
	}
	g, ok := r.Region(measure.GlobalRegion)
	if !ok {
		return math.NaN()
	}
	if v, ok := g.Metrics[pop.IDParallelEfficiency]; ok {
		return v
	}
	if v, ok := g.Metrics[pop.IDHybridParallelEfficiency]; ok {
		return v
	}
	return math.NaN()
}

// runInfo is the table row of a run.
func runInfo(r *runs.Run, input string) runRow {
	row := runRow{Time: runTime(r), Label: r.Label, Commit: shortCommit(r.Git.Commit), Branch: r.Git.Branch,
		Source: relPath(r.Source, input), PE: effCell(parallelEfficiency(r))}
	if r.Measurement != nil && r.Measurement.Partial != nil {
		row.Partial = r.Measurement.Partial.Sentence()
	}
	if g, ok := r.Region(measure.GlobalRegion); ok {
		row.Elapsed = FormatValue(pop.IDElapsedS, float64(g.ElapsedNS)/1e9)
	}
	return row
}

func runTime(r *runs.Run) string {
	s := r.Timestamp.UTC().Format("2006-01-02 15:04:05 UTC")
	if r.TimestampFromMtime {
		s += " (file time)"
	}
	return s
}

// relPath returns p relative to dir when it lies below it.
func relPath(p, dir string) string {
	if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}
