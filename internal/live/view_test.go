package live

import (
	"math"
	"testing"
	"time"
)

// readFake writes the live files of two ranks on node1 (Global closed,
// with the given elapsed/useful/MPI ns per rank and MPI_Allreduce calls)
// in a new folder and returns their snapshots.
func readFake(t *testing.T, acc [2][3]uint64, calls [2]uint64) []*Snapshot {
	t.Helper()
	dir := t.TempDir()
	var out []*Snapshot
	for r := 0; r < 2; r++ {
		p := fakeFile(t, dir, r, 2, Running, 0,
			[]fakeThread{{last: 1000, state: stUseful, calls: [2]uint64{calls[r], 0}, ticks: [2]uint64{acc[r][2], 0}}},
			[]fakeRegion{{name: "Global", elapsed: acc[r][0], vis: 1, totUseful: acc[r][1], totMPI: acc[r][2]}})
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		s, err := f.Read()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestView: the run so far and a window between two samples, per rank and
// per node, and the processes' states.
func TestView(t *testing.T) {
	a := readFake(t, [2][3]uint64{{10e9, 10e9, 0}, {10e9, 5e9, 5e9}}, [2]uint64{3, 4})
	b := readFake(t, [2][3]uint64{{11e9, 11e9, 0}, {11e9, 6e9, 5e9}}, [2]uint64{5, 6})
	h := NewHistory(time.Minute)
	h.AddSample(Sample{At: 1e9, Taken: 1e9, Snaps: a, Alive: []bool{true, true}})
	h.AddSample(Sample{At: 2e9, Taken: 2e9, Snaps: b, Alive: []bool{true, false}})
	v, err := h.View(Job{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lb := func(w *WindowView) float64 {
		t.Helper()
		if w.Report == nil {
			t.Fatalf("window %s has no report", w.Name)
		}
		g, _ := w.Report.Region("Global")
		x, ok := g.Value("mpi_load_balance")
		if !ok {
			t.Fatalf("window %s: no load balance", w.Name)
		}
		return x
	}
	// Run: useful 11 and 6 s → LB 8.5/11; window: 1 s each.
	if x := lb(&v.Run); math.Abs(x-8.5/11) > 1e-9 {
		t.Errorf("run LB %v, want %v", x, 8.5/11)
	}
	w, ok := v.Window("1s")
	if !ok {
		t.Fatalf("no window 1s in %+v", v.Windows)
	}
	if x := lb(w); math.Abs(x-1) > 1e-9 || w.SpanNS != 1e9 {
		t.Errorf("window LB %v span %d, want 1 over 1e9 ns", x, w.SpanNS)
	}
	ranks := w.Ranks("Global")
	if len(ranks) != 2 || ranks[0].UsefulNS != 1e9 || ranks[1].UsefulNS != 1e9 || ranks[1].MPINS != 0 {
		t.Errorf("window ranks %+v", ranks)
	}
	nodes := v.Run.Nodes("Global")
	if len(nodes) != 1 || nodes[0].Host != "node1" || len(nodes[0].Ranks) != 2 || nodes[0].UsefulNS != 17e9 || nodes[0].MPINS != 5e9 || nodes[0].CPUs != 2 {
		t.Errorf("run nodes %+v", nodes)
	}
	if c := v.NodeCalls["node1"]; len(c) != 1 || c[0].Name != "MPI_Allreduce" || c[0].Calls != 11 {
		t.Errorf("node calls %+v", c)
	}
	if c := w.M.MPICalls; len(c) != 1 || c[0].Calls != 4 {
		t.Errorf("window calls %+v, want 4 MPI_Allreduce (11 − 7)", c)
	}
	if v.Count(ProcRunning) != 1 || v.Count(ProcEnded) != 1 || v.Procs[1].State != ProcEnded {
		t.Errorf("states %+v", v.Procs)
	}
	if _, ok := v.Window("10s"); ok {
		t.Errorf("a window that was not asked for")
	}
}

// TestWindowChoice: a window starts at the sample closest to its length
// before the newest, at most the oldest; one longer than the run is the
// run.
func TestWindowChoice(t *testing.T) {
	snaps := [][]*Snapshot{
		readFake(t, [2][3]uint64{{10e9, 10e9, 0}, {10e9, 5e9, 5e9}}, [2]uint64{1, 1}),
		readFake(t, [2][3]uint64{{11e9, 11e9, 0}, {11e9, 5e9, 6e9}}, [2]uint64{2, 2}),
		readFake(t, [2][3]uint64{{12e9, 12e9, 0}, {12e9, 6e9, 6e9}}, [2]uint64{3, 3}),
	}
	h := NewHistory(time.Minute)
	for i, s := range snaps {
		h.AddSample(Sample{At: int64(i) * 1e9, Taken: int64(i) * 1e9, Snaps: s, Alive: []bool{true, true}})
	}
	for _, c := range []struct {
		d          time.Duration
		span       int64
		useful1    int64 // rank 1's useful time in the window
		wantReport bool
	}{
		{time.Second, 1e9, 1e9, true},
		{1400 * time.Millisecond, 1e9, 1e9, true}, // the closest
		{1600 * time.Millisecond, 2e9, 1e9, true},
		{5 * time.Second, 2e9, 1e9, true}, // the oldest sample
		{time.Minute, 12e9, 6e9, true},    // longer than the run: the run
	} {
		v, err := h.View(Job{}, c.d)
		if err != nil {
			t.Fatal(err)
		}
		w := v.Windows[0]
		if w.Name != WindowName(c.d) || w.SpanNS != c.span || (w.Report != nil) != c.wantReport {
			t.Errorf("%v: window %s span %d report %v, want span %d", c.d, w.Name, w.SpanNS, w.Report != nil, c.span)
			continue
		}
		if r := w.Ranks("Global"); len(r) != 2 || r[1].UsefulNS != c.useful1 {
			t.Errorf("%v: ranks %+v, want rank 1 useful %d", c.d, r, c.useful1)
		}
	}
	_, series, err := h.Series(Job{})
	if err != nil || len(series) != 2 || series[0].StartNS != 0 || series[1].StartNS != 1e9 {
		t.Fatalf("series %+v, %v", series, err)
	}
	g, _ := series[1].Report.Region("Global")
	if x, _ := g.Value("mpi_load_balance"); math.Abs(x-1) > 1e-9 {
		t.Errorf("second interval LB %v, want 1 (1 s useful each)", x)
	}
}

// TestHistoryKeep: the history keeps one sample at or before its length.
func TestHistoryKeep(t *testing.T) {
	h := NewHistory(2 * time.Second)
	for i := 0; i < 5; i++ {
		h.AddSample(Sample{At: int64(i) * 1e9})
	}
	s := h.Samples()
	if len(s) != 3 || s[0].At != 2e9 || s[2].At != 4e9 {
		t.Errorf("kept %+v, want the samples at 2, 3, 4 s", s)
	}
	if _, err := NewHistory(time.Second).View(Job{}); err == nil {
		t.Errorf("a view of an empty history")
	}
}

func TestParseWindow(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		name string
		bad  bool
	}{
		{"", 0, "run", false},
		{"run", 0, "run", false},
		{"60s", time.Minute, "60s", false},
		{"1m", time.Minute, "60s", false},
		{"10", 10 * time.Second, "10s", false},
		{"250ms", 250 * time.Millisecond, "0.25s", false},
		{"-5s", 0, "", true},
		{"soon", 0, "", true},
	} {
		d, err := ParseWindow(c.in)
		if (err != nil) != c.bad || d != c.want || (!c.bad && WindowName(d) != c.name) {
			t.Errorf("ParseWindow(%q) = %v, %v (name %q), want %v, %q, error %v", c.in, d, err, WindowName(d), c.want, c.name, c.bad)
		}
	}
}

func TestSessionName(t *testing.T) {
	for in, want := range map[string]string{
		"/dev/shm/popmon-0/run-123": "run-123",
		"/tmp/x/live/":              "live",
		"/tmp/a b\"c":               "a_b_c",
		"":                          "job",
	} {
		if got := SessionName(in); got != want {
			t.Errorf("SessionName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestViewNewestJob: of two jobs run one after the other in one live
// folder, the view holds the newest (a rank of the first one, finalized,
// must not clash with the second's).
func TestViewNewestJob(t *testing.T) {
	first := readFake(t, [2][3]uint64{{10e9, 10e9, 0}, {10e9, 10e9, 0}}, [2]uint64{1, 1})
	second := readFake(t, [2][3]uint64{{10e9, 10e9, 0}, {10e9, 5e9, 5e9}}, [2]uint64{1, 1})
	var snaps []*Snapshot
	for _, s := range first {
		s.State = Finalized
		snaps = append(snaps, s)
	}
	for _, s := range second {
		s.PID += 100
		s.InitTick += 5000 // later
		snaps = append(snaps, s)
	}
	h := NewHistory(time.Minute)
	h.AddSample(Sample{At: 1e9, Taken: 1e9, Snaps: snaps, Alive: []bool{false, false, true, true}})
	v, err := h.View(Job{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Procs) != 2 || v.Procs[0].PID != 1100 || v.Count(ProcRunning) != 2 {
		t.Errorf("processes %+v, want the second job's two", v.Procs)
	}
	g, _ := v.Run.Report.Region("Global")
	if x, _ := g.Value("mpi_load_balance"); math.Abs(x-0.75) > 1e-9 {
		t.Errorf("LB %v, want the second job's 0.75", x)
	}
}
