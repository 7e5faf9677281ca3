package live

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// writeCopy copies the live file at src to dst as the node agent does.
func writeCopy(t *testing.T, src, dst string, alive bool) {
	t.Helper()
	f, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteCopy(dst, 2*time.Second, 7, func() bool { return alive }); err != nil {
		t.Fatal(err)
	}
}

// readSnap reads the live file (or copy) at path once.
func readSnap(t *testing.T, path string) *Snapshot {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCopyReadsBack: a node copy reads back as the file it copies, with
// the copier's moment and the process's liveness added; only the records
// in use take room.
func TestCopyReadsBack(t *testing.T) {
	dir := t.TempDir()
	src := fakeFile(t, dir, 1, 2, Running, 0,
		[]fakeThread{{last: 5000, state: stUseful, useful: 2500, mpi: 1500, calls: [2]uint64{3, 1}, ticks: [2]uint64{1500, 20}},
			{last: 4000, state: stMPI, useful: 700, mpi: 300, slot: 1}},
		[]fakeRegion{{name: "Global", open: true, start: 1000}, {name: "phase", elapsed: 2000, vis: 1, totUseful: 1500, totMPI: 500}})
	for _, alive := range []bool{true, false} {
		dst := filepath.Join(dir, "nodes", "node1", "copy.live")
		before := time.Now().UnixNano()
		writeCopy(t, src, dst, alive)
		orig, cp := readSnap(t, src), readSnap(t, dst)
		c := cp.Copy
		if c == nil || c.Alive != alive || c.Every != 2*time.Second || c.RealNS < before || c.RealNS > time.Now().UnixNano() {
			t.Fatalf("copy info %+v, want alive %v, every 2s, written now", c, alive)
		}
		if orig.Copy != nil {
			t.Error("a live file read as a copy")
		}
		if cp.NS < orig.NS-int64(time.Second) || cp.NS > orig.NS {
			t.Errorf("copy taken at %d ns, the original read at %d", cp.NS, orig.NS)
		}
		cp.Copy, cp.Tick, cp.NS = nil, orig.Tick, orig.NS
		if !reflect.DeepEqual(orig, cp) {
			t.Errorf("copy reads back as\n%+v\nwant\n%+v", cp, orig)
		}
		fi, err := os.Stat(dst)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("copy mode %v, want 0600", fi.Mode().Perm())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "nodes", "node1", ".copy-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestCopyHostile: a truncated copy, or one whose copy record cannot be
// one, is refused.
func TestCopyHostile(t *testing.T) {
	dir := t.TempDir()
	src := fakeFile(t, dir, 0, 1, Running, 0, []fakeThread{{last: 1}}, []fakeRegion{{name: "Global"}})
	dst := filepath.Join(dir, "c", "node1.0.live")
	writeCopy(t, src, dst, true)
	raw, _ := os.ReadFile(dst)
	rec := 4096 - copyRecordSize
	r := copyRecord{}
	edit := func(off uintptr, v uint32) []byte {
		b := append([]byte(nil), raw...)
		binary.LittleEndian.PutUint32(b[rec+int(off):], v)
		return b
	}
	refused(t, []refusal{
		{"truncated", raw[:namesOff+4], "beyond the end"},
		{"header only", raw[:2000], "not the size"},
		{"no interval", edit(unsafe.Offsetof(r.EveryMS), 0), "copy record"},
		{"interval of days", edit(unsafe.Offsetof(r.EveryMS), 1<<31), "copy record"},
		{"alive neither 0 nor 1", edit(unsafe.Offsetof(r.Alive), 2), "copy record"},
	})
}

// TestFreshestSource: the sampler takes a process's local live file over a
// copy of it, reads the processes it only has copies of from them, and
// takes a copy's liveness from the copy, unless the copy is stale.
func TestFreshestSource(t *testing.T) {
	local, session := t.TempDir(), t.TempDir()
	copies := filepath.Join(session, "nodes")
	// Rank 0: an old copy (useful 100), then the local file moved on (900).
	th := func(useful uint64) []fakeThread { return []fakeThread{{last: 5000, state: stMPI, useful: useful}} }
	regions := []fakeRegion{{name: "Global", open: true, start: 1000}}
	p0 := fakeFile(t, local, 0, 3, Running, 0, th(100), regions)
	writeCopy(t, p0, filepath.Join(copies, "node1", filepath.Base(p0)), true)
	fakeFile(t, local, 0, 3, Running, 0, th(900), regions)
	// Rank 1: a copy only, alive. Rank 2: a copy only, alive but stale.
	tmp := t.TempDir()
	p1 := fakeFile(t, tmp, 1, 3, Running, 0, th(200), regions)
	writeCopy(t, p1, filepath.Join(copies, "node1", filepath.Base(p1)), true)
	p2 := fakeFile(t, tmp, 2, 3, Running, 0, th(300), regions)
	stale := filepath.Join(copies, "node1", filepath.Base(p2))
	writeCopy(t, p2, stale, true)
	b, _ := os.ReadFile(stale)
	binary.LittleEndian.PutUint64(b[4096-copyRecordSize+int(unsafe.Offsetof(copyRecord{}.RealNS)):], uint64(time.Now().Add(-time.Minute).UnixNano()))
	os.WriteFile(stale, b, 0o600)

	s, err := ScanSession(local, copies)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[int]struct {
		useful       uint64
		copied, live bool
	}{0: {900, false, false}, 1: {200, true, true}, 2: {300, true, false}}
	got := 0
	for _, p := range s.procs {
		w, ok := want[p.final.Rank]
		if !ok {
			t.Fatalf("rank %d", p.final.Rank)
		}
		got++
		if u := p.final.Threads[0].Acc[stUseful]; u != w.useful || p.copied != w.copied || (p.final.Copy != nil) != w.copied || p.alive != w.live {
			t.Errorf("rank %d: useful %d copied %v alive %v, want %d %v %v", p.final.Rank, u, p.copied, p.alive, w.useful, w.copied, w.live)
		}
	}
	if got != 3 {
		t.Fatalf("%d processes, want 3", got)
	}
	// A copy's accounts hold up to the copier's moment, when it saw the
	// process alive; the local file of another node's process (the fake
	// files are node1's) cannot be checked from here: its own accounts end.
	procs, _, err := s.Procs(JobEnd{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		want, end := p.Final.LastTransition(), "killed"
		if p.Final.Copy != nil {
			want = p.Final.Tick
		}
		if p.Snap.Rank == 1 {
			end = "running"
		}
		if p.Cut != want || p.End != end {
			t.Errorf("rank %d: cut %d end %q, want %d %s", p.Snap.Rank, p.Cut, p.End, want, end)
		}
	}
	// Without the local folder, the copies still make a job.
	s2, err := ScanSession(filepath.Join(local, "gone"), copies)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, n := s2.Ended(); n != 3 {
		t.Errorf("%d processes from the copies alone, want 3", n)
	}
	if _, err := ScanSession(filepath.Join(local, "gone"), filepath.Join(session, "none")); err == nil {
		t.Error("no live folder and no copies: no error")
	}
}
