package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// copyTrace copies a test trace and its .pcf/.row into dir.
func copyTrace(t *testing.T, dir, name string) string {
	t.Helper()
	src := filepath.Join("..", "paraver", "testdata")
	for _, ext := range []string{".prv.gz", ".pcf", ".row"} {
		b, err := os.ReadFile(filepath.Join(src, name+ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name+".prv.gz")
}

func runMain(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	trace := copyTrace(t, dir, "epoch_2proc")
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(old) })

	code, _, stderr := runMain("import", trace)
	if code != ExitOK || !strings.Contains(stderr, "→ epoch_2proc.json") || !strings.Contains(stderr, "2 processes") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	m, err := measure.ReadFile("epoch_2proc.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Source == nil || m.Source.Kind != measure.SourceParaver || m.Tool.Version != Version || len(m.Processes) != 2 {
		t.Errorf("source %+v tool %+v processes %d", m.Source, m.Tool, len(m.Processes))
	}
	// Again: never overwrite, number instead.
	if code, _, stderr := runMain("import", trace); code != ExitOK || !strings.Contains(stderr, "→ epoch_2proc.1.json") {
		t.Errorf("second import: exit %d, stderr %q", code, stderr)
	}
	// -o to an existing file fails and leaves it alone.
	before, _ := os.ReadFile("epoch_2proc.json")
	if code, _, stderr := runMain("import", "-o", "epoch_2proc.json", trace); code != ExitUsage || !strings.Contains(stderr, "epoch_2proc.json exists: choose another name or pass --force") {
		t.Errorf("-o existing: exit %d, stderr %q", code, stderr)
	}
	if after, _ := os.ReadFile("epoch_2proc.json"); !bytes.Equal(before, after) {
		t.Error("-o overwrote an existing file")
	}
	// The imported measurement and the trace report the same.
	_, fromFile, _ := runMain("report", "--format", "csv", "epoch_2proc.json")
	_, fromTrace, _ := runMain("report", "--format", "csv", trace)
	if fromFile == "" || fromFile != fromTrace || !strings.Contains(fromFile, "Global,mpi_load_balance,0.9976") {
		t.Errorf("report of the measurement:\n%s\nreport of the trace:\n%s", fromFile, fromTrace)
	}
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.prv")
	os.WriteFile(bad, []byte("#Paraver (d):10_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:10:1\n1:1:1:1:1:x:10:1\n"), 0o644)
	notTrace := filepath.Join(dir, "x.txt")
	os.WriteFile(notTrace, []byte("hello"), 0o644)
	out := filepath.Join(dir, "out.json")
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"import"}, ExitUsage, "expected exactly one trace"},
		{[]string{"import", notTrace}, ExitInput, "is not a Paraver trace"},
		{[]string{"import", "-o", out, bad}, ExitInput, "bad.prv is not a usable Paraver trace: line 3: malformed state record"},
		{[]string{"import", "-o", out, "--app", "0", bad}, ExitUsage, "applications are numbered from 1"},
		{[]string{"import", "-o", filepath.Join(dir, "nope", "x.json"), bad}, ExitUsage, "does not exist"},
		{[]string{"report", bad}, ExitInput, "line 3: malformed state record"},
	}
	for _, c := range cases {
		code, _, stderr := runMain(c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed import left an output file")
	}
	// --skip-bad imports and says what it skipped.
	code, _, stderr := runMain("import", "--skip-bad", "-o", out, bad)
	if code != ExitOK || !strings.Contains(stderr, "skipped 1 malformed line(s)") {
		t.Errorf("--skip-bad: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runMain("report", "--skip-bad", bad); code != ExitOK || !strings.Contains(stderr, "skipped 1 malformed") {
		t.Errorf("report --skip-bad: exit %d, stderr %q", code, stderr)
	}
}

func TestScalingOfTraces(t *testing.T) {
	dir := t.TempDir()
	copyTrace(t, dir, "epoch_1proc")
	copyTrace(t, dir, "epoch_2proc")
	code, stdout, stderr := runMain("scaling", "--format", "csv", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"1xMPI 1xOpenMP", "2xMPI 1xOpenMP", "computation_scalability", "instruction_scaling"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("scaling CSV lacks %q:\n%s", want, stdout)
		}
	}
}

func TestReportTALPJSON(t *testing.T) {
	// popmon's own talp-json export (always here) and DLB's samples (when
	// the shared data is).
	own := filepath.Join("..", "report", "testdata", "mpi_imbalance.talp.json.golden")
	code, stdout, stderr := runMain("report", own)
	if code != ExitOK || !strings.Contains(stdout, "Communication efficiency") || !strings.Contains(stdout, "DLB/TALP") {
		t.Fatalf("report of a talp-json export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// One CPU per process: each process's useful time follows from the
	// sums (pop-hybrid = the pure-MPI tree, LB 0.625).
	code, stdout, _ = runMain("report", "--model", "pop-hybrid", "--format", "json", own)
	if code != ExitOK || !regexp.MustCompile(`"hybrid_parallel_efficiency": 0\.62`).MatchString(stdout) {
		t.Errorf("pop-hybrid of a pure-MPI TALP file (exit %d):\n%s", code, stdout)
	}
	// Several CPUs per process: the sums do not give each thread's time.
	hybrid := filepath.Join("..", "report", "testdata", "hybrid_2nodes.talp.json.golden")
	code, stdout, _ = runMain("report", "--model", "pop-hybrid", "--format", "json", hybrid)
	if code != ExitOK || regexp.MustCompile(`"hybrid_parallel_efficiency": [0-9]`).MatchString(stdout) {
		t.Errorf("pop-hybrid of a hybrid TALP file has values (exit %d):\n%s", code, stdout)
	}
	code, stdout, _ = runMain("report", "--model", "pop-hybrid", hybrid)
	if code != ExitOK || !strings.Contains(stdout, "DLB/TALP JSON holds sums") {
		t.Errorf("pop-hybrid text of a hybrid TALP file does not say why (exit %d):\n%s", code, stdout)
	}
	sample := filepath.Join("..", "..", "..", "shared", "data", "talp-json", "jsons", "unit-tests", "dlb_3_6_0.json")
	if _, err := os.Stat(sample); err != nil {
		t.Skipf("DLB samples not here: %v", err)
	}
	code, stdout, stderr = runMain("report", "--format", "csv", sample)
	if code != ExitOK || !strings.Contains(stdout, "Global,device_offload_efficiency,0.766") {
		t.Errorf("report of DLB 3.6 sample: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
