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

// A region whose accounts break the invariant of POP-METRICS.md §1 by more
// than its tolerance gets no metric in any model, with the sentence naming
// the rank, its accounts, CPUs × elapsed, how far off and the tolerance;
// the other regions keep theirs. At a9d5b23 every region had its metrics
// (and only a warning at the end of the text report said otherwise).
func TestComputeRefusesRegionsWhoseAccountsDoNotAddUp(t *testing.T) {
	const s = int64(1_000_000_000)
	m := &measure.Measurement{
		Format: measure.Format, Version: measure.Version,
		MPI:       &measure.MPI{Library: "x", Standard: "3.1", ThreadLevel: "single"},
		Resources: measure.Resources{Processes: 4, Nodes: 1, CPUs: 7},
		Processes: []measure.Process{{Rank: 0, CPUs: 1}, {Rank: 1, CPUs: 1}, {Rank: 2, CPUs: 4}, {Rank: 3, CPUs: 1}},
	}
	// "solve": rank 2 holds 4 CPUs for 1 s but accounts 8 s (the library
	// counted its CPUs twice). "io": every process adds up.
	solve := measure.Region{Name: "solve"}
	io := measure.Region{Name: "io"}
	for r := 0; r < 4; r++ {
		cpus := m.Processes[r].CPUs
		a := measure.ProcessAccounts{Rank: r, CPUs: cpus, Visits: 1, ElapsedNS: s, UsefulNS: int64(cpus) * s * 3 / 4, MPINS: int64(cpus) * s / 4}
		io.Processes = append(io.Processes, a)
		if r == 2 {
			a.UsefulNS, a.MPINS = 6*s, 2*s
		}
		solve.Processes = append(solve.Processes, a)
	}
	m.Regions = []measure.Region{{Name: measure.GlobalRegion, Processes: io.Processes}, solve, io}
	want := "the accounts of rank 2 do not add up: 8.00 s accounted for 4 CPUs × 1.00 s elapsed (off by 100 %, tolerance 1 %)"
	for _, model := range pop.Models() {
		rep, err := pop.Compute(m, model)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Refused != "" {
			t.Errorf("%s: the whole report is refused: %q", model, rep.Refused)
		}
		g, _ := rep.Region("solve")
		if g.Refused != want || len(g.Metrics) != 0 {
			t.Errorf("%s solve: Refused %q, %d metrics; want %q and none", model, g.Refused, len(g.Metrics), want)
		}
		for _, name := range []string{measure.GlobalRegion, "io"} {
			g, _ := rep.Region(name)
			if g.Refused != "" || len(g.Metrics) == 0 {
				t.Errorf("%s %s: Refused %q, %d metrics", model, name, g.Refused, len(g.Metrics))
			}
		}
	}

	// Several processes off: the first named, the others counted; a
	// process short of its CPUs' time is off as well.
	solve.Processes[0].UsefulNS = s / 2
	solve.Processes[3].MPINS = 0
	// Accounts changed in place are checked again, as a reader records
	// them (measure.Measurement.Violations).
	m.AccountViolations = measure.CheckAccounts(m)
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := rep.Region("solve")
	want = "the accounts of rank 0 do not add up: 750.00 ms accounted for 1 CPU × 1.00 s elapsed (off by 25 %, tolerance 1 %); nor do those of 2 more processes (ranks 2, 3)"
	if g.Refused != want {
		t.Errorf("solve: Refused %q, want %q", g.Refused, want)
	}

	// Within the tolerance (0.5 % off): metrics.
	m.Regions[1] = io
	m.Regions[1].Name = "solve"
	m.Regions[1].Processes = append([]measure.ProcessAccounts(nil), io.Processes...)
	m.Regions[1].Processes[1].UsefulNS += s / 200
	m.AccountViolations = measure.CheckAccounts(m)
	rep, err = pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := rep.Region("solve"); g.Refused != "" || len(g.Metrics) == 0 {
		t.Errorf("0.5 %% off: Refused %q, %d metrics", g.Refused, len(g.Metrics))
	}
}

// A DLB/TALP file's sums above T × C (DLB counting CPU time twice) do not
// refuse its regions: popmon reproduces DLB's efficiencies and the notes
// say why (docs/import.md).
func TestComputeKeepsTALPRegionsOverT(t *testing.T) {
	const s = int64(1_000_000_000)
	m := &measure.Measurement{
		Format: measure.Format, Version: measure.Version,
		Source:    &measure.Source{Kind: measure.SourceTALP},
		Resources: measure.Resources{Processes: 1, Nodes: 1, CPUs: 2},
		Processes: []measure.Process{{Rank: 0, CPUs: 2}},
		Regions: []measure.Region{{Name: measure.GlobalRegion, Processes: []measure.ProcessAccounts{
			{Rank: 0, CPUs: 2, Visits: 1, ElapsedNS: s, UsefulNS: s, MPINS: s / 2, OMPSerializationNS: s},
		}}},
	}
	if len(measure.CheckAccounts(m)) != 1 {
		t.Fatalf("the fixture must break the invariant: %v", measure.CheckAccounts(m))
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	if g := rep.Regions[0]; g.Refused != "" || len(g.Metrics) == 0 {
		t.Errorf("Refused %q, %d metrics", g.Refused, len(g.Metrics))
	}
}
