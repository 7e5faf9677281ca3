package replay

import (
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/measure"
)

// call is a call of a synthetic trace (times in ns).
func call(name string, kind trace.Kind, enter, leave int64) trace.Call {
	return trace.Call{Name: name, Kind: kind, Enter: enter, Leave: leave, Comm: -1, Root: -1}
}

func coll(name string, c trace.Coll, enter, leave int64, root int32) trace.Call {
	return trace.Call{Name: name, Kind: trace.KindCollective, Coll: c, Enter: enter, Leave: leave, Comm: 0, Root: root}
}

func world(n int) []trace.Comm {
	m := make([]int32, n)
	for i := range m {
		m[i] = int32(i)
	}
	return []trace.Comm{{Members: m}}
}

// msg is a message from src's call sc to dst's call rc (blocking both).
func msg(src, dst, sc, rc int32, bytes int64) trace.Message {
	return trace.Message{Src: src, Dst: dst, Bytes: bytes, SendCall: sc, SendDone: sc, RecvPost: rc, RecvDone: rc}
}

// TestRunSynthetic replays small traces whose ideal runtimes are computed
// by hand (ns).
func TestRunSynthetic(t *testing.T) {
	const big = DefaultEagerLimit
	for _, tc := range []struct {
		name            string
		ranks           []trace.Rank
		msgs            []trace.Message
		comms           []trace.Comm
		runtime, useful int64
	}{
		{
			// Rank 0 computes 100, sends (eager) and computes 10 more; rank 1
			// computes 10, receives (posted at 10, available at 100), computes
			// 100: it ends at 200.
			name: "eager send, late sender",
			ranks: []trace.Rank{
				{Calls: []trace.Call{call("MPI_Send", trace.KindSend, 100, 130)}, End: 140},
				{Calls: []trace.Call{call("MPI_Recv", trace.KindRecv, 10, 150)}, End: 250},
			},
			msgs:    []trace.Message{msg(0, 1, 0, 0, 8)},
			runtime: 200, useful: 110,
		},
		{
			// Rendezvous: rank 0 sends at 10 and waits for rank 1's post at
			// 100; then computes 50: ends at 150. Rank 1 ends at 100+20.
			name: "rendezvous send, late receiver",
			ranks: []trace.Rank{
				{Calls: []trace.Call{call("MPI_Send", trace.KindSend, 10, 200)}, End: 250},
				{Calls: []trace.Call{call("MPI_Recv", trace.KindRecv, 100, 210)}, End: 230},
			},
			msgs:    []trace.Message{msg(0, 1, 0, 0, big)},
			runtime: 150, useful: 120,
		},
		{
			// The same message eager: the sender does not wait: 10+50.
			name: "eager send, late receiver",
			ranks: []trace.Rank{
				{Calls: []trace.Call{call("MPI_Send", trace.KindSend, 10, 200)}, End: 250},
				{Calls: []trace.Call{call("MPI_Recv", trace.KindRecv, 100, 210)}, End: 230},
			},
			msgs:    []trace.Message{msg(0, 1, 0, 0, big-1)},
			runtime: 120, useful: 120,
		},
		{
			// A barrier: everyone leaves at the last arrival (30), then
			// computes 5, 5, 5.
			name: "barrier",
			ranks: []trace.Rank{
				{Calls: []trace.Call{coll("MPI_Barrier", trace.CollBarrier, 10, 50, -1)}, End: 55},
				{Calls: []trace.Call{coll("MPI_Barrier", trace.CollBarrier, 20, 50, -1)}, End: 55},
				{Calls: []trace.Call{coll("MPI_Barrier", trace.CollBarrier, 30, 50, -1)}, End: 55},
			},
			runtime: 35, useful: 35,
		},
		{
			// MPI_Reduce to rank 0: only the root waits. Rank 1 arrives at
			// 100 and leaves at once (ends at 105); rank 0 arrives at 10,
			// leaves at 100, ends at 105.
			name: "reduce root-sync",
			ranks: []trace.Rank{
				{Calls: []trace.Call{coll("MPI_Reduce", trace.CollReduce, 10, 200, 0)}, End: 205},
				{Calls: []trace.Call{coll("MPI_Reduce", trace.CollReduce, 100, 200, 0)}, End: 205},
			},
			runtime: 105, useful: 105,
		},
		{
			// The root of a reduce arrives first and the other rank is late:
			// the non-root does not wait for a late root.
			name: "reduce, late root",
			ranks: []trace.Rank{
				{Calls: []trace.Call{coll("MPI_Reduce", trace.CollReduce, 100, 200, 0)}, End: 205},
				{Calls: []trace.Call{coll("MPI_Reduce", trace.CollReduce, 10, 200, 0)}, End: 205},
			},
			runtime: 105, useful: 105,
		},
		{
			// Isend of a rendezvous message at 10, Wait at 20; the receiver
			// posts its Irecv at 50 and waits at 60: the transfer completes
			// at 50, so rank 0 leaves its Wait at 50, ends at 55; rank 1 at
			// 60+5.
			name: "isend irecv wait",
			ranks: []trace.Rank{
				{Calls: []trace.Call{call("MPI_Isend", trace.KindIsend, 10, 11), call("MPI_Wait", trace.KindWait, 20, 90)}, End: 95},
				{Calls: []trace.Call{call("MPI_Irecv", trace.KindIrecv, 50, 51), call("MPI_Wait", trace.KindWait, 60, 90)}, End: 95},
			},
			msgs: []trace.Message{{Src: 0, Dst: 1, Bytes: big, SendCall: 0, SendDone: 1, RecvPost: 0, RecvDone: 1}},
			// useful: rank 0: 10+9+5 = 24; rank 1: 50+9+5 = 64
			runtime: 64, useful: 64,
		},
		{
			// A collective on a sub-communicator {1, 2}: rank 0 is not in it.
			name: "sub-communicator",
			ranks: []trace.Rank{
				{End: 10},
				{Calls: []trace.Call{{Name: "MPI_Barrier", Kind: trace.KindCollective, Coll: trace.CollBarrier, Enter: 10, Leave: 40, Comm: 1, Root: -1}}, End: 45},
				{Calls: []trace.Call{{Name: "MPI_Barrier", Kind: trace.KindCollective, Coll: trace.CollBarrier, Enter: 40, Leave: 41, Comm: 1, Root: -1}}, End: 46},
			},
			comms:   append(world(3), trace.Comm{Members: []int32{1, 2}}),
			runtime: 45, useful: 45,
		},
		{
			// MPI_Init barrier (calls take no time): rank 0 arrives at 5,
			// rank 1 at 25; both leave at 25; rank 0 computes 10 more (35),
			// rank 1 5 more (30).
			name: "init barrier",
			ranks: []trace.Rank{
				{Calls: []trace.Call{call("MPI_Init", trace.KindInit, 5, 10)}, End: 20},
				{Calls: []trace.Call{call("MPI_Init", trace.KindInit, 25, 30)}, End: 35},
			},
			runtime: 35, useful: 30,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comms := tc.comms
			if comms == nil {
				comms = world(len(tc.ranks))
			}
			res, err := Run(&trace.Trace{Ranks: tc.ranks, Messages: tc.msgs, Comms: comms}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.RuntimeNS != tc.runtime || res.UsefulMaxNS != tc.useful {
				t.Errorf("runtime %d useful %d, want %d %d", res.RuntimeNS, res.UsefulMaxNS, tc.runtime, tc.useful)
			}
		})
	}
}

// TestRunErrors checks that broken traces and deadlocks are errors that
// say where, and never hang or panic.
func TestRunErrors(t *testing.T) {
	recv := func(enter int64) trace.Rank {
		return trace.Rank{Calls: []trace.Call{call("MPI_Recv", trace.KindRecv, enter, enter+1)}, End: enter + 2}
	}
	for _, tc := range []struct {
		name string
		tr   *trace.Trace
		want string
	}{
		{"no ranks", &trace.Trace{}, "no ranks"},
		{"no comms", &trace.Trace{Ranks: []trace.Rank{{End: 1}}}, "no communicators"},
		{"bad member", &trace.Trace{Ranks: []trace.Rank{{End: 1}}, Comms: []trace.Comm{{Members: []int32{3}}}}, "names rank 3"},
		{"bad message rank", &trace.Trace{Ranks: []trace.Rank{recv(1)}, Comms: world(1), Messages: []trace.Message{msg(0, 4, 0, 0, 1)}}, "message 0 goes from rank 0 to rank 4"},
		{"bad message call", &trace.Trace{Ranks: []trace.Rank{recv(1), recv(1)}, Comms: world(2), Messages: []trace.Message{msg(0, 1, 0, 7, 1)}}, "do not exist"},
		{"not a member", &trace.Trace{Ranks: []trace.Rank{{Calls: []trace.Call{{Name: "MPI_Barrier", Kind: trace.KindCollective, Comm: 1}}}, {}},
			Comms: append(world(2), trace.Comm{Members: []int32{1}})}, "rank 0 calls MPI_Barrier (call 0) on communicator 1, which it is not a member of"},
		{
			// Both ranks receive first: a receive that nobody sends.
			"recv deadlock",
			&trace.Trace{Ranks: []trace.Rank{
				{Calls: []trace.Call{call("MPI_Recv", trace.KindRecv, 1, 2), call("MPI_Send", trace.KindSend, 3, 4)}, End: 5},
				{Calls: []trace.Call{call("MPI_Recv", trace.KindRecv, 1, 2), call("MPI_Send", trace.KindSend, 3, 4)}, End: 5},
			}, Comms: world(2), Messages: []trace.Message{msg(0, 1, 1, 0, 8), msg(1, 0, 1, 0, 8)}},
			"2 rank(s) blocked: rank 0 in MPI_Recv (its call 0, at 0.000000 s of the trace) waits for the 8-byte message (tag 0) from rank 1, which rank 1 has not sent",
		},
		{
			"missing barrier",
			&trace.Trace{Ranks: []trace.Rank{
				{Calls: []trace.Call{coll("MPI_Barrier", trace.CollBarrier, 1, 2, -1)}, End: 5},
				{End: 5},
			}, Comms: world(2)},
			"1 rank(s) blocked: rank 0 in MPI_Barrier (its call 0, at 0.000000 s of the trace) waits in collective 1 on communicator 0 for rank(s) 1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(tc.tr, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestApply checks what Apply records in the measurement.
func TestApply(t *testing.T) {
	tr := &trace.Trace{Ranks: []trace.Rank{{End: 7}}, Comms: world(1), Source: "paraver: x.prv"}
	var m measure.Measurement
	if err := Apply(&m, tr, Options{EagerLimit: 5}); err != nil {
		t.Fatal(err)
	}
	want := measure.IdealNetwork{RuntimeNS: 7, UsefulMaxNS: 7, EagerLimit: 5, Method: "popmon replay of a Paraver trace, without the MPI_Init barrier"}
	if m.IdealNetwork == nil || *m.IdealNetwork != want {
		t.Errorf("IdealNetwork = %+v, want %+v", m.IdealNetwork, want)
	}
}

// BenchmarkReplayManyRanks replays 4096 ranks × 100 barriers and a ring
// of rendezvous messages: the work must grow with the operations, not
// with ranks² (communicator membership, wake-ups).
func BenchmarkReplayManyRanks(b *testing.B) {
	const n, iters = 4096, 100
	tr := &trace.Trace{Comms: world(n), Ranks: make([]trace.Rank, n)}
	for r := range tr.Ranks {
		var calls []trace.Call
		for i := int64(0); i < iters; i++ {
			t := i * 1000
			calls = append(calls, call("MPI_Sendrecv", trace.KindSendrecv, t+int64(r%7), t+400), coll("MPI_Barrier", trace.CollBarrier, t+500+int64(r%13), t+900, -1))
		}
		tr.Ranks[r] = trace.Rank{Calls: calls, End: iters * 1000}
	}
	for r := int32(0); r < n; r++ {
		for i := int32(0); i < iters; i++ {
			dst := (r + 1) % n
			tr.Messages = append(tr.Messages, trace.Message{Src: r, Dst: dst, Bytes: DefaultEagerLimit, SendCall: 2 * i, SendDone: 2 * i, RecvPost: 2 * i, RecvDone: 2 * i})
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(tr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
