package talpjson_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// DLB's layout has no key for popmon's own cost (instrumentation_ns): the
// talp-json popmon writes keeps the layout, with usefulTime and mpiTime
// without it, elapsedTime the wall time, and popmon's efficiencies (its
// own cost left out).
func TestWriteOwnCost(t *testing.T) {
	m := &measure.Measurement{Format: measure.Format, Version: measure.Version,
		MPI:       &measure.MPI{Library: "test", Standard: "3.1", ThreadLevel: "single"},
		Resources: measure.Resources{Processes: 2, Nodes: 1, CPUs: 2},
		Processes: []measure.Process{{Rank: 0, CPUs: 1}, {Rank: 1, CPUs: 1}},
		Regions: []measure.Region{{Name: measure.GlobalRegion, Processes: []measure.ProcessAccounts{
			{Rank: 0, CPUs: 1, Visits: 1, ElapsedNS: 1e9, UsefulNS: 6e8, MPINS: 3e8, InstrumentationNS: 1e8, MPICalls: 10},
			{Rank: 1, CPUs: 1, Visits: 1, ElapsedNS: 1e9, UsefulNS: 4e8, MPINS: 5.5e8, InstrumentationNS: 5e7, MPICalls: 10},
		}}},
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := talpjson.Write(&out, pop.NewRun(m), rep.Regions); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	var find func(v any)
	find = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["usefulTime"]; ok && g == nil {
				g = x
				return
			}
			for _, y := range x {
				find(y)
			}
		case []any:
			for _, y := range x {
				find(y)
			}
		}
	}
	find(doc)
	if g == nil {
		t.Fatalf("no region with usefulTime in %s", out.String())
	}
	comm, _ := rep.Regions[0].Value(pop.IDMPICommunicationEfficiency)
	for key, want := range map[string]float64{"elapsedTime": 1e9, "usefulTime": 1e9, "mpiTime": 8.5e8, "mpiCommunicationEfficiency": comm} {
		if v, ok := g[key].(float64); !ok || v != want {
			t.Errorf("%s: %v, want %v", key, g[key], want)
		}
	}
	for key := range g {
		if key == "instrumentationTime" || key == "instrumentation_ns" {
			t.Errorf("key %s: DLB's layout has no such key", key)
		}
	}
}
