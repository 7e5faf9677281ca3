package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// partialRun writes a partial measurement (version 3) of a 2-rank job cut
// at 2 s after rank 1 called MPI_Abort(7): rank 0 U 1 s M 1 s, rank 1 U 2 s
// (LB 0.75).
func partialRun(t *testing.T, dir, name string) string {
	t.Helper()
	m := &measure.Measurement{
		Format: measure.Format, Version: 3,
		Tool:      measure.Tool{Name: "libpopmon", Version: "assembled by popmon"},
		Timestamp: "2026-11-24T10:00:00Z", Command: []string{"./app"}, Cwd: "/tmp",
		Launcher:  measure.Launcher{Kind: measure.LauncherNone},
		MPI:       &measure.MPI{Library: "test", ThreadLevel: "unknown"},
		Clock:     measure.Clock{Source: measure.ClockMonotonic},
		Resources: measure.Resources{Processes: 2, Nodes: 1, CPUs: 2},
		Processes: []measure.Process{{Rank: 0, Hostname: "h", PID: 10, CPUs: 1}, {Rank: 1, Hostname: "h", PID: 11, CPUs: 1}},
		Regions: []measure.Region{{Name: measure.GlobalRegion, Processes: []measure.ProcessAccounts{
			{Rank: 0, CPUs: 1, Visits: 1, ElapsedNS: 2e9, UsefulNS: 1e9, MPINS: 1e9},
			{Rank: 1, CPUs: 1, Visits: 1, ElapsedNS: 2e9, UsefulNS: 2e9},
		}}},
		MPICalls: []measure.MPICall{},
		Partial: &measure.Partial{Reason: measure.PartialAborted, Detail: "rank 1 called MPI_Abort(7) first", CutNS: 2e9,
			Ranks: 2, Included: 2, AssembledBy: "run",
			Ends: []measure.ProcessEnd{{Rank: 0, End: "killed", ValidUntilNS: 2e9}, {Rank: 1, End: "MPI_Abort(7)", ValidUntilNS: 2e9}}},
	}
	m.Warnings = []string{m.Partial.Sentence()}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := measure.Write(f, m); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPartialShownEverywhere: report, scaling and check read a partial
// measurement (its metrics are those of the measured part) and each says
// that it is partial.
func TestPartialShownEverywhere(t *testing.T) {
	dir := t.TempDir()
	p := partialRun(t, dir, "aborted.json")
	const sentence = "partial measurement: rank 1 called MPI_Abort(7) first; measured up to 2.00 s after MPI_Init; all 2 ranks"
	code, stdout, stderr := runMain("report", p)
	if code != ExitOK || !strings.Contains(stdout, "PARTIAL") || !strings.Contains(stdout+stderr, sentence) || !strings.Contains(stdout, "0.75") {
		t.Errorf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runMain("scaling", p)
	if code != ExitOK || !strings.Contains(stderr, sentence) {
		t.Errorf("scaling: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runMain("check", "--baseline", p, p)
	if code != ExitOK || !strings.Contains(stderr, sentence) {
		t.Errorf("check: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
