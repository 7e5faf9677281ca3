// Package report renders a metric report (*pop.Report) in the formats of
// docs/report-formats.md: a text tree like TALP's summary, popmon's JSON
// report (POP-METRICS.md §9), long-format CSV, and DLB/TALP JSON for TALP
// tooling. Renderers never compute metrics; they only format what pop
// computed.
package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Format names.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatCSV      = "csv"
	FormatTALPJSON = "talp-json"
	// FormatTALPCSV and FormatTALPText are DLB's other layouts of the
	// same file (--talp-output-file=*.csv, other extensions).
	FormatTALPCSV  = "talp-csv"
	FormatTALPText = "talp-text"
	// FormatOMPRegionsCSV is the per-parallel-region overhead table alone.
	FormatOMPRegionsCSV = "omp-regions-csv"
)

// Formats returns the format names Render accepts, the default first.
func Formats() []string {
	return []string{FormatText, FormatJSON, FormatCSV, FormatTALPJSON, FormatTALPCSV, FormatTALPText, FormatOMPRegionsCSV}
}

// Options adjust what a renderer prints.
type Options struct {
	// Region, when not empty, restricts the output to that region, matched
	// exactly like pop.Report.Region (names are case-sensitive; the error
	// for a name that differs only in case suggests the right one).
	Region string
	// Window, when not empty, names the time window the report covers
	// ("run", "60s": popmon serve and query); the JSON format then writes
	// it and WindowNS, what the window actually spans, as "window" and
	// "window_s".
	Window   string
	WindowNS int64
}

// Render writes rep in the named format to w. What it says about the run
// besides the metrics comes from rep.Run (pop.Run, what pop took from the
// measurement): the text format's run header, MPI call table and
// warnings, talp-json's resources and timestamp. Render fails for an
// unknown format, an unknown region, a report without its Run where the
// format needs one, talp-json of a model other than talp, and write
// errors.
func Render(w io.Writer, format string, rep *pop.Report, opts Options) error {
	if rep == nil {
		return fmt.Errorf("render %s report: no report", format)
	}
	if isTALP(format) && rep.Model != pop.ModelTALP && rep.Model != "" {
		return fmt.Errorf("render %s report: %w", format, errTALPModel(rep.Model))
	}
	var err error
	switch format {
	case FormatText:
		err = Text(w, rep, opts)
	case FormatJSON:
		err = JSON(w, rep, opts)
	case FormatCSV:
		err = CSV(w, rep, opts)
	case FormatTALPJSON, FormatTALPCSV, FormatTALPText:
		err = TALPLayout(w, format, rep, opts)
	case FormatOMPRegionsCSV:
		if rep.Run == nil {
			return fmt.Errorf("render %s report: no measurement", format)
		}
		err = OMPRegionsCSV(w, rep.Run)
	default:
		return fmt.Errorf("unknown report format %q: use one of %s", format, strings.Join(Formats(), ", "))
	}
	if err != nil {
		return fmt.Errorf("render %s report: %w", format, err)
	}
	return nil
}

// regions returns the regions to render: all, or the one opts names.
func regions(rep *pop.Report, opts Options) ([]pop.RegionReport, error) {
	if opts.Region == "" {
		return rep.Regions, nil
	}
	r, ok := rep.Region(opts.Region)
	if !ok {
		if len(rep.Regions) == 0 {
			return nil, fmt.Errorf("no region %q: the measurement has no regions", opts.Region)
		}
		_, err := measure.MatchRegion(rep.RegionNames(), opts.Region, "in the measurement")
		return nil, err
	}
	return []pop.RegionReport{*r}, nil
}

// count formats an event count with an SI prefix: "950", "1.20 k",
// "506 G".
func count(v float64) string {
	units := []string{"", " k", " M", " G", " T", " P", " E"}
	i := 0
	for math.Abs(v) >= 999.5 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g%s", v, units[i])
}

// plural returns "1 node", "2 nodes"; many is the plural form ("" adds
// an "s").
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	if many == "" {
		many = one + "s"
	}
	return fmt.Sprintf("%d %s", n, many)
}
