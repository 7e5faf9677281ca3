package report

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestTALPJSONWorkerIdle: talp-json writes the 2 × 2 barrier phase of
// issue 10 with TALP's accounting (DLB after 3.7.0): mpiTime is the
// threads' own MPI time, mpiWorkerIdleTime the workers' idle time during
// MPI, which ompSerializationTime includes; numOmpParallels is the
// measurement's count (nested regions included); the efficiencies are
// popmon's, and DLB's formulas on the written times give them back.
func TestTALPJSONWorkerIdle(t *testing.T) {
	const ms = int64(1_000_000)
	m := &measure.Measurement{
		Format: measure.Format, Version: measure.Version, Tool: measure.Tool{Name: "popmon", Version: "t"},
		Command: []string{"./barrier"}, Launcher: measure.Launcher{Kind: measure.LauncherNone},
		MPI:       &measure.MPI{Library: "test", Standard: "3.1", ThreadLevel: "funneled"},
		Clock:     measure.Clock{Source: measure.ClockMonotonic},
		Resources: measure.Resources{Processes: 2, Nodes: 1, CPUs: 4},
		Processes: []measure.Process{{Rank: 0, CPUs: 2}, {Rank: 1, CPUs: 2}},
		OpenMP:    &measure.OpenMP{Runtime: "LLVM OMP", OMPT: true, MaxThreads: 2},
		MPICalls:  []measure.MPICall{}, Warnings: []string{},
		Regions: []measure.Region{{Name: "phase", Processes: []measure.ProcessAccounts{
			{Rank: 0, CPUs: 2, Visits: 1, ElapsedNS: 200 * ms, UsefulNS: 200 * ms, MPINS: 100 * ms, MPIWorkerIdleNS: 100 * ms, OMPParallels: 3},
			{Rank: 1, CPUs: 2, Visits: 1, ElapsedNS: 200 * ms, UsefulNS: 400 * ms, OMPParallels: 3},
		}}},
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Application map[string]map[string]float64 `json:"Application"`
	}
	if err := json.Unmarshal([]byte(render(t, FormatTALPJSON, rep, m, Options{})), &f); err != nil {
		t.Fatal(err)
	}
	g := f.Application["phase"]
	for key, want := range map[string]float64{
		"mpiTime": float64(100 * ms), "mpiWorkerIdleTime": float64(100 * ms), "ompSerializationTime": float64(100 * ms),
		"usefulTime": float64(600 * ms), "numOmpParallels": 6, "numCpus": 4,
		"parallelEfficiency": 0.75, "ompSerializationEfficiency": 0.875, "ompParallelEfficiency": 0.875,
		"mpiLoadBalance": 0.75, "mpiCommunicationEfficiency": 1, "minMpiNormdProc": 0, "minMpiNormdNode": float64(50 * ms),
	} {
		if got, ok := g[key]; !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v (%v), want %v", key, got, ok, want)
		}
	}
	// DLB's hybrid-v2 formulas on the written times.
	nonOMP := g["usefulTime"] + g["mpiTime"] + g["gpuRuntimeTime"]
	active := nonOMP + g["ompSerializationTime"] + g["ompLoadImbalanceTime"] + g["ompSchedulingTime"]
	if pe := g["usefulTime"] / active; math.Abs(pe-g["parallelEfficiency"]) > 1e-12 {
		t.Errorf("DLB's formula gives PE %v, file %v", pe, g["parallelEfficiency"])
	}
	if ser := nonOMP / (nonOMP + g["ompSerializationTime"]); math.Abs(ser-g["ompSerializationEfficiency"]) > 1e-12 {
		t.Errorf("DLB's formula gives serialization %v, file %v", ser, g["ompSerializationEfficiency"])
	}
}
