package report

import (
	"encoding/json"
	"os"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/measure"
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

// OpenMPEndNote returns the line popmon run prints after the report of the
// measurement file path, printed in format ("none": no report): "popmon:
// OpenMP metrics not measured: <reason>" when the file says OpenMP was not
// measured and the report does not say so; "" otherwise, and when the file
// cannot be read (the report, or its absence, says what is wrong).
func OpenMPEndNote(path, format string) string {
	if openmpNoteFormats[format] {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	// Only the "openmp" object: the decoder skips the rest unparsed into
	// values.
	var doc struct {
		OpenMP *measure.OpenMP `json:"openmp"`
	}
	if err := json.NewDecoder(f).Decode(&doc); err != nil {
		return ""
	}
	why := doc.OpenMP.NotMeasured()
	if why == "" {
		return ""
	}
	return "popmon: OpenMP metrics not measured: " + safetext.Text(why)
}
