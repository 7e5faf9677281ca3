// Package live reads libpopmon's live files: each measured process keeps
// its accounts in a file of node-local storage (shim/live.h), readable while
// it runs and after it died, and this package turns what a set of them hold
// at a moment into a measurement (Assemble). Every file is treated as
// hostile: the layout is taken from the file's own header and checked
// against the file's size before anything is read.
package live

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Magic starts every live file of the layout this package reads.
const Magic = "POPMLIV1"

// LayoutVersion is the layout version this package reads.
const LayoutVersion = 1

// State is how a process ended, as the process itself recorded it.
type State uint32

// The states of shim/live.h.
const (
	Starting   State = 0 // before MPI_Init
	Running    State = 1 // between MPI_Init and MPI_Finalize
	Finalizing State = 2 // inside MPI_Finalize
	Finalized  State = 3 // the measurement reached rank 0
	NoFinalize State = 4 // exited without MPI_Finalize
	Aborted    State = 5 // called MPI_Abort (StateArg: the code)
	Signaled   State = 6 // a fatal signal with its default action (StateArg)
	Single     State = 7 // not an MPI program; its measurement was written
)

// Limits on what a (hostile) header may declare.
const (
	maxStates  = 64
	maxFns     = 4096
	maxThreads = 1 << 16
	maxRegions = 1 << 16
	maxDetail  = 1 << 12
	maxRecord  = 1 << 20
	// maxConstructs bounds the OpenMP construct table's slots.
	maxConstructs = 1 << 16
)

// header mirrors struct popmon_live_header (shim/live.h) field by field.
type header struct {
	Magic                                                              [8]byte
	Version, HeaderSize                                                uint32
	NStates, NExtra, NFn, NCtr, DetailThreads, NameMax                 uint32
	ThreadOff, ThreadSize, MaxThreads                                  uint32
	RegionOff, RegionSize, MaxRegions                                  uint32
	NamesOff, NamesSize                                                uint32
	ThSeq, ThLast, ThState, ThAccounted, ThRate, ThSlot, ThKind, ThAcc uint32
	ThExtra, ThMPICalls, ThFnCalls, ThFnTicks, ThCtrAcc                uint32
	RgName, RgOpen, RgAnon, RgStart, RgElapsed, RgVisits, RgSnap       uint32
	RgTot, RgThr                                                       uint32
	AcSize, AcT, AcMPICalls, AcOMPParallels, AcOMPTasks, AcGPUCalls    uint32
	AcX, AcPrimUseful, AcPrimMPI, AcThrUsefulMax, AcCtr                uint32
	PID, Rank, Size, ClockTSC                                          int32
	State                                                              uint32
	StateArg                                                           int32
	StateTick                                                          uint64
	LastSignal                                                         int32
	NThreads                                                           uint32
	LastSignalTick                                                     uint64
	T0Tick, T0NS, EpochNS                                              uint64
	CalTick, CalNS                                                     uint64
	InitTick, FinTick                                                  uint64
	RegionsSeq                                                         uint64
	NRegions, CPUs                                                     uint32
	StartTime                                                          uint64
	Hostname                                                           [64]byte
	Exe                                                                [256]byte
	Session                                                            [128]byte
	Cmdline                                                            [1024]byte
	CmdlineLen                                                         uint32
	OMPOff, OMPSize, OMPMax                                            uint32
	OmCodeptr, OmExecutions, OmThreads, OmWall, OmUseful, OmImbalance  uint32
	OmSync, OmLimited, OmMgmt, OmAddress, OmModule, OmModuleMax        uint32
	OMPUsed, OMPIndexOff                                               uint32
	CtrAvailable                                                       int32
	CtrMode                                                            [8]byte
	CtrMethod                                                          [16]byte
	CtrReason                                                          [256]byte
	ThGPUCalls, AcGPUK, AcGPUA, GPUDevices                             uint32
	GPUSeq, GPUNowNS                                                   uint64
	GPUKNow, GPUANow                                                   [gpuDevices]uint64
	GPUUsed, GPUActive, GPUMode                                        uint32
	GPUUUID                                                            [gpuDevices][48]byte
	NDfn, SizeBins, ThDBytes, ThDHist                                  uint32
	DfnFn                                                              [liveDfn]uint16
	LewiOn, AffinityCPUs                                               uint32
	LewiLentTicks, LewiBorrowedTicks                                   uint64
	LewiLentCallerTicks                                                uint64
	LewiOwnDeltaTicks                                                  int64
	LewiOwnCPUs, LewiOwnNow                                            uint32
	LewiOwnSince                                                       uint64
	DromOwnDeltaTicks                                                  int64
	DromOwnSince                                                       uint64
	DromOn, DromOwnCPUs, DromOwnNow, CPUsAccounted                     uint32
}

// liveDfn is POPMON_LIVE_DFN (shim/live.h): the most calls with bytes a
// header lists.
const liveDfn = 256

// maxSizeBins bounds a header's message-size histogram buckets.
const maxSizeBins = 64

// gpuDevices is POPMON_GPU_DEVICES (shim/gpu.h): the device ordinals a
// process accounts. A file that declares another count has no GPU data
// for this reader (GPUDevices 0: a library without GPU support).
const gpuDevices = 16

// Offsets of the header fields that change while the process runs.
var (
	offState      = unsafe.Offsetof(header{}.State)
	offNThreads   = unsafe.Offsetof(header{}.NThreads)
	offNRegions   = unsafe.Offsetof(header{}.NRegions)
	offRegionsSeq = unsafe.Offsetof(header{}.RegionsSeq)
	offOMPUsed    = unsafe.Offsetof(header{}.OMPUsed)
	offCtrAvail   = unsafe.Offsetof(header{}.CtrAvailable)
	offGPUSeq     = unsafe.Offsetof(header{}.GPUSeq)
	offGPUMode    = unsafe.Offsetof(header{}.GPUMode)
	offGPUBlock   = unsafe.Offsetof(header{}.GPUNowNS)
	gpuBlockSize  = unsafe.Offsetof(header{}.GPUUUID) + unsafe.Sizeof(header{}.GPUUUID) - unsafe.Offsetof(header{}.GPUNowNS)
)

// File is one open live file.
type File struct {
	Path  string
	data  []byte
	h     header
	names []string // the MPI function names, read once
	// copied is the copy record of a node copy (copy.go), nil for a live
	// file.
	copied *copyRecord
}

// Open maps the live file at path read-only and checks its header. A file
// whose magic is not (yet) written gives ErrNotReady.
func Open(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	size := fi.Size()
	if size < 4096 || size > 1<<34 {
		return nil, fmt.Errorf("%s: %d bytes is not the size of a live file", path, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	lf := &File{Path: path, data: data}
	if err := lf.readHeader(); err != nil {
		lf.Close()
		return nil, err
	}
	return lf, nil
}

// ErrNotReady is returned for a file whose process has not finished
// writing its header.
var ErrNotReady = errors.New("live file not ready")

// Close unmaps the file.
func (f *File) Close() error {
	if f.data == nil {
		return nil
	}
	err := syscall.Munmap(f.data)
	f.data = nil
	return err
}

func (f *File) readHeader() error {
	if !bytes.Equal(f.data[:8], []byte(Magic)) {
		return ErrNotReady
	}
	// Go lays the struct out as C does (natural alignment, amd64 and
	// arm64); TestHeaderLayout checks it against the C compiler.
	f.h = *(*header)(unsafe.Pointer(&f.data[0]))
	h := &f.h
	bad := func(what string) error { return fmt.Errorf("%s: not a live file of this popmon (%s)", f.Path, what) }
	switch {
	case h.Version != LayoutVersion:
		return bad(fmt.Sprintf("layout version %d, this popmon reads %d", h.Version, LayoutVersion))
	case h.HeaderSize < uint32(unsafe.Sizeof(header{})):
		return bad("header too small")
	case h.NStates == 0 || h.NStates > maxStates || h.NExtra > maxStates || h.NCtr > maxStates || h.NFn > maxFns:
		return bad("counts")
	case h.MaxThreads > maxThreads || h.MaxRegions > maxRegions || h.DetailThreads > maxDetail || h.NameMax == 0 || h.NameMax > 4096:
		return bad("table sizes")
	case h.ThreadSize == 0 || h.ThreadSize > maxRecord || h.RegionSize == 0 || h.RegionSize > maxRecord || h.AcSize > maxRecord:
		return bad("record sizes")
	}
	n := uint64(len(f.data))
	if uint64(h.ThreadOff)+uint64(h.ThreadSize)*uint64(h.MaxThreads) > n ||
		uint64(h.RegionOff)+uint64(h.RegionSize)*uint64(h.MaxRegions) > n ||
		uint64(h.NamesOff)+uint64(h.NamesSize) > n {
		return bad("tables beyond the end of the file")
	}
	ts, rs, as := uint64(h.ThreadSize), uint64(h.RegionSize), uint64(h.AcSize)
	u64 := func(off, count uint32, size uint64) bool { return uint64(off)+8*uint64(count) <= size }
	if !u64(h.ThSeq, 1, ts) || !u64(h.ThLast, 1, ts) || h.ThState+4 > h.ThreadSize || h.ThAccounted+4 > h.ThreadSize ||
		h.ThRate+4 > h.ThreadSize || h.ThSlot+4 > h.ThreadSize || h.ThKind+4 > h.ThreadSize ||
		!u64(h.ThAcc, h.NStates, ts) || !u64(h.ThExtra, h.NExtra, ts) || !u64(h.ThMPICalls, 1, ts) ||
		!u64(h.ThFnCalls, h.NFn, ts) || !u64(h.ThFnTicks, h.NFn, ts) || !u64(h.ThCtrAcc, h.NCtr, ts) {
		return bad("thread record offsets")
	}
	if uint64(h.RgName)+uint64(h.NameMax) > rs || h.RgOpen+4 > h.RegionSize || h.RgAnon+4 > h.RegionSize ||
		!u64(h.RgStart, 1, rs) || !u64(h.RgElapsed, 1, rs) || !u64(h.RgVisits, 1, rs) ||
		uint64(h.RgSnap)+as > rs || uint64(h.RgTot)+as > rs || !u64(h.RgThr, 2*h.DetailThreads, rs) {
		return bad("region record offsets")
	}
	// The OpenMP construct table (absent: OMPSize 0).
	if h.OMPSize != 0 {
		osz := uint64(h.OMPSize)
		if h.OMPSize > maxRecord || h.OMPMax > maxConstructs || uint64(h.OMPOff)+osz*uint64(h.OMPMax) > n ||
			uint64(h.OMPIndexOff)+4*uint64(h.OMPMax) > n || h.OMPOff%8 != 0 || h.OMPSize%8 != 0 || h.OMPIndexOff%4 != 0 ||
			h.OmModuleMax == 0 || uint64(h.OmModule)+uint64(h.OmModuleMax) > osz {
			return bad("OpenMP construct table")
		}
		for _, off := range []uint32{h.OmCodeptr, h.OmExecutions, h.OmThreads, h.OmWall, h.OmUseful, h.OmImbalance,
			h.OmSync, h.OmLimited, h.OmMgmt, h.OmAddress} {
			if !u64(off, 1, osz) || off%8 != 0 {
				return bad("OpenMP construct offsets")
			}
		}
	}
	if !u64(h.AcT, h.NStates, as) || !u64(h.AcMPICalls, 1, as) || !u64(h.AcOMPParallels, 1, as) ||
		!u64(h.AcOMPTasks, 1, as) || !u64(h.AcGPUCalls, 1, as) || !u64(h.AcX, h.NExtra, as) ||
		!u64(h.AcPrimUseful, 1, as) || !u64(h.AcPrimMPI, 1, as) || !u64(h.AcThrUsefulMax, 1, as) || !u64(h.AcCtr, h.NCtr, as) {
		return bad("account offsets")
	}
	// GPU accounts: ignored (not refused) when the file's layout differs.
	if h.GPUDevices != 0 && (h.GPUDevices != gpuDevices || !u64(h.ThGPUCalls, 1, ts) ||
		!u64(h.AcGPUK, gpuDevices, as) || !u64(h.AcGPUA, gpuDevices, as)) {
		h.GPUDevices = 0
	}
	// Bytes: ignored (not refused) when the layout is not one this reader
	// can trust; a call id beyond the function table is skipped when read.
	if h.NDfn != 0 && (h.NDfn > liveDfn || h.SizeBins == 0 || h.SizeBins > maxSizeBins ||
		!u64(h.ThDBytes, 2*h.NDfn, ts) || !u64(h.ThDHist, h.NDfn*h.SizeBins, ts)) {
		h.NDfn = 0
	}
	rec, err := f.readCopyRecord()
	f.copied = rec
	return err
}

// gpu reads the GPU block consistently (its own sequence word).
func (f *File) gpu() (hdr header) {
	if f.h.GPUDevices == 0 {
		return hdr
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&hdr)), unsafe.Sizeof(hdr))
	f.consistent(offGPUSeq, offGPUBlock, int(gpuBlockSize), b[offGPUBlock:])
	return hdr
}

func (f *File) load64(off uintptr) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&f.data[off])))
}

func (f *File) load32(off uintptr) uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&f.data[off])))
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// maxRetries bounds the attempts at a consistent copy of a record a writer
// keeps changing; past it the last copy is used (its error is at most one
// state change).
const maxRetries = 10000

// consistent copies n bytes at off while the 64-bit sequence word at seqOff
// is even and unchanged across the copy.
func (f *File) consistent(seqOff uintptr, off uintptr, n int, into []byte) {
	for try := 0; try < maxRetries; try++ {
		s1 := f.load64(seqOff)
		if s1&1 != 0 {
			continue
		}
		copy(into, f.data[off:off+uintptr(n)])
		if f.load64(seqOff) == s1 {
			return
		}
	}
	copy(into, f.data[off:off+uintptr(n)])
}
