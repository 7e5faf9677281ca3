package pop

import (
	"fmt"

	"github.com/popmon/popmon/measure"
)

// Interval is one interval of a time series: its start and length and the
// efficiencies of a region in it.
type Interval struct {
	StartS, ElapsedS float64
	// Values are the region's metrics in the interval, by metric id;
	// absent when not measured.
	Values map[string]float64
}

// OverTime computes region's metrics in each interval of m's time series
// under model: each interval is reported as if it were a run of its own
// (the accounts of every process in it), without the ideal-network replay
// (which is of the whole run). It fails when m has no time series or the
// series has no region of that name (exactly: [measure.NameIndex]).
func OverTime(m *measure.Measurement, model Model, region string) ([]Interval, error) {
	if m.Series == nil {
		return nil, fmt.Errorf("the measurement has no time series: measure with popmon run (which samples the processes every %s)", "second")
	}
	var sr *measure.SeriesRegion
	for i := range m.Series.Regions {
		if m.Series.Regions[i].Name == region {
			sr = &m.Series.Regions[i]
		}
	}
	if sr == nil {
		return nil, fmt.Errorf("region %q has no time series", region)
	}
	var out []Interval
	for _, iv := range sr.Intervals {
		c := *m
		c.Series, c.Partial, c.Incomplete = nil, nil, nil
		c.IdealNetwork = nil // the replay is of the whole run, not of an interval
		c.Regions = []measure.Region{{Name: region, Processes: iv.Processes}}
		rep, err := Compute(&c, model)
		if err != nil {
			return nil, fmt.Errorf("interval at %.2f s: %w", float64(iv.StartNS)/1e9, err)
		}
		rr, ok := rep.Region(region)
		if !ok {
			continue
		}
		var el int64
		for _, p := range iv.Processes {
			el = max(el, p.ElapsedNS)
		}
		in := Interval{StartS: float64(iv.StartNS) / 1e9, ElapsedS: float64(el) / 1e9, Values: map[string]float64{}}
		for _, mt := range rr.Metrics {
			if v, ok := rr.Value(mt.ID); ok {
				in.Values[mt.ID] = v
			}
		}
		out = append(out, in)
	}
	return out, nil
}
