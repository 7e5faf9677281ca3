package runs

import (
	"strings"
	"testing"

	"github.com/popmon/popmon/pop"
)

// A region whose accounts do not add up (internal/cli/testdata/
// broken_accounts.json: Global's 4 ranks hold 2 CPUs each but account for
// one) loads refused: no metrics, no times to scale from, the sentence;
// the other regions load as usual. Scaling input carries the refusal, and
// the model gets no point from it. At a9d5b23 Global had metrics (load
// balance 0.8125 instead of 0.625).
func TestLoadRefusedRegion(t *testing.T) {
	const broken = "../cli/testdata/broken_accounts.json"
	r, err := Load(broken, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := r.Region("Global")
	if !strings.HasPrefix(g.Refused, "the accounts of rank 0 do not add up: 4.00 s accounted for 2 CPUs × 4.00 s elapsed") ||
		len(g.Metrics) != 0 || len(g.Tree) != 0 || g.UsefulNS != 0 || g.MPINS != 0 || g.ElapsedNS != 4e9 || g.CPUs != 8 {
		t.Errorf("Global: %+v", g)
	}
	if c, _ := r.Region("compute"); c.Refused != "" || c.Metrics[pop.IDMPILoadBalance] != 0.625 {
		t.Errorf("compute: %+v", c)
	}
	good, err := Load("../../measure/testdata/mpi_imbalance.json", pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	rs := []*Run{good, r}
	in, err := ScalingInput(rs, pop.ModelTALP, pop.ScalingAuto, -1, "Global")
	if err != nil {
		t.Fatal(err)
	}
	if x := in.Regions[0].Runs; len(x) != 2 || x[0].Refused != "" || x[1].Refused != g.Refused {
		t.Fatalf("scaling runs %+v", x)
	}
	s, err := pop.Scale(in)
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := ModelPoints(rs, &s.Regions[0])
	if len(pts) != 1 || pts[0].Source != good.Source {
		t.Errorf("model points %+v: want the run that adds up only", pts)
	}
}
