package e2e

import (
	"testing"
)

// TestBytesRooted runs examples/rooted (2 ranks) and checks the bytes of
// the gather and scatter family against the program's design (its header
// comment): MPI_IN_PLACE at the root counts the root's own slot, whatever
// count it passes, and a non-root's counts are never read.
func TestBytesRooted(t *testing.T) {
	want := map[string][2]int64{ // sent, received
		"MPI_Gather":   {32, 32},
		"MPI_Gatherv":  {64, 64},
		"MPI_Scatter":  {48, 48},
		"MPI_Scatterv": {32, 32},
	}
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			r := measureRun(t, impl, 2, "rooted")
			got := map[string][2]int64{}
			for _, c := range r.m.MPICalls {
				got[c.Name] = [2]int64{c.BytesSent, c.BytesRecv}
			}
			for name, w := range want {
				if g, ok := got[name]; !ok {
					t.Errorf("%s: not in the call profile", name)
				} else if g != w {
					t.Errorf("%s: sent %d, received %d; want %d, %d", name, g[0], g[1], w[0], w[1])
				}
			}
		})
	}
}
