package measure_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// generated are the testdata files written in measure.Write's layout.
var generated = []string{"mpi_imbalance.json", "hybrid_2nodes.json", "openmp_only.json", "gpu_offload.json", "hybrid_libgomp.json", "gpu_devices.json", "gpu_amd.json", "gpu_mixed.json"}

func allTestdata(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("expected at least 5 testdata files, found %d", len(files))
	}
	return files
}

func TestReadTestdata(t *testing.T) {
	tests := []struct {
		file      string
		regions   []string
		processes int
		mpi       bool
		warnings  int
		mpiCalls  int
	}{
		{"doc_example.json", []string{"Global"}, 2, true, 0, 1},
		{"mpi_imbalance.json", []string{"Global", "compute", "io", "empty"}, 4, true, 0, 4},
		{"hybrid_2nodes.json", []string{"Global", "solve", "halo exchange"}, 4, true, 2, 7},
		{"openmp_only.json", []string{"Global", "stencil"}, 1, false, 1, 0},
		{"gpu_offload.json", []string{"Global"}, 1, false, 0, 0},
		{"hybrid_libgomp.json", []string{"Global"}, 2, true, 1, 2},
		{"gpu_devices.json", []string{"Global", "work"}, 2, true, 0, 2},
		{"gpu_amd.json", []string{"Global", "step"}, 2, true, 0, 2},
		{"gpu_mixed.json", []string{"Global"}, 2, true, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, err := measure.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.RegionNames(); !reflect.DeepEqual(got, tt.regions) {
				t.Errorf("regions = %q, want %q", got, tt.regions)
			}
			if len(m.Processes) != tt.processes {
				t.Errorf("processes = %d, want %d", len(m.Processes), tt.processes)
			}
			if m.HasMPI() != tt.mpi {
				t.Errorf("HasMPI = %v, want %v", m.HasMPI(), tt.mpi)
			}
			if len(m.Warnings) != tt.warnings || len(m.MPICalls) != tt.mpiCalls {
				t.Errorf("warnings, mpi_calls = %d, %d; want %d, %d", len(m.Warnings), len(m.MPICalls), tt.warnings, tt.mpiCalls)
			}
			if _, err := m.Time(); err != nil {
				t.Errorf("Time: %v", err)
			}
		})
	}
}

func TestReadValues(t *testing.T) {
	m, err := measure.ReadFile(filepath.Join("testdata", "hybrid_2nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := m.Region("halo exchange")
	if !ok {
		t.Fatal("halo exchange region not found")
	}
	a, ok := g.Process(3)
	if !ok {
		t.Fatal("rank 3 not in halo exchange")
	}
	if a.CPUs != 4 || a.Visits != 100 || a.ElapsedNS != 500000000 || a.MPIWorkerIdleNS != 600000000 || a.OMPSerializationNS != 0 {
		t.Errorf("rank 3 in halo exchange = %+v", *a)
	}
	if _, ok := g.Process(0); ok {
		t.Error("rank 0 never visited halo exchange, but Process(0) found it")
	}
	p, ok := m.Process(2)
	if !ok || p.Node != 1 || p.Hostname != "cn018" || p.CPUs != 4 {
		t.Errorf("Process(2) = %+v, %v", p, ok)
	}
	if m.Launcher.Kind != measure.LauncherSlurm || m.Launcher.JobID != "7712345" {
		t.Errorf("launcher = %+v", m.Launcher)
	}
	if m.MPI.ThreadLevel != "funneled" || !m.Resources.HardwareCounters {
		t.Errorf("mpi = %+v, resources = %+v", m.MPI, m.Resources)
	}
	if c := m.MPICalls[0]; c.Name != "MPI_Waitall" || c.Calls != 8000 || c.MaxRank != 3 {
		t.Errorf("mpi_calls[0] = %+v", c)
	}
}

func TestRegionLookup(t *testing.T) {
	// Names are case-sensitive: a user may have "global" next to "Global".
	m := &measure.Measurement{Regions: []measure.Region{{Name: "Global"}, {Name: "Solve"}, {Name: "solve"}, {Name: "io"}, {Name: "all"}}}
	tests := []struct {
		name string
		want string // "" = not found
	}{
		{"Global", "Global"},
		{"global", ""},
		{"GLOBAL", ""},
		{"solve", "solve"},
		{"Solve", "Solve"},
		{"SOLVE", ""},
		{"IO", ""},
		{"io", "io"},
		{"all", "all"},
		{"missing", ""},
	}
	for _, tt := range tests {
		g, ok := m.Region(tt.name)
		got := ""
		if ok {
			got = g.Name
		}
		if got != tt.want {
			t.Errorf("Region(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if g, ok := m.Global(); !ok || g.Name != "Global" {
		t.Errorf("Global() = %v, %v", g, ok)
	}
	var nilM *measure.Measurement
	if _, ok := nilM.Region("Global"); ok {
		t.Error("nil measurement has a region")
	}
}

const minimal = `{"format": "popmon-measurement", "version": 1,
 "resources": {"processes": 2, "nodes": 1, "cpus": 2},
 "processes": [{"rank": 0, "node": 0, "cpus": 1}, {"rank": 1, "node": 0, "cpus": 1}],
 "regions": [{"name": "Global", "processes": [{"rank": 0, "cpus": 1, "elapsed_ns": 10, "useful_ns": 10}]}]}`

// edit applies string replacements to minimal.
func edit(pairs ...string) string {
	return strings.NewReplacer(pairs...).Replace(minimal)
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
		is    any // *FormatError, *VersionError or *ValidationError
	}{
		{"empty", "  \n", "input is not a popmon measurement file (empty input)", &measure.FormatError{}},
		{"syntax", "{\"format\": ", "input is not a popmon measurement file (invalid JSON at byte", &measure.FormatError{}},
		{"array", "[1, 2]", "top level is a JSON array, not an object", &measure.FormatError{}},
		{"other format", `{"format": "talp", "version": 1}`, `input is not a popmon measurement file (format "talp")`, &measure.FormatError{}},
		{"no format", `{"dlbVersion": "3.6"}`, `not a popmon measurement file (no "format" key)`, &measure.FormatError{}},
		{"format not string", `{"format": 7}`, `(format 7 is not a string)`, &measure.FormatError{}},
		{"newer", `{"format": "popmon-measurement", "version": 5, "regions": "whatever"}`,
			"measurement file version 5 is newer than this popmon supports (4): upgrade popmon", &measure.VersionError{}},
		{"no version", `{"format": "popmon-measurement"}`, "version is missing", &measure.ValidationError{}},
		{"version string", edit(`"version": 1`, `"version": "1"`), `version "1" is not an integer`, &measure.ValidationError{}},
		{"version zero", edit(`"version": 1`, `"version": 0`), "version is 0; versions start at 1", &measure.ValidationError{}},
		{"no regions", edit(`"regions"`, `"regionz"`), "regions is missing or empty", &measure.ValidationError{}},
		{"no processes", edit(`"processes": [{"rank": 0, "node": 0`, `"procs": [{"rank": 0, "node": 0`), "processes is missing or empty", &measure.ValidationError{}},
		{"negative time", edit(`"useful_ns": 10`, `"useful_ns": -5`), `regions[0] "Global": processes[0] has negative useful_ns (-5)`, &measure.ValidationError{}},
		{"unknown rank", edit(`[{"rank": 0, "cpus": 1, "elapsed_ns"`, `[{"rank": 9, "cpus": 1, "elapsed_ns"`),
			`regions[0] "Global": processes[0] has rank 9, which is not listed in processes`, &measure.ValidationError{}},
		{"duplicate region", edit(`"regions": [`, `"regions": [{"name": "Global", "processes": []}, `),
			`regions[1] "Global" has the same name as regions[0]`, &measure.ValidationError{}},
		{"duplicate rank", edit(`{"rank": 1, "node": 0, "cpus": 1}`, `{"rank": 0, "node": 0, "cpus": 1}`), "processes[1] repeats rank 0", &measure.ValidationError{}},
		{"wrong type", edit(`"useful_ns": 10`, `"useful_ns": "10"`), "regions.processes.useful_ns is a JSON string, want an integer", &measure.ValidationError{}},
		{"fraction", edit(`"useful_ns": 10`, `"useful_ns": 1.5`), "regions.processes.useful_ns is a JSON number 1.5, want an integer", &measure.ValidationError{}},
		{"bad timestamp", edit(`"version": 1,`, `"version": 1, "timestamp": "yesterday",`), `timestamp "yesterday" is not an RFC 3339 time`, &measure.ValidationError{}},
		{"zero cpus", edit(`{"rank": 1, "node": 0, "cpus": 1}`, `{"rank": 1, "node": 0, "cpus": 0}`), "processes[1] has 0 CPUs", &measure.ValidationError{}},
		{"node out of range", edit(`{"rank": 1, "node": 0`, `{"rank": 1, "node": 3`), "processes[1] has node 3 outside 0 … 0", &measure.ValidationError{}},
		{"count mismatch", edit(`"processes": 2,`, `"processes": 3,`), "resources.processes is 3 but 2 processes are listed", &measure.ValidationError{}},
		{"unnamed region", edit(`"name": "Global"`, `"name": ""`), "regions[0] has no name", &measure.ValidationError{}},
		{"negative mpi call", edit(`"version": 1,`, `"version": 1, "mpi_calls": [{"name": "MPI_Send", "calls": -1}],`),
			`mpi_calls[0] "MPI_Send" has negative calls (-1)`, &measure.ValidationError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := measure.Read(strings.NewReader(tt.input))
			if err == nil {
				t.Fatalf("Read succeeded (%+v), want error containing %q", m, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.want)
			}
			if !errors.Is(err, measure.ErrInvalid) {
				t.Errorf("error %q does not wrap ErrInvalid", err)
			}
			target := reflect.New(reflect.TypeOf(tt.is))
			if !errors.As(err, target.Interface()) {
				t.Errorf("error %q is not a %T", err, tt.is)
			}
		})
	}
}

func TestValidateReportsSeveralProblems(t *testing.T) {
	in := edit(`"useful_ns": 10`, `"useful_ns": -5, "mpi_ns": -6`)
	_, err := measure.Read(strings.NewReader(in))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"negative useful_ns (-5)", "negative mpi_ns (-6)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestReadFileNamesFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := write("talp.json", `{"format": "talp-json", "version": 1}`)
	newer := write("new.json", `{"format": "popmon-measurement", "version": 7}`)
	bad := write("bad.json", edit(`"useful_ns": 10`, `"useful_ns": -1`))
	tests := []struct {
		path, want string
	}{
		{other, other + ` is not a popmon measurement file (format "talp-json")`},
		{newer, newer + ": measurement file version 7 is newer than this popmon supports (4): upgrade popmon"},
		{bad, bad + `: invalid measurement: regions[0] "Global": processes[0] has negative useful_ns (-1)`},
		{filepath.Join(dir, "missing.json"), "read measurement file: open " + filepath.Join(dir, "missing.json")},
	}
	for _, tt := range tests {
		_, err := measure.ReadFile(tt.path)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadFile(%s) error = %v, want %q", filepath.Base(tt.path), err, tt.want)
		}
	}
}

func TestReadIgnoresUnknownKeysAndMissingCounts(t *testing.T) {
	in := edit(`"version": 1,`, `"version": 1, "future": {"x": [1, 2]}, "tool": {"name": "popmon", "version": "9", "extra": true},`,
		`"useful_ns": 10}`, `"useful_ns": 10, "joules": 5}`)
	m, err := measure.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	a := m.Regions[0].Processes[0]
	if a.UsefulNS != 10 || a.MPINS != 0 || a.Visits != 0 || a.OMPSchedulingNS != 0 || a.GPURuntimeCalls != 0 {
		t.Errorf("accounts = %+v, want useful 10 and zeros", a)
	}
	if m.Tool.Version != "9" || m.MPI != nil || m.Timestamp != "" {
		t.Errorf("tool = %+v, mpi = %v, timestamp = %q", m.Tool, m.MPI, m.Timestamp)
	}
	if _, err := m.Time(); err == nil {
		t.Error("Time() of a file without timestamp succeeded")
	}
}

func TestWriteReproducesGeneratedFiles(t *testing.T) {
	for _, name := range generated {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			m, err := measure.Read(bytes.NewReader(orig))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := measure.Write(&out, m); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), orig) {
				t.Errorf("Write output differs from %s:\n%s", name, out.String())
			}
			m2, err := measure.Read(&out)
			if err != nil {
				t.Fatalf("re-reading Write output: %v", err)
			}
			if !reflect.DeepEqual(m, m2) {
				t.Errorf("round trip changed the measurement")
			}
		})
	}
}

func TestWriteRoundTripsEveryFile(t *testing.T) {
	for _, f := range allTestdata(t) {
		m, err := measure.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := measure.Write(&out, m); err != nil {
			t.Fatal(err)
		}
		if err := measure.ValidateSchema(out.Bytes()); err != nil {
			t.Errorf("%s: Write output fails the schema: %v", f, err)
		}
		m2, err := measure.Read(&out)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Errorf("%s: round trip changed the measurement", f)
		}
	}
}

func TestWriteFillsDefaultsAndRefusesInvalid(t *testing.T) {
	m := &measure.Measurement{
		Resources: measure.Resources{Processes: 1, Nodes: 1, CPUs: 1},
		Processes: []measure.Process{{Rank: 0, CPUs: 1, Hostname: `a"b<c>`}},
		Regions:   []measure.Region{{Name: "Global", Processes: []measure.ProcessAccounts{{Rank: 0, CPUs: 1, ElapsedNS: 5, UsefulNS: 5}}}},
		Launcher:  measure.Launcher{Kind: measure.LauncherNone},
		Clock:     measure.Clock{Source: "monotonic"},
		Timestamp: "2026-01-02T03:04:05Z",
	}
	var out bytes.Buffer
	if err := measure.Write(&out, m); err != nil {
		t.Fatal(err)
	}
	if m.Format != "" || m.Version != 0 {
		t.Error("Write modified its argument")
	}
	for _, want := range []string{`"format": "popmon-measurement"`, `"version": 1`, `"command": []`, `"warnings": []`, `"mpi_calls": []`, `"hostname": "a\"b<c>"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), `"mpi"`) {
		t.Errorf("output has an mpi key for a program without MPI:\n%s", out.String())
	}
	if err := measure.ValidateSchema(out.Bytes()); err != nil {
		t.Errorf("Write output fails the schema: %v", err)
	}

	m.Regions[0].Processes[0].UsefulNS = -1
	err := measure.Write(&bytes.Buffer{}, m)
	if err == nil || !strings.Contains(err.Error(), "write measurement: invalid measurement") || !errors.Is(err, measure.ErrInvalid) {
		t.Errorf("Write of an invalid measurement: err = %v", err)
	}
	if err := measure.Write(&bytes.Buffer{}, nil); err == nil {
		t.Error("Write(nil) succeeded")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWritePropagatesWriterErrors(t *testing.T) {
	m, err := measure.ReadFile(filepath.Join("testdata", "mpi_imbalance.json"))
	if err != nil {
		t.Fatal(err)
	}
	err = measure.Write(failWriter{}, m)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v, want disk full", err)
	}
}

func TestSchemaValidatesExamples(t *testing.T) {
	for _, f := range allTestdata(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := measure.ValidateSchema(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestDocExampleIsTestdata keeps the example in docs/measurement-format.md
// and testdata/doc_example.json identical, so the documented example is
// validated by the schema and the reader.
func TestDocExampleIsTestdata(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "measurement-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	match := regexp.MustCompile("(?s)## Example\n\n```json\n(.*?)```").FindSubmatch(doc)
	if match == nil {
		t.Fatal("no ```json example under ## Example in docs/measurement-format.md")
	}
	want, err := os.ReadFile(filepath.Join("testdata", "doc_example.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(match[1], want) {
		t.Errorf("docs/measurement-format.md example differs from testdata/doc_example.json; copy it over:\n%s", match[1])
	}
}

func TestSchemaCopiesIdentical(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join("..", "docs", "measurement.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs, measure.Schema()) {
		t.Error("docs/measurement.schema.json differs from measure/measurement.schema.json (the canonical copy): cp measure/measurement.schema.json docs/")
	}
}

func TestSchemaRejects(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "doc_example.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		old, new  string
		want      string
		wantCount int // minimum number of reported problems
	}{
		{"format", `"format": "popmon-measurement"`, `"format": "talp"`, `$.format: is "talp", want one of "popmon-measurement"`, 1},
		{"version type", `"version": 1`, `"version": 1.0`, "$.version: is the number 1.0, want integer", 1},
		{"missing key", `"cwd": "/home/me/run",`, ``, `$: misses required key "cwd"`, 1},
		{"launcher enum", `"kind": "openmpi"`, `"kind": "pbs"`, `$.launcher.kind: is "pbs", want one of "openmpi", "mpich", "slurm", "none"`, 1},
		{"negative time", `"useful_ns": 1000000000`, `"useful_ns": -1`, "$.regions[0].processes[0].useful_ns: is -1, below the minimum 0", 1},
		{"string time", `"mpi_ns": 0`, `"mpi_ns": "0"`, "$.regions[0].processes[1].mpi_ns: is a string, want integer", 1},
		{"zero cpus", `{"rank": 1, "node": 0, "hostname": "n1", "pid": 101, "cpus": 1}`, `{"rank": 1, "node": 0, "hostname": "n1", "pid": 101, "cpus": 0}`,
			"$.processes[1].cpus: is 0, below the minimum 1", 1},
		{"empty regions", `"regions": [`, `"regions": [], "x": [`, "$.regions: has 0 items, want at least 1", 1},
		{"warnings type", `"warnings": []`, `"warnings": [3]`, "$.warnings[0]: is the number 3, want string", 1},
		{"mpi call missing", `"max_rank": 0}`, `"max_rnk": 0}`, `$.mpi_calls[0]: misses required key "max_rank"`, 1},
		{"negative bytes", `"max_rank": 0}`, `"max_rank": 0, "bytes_sent": -1}`, "$.mpi_calls[0].bytes_sent: is -1, below the minimum 0", 1},
		{"negative size bucket", `"max_rank": 0}`, `"max_rank": 0, "size_hist": [0, -3]}`, "$.mpi_calls[0].size_hist[1]: is -3, below the minimum 0", 1},
		{"trailing data", "\"warnings\": []\n}", "\"warnings\": []\n} {}", "data after the top-level value", 1},
		{"two problems", `"hostname": "n1", "pid": 100`, `"hostname": 1, "pid": -100`, "$.processes[0].hostname: is the number 1, want string", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(base, []byte(tt.old)) {
				t.Fatalf("doc example lacks %q", tt.old)
			}
			data := bytes.Replace(base, []byte(tt.old), []byte(tt.new), 1)
			err := measure.ValidateSchema(data)
			if err == nil {
				t.Fatalf("schema accepted the edited file")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.want)
			}
			if n := len(strings.Split(err.Error(), "\n")); n < tt.wantCount {
				t.Errorf("%d problems reported, want at least %d: %v", n, tt.wantCount, err)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	for _, name := range append(generated, "doc_example.json") {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(minimal))
	f.Add([]byte(`{"format": "popmon-measurement", "version": 1, "regions": [{"name": "Global", "processes": [{"rank": 0}]}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := measure.Read(bytes.NewReader(data))
		_ = measure.ValidateSchema(data) // must not panic either
		if err != nil {
			if m != nil {
				t.Fatalf("Read returned a measurement and an error")
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Read returned a measurement that fails Validate: %v", err)
		}
		var out bytes.Buffer
		if err := measure.Write(&out, m); err != nil {
			t.Fatalf("Write of a measurement Read accepted: %v", err)
		}
		m2, err := measure.Read(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("re-reading Write output: %v\n%s", err, out.String())
		}
		var out2 bytes.Buffer
		if err := measure.Write(&out2, m2); err != nil || !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("Write is not stable across a round trip (err %v)", err)
		}
	})
}

func TestLauncherJob(t *testing.T) {
	for _, c := range []struct {
		l    measure.Launcher
		want string
	}{
		{measure.Launcher{Kind: measure.LauncherNone}, ""},
		{measure.Launcher{Kind: measure.LauncherOpenMPI, JobID: "1234"}, ""},
		{measure.Launcher{Kind: measure.LauncherSlurm, JobID: "8"}, "Slurm job 8"},
		{measure.Launcher{Kind: measure.LauncherSlurm, JobID: "8", StepID: "0", NodeList: "node[0-1]"}, "Slurm job 8, step 0 on node[0-1]"},
		{measure.Launcher{Kind: measure.LauncherSlurm, JobID: "9", NodeList: "node0"}, "Slurm job 9 on node0"},
	} {
		if got := c.l.Job(); got != c.want {
			t.Errorf("%+v: Job() = %q, want %q", c.l, got, c.want)
		}
	}
}
