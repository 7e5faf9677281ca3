package live

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// Construct records of the synthetic layout: codeptr, 8 counts, address,
// module (64 bytes).
const (
	omSize      = 8 + 8*8 + 8 + 64
	omModuleMax = 64
	omSlots     = 8
)

// withConstructs appends an OpenMP construct table to the fake live file at
// path: slots[i] fills slot i (Executions 0: empty); index lists the
// entries of the used-slot index as the library writes them (slot + 1).
// It also records the counters' state.
func withConstructs(t *testing.T, path string, slots []Construct, index []uint32, ctr CounterState) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ompOff := (len(b) + 4095) / 4096 * 4096
	idxOff := ompOff + omSize*omSlots
	b = append(b, make([]byte, idxOff+4*omSlots-len(b))...)
	var h header
	set := func(field unsafe.Pointer, v uint32) {
		binary.LittleEndian.PutUint32(b[uintptr(field)-uintptr(unsafe.Pointer(&h)):], v)
	}
	set(unsafe.Pointer(&h.OMPOff), uint32(ompOff))
	set(unsafe.Pointer(&h.OMPSize), omSize)
	set(unsafe.Pointer(&h.OMPMax), omSlots)
	for i, p := range []*uint32{&h.OmCodeptr, &h.OmExecutions, &h.OmThreads, &h.OmWall, &h.OmUseful,
		&h.OmImbalance, &h.OmSync, &h.OmLimited, &h.OmMgmt, &h.OmAddress} {
		set(unsafe.Pointer(p), uint32(8*i))
	}
	set(unsafe.Pointer(&h.OmModule), 80)
	set(unsafe.Pointer(&h.OmModuleMax), omModuleMax)
	set(unsafe.Pointer(&h.OMPUsed), uint32(len(index)))
	set(unsafe.Pointer(&h.OMPIndexOff), uint32(idxOff))
	if ctr.Available {
		set(unsafe.Pointer(&h.CtrAvailable), 1)
	}
	copy(b[unsafe.Offsetof(h.CtrMode):], ctr.Mode)
	copy(b[unsafe.Offsetof(h.CtrMethod):], ctr.Method)
	copy(b[unsafe.Offsetof(h.CtrReason):], ctr.Reason)
	for i, c := range slots {
		o := ompOff + i*omSize
		if c.Executions == 0 {
			continue
		}
		for k, v := range []uint64{0x4000 + uint64(i), c.Executions, c.Threads, c.Wall, c.Useful, c.Imbalance, c.Sync, c.Limited, c.Mgmt, c.Address} {
			binary.LittleEndian.PutUint64(b[o+8*k:], v)
		}
		copy(b[o+80:o+80+omModuleMax], c.Module)
	}
	for k, v := range index {
		binary.LittleEndian.PutUint32(b[idxOff+4*k:], v)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConstructsAndCounters: the reader takes exactly the slots the index
// names (skipping an entry being written, a duplicate and one out of
// range), and Assemble merges the processes' constructs by module and
// address and keeps the counters' state.
func TestConstructsAndCounters(t *testing.T) {
	dir := t.TempDir()
	a := Construct{Module: "/bin/app", Address: 0x1234, Executions: 3, Threads: 4, Wall: 300, Useful: 1000, Imbalance: 100, Sync: 50, Limited: 20, Mgmt: 30}
	b := Construct{Module: "/lib/libx.so", Address: 0x99, Executions: 1, Threads: 2, Wall: 10, Useful: 15}
	unavailable := CounterState{Mode: "auto", Reason: "counters unavailable: no PMU (perf_event_open: ENOENT)"}
	var files []string
	for rank := 0; rank < 2; rank++ {
		p := fakeFile(t, dir, rank, 2, Running, 0, []fakeThread{{last: 6000, state: stUseful, useful: 5000}},
			[]fakeRegion{{name: "Global", open: true, start: 1000}})
		slots := make([]Construct, omSlots)
		slots[5], slots[2] = a, b
		ctr := CounterState{Mode: "auto", Available: true, Method: "rdpmc"}
		if rank == 1 {
			ctr = unavailable
		}
		withConstructs(t, p, slots, []uint32{6, 0, 3, 6, 99}, ctr)
		files = append(files, p)
	}
	var procs []Proc
	for _, p := range files {
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := f.Read()
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Constructs) != 2 || s.Constructs[0] != a || s.Constructs[1] != b {
			t.Fatalf("constructs %+v, want slots 5 and 2", s.Constructs)
		}
		procs = append(procs, Proc{Snap: s, Final: s, Cut: 6000, ValidUntil: 6000, End: "killed"})
	}
	if procs[0].Snap.Counters != (CounterState{Mode: "auto", Available: true, Method: "rdpmc"}) || procs[1].Snap.Counters != unavailable {
		t.Errorf("counter states %+v, %+v", procs[0].Snap.Counters, procs[1].Snap.Counters)
	}
	m, err := Assemble(procs, Job{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.OMPRegions) != 2 {
		t.Fatalf("omp regions %+v", m.OMPRegions)
	}
	o := m.OMPRegions[0]
	if o.Module != "/bin/app" || o.Address != 0x1234 || o.Executions != 6 || o.Threads != 4 || o.WallNS != 600 ||
		o.UsefulNS != 2000 || o.ImbalanceNS != 200 || o.SynchronizationNS != 100 || o.LimitedParallelismNS != 40 || o.ThreadManagementNS != 60 {
		t.Errorf("merged construct %+v", o)
	}
	if m.OpenMP == nil || !m.OpenMP.OMPT {
		t.Errorf("openmp %+v", m.OpenMP)
	}
	// One process without counters: the job has none, with its reason.
	if c := m.Counters; c == nil || c.Available || c.Reason != unavailable.Reason || m.Resources.HardwareCounters {
		t.Errorf("counters %+v, hardware_counters %v", m.Counters, m.Resources.HardwareCounters)
	}
}

// TestConstructTableHostile: a table the header places outside the file, or
// with fields outside its records, is refused by name.
func TestConstructTableHostile(t *testing.T) {
	var h header
	for _, c := range []struct {
		name  string
		field unsafe.Pointer
		v     uint32
	}{
		{"table beyond the end", unsafe.Pointer(&h.OMPMax), 1 << 15},
		{"module outside the record", unsafe.Pointer(&h.OmModuleMax), omSize},
		{"misaligned field", unsafe.Pointer(&h.OmWall), 20},
		{"index beyond the end", unsafe.Pointer(&h.OMPIndexOff), 1 << 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := fakeFile(t, t.TempDir(), 0, 1, Running, 0, []fakeThread{{last: 1}}, []fakeRegion{{name: "Global"}})
			withConstructs(t, p, make([]Construct, omSlots), nil, CounterState{})
			raw, _ := os.ReadFile(p)
			binary.LittleEndian.PutUint32(raw[uintptr(c.field)-uintptr(unsafe.Pointer(&h)):], c.v)
			os.WriteFile(p, raw, 0o600)
			f, err := Open(p)
			if err == nil {
				f.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), "OpenMP construct") {
				t.Errorf("error %q", err)
			}
		})
	}
}

// TestCopyKeepsConstructs: a node copy carries the constructs in use and the
// counters' state, so a partial measurement from copies has them too.
func TestCopyKeepsConstructs(t *testing.T) {
	dir := t.TempDir()
	src := fakeFile(t, dir, 0, 1, Running, 0, []fakeThread{{last: 5000, state: stUseful, useful: 4000}}, []fakeRegion{{name: "Global", open: true, start: 1000}})
	slots := make([]Construct, omSlots)
	slots[3] = Construct{Module: "/bin/app", Address: 0x42, Executions: 7, Threads: 2, Wall: 70, Useful: 120}
	ctr := CounterState{Mode: "auto", Reason: "counters unavailable: no PMU"}
	withConstructs(t, src, slots, []uint32{4}, ctr)
	dst := filepath.Join(dir, "nodes", "node1", "copy.live")
	writeCopy(t, src, dst, true)
	cp := readSnap(t, dst)
	if len(cp.Constructs) != 1 || cp.Constructs[0] != slots[3] || cp.Counters != ctr {
		t.Errorf("copy holds constructs %+v and counters %+v", cp.Constructs, cp.Counters)
	}
}
