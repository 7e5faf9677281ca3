package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/popmon/popmon/measure"
)

// DefaultInterval is how often the sampler reads every live file. A cut
// after an abnormal end falls on the last sample at which every process
// was alive, so it is at most this much before the first death.
const DefaultInterval = 250 * time.Millisecond

// keepSamples is how many past sampling instants are kept per process.
const keepSamples = 8

// Sampler reads every live file of a folder at aligned instants, and
// notes which processes were alive at each.
type Sampler struct {
	dir   string
	every time.Duration
	mu    sync.Mutex
	procs map[string]*tracked
	stop  chan struct{}
	done  chan struct{}
	k     int64 // instants sampled
	// perInterval instants make one interval of the time series, stride
	// times that once a run is long (series.go).
	perInterval, stride int64
	ser                 seriesStore // the series' regions and budget (series.go)
	// copies is the folder of the node copies (SESSION/nodes), "" when
	// only the local folder is read; host is this node's name.
	copies, host string
}

type tracked struct {
	f       *File
	final   *Snapshot           // the latest read, alive or not
	samples map[int64]*Snapshot // by instant, while alive (local files only)
	alive   bool
	ser     procSeries // the time series' interval ends (series.go)
	// lastAlive is the latest snapshot taken while the process ran and
	// measured: its accounts hold up to that snapshot's moment.
	lastAlive *Snapshot
	// goneAt is the first read that found the process no longer alive
	// (local files only): one that left no trace ended before it.
	goneAt *Snapshot
	// copied: read from a node copy (copy.go), reopened when the agent
	// replaces it (ino).
	copied bool
	ino    uint64
}

// NewSampler returns a sampler of the live files in dir; Start starts it.
func NewSampler(dir string, every time.Duration) *Sampler {
	if every <= 0 {
		every = DefaultInterval
	}
	per := (DefaultSeriesInterval + int64(every)/2) / int64(every)
	host, _ := os.Hostname()
	return &Sampler{dir: dir, every: every, procs: map[string]*tracked{}, perInterval: max(per, 1), stride: 1, host: HostName(host)}
}

// ReadCopies makes the sampler read the node copies below dir too
// (SESSION/nodes/HOST/HOST.PID.live, written by the agents of the other
// nodes): a process's local live file wins over a copy of it. Copies give
// no samples at the sampler's instants (they are up to a copy interval
// old), so a job with copies is cut where each process's accounts end, and
// has no time series.
func (s *Sampler) ReadCopies(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.copies = dir
}

// Start samples in the background until Stop.
func (s *Sampler) Start() {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			s.Sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends the background sampling and reads every file once more.
func (s *Sampler) Stop() {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
	s.Sample()
	s.settle()
}

// settleMax bounds how long Stop waits for the node copies to show how
// their processes ended.
const settleMax = 10 * time.Second

// settle samples again, for at most the time after which a copy is stale,
// until no copied process still runs unfinished: the job ended, but the
// agents' last copies (written as soon as a process ends) may not be there
// yet.
func (s *Sampler) settle() {
	start := time.Now()
	for {
		wait := s.pendingCopies()
		if wait == 0 || time.Since(start) > min(wait, settleMax) {
			return
		}
		time.Sleep(100 * time.Millisecond)
		s.Sample()
	}
}

// pendingCopies returns how long the copies of processes that still ran
// unfinished at their last copy may take to go stale (0: none).
func (s *Sampler) pendingCopies() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var wait time.Duration
	for _, p := range s.procs {
		if f := p.final; p.copied && p.alive && f != nil && f.State < Finalized && f.Copy != nil {
			wait = max(wait, 3*f.Copy.Every+time.Second)
		}
	}
	return wait
}

// Close unmaps every file.
func (s *Sampler) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		p.f.Close()
	}
	s.procs = map[string]*tracked{}
}

// Sample reads every live file of the folder, and the node copies, once
// (one instant).
func (s *Sampler) Sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.pruneSamples()
	k := s.k
	s.k++
	local, _ := filepath.Glob(filepath.Join(s.dir, "*.live"))
	seen := map[string]bool{}
	for _, n := range local {
		key := filepath.Base(n)
		seen[key] = true
		p := s.procs[key]
		if p == nil || p.copied {
			f, err := Open(n)
			if err != nil {
				continue // not ready yet, or not ours: the next instant
			}
			if p == nil {
				p = &tracked{samples: map[int64]*Snapshot{}}
				s.procs[key] = p
			} else {
				p.f.Close()
			}
			p.f, p.copied = f, false
		}
		snap, err := p.f.Read()
		if err != nil {
			continue
		}
		s.note(p, k, snap)
	}
	if s.copies == "" {
		return
	}
	copies, _ := filepath.Glob(filepath.Join(s.copies, "*", "*.live"))
	for _, n := range copies {
		key := filepath.Base(n)
		if seen[key] {
			continue // the local file is read
		}
		seen[key] = true
		p := s.procs[key]
		if p != nil && !p.copied {
			continue
		}
		fi, err := os.Stat(n)
		if err != nil {
			continue
		}
		ino := uint64(0)
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
		if p != nil && p.ino == ino && ino != 0 {
			s.note(p, k, p.final) // the same copy: only its age changed
			continue
		}
		f, err := Open(n)
		if err != nil {
			continue // refused: the previous copy stands
		}
		snap, err := f.Read()
		if err != nil || snap.Copy == nil {
			f.Close()
			continue
		}
		if p == nil {
			p = &tracked{samples: map[int64]*Snapshot{}, copied: true}
			s.procs[key] = p
		} else {
			p.f.Close()
		}
		p.f, p.ino = f, ino
		s.note(p, k, snap)
	}
}

// note records snapshot snap of p read at instant k: whether the process
// is alive (checked here for a process of this node, as its node's agent
// saw it for a copy that is not stale, unknown, so not alive, for a file
// of another node without a copy record), and a sample while it is.
func (s *Sampler) note(p *tracked, k int64, snap *Snapshot) {
	p.final = snap
	switch {
	case snap.Copy != nil:
		p.alive = snap.Copy.Alive && !snap.Copy.Stale(time.Now())
		if snap.Copy.Alive && snap.State < Finalized {
			p.lastAlive = snap
		}
		return // no samples: a copy is up to a copy interval old
	case snap.Host != "" && s.host != "" && snap.Host != s.host:
		p.alive = false // another node's process: kill(pid, 0) would ask the wrong machine
		return
	}
	p.alive = Alive(snap.PID, snap.StartTime)
	if !p.alive && p.goneAt == nil {
		p.goneAt = snap
	}
	if p.alive && snap.State < Finalized {
		p.lastAlive = snap
		p.samples[k] = snap
		delete(p.samples, k-keepSamples)
		if snap.InitTick != 0 {
			s.noteBoundary(p, k, snap)
		}
	}
}

// Alive reports whether process pid, started at startTime (clock ticks
// after boot, /proc/PID/stat field 22; 0: not checked), still exists.
func Alive(pid int, startTime uint64) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return false
	}
	if f[0] == "Z" || f[0] == "X" {
		return false // a zombie has ended
	}
	if startTime == 0 {
		return true
	}
	st, err := strconv.ParseUint(f[19], 10, 64)
	return err == nil && st == startTime
}

// Ended reports whether the job ended normally, and how many live files
// there are: every MPI process (one that passed MPI_Init) finalized; or,
// without any, every process wrote its own measurement. A helper program
// that never called MPI does not make an MPI job abnormal.
func (s *Sampler) Ended() (normal bool, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mpi, mpiDone, other, otherDone := 0, 0, 0, 0
	for _, p := range s.procs {
		f := p.final
		if f == nil {
			continue
		}
		n++
		if f.InitTick != 0 {
			mpi++
			if f.State == Finalized {
				mpiDone++
			}
		} else {
			other++
			if f.State == Single {
				otherDone++
			}
		}
	}
	if mpi > 0 {
		return mpiDone == mpi, n
	}
	return otherDone == other, n
}

// Procs returns the processes to assemble and the partial measurement's
// reason and detail. The cut is the last sampling instant at which every
// process was alive and measuring, the same moment for all; without one (a
// job that died within the first interval, or files read after the fact
// by popmon recover) each process is cut where its own accounts end: its
// last state change, or the last moment it was seen alive. Cutting all at
// the earliest such moment would charge the others' later work to a
// shorter run.
// JobEnd is what popmon run knows of how the measured command ended, beyond
// the processes' live files.
type JobEnd struct {
	// Forwarded names the signal popmon run passed on to the job
	// ("SIGTERM sent to popmon run"), empty if none.
	Forwarded string
	// PID is the command's process id (0 when unknown); Signal the signal
	// that ended the command (0 when it exited), Code its exit code.
	PID, Signal, Code int
	// Name is the command's file name (mpirun, timeout, ./app).
	Name string
}

// ended says how the command itself ended, as a noun phrase ("SIGKILL to
// mpirun", "timeout's exit with code 124"); empty when unknown or a
// normal exit.
func (e JobEnd) ended() string {
	switch {
	case e.Name == "":
		return ""
	case e.Signal != 0:
		return signalName(e.Signal) + " to " + e.Name
	case e.Code != 0:
		return fmt.Sprintf("%s's exit with code %d", e.Name, e.Code)
	}
	return ""
}

func (s *Sampler) Procs(end JobEnd) ([]Proc, measure.Partial, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The MPI processes; of a command that ran several jobs, the one that
	// did not finish (a rank of an earlier, finished job is dropped when a
	// process of the same rank did not finalize).
	var ps []*tracked
	unfinished := map[int]bool{}
	for _, p := range s.procs {
		if p.final != nil && p.final.InitTick != 0 && p.final.State != Finalized {
			unfinished[p.final.Rank] = true
		}
	}
	for _, p := range s.procs {
		if p.final != nil && p.final.Rank >= 0 && p.final.InitTick != 0 &&
			!(p.final.State == Finalized && unfinished[p.final.Rank]) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		// A program without MPI: its one process.
		for _, p := range s.procs {
			if p.final != nil && len(s.procs) == 1 {
				p.final.Rank = 0
				for _, sn := range p.samples {
					sn.Rank = 0
				}
				ps = append(ps, p)
			}
		}
	}
	if len(ps) == 0 {
		return nil, measure.Partial{}, fmt.Errorf("no measured process left a live file in %s", s.dir)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].final.Rank < ps[j].final.Rank })
	// The latest instant every process was sampled at, alive.
	best := int64(-1)
	for k := range ps[0].samples {
		all := true
		for _, p := range ps[1:] {
			if _, ok := p.samples[k]; !ok {
				all = false
				break
			}
		}
		if all && k > best {
			best = k
		}
	}
	out := make([]Proc, len(ps))
	for i, p := range ps {
		f := p.final
		vu := f.LastTransition()
		if best >= 0 {
			if sn := p.samples[best]; delta(vu, sn.Tick) > 0 {
				vu = sn.Tick
			}
		}
		if sn := p.lastAlive; sn != nil && delta(vu, sn.Tick) > 0 {
			vu = sn.Tick
		}
		out[i] = Proc{Snap: f, Final: f, Cut: vu, ValidUntil: vu, End: endOf(f, p.alive)}
		if p.goneAt != nil {
			out[i].goneSeen = f.NSAt(p.goneAt.Tick)
		}
		if out[i].End == "killed" && end.Signal != 0 && end.PID != 0 && f.PID == end.PID {
			// The command itself, whose ending popmon saw (a program
			// without MPI has no signal handler of popmon's).
			out[i].End, out[i].endSignal = signalName(end.Signal), end.Signal
		}
		if best >= 0 {
			sn := p.samples[best]
			out[i].Snap, out[i].Cut = sn, sn.Tick
		}
	}
	reason, detail := why(out, end)
	return out, measure.Partial{Reason: reason, Detail: detail}, nil
}

var signalNames = map[int]string{
	int(syscall.SIGSEGV): "SIGSEGV", int(syscall.SIGBUS): "SIGBUS", int(syscall.SIGFPE): "SIGFPE",
	int(syscall.SIGILL): "SIGILL", int(syscall.SIGABRT): "SIGABRT", int(syscall.SIGTERM): "SIGTERM",
	int(syscall.SIGINT): "SIGINT", int(syscall.SIGHUP): "SIGHUP", int(syscall.SIGQUIT): "SIGQUIT",
	int(syscall.SIGXCPU): "SIGXCPU", int(syscall.SIGKILL): "SIGKILL",
}

// SignalName names signal n: "SIGTERM", or "signal N" for one without a
// name here.
func SignalName(n int) string {
	if s, ok := signalNames[n]; ok {
		return s
	}
	return fmt.Sprintf("signal %d", n)
}

// signalName names signal n for a process's end: "signal 11 (SIGSEGV)".
func signalName(n int) string {
	if _, ok := signalNames[n]; ok {
		return fmt.Sprintf("signal %d (%s)", n, SignalName(n))
	}
	return SignalName(n)
}

func isFault(n int) bool {
	switch syscall.Signal(n) {
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGABRT:
		return true
	}
	return false
}

// endOf says how the process of final snapshot f ended.
func endOf(f *Snapshot, alive bool) string {
	switch f.State {
	case Finalized, Single:
		return "finalized"
	case Aborted:
		return fmt.Sprintf("MPI_Abort(%d)", f.StateArg)
	case Signaled:
		return signalName(f.StateArg)
	case NoFinalize:
		if f.LastSignal != 0 {
			return "exit without MPI_Finalize after " + signalName(f.LastSignal)
		}
		return "exit without MPI_Finalize"
	}
	if f.LastSignal != 0 {
		return signalName(f.LastSignal)
	}
	if alive {
		return "running"
	}
	return "killed"
}

// why gives the job's reason and a sentence: the earliest end the
// processes recorded (MPI_Abort, a fatal signal, an exit without
// MPI_Finalize) is the cause, the others its consequences, unless a process
// that left no trace (SIGKILL) was found gone before it: then that one is
// named first, and the recorded end after it. Without a recorded end, the
// signal popmon run passed on, else how the command itself ended, else the
// processes were killed.
func why(ps []Proc, end JobEnd) (string, string) {
	type ev struct {
		rank   int
		end    string
		reason string
		at     int64
	}
	var first *ev
	killed := 0
	var gone *Proc // the killed process found gone earliest
	for i, p := range ps {
		f := p.Final
		if f == nil {
			f = p.Snap
		}
		e := ev{rank: f.Rank, end: p.End}
		tick := f.StateTick
		switch {
		case strings.HasPrefix(p.End, "MPI_Abort"):
			e.reason = measure.PartialAborted
		case strings.HasPrefix(p.End, "exit without"):
			e.reason = measure.PartialNoFinalize
		case strings.HasPrefix(p.End, "signal"):
			sig := f.StateArg
			if f.State != Signaled {
				sig, tick = f.LastSignal, f.LastSignalTick
			}
			if p.endSignal != 0 { // seen by popmon run, not recorded
				sig, tick = p.endSignal, f.LastTransition()
			}
			e.reason = measure.PartialTerminated
			if isFault(sig) {
				e.reason = measure.PartialCrashed
			}
		case p.End == "killed":
			killed++
			if p.goneSeen != 0 && (gone == nil || p.goneSeen < gone.goneSeen) {
				gone = &ps[i]
			}
			continue
		default:
			continue
		}
		e.at = f.NSAt(tick)
		if first == nil || e.at < first.at {
			first = &e
		}
	}
	if first != nil {
		verb := map[string]string{
			measure.PartialAborted:    "called " + first.end,
			measure.PartialNoFinalize: "exited without MPI_Finalize",
			measure.PartialCrashed:    "died of " + first.end,
			measure.PartialTerminated: "was ended by " + first.end,
		}[first.reason]
		if gone != nil && gone.goneSeen < first.at {
			// A rank that vanished (SIGKILL, the OOM killer) and was
			// found gone before any other recorded its end: the
			// launcher ending the job because of it, most likely. One
			// found gone only after (a SIGKILL among the launcher's
			// SIGTERMs) cannot be told first: the recorded end is.
			f := gone.Final
			if f == nil {
				f = gone.Snap
			}
			return measure.PartialKilled, fmt.Sprintf("rank %d was killed first (SIGKILL, or it vanished without a trace: found gone %.2f s before rank %d %s)",
				f.Rank, float64(first.at-gone.goneSeen)/1e9, first.rank, verb)
		}
		if len(ps) == 1 {
			return first.reason, "the process " + verb
		}
		return first.reason, fmt.Sprintf("rank %d %s first", first.rank, verb)
	}
	if end.Forwarded != "" {
		return measure.PartialTerminated, "the job was ended by " + end.Forwarded
	}
	if killed == 0 {
		if e := end.ended(); e != "" {
			return measure.PartialTerminated, fmt.Sprintf("the job was ended by %s while its %d processes still ran", e, len(ps))
		}
		return measure.PartialKilled, fmt.Sprintf("the command ended while its %d processes still ran", len(ps))
	}
	detail := fmt.Sprintf("%d of %d processes were killed (SIGKILL, or they vanished without a trace)", killed, len(ps))
	if e := end.ended(); e != "" {
		detail += "; the job was ended by " + e
	}
	return measure.PartialKilled, detail
}

// Scan opens every live file in dir and returns a sampler holding one read
// of each (popmon recover: the processes are gone).
func Scan(dir string) (*Sampler, error) {
	return ScanSession(dir, "")
}

// ScanSession is Scan with the node copies below copies (SESSION/nodes)
// too; the local folder may then be missing (popmon recover on a node whose
// live files are gone).
func ScanSession(dir, copies string) (*Sampler, error) {
	fi, err := os.Stat(dir)
	local := err == nil && fi.IsDir()
	remote, _ := filepath.Glob(filepath.Join(copies, "*", "*.live"))
	if !local && (copies == "" || len(remote) == 0) {
		return nil, fmt.Errorf("no live folder %s: the processes' files are gone (a node's tmpfs is wiped at the end of a Slurm job)", dir)
	}
	s := NewSampler(dir, 0)
	if copies != "" {
		s.ReadCopies(copies)
	}
	s.Sample()
	return s, nil
}
