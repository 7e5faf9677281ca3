package pop_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestTALPAgreesWithDLB recomputes, from the summed times DLB wrote for
// the 68 regions of a real application (GENE-X, shared/data/talp-json),
// the efficiencies that depend only on sums, and compares them with DLB's
// 2-decimal values. A file without mpiWorkerIdleTime (DLB ≤ 3.7.0) is read
// as internal/talpjson converts it: mpiTime is M (Mw 0), and
// ompSerializationTime is Iser (it already holds the workers' idle time
// while their primary is in MPI). Counting DLB's mpiTime again as Mw
// inside the model's Iser would disagree with DLB in 45 of the values
// checked.
func TestTALPAgreesWithDLB(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "talp-json", "example_files", "genex")
	checked := 0
	for _, name := range []string{"talp.small.json", "talp.4x56.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("TALP samples not present at %s", dir)
		}
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Application map[string]map[string]float64 `json:"Application"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatal(err)
		}
		for region, g := range f.Application {
			cpus := int(g["numCpus"])
			m := &measure.Measurement{
				Format: measure.Format, Version: measure.Version,
				// Converted from DLB/TALP JSON: DLB ≤ 3.7.0 counts the
				// workers' idle time during MPI twice, so the sums exceed
				// T × C, which popmon reports without refusing the region.
				Source:    &measure.Source{Kind: measure.SourceTALP},
				Resources: measure.Resources{Processes: 1, Nodes: 1, CPUs: cpus},
				Processes: []measure.Process{{Rank: 0, CPUs: cpus}},
				Regions: []measure.Region{{Name: region, Processes: []measure.ProcessAccounts{{
					Rank: 0, CPUs: cpus, ElapsedNS: int64(g["elapsedTime"]), UsefulNS: int64(g["usefulTime"]),
					MPINS: int64(g["mpiTime"]), OMPLoadImbalanceNS: int64(g["ompLoadImbalanceTime"]),
					OMPSchedulingNS: int64(g["ompSchedulingTime"]), OMPSerializationNS: int64(g["ompSerializationTime"]),
				}}}},
			}
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			r := &rep.Regions[0]
			for id, key := range map[string]string{
				"parallel_efficiency":          "parallelEfficiency",
				"omp_parallel_efficiency":      "ompParallelEfficiency",
				"omp_serialization_efficiency": "ompSerializationEfficiency",
				"omp_load_balance":             "ompLoadBalance",
				"omp_scheduling_efficiency":    "ompSchedulingEfficiency",
			} {
				got, ok := r.Value(id)
				if !ok {
					if g["usefulTime"] > 0 {
						t.Errorf("%s %s: %s absent", name, region, id)
					}
					continue
				}
				if math.Abs(got-g[key]) > 0.005+1e-6 {
					t.Errorf("%s %s: %s = %.4f, DLB wrote %.2f", name, region, id, got, g[key])
				}
				checked++
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d values checked", checked)
	}
}
