package live

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/popmon/popmon/measure"
)

// The account states, extras and counters of shim/base/threads.h that
// this reader knows; a file with other counts is refused (its layout
// version should have changed).
const (
	stUseful = iota
	stMPI
	stMPIWorkerIdle
	stOMPSerialization
	stOMPLoadImbalance
	stOMPScheduling
	stGPURuntime
	stIdle
	nStates
)

// The hardware counters of shim/counters.h, in ctr[] order.
const (
	ctrCycles = iota
	ctrInstructions
)

const (
	xParWall = iota
	xParUseful
	xParSelfUseful
	xParallels
	xTasks
	nExtra
)

// Accounts mirrors struct popmon_accounts: process-wide accounts in ticks
// (counts for the counters).
type Accounts struct {
	T                                          [nStates]uint64
	MPICalls, OMPParallels, OMPTasks, GPUCalls uint64
	X                                          [nExtra]uint64
	PrimUseful, PrimMPI, ThrUsefulMax          uint64
	Ctr                                        []uint64
	// GPUK and GPUA are each device ordinal's union of kernel intervals
	// and of kernels, copies and memsets, in nanoseconds (not ticks).
	GPUK, GPUA [gpuDevices]uint64
}

// Thread is a consistent copy of one thread record.
type Thread struct {
	Last                               uint64
	State, Accounted, Rate, Slot, Kind uint32
	Acc                                [nStates]uint64
	Extra                              [nExtra]uint64
	MPICalls, GPUCalls                 uint64
	FnCalls, FnTicks, Ctr              []uint64
	// DBytes holds, per call with bytes (Snapshot.DfnFn), the bytes sent
	// and received (2 per call); DHist its Snapshot.SizeBins histogram
	// buckets. Empty when the file has no bytes.
	DBytes, DHist []uint64
}

// Region is a copy of one region of the process's table.
type Region struct {
	Name                   string
	Open, Anon             bool
	Start, Elapsed, Visits uint64
	Snap, Tot              Accounts
	Thr                    []uint64 // 2 × detail threads: useful at start, accumulated (open regions only)
}

// Construct is one OpenMP parallel construct of a process's table (times
// in ticks), as ompt.c keeps it.
type Construct struct {
	Module                                                            string
	Address                                                           uint64
	Executions, Threads, Wall, Useful, Imbalance, Sync, Limited, Mgmt uint64
}

// CounterState is what the process said of its hardware counters.
type CounterState struct {
	Available            bool
	Mode, Method, Reason string
}

// GPUState is what the process said of its GPU devices: whether it
// measured them (CUDA injected and CUPTI running, or rocprofiler-sdk
// tracing HIP) and with which vendor's library, each device ordinal's K
// and A so far (ns, what the vendor library had delivered by NowNS) and
// UUID.
type GPUState struct {
	Active bool
	// Vendor is the vendor of the backend that measures
	// (measure.GPUVendorNVIDIA or measure.GPUVendorAMD, from gpu_active:
	// 1 NVIDIA, 2 AMD); "" when not active or another value.
	Vendor     string
	Mode       string // "off", "auto" or "on"; "" when no GPU runtime was ever initialised
	NowNS      uint64
	Used       uint32 // a bit per device ordinal
	KNow, ANow [gpuDevices]uint64
	UUID       [gpuDevices]string
}

// Snapshot is what a live file held at one moment.
type Snapshot struct {
	PID, Rank, Size       int
	Host, Exe, Session    string
	Command               []string
	State                 State
	StateArg              int
	StateTick             uint64
	LastSignal            int
	LastSignalTick        uint64
	ClockTSC              bool
	T0Tick, T0NS, EpochNS uint64
	CalTick, CalNS        uint64
	InitTick, FinTick     uint64
	// CPUs is the CPUs the process holds now (DROM may have taken some:
	// what popmon top shows); AccountCPUs those its accounts are set
	// against (its largest team and MPI threads, as in the measurement).
	CPUs, AccountCPUs int
	// AffinityCPUs is the hardware CPUs of the process's affinity mask
	// at start-up (0: unknown; [measure.Process.AffinityCPUs]).
	AffinityCPUs int
	StartTime    uint64
	Threads      []Thread
	Regions      []Region
	Constructs   []Construct
	Counters     CounterState
	GPU          GPUState
	FnNames      []string
	// DfnFn is the function id (FnNames index) of each call with bytes
	// (Thread.DBytes), and SizeBins the size histogram's buckets.
	DfnFn    []uint16
	SizeBins int
	// Lewi is the CPU time the process lent and borrowed under LeWI so
	// far (closed intervals), nil when LeWI was not on in it; its
	// OwnChangeCPUNS is up to LewiOwn.Since ([Proc.Lewi] extends it).
	Lewi    *measure.ProcessLewi
	LewiOwn OwnCPUs
	// Drom is the process's own CPUs under DROM, nil when it did not
	// register ([Proc.Drom]).
	Drom   *OwnCPUs
	detail int
	// memo holds the last at() result: every open region of a snapshot is
	// closed at the same tick (RegionAt), so the threads are summed once.
	memo struct {
		ok  bool
		now uint64
		a   Accounts
		thr []uint64
	}
	// Tick and NS are the process's clock and CLOCK_MONOTONIC when the
	// snapshot was taken (for a node copy: when the agent copied the file,
	// on the process's node).
	Tick uint64
	NS   int64
	// Copy is set when the snapshot was read from a node copy (copy.go).
	Copy *CopyInfo
}

func le64(b []byte, off uint32) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
func le32(b []byte, off uint32) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

// Read takes a snapshot of the file: every published thread record and
// region, each copied consistently.
func (f *File) Read() (*Snapshot, error) {
	if f.data == nil {
		return nil, fmt.Errorf("%s: closed", f.Path)
	}
	h := &f.h
	if h.NStates != nStates || h.NExtra != nExtra {
		return nil, fmt.Errorf("%s: %d states and %d extras where this popmon knows %d and %d: read it with the popmon that measured it",
			f.Path, h.NStates, h.NExtra, nStates, nExtra)
	}
	fresh := *(*header)(unsafe.Pointer(&f.data[0]))
	s := &Snapshot{
		PID: int(fresh.PID), Rank: int(fresh.Rank), Size: int(fresh.Size),
		Host: cstring(fresh.Hostname[:]), Exe: cstring(fresh.Exe[:]), Session: cstring(fresh.Session[:]),
		State:     State(f.load32(offState)),
		StateArg:  int(fresh.StateArg),
		StateTick: fresh.StateTick, LastSignal: int(fresh.LastSignal), LastSignalTick: fresh.LastSignalTick,
		ClockTSC: fresh.ClockTSC != 0, T0Tick: fresh.T0Tick, T0NS: fresh.T0NS, EpochNS: fresh.EpochNS,
		CalTick: fresh.CalTick, CalNS: fresh.CalNS, InitTick: fresh.InitTick, FinTick: fresh.FinTick,
		CPUs: int(fresh.CPUs), StartTime: fresh.StartTime, detail: int(h.DetailThreads),
	}
	if fresh.AffinityCPUs <= 1<<16 { // more is a hostile file's
		s.AffinityCPUs = int(fresh.AffinityCPUs)
	}
	if n := int(fresh.CmdlineLen); n > 0 && n <= len(fresh.Cmdline) {
		for _, a := range strings.Split(strings.TrimRight(string(fresh.Cmdline[:n]), "\x00"), "\x00") {
			s.Command = append(s.Command, strings.ToValidUTF8(a, "\uFFFD"))
		}
	}
	if s.CPUs < 1 {
		s.CPUs = 1
	}
	s.AccountCPUs = s.CPUs
	if c := int(fresh.CPUsAccounted); c >= 1 && c <= 1<<20 { // 0: an older library's file
		s.AccountCPUs = c
	}
	s.Tick, s.NS = clockNow(s.ClockTSC)
	if c := f.copied; c != nil {
		s.Tick, s.NS = c.Tick, c.NS
		s.Copy = &CopyInfo{Alive: c.Alive == 1, RealNS: c.RealNS, Every: time.Duration(c.EveryMS) * time.Millisecond}
	}
	if names := f.data[h.NamesOff : h.NamesOff+h.NamesSize]; len(names) > 0 && f.names == nil {
		f.names = strings.Split(strings.TrimRight(string(names), "\x00"), "\x00")
	}
	s.FnNames = f.names
	s.readDLB(&fresh)
	if h.NDfn != 0 {
		s.DfnFn, s.SizeBins = h.DfnFn[:h.NDfn], int(h.SizeBins)
	}
	nt := int(f.load32(offNThreads))
	if nt > int(h.MaxThreads) {
		nt = int(h.MaxThreads)
	}
	rec := make([]byte, h.ThreadSize)
	for i := 0; i < nt; i++ {
		off := uintptr(h.ThreadOff) + uintptr(i)*uintptr(h.ThreadSize)
		f.consistent(off+uintptr(h.ThSeq), off, int(h.ThreadSize), rec)
		if le64(rec, h.ThLast) == 0 && le32(rec, h.ThAccounted) == 0 {
			continue // a slot being allocated
		}
		t := Thread{
			Last: le64(rec, h.ThLast), State: le32(rec, h.ThState), Accounted: le32(rec, h.ThAccounted),
			Rate: le32(rec, h.ThRate), Slot: le32(rec, h.ThSlot), Kind: le32(rec, h.ThKind),
			MPICalls: le64(rec, h.ThMPICalls),
			FnCalls:  make([]uint64, h.NFn), FnTicks: make([]uint64, h.NFn), Ctr: make([]uint64, h.NCtr),
		}
		for k := range t.Acc {
			t.Acc[k] = le64(rec, h.ThAcc+uint32(8*k))
		}
		for k := range t.Extra {
			t.Extra[k] = le64(rec, h.ThExtra+uint32(8*k))
		}
		for k := range t.FnCalls {
			t.FnCalls[k] = le64(rec, h.ThFnCalls+uint32(8*k))
			t.FnTicks[k] = le64(rec, h.ThFnTicks+uint32(8*k))
		}
		for k := range t.Ctr {
			t.Ctr[k] = le64(rec, h.ThCtrAcc+uint32(8*k))
		}
		if h.NDfn != 0 {
			t.DBytes, t.DHist = make([]uint64, 2*h.NDfn), make([]uint64, h.NDfn*h.SizeBins)
			for k := range t.DBytes {
				t.DBytes[k] = le64(rec, h.ThDBytes+uint32(8*k))
			}
			for k := range t.DHist {
				t.DHist[k] = le64(rec, h.ThDHist+uint32(8*k))
			}
		}
		if h.GPUDevices != 0 {
			t.GPUCalls = le64(rec, h.ThGPUCalls)
		}
		s.Threads = append(s.Threads, t)
	}
	s.Constructs = f.constructs()
	if g := f.gpu(); h.GPUDevices != 0 {
		s.GPU = GPUState{Active: g.GPUActive != 0, Vendor: gpuVendor(g.GPUActive), NowNS: g.GPUNowNS, Used: g.GPUUsed, KNow: g.GPUKNow, ANow: g.GPUANow}
		if m := f.load32(offGPUMode); m >= 1 && m <= 3 {
			s.GPU.Mode = []string{"off", "auto", "on"}[m-1]
		}
		for d := range s.GPU.UUID {
			s.GPU.UUID[d] = cstring(g.GPUUUID[d][:])
		}
	}
	s.Counters = CounterState{Available: int32(f.load32(offCtrAvail)) == 1,
		Mode: cstring(fresh.CtrMode[:]), Method: cstring(fresh.CtrMethod[:]), Reason: cstring(fresh.CtrReason[:])}
	nr := int(f.load32(offNRegions))
	if nr > int(h.MaxRegions) {
		nr = int(h.MaxRegions)
	}
	table, thr, lo, hi := f.regionTable(nr)
	rs, nthr := int(hi-lo), int(2*h.DetailThreads)
	if nr > 0 {
		s.Regions = make([]Region, 0, nr)
	}
	for i := 0; i < nr; i++ {
		r := table[i*rs : (i+1)*rs]
		reg := Region{
			Name: cstring(r[h.RgName-lo : h.RgName-lo+h.NameMax]),
			Open: le32(r, h.RgOpen-lo) != 0, Anon: le32(r, h.RgAnon-lo) != 0,
			Start: le64(r, h.RgStart-lo), Elapsed: le64(r, h.RgElapsed-lo), Visits: le64(r, h.RgVisits-lo),
			Snap: f.accounts(r[h.RgSnap-lo:]), Tot: f.accounts(r[h.RgTot-lo:]),
		}
		if reg.Open {
			// Only an open region's visit is closed with them (RegionAt);
			// regionTable copied them for open regions only.
			src := thr
			if hi-lo == h.RegionSize {
				src = r[h.RgThr:]
			} else {
				thr = thr[8*nthr:]
			}
			reg.Thr = make([]uint64, nthr)
			for k := range reg.Thr {
				reg.Thr[k] = le64(src, uint32(8*k))
			}
		}
		s.Regions = append(s.Regions, reg)
	}
	return s, nil
}

// constructs reads the OpenMP constructs in use: only the slots the index
// names (reading an unused slot would allocate its pages on tmpfs).
func (f *File) constructs() []Construct {
	h := &f.h
	if h.OMPSize == 0 || h.OMPMax == 0 {
		return nil
	}
	used := min(f.load32(offOMPUsed), h.OMPMax)
	var out []Construct
	seen := map[uint32]bool{}
	for k := uint32(0); k < used; k++ {
		v := f.load32(uintptr(h.OMPIndexOff) + 4*uintptr(k))
		if v == 0 || v > h.OMPMax || seen[v] {
			continue // being written, or not a slot
		}
		seen[v] = true
		rec := f.data[uint64(h.OMPOff)+uint64(v-1)*uint64(h.OMPSize):][:h.OMPSize]
		off := uintptr(unsafe.Pointer(&rec[0])) - uintptr(unsafe.Pointer(&f.data[0]))
		ld := func(o uint32) uint64 { return f.load64(off + uintptr(o)) }
		c := Construct{
			Module: cstring(rec[h.OmModule : h.OmModule+h.OmModuleMax]), Address: ld(h.OmAddress),
			Executions: ld(h.OmExecutions), Threads: ld(h.OmThreads), Wall: ld(h.OmWall), Useful: ld(h.OmUseful),
			Imbalance: ld(h.OmImbalance), Sync: ld(h.OmSync), Limited: ld(h.OmLimited), Mgmt: ld(h.OmMgmt),
		}
		if ld(h.OmCodeptr) != 0 && c.Executions > 0 {
			out = append(out, c)
		}
	}
	return out
}

func (f *File) accounts(b []byte) Accounts {
	h := &f.h
	a := Accounts{
		MPICalls: le64(b, h.AcMPICalls), OMPParallels: le64(b, h.AcOMPParallels),
		OMPTasks: le64(b, h.AcOMPTasks), GPUCalls: le64(b, h.AcGPUCalls),
		PrimUseful: le64(b, h.AcPrimUseful), PrimMPI: le64(b, h.AcPrimMPI),
		ThrUsefulMax: le64(b, h.AcThrUsefulMax), Ctr: make([]uint64, h.NCtr),
	}
	for k := range a.T {
		a.T[k] = le64(b, h.AcT+uint32(8*k))
	}
	for k := range a.X {
		a.X[k] = le64(b, h.AcX+uint32(8*k))
	}
	for k := range a.Ctr {
		a.Ctr[k] = le64(b, h.AcCtr+uint32(8*k))
	}
	if h.GPUDevices != 0 {
		for d := range a.GPUK {
			a.GPUK[d] = le64(b, h.AcGPUK+uint32(8*d))
			a.GPUA[d] = le64(b, h.AcGPUA+uint32(8*d))
		}
	}
	return a
}

// delta is b − a, or 0 when the clock went backwards (popmon_delta).
func delta(a, b uint64) uint64 {
	if int64(b-a) > 0 {
		return b - a
	}
	return 0
}

func chargeState(st uint32) uint32 {
	if st == stMPI {
		return stMPIWorkerIdle
	}
	return stOMPSerialization
}

// at returns the process-wide accounts at tick now and each detailed
// thread's useful time, as popmon_snapshot computes them in the process:
// every accounted thread's accounts plus its interval in progress.
func (s *Snapshot) at(now uint64) (Accounts, []uint64) {
	var a Accounts
	thr := make([]uint64, s.detail)
	// Device time as far as CUPTI had delivered it (the process reads it
	// at the snapshot time; a reader sees the last delivery).
	a.GPUK, a.GPUA = s.GPU.KNow, s.GPU.ANow
	for _, t := range s.Threads {
		a.MPICalls += t.MPICalls
		a.GPUCalls += t.GPUCalls
		a.OMPParallels += t.Extra[xParallels]
		a.OMPTasks += t.Extra[xTasks]
		if t.Accounted == 0 {
			continue
		}
		acc := t.Acc
		if t.State < nStates {
			d := delta(t.Last, now)
			acc[t.State] += d
			if t.Rate != 0 {
				acc[chargeState(t.State)] += d * uint64(t.Rate)
			}
		}
		for k := range acc {
			a.T[k] += acc[k]
		}
		for k := range t.Extra {
			a.X[k] += t.Extra[k]
		}
		if a.Ctr == nil {
			a.Ctr = make([]uint64, len(t.Ctr))
		}
		for k := range t.Ctr {
			if k < len(a.Ctr) {
				a.Ctr[k] += t.Ctr[k]
			}
		}
		if t.Slot == 0 {
			a.PrimUseful, a.PrimMPI = acc[stUseful], acc[stMPI]
		}
		if int(t.Slot) < len(thr) {
			thr[t.Slot] = acc[stUseful]
		}
	}
	return a, thr
}

// sub returns b − a per field (0 where b < a).
func sub(a, b uint64) uint64 {
	if b >= a {
		return b - a
	}
	return 0
}

// RegionAt returns region i as it stands at tick now: an open region's
// visit is closed there (as popmon_regions_close_all would).
func (s *Snapshot) RegionAt(i int, now uint64) Region {
	r := s.Regions[i]
	if !r.Open {
		return r
	}
	if !s.memo.ok || s.memo.now != now {
		s.memo.a, s.memo.thr = s.at(now)
		s.memo.ok, s.memo.now = true, now
	}
	cur, thr := s.memo.a, s.memo.thr
	tot := r.Tot
	for k := range tot.T {
		tot.T[k] += sub(r.Snap.T[k], cur.T[k])
	}
	tot.MPICalls += sub(r.Snap.MPICalls, cur.MPICalls)
	tot.OMPParallels += sub(r.Snap.OMPParallels, cur.OMPParallels)
	tot.OMPTasks += sub(r.Snap.OMPTasks, cur.OMPTasks)
	tot.GPUCalls += sub(r.Snap.GPUCalls, cur.GPUCalls)
	for d := range tot.GPUK {
		tot.GPUK[d] += sub(r.Snap.GPUK[d], cur.GPUK[d])
		tot.GPUA[d] += sub(r.Snap.GPUA[d], cur.GPUA[d])
	}
	for k := range tot.X {
		tot.X[k] += sub(r.Snap.X[k], cur.X[k])
	}
	tot.PrimUseful += sub(r.Snap.PrimUseful, cur.PrimUseful)
	tot.PrimMPI += sub(r.Snap.PrimMPI, cur.PrimMPI)
	tot.Ctr = append([]uint64(nil), r.Tot.Ctr...)
	for k := range tot.Ctr {
		if k < len(cur.Ctr) && k < len(r.Snap.Ctr) {
			tot.Ctr[k] += sub(r.Snap.Ctr[k], cur.Ctr[k])
		}
	}
	d := len(r.Thr) / 2
	var mx uint64
	for k := 0; k < d && k < len(thr); k++ {
		acc := r.Thr[d+k] + sub(r.Thr[k], thr[k])
		if acc > mx {
			mx = acc
		}
	}
	tot.ThrUsefulMax = mx
	r.Tot = tot
	r.Elapsed += delta(r.Start, now)
	r.Visits++
	r.Open = false
	return r
}

// NSPerTick returns the process clock's nanoseconds per tick: 1 for
// CLOCK_MONOTONIC; for the TSC, calibrated over the whole run from the
// process's start to the snapshot (or to the process's last calibration
// pair when this machine cannot read the TSC).
func (s *Snapshot) NSPerTick() float64 {
	if !s.ClockTSC {
		return 1
	}
	if haveTSC {
		if dt := delta(s.T0Tick, s.Tick); dt > 1e6 && s.NS > int64(s.T0NS) {
			return float64(s.NS-int64(s.T0NS)) / float64(dt)
		}
	}
	if dt := delta(s.T0Tick, s.CalTick); dt > 0 && s.CalNS > s.T0NS {
		return float64(s.CalNS-s.T0NS) / float64(dt)
	}
	return 1
}

// TickAt returns the process clock's tick at CLOCK_MONOTONIC time ns.
func (s *Snapshot) TickAt(ns int64) uint64 {
	r := s.NSPerTick()
	return s.T0Tick + uint64(float64(ns-int64(s.T0NS))/r)
}

// NSAt returns the CLOCK_MONOTONIC time of tick t.
func (s *Snapshot) NSAt(t uint64) int64 {
	return int64(s.T0NS) + int64(float64(delta(s.T0Tick, t))*s.NSPerTick())
}

// LastTransition is the latest clock value the process wrote: a thread's
// last state change or the recorded end.
func (s *Snapshot) LastTransition() uint64 {
	var last uint64
	for _, t := range s.Threads {
		if delta(last, t.Last) > 0 {
			last = t.Last
		}
	}
	for _, v := range []uint64{s.StateTick, s.LastSignalTick} {
		if v != 0 && delta(last, v) > 0 {
			last = v
		}
	}
	return last
}

// gpuVendor is the vendor of a live file's gpu_active value: 1 NVIDIA
// (CUPTI), 2 AMD (rocprofiler-sdk); "" for 0 and values this reader does
// not know.
func gpuVendor(active uint32) string {
	switch active {
	case 1:
		return measure.GPUVendorNVIDIA
	case 2:
		return measure.GPUVendorAMD
	}
	return ""
}

// readDLB reads LeWI's and DROM's words of the header (a hostile file's
// are left out).
func (s *Snapshot) readDLB(fresh *header) {
	if fresh.LewiOn == 1 {
		r := s.NSPerTick()
		caller := int64(float64(fresh.LewiLentCallerTicks) * r)
		s.Lewi = &measure.ProcessLewi{OwnCPUs: int(fresh.LewiOwnCPUs), LentCPUNS: int64(float64(fresh.LewiLentTicks) * r),
			LentCallerNS: &caller, BorrowedCPUNS: int64(float64(fresh.LewiBorrowedTicks) * r),
			OwnChangeCPUNS: int64(float64(fresh.LewiOwnDeltaTicks) * r)}
		s.LewiOwn = OwnCPUs{Registered: int(fresh.LewiOwnCPUs), Now: int(fresh.LewiOwnNow),
			DeltaTicks: fresh.LewiOwnDeltaTicks, Since: fresh.LewiOwnSince}
		if s.Lewi.LentCPUNS < 0 || s.Lewi.BorrowedCPUNS < 0 || caller < 0 || caller > s.Lewi.LentCPUNS ||
			!s.LewiOwn.plausible() { // a hostile file
			s.Lewi, s.LewiOwn = nil, OwnCPUs{}
		}
	}
	if fresh.DromOn == 1 {
		d := OwnCPUs{Registered: int(fresh.DromOwnCPUs), Now: int(fresh.DromOwnNow),
			DeltaTicks: fresh.DromOwnDeltaTicks, Since: fresh.DromOwnSince}
		if d.plausible() {
			s.Drom = &d
		}
	}
}

// OwnCPUs is a process's own CPUs over time as its live file has them
// (LeWI's or DROM's words; docs/live-format.md): the CPUs it registered,
// their change (popmon_now() ticks × CPUs, signed) folded up to the tick
// Since of their last change, and the CPUs it has had since then.
type OwnCPUs struct {
	Registered, Now int
	DeltaTicks      int64
	Since           uint64
}

// plausible reports whether the words can be a process's: CPU counts up
// to 2¹⁶, and a change no larger than that many CPUs over the time up to
// Since (a hostile file's otherwise).
func (o OwnCPUs) plausible() bool {
	const most = 1 << 16
	return o.Registered >= 0 && o.Registered <= most && o.Now >= 0 && o.Now <= most &&
		o.Since < 1<<62 && (o.DeltaTicks <= 0 || uint64(o.DeltaTicks)/most <= o.Since) &&
		(o.DeltaTicks >= 0 || uint64(-o.DeltaTicks)/most <= o.Since)
}

// ChangeTicks is the own CPUs' change up to tick end: the folded change,
// and Now − Registered CPUs from Since to end.
func (o OwnCPUs) ChangeTicks(end uint64) int64 {
	d := float64(o.DeltaTicks)
	if o.Since != 0 && end > o.Since {
		d += float64(end-o.Since) * float64(o.Now-o.Registered)
	}
	return int64(d)
}
