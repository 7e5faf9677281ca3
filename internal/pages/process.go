package pages

import (
	"fmt"

	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
)

// processDistribution returns the distributions of useful and MPI time per
// process of region name in run r, when it is drawn as a distribution (a
// summary form or more than maxProcessBars processes).
func processDistribution(r *runs.Run, region string) (useful, mpi measure.Distribution, processes int, ok bool) {
	m := r.Measurement
	if m == nil || refusedIn(r, region) != "" {
		return useful, mpi, 0, false
	}
	g, found := m.Region(region)
	if !found || (g.Summary == nil && len(g.Processes) <= maxProcessBars) {
		return useful, mpi, 0, false
	}
	a := g.Aggregates(m.NodeOf())
	return a.Useful, a.MPI, a.Processes, a.Processes > 0
}

// processTimes returns the per-process useful and MPI times of region name
// in run r (none when they are drawn as a distribution). Only popmon measurements and imported traces have them: for a
// TALP file the note says so and the slice is empty.
func processTimes(r *runs.Run, region string) ([]ProcessTimes, string) {
	m := r.Measurement
	if m == nil {
		return nil, "TALP JSON files hold no per-process data (DLB sums over processes); measure with popmon run to see per-process times."
	}
	g, ok := m.Region(region)
	if !ok {
		return nil, fmt.Sprintf("The newest run has no region %q.", region)
	}
	if why := refusedIn(r, region); why != "" {
		return nil, fmt.Sprintf("The newest run has no POP metrics in region %q, so no per-process times are shown: %s.", region, why)
	}
	if g.Summary != nil || len(g.Processes) > maxProcessBars {
		return nil, ""
	}
	out := make([]ProcessTimes, 0, len(g.Processes))
	for _, a := range g.Processes {
		out = append(out, ProcessTimes{
			Rank: a.Rank, CPUs: a.CPUs,
			Useful: float64(a.UsefulNS) / 1e9, MPI: float64(a.MPINS) / 1e9,
		})
	}
	return out, ""
}

// refusedIn returns why run r has no metrics in region (its accounts do
// not add up: runs.Region.Refused); "" when it has them.
func refusedIn(r *runs.Run, region string) string {
	if g, ok := r.Region(region); ok {
		return g.Refused
	}
	return ""
}
