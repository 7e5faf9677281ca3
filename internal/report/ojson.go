package report

import (
	"io"

	"github.com/popmon/popmon/internal/ojson"
)

// The report's JSON outputs are written with internal/ojson: objects keep
// their keys' order, floats read as floats, strings are safe to print.
type (
	object = ojson.Object
	member = ojson.Member
	float  = ojson.Float
)

// writeIndented writes v as JSON indented by two spaces, with a final
// newline ([ojson.WriteIndented]).
func writeIndented(w io.Writer, v any) error { return ojson.WriteIndented(w, v) }
