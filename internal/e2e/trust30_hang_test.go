package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 30, items 3 and 4: no launch form hangs (MPMD lines where only some
// parts carry the library, a fork while another thread is inside a region,
// a collective query called by some ranks only), and popmon's own region
// API refuses a name that would be the Global region.

// hangDeadline: a case that ends later than this is a hang (each case ends
// in a few seconds: 1 s at MPI_Init and 3 s at finalize at most for a rank
// without the library, plus the program's own time).
const hangDeadline = 45 * time.Second

// mpmdLine is an MPMD launch line of one-rank parts, "P" for a part started
// by `popmon exec -o out` and "n" for a part without popmon (pattern "nP":
// rank 0 plain, rank 1 measured).
func mpmdLine(impl mpiImpl, pattern, prog, out string) []string {
	argv := append([]string{impl.mpirun}, impl.extra...)
	for i, c := range pattern {
		if i > 0 {
			argv = append(argv, ":")
		}
		argv = append(argv, "-np", "1")
		if c == 'P' {
			argv = append(argv, popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--")
		}
		argv = append(argv, prog, "50", "2")
	}
	return argv
}

// TestMPMDExecCombinations: every MPMD combination of parts with and
// without `popmon exec` ends within seconds, with either a measurement of
// the ranks that carry the library (marked incomplete when some do not) or,
// when rank 0 does not carry it, one line saying that no measurement was
// written and why. Rank 0 without the library used to hang the job (Open
// MPI for 675 s, until SIGKILL).
func TestMPMDExecCombinations(t *testing.T) {
	cases := []struct {
		pattern string
		written bool   // rank 0 carries the library: it writes the file
		missing string // the incomplete object's missing ranks ("" for a complete run)
	}{
		{"nP", false, ""},
		{"nPP", false, ""},
		{"PnP", true, "1"},
		{"Pn", true, "1"},
		{"PP", true, ""},
	}
	for _, impl := range impls(t) {
		for _, c := range cases {
			impl, c := impl, c
			t.Run(impl.name+"/"+c.pattern, func(t *testing.T) {
				prog := filepath.Join(examples(t, impl), "imbalance")
				out := filepath.Join(t.TempDir(), "m.json")
				argv := mpmdLine(impl, c.pattern, prog, out)
				start := time.Now()
				so, se, code := runCommand(t, hangDeadline, nil, argv...)
				took := time.Since(start)
				if code != 0 || strings.Count(so, "ok ") != len(c.pattern) {
					t.Fatalf("%s: exit %d after %v (-1: killed at the deadline: a hang)\nstdout:\n%s\nstderr:\n%s",
						strings.Join(argv, " "), code, took.Round(time.Second), so, se)
				}
				t.Logf("ended after %v", took.Round(100*time.Millisecond))
				_, err := os.Stat(out)
				if !c.written {
					if err == nil {
						t.Errorf("a measurement without rank 0")
					}
					const want = "popmon: rank 0 did not load the measurement library, so the ranks that did"
					if n := strings.Count(se, want); n != 1 {
						t.Errorf("%d lines %q, want 1:\n%s", n, want, se)
					}
					return
				}
				m := readChecked(t, out)
				switch {
				case c.missing == "" && m.Incomplete != nil:
					t.Errorf("incomplete %+v, want a complete measurement", m.Incomplete)
				case c.missing != "" && (m.Incomplete == nil || m.Incomplete.MissingRanks != c.missing):
					t.Errorf("incomplete %+v, want missing ranks %s", m.Incomplete, c.missing)
				}
			})
		}
	}
}

// TestMPMDRunPartlyPreloaded: `popmon run` over an MPMD line where one part
// drops LD_PRELOAD (env -u): rank 0 without the library ends within
// seconds with popmon run's sentence naming the ranks; a later part without
// it gives a measurement of the others marked incomplete.
func TestMPMDRunPartlyPreloaded(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(examples(t, impl), "imbalance")
			part := func(drop bool) []string {
				if drop {
					return []string{"-np", "1", "env", "-u", "LD_PRELOAD", prog, "50", "2"}
				}
				return []string{"-np", "1", prog, "50", "2"}
			}
			for _, c := range []struct {
				name  string
				drops []bool
			}{{"first-plain", []bool{true, false}}, {"middle-plain", []bool{false, true, false}}} {
				argv := append([]string{impl.mpirun}, impl.extra...)
				for i, d := range c.drops {
					if i > 0 {
						argv = append(argv, ":")
					}
					argv = append(argv, part(d)...)
				}
				out := filepath.Join(t.TempDir(), "m.json")
				start := time.Now()
				so, se, code := runCommand(t, hangDeadline, nil,
					append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, argv...)...)
				took := time.Since(start)
				if code == -1 || !strings.Contains(so, "ok ") {
					t.Fatalf("%s: exit %d after %v (-1: a hang)\n%s%s", c.name, code, took.Round(time.Second), so, se)
				}
				if took > 20*time.Second {
					t.Errorf("%s: ended after %v, want a few seconds", c.name, took.Round(time.Second))
				}
				if c.drops[0] {
					if !strings.Contains(se, "rank 0 did not take part in popmon's finalize") {
						t.Errorf("%s: no explanation:\n%s", c.name, se)
					}
					continue
				}
				m := readChecked(t, out)
				if m.Incomplete == nil || m.Incomplete.MissingRanks != "1" {
					t.Errorf("%s: incomplete %+v, want rank 1 missing", c.name, m.Incomplete)
				}
			}
		})
	}
}

var _ = fmt.Sprint
