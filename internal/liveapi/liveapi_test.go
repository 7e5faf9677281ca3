package liveapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// hostile is a region name with every character the exposition format
// escapes, a control character and a byte that is not UTF-8.
const hostile = "a\"b\\c\nd\x1b[2J\xe9"

// testView is the view of measure/testdata/mpi_imbalance.json (4 ranks)
// spread over two nodes, with region "compute" renamed name: the run and
// a 60 s window with the same accounts.
func testView(t *testing.T, name string) *live.View {
	t.Helper()
	m, err := measure.ReadFile(filepath.Join("..", "..", "measure", "testdata", "mpi_imbalance.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Processes {
		if m.Processes[i].Rank >= 2 {
			m.Processes[i].Hostname, m.Processes[i].Node = "node-b", 1
		}
	}
	m.Resources.Nodes = 2
	for i := range m.Regions {
		if m.Regions[i].Name == "compute" {
			m.Regions[i].Name = name
		}
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	states := []string{live.ProcRunning, live.ProcRunning, live.ProcFinalized, live.ProcEnded}
	v := &live.View{
		Run:       live.WindowView{Name: "run", SpanNS: 10e9, M: m, Report: rep},
		Windows:   []live.WindowView{{Name: "60s", SpanNS: 10e9, StartNS: 0, M: m, Report: rep}},
		NodeCalls: map[string][]measure.MPICall{"laptop": m.MPICalls, "node-b": m.MPICalls[:1]},
	}
	for _, p := range m.Processes {
		v.Procs = append(v.Procs, live.ProcStatus{Rank: p.Rank, Host: p.Hostname, PID: p.PID, State: states[p.Rank], AgeNS: int64(p.Rank) * 1e8})
	}
	return v
}

var testInfo = Info{Session: "run-42", SlurmJobID: "1234", Command: []string{"./app", "-n", "4"}, MPILibrary: "Open MPI (MPI 3.1)", Version: "0.1.0"}

func metricsText(t *testing.T, v *live.View, perRank bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteMetrics(&b, v, testInfo, perRank); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMetricsGolden: the exposition of a known view (go test -update
// rewrites testdata/*.prom).
func TestMetricsGolden(t *testing.T) {
	for _, c := range []struct {
		file    string
		perRank bool
	}{{"metrics.prom", false}, {"metrics-per-rank.prom", true}} {
		got := metricsText(t, testView(t, "compute"), c.perRank)
		path := filepath.Join("testdata", c.file)
		if *update {
			os.MkdirAll("testdata", 0o755)
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update once)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from the exposition (go test -update):\n%s", path, got)
		}
	}
}

// series is one parsed sample line.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$`)

// parseLabels reads `k="v",k2="v2"` with the exposition format's escapes.
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for s != "" {
		eq := strings.Index(s, `="`)
		if eq <= 0 {
			return nil, fmt.Errorf("no label at %q", s)
		}
		k := s[:eq]
		s = s[eq+2:]
		var v strings.Builder
		i := 0
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					v.WriteByte('\n')
				case '\\', '"':
					v.WriteByte(s[i])
				default:
					return nil, fmt.Errorf("bad escape \\%c", s[i])
				}
				continue
			}
			if s[i] == '\n' {
				return nil, fmt.Errorf("raw line feed in a label value")
			}
			v.WriteByte(s[i])
		}
		if i == len(s) {
			return nil, fmt.Errorf("unterminated label value")
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("label %s twice", k)
		}
		out[k] = v.String()
		s = strings.TrimPrefix(s[i+1:], ",")
	}
	return out, nil
}

// parseExposition checks the structure of an exposition (every sample's
// family has HELP and TYPE lines before it, no series twice) and returns
// its samples and the families' types.
func parseExposition(t *testing.T, text string) ([]series, map[string]string) {
	t.Helper()
	types := map[string]string{}
	helped := map[string]bool{}
	seen := map[string]bool{}
	var out []series
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if f := strings.SplitN(line, " ", 4); len(f) >= 3 && f[0] == "#" {
			switch f[1] {
			case "HELP":
				helped[f[2]] = true
			case "TYPE":
				types[f[2]] = f[3]
			}
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("not a sample line: %q", line)
			continue
		}
		if !helped[m[1]] || types[m[1]] == "" {
			t.Errorf("%s: sample before its HELP and TYPE", m[1])
		}
		labels, err := parseLabels(m[2])
		if err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Errorf("%q: value %v", line, err)
		}
		if seen[m[1]+"{"+m[2]+"}"] {
			t.Errorf("series twice: %s", line)
		}
		seen[m[1]+"{"+m[2]+"}"] = true
		out = append(out, series{m[1], labels, v})
	}
	return out, types
}

// TestMetricsNaming: the rules of Prometheus naming that popmon promises
// (docs/live-metrics.md): popmon_ prefix, counters end in _total, no job
// or instance label, a session label everywhere, base units.
func TestMetricsNaming(t *testing.T) {
	v := testView(t, "compute")
	rankSeries := 0
	for _, g := range v.Run.M.Regions {
		rankSeries += len(g.Processes)
	}
	for _, perRank := range []bool{false, true} {
		samples, types := parseExposition(t, metricsText(t, v, perRank))
		if len(samples) < 20 {
			t.Fatalf("only %d samples", len(samples))
		}
		for name, typ := range types {
			if !strings.HasPrefix(name, "popmon_") {
				t.Errorf("%s: no popmon_ prefix", name)
			}
			if (typ == "counter") != strings.HasSuffix(name, "_total") {
				t.Errorf("%s is a %s: counters and only counters end in _total", name, typ)
			}
			if strings.Contains(name, "_ns") || strings.Contains(name, "millisecond") {
				t.Errorf("%s: not in base units", name)
			}
		}
		byRank := 0
		for _, s := range samples {
			for _, bad := range []string{"job", "instance", "exported_job"} {
				if _, ok := s.labels[bad]; ok {
					t.Errorf("%s has a %q label", s.name, bad)
				}
			}
			if s.labels["session"] != "run-42" {
				t.Errorf("%s: session %q", s.name, s.labels["session"])
			}
			if s.name == "popmon_useful_seconds_total" && s.labels["rank"] != "" {
				byRank++
			}
		}
		if want := map[bool]int{false: 0, true: rankSeries}[perRank]; byRank != want {
			t.Errorf("per rank %v: %d per-rank useful series, want %d", perRank, byRank, want)
		}
	}
}

// TestMetricsValues: the values are the view's, in seconds.
func TestMetricsValues(t *testing.T) {
	v := testView(t, "compute")
	samples, _ := parseExposition(t, metricsText(t, v, false))
	get := func(name string, labels map[string]string) (float64, bool) {
		for _, s := range samples {
			if s.name != name {
				continue
			}
			ok := true
			for k, want := range labels {
				ok = ok && s.labels[k] == want
			}
			if ok {
				return s.value, true
			}
		}
		return 0, false
	}
	g, _ := v.Run.M.Global()
	var useful int64
	for _, pa := range g.Processes {
		if pa.Rank >= 2 {
			useful += pa.UsefulNS
		}
	}
	if x, ok := get("popmon_useful_seconds_total", map[string]string{"region": "Global", "node": "node-b"}); !ok || math.Abs(x-float64(useful)/1e9) > 1e-9 {
		t.Errorf("node-b useful %v (%v), want %v s", x, ok, float64(useful)/1e9)
	}
	rr, _ := v.Run.Report.Region("Global")
	lb, _ := rr.Value("mpi_load_balance")
	for _, w := range []string{"run", "60s"} {
		if x, ok := get("popmon_mpi_load_balance_ratio", map[string]string{"region": "Global", "window": w}); !ok || x != lb {
			t.Errorf("LB gauge of window %s: %v (%v), want %v", w, x, ok, lb)
		}
	}
	for st, want := range map[string]float64{"running": 2, "finalized": 1, "ended": 1} {
		if x, _ := get("popmon_processes", map[string]string{"state": st}); x != want {
			t.Errorf("processes %s = %v, want %v", st, x, want)
		}
	}
	if x, _ := get("popmon_snapshot_age_seconds", map[string]string{"node": "node-b"}); math.Abs(x-0.3) > 1e-9 {
		t.Errorf("node-b age %v, want 0.3 (rank 3's)", x)
	}
	if x, _ := get("popmon_mpi_calls_total", map[string]string{"node": "node-b", "function": "MPI_Allreduce"}); x != 40 {
		t.Errorf("node-b MPI_Allreduce calls %v, want 40", x)
	}
	if x, _ := get("popmon_info", map[string]string{"slurm_job_id": "1234", "command": "./app -n 4"}); x != 1 {
		t.Errorf("popmon_info %v", x)
	}
}

// TestMetricsHostileNames: a region name with quotes, backslashes, line
// feeds, control characters and bytes that are not UTF-8 comes back from
// the label as the same (UTF-8) string, and promtool accepts the
// exposition.
func TestMetricsHostileNames(t *testing.T) {
	for _, name := range []string{hostile, `\`, `"`, "\n", "}", `x",job="evil`} {
		text := metricsText(t, testView(t, name), true)
		samples, _ := parseExposition(t, text)
		found := false
		for _, s := range samples {
			if r, ok := s.labels["region"]; ok && r != "Global" && r != "io" && r != "empty" {
				found = true
				if want := strings.ToValidUTF8(name, "\uFFFD"); r != want {
					t.Errorf("%q: label reads back as %q, want %q", name, r, want)
				}
			}
			if _, ok := s.labels["job"]; ok {
				t.Errorf("%q injected a job label", name)
			}
		}
		if !found {
			t.Errorf("%q: no series of the region", name)
		}
		if _, err := exec.LookPath("promtool"); err == nil {
			cmd := exec.Command("promtool", "check", "metrics")
			cmd.Stdin = strings.NewReader(text)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%q: promtool check metrics: %v\n%s", name, err, out)
			}
		}
	}
}

// get serves one request of s.
func get(s *Service, url string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	return rec
}

// TestAPI: the JSON handlers and their errors.
func TestAPI(t *testing.T) {
	s := NewService(Config{Source: func() []*live.Snapshot { return nil }, Info: testInfo})
	if rec := get(s, "/metrics"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/metrics without a view: %d", rec.Code)
	}
	v := testView(t, "compute")
	s.view = v
	rr, _ := v.Run.Report.Region("Global")
	lb, _ := rr.Value("mpi_load_balance")

	rec := get(s, "/metrics")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != ContentType {
		t.Errorf("/metrics: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}

	type regionsJSON struct {
		Format  string  `json:"format"`
		Model   string  `json:"model"`
		Window  string  `json:"window"`
		WindowS float64 `json:"window_s"`
		Regions []struct {
			Name    string             `json:"name"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"regions"`
	}
	for _, c := range []struct {
		url     string
		window  string
		regions int
	}{
		{"/api/v1/regions", "run", 4},
		{"/api/v1/regions?window=60s", "60s", 4},
		{"/api/v1/regions?window=1m&region=Global", "60s", 1},
	} {
		rec := get(s, c.url)
		var got regionsJSON
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
			t.Errorf("%s: %d %v\n%s", c.url, rec.Code, err, rec.Body)
			continue
		}
		if got.Format != "popmon-report" || got.Model != "talp" || got.Window != c.window || got.WindowS != 10 || len(got.Regions) != c.regions ||
			got.Regions[0].Name != "Global" || got.Regions[0].Metrics["mpi_load_balance"] != lb {
			t.Errorf("%s: %+v", c.url, got)
		}
	}

	var ranks struct {
		Format string `json:"format"`
		Region string `json:"region"`
		Ranks  []struct {
			Rank     int    `json:"rank"`
			Hostname string `json:"hostname"`
			State    string `json:"state"`
			UsefulNS int64  `json:"useful_ns"`
		} `json:"ranks"`
	}
	rec = get(s, "/api/v1/ranks?region=Global&window=60s")
	if err := json.Unmarshal(rec.Body.Bytes(), &ranks); err != nil || rec.Code != 200 {
		t.Fatalf("ranks: %d %v", rec.Code, err)
	}
	g, _ := v.Run.M.Global()
	if len(ranks.Ranks) != 4 || ranks.Ranks[2].Hostname != "node-b" || ranks.Ranks[3].State != "ended" || ranks.Ranks[1].UsefulNS != g.Processes[1].UsefulNS {
		t.Errorf("ranks %+v", ranks)
	}

	var job struct {
		Session   string   `json:"session"`
		Processes int      `json:"processes"`
		Nodes     int      `json:"nodes"`
		Running   int      `json:"running"`
		Windows   []string `json:"windows"`
		Regions   []string `json:"regions"`
	}
	rec = get(s, "/api/v1/job")
	if err := json.Unmarshal(rec.Body.Bytes(), &job); err != nil || job.Session != "run-42" || job.Processes != 4 || job.Nodes != 2 ||
		job.Running != 2 || strings.Join(job.Windows, ",") != "run,60s" || len(job.Regions) != 4 {
		t.Errorf("job %+v (%v)", job, err)
	}

	for _, c := range []struct {
		url  string
		code int
		says string
	}{
		{"/api/v1/regions?region=nope", 404, `no region "nope"`},
		{"/api/v1/ranks?region=nope", 404, `no region "nope"`},
		{"/api/v1/series?region=nope", 404, `no region "nope"`},
		{"/api/v1/regions?window=soon", 400, "use run or a duration"},
		{"/api/v1/regions?window=2h", 400, "longer than the"},
		{"/api/v1/ranks?window=-1s", 400, "must be positive"},
		{"/api/v1/regions?window=10s", 503, "no sample"}, // not cached; the history is empty
		{"/nope", 404, "no such page"},
	} {
		rec := get(s, c.url)
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.url, rec.Code, rec.Body, c.code, c.says)
		}
	}
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", strings.NewReader("x")))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d", rec.Code)
	}
}

// TestTextfile: the exposition is written to DIR/popmon_SESSION.prom with
// no temporary file left, and Close removes it.
func TestTextfile(t *testing.T) {
	dir := t.TempDir()
	s := NewService(Config{Source: func() []*live.Snapshot { return nil }, Info: testInfo, Textfile: dir})
	if err := s.writeTextfile(testView(t, "compute")); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "popmon_run-42.prom" {
		t.Fatalf("files %v", ents)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ents[0].Name()))
	if !strings.Contains(string(b), "popmon_mpi_load_balance_ratio{") {
		t.Errorf("textfile:\n%s", b)
	}
	s.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
}
