package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// partialRun copies testdata/partial-aborted.json to dir/name: a partial
// measurement (version 3) of a 2-rank job cut at 2 s after rank 1 called
// MPI_Abort(7): rank 0 U 1 s M 1 s, rank 1 U 2 s (LB 0.75).
func partialRun(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "session", "testdata", "partial-aborted.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
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
