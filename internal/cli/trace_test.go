package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// traceEpochDir holds the EPOCH Extrae traces (a copy of shared/data/pypop).
const traceEpochDir = "../paraver/testdata"

// traceEpochFile returns the path of the EPOCH trace of p processes,
// skipping the test when the shared data is not there.
func traceEpochFile(t *testing.T, p string) string {
	t.Helper()
	path := filepath.Join(traceEpochDir, "epoch_"+p+"proc.prv.gz")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("EPOCH traces not present at %s (internal/paraver/testdata)", traceEpochDir)
	}
	return path
}

// tracedMeasurement writes a copy of a measurement whose trace field
// names dir (nil: no trace field) and returns its path.
func tracedMeasurement(t *testing.T, dir *string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "measure", "testdata", "hybrid_2nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if dir != nil {
		m["trace"] = map[string]any{"dir": *dir, "records": 1, "bytes": 1, "flushes": 0}
	}
	data, _ = json.Marshal(m)
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTraceInputErrors(t *testing.T) {
	missing := "popmon-trace-gone"
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"untraced measurement", []string{"report", "--patterns", tracedMeasurement(t, nil)}, ExitInput,
			"this measurement was not traced: run it again with popmon run --trace"},
		{"trace folder gone", []string{"trace", "export", "--format", "perfetto", "-o", filepath.Join(t.TempDir(), "x.json"), tracedMeasurement(t, &missing)}, ExitInput,
			"trace folder"},
		{"no such file", []string{"report", "--patterns", "/nonexistent/run.json"}, ExitInput, "give a Paraver trace, a traced run's measurement or its trace folder"},
		{"bad format", []string{"trace", "export", "--format", "otf2", "x"}, ExitUsage, `--format "otf2": use prv or perfetto`},
		{"bad ranks", []string{"trace", "export", "--format", "perfetto", "--ranks", "3-1", "x"}, ExitUsage, "--ranks"},
		{"bad window", []string{"trace", "export", "--format", "perfetto", "--window", "2", "x"}, ExitUsage, "T0:T1"},
		{"no subcommand", []string{"trace"}, ExitUsage, "expected a subcommand: export"},
		{"patterns csv", []string{"report", "--patterns", "--format", "csv", "x"}, ExitUsage, "--patterns prints text or json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tc.args, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			if code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), tc.code, tc.stderr)
			}
		})
	}
}

func TestReportPatternsEpoch(t *testing.T) {
	path := traceEpochFile(t, "2")
	var out, errb bytes.Buffer
	if code := Main([]string{"report", "--patterns", path}, &Env{Stdout: &out, Stderr: &errb}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"Late Sender  ", "0.073", "Wait at N x N", "Critical path:", "critical-path imbalance"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := Main([]string{"report", "--patterns", "--format", "json", path}, &Env{Stdout: &out, Stderr: &errb}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Format   string
		Version  int
		MPINS    int64 `json:"mpi_ns"`
		Patterns []struct {
			ID string
			NS int64
		}
		CriticalPath struct {
			NS     int64   `json:"ns"`
			RankNS []int64 `json:"rank_ns"`
		} `json:"critical_path"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != "popmon-patterns" || doc.Version != 1 || len(doc.Patterns) != 11 || doc.Patterns[0].ID != "late_sender" ||
		doc.Patterns[0].NS < 72_000_000 || doc.Patterns[0].NS > 74_000_000 || len(doc.CriticalPath.RankNS) != 2 {
		t.Errorf("json: %+v", doc)
	}
	// -o writes the same document to a file, refused once it exists.
	outFile := filepath.Join(t.TempDir(), "p.json")
	args := []string{"report", "--patterns", "--format", "json", "-o", outFile, path}
	if code := Main(args, &Env{Stdout: &bytes.Buffer{}, Stderr: &errb}); code != ExitOK {
		t.Fatalf("-o: exit %d: %s", code, errb.String())
	}
	if data, err := os.ReadFile(outFile); err != nil || !bytes.Equal(data, out.Bytes()) {
		t.Errorf("-o file differs from stdout (%v)", err)
	}
	errb.Reset()
	if code := Main(args, &Env{Stdout: &bytes.Buffer{}, Stderr: &errb}); code != ExitUsage || !strings.Contains(errb.String(), "exists") {
		t.Errorf("second -o: exit %d, %s", code, errb.String())
	}
}

func TestTraceExportPerfettoEpoch(t *testing.T) {
	path := traceEpochFile(t, "2")
	dir := t.TempDir()
	outFile := filepath.Join(dir, "w.json")
	var errb bytes.Buffer
	args := []string{"trace", "export", "--format", "perfetto", "--ranks", "0-1", "--window", "1:1.2", "-o", outFile, path}
	if code := Main(args, &Env{Stdout: &bytes.Buffer{}, Stderr: &errb}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph  string
			TS  float64
			Dur *float64
			ID  int64
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	flows := map[string]map[int64]int{"s": {}, "f": {}}
	var m, x int
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "M":
			m++
		case "X":
			x++
			if e.Dur == nil || *e.Dur < 0 || e.TS+*e.Dur < 1e6 || e.TS > 1.2e6 {
				t.Errorf("slice at %.3f µs (dur %v) outside the window or without dur", e.TS, e.Dur)
			}
		case "s", "f":
			flows[e.Ph][e.ID]++
		}
	}
	if m < 2 || x == 0 || len(flows["s"]) == 0 || len(flows["s"]) != len(flows["f"]) {
		t.Errorf("%d M, %d X, %d flow starts, %d flow ends", m, x, len(flows["s"]), len(flows["f"]))
	}
	for id, n := range flows["s"] {
		if n != 1 || flows["f"][id] != 1 {
			t.Errorf("flow %d: %d starts, %d ends", id, n, flows["f"][id])
		}
	}
	// The output exists now: a second export is refused without --force.
	errb.Reset()
	if code := Main(args, &Env{Stdout: &bytes.Buffer{}, Stderr: &errb}); code != ExitUsage || !strings.Contains(errb.String(), "exists") {
		t.Errorf("second export: exit %d, %s", code, errb.String())
	}
}

// TestTraceExportPrvEpoch: a Paraver export re-read gives the same wait
// states (Late Sender of EPOCH P = 2: 0.073 s).
func TestTraceExportPrvEpoch(t *testing.T) {
	path := traceEpochFile(t, "2")
	prefix := filepath.Join(t.TempDir(), "again")
	var errb bytes.Buffer
	if code := Main([]string{"trace", "export", "--format", "prv", "-o", prefix + ".prv", path}, &Env{Stdout: &bytes.Buffer{}, Stderr: &errb}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, ext := range []string{".prv", ".pcf", ".row"} {
		if _, err := os.Stat(prefix + ext); err != nil {
			t.Errorf("export lacks %s: %v", ext, err)
		}
	}
	late := func(p string) int64 {
		var out bytes.Buffer
		if code := Main([]string{"report", "--patterns", "--format", "json", p}, &Env{Stdout: &out, Stderr: &errb}); code != ExitOK {
			t.Fatalf("report --patterns %s: exit %d: %s", p, code, errb.String())
		}
		var doc struct{ Patterns []struct{ NS int64 } }
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Patterns) == 0 {
			t.Fatalf("%s: %v", p, err)
		}
		return doc.Patterns[0].NS
	}
	a, b := late(path), late(prefix+".prv")
	if a < 72_000_000 || a > 74_000_000 || b < a-1000 || b > a+1000 {
		t.Errorf("Late Sender %d ns in the trace, %d ns in its export; want 0.073 s in both (±1 µs)", a, b)
	}
}
