package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// talpRun writes a TALP JSON run with the given Global efficiencies and
// elapsed time.
func talpRun(t *testing.T, dir, name, ts string, ranks int, pe, lb float64, elapsed int64) string {
	t.Helper()
	s := fmt.Sprintf(`{"dlbVersion": "3.7", "timestamp": %q,
 "resources": {"numCpus": %d, "numNodes": 1, "numMpiRanks": %d},
 "Application": {"Global": {"numCpus": %d, "numMpiRanks": %d, "numNodes": 1, "elapsedTime": %d, "usefulTime": 1000, "mpiTime": 10,
   "parallelEfficiency": %g, "mpiParallelEfficiency": %g, "mpiCommunicationEfficiency": 1.0, "mpiLoadBalance": %g,
   "ompParallelEfficiency": 1.0}}}`, ts, ranks, ranks, ranks, ranks, elapsed, pe, pe, lb)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &Env{Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history")
	os.Mkdir(hist, 0o755)
	base := talpRun(t, hist, "old.json", "2026-01-01T00:00:00", 4, 0.90, 0.90, 1e9)
	talpRun(t, hist, "newer.json", "2026-01-02T00:00:00", 4, 0.80, 0.80, 1e9)
	talpRun(t, hist, "other.json", "2026-01-03T00:00:00", 8, 0.10, 0.10, 1e9) // other resources
	same := talpRun(t, dir, "same.json", "2026-02-01T00:00:00", 4, 0.90, 0.90, 1e9)
	drop := talpRun(t, dir, "drop.json", "2026-02-01T00:00:00", 4, 0.90, 0.80, 1e9)
	slow := talpRun(t, dir, "slow.json", "2026-02-01T00:00:00", 4, 0.90, 0.90, 1.2e9)
	lone := talpRun(t, dir, "lone.json", "2026-02-01T00:00:00", 2, 0.90, 0.90, 1e9)
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unchanged", []string{"--baseline", base, same}, 0, []string{"0 regression(s)", "nothing moved"}},
		{"drop", []string{"--baseline", base, drop}, 1, []string{"mpi_load_balance", "0.90", "0.80", "-0.10", "REGRESSION", "1 regression(s)"}},
		{"drop allowed per metric", []string{"--baseline", base, "--max-drop", "mpi_load_balance=0.2", drop}, 0, []string{"mpi_load_balance 0.2", "ok"}},
		{"drop allowed globally", []string{"--baseline", base, "--max-drop", "0.1", drop}, 0, []string{"0 regression(s)"}},
		{"other metric only", []string{"--baseline", base, "--metric", "parallel_efficiency", drop}, 0, []string{"1 values compared"}},
		{"directory: newest same resources", []string{"--baseline", hist, same}, 0, []string{"newer.json", "improved", "+0.10"}},
		{"directory: no match", []string{"--baseline", hist, lone}, 0, []string{"nothing to compare"}},
		{"slowdown off", []string{"--baseline", base, slow}, 0, nil},
		{"slowdown", []string{"--baseline", base, "--max-slowdown", "0.1", slow}, 1, []string{"elapsed_s", "+20.0%", "REGRESSION"}},
		{"slowdown allowed", []string{"--baseline", base, "--max-slowdown", "0.25", slow}, 0, []string{"elapsed_s"}},
		{"region", []string{"--baseline", base, "--region", "Global", drop}, 1, []string{"mpi_load_balance"}},
		{"region names are case-sensitive", []string{"--baseline", base, "--region", "global", drop}, ExitUsage, nil},
		{"all", []string{"--baseline", base, "--all", same}, 0, []string{"parallel_efficiency", "mpi_communication_efficiency"}},
	}
	for _, c := range cases {
		code, out, errs := runCLI(append([]string{"check"}, c.args...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, code, c.code, out, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, out)
			}
		}
	}
}

func TestCheckErrors(t *testing.T) {
	dir := t.TempDir()
	base := talpRun(t, dir, "b.json", "2026-01-01T00:00:00", 4, 0.9, 0.9, 1e9)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"x": 1}`), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{base}, ExitUsage, "--baseline"},
		{[]string{"--baseline", base}, ExitUsage, "exactly one"},
		{[]string{"--baseline", base, "--max-drop", "lots", base}, ExitUsage, ""},
		{[]string{"--baseline", base, "--max-slowdown", "-1", base}, ExitUsage, "max-slowdown"},
		{[]string{"--baseline", base, "--metric", "nonsense", base}, ExitUsage, "nonsense"},
		{[]string{"--baseline", base, "--max-drop", "nonsense=0.1", base}, ExitUsage, "nonsense"},
		{[]string{"--baseline", base, "--region", "solve", base}, ExitUsage, "solve"},
		{[]string{"--baseline", base, "--model", "pop-hybrid", base}, ExitInput, "model talp only"},
		{[]string{"--baseline", base, "--model", "nope", base}, ExitUsage, "nope"},
		{[]string{"--baseline", bad, base}, ExitInput, "bad.json"},
		{[]string{"--baseline", base, bad}, ExitInput, "bad.json"},
		{[]string{"--baseline", filepath.Join(dir, "missing"), base}, ExitInput, "missing"},
		{[]string{"--baseline", dir, base}, ExitInput, "bad.json"},
		{[]string{"--baseline", dir, "--skip-bad", base}, ExitOK, ""},
	}
	for _, c := range cases {
		code, out, errs := runCLI(append([]string{"check"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want %d; stderr lacks %q?\n%s%s", c.args, code, c.code, c.want, out, errs)
		}
	}
}

func TestScalingCmd(t *testing.T) {
	dir := t.TempDir()
	talpRun(t, dir, "a.json", "2026-01-01T00:00:00", 2, 0.9, 0.9, 2e9)
	talpRun(t, dir, "b.json", "2026-01-01T00:00:00", 4, 0.8, 0.8, 1e9)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{dir}, 0, "Speedup"},
		{[]string{"--format", "json", "--mode", "weak", dir}, 0, `"mode": "weak"`},
		{[]string{"--format", "csv", "--region", "Global", dir}, 0, "Global,4xMPI 1xOpenMP,4,"},
		{[]string{"--format", "csv", "--region", "GLOBAL", dir}, ExitUsage, ""},
		{[]string{"--format", "markdown", "--reference", "b.json", dir}, 0, "Reference: 4xMPI 1xOpenMP"},
		{[]string{"--format", "yaml", dir}, ExitUsage, ""},
		{[]string{"--mode", "diagonal", dir}, ExitUsage, ""},
		{[]string{"--reference", "16xMPI", dir}, ExitUsage, ""},
		{[]string{"--region", "nope", dir}, ExitUsage, ""},
		{[]string{}, ExitUsage, ""},
		{[]string{filepath.Join(dir, "missing.json")}, ExitInput, ""},
	}
	for _, c := range cases {
		code, out, errs := runCLI(append([]string{"scaling"}, c.args...)...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want %d; output lacks %q?\n%s%s", c.args, code, c.code, c.want, out, errs)
		}
	}
}

// TestCheckUnusableInputs: every unusable new run or baseline is exit 3
// with one sentence naming the file, the problem and the fix (the file
// classes of TestOneValidationPath are checked there).
func TestCheckUnusableInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", popmonRun("800000000", ""))
	other := write("other.json", strings.Replace(popmonRun("800000000", ""), `"name": "Global"`, `"name": "Main"`, 1))
	talpGood := talpRun(t, dir, "talp.json", "2026-01-01T00:00:00", 2, 0.9, 0.9, 1e9)
	// A TALP run without elapsed time has no efficiency values.
	noTime := write("notime.json", `{"dlbVersion": "3.7", "Application": {"Global": {"numCpus": 2, "numMpiRanks": 2, "elapsedTime": 0, "usefulTime": 0,
  "parallelEfficiency": 0.0, "mpiParallelEfficiency": 0.0}}}`)
	// Only OpenMP efficiencies: nothing in common with an MPI-only tree.
	ompOnly := write("omp.json", `{"dlbVersion": "3.7", "Application": {"Global": {"numCpus": 2, "numMpiRanks": 0, "elapsedTime": 1000, "usefulTime": 1500,
  "numOmpParallels": 3, "ompParallelEfficiency": 0.75, "ompLoadBalance": 0.75}}}`)
	missing := filepath.Join(dir, "missing.json")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"new run missing", []string{"--baseline", good, missing},
			"popmon check: new run " + missing + " does not exist: check the path (did the job that writes it succeed?)\n"},
		{"baseline missing", []string{"--baseline", missing, good},
			"popmon check: baseline " + missing + " does not exist: check the path (did the job that writes it succeed?)\n"},
		{"no region in common", []string{"--baseline", other, good},
			`popmon check: baseline ` + other + ` and new run ` + good + ` have no region in common (baseline: "Main"; new: "Global"): compare runs of the same program` + "\n"},
		{"new run without values", []string{"--baseline", talpGood, noTime},
			`popmon check: new run ` + noTime + ` has no efficiency value in region "Global" (no useful time measured there?): measure it again` + "\n"},
		{"baseline without values", []string{"--baseline", noTime, talpGood},
			`popmon check: baseline ` + noTime + ` has no efficiency value in region "Global" (no useful time measured there?): choose another baseline` + "\n"},
		{"0 values compared", []string{"--baseline", ompOnly, good},
			`popmon check: no metric of new run ` + good + ` is in baseline ` + ompOnly + ` for region "Global" (0 values compared): compare runs measured the same way (same model and kind of file), or name metrics both have with --metric` + "\n"},
	}
	for _, c := range cases {
		code, out, errs := runCLI(append([]string{"check"}, c.args...)...)
		if code != ExitInput || errs != c.want {
			t.Errorf("%s: exit %d, want %d\nstderr %q\nwant   %q\nstdout %s", c.name, code, ExitInput, errs, c.want, out)
		}
		if strings.Contains(out, "values compared") {
			t.Errorf("%s: printed a comparison:\n%s", c.name, out)
		}
	}
	// A trace with only its header: refused, never "0 values compared".
	header := write("header.prv", tinyTrace[:strings.Index(tinyTrace, "\n")+1])
	for _, args := range [][]string{{"--baseline", good, header}, {"--baseline", header, good}} {
		code, out, errs := runCLI(append([]string{"check"}, args...)...)
		if code != ExitInput || !strings.Contains(errs, header) || strings.Contains(out, "values compared") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
}
