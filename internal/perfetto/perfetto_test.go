package perfetto

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/popmon/popmon/internal/trace"
)

const ms = int64(1_000_000)

// pingPong is 2 ranks exchanging n messages of 8 bytes (rank 0 sends at
// 10 ms·k, rank 1 answers), with a user region on rank 0 and an OpenMP
// region on thread 1 of rank 1.
func pingPong(n int) *trace.Trace {
	tr := &trace.Trace{Ranks: make([]trace.Rank, 2), Comms: []trace.Comm{{Members: []int32{0, 1}}}, Source: "test"}
	call := func(r int, name string, k trace.Kind, enter, leave int64) int32 {
		tr.Ranks[r].Calls = append(tr.Ranks[r].Calls, trace.Call{Name: name, Kind: k, Enter: enter, Leave: leave, Root: -1})
		return int32(len(tr.Ranks[r].Calls) - 1)
	}
	for r := range 2 {
		call(r, "MPI_Init", trace.KindInit, 0, 1*ms)
	}
	for k := range int64(n) {
		t := 10 * ms * (k + 1)
		s := call(0, "MPI_Send", trace.KindSend, t, t+100)
		rv := call(1, "MPI_Recv", trace.KindRecv, t-2*ms, t+200)
		tr.Messages = append(tr.Messages, trace.Message{Src: 0, Dst: 1, Tag: 7, Bytes: 8, SendCall: s, SendDone: s, RecvPost: rv, RecvDone: rv})
		s = call(1, "MPI_Send", trace.KindSend, t+1*ms, t+1*ms+100)
		rv = call(0, "MPI_Recv", trace.KindRecv, t+1000, t+1*ms+200)
		tr.Messages = append(tr.Messages, trace.Message{Src: 1, Dst: 0, Tag: 8, Bytes: 8, SendCall: s, SendDone: s, RecvPost: rv, RecvDone: rv})
	}
	end := 10*ms*int64(n+1) + 5*ms
	for r := range 2 {
		call(r, "MPI_Finalize", trace.KindFinalize, end-1*ms, end)
		tr.Ranks[r].End = end
	}
	tr.Ranks[0].Spans = []trace.Span{{Kind: "region", Name: "solve", Enter: 5 * ms, Leave: end - 2*ms}}
	tr.Ranks[1].Spans = []trace.Span{{Kind: "omp", Name: "x.c:12", Thread: 1, Enter: 3 * ms, Leave: 4 * ms}}
	tr.End = end
	return tr
}

type file struct {
	TraceEvents []Event        `json:"traceEvents"`
	Other       map[string]any `json:"otherData"`
}

// check is the schema test: valid JSON, every X has a dur ≥ 0, M name
// records for every process shown, and one s/f flow pair per message,
// each end inside an MPI slice of its rank (f bound to it by bp "e").
// It returns the events.
func check(t *testing.T, tr *trace.Trace) []Event {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatalf("not valid JSON:\n%s", buf.String())
	}
	var f file
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	named := map[int32]bool{}
	pids := map[int32]bool{}
	starts, finishes := map[int64]Event{}, map[int64]Event{}
	var slices []Event
	for _, e := range f.TraceEvents {
		pids[e.PID] = true
		switch e.Ph {
		case "M":
			if e.Name == "process_name" {
				named[e.PID] = true
			}
		case "X":
			if e.Dur == nil || *e.Dur < 0 {
				t.Errorf("X event %s at %d without dur ≥ 0", e.Name, e.TS)
			}
			slices = append(slices, e)
		case "s":
			if _, dup := starts[e.ID]; dup {
				t.Errorf("flow %d starts twice", e.ID)
			}
			starts[e.ID] = e
		case "f":
			if e.BP != "e" {
				t.Errorf("flow end %d without bp e", e.ID)
			}
			if _, dup := finishes[e.ID]; dup {
				t.Errorf("flow %d ends twice", e.ID)
			}
			finishes[e.ID] = e
		default:
			t.Errorf("unexpected phase %q", e.Ph)
		}
	}
	for pid := range pids {
		if !named[pid] {
			t.Errorf("pid %d has no process_name record", pid)
		}
	}
	if len(starts) != len(tr.Messages) || len(finishes) != len(tr.Messages) {
		t.Errorf("%d flow starts and %d ends for %d messages", len(starts), len(finishes), len(tr.Messages))
	}
	inside := func(p Event) bool {
		for _, s := range slices {
			if s.Cat == "mpi" && s.PID == p.PID && s.TID == p.TID && s.TS <= p.TS && p.TS <= s.TS+*s.Dur {
				return true
			}
		}
		return false
	}
	for id, s := range starts {
		f, ok := finishes[id]
		if !ok {
			t.Errorf("flow %d has no end", id)
		}
		if !inside(s) || !inside(f) {
			t.Errorf("flow %d ends are not inside MPI slices", id)
		}
	}
	return f.TraceEvents
}

func count(evs []Event, ph, name string) int {
	n := 0
	for _, e := range evs {
		if e.Ph == ph && (name == "" || e.Name == name) {
			n++
		}
	}
	return n
}

func TestWrite(t *testing.T) {
	evs := check(t, pingPong(3))
	for _, c := range []struct {
		ph, name string
		want     int
	}{
		{"X", "MPI_Send", 6},
		{"X", "MPI_Recv", 6},
		{"X", "MPI_Init", 2},
		{"X", "solve", 1},
		{"X", "x.c:12", 1},
		{"M", "process_name", 2},
		{"s", "", 6},
		{"f", "", 6},
	} {
		if got := count(evs, c.ph, c.name); got != c.want {
			t.Errorf("%s %s: %d events, want %d", c.ph, c.name, got, c.want)
		}
	}
	for _, e := range evs {
		switch {
		case e.Ph == "X" && e.Name == "MPI_Send" && e.PID == 0 && e.TS == Micros(10*ms):
			if e.Args["peer"] != 1.0 || e.Args["bytes"] != 8.0 || e.Args["tag"] != 7.0 || e.Args["comm"] != 0.0 || *e.Dur != 100 {
				t.Errorf("first send: args %v dur %d, want peer 1, 8 bytes, tag 7, comm 0, 100 ns", e.Args, *e.Dur)
			}
		case e.Ph == "X" && e.Name == "Useful" && e.PID == 0 && e.TS == Micros(1*ms):
			if *e.Dur != Micros(9*ms) {
				t.Errorf("first useful burst of rank 0 lasts %d ns, want 9 ms", *e.Dur)
			}
		case e.Name == "solve" && e.TID != SpanTrack, e.Name == "x.c:12" && e.TID != SpanTrack+1:
			t.Errorf("span %s on tid %d", e.Name, e.TID)
		}
	}
}

// TestWriteDamaged: messages naming calls the trace lacks get no arrow,
// and the rest is written.
func TestWriteDamaged(t *testing.T) {
	tr := pingPong(1)
	tr.Messages = append(tr.Messages,
		trace.Message{Src: 0, Dst: 1, SendCall: 1, RecvDone: 99},
		trace.Message{Src: 5, Dst: 1, SendCall: 1, RecvDone: 1},
		trace.Message{Src: 0, Dst: -1, SendCall: -3, RecvDone: 1})
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	var f file
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	if s, e := count(f.TraceEvents, "s", ""), count(f.TraceEvents, "f", ""); s != 2 || e != 2 {
		t.Errorf("%d flow starts, %d ends; want the 2 intact messages' arrows", s, e)
	}
}

func TestMicros(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{{0, "0.000"}, {1, "0.001"}, {1234567, "1234.567"}, {-1500, "-1.500"}} {
		b, _ := Micros(c.ns).MarshalJSON()
		if string(b) != c.want {
			t.Errorf("%d ns → %s, want %s", c.ns, b, c.want)
		}
		var m Micros
		if err := m.UnmarshalJSON(b); err != nil || int64(m) != c.ns {
			t.Errorf("%s → %d (%v), want %d", b, m, err, c.ns)
		}
	}
}

func TestWriteFiltered(t *testing.T) {
	tr := pingPong(3)
	cases := []struct {
		name     string
		sel      trace.Selection
		pids     int
		messages int
		sends    int
	}{
		// Rank 1 alone: no message has both ends.
		{"rank 1", trace.Selection{Ranks: []int32{1}}, 1, 0, 3},
		// 15 to 25 ms: the second exchange only (sends at 20 and 21 ms).
		{"window", trace.Selection{From: 15 * ms, To: 25 * ms}, 2, 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub, err := tr.Filter(c.sel)
			if err != nil {
				t.Fatal(err)
			}
			if len(sub.Messages) != c.messages {
				t.Errorf("%d messages, want %d", len(sub.Messages), c.messages)
			}
			evs := check(t, sub)
			if got := count(evs, "M", "process_name"); got != c.pids {
				t.Errorf("%d processes, want %d", got, c.pids)
			}
			if got := count(evs, "X", "MPI_Send"); got != c.sends {
				t.Errorf("%d sends, want %d", got, c.sends)
			}
		})
	}
}
