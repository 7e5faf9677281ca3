package pages

import (
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// A run whose region is refused (its accounts do not add up) shows
// "refused" in every cell of its column, is not marked the reference, and
// its sentence is under the table; with every run refused there is no
// reference. At a9d5b23 the column had the numbers.
func TestTableOfRefusedRun(t *testing.T) {
	runs := []pop.ScalingRun{
		{ID: 0, Label: "4xMPI 1xOpenMP", Source: "/in/a.json", CPUs: 4, ElapsedNS: 4e9, UsefulNS: 10e9,
			Metrics: map[string]float64{pop.IDParallelEfficiency: 0.625}},
		{ID: 1, Label: "4xMPI 2xOpenMP", Source: "/in/b.json", CPUs: 8, ElapsedNS: 4e9,
			Refused: "the accounts of rank 0 do not add up"},
	}
	tree := []pop.ScalingNode{{ID: pop.IDParallelEfficiency, Name: "Parallel efficiency"}}
	sc, err := pop.Scale(pop.ScalingInput{Model: pop.ModelTALP, Reference: 1,
		Regions: []pop.ScalingRegionInput{{Name: "Global", Runs: runs, Tree: tree}}})
	if err != nil {
		t.Fatal(err)
	}
	tv := tableOf(&sc.Regions[0], nil, "/in")
	if !tv.Cols[0].Ref || tv.Cols[1].Ref || !strings.HasPrefix(tv.Reference, "4xMPI 1xOpenMP, 4 CPUs (a.json)") {
		t.Errorf("columns %+v, reference %q", tv.Cols, tv.Reference)
	}
	for _, r := range tv.Rows {
		if r.Cells[1].Text != "refused" || r.Cells[0].Text == "refused" {
			t.Errorf("row %s: cells %+v", r.ID, r.Cells)
		}
	}
	want := "4xMPI 2xOpenMP, 8 CPUs (b.json): no POP metrics: the accounts of rank 0 do not add up."
	if len(tv.Refused) != 1 || tv.Refused[0] != want {
		t.Errorf("notes %q, want %q", tv.Refused, want)
	}

	runs[0].Refused = "off"
	sc, err = pop.Scale(pop.ScalingInput{Model: pop.ModelTALP, Reference: -1,
		Regions: []pop.ScalingRegionInput{{Name: "Global", Runs: runs, Tree: tree}}})
	if err != nil {
		t.Fatal(err)
	}
	tv = tableOf(&sc.Regions[0], nil, "/in")
	if tv.Cols[0].Ref || tv.Cols[1].Ref || tv.Reference != "none (no run has POP metrics in this region)" || len(tv.Refused) != 2 {
		t.Errorf("all refused: columns %+v, reference %q, notes %q", tv.Cols, tv.Reference, tv.Refused)
	}
}

// The per-process chart of a refused region is not drawn: the note says why.
func TestProcessTimesRefused(t *testing.T) {
	m := &measure.Measurement{Regions: []measure.Region{{Name: "Global", Processes: []measure.ProcessAccounts{{Rank: 0, CPUs: 2, ElapsedNS: 1e9, UsefulNS: 1e9}}}}}
	r := &runs.Run{Measurement: m, Regions: []runs.Region{{Name: "Global", Refused: "the accounts of rank 0 do not add up"}}}
	procs, note := processTimes(r, "Global")
	if len(procs) != 0 || note != `The newest run has no POP metrics in region "Global", so no per-process times are shown: the accounts of rank 0 do not add up.` {
		t.Errorf("procs %+v, note %q", procs, note)
	}
	if _, _, _, ok := processDistribution(r, "Global"); ok {
		t.Error("a distribution of a refused region")
	}
	r.Regions[0].Refused = ""
	if procs, _ := processTimes(r, "Global"); len(procs) != 1 {
		t.Errorf("not refused: procs %+v", procs)
	}
}
