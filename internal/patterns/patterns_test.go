package patterns

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/trace"
)

const ms = int64(1_000_000)

// builder hand-builds synthetic traces: every rank starts with MPI_Init
// over [0, 1 ms].
type builder struct{ tr *trace.Trace }

func newBuilder(ranks int) *builder {
	b := &builder{tr: &trace.Trace{Ranks: make([]trace.Rank, ranks)}}
	world := trace.Comm{}
	for r := range ranks {
		world.Members = append(world.Members, int32(r))
		b.call(r, "MPI_Init", trace.KindInit, trace.CollNone, 0, 1*ms)
	}
	b.tr.Comms = []trace.Comm{world}
	return b
}

// call appends a call to rank r and returns its index.
func (b *builder) call(r int, name string, k trace.Kind, c trace.Coll, enter, leave int64) int32 {
	rk := &b.tr.Ranks[r]
	rk.Calls = append(rk.Calls, trace.Call{Name: name, Kind: k, Coll: c, Enter: enter, Leave: leave, Comm: 0, Root: -1})
	rk.End = max(rk.End, leave)
	b.tr.End = max(b.tr.End, leave)
	return int32(len(rk.Calls) - 1)
}

// coll appends a collective with payload to rank r.
func (b *builder) coll(r int, name string, c trace.Coll, root int32, enter, leave int64) {
	i := b.call(r, name, trace.KindCollective, c, enter, leave)
	cl := &b.tr.Ranks[r].Calls[i]
	cl.Root, cl.SendBytes, cl.RecvBytes = root, 1024, 1024
}

// send and recv append blocking point-to-point calls; msg matches them.
func (b *builder) send(r int, enter, leave int64) int32 {
	return b.call(r, "MPI_Send", trace.KindSend, trace.CollNone, enter, leave)
}

func (b *builder) recv(r int, enter, leave int64) int32 {
	return b.call(r, "MPI_Recv", trace.KindRecv, trace.CollNone, enter, leave)
}

func (b *builder) msg(src int32, sendCall int32, dst int32, recvCall int32, tag int32) {
	b.tr.Messages = append(b.tr.Messages, trace.Message{Src: src, Dst: dst, Tag: tag, Bytes: 8,
		SendCall: sendCall, SendDone: sendCall, RecvPost: recvCall, RecvDone: recvCall})
}

func (b *builder) finalize(r int, enter, leave int64) {
	b.call(r, "MPI_Finalize", trace.KindFinalize, trace.CollNone, enter, leave)
	b.tr.Ranks[r].End = leave
}

// lateSender: rank 0 works 50 ms before each of 10 sends that rank 1
// receives right away (note §7D: Late Sender 0.50 s on rank 1).
func lateSender() *trace.Trace {
	b := newBuilder(2)
	for k := range int64(10) {
		at := 1*ms + 50*ms*(k+1)
		s := b.send(0, at, at)
		r := b.recv(1, 1*ms+50*ms*k, at)
		b.msg(0, s, 1, r, 0)
	}
	return b.tr
}

// barrier: 4 ranks work r×10 ms before each of 10 barriers (0.60 s of
// Wait at Barrier, 0.30 s on rank 0).
func barrier() *trace.Trace {
	b := newBuilder(4)
	for k := range int64(10) {
		base := 1*ms + 30*ms*k
		for r := range 4 {
			b.coll(r, "MPI_Barrier", trace.CollBarrier, -1, base+int64(r)*10*ms, base+30*ms)
		}
	}
	return b.tr
}

// lateBcast: the root works 20 ms before each of 10 broadcasts (0.60 s).
func lateBcast() *trace.Trace {
	b := newBuilder(4)
	for k := range int64(10) {
		base := 1*ms + 20*ms*k
		b.coll(0, "MPI_Bcast", trace.CollBcast, 0, base+20*ms, base+20*ms)
		for r := 1; r < 4; r++ {
			b.coll(r, "MPI_Bcast", trace.CollBcast, 0, base, base+20*ms)
		}
	}
	return b.tr
}

// earlyReduce: the non-roots work 20 ms before each of 10 reductions
// (0.20 s, on the root only).
func earlyReduce() *trace.Trace {
	b := newBuilder(4)
	for k := range int64(10) {
		base := 1*ms + 20*ms*k
		b.coll(0, "MPI_Reduce", trace.CollReduce, 0, base, base+20*ms)
		for r := 1; r < 4; r++ {
			b.coll(r, "MPI_Reduce", trace.CollReduce, 0, base+20*ms, base+20*ms)
		}
	}
	return b.tr
}

// wrongOrder: rank 0 sends tag 1, works 50 ms, sends tag 2; rank 1
// receives tag 2 first, then tag 1 (50 ms, wrong order, same source).
func wrongOrder() *trace.Trace {
	b := newBuilder(2)
	s1 := b.send(0, 1*ms, 1*ms)
	s2 := b.send(0, 51*ms, 51*ms)
	r2 := b.recv(1, 1*ms, 51*ms)
	r1 := b.recv(1, 51*ms, 51*ms)
	b.msg(0, s1, 1, r1, 1)
	b.msg(0, s2, 1, r2, 2)
	return b.tr
}

// criticalPath2: rank 0 works 100 ms and sends; rank 1 works 10 ms,
// receives, works 100 ms; both finalize (the path: 200 ms, 100 ms on
// each rank).
func criticalPath2() *trace.Trace {
	b := newBuilder(2)
	s := b.send(0, 101*ms, 101*ms)
	r := b.recv(1, 11*ms, 101*ms)
	b.msg(0, s, 1, r, 0)
	b.finalize(0, 101*ms, 201*ms)
	b.finalize(1, 201*ms, 201*ms)
	return b.tr
}

func TestPatterns(t *testing.T) {
	type want struct {
		id     string
		ns     int64
		rankNS []int64 // nil: not checked
	}
	cases := []struct {
		name string
		tr   *trace.Trace
		want []want // every other pattern must be 0
	}{
		{"late sender", lateSender(), []want{{LateSender, 500 * ms, []int64{0, 500 * ms}}}},
		{"barrier", barrier(), []want{{WaitBarrier, 600 * ms, []int64{300 * ms, 200 * ms, 100 * ms, 0}}}},
		{"late broadcast", lateBcast(), []want{{LateBroadcast, 600 * ms, []int64{0, 200 * ms, 200 * ms, 200 * ms}}}},
		{"early reduce", earlyReduce(), []want{{EarlyReduce, 200 * ms, []int64{200 * ms, 0, 0, 0}}}},
		{"wrong order", wrongOrder(), []want{
			{LateSender, 50 * ms, []int64{0, 50 * ms}},
			{WrongOrderSameSource, 50 * ms, []int64{0, 50 * ms}},
		}},
		{"critical path program", criticalPath2(), []want{{LateSender, 90 * ms, []int64{0, 90 * ms}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(tc.tr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			wanted := map[string]bool{}
			for _, w := range tc.want {
				wanted[w.id] = true
				p := res.Pattern(w.id)
				if p.NS != w.ns {
					t.Errorf("%s = %d ns, want %d", w.id, p.NS, w.ns)
				}
				for r, v := range w.rankNS {
					if p.RankNS[r] != v {
						t.Errorf("%s on rank %d = %d ns, want %d", w.id, r, p.RankNS[r], v)
					}
				}
			}
			for _, p := range res.Patterns {
				if !wanted[p.ID] && p.NS != 0 {
					t.Errorf("%s = %d ns, want 0", p.ID, p.NS)
				}
			}
		})
	}
}

func TestLateSenderSites(t *testing.T) {
	res, err := Analyze(lateSender(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pattern(LateSender)
	if p.Instances != 10 || len(p.Sites) != 1 || p.Sites[0] != (Site{"MPI_Recv", 500 * ms}) {
		t.Errorf("instances %d sites %+v, want 10 and MPI_Recv 500 ms", p.Instances, p.Sites)
	}
	// MPI time: 2 × 1 ms of MPI_Init + 500 ms of receives.
	if res.MPINS != 502*ms {
		t.Errorf("MPI time %d, want %d", res.MPINS, 502*ms)
	}
}

func TestCriticalPath(t *testing.T) {
	res, err := Analyze(criticalPath2(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cp := res.CriticalPath
	if cp.Start != 1*ms || cp.End != 201*ms || cp.NS != 200*ms {
		t.Errorf("path [%d, %d] %d ns, want [1 ms, 201 ms] 200 ms", cp.Start, cp.End, cp.NS)
	}
	if cp.RankNS[0] != 100*ms || cp.RankNS[1] != 100*ms {
		t.Errorf("per rank %v, want 100 ms each", cp.RankNS)
	}
	want := []Segment{{0, Useful, 1 * ms, 101 * ms}, {1, Useful, 101 * ms, 201 * ms}}
	if len(cp.Segments) != 2 || cp.Segments[0] != want[0] || cp.Segments[1] != want[1] {
		t.Errorf("segments %+v, want %+v", cp.Segments, want)
	}
	// Useful: 200 ms on the path; per rank within [1, 201] ms rank 0
	// computes 100 ms (then finalizes), rank 1 10 + 100 ms: mean 105 ms.
	if len(cp.Profile) != 1 || cp.Profile[0] != (PathEntry{Useful, 200 * ms, 105 * ms, 95 * ms}) {
		t.Errorf("profile %+v, want (useful) 200 ms, mean 105 ms, imbalance 95 ms", cp.Profile)
	}
	if cp.ImbalanceNS != 95*ms {
		t.Errorf("imbalance %d, want 95 ms", cp.ImbalanceNS)
	}
}

// TestCriticalPathClockSkew: rank 1's receive [11, 95] ms ends before
// rank 0's send starts at 101 ms (clocks 6 ms apart): the path still
// moves to rank 0, at the receive's end (95 ms).
func TestCriticalPathClockSkew(t *testing.T) {
	b := newBuilder(2)
	s := b.send(0, 101*ms, 101*ms)
	r := b.recv(1, 11*ms, 95*ms)
	b.msg(0, s, 1, r, 0)
	b.finalize(0, 101*ms, 195*ms)
	b.finalize(1, 195*ms, 195*ms)
	res, err := Analyze(b.tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{{0, Useful, 1 * ms, 95 * ms}, {1, Useful, 95 * ms, 195 * ms}}
	if segs := res.CriticalPath.Segments; len(segs) != 2 || segs[0] != want[0] || segs[1] != want[1] {
		t.Errorf("segments %+v, want %+v", segs, want)
	}
	if ls := res.Pattern(LateSender).NS; ls != 84*ms {
		t.Errorf("Late Sender %d, want the whole receive (84 ms)", ls)
	}
}

// TestCriticalPathSkewCycle: two Sendrecv calls, each "caused" by the
// other after its own end (skewed clocks): the walk does not loop.
func TestCriticalPathSkewCycle(t *testing.T) {
	b := newBuilder(2)
	a := b.call(0, "MPI_Sendrecv", trace.KindSendrecv, trace.CollNone, 5*ms, 10*ms)
	c := b.call(1, "MPI_Sendrecv", trace.KindSendrecv, trace.CollNone, 5*ms, 10*ms)
	// Each message was "sent" at 12 ms on the other's clock.
	b.tr.Ranks[0].Calls = append(b.tr.Ranks[0].Calls, trace.Call{Name: "MPI_Send", Kind: trace.KindSend, Enter: 12 * ms, Leave: 12 * ms, Root: -1})
	b.tr.Ranks[1].Calls = append(b.tr.Ranks[1].Calls, trace.Call{Name: "MPI_Send", Kind: trace.KindSend, Enter: 12 * ms, Leave: 12 * ms, Root: -1})
	b.msg(0, 2, 1, c, 0)
	b.msg(1, 2, 0, a, 0)
	b.tr.Ranks[0].End, b.tr.Ranks[1].End = 20*ms, 20*ms
	res, err := Analyze(b.tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cp := res.CriticalPath
	if cp.NS != 19*ms || cp.RankNS[0]+cp.RankNS[1] != 19*ms {
		t.Errorf("path %d ns over ranks %v, want 19 ms", cp.NS, cp.RankNS)
	}
}

func TestCriticalPathCollectives(t *testing.T) {
	cases := []struct {
		name   string
		tr     *trace.Trace
		rankNS []int64
		prof   map[string]int64
	}{
		// Each barrier waits for rank 3, which computes 30 ms before it:
		// the whole path (300 ms) is on rank 3, after its init.
		{"barrier", barrier(), []int64{0, 0, 0, 300 * ms}, map[string]int64{Useful: 300 * ms}},
		// Each broadcast waits for the root's 20 ms.
		{"late broadcast", lateBcast(), []int64{200 * ms, 0, 0, 0}, map[string]int64{Useful: 200 * ms}},
		// The root of each reduce waits for the last non-root to enter: of
		// the three that enter together, the first (rank 1).
		{"early reduce", earlyReduce(), []int64{0, 200 * ms, 0, 0}, map[string]int64{Useful: 200 * ms}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(tc.tr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cp := res.CriticalPath
			for r, v := range tc.rankNS {
				if cp.RankNS[r] != v {
					t.Errorf("rank %d on path %d ns, want %d (all %v)", r, cp.RankNS[r], v, cp.RankNS)
				}
			}
			for _, e := range cp.Profile {
				if tc.prof[e.Name] != e.NS {
					t.Errorf("profile %s = %d ns, want %d", e.Name, e.NS, tc.prof[e.Name])
				}
			}
		})
	}
}

func TestCompletionAndLateReceiver(t *testing.T) {
	// 2-rank barrier: rank 0 enters at 1 ms, rank 1 at 5 ms; rank 1 leaves
	// at 6 ms, rank 0 at 9 ms: rank 0 waits 4 ms and completes 3 ms.
	b := newBuilder(2)
	b.coll(0, "MPI_Barrier", trace.CollBarrier, -1, 1*ms, 9*ms)
	b.coll(1, "MPI_Barrier", trace.CollBarrier, -1, 5*ms, 6*ms)
	// A rendezvous send entered at 10 ms, the receive posted at 17 ms,
	// the send left at 18 ms: Late Receiver 7 ms on rank 0.
	s := b.send(0, 10*ms, 18*ms)
	r := b.recv(1, 17*ms, 18*ms)
	b.msg(0, s, 1, r, 0)
	b.tr.Messages[len(b.tr.Messages)-1].Bytes = 64 << 10
	// A send that left before the receive was posted: no wait.
	s = b.send(0, 20*ms, 20*ms+1000)
	r = b.recv(1, 30*ms, 30*ms+1000)
	b.msg(0, s, 1, r, 0)
	b.tr.Messages[len(b.tr.Messages)-1].Bytes = 64 << 10
	// 8 bytes (below the eager limit) cannot wait for the receiver,
	// whatever the times say; an MPI_Ssend of 8 bytes does (2 ms).
	s = b.send(0, 40*ms, 48*ms)
	r = b.recv(1, 45*ms, 48*ms)
	b.msg(0, s, 1, r, 0)
	s = b.call(0, "MPI_Ssend", trace.KindSend, trace.CollNone, 50*ms, 53*ms)
	r = b.recv(1, 52*ms, 53*ms)
	b.msg(0, s, 1, r, 0)
	res, err := Analyze(b.tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkRanks(t, res, []rankWant{
		{WaitBarrier, []int64{4 * ms, 0}},
		{BarrierCompletion, []int64{3 * ms, 0}},
		{LateReceiver, []int64{9 * ms, 0}},
		{LateSender, []int64{0, 0}},
	})
}

func TestWrongOrderDifferentSourceAndWaitall(t *testing.T) {
	// Rank 2 receives from rank 1 (sent at 40 ms) before rank 0's message
	// (sent at 2 ms): the first receive's 38 ms wait is wrong order,
	// different source.
	b := newBuilder(3)
	s0 := b.send(0, 2*ms, 2*ms)
	s1 := b.send(1, 40*ms, 40*ms)
	r1 := b.recv(2, 2*ms, 40*ms)
	r0 := b.recv(2, 40*ms, 40*ms)
	b.msg(1, s1, 2, r1, 0)
	b.msg(0, s0, 2, r0, 0)
	// A Waitall completing two receives: only the latest sender counts.
	i0 := b.call(2, "MPI_Irecv", trace.KindIrecv, trace.CollNone, 41*ms, 41*ms)
	i1 := b.call(2, "MPI_Irecv", trace.KindIrecv, trace.CollNone, 41*ms, 41*ms)
	w := b.call(2, "MPI_Waitall", trace.KindWait, trace.CollNone, 42*ms, 60*ms)
	a0 := b.send(0, 50*ms, 50*ms)
	a1 := b.send(1, 60*ms, 60*ms)
	b.tr.Messages = append(b.tr.Messages,
		trace.Message{Src: 0, Dst: 2, SendCall: a0, SendDone: a0, RecvPost: i0, RecvDone: w},
		trace.Message{Src: 1, Dst: 2, SendCall: a1, SendDone: a1, RecvPost: i1, RecvDone: w})
	// A Test that completed a receive never waits.
	i2 := b.call(2, "MPI_Irecv", trace.KindIrecv, trace.CollNone, 61*ms, 61*ms)
	tst := b.call(2, "MPI_Test", trace.KindWait, trace.CollNone, 62*ms, 63*ms)
	a2 := b.send(0, 70*ms, 70*ms)
	b.tr.Messages = append(b.tr.Messages, trace.Message{Src: 0, Dst: 2, SendCall: a2, SendDone: a2, RecvPost: i2, RecvDone: tst})
	res, err := Analyze(b.tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ls := res.Pattern(LateSender)
	if ls.RankNS[2] != 38*ms+18*ms {
		t.Errorf("Late Sender on rank 2 = %d, want 56 ms", ls.RankNS[2])
	}
	if got := res.Pattern(WrongOrderDiffSource).NS; got != 38*ms {
		t.Errorf("wrong order (different source) = %d, want 38 ms", got)
	}
	if got := res.Pattern(WrongOrderSameSource).NS; got != 0 {
		t.Errorf("wrong order (same source) = %d, want 0", got)
	}
	sites := map[string]int64{}
	for _, s := range ls.Sites {
		sites[s.Name] = s.NS
	}
	if sites["MPI_Recv"] != 38*ms || sites["MPI_Waitall"] != 18*ms || sites["MPI_Test"] != 0 {
		t.Errorf("sites %v, want MPI_Recv 38 ms, MPI_Waitall 18 ms", sites)
	}
}

func TestNxNAndScan(t *testing.T) {
	b := newBuilder(3)
	// Allreduce entered at 2, 4, 8 ms, left at 9, 10, 10 ms: waits 6, 4, 0;
	// completion after the first leave (9 ms): 0, 1, 1 ms.
	for r, e := range []int64{2, 4, 8} {
		b.coll(r, "MPI_Allreduce", trace.CollAllreduce, -1, e*ms, []int64{9, 10, 10}[r]*ms)
	}
	// Scan entered at 20, 12, 15 ms by ranks 0, 1, 2, all left at 21 ms:
	// rank 1 waits for rank 0 (8 ms), rank 2 for rank 0 (5 ms).
	for r, e := range []int64{20, 12, 15} {
		b.coll(r, "MPI_Scan", trace.CollScan, -1, e*ms, 21*ms)
	}
	// A collective without payload (not a barrier) has no pattern.
	for r, e := range []int64{30, 31, 35} {
		b.call(r, "MPI_Allgather", trace.KindCollective, trace.CollAllgather, e*ms, 36*ms)
	}
	res, err := Analyze(b.tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkRanks(t, res, []rankWant{
		{WaitNxN, []int64{6 * ms, 4 * ms, 0}},
		{NxNCompletion, []int64{0, 1 * ms, 1 * ms}},
		{EarlyScan, []int64{0, 8 * ms, 5 * ms}},
	})
}

func TestAnalyzeErrors(t *testing.T) {
	bad := newBuilder(1)
	bad.call(0, "MPI_Send", trace.KindSend, trace.CollNone, 5, 4)
	unordered := newBuilder(1)
	unordered.call(0, "MPI_Send", trace.KindSend, trace.CollNone, 5*ms, 6*ms)
	unordered.call(0, "MPI_Send", trace.KindSend, trace.CollNone, 2*ms, 3*ms)
	for _, tc := range []struct {
		name string
		tr   *trace.Trace
		want string
	}{
		{"empty", &trace.Trace{}, "no ranks"},
		{"leave before enter", bad.tr, "leaves before it enters"},
		{"unordered", unordered.tr, "entry order"},
	} {
		if _, err := Analyze(tc.tr, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	// Messages naming missing calls are left out with a note.
	b := newBuilder(2)
	b.tr.Messages = append(b.tr.Messages, trace.Message{Src: 0, Dst: 1, SendCall: 7, RecvPost: 9, RecvDone: 9})
	res, err := Analyze(b.tr, Options{})
	if err != nil || len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "1 messages") {
		t.Errorf("damaged message: %v, notes %v", err, res)
	}
}

// rankWant is a pattern's expected time per rank.
type rankWant struct {
	id string
	ns []int64
}

// checkRanks asserts each pattern's time per rank.
func checkRanks(t *testing.T, res *Result, wants []rankWant) {
	t.Helper()
	for _, w := range wants {
		p := res.Pattern(w.id)
		for rk, v := range w.ns {
			if p.RankNS[rk] != v {
				t.Errorf("%s rank %d = %d, want %d", w.id, rk, p.RankNS[rk], v)
			}
		}
	}
}

// TestAnalyzeHostile: random traces with out-of-range ranks, calls,
// communicators and roots never make the analysis panic, and the
// critical path always adds up.
func TestAnalyzeHostile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		ranks := 1 + rng.IntN(5)
		tr := &trace.Trace{Ranks: make([]trace.Rank, ranks), Comms: []trace.Comm{{Members: []int32{0, 1}}, {}}}
		for r := range tr.Ranks {
			at := int64(0)
			for range rng.IntN(12) {
				at += rng.Int64N(5 * ms)
				leave := at + rng.Int64N(5*ms)
				tr.Ranks[r].Calls = append(tr.Ranks[r].Calls, trace.Call{
					Name: "MPI_X", Kind: trace.Kind(rng.IntN(12)), Coll: trace.Coll(rng.IntN(13)),
					Enter: at, Leave: leave, Comm: int32(rng.IntN(4)) - 1, Root: int32(rng.IntN(7)) - 1,
					SendBytes: rng.Int64N(3),
				})
				at = leave
			}
			tr.Ranks[r].End = at + rng.Int64N(ms)
		}
		for range rng.IntN(10) {
			tr.Messages = append(tr.Messages, trace.Message{
				Src: int32(rng.IntN(ranks+2)) - 1, Dst: int32(rng.IntN(ranks+2)) - 1,
				SendCall: int32(rng.IntN(14)) - 1, SendDone: int32(rng.IntN(14)) - 1,
				RecvPost: int32(rng.IntN(14)) - 1, RecvDone: int32(rng.IntN(14)) - 1, Bytes: rng.Int64N(1 << 16),
			})
		}
		res, err := Analyze(tr, Options{})
		if err != nil {
			t.Fatalf("trace %d: %v", iter, err)
		}
		var sum int64
		for _, v := range res.CriticalPath.RankNS {
			sum += v
		}
		if sum != res.CriticalPath.NS {
			t.Errorf("trace %d: path %d ns, its ranks add up to %d", iter, res.CriticalPath.NS, sum)
		}
	}
}
