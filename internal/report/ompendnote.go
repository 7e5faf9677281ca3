package report

import (
	"github.com/popmon/popmon/internal/safetext"
)

// Why OpenMP was not measured (GNU libgomp has no OMPT, --openmp=off, ...)
// is said once per measurement at the end of `popmon run`: the library
// leaves it to popmon run when it runs under it (POPMON_SESSION), and the
// text and JSON reports say it once, in their header
// (docs/openmp-regions.md, "When OpenMP is not measured"). Where the report
// popmon run prints does not (--format none, csv, talp-json,
// omp-regions-csv), popmon run says it in one line of its own
// (OpenMPEndNote).

// openmpNoteFormats are the report formats that say why OpenMP was not
// measured.
var openmpNoteFormats = map[string]bool{FormatText: true, FormatJSON: true}

// OpenMPEndNote returns the line popmon run prints after the report of a
// measurement, printed in format ("none": no report), given why the
// measurement says OpenMP was not measured (pop.Run.OpenMPNotMeasured,
// measure.OpenMP.NotMeasured; "" when it was): "popmon: OpenMP metrics
// not measured: <reason>" when there is a reason and the report does not
// say it; "" otherwise.
func OpenMPEndNote(why, format string) string {
	if openmpNoteFormats[format] || why == "" {
		return ""
	}
	return "popmon: OpenMP metrics not measured: " + safetext.Text(why)
}
