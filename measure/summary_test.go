package measure_test

import (
	"testing"

	"github.com/popmon/popmon/measure"
)

// TestDistributionBin checks the histogram bins; the cases are those of
// shim/test/reduce_test.c (hist), so the library and popmon agree.
func TestDistributionBin(t *testing.T) {
	for _, tt := range []struct {
		v, min, max int64
		bin         int
	}{
		{0, 0, 99, 0}, {50, 0, 99, 10}, {99, 0, 99, 19}, {98, 0, 99, 19}, {5, 5, 5, 0},
		{4, 5, 10, 0}, {11, 5, 10, 19}, {1000000000, 0, 4000000000, 4},
	} {
		d := measure.Distribution{Min: tt.min, Max: tt.max}
		if got := d.Bin(tt.v); got != tt.bin {
			t.Errorf("Bin(%d in [%d, %d]) = %d, want %d", tt.v, tt.min, tt.max, got, tt.bin)
		}
	}
}
