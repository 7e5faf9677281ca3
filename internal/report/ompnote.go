package report

import (
	"strings"

	"github.com/popmon/popmon/pop"
)

// Why OpenMP was not measured (the file's "openmp" object: GNU libgomp has
// no OMPT, --openmp=off, ...) holds for the whole run, so a report says it
// once, where the run's other notes are: the text header's "OpenMP:" line,
// the JSON report's top-level "openmp_not_measured". In the region trees, a
// metric that is not measured for that reason refers to it instead of
// repeating it (a PyTorch program, whose libgomp nobody asked about, got the
// sentence in every region, every model and under Warnings).
const (
	// ompReasonRefText is the reason of such a metric in the text report:
	// "not measured: see OpenMP above".
	ompReasonRefText = "see OpenMP above"
	// ompReasonRefJSON is its reason in the JSON report's "not_measured".
	ompReasonRefJSON = "OpenMP not measured: see openmp_not_measured"
)

// ompNotMeasured returns why the run's OpenMP runtime was not measured, ""
// when it was or there was none (or run is nil).
func ompNotMeasured(run *pop.Run) string {
	if run == nil {
		return ""
	}
	return run.OpenMPNotMeasured
}

// ompReferenced returns regs with the reason of every metric that is not
// measured because OpenMP was not (the reason ompNotMeasured gives)
// replaced by ref. regs is not modified: the regions whose metrics change
// are copies; without such a metric regs itself is returned.
func ompReferenced(regs []pop.RegionReport, run *pop.Run, ref string) []pop.RegionReport {
	why := ompNotMeasured(run)
	if why == "" {
		return regs
	}
	var out []pop.RegionReport
	for i := range regs {
		var metrics []pop.Metric
		for j, x := range regs[i].Metrics {
			if x.Measured() || x.NotMeasured != why {
				continue
			}
			if metrics == nil {
				metrics = append([]pop.Metric(nil), regs[i].Metrics...)
			}
			metrics[j].NotMeasured = ref
		}
		if metrics == nil {
			continue
		}
		if out == nil {
			out = append([]pop.RegionReport(nil), regs...)
		}
		out[i].Metrics = metrics
	}
	if out == nil {
		return regs
	}
	return out
}

// reportWarnings returns the measurement's warnings that the text report
// lists under Warnings: all but those that repeat why OpenMP was not
// measured, which its header says (libpopmon also recorded that as a
// warning in runs without MPI: "OpenMP metrics not measured: GNU libgomp
// has no OMPT: ...", and older libraries in every run).
func reportWarnings(run *pop.Run) []string {
	why := ompNotMeasured(run)
	if why == "" {
		return run.Warnings
	}
	var out []string
	for _, w := range run.Warnings {
		text := strings.TrimPrefix(w, "popmon: ")
		if strings.Contains(text, why) || strings.HasPrefix(text, "OpenMP metrics not measured") || strings.Contains(text, "has no OMPT") {
			continue
		}
		out = append(out, w)
	}
	return out
}

// appendOMPNotMeasuredJSON adds "openmp_not_measured": why the run's
// OpenMP runtime was not measured, when it was not.
func appendOMPNotMeasuredJSON(out object, run *pop.Run) object {
	if why := ompNotMeasured(run); why != "" {
		out = append(out, member{"openmp_not_measured", why})
	}
	return out
}
