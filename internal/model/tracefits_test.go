package model

import (
	"testing"

	"github.com/popmon/popmon/internal/trace"
)

// TestSamplesFromTrace: a message of 1024 B sent at 100 ns, its receive
// posted at 50 ns and completed at 400 ns travelled 400 − max(100, 50) =
// 300 ns; an MPI_Allreduce entered at 1000 and 1200 ns and left at 1500
// and 1600 ns completed 1600 − 1200 = 400 ns after the last arrival. A
// second collective where the ranks disagree (Bcast vs Barrier) is left
// out, and so is a message whose receive never completed.
func TestSamplesFromTrace(t *testing.T) {
	tr := &trace.Trace{
		Comms: []trace.Comm{{Members: []int32{0, 1}}},
		Ranks: []trace.Rank{
			{Calls: []trace.Call{
				{Name: "MPI_Allreduce", Kind: trace.KindCollective, Coll: trace.CollAllreduce, Enter: 1000, Leave: 1500, SendBytes: 8, RecvBytes: 8},
				{Name: "MPI_Bcast", Kind: trace.KindCollective, Coll: trace.CollBcast, Enter: 2000, Leave: 2100},
			}},
			{Calls: []trace.Call{
				{Name: "MPI_Allreduce", Kind: trace.KindCollective, Coll: trace.CollAllreduce, Enter: 1200, Leave: 1600, SendBytes: 8, RecvBytes: 8},
				{Name: "MPI_Barrier", Kind: trace.KindCollective, Coll: trace.CollBarrier, Enter: 2000, Leave: 2100},
			}},
		},
		Messages: []trace.Message{
			{Src: 0, Dst: 1, Bytes: 1024, LogSend: 100, PhysSend: 100, LogRecv: 50, PhysRecv: 400},
			{Src: 1, Dst: 0, Bytes: 8, LogSend: 100, PhysSend: 100, LogRecv: 50, PhysRecv: 0},
		},
	}
	s := SamplesFromTrace(tr)
	if len(s.P2P) != 1 || s.P2P[0].Bytes != 1024 || s.P2P[0].TimeS != 300e-9 || s.P2P[0].X != 2 {
		t.Errorf("p2p samples %+v", s.P2P)
	}
	if len(s.Coll) != 1 || s.Coll[0].Call != "MPI_Allreduce" || s.Coll[0].TimeS != 400e-9 || s.Coll[0].Bytes != 8 || s.Coll[0].X != 2 {
		t.Errorf("collective samples %+v", s.Coll)
	}
	// Per-size medians: sizes 10 (times 1, 2, 9: median 2) and 20 (4, 6: 5).
	med := medianBySize([]Sample{{Bytes: 10, TimeS: 9}, {Bytes: 20, TimeS: 4}, {Bytes: 10, TimeS: 1}, {Bytes: 10, TimeS: 2}, {Bytes: 20, TimeS: 6}})
	if len(med) != 2 || med[0].TimeS != 2 || med[1].TimeS != 5 {
		t.Errorf("medians %+v", med)
	}
}
