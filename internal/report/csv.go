package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/pop"
)

// CSV writes one row per (region, metric) with the header
// "region,metric,value". Each region starts with its elapsed_s row, then
// its metrics in tree order, at full precision (absent and not-measured
// metrics have no row); a refused region (pop.RegionReport.Refused) has,
// after elapsed_s, one row with the metric "refused" and the sentence why
// as its value, and no metric rows. Fields are quoted per RFC 4180 where
// needed.
// Region names are text cells made safe with safetext.CSVCell (escaped
// control characters; a leading = + - @ gets a ' so that a spreadsheet
// does not run it as a formula); values are numbers, written as they are.
func CSV(w io.Writer, rep *pop.Report, opts Options) error {
	if rep.Refused != "" {
		return fmt.Errorf("no CSV of metrics for this measurement: %s", rep.Refused)
	}
	regs, err := regions(rep, opts)
	if err != nil {
		return err
	}
	c := csv.NewWriter(w)
	if err := c.Write([]string{"region", "metric", "value"}); err != nil {
		return err
	}
	if err := csvRows(c, nil, regs); err != nil {
		return err
	}
	c.Flush()
	return c.Error()
}

// csvRows writes the rows of regs, each starting with the fields of lead.
func csvRows(c *csv.Writer, lead []string, regs []pop.RegionReport) error {
	row := func(fields ...string) error {
		return c.Write(append(append([]string(nil), lead...), fields...))
	}
	for i := range regs {
		r := &regs[i]
		name := safetext.CSVCell(r.Name)
		if err := row(name, "elapsed_s", num(float64(r.ElapsedNS)/1e9)); err != nil {
			return err
		}
		if r.Refused != "" {
			// No metric rows: one row saying why, its value a sentence.
			if err := row(name, "refused", safetext.CSVCell(r.Refused)); err != nil {
				return err
			}
			continue
		}
		for _, x := range r.Metrics {
			if !x.Measured() {
				continue
			}
			if err := row(name, safetext.CSVCell(x.ID), num(x.Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

// num formats v at full precision ("0.625", "1", "5.06e+11").
func num(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
