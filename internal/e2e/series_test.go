package e2e

import (
	"fmt"
	"math"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestTimeSeries: a run balanced for 3 s, then imbalanced for about 3 s
// (examples/two_phase.c). popmon run samples it: the intervals of the
// first phase have load balance 1, those of the second the design's, the
// whole run's lies between, and each rank's intervals add up to its
// totals.
func TestTimeSeries(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			np := partialRanks(impl)
			// An iteration of phase 2 lasts np·K = 500 ms (np 4) or
			// 250 ms (np 2): a whole number of them fills every 1-s
			// interval, whatever the interval's phase, so each full
			// interval has the design's load balance.
			k := 500 / np
			const n1 = 30
			n2 := (3000 + np*k - 1) / (np * k)
			r := measureRun(t, impl, np, "two_phase", fmt.Sprint(k), fmt.Sprint(n1), fmt.Sprint(n2))
			s := r.m.Series
			if s == nil || s.IntervalNS != 1e9 || len(s.Regions) == 0 || s.Regions[0].Name != measure.GlobalRegion {
				t.Fatalf("series %+v", s)
			}
			ivs, err := pop.OverTime(r.m, pop.ModelTALP, measure.GlobalRegion)
			if err != nil {
				t.Fatal(err)
			}
			design := float64(np+1) / float64(2*np)
			phase1 := float64(n1*k) / 1e3
			var first, second int
			for _, iv := range ivs {
				lb := iv.Values["mpi_load_balance"]
				switch {
				case iv.StartS+iv.ElapsedS <= phase1-0.25:
					first++
					if lb < 0.95 {
						t.Errorf("interval at %.2f s (phase 1): LB %.3f, want ≥ 0.95", iv.StartS, lb)
					}
				case iv.StartS >= phase1+0.25 && iv.ElapsedS >= 0.95:
					second++
					if math.Abs(lb-design) > 0.05 {
						t.Errorf("interval at %.2f s (phase 2): LB %.3f, want %.3f ± 0.05", iv.StartS, lb, design)
					}
				}
			}
			if first < 2 || second < 1 {
				t.Errorf("%d intervals inside phase 1, %d inside phase 2: %+v", first, second, ivs)
			}
			g, _ := r.m.Global()
			for _, pa := range g.Processes {
				var useful, mpi, n int64
				for _, iv := range s.Regions[0].Intervals {
					for _, p := range iv.Processes {
						if p.Rank == pa.Rank {
							useful += p.UsefulNS
							mpi += p.MPINS
							n++
						}
					}
				}
				if d := useful - pa.UsefulNS; d < -n || d > n {
					t.Errorf("rank %d: intervals' useful time %d ns, Global %d ns", pa.Rank, useful, pa.UsefulNS)
				}
				if d := mpi - pa.MPINS; d < -n || d > n {
					t.Errorf("rank %d: intervals' MPI time %d ns, Global %d ns", pa.Rank, mpi, pa.MPINS)
				}
			}
			whole, _ := r.region(t, "Global").Value("mpi_load_balance")
			if whole <= design+0.02 || whole >= 0.98 {
				t.Errorf("whole-run LB %.3f, want between %.3f and 1", whole, design)
			}
		})
	}
}
