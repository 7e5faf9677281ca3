package pop_test

import (
	"math"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestSerTransfer checks serialisation and transfer efficiency of model
// pop-additive from an ideal-network replay, for both definitions, and
// that only Global gets them.
func TestSerTransfer(t *testing.T) {
	// Two processes of 10 s: useful 8 and 6 s (U_max = 8, CommE = 0.8).
	// The replay: T_ideal = 9 s, U_ideal,max = 8.5 s.
	m := build(true, 0, proc{cpus: 1, e: 10, u: 8, m: 2}, proc{cpus: 1, e: 10, u: 6, m: 4})
	m.Regions[0].Name = measure.GlobalRegion
	other := m.Regions[0]
	other.Name = "solver"
	m.Regions = append(m.Regions, other)
	m.IdealNetwork = &measure.IdealNetwork{RuntimeNS: ns(9), UsefulMaxNS: ns(8.5), EagerLimit: 32768, Method: "test"}
	for _, tc := range []struct {
		def        pop.SerTransfer
		ser, trans float64
	}{
		{"", 8.5 / 9, 0.8 / (8.5 / 9)},
		{pop.SerTransferBSC, 8.5 / 9, 0.8 / (8.5 / 9)},
		{pop.SerTransferPOP, 8.0 / 9, 9.0 / 10},
	} {
		rep, err := pop.ComputeWith(m, pop.ModelPOPAdditive, pop.Options{SerTransfer: tc.def})
		if err != nil {
			t.Fatal(err)
		}
		want := tc.def
		if want == "" {
			want = pop.SerTransferBSC
		}
		if rep.SerTransfer != want {
			t.Errorf("%q: report definition %q", tc.def, rep.SerTransfer)
		}
		g, _ := rep.Region(measure.GlobalRegion)
		ser, ok1 := g.Value(pop.IDSerialisationEfficiency)
		trans, ok2 := g.Value(pop.IDTransferEfficiency)
		if !ok1 || !ok2 || math.Abs(ser-tc.ser) > tol || math.Abs(trans-tc.trans) > tol {
			t.Errorf("%q: SerE %v (%v) TransE %v (%v), want %v %v", tc.def, ser, ok1, trans, ok2, tc.ser, tc.trans)
		}
		s, _ := rep.Region("solver")
		if x, ok := s.Metric(pop.IDSerialisationEfficiency); !ok || x.NotMeasured != pop.ReasonReplayGlobal {
			t.Errorf("%q: region solver: %+v", tc.def, x)
		}
	}
	// The other models are unchanged, and say no definition.
	rep, err := pop.Compute(m, pop.ModelPOPHybrid)
	if err != nil || rep.SerTransfer != "" {
		t.Errorf("pop-hybrid: %v %q", err, rep.SerTransfer)
	}
}

func TestParseSerTransfer(t *testing.T) {
	for in, want := range map[string]pop.SerTransfer{"": pop.SerTransferBSC, "bsc": pop.SerTransferBSC, "BSC-basicanalysis": pop.SerTransferBSC, "pop": pop.SerTransferPOP} {
		if got, err := pop.ParseSerTransfer(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	if _, err := pop.ParseSerTransfer("dimemas"); err == nil {
		t.Error("dimemas: no error")
	}
}
