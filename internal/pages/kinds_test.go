package pages

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/patterns"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
)

// epochData is the EPOCH strong-scaling experiment (Extrae traces of 1 to
// 16 processes) shared by the project.
const epochData = "../../../shared/data/pypop"

// epochImports holds the EPOCH traces imported once per test binary (as
// popmon import writes them): importing takes seconds.
var epochImports struct {
	once sync.Once
	dir  string
	err  error
}

// TestMain removes the imported EPOCH traces after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if epochImports.dir != "" {
		os.RemoveAll(epochImports.dir)
	}
	os.Exit(code)
}

// epochTraces returns the EPOCH trace files (skipping the test when the
// shared data is absent).
func epochTraces(t testing.TB) []string {
	t.Helper()
	traces, _ := filepath.Glob(filepath.Join(epochData, "epoch_*proc.prv.gz"))
	if len(traces) != 5 {
		t.Skipf("EPOCH traces not found in %s (%d files)", epochData, len(traces))
	}
	return traces
}

// epochJSON returns the folder of the EPOCH traces imported into popmon
// measurement files (epoch_<n>proc.json), imported once.
func epochJSON(t testing.TB) string {
	t.Helper()
	traces := epochTraces(t)
	epochImports.once.Do(func() {
		dir, err := os.MkdirTemp("", "popmon-pages-epoch-")
		if err != nil {
			epochImports.err = err
			return
		}
		epochImports.dir = dir
		for _, tr := range traces {
			f, err := runs.Open(tr, runs.ReadOptions{})
			if err != nil {
				epochImports.err = err
				return
			}
			name := strings.TrimSuffix(filepath.Base(tr), ".prv.gz") + ".json"
			out, err := os.Create(filepath.Join(dir, name))
			if err != nil {
				epochImports.err = err
				return
			}
			err = measure.Write(out, f.Measurement)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				epochImports.err = err
				return
			}
		}
	})
	if epochImports.err != nil {
		t.Fatalf("importing the EPOCH traces: %v", epochImports.err)
	}
	return epochImports.dir
}

// linkTraces makes dir hold the EPOCH traces (symbolic links to the
// .prv.gz, .pcf and .row files).
func linkTraces(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tr := range epochTraces(t) {
		base := strings.TrimSuffix(tr, ".prv.gz")
		for _, p := range []string{tr, base + ".pcf", base + ".row"} {
			abs, _ := filepath.Abs(p)
			if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(p))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// chartLabels returns the value labels of metric id in each chart of the
// page's scaling charts of region, chart by chart (only charts that have
// the metric).
func chartLabels(page, region, id string) [][]string {
	start := strings.Index(page, fmt.Sprintf(`<div class="scaling-charts" data-region="%s">`, region))
	if start < 0 {
		return nil
	}
	sec := page[start:]
	sec = sec[:strings.Index(sec, "</div></div>")]
	re := regexp.MustCompile(fmt.Sprintf(`class="v" style="[^"]*" data-metric="%s">([^<]*)<`, regexp.QuoteMeta(id)))
	var out [][]string
	for _, svg := range strings.Split(sec, "<svg")[1:] {
		var vs []string
		for _, m := range re.FindAllStringSubmatch(svg, -1) {
			vs = append(vs, m[1])
		}
		if len(vs) > 0 {
			out = append(out, vs)
		}
	}
	return out
}

// tableRow returns the cells of metric id in region's scaling table, in
// column order ("-" for absent).
func tableRow(t testing.TB, page, region, id string, cols int) []string {
	var out []string
	for c := 0; c < cols; c++ {
		out = append(out, cellText(t, page, region, id, c))
	}
	return out
}

// TestEpochScalingCharts is the done-when on the EPOCH 1–16
// experiment: a factor chart and a speedup chart whose labelled values
// equal the scaling table's, no single-point history chart, and a site
// built from the traces equal to the one built from their imports.
func TestEpochScalingCharts(t *testing.T) {
	imports := epochJSON(t)
	inTr, inJS := t.TempDir(), t.TempDir()
	linkTraces(t, filepath.Join(inTr, "epoch"))
	copyTree(t, imports, filepath.Join(inJS, "epoch"))
	siteTr, siteJS := filepath.Join(t.TempDir(), "site"), filepath.Join(t.TempDir(), "site")
	// The traces' wait states are not in their imports: left out here.
	noWaits := func(*runs.Run, string) []Table { return nil }
	if _, err := Generate(Options{Input: inTr, Output: siteTr, runTables: noWaits}); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Input: inJS, Output: siteJS}); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, filepath.Join(siteTr, "epoch", "index.html"))
	checkPage(t, filepath.Join(siteTr, "epoch", "index.html"))
	// The table: 5 columns, reference 1 process; pypop's modelfactors.csv
	// has speedup 9.36 at 16 processes.
	if got := cellText(t, page, "Global", "speedup", 4); got != "9.36" {
		t.Errorf("speedup at 16 = %s, want 9.36", got)
	}
	ids := []string{"global_efficiency", "parallel_efficiency", "mpi_parallel_efficiency", "mpi_communication_efficiency",
		"mpi_load_balance", "computation_scalability", "instruction_scaling", "ipc_scaling", "frequency_scaling", "speedup"}
	for _, id := range ids {
		want := tableRow(t, page, "Global", id, 5)
		charts := chartLabels(page, "Global", id)
		if len(charts) == 0 {
			t.Errorf("%s: no chart labels", id)
		}
		for k, got := range charts {
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s chart %d labels %v, table %v", id, k, got, want)
			}
		}
	}
	if n := strings.Count(page, `data-metric="parallel_efficiency">`); n != 10 { // two charts × 5 columns
		t.Errorf("%d parallel efficiency labels, want 10", n)
	}
	if !strings.Contains(page, "Global: speedup T_ref / T against CPUs") || !strings.Contains(page, "Global: parallel efficiency and its factors") {
		t.Error("no speedup or factor chart")
	}
	if strings.Contains(page, "history-charts") || !strings.Contains(page, "No history yet: one run of each configuration") {
		t.Error("history charts of single runs")
	}
	if idx := readFile(t, filepath.Join(siteTr, "index.html")); !strings.Contains(idx, "by CPUs: 1 to 16") {
		t.Error("index: no EPOCH trend by CPUs")
	}
	if !strings.Contains(page, "Strong scaling: the same problem on more CPUs") || strings.Contains(page, "auto: instructions") {
		t.Error("the mode is not said in plain words")
	}
	// Traces and their imports give the same site, but for the file names.
	for _, f := range []string{"index.html", "epoch/index.html", "badge.svg", "epoch/badge.svg"} {
		a := strings.ReplaceAll(readFile(t, filepath.Join(siteTr, f)), ".prv.gz", ".json")
		b := readFile(t, filepath.Join(siteJS, f))
		if a != b {
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Errorf("%s differs from traces and from imports at byte %d: %q vs %q", f, i, a[max(0, i-80):min(len(a), i+80)], b[max(0, i-80):min(len(b), i+80)])
		}
	}
}

// handCurve returns the hand-made model of the kinds site (experiment
// strong): Amdahl with serial fraction 0.2 (speedup 1/(0.2 + 0.8/p)) and
// two predictions. It checks what the hook is given.
func handCurve(t testing.TB) func(FitInput) *ModelCurve {
	return func(in FitInput) *ModelCurve {
		if in.Experiment != "strong" {
			return nil
		}
		if len(in.Runs) != 2 || len(in.Points) != 2 || in.Points[1].CPUs != 2 || in.Points[1].Speedup != 10.0/6 ||
			in.Runs[in.Region.Runs[1].ID].Resources.CPUs != 2 || in.Region.Name != "Global" {
			t.Errorf("Fit input: %d runs, region %s, points %+v", len(in.Runs), in.Region.Name, in.Points)
		}
		amdahl := func(p float64) float64 { return 1 / (0.2 + 0.8/p) }
		c := &ModelCurve{Name: "amdahl", Note: "serial fraction 0.20 (hand-made for the test)"}
		for k := 0; k <= 6; k++ {
			p := math.Exp2(float64(k) / 2)
			c.Curve = append(c.Curve, Point{p, amdahl(p)})
		}
		c.Predicted = []Point{{4, amdahl(4)}, {8, amdahl(8)}}
		return c
	}
}

// writePageKinds writes one experiment of each page kind below in:
// strong (a pair; a model curve through handCurve), history (two
// configurations over three commits, the last a regression), partial (a
// complete run, then a partial one),
// gpu, bytes (MPI calls with bytes and sizes) and scale (10⁴ ranks in
// summary form).
func writePageKinds(t testing.TB, in string) {
	t.Helper()
	strongPair(t, filepath.Join(in, "strong"))
	// History: 1 and 2 ranks at commits c1, c2, c3; 2 ranks regress at c3
	// (PE 0.75 → 0.60: rank 1 waits 3 s of 7.5).
	for k, c := range []string{"c1aaaaaaaaaa", "c2bbbbbbbbbb", "c3cccccccccc"} {
		ts := t0.Add(time.Duration(k) * time.Hour)
		one := synthRun(ts, 10, []string{"Global"}, rank{10, 0})
		two := synthRun(ts.Add(time.Minute), 6, []string{"Global"}, rank{5, 1}, rank{4, 2})
		if k == 2 {
			two = synthRun(ts.Add(time.Minute), 7.5, []string{"Global"}, rank{6, 1.5}, rank{3, 4.5})
		}
		for _, m := range []*measure.Measurement{one, two} {
			m.Git = &measure.Git{Commit: c, Branch: "main"}
		}
		writeRun(t, filepath.Join(in, "history"), fmt.Sprintf("run-%d-1.json", k), one)
		writeRun(t, filepath.Join(in, "history"), fmt.Sprintf("run-%d-2.json", k), two)
	}
	// Partial.
	m := twoPhaseRun(t0)
	m.Version = 3
	m.Partial = &measure.Partial{Reason: measure.PartialKilled, Detail: "2 of 2 processes were killed", CutNS: sec(4),
		Ranks: 2, Included: 2, AssembledBy: "run",
		Ends: []measure.ProcessEnd{{Rank: 0, End: "killed", ValidUntilNS: sec(4)}, {Rank: 1, End: "killed", ValidUntilNS: sec(4)}}}
	writeRun(t, filepath.Join(in, "partial"), "run-1.json", m)
	writeRun(t, filepath.Join(in, "partial"), "run-0.json", twoPhaseRun(t0.Add(-time.Hour))) // complete, earlier
	// GPU.
	gpu, err := os.ReadFile("../../measure/testdata/gpu_devices.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(in, "gpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "gpu", "gpu.json"), gpu, 0o644); err != nil {
		t.Fatal(err)
	}
	// Bytes: 2 ranks, MPI_Send 3 calls of 1 KiB + 1 of 0 bytes, MPI_Recv
	// the same received.
	b := synthRun(t0, 6, []string{"Global"}, rank{5, 1}, rank{4, 2})
	b.MPICalls = []measure.MPICall{
		{Name: "MPI_Send", Calls: 4, TimeNS: sec(1), MinTimeNS: sec(0.25), MaxTimeNS: sec(0.75), MaxRank: 1,
			BytesSent: 3072, SizeHist: []int64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}},
		{Name: "MPI_Recv", Calls: 4, TimeNS: sec(2), MinTimeNS: sec(0.75), MaxTimeNS: sec(1.25), MaxRank: 0,
			BytesRecv: 3072, SizeHist: []int64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}},
	}
	writeRun(t, filepath.Join(in, "bytes"), "run-1.json", b)
	// Scale: 10 000 ranks, useful 4 + (r mod 100)/100 s, MPI the rest of
	// 6 s, in summary form.
	ranks := make([]rank, 10000)
	for r := range ranks {
		u := 4 + float64(r%100)/100
		ranks[r] = rank{u, 6 - u}
	}
	big := synthRun(t0, 6, []string{"Global"}, ranks...)
	writeRun(t, filepath.Join(in, "scale"), "run-1.json", measure.Summarize(big, 1000))
	// Traced: the 2-rank EPOCH trace (its wait states through the
	// tables replaced by traceTables).
	for _, name := range []string{"epoch_2proc.prv.gz", "epoch_2proc.pcf", "epoch_2proc.row"} {
		b, err := os.ReadFile(filepath.Join("..", "paraver", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(in, "traced"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, "traced", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// traceTables replaces the wait states Generate reads (waitStates),
// for the traced page kind: the wait states of a Paraver run.
func traceTables(t testing.TB) func(*runs.Run, string) []Table {
	return func(r *runs.Run, region string) []Table {
		if region != measure.GlobalRegion || r.Kind != runs.KindParaver {
			return nil
		}
		tr, err := paraver.ReadTrace(r.Source, paraver.Options{Path: r.Source})
		if err != nil {
			t.Errorf("%s: %v", r.Source, err)
			return nil
		}
		res, err := patterns.Analyze(tr, patterns.Options{})
		if err != nil {
			t.Errorf("%s: %v", r.Source, err)
			return nil
		}
		return WaitStateTables("Wait states (traced run "+r.Label+")", res)
	}
}

// kindWants are strings each page kind of writePageKinds must show (raw
// HTML as written; the browser test checks them in the rendered DOM).
var kindWants = map[string][]string{
	"strong": {"model: amdahl", "predicted (amdahl)", `data-metric="predicted">2.50<`, `data-metric="predicted">3.33<`,
		"Model: serial fraction 0.20 (hand-made for the test)", `data-metric="speedup">1.67<`},
	"history": {"History: each configuration over commits", `class="regression"`, "<strong>regression</strong>: Parallel efficiency fell from 0.75 to 0.60 (more than 0.05)",
		"Global: Parallel efficiency", ">−0.15<", "c3cccccc"},
	"partial": {"The newest run is partial", `<tr class="partial">`, `<strong class="partial">partial run</strong>`, "partial run (cut short)"},
	"gpu":     {"GPU: host and device efficiency trees", "Top GPU kernels", "spin_kernel", "GPU memory operations", "device"},
	"bytes":   {"Bytes sent", "3.07 kB", "Mean message size", "768 B", "Message sizes: messages per size", "1Ki–2Ki"},
	// EPOCH 2 ranks: Late Sender 0.073 s over ranks (research note §3.5).
	"traced": {"Wait states (traced run 2xMPI 1xOpenMP)", "<td>Late Sender</td><td class=\"num\">0.073</td>", "Critical path (traced run)", "<td>(useful)</td><td class=\"num\">11.118</td>"},
	"scale": {"Per process at scale: 10000 processes", "distribution of useful and MPI time per process",
		// Useful: min 4.000 s at rank 0, max 4.990 s at rank 99.
		"<td class=\"num\">4.000</td><td class=\"num\">0</td>", "<td class=\"num\">4.990</td><td class=\"num\">99</td>",
		// Median: 20 bins of (4.99 − 4)/20 = 0.0495 s hold 500 ranks each;
		// the 5000th is in bin 9, whose middle is 4 + 9.5 × 0.0495 =
		// 4.470 s.
		"<td class=\"num\">4.470</td>", "histogram of 20 equal bins"},
}

// TestPageKinds checks what each page kind shows (the same site the
// browser test loads).
func TestPageKinds(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "site")
	writePageKinds(t, in)
	if _, err := Generate(Options{Input: in, Output: out, fit: handCurve(t), runTables: traceTables(t)}); err != nil {
		t.Fatal(err)
	}
	for exp, ws := range kindWants {
		page := readFile(t, filepath.Join(out, exp, "index.html"))
		checkPage(t, filepath.Join(out, exp, "index.html"))
		for _, w := range ws {
			if !strings.Contains(page, w) {
				t.Errorf("%s: page lacks %q", exp, w)
			}
		}
	}
	hist := readFile(t, filepath.Join(out, "history", "index.html"))
	// Run 3 of 2 ranks: PE and MPI PE 0.75 → 0.60, load balance 0.90 →
	// 0.75 (In too: one node), communication 0.83 → 0.80 (within 0.05).
	if n := strings.Count(hist, `<tr class="regression">`); n != 1 {
		t.Errorf("history: %d runs marked, want 1", n)
	}
	if n := strings.Count(hist, `class="regression"/>`); n != 4 {
		t.Errorf("history: %d ✕ in charts, want 4 (PE, MPI PE, LB, LB in)", n)
	}
	if strings.Contains(hist, "Communication efficiency fell") {
		t.Error("a drop of 0.03 is marked")
	}
	idx := readFile(t, filepath.Join(out, "index.html"))
	if n := strings.Count(idx, "<polyline"); n != 3 {
		t.Errorf("index: %d sparklines with a line, want history's, partial's and strong's", n)
	}
	for _, w := range []string{"2xMPI 1xOpenMP, newest 3 run(s)", "by CPUs: 1 to 2", "10000xMPI 1xOpenMP, newest 1 run(s)",
		// history's 2-rank runs: 0.75, 0.75, 0.60, the last written.
		`class="v">0.60</text>`} {
		if !strings.Contains(idx, w) {
			t.Errorf("index lacks %q", w)
		}
	}
}
