package pages

import (
	"fmt"

	"github.com/popmon/popmon/internal/runs"
)

// processTimes returns the per-process useful and MPI times of region name
// in run r. Only popmon measurements and imported traces have them: for a
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
	out := make([]ProcessTimes, 0, len(g.Processes))
	for _, a := range g.Processes {
		out = append(out, ProcessTimes{
			Rank: a.Rank, CPUs: a.CPUs,
			Useful: float64(a.UsefulNS) / 1e9, MPI: float64(a.MPINS) / 1e9,
		})
	}
	return out, ""
}
