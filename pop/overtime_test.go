package pop_test

import (
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestOverTime: each interval is computed as a run of its own; a missing
// series or region is an error.
func TestOverTime(t *testing.T) {
	acc := func(rank int, useful, mpi int64) measure.ProcessAccounts {
		return measure.ProcessAccounts{Rank: rank, CPUs: 1, Visits: 1, ElapsedNS: useful + mpi, UsefulNS: useful, MPINS: mpi}
	}
	m := build(true, 0, proc{e: 2, u: 2, cpus: 1}, proc{e: 2, u: 1, m: 1, cpus: 1})
	m.Regions[0].Name = "Global"
	m.Series = &measure.Series{IntervalNS: 1e9, Regions: []measure.SeriesRegion{{Name: "Global", Intervals: []measure.SeriesInterval{
		{StartNS: 0, Processes: []measure.ProcessAccounts{acc(0, 1e9, 0), acc(1, 1e9, 0)}},
		{StartNS: 1e9, Processes: []measure.ProcessAccounts{acc(0, 1e9, 0), acc(1, 0, 1e9)}},
	}}}}
	ivs, err := pop.OverTime(m, pop.ModelTALP, "Global")
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 2 {
		t.Fatalf("%d intervals: %+v", len(ivs), ivs)
	}
	for i, want := range []struct{ start, pe float64 }{{0, 1}, {1, 0.5}} {
		iv := ivs[i]
		if iv.StartS != want.start || iv.ElapsedS != 1 || iv.Values[pop.IDParallelEfficiency] != want.pe {
			t.Errorf("interval %d = %+v, want start %g, elapsed 1, PE %g", i, iv, want.start, want.pe)
		}
	}
	if _, err := pop.OverTime(m, pop.ModelTALP, "global"); err == nil || err.Error() != `region "global" has no time series` {
		t.Errorf("other case: %v", err)
	}
	m.Series = nil
	if _, err := pop.OverTime(m, pop.ModelTALP, "Global"); err == nil {
		t.Error("no series: no error")
	}
}
