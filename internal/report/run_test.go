package report

import (
	"github.com/popmon/popmon/internal/symbolize"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// withRun returns a copy of rep with what pop says about the run of m
// (pop.NewRun; none for a nil m), after looking up m's OpenMP constructs
// as the commands do once they have read a measurement: the tests render
// a report as the measurement m would have it.
func withRun(rep *pop.Report, m *measure.Measurement) *pop.Report {
	if rep == nil {
		return nil
	}
	symbolize.OMPRegions(m)
	c := *rep
	c.Run = pop.NewRun(m)
	return &c
}

// withRuns is withRun of every report.
func withRuns(reps []*pop.Report, m *measure.Measurement) []*pop.Report {
	if reps == nil {
		return nil
	}
	out := make([]*pop.Report, len(reps))
	for i, rep := range reps {
		out[i] = withRun(rep, m)
	}
	return out
}

// runOf is what pop says about the run of m, its OpenMP constructs looked
// up.
func runOf(m *measure.Measurement) *pop.Run {
	symbolize.OMPRegions(m)
	return pop.NewRun(m)
}
