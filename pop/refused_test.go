package pop_test

import (
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// A measurement that lacks processes of the job, or MPI calls, gives no
// metric in any model: a number a user cannot trust is worse than none.
func TestComputeRefusesUntrustworthy(t *testing.T) {
	base := func() *measure.Measurement {
		return &measure.Measurement{
			Format: measure.Format, Version: 2,
			MPI:       &measure.MPI{Library: "x", Standard: "3.1", ThreadLevel: "single"},
			Resources: measure.Resources{Processes: 2, Nodes: 1, CPUs: 2},
			Processes: []measure.Process{{Rank: 0, CPUs: 1}, {Rank: 2, CPUs: 1}},
			Regions: []measure.Region{{Name: "Global", Processes: []measure.ProcessAccounts{
				{Rank: 0, CPUs: 1, Visits: 1, ElapsedNS: 100, UsefulNS: 50, MPINS: 50},
				{Rank: 2, CPUs: 1, Visits: 1, ElapsedNS: 100, UsefulNS: 100},
			}}},
		}
	}
	partial := base()
	partial.Incomplete = &measure.Incomplete{Processes: 4, Measured: 2, MissingRanks: "1,3", Reason: "the library did not reach ranks 1,3"}
	bypass := base()
	bypass.Version = 1
	bypass.Interception = &measure.Interception{Processes: 2, Reason: "./app defines MPI_Send itself"}
	for _, tc := range []struct {
		name string
		m    *measure.Measurement
		want string
	}{
		{"incomplete", partial, "popmon measured 2 of the job's 4 processes: the library did not reach ranks 1,3"},
		{"interception", bypass, "the program's MPI calls did not all reach popmon: ./app defines MPI_Send itself"},
	} {
		for _, model := range pop.Models() {
			rep, err := pop.Compute(tc.m, model)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(rep.Refused, tc.want) {
				t.Errorf("%s %s: Refused = %q, want %q…", tc.name, model, rep.Refused, tc.want)
			}
			g, _ := rep.Region("Global")
			if len(g.Metrics) != 0 {
				t.Errorf("%s %s: metrics %+v", tc.name, model, g.Metrics)
			}
			if _, ok := g.Value(pop.IDParallelEfficiency); ok {
				t.Errorf("%s %s: parallel efficiency has a value", tc.name, model)
			}
		}
	}
	// The same accounts, complete: metrics.
	complete := base()
	complete.Version = 1
	rep, err := pop.Compute(complete, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := rep.Regions[0].Value(pop.IDMPILoadBalance); rep.Refused != "" || !ok || v != 0.75 {
		t.Errorf("complete: refused %q, LB %v %v", rep.Refused, v, ok)
	}
}
