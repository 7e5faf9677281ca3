package live

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"
)

// Node copies. On a node other than popmon run's, the node's agent (popmon
// agent) copies every live file into the session folder on the shared file
// system, SESSION/nodes/HOST/HOST.PID.live, so that a job whose nodes'
// memory is wiped at its end still leaves every rank's accounts. A copy has
// the layout of the live file, at the same offsets (the header, the thread
// records and region table in use, the OpenMP constructs in use, the MPI
// function names; the rest is a hole), so the same reader reads it; the last 64 bytes of its header page,
// zeros in a live file, are the copy record: when the agent copied it, and
// whether the process was alive then (docs/live-format.md).

// copyMagic starts a copy record.
const copyMagic = "POPMCOPY"

// copyRecordSize is the copy record's size, at the end of the header page.
const copyRecordSize = 64

// copyRecord is the copy record.
type copyRecord struct {
	Magic   [8]byte
	Tick    uint64 // the process's clock when the agent read the file
	NS      int64  // the node's CLOCK_MONOTONIC then
	RealNS  int64  // the node's CLOCK_REALTIME then
	Alive   uint32 // 1: the process still ran after the copy was taken
	EveryMS uint32 // the agent's copy interval
	Seq     uint64 // copies of this file the agent wrote before this one
	_       [16]byte
}

// CopyInfo says where a snapshot read from a node copy comes from.
type CopyInfo struct {
	// Alive says the process still ran when the agent copied its file.
	Alive bool
	// RealNS is CLOCK_REALTIME on the copier's node when it copied.
	RealNS int64
	// Every is the agent's copy interval.
	Every time.Duration
}

// Stale reports whether the copy is too old for its process to count as
// alive at the time now: its agent (or node) stopped copying. Two missed
// copies and a second of clock difference between nodes are tolerated.
func (c *CopyInfo) Stale(now time.Time) bool {
	return now.UnixNano()-c.RealNS > int64(3*c.Every+time.Second)
}

// CopyDir is where the agent of node host keeps its copies in a session
// folder: SESSION/nodes/HOST.
func CopyDir(session, host string) string {
	return filepath.Join(session, "nodes", HostName(host))
}

// HostName turns a host name into the name libpopmon gives it in file
// names and headers: at most 63 bytes, '/' replaced by '_'.
func HostName(h string) string {
	if len(h) > 63 {
		h = h[:63]
	}
	return strings.ReplaceAll(h, "/", "_")
}

// readCopyRecord reads the copy record of the header page, if there is
// one: nil for a live file; an error for a record that cannot be one.
func (f *File) readCopyRecord() (*copyRecord, error) {
	off := int(f.h.HeaderSize) - copyRecordSize
	if off < int(unsafe.Sizeof(header{})) || int(f.h.HeaderSize) > len(f.data) {
		return nil, nil
	}
	if !bytes.Equal(f.data[off:off+8], []byte(copyMagic)) {
		return nil, nil
	}
	r := *(*copyRecord)(unsafe.Pointer(&f.data[off]))
	if r.EveryMS == 0 || r.EveryMS > 3600*1000 || r.Tick == 0 || r.Alive > 1 || r.NS <= 0 {
		return nil, fmt.Errorf("%s: not a node copy of this popmon (copy record)", f.Path)
	}
	return &r, nil
}

// State returns the state the process last recorded (a single word read).
func (f *File) State() State {
	return State(f.load32(offState))
}

// Process returns the process's pid and start time (/proc/PID/stat field
// 22), which name it even after its pid is reused, and its host.
func (f *File) Process() (pid int, startTime uint64, host string) {
	return int(f.h.PID), f.h.StartTime, cstring(f.h.Hostname[:])
}

// WriteCopy writes a node copy of the live file to path: written as a
// temporary file next to it, then renamed over it, so that a reader sees
// the previous copy or this one, never a mix. Every thread record in use
// and the region table are copied consistently (as Read does). alive is
// asked after the copy: true says the process still ran, so its accounts
// hold up to the copy's moment. every is the agent's copy interval and
// seq numbers the copies of this file.
func (f *File) WriteCopy(path string, every time.Duration, seq uint64, alive func() bool) error {
	if f.data == nil {
		return fmt.Errorf("%s: closed", f.Path)
	}
	h := &f.h
	if int(h.HeaderSize)-copyRecordSize < int(unsafe.Sizeof(header{})) {
		return fmt.Errorf("%s: no room for a copy record in its header", f.Path)
	}
	tick, ns := clockNow(h.ClockTSC != 0)
	head := append([]byte(nil), f.data[:h.HeaderSize]...)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".copy-*")
	if err != nil {
		return fmt.Errorf("copying %s: %w", f.Path, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Truncate(int64(len(f.data))); err != nil {
		return fmt.Errorf("copying %s: %w", f.Path, err)
	}
	// The counts in the header copy say which records the copy holds.
	nt := min(binary.LittleEndian.Uint32(head[offNThreads:]), h.MaxThreads)
	rec := make([]byte, h.ThreadSize)
	for i := uint32(0); i < nt; i++ {
		off := uintptr(h.ThreadOff) + uintptr(i)*uintptr(h.ThreadSize)
		f.consistent(off+uintptr(h.ThSeq), off, int(h.ThreadSize), rec)
		if _, err := tmp.WriteAt(rec, int64(off)); err != nil {
			return fmt.Errorf("copying %s: %w", f.Path, err)
		}
	}
	nr := min(binary.LittleEndian.Uint32(head[offNRegions:]), h.MaxRegions)
	if nr > 0 {
		table := make([]byte, int(nr)*int(h.RegionSize))
		f.consistent(offRegionsSeq, uintptr(h.RegionOff), len(table), table)
		if _, err := tmp.WriteAt(table, int64(h.RegionOff)); err != nil {
			return fmt.Errorf("copying %s: %w", f.Path, err)
		}
	}
	if h.NamesSize > 0 {
		if _, err := tmp.WriteAt(f.data[h.NamesOff:h.NamesOff+h.NamesSize], int64(h.NamesOff)); err != nil {
			return fmt.Errorf("copying %s: %w", f.Path, err)
		}
	}
	// The OpenMP constructs in use: the index entries the header copy
	// counts and the slots they name (never the unused slots: reading them
	// would allocate the live file's pages).
	if h.OMPSize != 0 {
		used := min(binary.LittleEndian.Uint32(head[offOMPUsed:]), h.OMPMax)
		idx := append([]byte(nil), f.data[h.OMPIndexOff:h.OMPIndexOff+4*used]...)
		for k := uint32(0); k < used; k++ {
			v := binary.LittleEndian.Uint32(idx[4*k:])
			if v == 0 || v > h.OMPMax {
				continue
			}
			off := uint64(h.OMPOff) + uint64(v-1)*uint64(h.OMPSize)
			if _, err := tmp.WriteAt(f.data[off:off+uint64(h.OMPSize)], int64(off)); err != nil {
				return fmt.Errorf("copying %s: %w", f.Path, err)
			}
		}
		if _, err := tmp.WriteAt(idx, int64(h.OMPIndexOff)); err != nil {
			return fmt.Errorf("copying %s: %w", f.Path, err)
		}
	}
	r := copyRecord{Tick: tick, NS: ns, RealNS: time.Now().UnixNano(), EveryMS: uint32(max(every.Milliseconds(), 1)), Seq: seq}
	copy(r.Magic[:], copyMagic)
	if alive() {
		r.Alive = 1
	}
	copy(head[len(head)-copyRecordSize:], unsafe.Slice((*byte)(unsafe.Pointer(&r)), copyRecordSize))
	if _, err := tmp.WriteAt(head, 0); err != nil {
		return fmt.Errorf("copying %s: %w", f.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("copying %s: %w", f.Path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("copying %s: %w", f.Path, err)
	}
	ok = true
	return nil
}
