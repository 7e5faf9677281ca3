package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// load reads a measurement of measure/testdata and computes its report.
func load(t *testing.T, name string) (*pop.Report, *measure.Measurement) {
	t.Helper()
	m, err := measure.ReadFile(filepath.Join("..", "..", "measure", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	return rep, m
}

func render(t *testing.T, format string, rep *pop.Report, m *measure.Measurement, opts Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, format, withRun(rep, m), opts); err != nil {
		t.Fatalf("Render %s: %v", format, err)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./internal/report -update rewrites it after review)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

var goldenCases = []struct {
	file, region, name string
	model              string // "" is talp; "all" is every model (RenderAll)
}{
	{"doc_example.json", "", "doc_example", ""},
	{"mpi_imbalance.json", "", "mpi_imbalance", ""},
	{"hybrid_2nodes.json", "", "hybrid_2nodes", ""},
	{"hybrid_2nodes.json", "solve", "hybrid_2nodes_solve", ""},
	{"openmp_only.json", "", "openmp_only", ""},
	{"gpu_offload.json", "", "gpu_offload", ""},
	{"hybrid_libgomp.json", "", "hybrid_libgomp", ""},
	{"hybrid_2nodes.json", "", "hybrid_2nodes.pop-hybrid", "pop-hybrid"},
	{"hybrid_2nodes.json", "", "hybrid_2nodes.pop-additive", "pop-additive"},
	{"hybrid_2nodes.json", "Global", "hybrid_2nodes_global.all", "all"},
	{"openmp_only.json", "", "openmp_only.all", "all"},
	{"mpi_imbalance.json", "compute", "mpi_imbalance_compute.all", "all"},
	{"hybrid_libgomp.json", "", "hybrid_libgomp.all", "all"},
	{"gomp_library.json", "", "gomp_library", ""},
	{"gomp_library.json", "", "gomp_library.all", "all"},
	{"gpu_devices.json", "", "gpu_devices", ""},
	{"gpu_devices.json", "", "gpu_devices.all", "all"},
	{"gpu_amd.json", "", "gpu_amd", ""},
	{"gpu_amd.json", "", "gpu_amd.all", "all"},
	{"gpu_mixed.json", "", "gpu_mixed", ""},
	{"lewi.json", "", "lewi", ""},
	{"lewi_held.json", "", "lewi_held", ""},
}

// loadModels reads a measurement of measure/testdata (or of this
// package's testdata: measurements only the reports' goldens use, such as
// a real --lewi run's) and computes the reports of the models name selects
// (pop.ParseModels).
func loadModels(t *testing.T, file, name string) ([]*pop.Report, *measure.Measurement) {
	t.Helper()
	path := filepath.Join("..", "..", "measure", "testdata", file)
	if _, err := os.Stat(filepath.Join("testdata", file)); err == nil {
		path = filepath.Join("testdata", file)
	}
	m, err := measure.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return computeModels(t, m, file, name), m
}

// computeModels computes the reports of the models name selects for m,
// with file as their source.
func computeModels(t *testing.T, m *measure.Measurement, file, name string) []*pop.Report {
	t.Helper()
	models, err := pop.ParseModels(name)
	if err != nil {
		t.Fatal(err)
	}
	var reps []*pop.Report
	for _, model := range models {
		rep, err := pop.Compute(m, model)
		if err != nil {
			t.Fatal(err)
		}
		rep.Source = file
		reps = append(reps, rep)
	}
	return reps
}

func TestGolden(t *testing.T) {
	ext := map[string]string{FormatText: "txt", FormatJSON: "json", FormatCSV: "csv", FormatTALPJSON: "talp.json", FormatTALPCSV: "talp.csv", FormatTALPText: "talp.txt"}
	for _, c := range goldenCases {
		reps, m := loadModels(t, c.file, c.model)
		for _, f := range Formats() {
			if isTALP(f) && c.model != "" {
				continue // talp-json has model talp only
			}
			t.Run(c.name+"/"+f, func(t *testing.T) {
				var b bytes.Buffer
				if err := RenderAll(&b, f, withRuns(reps, m), Options{Region: c.region}); err != nil {
					t.Fatal(err)
				}
				golden(t, c.name+"."+ext[f], b.String())
			})
		}
	}
}

func TestTextLayout(t *testing.T) {
	rep, m := load(t, "mpi_imbalance.json")
	out := render(t, FormatText, rep, m, Options{Region: "Global"})
	for _, want := range []string{
		"popmon POP metrics, model talp (DLB/TALP hybrid-v2",
		"### Name: Global\n### Elapsed time: 4.00 s\n### Resources: 4 processes on 1 node, 4 CPUs, 4 visits\n",
		"Parallel efficiency ............... 0.62\n",
		"  MPI Parallel efficiency ......... 0.62\n",
		"    Communication efficiency ...... 1.00\n",
		"    Load Balance .................. 0.62\n",
		"      In .......................... 0.62\n",
		"      Out ......................... 1.00\n",
		"  MPI_Allreduce     40     5.40 s  90.0%         0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "### Name: compute") || strings.Contains(out, "OpenMP") {
		t.Errorf("region filter or OpenMP branch wrong:\n%s", out)
	}
	// every metric line has its value at the same column
	col := -1
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, " ...."); i >= 0 {
			v := strings.LastIndexByte(line, ' ') + 1
			if col >= 0 && v != col {
				t.Errorf("value column %d, want %d: %q", v, col, line)
			}
			col = v
		}
	}
}

func TestTextEdgeCases(t *testing.T) {
	rep, m := load(t, "mpi_imbalance.json")
	out := render(t, FormatText, rep, m, Options{Region: "empty"})
	if !strings.Contains(out, "### Elapsed time: 0 ns\n") || !strings.Contains(out, "(no time measured in this region: no metrics)") {
		t.Errorf("zero-time region:\n%s", out)
	}
	// Without the measurement: no header details, no MPI table.
	out = render(t, FormatText, rep, nil, Options{Region: "io"})
	if strings.Contains(out, "Top MPI calls") || strings.Contains(out, "Command:") || !strings.Contains(out, "### Name: io") {
		t.Errorf("text without measurement:\n%s", out)
	}
	// A region nobody visited.
	out = render(t, FormatText, &pop.Report{Model: pop.ModelTALP, Regions: []pop.RegionReport{{Name: "never"}}}, nil, Options{})
	if !strings.Contains(out, "### Resources: 0 processes on 0 nodes, 0 CPUs\n(no process visited this region: no metrics)\n") {
		t.Errorf("unvisited region:\n%s", out)
	}
	// More than five MPI functions: the rest is counted.
	rep, m = load(t, "hybrid_2nodes.json")
	out = render(t, FormatText, rep, m, Options{})
	if !strings.Contains(out, "(2 more functions)") || strings.Contains(out, "MPI_Comm_rank") {
		t.Errorf("MPI table:\n%s", out)
	}
	if !strings.Contains(out, "Warnings\n  popmon: perf_event_open") {
		t.Errorf("warnings missing:\n%s", out)
	}
}

func TestJSONShape(t *testing.T) {
	rep, m := load(t, "hybrid_2nodes.json")
	out := render(t, FormatJSON, rep, m, Options{})
	var doc struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
		Model   string `json:"model"`
		Regions []struct {
			Name     string             `json:"name"`
			Elapsed  float64            `json:"elapsed_s"`
			CPUs     int                `json:"cpus"`
			Metrics  map[string]float64 `json:"metrics"`
			Nodes    int                `json:"nodes"`
			Processs int                `json:"processes"`
		} `json:"regions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != JSONFormat || doc.Version != 1 || doc.Model != "talp" || len(doc.Regions) != 3 {
		t.Fatalf("doc = %+v", doc)
	}
	for i, r := range doc.Regions {
		want := &rep.Regions[i]
		if r.Name != want.Name || r.Elapsed != float64(want.ElapsedNS)/1e9 || r.CPUs != want.CPUs || r.Nodes != want.Nodes {
			t.Errorf("region %d = %+v", i, r)
		}
		if len(r.Metrics) != len(want.Metrics) {
			t.Errorf("%s: %d metrics, want %d", r.Name, len(r.Metrics), len(want.Metrics))
		}
		for _, x := range want.Metrics {
			if got := r.Metrics[x.ID]; got != x.Value { // full precision: exact
				t.Errorf("%s %s = %v, want %v", r.Name, x.ID, got, x.Value)
			}
		}
	}
	// Absent metrics are omitted, not null or 0.
	rep, m = load(t, "openmp_only.json")
	out = render(t, FormatJSON, rep, m, Options{})
	if strings.Contains(out, "mpi_") || strings.Contains(out, "null") || !strings.Contains(out, `"omp_load_balance": `) {
		t.Errorf("json of an OpenMP-only run:\n%s", out)
	}
}

func TestCSV(t *testing.T) {
	rep, m := load(t, "mpi_imbalance.json")
	out := render(t, FormatCSV, rep, m, Options{})
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "region,metric,value" {
		t.Errorf("header = %v", rows[0])
	}
	want := 1
	for _, r := range rep.Regions {
		want += 1 + len(r.Metrics)
	}
	if len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	if strings.Join(rows[1], ",") != "Global,elapsed_s,4" || strings.Join(rows[2], ",") != "Global,parallel_efficiency,0.625" {
		t.Errorf("first rows = %v %v", rows[1], rows[2])
	}
	for _, row := range rows[1:] {
		if _, err := strconv.ParseFloat(row[2], 64); err != nil {
			t.Errorf("row %v: %v", row, err)
		}
	}
	// Names that need quoting are quoted.
	rep.Regions[0].Name = `a,"b"`
	out = render(t, FormatCSV, rep, m, Options{Region: `a,"b"`})
	if !strings.Contains(out, `"a,""b""",elapsed_s,4`) {
		t.Errorf("quoting:\n%s", out)
	}
}

func TestRenderErrors(t *testing.T) {
	rep, m := load(t, "hybrid_2nodes.json")
	tests := []struct {
		name, format string
		rep          *pop.Report
		m            *measure.Measurement
		opts         Options
		want         string
	}{
		{"unknown format", "html", rep, m, Options{}, `unknown report format "html": use one of text, json, csv, talp-json`},
		{"unknown region", FormatText, rep, m, Options{Region: "solver"},
			`render text report: no region "solver" in the measurement: available regions are "Global", "solve", "halo exchange"`},
		{"unknown region csv", FormatCSV, rep, m, Options{Region: "x"}, `no region "x"`},
		{"region in another case", FormatJSON, rep, m, Options{Region: "Solve"},
			`render json report: no region "Solve"; did you mean "solve"? names are case-sensitive`},
		{"talp-json needs m", FormatTALPJSON, rep, nil, Options{}, "talp-json needs the measurement"},
		{"no report", FormatJSON, nil, m, Options{}, "no report"},
		{"no regions", FormatJSON, &pop.Report{}, m, Options{Region: "Global"}, `no region "Global": the measurement has no regions`},
	}
	for _, tt := range tests {
		err := Render(&bytes.Buffer{}, tt.format, withRun(tt.rep, tt.m), tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

func TestRenderWriteErrors(t *testing.T) {
	rep, m := load(t, "mpi_imbalance.json")
	for _, f := range Formats() {
		err := Render(failWriter{}, f, withRun(rep, m), Options{})
		if err == nil || !strings.Contains(err.Error(), "pipe closed") {
			t.Errorf("%s: err = %v, want the write error", f, err)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{{0, "0"}, {950, "950"}, {999.4, "999"}, {1200, "1.2 k"}, {5.06e11, "506 G"}, {1.5e20, "150 E"}}
	for _, tt := range tests {
		if got := count(tt.v); got != tt.want {
			t.Errorf("count(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// talpFile is the part of a DLB/TALP JSON file TALP tooling reads.
type talpFile struct {
	DLBVersion  string                                `json:"dlbVersion"`
	Timestamp   string                                `json:"timestamp"`
	Resources   map[string]json.Number                `json:"resources"`
	Application map[string]map[string]json.RawMessage `json:"Application"`
}

func parseTALP(t *testing.T, data []byte) talpFile {
	t.Helper()
	var f talpFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("not a TALP JSON file: %v", err)
	}
	if f.DLBVersion == "" || len(f.Resources) == 0 || len(f.Application) == 0 {
		t.Fatalf("TALP JSON file lacks dlbVersion, resources or Application: %+v", f)
	}
	for region, keys := range f.Application {
		for k, raw := range keys {
			var n json.Number
			if err := json.Unmarshal(raw, &n); err != nil {
				t.Errorf("region %q: %s = %s is not a number", region, k, raw)
			}
		}
	}
	if f.Timestamp != "" {
		if _, err := time.Parse(talpjson.TimeLayout, f.Timestamp); err != nil {
			t.Errorf("timestamp %q is not in DLB's layout: %v", f.Timestamp, err)
		}
	}
	return f
}

// keysInOrder returns the keys of the JSON object at path (a list of keys)
// in file order.
func keysInOrder(t *testing.T, data []byte, path ...string) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(depth int) []string
	walk = func(depth int) []string {
		if _, err := dec.Token(); err != nil { // '{'
			t.Fatal(err)
		}
		var keys []string
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			k := tok.(string)
			if depth < len(path) && k == path[depth] {
				return walk(depth + 1)
			}
			keys = append(keys, k)
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		if depth < len(path) {
			t.Fatalf("no key %q", path[depth])
		}
		return keys
	}
	return walk(0)
}

// isGPUEfficiency reports whether k is one of the GPU device efficiencies
// DLB writes only for runs with GPUs.
func isGPUEfficiency(k string) bool {
	for _, e := range talpjson.Efficiencies {
		if e.Key == k {
			return e.Branch == talpjson.BranchGPU
		}
	}
	return false
}

const talpSamples = "../../../shared/data/talp-json"

func talpSample(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(talpSamples, rel))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("TALP samples not present at %s (the shared/ folder beside the repository)", talpSamples)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTALPJSONHasDLB36Keys checks that every key DLB 3.6 writes
// (jsons/unit-tests/dlb_3_6_0.json), except the GPU device efficiencies
// DLB writes only for GPU runs, is in popmon's talp-json of a run without
// GPU, in DLB's order.
func TestTALPJSONHasDLB36Keys(t *testing.T) {
	dlb := talpSample(t, "jsons/unit-tests/dlb_3_6_0.json")
	rep, m := load(t, "mpi_imbalance.json")
	ours := []byte(render(t, FormatTALPJSON, rep, m, Options{}))
	parseTALP(t, ours)
	isGPUEff := isGPUEfficiency
	for _, path := range [][]string{nil, {"resources"}, {"Application", "Global"}} {
		want := keysInOrder(t, dlb, path...)
		got := keysInOrder(t, ours, path...)
		pos := map[string]int{}
		for i, k := range got {
			pos[k] = i
		}
		last := -1
		for _, k := range want {
			if isGPUEff(k) || isCounterKey(k) {
				continue // written only for GPU runs / runs with counters
			}
			i, ok := pos[k]
			if !ok {
				t.Errorf("%v: key %q of DLB 3.6 missing from talp-json", path, k)
				continue
			}
			if i < last {
				t.Errorf("%v: key %q out of DLB's order", path, k)
			}
			last = i
		}
		for _, k := range got {
			if isGPUEff(k) {
				t.Errorf("%v: %q written for a run without GPU metrics", path, k)
			}
		}
	}
}

// TestTALPSamplesParse reads every TALP sample with the same expectations
// as popmon's own talp-json: the layout, numeric region values, DLB's
// timestamp layout, and for DLB ≥ 3.6 files a key set popmon's output
// covers.
func TestTALPSamplesParse(t *testing.T) {
	talpSample(t, "README.md") // skip when absent
	var files []string
	err := filepath.WalkDir(talpSamples, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("found only %d sample files", len(files))
	}
	rep, m := load(t, "gpu_offload.json")
	ours := parseTALP(t, []byte(render(t, FormatTALPJSON, rep, m, Options{})))
	ourKeys := ours.Application["Global"]
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, talpSamples+"/"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s := parseTALP(t, data)
			if !strings.HasPrefix(s.DLBVersion, "3.6") {
				return // DLB 3.5 keys (usefulNormdApp, ...) were renamed in 3.6
			}
			for region, keys := range s.Application {
				for k := range keys {
					if _, ok := ourKeys[k]; !ok && !isGPUEfficiency(k) && !isCounterKey(k) {
						t.Errorf("region %q: key %q not in popmon's talp-json", region, k)
					}
				}
			}
		})
	}
}

// TestTALPJSONMeanings recomputes the efficiencies from the times
// talp-json writes, with DLB's formulas (hybrid-v2 with
// mpiWorkerIdleTime, as DLB after 3.7.0 computes them): the times mean
// what DLB's mean.
func TestTALPJSONMeanings(t *testing.T) {
	for _, file := range []string{"hybrid_2nodes.json", "mpi_imbalance.json", "doc_example.json"} {
		rep, m := load(t, file)
		var f struct {
			Application map[string]map[string]float64 `json:"Application"`
		}
		if err := json.Unmarshal([]byte(render(t, FormatTALPJSON, rep, m, Options{})), &f); err != nil {
			t.Fatal(err)
		}
		for name, g := range f.Application {
			if g["elapsedTime"] == 0 {
				continue
			}
			T := g["elapsedTime"]
			active := g["usefulTime"] + g["mpiTime"] + g["ompLoadImbalanceTime"] + g["ompSchedulingTime"] + g["ompSerializationTime"] + g["gpuRuntimeTime"]
			nonMPIApp := T - (g["mpiTime"]+g["mpiWorkerIdleTime"])/g["numCpus"]
			nonMPIProc := T - g["minMpiNormdProc"]
			nonMPINode := T - g["minMpiNormdNode"]
			checks := map[string]float64{
				"parallelEfficiency":         g["usefulTime"] / active,
				"mpiParallelEfficiency":      nonMPIApp / T,
				"mpiCommunicationEfficiency": nonMPIProc / T,
				"mpiLoadBalance":             nonMPIApp / nonMPIProc,
				"mpiLoadBalanceIn":           nonMPINode / nonMPIProc,
				"mpiLoadBalanceOut":          nonMPIApp / nonMPINode,
			}
			if g["ompLoadImbalanceTime"]+g["ompSerializationTime"]+g["ompSchedulingTime"] > 0 {
				checks["ompParallelEfficiency"] = (g["usefulTime"] + g["mpiTime"] + g["gpuRuntimeTime"]) / active
			}
			for k, want := range checks {
				if got := g[k]; math.Abs(got-want) > 1e-8 {
					t.Errorf("%s %s: %s = %v, DLB's formula gives %v", file, name, k, got, want)
				}
			}
		}
	}
}

func TestTALPJSONFillsAbsentBranches(t *testing.T) {
	rep, m := load(t, "mpi_imbalance.json")
	var f struct {
		Resources   map[string]int                `json:"resources"`
		Timestamp   string                        `json:"timestamp"`
		Application map[string]map[string]float64 `json:"Application"`
	}
	if err := json.Unmarshal([]byte(render(t, FormatTALPJSON, rep, m, Options{})), &f); err != nil {
		t.Fatal(err)
	}
	g := f.Application["Global"]
	if g["ompParallelEfficiency"] != 1 || g["deviceOffloadEfficiency"] != 1 || g["mpiLoadBalance"] != 0.625 || g["numMeasurements"] != 4 {
		t.Errorf("Global = %v", g)
	}
	if e := f.Application["empty"]; e["parallelEfficiency"] != 0 || e["mpiLoadBalance"] != 0 || e["elapsedTime"] != 0 {
		t.Errorf("empty = %v", e)
	}
	if f.Resources["numMpiRanks"] != 4 || f.Timestamp != "2026-11-21T10:00:00" {
		t.Errorf("resources %v, timestamp %q", f.Resources, f.Timestamp)
	}

	rep, m = load(t, "openmp_only.json")
	if err := json.Unmarshal([]byte(render(t, FormatTALPJSON, rep, m, Options{})), &f); err != nil {
		t.Fatal(err)
	}
	g = f.Application["Global"]
	if g["numMpiRanks"] != 0 || f.Resources["numMpiRanks"] != 0 || g["mpiParallelEfficiency"] != 1 || g["ompParallelEfficiency"] != 0.85 {
		t.Errorf("OpenMP-only Global = %v, resources %v", g, f.Resources)
	}
}

// isCounterKey reports whether a TALP key holds hardware counters, which
// popmon's talp-json writes only when they were measured.
func isCounterKey(k string) bool { return k == "cycles" || k == "instructions" }

func TestTextShowsImportSource(t *testing.T) {
	rep, m := load(t, "mpi_imbalance.json")
	m.Source = &measure.Source{Kind: measure.SourceParaver, Path: "app.prv.gz", Tool: "Paraver trace written 01/02/2003 at 04:05",
		Notes: []string{"useful = state Running", "elapsed = the trace's duration"}}
	text := render(t, FormatText, rep, m, Options{})
	for _, want := range []string{
		"Imported:  Paraver trace app.prv.gz (Paraver trace written 01/02/2003 at 04:05)\n",
		"           - useful = state Running\n           - elapsed = the trace's duration\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	m.Source = nil
	if text := render(t, FormatText, rep, m, Options{}); strings.Contains(text, "Imported:") {
		t.Errorf("a libpopmon measurement says Imported:\n%s", text)
	}
}
