package pop_test

import (
	"math"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// popmon's own cost (instrumentation_ns) is left out of the metrics: each
// process is seen as if it had run for elapsed − instrumentation / CPUs,
// while the region's elapsed time stays the wall time and the report
// carries the total.
func TestOwnCostLeftOut(t *testing.T) {
	// Rank 0: 1 s, 0.6 useful, 0.3 MPI, 0.1 popmon; rank 1: 1 s, 0.4 useful,
	// 0.55 MPI, 0.05 popmon. Without popmon: elapsed 0.9 and 0.95 s.
	m := build(true, 0, proc{cpus: 1, e: 1, u: 0.6, m: 0.3}, proc{cpus: 1, e: 1, u: 0.4, m: 0.55})
	ps := m.Regions[0].Processes
	ps[0].InstrumentationNS, ps[1].InstrumentationNS = 1e8, 5e7
	for _, c := range []struct {
		model pop.Model
		id    string
		want  float64
	}{
		// TALP's model on T = 0.95 s: non-MPI time T − M_i is 0.65 and
		// 0.4 s; PE = Σ U / Σ E_i. With popmon's cost inside T (1 s) they
		// would be 0.7 / 1, 0.55 / 0.7 and 1 / 2.
		{pop.ModelTALP, pop.IDMPICommunicationEfficiency, 0.65 / 0.95},
		{pop.ModelTALP, pop.IDMPILoadBalance, 0.525 / 0.65},
		{pop.ModelTALP, pop.IDParallelEfficiency, 1.0 / 1.85},
	} {
		rep, err := pop.Compute(m, c.model)
		if err != nil {
			t.Fatal(err)
		}
		g := &rep.Regions[0]
		got, ok := g.Value(c.id)
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s %s: %v (%v), want %v", c.model, c.id, got, ok, c.want)
		}
		if g.ElapsedNS != 1e9 || g.Totals.InstrumentationNS != 1.5e8 || g.Totals.MPINS != 8.5e8 {
			t.Errorf("%s: elapsed %d, instrumentation %d, MPI %d; want the wall time 1e9, 1.5e8, 8.5e8",
				c.model, g.ElapsedNS, g.Totals.InstrumentationNS, g.Totals.MPINS)
		}
	}
	if m.Regions[0].Processes[0].ElapsedNS != 1e9 || m.Regions[0].Name != measure.GlobalRegion && m.Regions[0].Name != "R" {
		t.Error("Compute changed the measurement")
	}
}
