package live

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/popmon/popmon/measure"
)

// A synthetic layout (the reader takes every offset from the header).
const (
	tSize    = 200
	acSize   = 176
	rgSize   = 448
	nameMax  = 32
	nThreads = 4
	nRegions = 4
	thrOff   = 4096
	rgOff    = thrOff + tSize*nThreads
	namesOff = rgOff + rgSize*nRegions
)

var fnNames = "MPI_Allreduce\x00MPI_Barrier\x00"

type fakeThread struct {
	last       uint64
	state      uint32
	useful     uint64
	mpi        uint64
	calls      [2]uint64
	ticks      [2]uint64
	rate, slot uint32
}

type fakeRegion struct {
	name         string
	open         bool
	start        uint64
	snapUseful   uint64
	elapsed, vis uint64
	totUseful    uint64
	totMPI       uint64
}

// fakeFile writes a live file of rank with the given threads and regions
// (clock: CLOCK_MONOTONIC, ticks are nanoseconds) and returns its path.
func fakeFile(t *testing.T, dir string, rank, size int, state State, arg int32, threads []fakeThread, regions []fakeRegion) string {
	t.Helper()
	b := make([]byte, namesOff+4096)
	h := header{Version: LayoutVersion, HeaderSize: 4096, NStates: nStates, NExtra: nExtra, NFn: 2, NCtr: 2,
		DetailThreads: 2, NameMax: nameMax, ThreadOff: thrOff, ThreadSize: tSize, MaxThreads: nThreads,
		RegionOff: rgOff, RegionSize: rgSize, MaxRegions: nRegions, NamesOff: namesOff, NamesSize: uint32(len(fnNames)),
		ThSeq: 0, ThLast: 8, ThState: 16, ThAccounted: 20, ThRate: 24, ThSlot: 28, ThKind: 32, ThAcc: 40,
		ThExtra: 104, ThMPICalls: 144, ThFnCalls: 152, ThFnTicks: 168, ThCtrAcc: 184,
		RgName: 0, RgOpen: 32, RgAnon: 36, RgStart: 40, RgElapsed: 48, RgVisits: 56, RgSnap: 64, RgTot: 240, RgThr: 416,
		AcSize: acSize, AcT: 0, AcMPICalls: 64, AcOMPParallels: 72, AcOMPTasks: 80, AcGPUCalls: 88, AcX: 96,
		AcPrimUseful: 136, AcPrimMPI: 144, AcThrUsefulMax: 152, AcCtr: 160,
		PID: int32(1000 + rank), Rank: int32(rank), Size: int32(size), State: uint32(state), StateArg: arg, StateTick: 5500,
		NThreads: uint32(len(threads)), T0Tick: 1000, T0NS: 1000, EpochNS: 1_700_000_000_000_000_000,
		InitTick: 1000, NRegions: uint32(len(regions)), CPUs: 1}
	copy(h.Magic[:], Magic)
	copy(h.Hostname[:], "node1")
	copy(h.Cmdline[:], "./app\x00-x\x00")
	h.CmdlineLen = 9
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h)))
	put := func(off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }
	put32 := func(off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
	for i, th := range threads {
		o := thrOff + i*tSize
		put(o+8, th.last)
		put32(o+16, th.state)
		put32(o+20, 1)
		put32(o+24, th.rate)
		put32(o+28, th.slot)
		put(o+40+8*stUseful, th.useful)
		put(o+40+8*stMPI, th.mpi)
		put(o+144, th.calls[0]+th.calls[1])
		for k := 0; k < 2; k++ {
			put(o+152+8*k, th.calls[k])
			put(o+168+8*k, th.ticks[k])
		}
	}
	for i, r := range regions {
		o := rgOff + i*rgSize
		copy(b[o:o+nameMax], r.name)
		if r.open {
			put32(o+32, 1)
		}
		put(o+40, r.start)
		put(o+48, r.elapsed)
		put(o+56, r.vis)
		put(o+64+8*stUseful, r.snapUseful)
		put(o+240+8*stUseful, r.totUseful)
		put(o+240+8*stMPI, r.totMPI)
	}
	copy(b[namesOff:], fnNames)
	p := filepath.Join(dir, "node1."+string(rune('0'+rank))+".live")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAssemble: two ranks cut at 6000 ns; rank 0 was working since 5000
// (1000 ns of useful time in progress), rank 1 inside MPI since 4000. The
// accounts of each add up to its elapsed time, as in the process.
func TestAssemble(t *testing.T) {
	dir := t.TempDir()
	p0 := fakeFile(t, dir, 0, 2, Running, 0,
		[]fakeThread{{last: 5000, state: stUseful, useful: 2500, mpi: 1500, calls: [2]uint64{3, 0}, ticks: [2]uint64{1500, 0}}},
		[]fakeRegion{{name: "Global", open: true, start: 1000}, {name: "phase", elapsed: 2000, vis: 1, totUseful: 1500, totMPI: 500}})
	p1 := fakeFile(t, dir, 1, 2, Aborted, 7,
		[]fakeThread{{last: 4000, state: stMPI, useful: 1000, mpi: 2000, calls: [2]uint64{2, 1}, ticks: [2]uint64{1800, 200}}},
		[]fakeRegion{{name: "Global", open: true, start: 1000}})
	var procs []Proc
	for _, p := range []string{p0, p1} {
		s := readSnap(t, p)
		procs = append(procs, Proc{Snap: s, Final: s, Cut: 6000, ValidUntil: 6000, End: endOf(s, false)})
	}
	if procs[1].End != "MPI_Abort(7)" || procs[0].End != "killed" {
		t.Errorf("ends %q %q", procs[0].End, procs[1].End)
	}
	reason, detail := why(procs, JobEnd{})
	if reason != measure.PartialAborted || detail != "rank 1 called MPI_Abort(7) first" {
		t.Errorf("why = %q, %q", reason, detail)
	}
	m, err := Assemble(procs, Job{Cwd: "/", Launcher: measure.LauncherSlurm, JobID: "812", MPILibrary: "MPICH (MPI 4.0)"},
		&measure.Partial{Reason: reason, Detail: detail, AssembledBy: "run"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Launcher != (measure.Launcher{Kind: measure.LauncherSlurm, JobID: "812"}) {
		t.Errorf("launcher %+v, want slurm job 812", m.Launcher)
	}
	if m.Version != 3 || m.Partial.CutNS != 5000 || m.Partial.Included != 2 || strings.Join(m.Command, " ") != "./app -x" {
		t.Errorf("version %d, partial %+v, command %q", m.Version, m.Partial, m.Command)
	}
	g, _ := m.Global()
	want := map[int][3]int64{0: {5000, 3500, 1500}, 1: {5000, 1000, 4000}} // elapsed, useful, MPI
	for _, pa := range g.Processes {
		w := want[pa.Rank]
		if pa.ElapsedNS != w[0] || pa.UsefulNS != w[1] || pa.MPINS != w[2] || pa.Visits != 1 {
			t.Errorf("rank %d Global: elapsed %d useful %d mpi %d visits %d, want %v", pa.Rank, pa.ElapsedNS, pa.UsefulNS, pa.MPINS, pa.Visits, w)
		}
	}
	if v := measure.CheckAccounts(m); len(v) != 0 {
		t.Errorf("accounts: %+v", v)
	}
	// The closed region is as it was, on rank 0 only.
	if len(m.Regions) != 2 || m.Regions[1].Name != "phase" || len(m.Regions[1].Processes) != 1 || m.Regions[1].Processes[0].UsefulNS != 1500 {
		t.Errorf("regions %+v", m.Regions)
	}
	calls := map[string]int64{}
	for _, c := range m.MPICalls {
		calls[c.Name] = c.Calls
	}
	if calls["MPI_Allreduce"] != 5 || calls["MPI_Barrier"] != 1 {
		t.Errorf("calls %v", calls)
	}
}

// TestOpenHostile: files that are not live files, or lie about their
// layout, are refused without reading past their end.
func TestOpenHostile(t *testing.T) {
	dir := t.TempDir()
	good := fakeFile(t, dir, 0, 1, Running, 0, []fakeThread{{last: 1}}, []fakeRegion{{name: "Global"}})
	raw, _ := os.ReadFile(good)
	edit := func(off int, v uint32) []byte {
		b := append([]byte(nil), raw...)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	h := header{}
	refused(t, []refusal{
		{"too small", raw[:100], "not the size of a live file"},
		{"no magic yet", append(make([]byte, 8), raw[8:]...), "not ready"},
		{"newer layout", edit(int(unsafe.Offsetof(h.Version)), 2), "layout version 2"},
		{"threads beyond the end", edit(int(unsafe.Offsetof(h.MaxThreads)), 60000), "beyond the end"},
		{"record offset outside", edit(int(unsafe.Offsetof(h.ThFnTicks)), tSize), "thread record offsets"},
		{"region name outside", edit(int(unsafe.Offsetof(h.NameMax)), rgSize+1), "region record offsets"},
		{"huge counts", edit(int(unsafe.Offsetof(h.NFn)), 1<<30), "counts"},
	})
	link := filepath.Join(dir, "link.live")
	os.Symlink(good, link)
	if f, err := Open(link); err == nil {
		f.Close()
		t.Error("followed a symbolic link")
	}
}

// refusal is a file Open must refuse, with the error it must give.
type refusal struct {
	name string
	data []byte
	want string
}

// refused checks that Open refuses each file of cases with its error.
func refused(t *testing.T, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.live")
			os.WriteFile(p, c.data, 0o600)
			f, err := Open(p)
			if err == nil {
				f.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
		})
	}
}

// FuzzLiveFile: no file makes Open or Read panic.
func FuzzLiveFile(f *testing.F) {
	dir := f.TempDir()
	tt := &testing.T{}
	good := fakeFile(tt, dir, 0, 1, Running, 0, []fakeThread{{last: 5, calls: [2]uint64{1, 2}}}, []fakeRegion{{name: "Global", open: true}})
	raw, _ := os.ReadFile(good)
	f.Add(raw[:4096], uint16(0), uint32(0))
	f.Add(raw[:4096], uint16(unsafe.Offsetof(header{}.NThreads)), uint32(1<<20))
	f.Add(raw[:4096], uint16(unsafe.Offsetof(header{}.NRegions)), uint32(9))
	f.Fuzz(func(t *testing.T, head []byte, at uint16, v uint32) {
		b := append([]byte(nil), raw...)
		copy(b, head)
		if int(at)+4 <= 4096 {
			binary.LittleEndian.PutUint32(b[at:], v)
		}
		p := filepath.Join(t.TempDir(), "f.live")
		os.WriteFile(p, b, 0o600)
		lf, err := Open(p)
		if err != nil {
			return
		}
		defer lf.Close()
		if s, err := lf.Read(); err == nil {
			for i := range s.Regions {
				s.RegionAt(i, 10)
			}
			s.at(10)
		}
	})
}

func TestRankRanges(t *testing.T) {
	for in, want := range map[string]string{"": "", "0": "0", "0 1 2 5": "0-2,5", "1 3 4": "1,3-4"} {
		var r []int
		for _, f := range strings.Fields(in) {
			r = append(r, int(f[0]-'0'))
		}
		if got := rankRanges(r); got != want {
			t.Errorf("rankRanges(%v) = %q, want %q", r, got, want)
		}
	}
}
