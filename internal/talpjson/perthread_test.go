package talpjson_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// A region measured per thread (started inside OpenMP parallel regions:
// its record has 1 CPU and the threads that measured it) is written as DLB
// writes such a region: numOmpThreads the threads, numCpus at most the
// affinity's CPUs, numMeasurements the measurements, parallel efficiency
// the useful share of the measured time; the whole run's CPUs are the
// process's (nested teams' threads included).
func TestWritePerThreadRegion(t *testing.T) {
	m := &measure.Measurement{Format: measure.Format, Version: measure.Version,
		Resources: measure.Resources{Processes: 1, Nodes: 1, CPUs: 4},
		Processes: []measure.Process{{Rank: 0, CPUs: 4, AffinityCPUs: 2}},
		Regions: []measure.Region{
			{Name: measure.GlobalRegion, Processes: []measure.ProcessAccounts{
				{Rank: 0, CPUs: 4, Visits: 1, ElapsedNS: 1e9, UsefulNS: 16e8, OMPSerializationNS: 18e8, OMPLoadImbalanceNS: 6e8, OMPParallels: 8}}},
			{Name: "Thread", Processes: []measure.ProcessAccounts{
				{Rank: 0, CPUs: 1, Threads: 3, Visits: 8, ElapsedNS: 14e8, UsefulNS: 14e8}}},
		},
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := talpjson.Write(&out, rep.Run, rep.Regions); err != nil {
		t.Fatal(err)
	}
	var doc struct{ Application map[string]map[string]float64 }
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		region, key string
		want        float64
	}{
		{"Global", "numCpus", 2}, {"Global", "numOmpThreads", 4}, {"Global", "parallelEfficiency", 0.4},
		{"Thread", "numCpus", 2}, {"Thread", "numOmpThreads", 3}, {"Thread", "avgCpus", 3},
		{"Thread", "numMeasurements", 8}, {"Thread", "elapsedTime", 14e8}, {"Thread", "parallelEfficiency", 1},
	} {
		if got, ok := doc.Application[c.region][c.key]; !ok || got != c.want {
			t.Errorf("%s %s = %v (present %v), want %v", c.region, c.key, got, ok, c.want)
		}
	}
}
