package paraver

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/pop"
)

var update = flag.Bool("update", false, "rewrite the golden files of the writer's tests")

// TestWriteTraceRoundTrip reads the EPOCH traces, writes them back with
// WriteTrace and imports what it wrote: useful, MPI and elapsed time of
// every rank are those of the original trace, exactly, and the trace read
// back is the trace written.
func TestWriteTraceRoundTrip(t *testing.T) {
	for _, p := range []int{1, 2, 4, 8, 16} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			path := epochTrace(t, p)
			orig, tr, err := ImportTrace(path, Options{}, nil)
			if err != nil || tr.Trace == nil {
				t.Fatal(err, tr.Why)
			}
			prefix := filepath.Join(t.TempDir(), "out")
			if err := WriteTrace(prefix, tr.Trace); err != nil {
				t.Fatal(err)
			}
			back, tr2, err := ImportTrace(prefix+".prv", Options{}, nil)
			if err != nil || tr2.Trace == nil {
				t.Fatal(err, tr2.Why)
			}
			g0, g1 := orig.Regions[0].Processes, back.Regions[0].Processes
			if len(g0) != len(g1) {
				t.Fatalf("%d processes back, want %d", len(g1), len(g0))
			}
			for i := range g0 {
				a, b := g0[i], g1[i]
				if a.UsefulNS != b.UsefulNS || a.MPINS != b.MPINS || a.ElapsedNS != b.ElapsedNS || a.OtherNS != b.OtherNS || a.MPICalls != b.MPICalls {
					t.Errorf("rank %d: useful %d MPI %d other %d elapsed %d calls %d, want %d %d %d %d %d", i,
						b.UsefulNS, b.MPINS, b.OtherNS, b.ElapsedNS, b.MPICalls, a.UsefulNS, a.MPINS, a.OtherNS, a.ElapsedNS, a.MPICalls)
				}
			}
			if len(back.MPICalls) != len(orig.MPICalls) {
				t.Errorf("%d MPI call names back, want %d", len(back.MPICalls), len(orig.MPICalls))
			}
			for i := range orig.MPICalls {
				if i < len(back.MPICalls) && !reflect.DeepEqual(back.MPICalls[i], orig.MPICalls[i]) {
					t.Errorf("call profile %+v, want %+v", back.MPICalls[i], orig.MPICalls[i])
				}
			}
			sameTrace(t, tr2.Trace, tr.Trace)
			if p != 2 {
				return
			}
			// The research note's §7C: 2-rank LB 0.9976 and CommE 0.9962.
			rep, err := pop.Compute(back, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			g, _ := rep.Region("Global")
			lb, _ := g.Value(pop.IDMPILoadBalance)
			ce, _ := g.Value(pop.IDMPICommunicationEfficiency)
			if math.Abs(lb-0.9976) > 5e-5 || math.Abs(ce-0.9962) > 5e-5 {
				t.Errorf("LB %.5f CommE %.5f, want 0.9976 0.9962", lb, ce)
			}
		})
	}
}

// pingPong is a 2-rank trace built by hand: Init, three round trips of
// 8 B (eager) and 40000 B (rendezvous) messages, a Bcast from rank 1 and
// an Allreduce, Finalize; rank 1 also has an I/O span after Finalize.
func pingPong() *trace.Trace {
	c := func(name string, k trace.Kind, a, b int64) trace.Call {
		return trace.Call{Name: name, Kind: k, Enter: a, Leave: b, Comm: -1, Root: -1}
	}
	var r0, r1 []trace.Call
	var msgs []trace.Message
	r0 = append(r0, c("MPI_Init", trace.KindInit, 100, 200))
	r1 = append(r1, c("MPI_Init", trace.KindInit, 120, 200))
	t := int64(1000)
	for i, size := range []int64{8, 40000, 8} {
		// rank 0 sends at t, rank 1 receives from t-50; then back.
		r0 = append(r0, c("MPI_Send", trace.KindSend, t, t+30))
		r1 = append(r1, c("MPI_Recv", trace.KindRecv, t-50, t+40))
		msgs = append(msgs, trace.Message{Src: 0, Dst: 1, Tag: int32(i), Bytes: size, SendCall: int32(len(r0) - 1), SendDone: int32(len(r0) - 1),
			RecvPost: int32(len(r1) - 1), RecvDone: int32(len(r1) - 1), LogSend: t, PhysSend: t, LogRecv: t - 50, PhysRecv: t + 40})
		r1 = append(r1, c("MPI_Send", trace.KindSend, t+100, t+120))
		r0 = append(r0, c("MPI_Recv", trace.KindRecv, t+60, t+130))
		msgs = append(msgs, trace.Message{Src: 1, Dst: 0, Tag: int32(i), Bytes: size, SendCall: int32(len(r1) - 1), SendDone: int32(len(r1) - 1),
			RecvPost: int32(len(r0) - 1), RecvDone: int32(len(r0) - 1), LogSend: t + 100, PhysSend: t + 100, LogRecv: t + 60, PhysRecv: t + 130})
		t += 1000
	}
	bc := func(root int32, a, b int64) trace.Call {
		return trace.Call{Name: "MPI_Bcast", Kind: trace.KindCollective, Coll: trace.CollBcast, Enter: a, Leave: b, Comm: 0, Root: 1, SendBytes: 64 * int64(root), RecvBytes: 64 * int64(1-root)}
	}
	r0 = append(r0, bc(0, 4000, 4100))
	r1 = append(r1, bc(1, 4050, 4100))
	ar := trace.Call{Name: "MPI_Allreduce", Kind: trace.KindCollective, Coll: trace.CollAllreduce, Enter: 4200, Leave: 4300, Comm: 0, Root: -1, SendBytes: 8, RecvBytes: 8}
	r0 = append(r0, ar)
	ar.Enter = 4250
	r1 = append(r1, ar)
	r0 = append(r0, c("MPI_Finalize", trace.KindFinalize, 5000, 5100))
	r1 = append(r1, c("MPI_Finalize", trace.KindFinalize, 5000, 5100))
	return &trace.Trace{
		Ranks: []trace.Rank{
			{Calls: r0, Threads: 1, Node: "n1", End: 5200, Spans: []trace.Span{{Kind: SpanOther, Name: "Not created", Enter: 0, Leave: 50}}},
			{Calls: r1, Threads: 1, Node: "n1", End: 5300, Spans: []trace.Span{{Kind: SpanOther, Name: "I/O", Enter: 5100, Leave: 5250}}},
		},
		Comms:    []trace.Comm{{Members: []int32{0, 1}}},
		Messages: msgs,
		End:      5300,
	}
}

// TestWriteTraceGolden writes the ping-pong trace and compares the three
// files with testdata/pingpong.{prv,pcf,row}.golden (go test -update
// rewrites them), then reads the trace back.
func TestWriteTraceGolden(t *testing.T) {
	defer func(f func() time.Time) { writeTime = f }(writeTime)
	writeTime = func() time.Time { return time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC) }
	tr := pingPong()
	prefix := filepath.Join(t.TempDir(), "pingpong")
	if err := WriteTrace(prefix, tr); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".prv", ".pcf", ".row"} {
		got, err := os.ReadFile(prefix + ext)
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "pingpong"+ext+".golden")
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from %s:\n%s", ext, golden, got)
		}
	}
	back, err := ReadTrace(prefix+".prv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Ranks[0].Calls[7].Root != 1 || back.Ranks[0].Calls[7].SendBytes != 0 || back.Ranks[0].Calls[7].RecvBytes != 64 {
		t.Errorf("Bcast back %+v", back.Ranks[0].Calls[7])
	}
	sameTrace(t, back, tr)
}

// TestWriteTraceErrors: a trace WriteTrace cannot write is an error, not
// a panic or a broken file.
func TestWriteTraceErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		edit func(tr *trace.Trace)
		want string
	}{
		{"no ranks", func(tr *trace.Trace) { tr.Ranks = nil }, "no ranks"},
		{"overlapping calls", func(tr *trace.Trace) { tr.Ranks[0].Calls[1].Enter = 150 }, "overlaps the previous one"},
		{"end before last call", func(tr *trace.Trace) { tr.Ranks[1].End = 10 }, "before its last call leaves"},
		{"message rank", func(tr *trace.Trace) { tr.Messages[0].Dst = 9 }, "goes from rank 0 to rank 9"},
		{"message call", func(tr *trace.Trace) { tr.Messages[0].RecvDone = 99 }, "do not exist"},
	} {
		tr := pingPong()
		tc.edit(tr)
		err := WriteTrace(filepath.Join(dir, tc.name), tr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if _, serr := os.Stat(filepath.Join(dir, tc.name+".prv")); serr == nil {
			t.Errorf("%s: a .prv was written", tc.name)
		}
	}
}

// sameTrace compares two traces' calls, messages and communicators.
func sameTrace(t *testing.T, got, want *trace.Trace) {
	t.Helper()
	if len(got.Ranks) != len(want.Ranks) || len(got.Messages) != len(want.Messages) || len(got.Comms) != len(want.Comms) || got.End != want.End {
		t.Fatalf("trace back: %d ranks %d messages %d comms end %d, want %d %d %d %d", len(got.Ranks), len(got.Messages), len(got.Comms), got.End,
			len(want.Ranks), len(want.Messages), len(want.Comms), want.End)
	}
	for r := range want.Ranks {
		a, b := want.Ranks[r], got.Ranks[r]
		if len(a.Calls) != len(b.Calls) || a.End != b.End || len(a.Spans) != len(b.Spans) {
			t.Fatalf("rank %d: %d calls end %d spans %d, want %d %d %d", r, len(b.Calls), b.End, len(b.Spans), len(a.Calls), a.End, len(a.Spans))
		}
		for i := range a.Calls {
			if a.Calls[i] != b.Calls[i] {
				t.Fatalf("rank %d call %d: %+v, want %+v", r, i, b.Calls[i], a.Calls[i])
			}
		}
		for i := range a.Spans {
			if a.Spans[i] != b.Spans[i] {
				t.Fatalf("rank %d span %d: %+v, want %+v", r, i, b.Spans[i], a.Spans[i])
			}
		}
	}
	// Extrae's body is not strictly sorted by logical send; the writer's
	// is: compare in one order.
	order := func(ms []trace.Message) []trace.Message {
		ms = append([]trace.Message(nil), ms...)
		sort.Slice(ms, func(i, j int) bool {
			a, b := ms[i], ms[j]
			if a.LogSend != b.LogSend {
				return a.LogSend < b.LogSend
			}
			if a.Src != b.Src {
				return a.Src < b.Src
			}
			return a.Dst < b.Dst
		})
		return ms
	}
	wm, gm := order(want.Messages), order(got.Messages)
	for i := range wm {
		if wm[i] != gm[i] {
			t.Fatalf("message %d: %+v, want %+v", i, gm[i], wm[i])
		}
	}
}
