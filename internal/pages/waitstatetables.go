package pages

import (
	"strings"

	"github.com/popmon/popmon/internal/patterns"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
)

// waitStates returns the newest run's tables beyond its metrics: for a traced run (a
// Paraver trace, or a measurement of popmon run --trace whose trace
// folder is still next to it) the wait-state table and the critical path
// of popmon report --patterns, shown with the Global region. Runs without
// a trace get no table; a trace that cannot be read or analysed gets a
// table whose note says why. read says how the trace is read
// (runs.LoadTrace).
func waitStates(read runs.ReadOptions) func(r *runs.Run, region string) []Table {
	return func(r *runs.Run, region string) []Table {
		if region != measure.GlobalRegion || r == nil {
			return nil
		}
		traced := r.Kind == runs.KindParaver || (r.Measurement != nil && r.Measurement.Trace != nil)
		if !traced {
			return nil
		}
		title := "Wait states (traced run " + r.Label + ")"
		tr, err := runs.LoadTrace(r.Source, read)
		if err != nil {
			return []Table{{Title: title, Note: "Not analysed: " + strings.TrimSpace(err.Error()) + "."}}
		}
		res, err := patterns.Analyze(tr, patterns.Options{})
		if err != nil {
			return []Table{{Title: title, Note: "Not analysed: " + err.Error() + "."}}
		}
		return WaitStateTables(title, res)
	}
}
