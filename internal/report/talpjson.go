package report

import (
	"errors"
	"fmt"
	"io"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/pop"
)

// TALPJSON writes the report (all regions, or the one opts names) in
// DLB/TALP's JSON layout: [talpjson.Write], which owns the format.
func TALPJSON(w io.Writer, rep *pop.Report, opts Options) error {
	return TALPLayout(w, FormatTALPJSON, rep, opts)
}

// isTALP reports whether format is one of DLB/TALP's layouts.
func isTALP(format string) bool {
	return format == FormatTALPJSON || format == FormatTALPCSV || format == FormatTALPText
}

// TALPLayout writes the report in one of DLB/TALP's layouts (talp-json,
// talp-csv with its header, talp-text): talpjson owns them all.
func TALPLayout(w io.Writer, format string, rep *pop.Report, opts Options) error {
	m := rep.Run
	if m == nil {
		return errors.New("talp-json needs the measurement, not only the report")
	}
	if rep.Refused != "" {
		// TALP's readers compute efficiencies from the times: they would
		// trust what popmon does not.
		return fmt.Errorf("no talp-json for this measurement: %s", rep.Refused)
	}
	regs, err := regions(rep, opts)
	if err != nil {
		return err
	}
	switch format {
	case FormatTALPCSV:
		return talpjson.WriteCSV(w, m, regs, true)
	case FormatTALPText:
		return talpjson.WriteText(w, m, regs, "")
	}
	return talpjson.Write(w, m, regs)
}
