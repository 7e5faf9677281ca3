package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPagesReadsTraces: pages -i takes the Paraver traces of a folder as
// runs, as scaling does (it used to look at *.json files only), next to
// popmon measurements; the trace's run is listed with its file name.
func TestPagesReadsTraces(t *testing.T) {
	in, site := t.TempDir(), filepath.Join(t.TempDir(), "site")
	exp := filepath.Join(in, "mixed")
	if err := os.MkdirAll(exp, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"trace.prv": tinyTrace, "run.json": popmonRun("800000000", "")} {
		if err := os.WriteFile(filepath.Join(exp, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runMain("pages", "-i", in, "-o", site)
	if code != ExitOK || !strings.Contains(out, "1 experiment(s), 2 run(s)") {
		t.Fatalf("pages: exit %d\n%s%s", code, out, errs)
	}
	page, err := os.ReadFile(filepath.Join(site, "mixed", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "<code>mixed/trace.prv</code>") {
		t.Error("the trace's run is not listed")
	}
	// Scaling reads the same folder the same way.
	if code, out, errs := runMain("scaling", "--format", "csv", exp); code != ExitOK || !strings.Contains(out, "trace.prv") {
		t.Errorf("scaling: exit %d\n%s%s", code, out, errs)
	}
}
