package e2e

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/popmon/popmon/measure"
)

// TestBytesDesigned runs examples/bytes (2 ranks, N ping-pong round trips)
// and checks every call's bytes and size histogram against the program's
// design (its header comment): blocking, wildcard, non-blocking (Waitall
// and Wait, MPI_STATUS(ES)_IGNORE, posted sizes larger than the actual
// ones), persistent and collective calls.
func TestBytesDesigned(t *testing.T) {
	const n = 6
	hist := func(buckets map[int]int64) []int64 {
		last := 0
		for k := range buckets {
			last = max(last, k)
		}
		h := make([]int64, last+1)
		for k, v := range buckets {
			h[k] = v
		}
		return h
	}
	want := map[string]measure.MPICall{
		"MPI_Send":      {BytesSent: 1100 * n, SizeHist: hist(map[int]int64{7: n, 10: n})},
		"MPI_Recv":      {BytesRecv: 1100 * n, SizeHist: hist(map[int]int64{7: n, 10: n})},
		"MPI_Isend":     {BytesSent: 32, SizeHist: hist(map[int]int64{4: 4})},
		"MPI_Irecv":     {BytesRecv: 48, SizeHist: hist(map[int]int64{4: 4, 5: 1})},
		"MPI_Ssend":     {BytesSent: 16, SizeHist: hist(map[int]int64{5: 1})},
		"MPI_Send_init": {BytesSent: 64 * n, SizeHist: hist(map[int]int64{7: n})},
		"MPI_Recv_init": {BytesRecv: 64 * n, SizeHist: hist(map[int]int64{7: n})},
		"MPI_Sendrecv":  {BytesSent: 48, BytesRecv: 48, SizeHist: hist(map[int]int64{5: 4})},
		"MPI_Bcast":     {BytesSent: 1024, BytesRecv: 1024, SizeHist: hist(map[int]int64{11: 2})},
		"MPI_Allreduce": {BytesSent: 128, BytesRecv: 128, SizeHist: hist(map[int]int64{7: 2})},
		"MPI_Gather":    {BytesSent: 32, BytesRecv: 32, SizeHist: hist(map[int]int64{5: 1, 6: 1})},
		// Completion and start calls carry no bytes of their own.
		"MPI_Wait": {}, "MPI_Waitall": {}, "MPI_Start": {}, "MPI_Barrier": {},
	}
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			r := measureRun(t, impl, 2, "bytes", "6")
			got := map[string]measure.MPICall{}
			for _, c := range r.m.MPICalls {
				got[c.Name] = c
			}
			for name, w := range want {
				g, ok := got[name]
				if !ok {
					t.Errorf("%s: not in the call profile", name)
					continue
				}
				if g.BytesSent != w.BytesSent || g.BytesRecv != w.BytesRecv || !reflect.DeepEqual(g.SizeHist, w.SizeHist) {
					t.Errorf("%s: sent %d, received %d, sizes %v; want %d, %d, %v",
						name, g.BytesSent, g.BytesRecv, g.SizeHist, w.BytesSent, w.BytesRecv, w.SizeHist)
				}
			}
		})
	}
}

// TestBytesPartial: a job that ends before MPI_Finalize keeps its bytes:
// the partial measurement's call profile, assembled from the live files,
// has each MPI_Allreduce's 8 bytes (one MPI_LONG) sent and received.
func TestBytesPartial(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			np := partialRanks(impl)
			s := startPartial(t, impl, np, nil, "ending", fmt.Sprint(partialK), "200", "2", "2", "5")
			s.wait(t)
			m, err := measure.ReadFile(s.out)
			if err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, s.se.String())
			}
			if m.Partial == nil {
				t.Fatalf("not a partial measurement")
			}
			for _, c := range m.MPICalls {
				if c.Name != "MPI_Allreduce" {
					continue
				}
				if c.Calls == 0 || c.BytesSent != 8*c.Calls || c.BytesRecv != 8*c.Calls || !reflect.DeepEqual(c.SizeHist, []int64{0, 0, 0, 0, c.Calls}) {
					t.Errorf("MPI_Allreduce: %d calls, sent %d, received %d, sizes %v; want 8 bytes each way per call, all in bucket 4",
						c.Calls, c.BytesSent, c.BytesRecv, c.SizeHist)
				}
				return
			}
			t.Errorf("no MPI_Allreduce in the partial call profile")
		})
	}
}
