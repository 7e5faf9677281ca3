package report

import (
	"errors"
	"fmt"
	"io"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TALPJSON writes the report (all regions, or the one opts names) in
// DLB/TALP's JSON layout: [talpjson.Write], which owns the format.
func TALPJSON(w io.Writer, rep *pop.Report, m *measure.Measurement, opts Options) error {
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
	return talpjson.Write(w, m, regs)
}
