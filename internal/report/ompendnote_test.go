package report

import (
	"testing"
)

// TestOpenMPEndNote: popmon run says why OpenMP was not measured in one line
// of its own only where the report it printed does not (text and json say
// it in their header), and only when the measurement says so.
func TestOpenMPEndNote(t *testing.T) {
	why := "GNU libgomp, which a library loaded at run time (as PyTorch and NumPy do), has no OMPT; popmon run --openmp=libomp measures it"
	want := "popmon: OpenMP metrics not measured: " + why
	for _, c := range []struct {
		why, format, want string
	}{
		{why, "none", want},
		{why, "csv", want},
		{why, "talp-json", want},
		{why, "omp-regions-csv", want},
		{why, "text", ""},
		{why, "json", ""},
		{"", "none", ""},
		{"", "csv", ""},
		{"bad\x1b[2Jreason", "none", "popmon: OpenMP metrics not measured: bad\\x1b[2Jreason"},
	} {
		if got := OpenMPEndNote(c.why, c.format); got != c.want {
			t.Errorf("%q %s: %q, want %q", c.why, c.format, got, c.want)
		}
	}
}
