package report

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOpenMPEndNote: popmon run says why OpenMP was not measured in one line
// of its own only where the report it printed does not (text and json say
// it in their header), and only when the file says so.
func TestOpenMPEndNote(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gomp := write("gomp.json", `{"format": "popmon-measurement", "regions": [{"name": "Global", "processes": []}],
  "openmp": {"runtime": "GNU libgomp", "ompt": false, "reason": "GNU libgomp, which a library loaded at run time (as PyTorch and NumPy do), has no OMPT; popmon run --openmp=libomp measures it"},
  "warnings": []}`)
	measured := write("ompt.json", `{"format": "popmon-measurement", "openmp": {"runtime": "LLVM OMP", "ompt": true}}`)
	none := write("none.json", `{"format": "popmon-measurement"}`)
	want := "popmon: OpenMP metrics not measured: GNU libgomp, which a library loaded at run time (as PyTorch and NumPy do), has no OMPT; popmon run --openmp=libomp measures it"
	for _, c := range []struct {
		path, format, want string
	}{
		{gomp, "none", want},
		{gomp, "csv", want},
		{gomp, "talp-json", want},
		{gomp, "omp-regions-csv", want},
		{gomp, "text", ""},
		{gomp, "json", ""},
		{measured, "none", ""},
		{none, "none", ""},
		{filepath.Join(dir, "missing.json"), "none", ""},
		{write("bad.json", "{"), "none", ""},
	} {
		if got := OpenMPEndNote(c.path, c.format); got != c.want {
			t.Errorf("%s %s: %q, want %q", filepath.Base(c.path), c.format, got, c.want)
		}
	}
}
