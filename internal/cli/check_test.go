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
		{"region", []string{"--baseline", base, "--region", "global", drop}, 1, nil},
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
		{[]string{"--format", "csv", "--region", "GLOBAL", dir}, 0, "Global,4xMPI 1xOpenMP,4,"},
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
