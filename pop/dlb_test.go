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
// 2-decimal values. It pins the reading of POP-METRICS.md §2 where the MPI
// time of idle OpenMP workers (Mw; DLB's mpiTime is popmon's M + Mw) is
// part of active time: with Mw left out of active, 28 of the values
// checked disagree with DLB.
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
			// Split DLB's all-CPU MPI time as popmon records it: the
			// primary threads' share M, the idle workers' share Mw.
			mpi := int64(g["mpiTime"])
			primary := mpi / int64(max(cpus, 1))
			m := &measure.Measurement{
				Format: measure.Format, Version: measure.Version,
				Resources: measure.Resources{Processes: 1, Nodes: 1, CPUs: cpus},
				Processes: []measure.Process{{Rank: 0, CPUs: cpus}},
				Regions: []measure.Region{{Name: region, Processes: []measure.ProcessAccounts{{
					Rank: 0, CPUs: cpus, ElapsedNS: int64(g["elapsedTime"]), UsefulNS: int64(g["usefulTime"]),
					MPINS: primary, MPIWorkerIdleNS: mpi - primary, OMPLoadImbalanceNS: int64(g["ompLoadImbalanceTime"]),
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
