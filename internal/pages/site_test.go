package pages

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// talpData is the folder of DLB/TALP JSON samples shared by the project.
const talpData = "../../../shared/data/talp-json"

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// strongPair writes the synthetic strong-scaling pair of the tests into
// dir: 1 rank (T 10 s, U 10 s) and, an hour later, 2 ranks (T 6 s; rank 0
// U 5 s M 1 s, rank 1 U 4 s M 2 s).
func strongPair(t testing.TB, dir string) {
	writeRun(t, dir, "run-1.json", synthRun(t0, 10, []string{"Global"}, rank{10, 0}))
	writeRun(t, dir, "run-2.json", synthRun(t0.Add(time.Hour), 6, []string{"Global"}, rank{5, 1}, rank{4, 2}))
}

// cellText returns the text of the scaling table cell of metric id in
// column col of region's table on page.
func cellText(t testing.TB, page, region, id string, col int) string {
	t.Helper()
	start := strings.Index(page, fmt.Sprintf(`<table class="scaling" data-region="%s">`, region))
	if start < 0 {
		t.Fatalf("no scaling table of region %s", region)
	}
	table := page[start:]
	table = table[:strings.Index(table, "</table>")]
	re := regexp.MustCompile(fmt.Sprintf(`data-metric="%s" data-col="%d"[^>]*>([^<]*)<`, regexp.QuoteMeta(id), col))
	m := re.FindStringSubmatch(table)
	if m == nil {
		t.Fatalf("no cell %s/%d in region %s", id, col, region)
	}
	return m[1]
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkPage checks what every page must satisfy: no external reference,
// every inline SVG well-formed.
func checkPage(t testing.TB, path string) {
	t.Helper()
	s := readFile(t, path)
	if refs := externalRefs(s); len(refs) > 0 {
		t.Errorf("%s refers to %v", path, refs)
	}
	for i := 0; ; i++ {
		a := strings.Index(s, "<svg")
		if a < 0 {
			break
		}
		b := strings.Index(s[a:], "</svg>")
		if b < 0 {
			t.Fatalf("%s: unterminated <svg>", path)
		}
		checkXML(t, fmt.Sprintf("%s: svg %d", path, i), s[a:a+b+len("</svg>")])
		s = s[a+b:]
	}
}

func TestSiteFromPopmonFiles(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "site")
	strongPair(t, filepath.Join(in, "strong"))
	res, err := Generate(Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Experiments != 1 || res.Runs != 2 {
		t.Fatalf("result %+v", res)
	}
	for _, f := range []string{"index.html", "badge.svg", "strong/index.html", "strong/badge.svg", MarkerName} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	page := readFile(t, filepath.Join(out, "strong/index.html"))
	// Hand-computed (talp model, strong scaling, reference 1 rank):
	// run 2: PE = ΣU/(ΣU+ΣM) = 9/12 = 0.75; MPI PE = (T − ΣM/C)/T =
	// (6 − 1.5)/6 = 0.75; communication = (T − min M)/T = 5/6 = 0.83;
	// load balance = 4.5/5 = 0.90; computation scalability = 10/9 =
	// 1.11; global = 0.75 × 1.11 = 0.83; speedup = 10/6 = 1.67;
	// efficiency by speedup = 1.67/2 = 0.83.
	want := map[string][2]string{
		"global_efficiency":            {"1.00", "0.83"},
		"parallel_efficiency":          {"1.00", "0.75"},
		"mpi_parallel_efficiency":      {"1.00", "0.75"},
		"mpi_communication_efficiency": {"1.00", "0.83"},
		"mpi_load_balance":             {"1.00", "0.90"},
		"computation_scalability":      {"1.00", "1.11"},
		"speedup":                      {"1.00", "1.67"},
		"speedup_efficiency":           {"1.00", "0.83"},
		"elapsed_s":                    {"10.000", "6.000"},
	}
	for id, w := range want {
		for col := 0; col < 2; col++ {
			if got := cellText(t, page, "Global", id, col); got != w[col] {
				t.Errorf("%s column %d = %s, want %s", id, col, got, w[col])
			}
		}
	}
	// Colours: 0.75 is yellow-green, the 1.11 of computation scalability
	// stays green.
	if !strings.Contains(page, `data-metric="parallel_efficiency" data-col="1" style="background:`+CellColour(0.75)+`"`) {
		t.Error("parallel efficiency 0.75 not coloured by the scale")
	}
	if !strings.Contains(page, `data-metric="computation_scalability" data-col="1" style="background:`+CellColour(1)+`"`) {
		t.Error("computation scalability 1.11 not green")
	}
	for _, w := range []string{"rank 1: MPI 2.000 s", "rank 0: useful 5.000 s", "Strong scaling: the same problem on more CPUs",
		"No history yet: one run of each configuration (1xMPI 1xOpenMP, 2xMPI 1xOpenMP)", "Global: speedup T_ref / T against CPUs"} {
		if !strings.Contains(page, w) {
			t.Errorf("experiment page lacks %q", w)
		}
	}
	idx := readFile(t, filepath.Join(out, "index.html"))
	if !strings.Contains(idx, `href="strong/index.html"`) || !regexp.MustCompile(`data-metric="parallel_efficiency"[^>]*>0.75<`).MatchString(idx) {
		t.Error("index lacks the experiment link or the newest run's parallel efficiency 0.75")
	}
	if b := readFile(t, filepath.Join(out, "strong/badge.svg")); !strings.Contains(b, ">0.75<") {
		t.Errorf("badge: %s", b)
	}
	for _, f := range []string{"index.html", "strong/index.html", "badge.svg", "strong/badge.svg"} {
		checkPage(t, filepath.Join(out, f))
	}
}

func TestSiteFromTALPFiles(t *testing.T) {
	if _, err := os.Stat(talpData); err != nil {
		t.Skipf("no TALP samples at %s: %v", talpData, err)
	}
	out := filepath.Join(t.TempDir(), "site")
	res, err := Generate(Options{Input: talpData, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Experiments != 4 {
		t.Errorf("%d experiments, want 4 (genex, strong, weak, unit-tests)", res.Experiments)
	}
	page := readFile(t, filepath.Join(out, "jsons-run-folder-strong-scaling/index.html"))
	// Hand-computed from test_base.json (2 CPUs) and test_double.json
	// (region Global: 4 CPUs): computation scalability = ΣU_ref/ΣU =
	// 12514719683/24514719683 = 0.51; speedup = 10002805067/24002805067
	// = 0.42; efficiency by speedup = 0.4167/(4/2) = 0.21; IPC scaling =
	// 21817855/51817855 = 0.42; frequency scaling = (51817855/24514719683)
	// / (21817855/12514719683) = 1.21.
	want := map[string][2]string{
		"global_efficiency":       {"1.00", "0.51"},
		"parallel_efficiency":     {"1.00", "1.00"},
		"computation_scalability": {"1.00", "0.51"},
		"ipc_scaling":             {"1.00", "0.42"},
		"frequency_scaling":       {"1.00", "1.21"},
		"speedup":                 {"1.00", "0.42"},
		"speedup_efficiency":      {"1.00", "0.21"},
		"elapsed_s":               {"10.003", "24.003"},
	}
	for id, w := range want {
		for col := 0; col < 2; col++ {
			if got := cellText(t, page, "Global", id, col); got != w[col] {
				t.Errorf("%s column %d = %s, want %s", id, col, got, w[col])
			}
		}
	}
	if !strings.Contains(page, "TALP JSON files hold no per-process data") {
		t.Error("TALP page does not say that per-process data is missing")
	}
	// The weak-scaling sample (instructions per CPU 1.17 × the
	// reference's) is drawn as weak-scaling efficiency T_ref/T = 0.42
	// against the ideal 1, not as a speedup.
	weak := readFile(t, filepath.Join(out, "jsons-run-folder-weak-scaling/index.html"))
	for _, w := range []string{"Weak scaling: a problem that grows with the CPUs", "at least 1.17 times",
		"weak-scaling efficiency T_ref / T", `data-metric="speedup">0.42<`} {
		if !strings.Contains(weak, w) {
			t.Errorf("weak-scaling page lacks %q", w)
		}
	}
	if strings.Contains(weak, "against CPUs (ideal: CPUs / reference CPUs)") {
		t.Error("weak scaling drawn as a speedup")
	}
	// The unit-tests folder has git metadata in one file only: plotted
	// over time; the genex folder uses "Application" as Global.
	genex := readFile(t, filepath.Join(out, "example_files-genex/index.html"))
	if !strings.Contains(genex, `data-region="Global"`) {
		t.Error("genex: no Global table")
	}
	err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".html") || strings.HasSuffix(p, ".svg")) {
			checkPage(t, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSiteOverCommits(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "site")
	dir := filepath.Join(in, "ci")
	for i := 0; i < 3; i++ {
		talp := fmt.Sprintf(`{"dlbVersion":"3.6","timestamp":"2025-01-0%dT10:00:00","resources":{"numCpus":2,"numNodes":1,"numMpiRanks":2},
"metadata":{"gitCommit":"c0ffee%d0123456789","gitBranch":"main","gitTimestamp":"2025-01-0%dT09:00:00"},
"Application":{"Global":{"numCpus":2,"numMpiRanks":2,"numNodes":1,"elapsedTime":%d,"usefulTime":%d,"mpiTime":%d,"numMpiCalls":10,"parallelEfficiency":%.2f,"mpiParallelEfficiency":%.2f,"mpiCommunicationEfficiency":1,"mpiLoadBalance":%.2f}}}`,
			i+1, i, i+1, 1000000000, 2000000000-i*200000000, i*200000000, 1-0.1*float64(i), 1-0.1*float64(i), 1-0.1*float64(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("talp_%d.json", i)), []byte(talp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Generate(Options{Input: in, Output: out, Title: "CI <history>"}); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, filepath.Join(out, "ci/index.html"))
	for _, w := range []string{"plotted over commits", ">c0ffee00<", ">c0ffee20<", "CI &lt;history&gt;"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if b := readFile(t, filepath.Join(out, "badge.svg")); !strings.Contains(b, ">0.80<") {
		t.Errorf("site badge is not the newest run's 0.80: %s", b)
	}
	checkPage(t, filepath.Join(out, "ci/index.html"))
}

func TestOutputFolderRules(t *testing.T) {
	in := t.TempDir()
	strongPair(t, filepath.Join(in, "a"))
	strongPair(t, filepath.Join(in, "b"))

	// A foreign non-empty folder is refused.
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Input: in, Output: foreign}); err == nil || !strings.Contains(err.Error(), "not written by popmon pages") {
		t.Fatalf("foreign folder: err = %v", err)
	}
	if readFile(t, filepath.Join(foreign, "notes.txt")) != "mine" {
		t.Fatal("foreign file changed")
	}
	// An empty folder is fine; a second run replaces the site, keeps a
	// file the user added, and removes an experiment that went away.
	out := t.TempDir()
	if _, err := Generate(Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "CNAME"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(in, "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Input: in, Output: out}); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "CNAME")); err != nil {
		t.Error("user file removed")
	}
	if _, err := os.Stat(filepath.Join(out, "b")); err == nil {
		t.Error("stale experiment b kept")
	}
	// A user file where the site would write is not overwritten.
	strongPair(t, filepath.Join(in, "c"))
	if err := os.MkdirAll(filepath.Join(out, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "c", "index.html"), []byte("user"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Input: in, Output: out}); err == nil || !strings.Contains(err.Error(), "not written by popmon pages") {
		t.Fatalf("collision: err = %v", err)
	}
	if readFile(t, filepath.Join(out, "c", "index.html")) != "user" {
		t.Fatal("user file overwritten")
	}
	// An output that is a file.
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Input: in, Output: file}); err == nil {
		t.Error("output file accepted")
	}
}

func TestBadFiles(t *testing.T) {
	in := t.TempDir()
	strongPair(t, filepath.Join(in, "exp"))
	bad := filepath.Join(in, "exp", "broken.json")
	if err := os.WriteFile(bad, []byte(`{"format": "popmon-measurement", "version": 1, `), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "site")
	_, err := Generate(Options{Input: in, Output: out})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "--skip-bad") {
		t.Fatalf("err = %v, want one naming %s", err, bad)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("site written despite the error")
	}
	var warned []error
	res, err := Generate(Options{Input: in, Output: out, Read: runs.ReadOptions{SkipBad: true}, Warn: func(e error) { warned = append(warned, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 1 || len(warned) != 1 || !strings.Contains(warned[0].Error(), bad) {
		t.Errorf("skipped %d, warnings %v", res.Skipped, warned)
	}
	// No input files at all, and a missing input.
	if _, err := Generate(Options{Input: t.TempDir(), Output: filepath.Join(t.TempDir(), "s")}); err == nil {
		t.Error("empty input accepted")
	}
	if _, err := Generate(Options{Input: filepath.Join(in, "nope"), Output: filepath.Join(t.TempDir(), "s")}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing input: %v", err)
	}
}

func TestRegionsAndProgress(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "site")
	dir := filepath.Join(in, "exp")
	for i := 0; i < progressMin; i++ {
		n := 1 + i%2
		ranks := []rank{{5, 1}, {4, 2}}[:n]
		writeRun(t, dir, fmt.Sprintf("r%03d.json", i), synthRun(t0.Add(time.Duration(i)*time.Minute), 6, []string{"Global", "solve"}, ranks...))
	}
	// Region names are case-sensitive: "SOLVE" is refused with a
	// suggestion, before anything is written.
	_, err := Generate(Options{Input: in, Output: out, Regions: []string{"Global", "SOLVE"}})
	if err == nil || !strings.Contains(err.Error(), `no region "SOLVE"; did you mean "solve"? names are case-sensitive`) {
		t.Errorf("--region SOLVE: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err == nil {
		t.Error("a refused region still wrote the site")
	}
	var prog strings.Builder
	if _, err := Generate(Options{Input: in, Output: out, Regions: []string{"Global", "solve", "missing"}, Progress: &prog}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prog.String(), fmt.Sprintf("reading %d files… 100%%", progressMin)) {
		t.Errorf("progress: %q", prog.String())
	}
	page := readFile(t, filepath.Join(out, "exp/index.html"))
	if !strings.Contains(page, `data-region="solve"`) || !strings.Contains(page, "No run of this experiment has region missing") {
		t.Error("regions: solve table or missing-region note absent")
	}
	if got := cellText(t, page, "solve", "parallel_efficiency", 0); got != "0.83" { // 5/6
		t.Errorf("solve PE = %s", got)
	}
	if math.IsNaN(parallelEfficiency(nil)) == false {
		t.Error("parallelEfficiency(nil) not NaN")
	}
}

// twoPhaseRun is a 2-rank run of 4 s with a time series of 1-s intervals:
// balanced for 2 s (both ranks useful), then rank 0 waits half of each
// second in MPI (interval LB 0.75). Totals: rank 0 U 3 s M 1 s, rank 1 U 4 s.
func twoPhaseRun(ts time.Time) *measure.Measurement {
	m := synthRun(ts, 4, []string{"Global"}, rank{3, 1}, rank{4, 0})
	sr := measure.SeriesRegion{Name: "Global"}
	for i := 0; i < 4; i++ {
		u0, m0 := 1.0, 0.0
		if i >= 2 {
			u0, m0 = 0.5, 0.5
		}
		sr.Intervals = append(sr.Intervals, measure.SeriesInterval{StartNS: sec(float64(i)), Processes: []measure.ProcessAccounts{
			{Rank: 0, CPUs: 1, Visits: 1, ElapsedNS: sec(1), UsefulNS: sec(u0), MPINS: sec(m0)},
			{Rank: 1, CPUs: 1, Visits: 1, ElapsedNS: sec(1), UsefulNS: sec(1)},
		}})
	}
	m.Series = &measure.Series{IntervalNS: sec(1), Regions: []measure.SeriesRegion{sr}}
	return m
}

func TestSiteOverTime(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "site")
	dir := filepath.Join(in, "phases")
	writeRun(t, dir, "run-1.json", twoPhaseRun(t0))
	// A second experiment whose newest run has no series.
	strongPair(t, filepath.Join(in, "strong"))
	if _, err := Generate(Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, filepath.Join(out, "phases", "index.html"))
	checkPage(t, filepath.Join(out, "phases", "index.html"))
	sec := page[strings.Index(page, "<h2>Over time: efficiencies second by second (newest run)</h2>"):]
	sec = sec[:strings.Index(sec, "<h2>Per process")]
	if !strings.Contains(sec, "Global: efficiencies per 1 s interval") || !strings.Contains(sec, "<polyline") {
		t.Errorf("no over-time chart:\n%s", sec)
	}
	plain := readFile(t, filepath.Join(out, "strong", "index.html"))
	if !strings.Contains(plain, "The newest run has no time series") {
		t.Errorf("a run without a series is not explained")
	}

	r, err := runs.Load(filepath.Join(dir, "run-1.json"), pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	lines, end, note := overTimeLines(r, "Global", pop.ModelTALP)
	if end != 4 || note != "" {
		t.Errorf("end %v note %q, want 4 and none", end, note)
	}
	want := map[string][]float64{"PE": {1, 1, 0.75, 0.75}, "LB": {1, 1, 0.75, 0.75}, "CommE": {1, 1, 1, 1}}
	for _, l := range lines {
		w, ok := want[l.Name]
		if !ok {
			continue
		}
		delete(want, l.Name)
		if len(l.Points) != len(w) {
			t.Errorf("%s: %d points, want %d", l.Name, len(l.Points), len(w))
			continue
		}
		for i, p := range l.Points {
			if math.Abs(p.Y-w[i]) > 1e-9 || math.Abs(p.X-(float64(i)+0.5)) > 1e-9 {
				t.Errorf("%s point %d = %+v, want (%v, %v)", l.Name, i, p, float64(i)+0.5, w[i])
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("lines missing: %v", want)
	}
}

func TestSitePartialRunMarked(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "site")
	m := twoPhaseRun(t0)
	m.Version = 3
	m.Partial = &measure.Partial{Reason: measure.PartialKilled, Detail: "2 of 2 processes were killed", CutNS: sec(4),
		Ranks: 2, Included: 2, AssembledBy: "run",
		Ends: []measure.ProcessEnd{{Rank: 0, End: "killed", ValidUntilNS: sec(4)}, {Rank: 1, End: "killed", ValidUntilNS: sec(4)}}}
	writeRun(t, filepath.Join(in, "killed"), "run-1.json", m)
	if _, err := Generate(Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, filepath.Join(out, "killed", "index.html"))
	for _, want := range []string{
		"The newest run is partial: partial measurement: 2 of 2 processes were killed; measured up to 4.00 s after MPI_Init; all 2 ranks",
		`<tr class="partial">`,
		"The run is partial: its last interval ends where the measurement was cut.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if idx := readFile(t, filepath.Join(out, "index.html")); !strings.Contains(idx, "(partial)") {
		t.Errorf("index does not mark the partial run")
	}
}
