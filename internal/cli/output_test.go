package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestReportOutputNeverOverwrites: -o refuses an existing file before any
// work, --force replaces it atomically, a failed report leaves nothing.
func TestReportOutputNeverOverwrites(t *testing.T) {
	in := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(in, []byte(popmonRun("800000000", "")), 0o644)
	dir := t.TempDir()
	out := filepath.Join(dir, "report.csv")
	os.WriteFile(out, []byte("precious"), 0o644)

	// Refused before the input is even read: a missing input gives the
	// -o error, not the input's.
	for _, input := range []string{in, filepath.Join(dir, "missing.json")} {
		code, _, errs := runMain("report", "--format", "csv", "-o", out, input)
		if code != ExitUsage || errs != "popmon report: "+out+" exists: choose another name or pass --force\n" {
			t.Errorf("%s: exit %d, %q", input, code, errs)
		}
	}
	if b, _ := os.ReadFile(out); string(b) != "precious" {
		t.Fatalf("-o without --force changed the file: %q", b)
	}
	// A failing report with --force keeps the old file.
	if code, _, _ := runMain("report", "--force", "-o", out, filepath.Join(dir, "missing.json")); code != ExitInput {
		t.Errorf("missing input with --force: exit %d", code)
	}
	if b, _ := os.ReadFile(out); string(b) != "precious" {
		t.Fatalf("a failed report replaced the file: %q", b)
	}
	// --force replaces it.
	if code, _, errs := runMain("report", "--format", "csv", "--force", "-o", out, in); code != ExitOK {
		t.Fatalf("--force: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), "region,metric,value\nGlobal,elapsed_s,1\n") {
		t.Errorf("--force wrote %q", b)
	}
	// A new file; a failed report leaves no file.
	fresh := filepath.Join(dir, "fresh.txt")
	if code, _, _ := runMain("report", "-o", fresh, in); code != ExitOK {
		t.Errorf("new -o: exit %d", code)
	}
	if b, _ := os.ReadFile(fresh); !strings.Contains(string(b), "Parallel efficiency") {
		t.Errorf("new -o wrote %q", b)
	}
	failed := filepath.Join(dir, "failed.txt")
	if code, _, _ := runMain("report", "--region", "nope", "-o", failed, in); code != ExitUsage {
		t.Errorf("failed report: exit %d", code)
	}
	if got := strings.Join(entries(t, dir), " "); got != "fresh.txt report.csv" {
		t.Errorf("folder holds %q: a failed report or a temporary file was left", got)
	}
	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"report", "--force", in}, "popmon report: --force needs -o FILE\n"},
		{[]string{"report", "-o", dir, in}, "popmon report: " + dir + " is a directory: choose a file name\n"},
		{[]string{"report", "-o", filepath.Join(dir, "no", "x.txt"), in}, "popmon report: cannot write " + filepath.Join(dir, "no", "x.txt") + ": folder " + filepath.Join(dir, "no") + " does not exist\n"},
	}
	for _, c := range cases {
		if code, _, errs := runMain(c.args...); code != ExitUsage || errs != c.err {
			t.Errorf("%v: exit %d, %q, want %q", c.args, code, errs, c.err)
		}
	}
}

// TestForceReplacesALinkNotItsTarget: --force replaces a symbolic link at
// -o by the new file and leaves the file it pointed to alone.
func TestForceReplacesALinkNotItsTarget(t *testing.T) {
	in := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(in, []byte(popmonRun("800000000", "")), 0o644)
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	link := filepath.Join(dir, "out.csv")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runMain("report", "--format", "csv", "-o", link, in); code != ExitUsage || !strings.Contains(errs, "exists") {
		t.Errorf("link without --force: exit %d, %q", code, errs)
	}
	if code, _, errs := runMain("report", "--format", "csv", "--force", "-o", link, in); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	st, err := os.Lstat(link)
	if err != nil || st.Mode()&os.ModeSymlink != 0 {
		t.Errorf("out.csv is still a link (%v)", err)
	}
}

// TestImportOutput: import -o refuses an existing file before importing,
// and --force replaces it with the measurement.
func TestImportOutput(t *testing.T) {
	dir := t.TempDir()
	trace := copyTrace(t, dir, "epoch_1proc")
	out := filepath.Join(dir, "out.json")
	os.WriteFile(out, []byte("precious"), 0o644)
	// Refused before the import: a missing trace gives the -o error.
	code, _, errs := runMain("import", "-o", out, filepath.Join(dir, "missing.prv"))
	if code != ExitUsage || errs != "popmon import: "+out+" exists: choose another name or pass --force\n" {
		t.Errorf("exit %d, %q", code, errs)
	}
	if code, _, errs := runMain("import", "--force", trace); code != ExitUsage || !strings.Contains(errs, "--force needs -o FILE") {
		t.Errorf("--force without -o: exit %d, %q", code, errs)
	}
	if code, _, errs := runMain("import", "--force", "-o", out, trace); code != ExitOK {
		t.Fatalf("--force: exit %d: %s", code, errs)
	}
	m, err := measure.ReadFile(out)
	if err != nil || len(m.Processes) != 1 {
		t.Errorf("--force wrote no measurement: %v", err)
	}
	for _, n := range entries(t, dir) {
		if strings.HasPrefix(n, ".popmon") {
			t.Errorf("temporary file %s left", n)
		}
	}
}

// TestImportNumbering: repeated imports of one trace give app.json,
// app.1.json, app.2.json.
func TestImportNumbering(t *testing.T) {
	dir := t.TempDir()
	trace := copyTrace(t, dir, "epoch_1proc")
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(old) })
	for _, want := range []string{"epoch_1proc.json", "epoch_1proc.1.json", "epoch_1proc.2.json"} {
		if code, _, errs := runMain("import", trace); code != ExitOK || !strings.Contains(errs, "→ "+want+"\n") {
			t.Errorf("want %s: exit %d, %q", want, code, errs)
		}
	}
}
