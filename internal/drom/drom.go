// Package drom reads and writes the node's DROM registry: the shared-memory
// object in which libpopmon's processes started with DROM (DLB_ARGS=--drom,
// popmon run --drom) keep their CPU masks, and in which a tool sets a
// process's new mask, which the process adopts at its next parallel region
// or DLB_PollDROM. It is popmon taskset's half of shim/drom_shm.c: the
// layout is the one shim/drom_shm.h defines (TestLayoutMatchesC and the e2e
// tests check the two sides against each other), and the operations follow
// the C ones (DLB 3.7's shmem_procinfo semantics and return codes), lock-free
// by compare-and-swap of one word at a time.
package drom

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The layout (shim/drom_shm.h).
const (
	MaxCPUs  = 1024
	MaxSlots = 255
	Magic    = 0x504f504d44524f01
	OffCPUs  = 64
	OffSlots = 8256
	SlotSize = 320
	Size     = OffSlots + (MaxSlots+1)*SlotSize
	words    = MaxCPUs / 64

	offWord   = 0
	offStart  = 8
	offFlags  = 16
	offSeq    = 24
	offCur    = 32
	offStolen = 160

	flagPreregistered = 1
	flagReturnStolen  = 2

	slotFree  = 0
	slotLive  = 1
	slotDying = 2
)

// DLB's DROM flags (<dlb_types.h>).
const (
	FlagSteal        = 1
	FlagReturnStolen = 2
	FlagSyncQuery    = 4
)

// Code is one of DLB's return codes (<dlb_errors.h>).
type Code int

// DLB's codes the registry returns.
const (
	NoUpdt  Code = 2
	Noted   Code = 1
	Success Code = 0
	ErrInit Code = -3
	NoShmem Code = -5
	NoProc  Code = -6
	PDirty  Code = -7
	Perm    Code = -8
	Timeout Code = -9
	NoMem   Code = -14
)

var codeText = map[Code]string{
	NoUpdt: "DLB_NOUPDT", Noted: "DLB_NOTED", Success: "DLB_SUCCESS", ErrInit: "DLB_ERR_INIT",
	NoShmem: "DLB_ERR_NOSHMEM", NoProc: "DLB_ERR_NOPROC", PDirty: "DLB_ERR_PDIRTY", Perm: "DLB_ERR_PERM",
	Timeout: "DLB_ERR_TIMEOUT", NoMem: "DLB_ERR_NOMEM",
}

func (c Code) Error() string {
	if s, ok := codeText[c]; ok {
		return s
	}
	return fmt.Sprintf("DLB code %d", int(c))
}

// Name is the registry's path for key (as the library names it).
func Name(key string) string {
	if key == "" {
		key = "default"
	}
	var b strings.Builder
	for i := 0; i < len(key) && i < 64; i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return fmt.Sprintf("/dev/shm/popmon-drom-%d-%s", os.Geteuid(), b.String())
}

// Key is the registry key a tool uses: POPMON_DROM_KEY, else DLB_ARGS'
// --shm-key, else the default.
func Key() string {
	if k := os.Getenv("POPMON_DROM_KEY"); k != "" {
		return k
	}
	for _, w := range strings.Fields(os.Getenv("DLB_ARGS")) {
		if v, ok := strings.CutPrefix(w, "--shm-key="); ok {
			return v
		}
	}
	return ""
}

// ErrNoRegistry: no process on this node registered with this key yet.
var ErrNoRegistry = errors.New("no DROM registry")

// Registry is the mapped object.
type Registry struct {
	path string
	mem  []byte
}

// Open maps the registry at path. create makes an empty one when there is
// none (as the library does); without it, a missing object is
// ErrNoRegistry. An object of another user, open to others, not a plain
// file or of another size is refused, as the library refuses it.
func Open(path string, create bool) (*Registry, error) {
	flags := syscall.O_RDWR | syscall.O_CLOEXEC | syscall.O_NOFOLLOW
	if create {
		flags |= syscall.O_CREAT
	}
	fd, err := syscall.Open(path, flags, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("%w at %s", ErrNoRegistry, path)
		}
		return nil, fmt.Errorf("cannot open the DROM registry %s: %v", path, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	bad := ""
	switch {
	case syscall.Fstat(fd, &st) != nil:
		bad = "cannot be read"
	case int(st.Uid) != os.Geteuid():
		bad = "belongs to another user"
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		bad = "is not a plain shared-memory object"
	case st.Mode&0o077 != 0:
		bad = "is open to other users (mode not 0600)"
	case st.Size == 0 && create && syscall.Ftruncate(fd, Size) != nil:
		bad = "cannot be sized"
	case st.Size == 0 && !create:
		return nil, fmt.Errorf("%w at %s (empty)", ErrNoRegistry, path)
	case st.Size != 0 && st.Size != Size:
		bad = "has another layout (another popmon version)"
	}
	if bad != "" {
		return nil, fmt.Errorf("the DROM registry %s %s", path, bad)
	}
	mem, err := syscall.Mmap(fd, 0, Size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("cannot map the DROM registry %s: %v", path, err)
	}
	r := &Registry{path: path, mem: mem}
	if !atomic.CompareAndSwapUint64(r.u64(0), 0, Magic) && atomic.LoadUint64(r.u64(0)) != Magic {
		r.Close()
		return nil, fmt.Errorf("the DROM registry %s has another layout (another popmon version)", path)
	}
	return r, nil
}

// Close unmaps the registry.
func (r *Registry) Close() error {
	if r.mem == nil {
		return nil
	}
	err := syscall.Munmap(r.mem)
	r.mem = nil
	return err
}

// Path is the object's path.
func (r *Registry) Path() string { return r.path }

// NCPUs is the node's CPU count as the registry knows it.
func (r *Registry) NCPUs() int {
	return int(atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.mem[8]))))
}

func (r *Registry) u64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }
func (r *Registry) cpu(c int) *uint64   { return r.u64(OffCPUs + 8*c) }
func (r *Registry) slot(s, field int) *uint64 {
	return r.u64(OffSlots + SlotSize*s + field)
}

func owner(w uint64) int                 { return int(w & 0xff) }
func cmake(old uint64, o int) uint64     { return uint64(o) | ((old>>32)+1)<<32 }
func spid(w uint64) int                  { return int(uint32(w)) }
func sstate(w uint64) int                { return int((w >> 32) & 3) }
func sgen(w uint64) uint64               { return w >> 34 }
func smake(pid, st int, g uint64) uint64 { return uint64(uint32(pid)) | uint64(st)<<32 | g<<34 }

func (r *Registry) bit(s, field, c int) bool {
	return atomic.LoadUint64(r.slot(s, field+8*(c/64)))>>(c%64)&1 == 1
}

func (r *Registry) setBit(s, field, c int, on bool) {
	p := r.slot(s, field+8*(c/64))
	for {
		old := atomic.LoadUint64(p)
		n := old &^ (1 << (c % 64))
		if on {
			n = old | 1<<(c%64)
		}
		if old == n || atomic.CompareAndSwapUint64(p, old, n) {
			return
		}
	}
}

func (r *Registry) bump(s int) {
	if s >= 1 && s <= MaxSlots {
		atomic.AddUint64(r.slot(s, offSeq), 1)
	}
}

// Proc is one registered process as read at a moment.
type Proc struct {
	Slot, PID     int
	Preregistered bool // DLB_DROM_PreInit: the process has not started yet
	Current       Mask // the CPUs it runs on
	Future        Mask // the CPUs it owns (its new mask when Dirty)
	Stolen        Mask // CPUs others took from it
	Dirty         bool // a new mask it has not adopted yet
}

func (r *Registry) masks(s int) (cur, fut Mask, dirty bool) {
	for c := 0; c < MaxCPUs; c++ {
		f := owner(atomic.LoadUint64(r.cpu(c))) == s
		k := r.bit(s, offCur, c)
		if f {
			fut.Set(c)
		}
		if k {
			cur.Set(c)
		}
		dirty = dirty || f != k
	}
	return
}

func (r *Registry) proc(s int) (Proc, bool) {
	w := atomic.LoadUint64(r.slot(s, offWord))
	if sstate(w) != slotLive {
		return Proc{}, false
	}
	cur, fut, dirty := r.masks(s)
	var stolen Mask
	for c := 0; c < MaxCPUs; c++ {
		if r.bit(s, offStolen, c) {
			stolen.Set(c)
		}
	}
	return Proc{Slot: s, PID: spid(w), Preregistered: atomic.LoadUint64(r.slot(s, offFlags))&flagPreregistered != 0,
		Current: cur, Future: fut, Stolen: stolen, Dirty: dirty}, true
}

// Procs lists the live processes (dead ones are freed first).
func (r *Registry) Procs() []Proc {
	r.Sweep()
	var ps []Proc
	for s := 1; s <= MaxSlots; s++ {
		if p, ok := r.proc(s); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// Find is the live slot of pid, 0 none.
func (r *Registry) Find(pid int) int {
	for s := 1; s <= MaxSlots; s++ {
		w := atomic.LoadUint64(r.slot(s, offWord))
		if sstate(w) == slotLive && spid(w) == pid && !r.check(s) {
			return s
		}
	}
	return 0
}

// Sweep frees the slots of dead processes; their number.
func (r *Registry) Sweep() int {
	n := 0
	for s := 1; s <= MaxSlots; s++ {
		if r.check(s) {
			n++
		}
	}
	return n
}

// check frees slot s when its process is dead.
func (r *Registry) check(s int) bool {
	w := atomic.LoadUint64(r.slot(s, offWord))
	st := sstate(w)
	if st == slotFree {
		return false
	}
	var start uint64
	if st == slotLive {
		start = atomic.LoadUint64(r.slot(s, offStart))
	}
	if Alive(spid(w), start) {
		return false
	}
	mine := smake(os.Getpid(), slotDying, sgen(w))
	if !atomic.CompareAndSwapUint64(r.slot(s, offWord), w, mine) {
		return false
	}
	r.free(s, mine, false)
	return true
}

func (r *Registry) release(s, c int, giveBack bool) {
	to := 0
	if giveBack {
		for o := 1; o <= MaxSlots && to == 0; o++ {
			if o != s && sstate(atomic.LoadUint64(r.slot(o, offWord))) == slotLive && r.bit(o, offStolen, c) {
				to = o
			}
		}
	}
	for {
		w := atomic.LoadUint64(r.cpu(c))
		if owner(w) != s {
			return
		}
		if atomic.CompareAndSwapUint64(r.cpu(c), w, cmake(w, to)) {
			if to != 0 {
				r.setBit(to, offStolen, c, false)
				r.bump(to)
			}
			return
		}
	}
}

func (r *Registry) free(s int, w uint64, giveBack bool) {
	giveBack = giveBack || atomic.LoadUint64(r.slot(s, offFlags))&flagReturnStolen != 0
	for c := 0; c < MaxCPUs; c++ {
		if owner(atomic.LoadUint64(r.cpu(c))) == s {
			r.release(s, c, giveBack)
		}
	}
	for i := 0; i < words; i++ {
		atomic.StoreUint64(r.slot(s, offCur+8*i), 0)
		atomic.StoreUint64(r.slot(s, offStolen+8*i), 0)
	}
	atomic.StoreUint64(r.slot(s, offFlags), 0)
	atomic.StoreUint64(r.slot(s, offStart), 0)
	atomic.AddUint64(r.slot(s, offSeq), 1)
	atomic.CompareAndSwapUint64(r.slot(s, offWord), w, smake(0, slotFree, sgen(w)+1))
}

// stealable: the CPUs of m others own can be taken now (no owner has a
// change pending), and m is within the registry.
func (r *Registry) stealable(me int, m Mask) bool {
	for _, c := range m.CPUs() {
		if c >= MaxCPUs {
			return false
		}
		o := owner(atomic.LoadUint64(r.cpu(c)))
		if o == 0 || o == me || r.check(o) {
			continue
		}
		if _, _, dirty := r.masks(o); dirty {
			return false
		}
	}
	return true
}

func (r *Registry) take(me, c int) {
	for {
		w := atomic.LoadUint64(r.cpu(c))
		o := owner(w)
		if o == me {
			break
		}
		if o != 0 {
			r.bump(o)
		}
		if atomic.CompareAndSwapUint64(r.cpu(c), w, cmake(w, me)) {
			if o != 0 {
				r.setBit(o, offStolen, c, true)
				r.bump(o)
			}
			break
		}
	}
	r.setBit(me, offStolen, c, false)
}

// SetMask is DLB_DROM_SetProcessMask for another process: pid's new mask
// is m, CPUs of other processes stolen, CPUs not in m freed. Success,
// NoProc, PDirty (pid has a change pending), Perm (a CPU's owner has a
// change pending, or a CPU beyond the registry), Timeout (FlagSyncQuery:
// pid did not adopt it within 1 s).
func (r *Registry) SetMask(pid int, m Mask, flags int) Code {
	s := r.Find(pid)
	if s == 0 {
		return NoProc
	}
	if _, _, dirty := r.masks(s); dirty {
		return PDirty
	}
	if !r.stealable(s, m) {
		return Perm
	}
	r.bump(s)
	for c := 0; c < MaxCPUs; c++ {
		if m.Has(c) {
			r.take(s, c)
		} else if owner(atomic.LoadUint64(r.cpu(c))) == s {
			r.release(s, c, false)
		}
	}
	r.bump(s)
	if flags&FlagSyncQuery != 0 {
		for waited := 0; ; waited += 10 {
			p, ok := r.proc(s)
			if !ok || p.PID != pid {
				return NoProc
			}
			if !p.Dirty {
				break
			}
			if waited >= 1000 {
				return Timeout
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return Success
}

// PreInit is DLB_DROM_PreInit: a slot for pid (a process about to start,
// usually this one before exec) with mask m, which the process inherits
// when its library registers. FlagSteal takes CPUs from their owners;
// FlagReturnStolen gives them back when pid ends. Success, ErrInit (pid
// registered), Perm, NoMem.
func (r *Registry) PreInit(pid int, m Mask, flags int) Code {
	r.Sweep()
	if r.Find(pid) != 0 {
		return ErrInit
	}
	if flags&FlagSteal == 0 {
		for _, c := range m.CPUs() {
			if c >= MaxCPUs {
				return Perm
			}
			if o := owner(atomic.LoadUint64(r.cpu(c))); o != 0 && !r.check(o) {
				return Perm
			}
		}
	} else if !r.stealable(0, m) {
		return Perm
	}
	s := 0
	for i := 1; i <= MaxSlots && s == 0; i++ {
		w := atomic.LoadUint64(r.slot(i, offWord))
		if sstate(w) == slotFree && atomic.CompareAndSwapUint64(r.slot(i, offWord), w, smake(pid, slotDying, sgen(w))) {
			s = i
		}
	}
	if s == 0 {
		return NoMem
	}
	atomic.StoreUint64(r.slot(s, offStart), StartTime(pid))
	fl := uint64(flagPreregistered)
	if flags&FlagReturnStolen != 0 {
		fl |= flagReturnStolen
	}
	atomic.StoreUint64(r.slot(s, offFlags), fl)
	for i := 0; i < words; i++ {
		atomic.StoreUint64(r.slot(s, offCur+8*i), m[i])
		atomic.StoreUint64(r.slot(s, offStolen+8*i), 0)
	}
	atomic.StoreUint64(r.slot(s, offWord), smake(pid, slotLive, sgen(atomic.LoadUint64(r.slot(s, offWord)))))
	for _, c := range m.CPUs() {
		if flags&FlagSteal != 0 {
			r.take(s, c)
			continue
		}
		for {
			w := atomic.LoadUint64(r.cpu(c))
			o := owner(w)
			if o == s {
				break
			}
			if o != 0 && !r.check(o) {
				r.Unregister(s, false)
				return Perm
			}
			if atomic.CompareAndSwapUint64(r.cpu(c), w, cmake(w, s)) {
				break
			}
		}
	}
	return Success
}

// PostFinalize is DLB_DROM_PostFinalize: pid's slot freed (its CPUs free,
// or back to those they were stolen from with returnStolen). NoProc when
// pid has none (it finalized itself).
func (r *Registry) PostFinalize(pid int, returnStolen bool) Code {
	s := r.Find(pid)
	if s == 0 {
		return NoProc
	}
	r.Unregister(s, returnStolen)
	return Success
}

// Unregister frees slot s.
func (r *Registry) Unregister(s int, returnStolen bool) {
	w := atomic.LoadUint64(r.slot(s, offWord))
	if sstate(w) != slotLive {
		return
	}
	mine := smake(spid(w), slotDying, sgen(w))
	if atomic.CompareAndSwapUint64(r.slot(s, offWord), w, mine) {
		r.free(s, mine, returnStolen)
	}
}

// StartTime is process pid's start time (/proc/PID/stat field 22), 0
// unknown.
func StartTime(pid int) uint64 {
	_, start, ok := procStat(pid)
	if !ok {
		return 0
	}
	return start
}

// procStat reads /proc/PID/stat: its state letter and start time.
func procStat(pid int) (state byte, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, 0, true
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return f[0][0], 0, true
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return f[0][0], v, true
}

// Alive reports whether pid, started at start (0: not compared), is alive
// (zombies are not), as the library decides.
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, s, ok := procStat(pid)
	if !ok {
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return false
		}
		err := syscall.Kill(pid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	if st == 'Z' || st == 'X' || st == 'x' {
		return false
	}
	return start == 0 || s == 0 || s == start
}
