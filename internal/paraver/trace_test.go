package paraver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/trace"
)

// epochDir holds the EPOCH Extrae traces (a copy of shared/data/pypop).
const epochDir = "testdata"

// epochTrace returns the path of the EPOCH trace of p processes, skipping
// the test when the shared data is not there.
func epochTrace(t testing.TB, p int) string {
	t.Helper()
	path := filepath.Join(epochDir, fmt.Sprintf("epoch_%dproc.prv.gz", p))
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		t.Skipf("EPOCH traces not present at %s", epochDir)
	}
	return path
}

// TestReadTraceEPOCH checks the trace of the EPOCH runs against the
// counts of the research note (§2.1): calls per kind, messages, and that
// every communication record found its calls.
func TestReadTraceEPOCH(t *testing.T) {
	for _, tc := range []struct {
		p, comms, msgs int
	}{
		{1, 1, 576}, {2, 3, 1156}, {4, 5, 2556}, {8, 9, 5100}, {16, 17, 10556},
	} {
		t.Run(fmt.Sprint(tc.p), func(t *testing.T) {
			tr, err := ReadTrace(epochTrace(t, tc.p), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Ranks) != tc.p || len(tr.Comms) != tc.comms || len(tr.Messages) != tc.msgs {
				t.Fatalf("ranks %d comms %d messages %d, want %d %d %d (notes %q)", len(tr.Ranks), len(tr.Comms), len(tr.Messages), tc.p, tc.comms, tc.msgs, tr.Notes)
			}
			if len(tr.Notes) != 0 {
				t.Errorf("notes %q, want none", tr.Notes)
			}
			if len(tr.Comms[0].Members) != tc.p {
				t.Errorf("world has %d members", len(tr.Comms[0].Members))
			}
			kinds := map[string]int{}
			for _, r := range tr.Ranks {
				for i, c := range r.Calls {
					kinds[c.Name]++
					if c.Leave < c.Enter || i > 0 && c.Enter < r.Calls[i-1].Leave {
						t.Fatalf("call %d %+v out of order", i, c)
					}
					if c.Kind == trace.KindCollective && c.Comm != 0 {
						t.Fatalf("collective %+v not on the world", c)
					}
				}
				if r.End < r.Calls[len(r.Calls)-1].Leave {
					t.Errorf("rank end %d before its last call", r.End)
				}
			}
			if kinds["MPI_Init"] != tc.p || kinds["MPI_Finalize"] != tc.p {
				t.Errorf("calls %v: want one MPI_Init and MPI_Finalize per rank", kinds)
			}
			for _, m := range tr.Messages {
				s := tr.Ranks[m.Src].Calls[m.SendCall]
				r := tr.Ranks[m.Dst].Calls[m.RecvPost]
				if s.Enter != m.LogSend || r.Enter != m.LogRecv || tr.Ranks[m.Dst].Calls[m.RecvDone].Leave != m.PhysRecv {
					t.Fatalf("message %+v attached to %+v and %+v", m, s, r)
				}
			}
		})
	}
}

// TestReadTraceHostile checks the trace's own failure modes: bad
// communicator lines are errors naming the line, a trace over the memory
// budget still imports (without its trace, saying why), records that fit
// no call are left out with a note, and tasks without records leave no
// trace to replay.
func TestReadTraceHostile(t *testing.T) {
	const head = "#Paraver (d):100_ns:1(2):1:2(1:1,1:1),1\n"
	body := "1:1:1:1:1:0:100:1\n1:2:1:2:1:0:100:1\n" +
		"2:1:1:1:1:10:50000001:1\n2:2:1:2:1:5:50000001:2\n" +
		"3:1:1:1:1:10:10:2:1:2:1:5:20:8:0\n" +
		"3:1:1:1:1:50:50:2:1:2:1:5:20:8:0\n" + // logical send outside any call
		"2:1:1:1:1:20:50000001:0\n2:2:1:2:1:20:50000001:0\n"
	write := func(t *testing.T, text string) string {
		path := filepath.Join(t.TempDir(), "t.prv")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name, comm, want string
	}{
		{"too many tasks", "c:1:1:3:1:2:1\n", "communicator 1 has 3 tasks; the application has 2"},
		{"task out of range", "c:1:1:2:1:7\n", "communicator 1 names task 7"},
		{"count mismatch", "c:1:1:2:1\n", "communicator 1 announces 2 tasks and lists 1"},
		{"malformed", "c:1:x\n", "malformed communicator line"},
		{"twice", "c:1:1:2:1:2\nc:1:1:2:1:2\n", "communicator 1 is defined twice"},
	} {
		_, err := ReadTrace(write(t, head+tc.comm+body), Options{})
		line := fmt.Sprintf("line %d", strings.Count(tc.comm, "\n")+1) // the last c: line
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), line) {
			t.Errorf("%s: %v, want %q on %s", tc.name, err, tc.want, line)
		}
	}
	tr, err := ReadTrace(write(t, head+"c:1:1:2:1:2\n"+body), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Messages) != 1 || len(tr.Notes) != 1 || !strings.Contains(tr.Notes[0], "1 communication record(s) fall outside the MPI calls") {
		t.Errorf("messages %+v, notes %q", tr.Messages, tr.Notes)
	}
	saved := maxTraceItems
	defer func() { maxTraceItems = saved }()
	maxTraceItems = 3
	m, res, err := ImportTrace(write(t, head+"c:1:1:2:1:2\n"+body), Options{}, nil)
	if err != nil || m == nil || res.Trace != nil || !strings.Contains(res.Why, "more than 3 MPI calls and messages") {
		t.Errorf("over budget: %v %+v", err, res)
	}
	maxTraceItems = saved
	_, err = ReadTrace(write(t, "#Paraver (d):100_ns:1(2):1:2(1:1,1:1),0\n1:1:1:1:1:0:100:1\n"), Options{SkipBad: true})
	if err == nil || !strings.Contains(err.Error(), "1 of the 2 tasks have no record") {
		t.Errorf("missing task: %v", err)
	}
}

// FuzzReadTrace reads arbitrary traces into the trace model, replays
// nothing but writes them back: it must never panic, and what it writes
// must read back to the same trace.
func FuzzReadTrace(f *testing.F) {
	for _, h := range traceHeads(f, 40) {
		f.Add(h)
	}
	f.Add([]byte("#Paraver (d):100_ns:1(2):1:2(1:1,1:1),1\nc:1:1:2:1:2\n1:1:1:1:1:0:100:1\n1:2:1:2:1:0:100:1\n" +
		"2:1:1:1:1:10:50000001:41\n2:2:1:2:1:5:50000001:41\n3:1:1:1:1:10:10:2:1:2:1:5:20:40000:0\n3:2:1:2:1:5:5:1:1:1:1:10:20:40000:0\n" +
		"2:1:1:1:1:20:50000001:0\n2:2:1:2:1:20:50000001:0\n2:1:1:1:1:30:50000002:8:50100004:1\n2:2:1:2:1:40:50000002:8:50100004:1:50100003:1\n" +
		"2:1:1:1:1:50:50000002:0\n2:2:1:2:1:50:50000002:0\n"))
	defer smallBuffers()()
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, prv []byte) {
		path := filepath.Join(dir, "in.prv")
		if err := os.WriteFile(path, prv, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := ReadTrace(path, Options{SkipBad: true})
		if err != nil {
			return
		}
		for r, rk := range tr.Ranks {
			for i, c := range rk.Calls {
				if c.Leave < c.Enter || i > 0 && c.Enter < rk.Calls[i-1].Enter || c.Comm >= int32(len(tr.Comms)) {
					t.Fatalf("rank %d call %d: %+v", r, i, c)
				}
			}
		}
		for _, m := range tr.Messages {
			if m.RecvDone < m.RecvPost || int(m.SendCall) >= len(tr.Ranks[m.Src].Calls) || int(m.RecvDone) >= len(tr.Ranks[m.Dst].Calls) {
				t.Fatalf("message %+v", m)
			}
		}
		prefix := filepath.Join(dir, "out")
		if err := WriteTrace(prefix, tr); err != nil {
			return // overlapping calls of an unsorted trace: refused
		}
		back, err := ReadTrace(prefix+".prv", Options{})
		if err != nil {
			t.Fatalf("a written trace does not read back: %v", err)
		}
		if len(back.Ranks) != len(tr.Ranks) || len(back.Messages) != len(tr.Messages) {
			t.Fatalf("read back %d ranks %d messages, wrote %d %d", len(back.Ranks), len(back.Messages), len(tr.Ranks), len(tr.Messages))
		}
	})
}

// TestAttachTimes checks which call a record's time belongs to: an entry
// time to the call entered then (also when the previous call left at that
// very time), an exit time to the call left then, nothing between calls.
func TestAttachTimes(t *testing.T) {
	calls := []trace.Call{{Enter: 10, Leave: 20}, {Enter: 20, Leave: 30}, {Enter: 30, Leave: 30}, {Enter: 40, Leave: 50}}
	for _, tc := range []struct {
		t             int64
		entered, left int32
	}{
		{5, -1, -1},
		{10, 0, 0},
		{15, 0, 0},
		{20, 1, 0},
		{30, 2, 1},
		{35, -1, -1},
		{40, 3, 3},
		{50, 3, 3},
		{55, -1, -1},
	} {
		if got := entered(calls, tc.t); got != tc.entered {
			t.Errorf("entered(%d) = %d, want %d", tc.t, got, tc.entered)
		}
		if got := left(calls, tc.t, 0); got != tc.left {
			t.Errorf("left(%d) = %d, want %d", tc.t, got, tc.left)
		}
	}
	// A completion is searched from the post on: never before it.
	if got := left(calls, 20, 1); got != 1 {
		t.Errorf("left(20) from call 1 = %d, want 1", got)
	}
}
