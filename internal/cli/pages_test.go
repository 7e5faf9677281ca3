package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/patterns"
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

// TestPagesWaitStates: the page of a traced run shows the wait states
// and the critical path popmon report --patterns computes, and a run
// without a trace gets no such table.
func TestPagesWaitStates(t *testing.T) {
	src := filepath.Join("..", "paraver", "testdata", "epoch_2proc.prv.gz")
	in, site := t.TempDir(), filepath.Join(t.TempDir(), "site")
	exp := filepath.Join(in, "epoch")
	if err := os.MkdirAll(exp, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"epoch_2proc.prv.gz", "epoch_2proc.pcf", "epoch_2proc.row"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(src), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(exp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errs := runMain("pages", "-i", in, "-o", site); code != ExitOK {
		t.Fatalf("pages: exit %d\n%s%s", code, out, errs)
	}
	page, err := os.ReadFile(filepath.Join(site, "epoch", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := paraver.ReadTrace(src, paraver.Options{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	res, err := patterns.Analyze(tr, patterns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ls := res.Pattern(patterns.LateSender)
	if ls == nil || ls.NS <= 0 {
		t.Fatalf("no late sender time in the EPOCH trace: %+v", ls)
	}
	for _, want := range []string{
		"Wait states (traced run 2xMPI 1xOpenMP)",
		fmt.Sprintf("<td>%s</td><td class=\"num\">%.3f</td>", ls.Name, float64(ls.NS)/1e9),
		fmt.Sprintf("The path is %.3f s long", float64(res.CriticalPath.NS)/1e9),
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// An untraced run: no wait-state table.
	in2, site2 := t.TempDir(), filepath.Join(t.TempDir(), "site")
	if err := os.WriteFile(filepath.Join(in2, "run.json"), []byte(popmonRun("800000000", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runMain("pages", "-i", in2, "-o", site2); code != ExitOK {
		t.Fatalf("pages: exit %d\n%s%s", code, out, errs)
	}
	page2, err := os.ReadFile(filepath.Join(site2, filepath.Base(in2), "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page2), "Wait states") {
		t.Error("an untraced run shows a wait-state table")
	}
}
