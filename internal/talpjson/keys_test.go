package talpjson_test

import (
	"testing"

	"github.com/popmon/popmon/internal/talpjson"
)

// TestEfficienciesFileOrder: every key has its own place in DLB's order,
// and the GPU device tree comes last in both orders (Write appends it only
// for regions with devices).
func TestEfficienciesFileOrder(t *testing.T) {
	n := len(talpjson.Efficiencies)
	seen := make([]bool, n)
	for i, e := range talpjson.Efficiencies {
		if e.FileOrder < 0 || e.FileOrder >= n || seen[e.FileOrder] {
			t.Fatalf("%s: FileOrder %d is outside 0…%d or taken", e.Key, e.FileOrder, n-1)
		}
		seen[e.FileOrder] = true
		if gpu := e.Branch == talpjson.BranchGPU; gpu != (i >= n-4) || gpu != (e.FileOrder >= n-4) {
			t.Errorf("%s: the GPU device tree must be the last four keys in both orders", e.Key)
		}
	}
}
