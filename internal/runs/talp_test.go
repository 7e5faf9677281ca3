package runs

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/pop"
)

// talpLB writes a DLB ≥ 3.6 file of 4 ranks × 1 CPU on the given nodes
// whose ranks work 1, 2, 3 and 4 s of T = 4 s (mpiTime 6 s, no rank waits
// less than 0: minMpiNormdProc 0), with DLB's load balance In/Out as given.
func talpLB(t *testing.T, nodes int, in, out string) string {
	t.Helper()
	doc := fmt.Sprintf(`{"dlbVersion": "3.7.0", "timestamp": "2026-01-02T03:04:05",
 "resources": {"numCpus": 4, "numNodes": %d, "numMpiRanks": 4, "numGpus": 0},
 "Application": {"Global": {"numCpus": 4, "numMpiRanks": 4, "numNodes": %d, "avgCpus": 4.0, "numGpus": 0,
   "numMeasurements": 4, "numMpiCalls": 40, "numOmpParallels": 0, "elapsedTime": 4000000000,
   "usefulTime": 10000000000, "mpiTime": 6000000000, "ompLoadImbalanceTime": 0, "ompSchedulingTime": 0,
   "ompSerializationTime": 0, "gpuRuntimeTime": 0, "minMpiNormdProc": 0, "minMpiNormdNode": 3000000000,
   "parallelEfficiency": 0.62, "mpiParallelEfficiency": 0.62, "mpiCommunicationEfficiency": 1.00,
   "mpiLoadBalance": 0.62, "mpiLoadBalanceIn": %s, "mpiLoadBalanceOut": %s,
   "ompParallelEfficiency": 1.00, "ompLoadBalance": 1.00, "ompSchedulingEfficiency": 1.00,
   "ompSerializationEfficiency": 1.00, "deviceOffloadEfficiency": 1.00}}}`, nodes, nodes, in, out)
	path := filepath.Join(t.TempDir(), "talp.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTALPImpossibleLoadBalanceInOut: DLB's own In/Out are kept when
// possible, recomputed from the file's times on one node where DLB's are
// impossible (DLB's capped node CPUs: In 0.25, Out 2.50 where the truth
// is 0.625 and 1), and removed on several nodes.
func TestTALPImpossibleLoadBalanceInOut(t *testing.T) {
	tests := []struct {
		name    string
		nodes   int
		in, out string
		want    map[string]float64 // In, Out; absent when missing
	}{
		{"plausible values are DLB's", 1, "0.61", "0.99", map[string]float64{pop.IDMPILoadBalanceIn: 0.61, pop.IDMPILoadBalanceOut: 0.99}},
		{"capped node CPUs, one node", 1, "0.25", "2.50", map[string]float64{pop.IDMPILoadBalanceIn: 0.625, pop.IDMPILoadBalanceOut: 1}},
		{"negative In, one node", 1, "-0.30", "0.80", map[string]float64{pop.IDMPILoadBalanceIn: 0.625, pop.IDMPILoadBalanceOut: 1}},
		{"impossible on two nodes", 2, "-0.30", "2.48", map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Load(talpLB(t, tt.nodes, tt.in, tt.out), pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			g, ok := r.Region("Global")
			if !ok {
				t.Fatal("no Global region")
			}
			for _, id := range []string{pop.IDMPILoadBalanceIn, pop.IDMPILoadBalanceOut} {
				got, ok := g.Metrics[id]
				want, wantOK := tt.want[id]
				if ok != wantOK || math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v (%v), want %v (%v)", id, got, ok, want, wantOK)
				}
				inTree := false
				for _, n := range g.Tree {
					inTree = inTree || n.ID == id
				}
				if inTree != wantOK {
					t.Errorf("%s in the tree: %v, want %v", id, inTree, wantOK)
				}
			}
			// The rest of DLB's values are untouched.
			if g.Metrics[pop.IDMPILoadBalance] != 0.62 || g.Metrics[pop.IDParallelEfficiency] != 0.62 {
				t.Errorf("metrics %v", g.Metrics)
			}
		})
	}
}

// TestTALPImpossibleLoadBalanceFromDLB: a file the development version of
// DLB after 3.7.0 wrote for examples/imbalance (4 ranks on a 2-core
// machine) has In 0.25 and Out 2.51; popmon scaling shows the ones its
// times give on one node.
func TestTALPImpossibleLoadBalanceFromDLB(t *testing.T) {
	r, err := Load(filepath.Join("..", "talpjson", "testdata", "dlb-3.7", "imbalance.dlb-3.7.0+63-9d67.json"), pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := r.Region("Global")
	in, out := g.Metrics[pop.IDMPILoadBalanceIn], g.Metrics[pop.IDMPILoadBalanceOut]
	// (elapsedTime − mpiTime/numCpus) / (elapsedTime − minMpiNormdProc)
	want := (1004792962 - 1509049387/4.0) / (1004792962 - 3221222.0)
	if math.Abs(in-want) > 1e-12 || out != 1 || g.Metrics[pop.IDMPILoadBalance] != 0.63 {
		t.Errorf("In %v Out %v LB %v, want In %v Out 1 LB 0.63 (DLB's)", in, out, g.Metrics[pop.IDMPILoadBalance], want)
	}
	// The reader is told the numbers are popmon's, not DLB's.
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], talpjson.NoteImpossibleLoadBalance) || !strings.Contains(r.Warnings[0], "Out 2.51") {
		t.Errorf("warnings %q, want the impossible load balance note", r.Warnings)
	}
}
