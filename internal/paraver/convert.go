package paraver

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
)

// Extrae's conventions for the values popmon interprets.
const (
	// StateIdle and StateRunning are Paraver's state values for "Idle"
	// and "Running" (useful computation).
	StateIdle    = 0
	StateRunning = 1

	// EventMPIFirst … EventMPILast are Extrae's MPI call event types
	// (point-to-point, collective, other, one-sided, I/O): a nonzero value
	// enters the call it names, 0 leaves it.
	EventMPIFirst = 50000001
	EventMPILast  = 50000005
	// EventOMPParallel is an OpenMP parallel construct (nonzero: open;
	// 0: close) on the thread that encounters it.
	EventOMPParallel = 60000001
	// EventOMPBarrier is an OpenMP barrier.
	EventOMPBarrier = 60000005
	// EventOMPFunction and EventOMPTaskFunction mark the execution of an
	// outlined parallel function or a task function on any thread.
	EventOMPFunction     = 60000018
	EventOMPTaskFunction = 60000023
	// EventInstructions and EventCycles are PAPI_TOT_INS and PAPI_TOT_CYC:
	// the counts since the thread's previous counter reading, carried by
	// the event at the end of a burst.
	EventInstructions = 42000050
	EventCycles       = 42000059
)

// Options control an import.
type Options struct {
	// App is the application (Paraver ptask) to import, 1-based; 0 means
	// 1. Records of other applications are ignored.
	App int
	// SkipBad continues past malformed lines (counted and noted in the
	// measurement) instead of failing at the first.
	SkipBad bool
	// Path is the trace's name for messages and the measurement's source.
	Path string
	// ToolVersion is popmon's version, recorded in the measurement.
	ToolVersion string
	// PCF and Row name states, events and nodes; either may be nil.
	PCF *PCF
	Row *Row
	// Progress, when set, is called every few megabytes with the bytes of
	// .prv text read so far.
	Progress func(textBytes int64)

	// buildTrace also builds the in-memory trace (ImportTrace).
	buildTrace bool
	// eager keeps every worker's accounts current at each change of its
	// primary's context instead of parking idle ones: the reference the
	// tests compare the parked accounting with.
	eager bool
}

// maxBadLines bounds how many malformed lines SkipBad tolerates before the
// import fails anyway: past that, the file is not a damaged trace but not a
// trace.
const maxBadLines = 1000

// thread is the accounting state of one trace thread.
type thread struct {
	task    *task
	primary bool
	seen    bool // a record named it

	pos      int64 // accounted up to here (trace units)
	state    int32 // current state record's state …
	stateEnd int64 // … and its end
	inMPI    bool
	mpiKey   callKey
	mpiStart int64
	inFunc   bool // inside an executed parallel or task function
	// lastUseful is the class of the last non-empty interval accounted:
	// the counters carried by an event at its end belong to it.
	lastUseful bool

	useful, mpi, other, iser, mw int64
	parUseful, serialUseful      int64
	inInstance                   int64 // idle inside the open parallel instance
	worked                       bool  // did useful work in the open instance
	instructions, cycles         uint64

	// A parked worker is idle and its accounts lag: from parking on they
	// grow like those of the task's idle thread, whose accounts then were
	// parkIser, parkMw, and whose instance idle differed from this one's
	// by parkOffset in instance parkEpoch.
	parked           bool
	parkIser, parkMw int64
	parkOffset       int64
	parkEpoch        int64
}

// callKey is an MPI call: event type and value.
type callKey struct {
	typ int64
	val uint64
}

// callStat is a process's profile of one MPI call.
type callStat struct {
	calls int64
	time  int64
}

// task is the accounting state of one trace task (process), created when a
// record first names it.
type task struct {
	id       int32 // 1-based, as in the file
	rank     int
	node     int // 1-based as in the header; 0 unknown
	declared int // threads the header declares
	// threads holds the primary (always) and the workers that records
	// have named, in order of first record; byID finds them by id.
	threads []*thread
	byID    ids[thread]
	// idle stands for each declared worker that no record has named yet:
	// such a worker is idle throughout, so they all share one history,
	// kept once and counted unseen times. It is also the clock of the
	// parked workers.
	idle   thread
	unseen int64
	// active holds the workers kept current at each change of the
	// primary's context; the others (parked of them) are idle and
	// accounted in aggregate, so that a change costs the active workers,
	// not all of them. parkIn sums the parkOffset of the workers parked in
	// the current epoch (which changes when an instance opens or closes);
	// parkedWorked lists those that worked in the open instance.
	active       []*thread
	parked       int64
	parkIn       int64
	epoch        int64
	parkedWorked []*thread
	eager        bool
	visits       int64 // worker syncs, for the tests

	parOpen   bool
	parStart  int64
	parWall   int64
	ilb, isch int64
	iserInst  int64 // idle of threads outside the team during instances

	parallels, ompTasks, mpiCalls int64
	calls                         map[callKey]*callStat
}

// ids maps 1-based ids to objects created on first sight: a dense slice up
// to a bound that grows with the number of objects, a map beyond it. So
// memory follows the objects the records name, whatever their ids (a
// header may declare 10⁹ threads, and a record name the last of them).
type ids[T any] struct {
	dense  []*T
	sparse map[int32]*T
	n      int
}

// get returns the object of id, or nil.
func (x *ids[T]) get(id int32) *T {
	if i := int(id) - 1; i >= 0 && i < len(x.dense) {
		return x.dense[i]
	}
	return x.sparse[id]
}

// put adds the object of id (absent so far).
func (x *ids[T]) put(id int32, v *T) {
	x.n++
	if limit := 2*x.n + 64; int(id) <= limit {
		if int(id) > len(x.dense) {
			grown := make([]*T, min(max(int(id), 2*len(x.dense)), limit))
			copy(grown, x.dense)
			x.dense = grown
			for k, w := range x.sparse { // keep one place per id
				if int(k) <= len(grown) {
					grown[k-1] = w
					delete(x.sparse, k)
				}
			}
		}
		x.dense[id-1] = v
		return
	}
	if x.sparse == nil {
		x.sparse = map[int32]*T{}
	}
	x.sparse[id] = v
}

// firstMissing returns the lowest id ≥ 1 without an object.
func (x *ids[T]) firstMissing() int32 {
	id := int32(1)
	for x.get(id) != nil {
		id++
	}
	return id
}

// importer converts one stream.
type importer struct {
	h     *Header
	opt   Options
	app   int32
	end   int64 // the header's end, in trace units
	tasks []*task
	byID  ids[task]
	// lastTask and lastThread name lastTh, the thread found last.
	lastTask, lastThread int32
	lastTh               *thread

	records int64 // state, event and communication records of any application
	last    int64 // the latest time a record reaches, in trace units

	sawMPI, sawOMP   bool
	sawInstr, sawCyc bool
	comms            int64
	bad              int64
	firstBad         string
	cut              string // where the file ends inside a line or compressed block (SkipBad)
	unsorted         int64
	// tb builds the in-memory trace in the same pass (ImportTrace); nil
	// when not asked for.
	tb *traceBuilder
}

// completeShare is how much of its header's duration a trace's records must
// cover: a complete trace's last record ends at the header's end time (mpi2prv
// writes the header from it); one that stops before 99 % of it was cut short.
const completeShare = 0.99

// cutShort says what to do about a trace that ends early.
const cutShort = "the trace was cut short: re-run mpi2prv or re-copy the file, or pass --skip-bad to import what is there"

// Import reads a .prv stream and converts the selected application into a
// measurement with one region, Global, spanning the whole trace. See
// docs/import.md for how trace states and events map to popmon's accounts,
// and for what makes a trace truncated or its header unusable.
func Import(r io.Reader, opt Options) (*measure.Measurement, error) {
	m, _, err := run(r, opt)
	return m, err
}

// run is Import, returning the importer too (for the tests).
func run(r io.Reader, opt Options) (*measure.Measurement, *importer, error) {
	rd, err := NewReader(r)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) && se.Truncated {
			return nil, nil, fmt.Errorf("%w: the trace was cut short: re-run mpi2prv or re-copy the file", err)
		}
		return nil, nil, err
	}
	h := rd.Header()
	if opt.App == 0 {
		opt.App = 1
	}
	if opt.App < 1 || opt.App > len(h.Apps) {
		return nil, nil, fmt.Errorf("the trace has %d application(s); there is no application %d", len(h.Apps), opt.App)
	}
	f, _ := scale(h.Unit)
	im := &importer{h: h, opt: opt, app: int32(opt.App), end: h.End / f}
	if err := im.checkSize(); err != nil {
		return nil, nil, err
	}
	if opt.buildTrace {
		im.tb = newTraceBuilder(h, im.app)
		rd.onComm = im.tb.comm
	}
	nextProgress := int64(4 << 20)
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				return nil, nil, err
			}
			if se.Truncated { // nothing follows
				if !opt.SkipBad {
					return nil, nil, fmt.Errorf("%w: %s", err, cutShort)
				}
				im.cut = se.Error()
				break
			}
			if !opt.SkipBad {
				return nil, nil, fmt.Errorf("%w (use --skip-bad to skip malformed lines)", err)
			}
			if err := im.skip(se.Error()); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := im.record(rec); err != nil {
			if !opt.SkipBad {
				return nil, nil, fmt.Errorf("line %d: %w (use --skip-bad to skip malformed lines)", rd.Line(), err)
			}
			if err := im.skip(fmt.Sprintf("line %d: %v", rd.Line(), err)); err != nil {
				return nil, nil, err
			}
			continue
		}
		if im.tb != nil {
			im.tb.record(rec, opt.PCF)
		}
		if opt.Progress != nil && rd.Bytes() >= nextProgress {
			opt.Progress(rd.Bytes())
			nextProgress = rd.Bytes() + 4<<20
		}
	}
	if opt.Progress != nil {
		opt.Progress(rd.Bytes())
	}
	m, err := im.finish()
	return m, im, err
}

// skip counts a malformed line that SkipBad skips.
func (im *importer) skip(what string) error {
	im.bad++
	if im.firstBad == "" {
		im.firstBad = what
	}
	if im.bad > maxBadLines {
		return fmt.Errorf("more than %d malformed lines (the first: %s): this is not a damaged trace but not a Paraver trace", maxBadLines, im.firstBad)
	}
	return nil
}

// checkSize rejects a header whose application holds more CPU time than
// any account can: its threads × its duration over 2⁶³ ns (292 years).
// No trace can be that, and every account of the import, a part of that
// product, fits in an int64 below it.
func (im *importer) checkSize() error {
	if im.h.End == 0 {
		return nil
	}
	limit := math.MaxInt64 / im.h.End
	var n int64
	for _, t := range im.h.Apps[im.app-1].Tasks {
		if int64(t.Threads) > limit-n {
			return fmt.Errorf("the header declares %d threads in application %d over %s: more than 292 years of CPU time, which no trace holds; the header is damaged", im.h.Threads(int(im.app)), im.app, units.DurationSignificant(im.h.End))
		}
		n += int64(t.Threads)
	}
	return nil
}

// newTask creates the accounts of task id (valid) on its first record.
func (im *importer) newTask(id int32) *task {
	decl := im.h.Apps[im.app-1].Tasks[id-1]
	tk := &task{id: id, rank: int(id) - 1, node: decl.Node, declared: decl.Threads, calls: map[callKey]*callStat{}, eager: im.opt.eager}
	tk.threads = []*thread{{task: tk, primary: true}} // in byID once a record names it
	tk.idle.task = tk
	tk.unseen = int64(decl.Threads) - 1
	im.tasks = append(im.tasks, tk)
	im.byID.put(id, tk)
	return tk
}

// newWorker creates the accounts of worker id (valid) of tk on its first
// record: until the last change of the primary's context it was idle like
// every worker not yet named, so it starts with their shared history; its
// own records take over from there.
func (tk *task) newWorker(id int32) *thread {
	w := tk.idle
	w.seen = true
	th := &w
	tk.threads = append(tk.threads, th)
	tk.active = append(tk.active, th)
	tk.byID.put(id, th)
	tk.unseen--
	return th
}

// thread returns the accounts of a record's thread, created on its first
// record; the ids are checked against the header.
func (im *importer) thread(rec *Record) (*thread, error) {
	if rec.Task == im.lastTask && rec.Thread == im.lastThread && im.lastTh != nil {
		return im.lastTh, nil // an event and a state of one thread often follow each other
	}
	if tk := im.byID.get(rec.Task); tk != nil {
		if th := tk.byID.get(rec.Thread); th != nil {
			im.lastTask, im.lastThread, im.lastTh = rec.Task, rec.Thread, th
			return th, nil
		}
	}
	return im.firstSight(rec)
}

// firstSight checks a record's ids against the header and creates the
// accounts of its task and thread as needed.
func (im *importer) firstSight(rec *Record) (*thread, error) {
	tasks := im.h.Apps[im.app-1].Tasks
	t, th := int(rec.Task), int(rec.Thread)
	if t < 1 || t > len(tasks) {
		return nil, fmt.Errorf("task %d does not exist (the header declares %d tasks in application %d)", t, len(tasks), im.app)
	}
	if th < 1 || th > tasks[t-1].Threads {
		return nil, fmt.Errorf("thread %d of task %d does not exist (the header declares %d)", th, t, tasks[t-1].Threads)
	}
	tk := im.byID.get(rec.Task)
	if tk == nil {
		tk = im.newTask(rec.Task)
	}
	if th == 1 {
		p := tk.threads[0]
		p.seen = true
		tk.byID.put(1, p)
		return p, nil
	}
	return tk.newWorker(rec.Thread), nil
}

// record accounts one record.
func (im *importer) record(rec *Record) error {
	if rec.App != im.app {
		return im.foreign(rec)
	}
	// Time after the header's end is not the trace's (a cut trace may keep
	// the states that cross its end): every account stops there. The
	// record's own end still tells how far the trace reaches.
	switch rec.Kind {
	case KindState:
		last := rec.End
		rec.Time, rec.End = min(rec.Time, im.end), min(rec.End, im.end)
		th, err := im.thread(rec)
		if err != nil {
			return err
		}
		if th.parked {
			th.task.unpark(th)
		}
		im.records++
		im.last = max(im.last, last)
		if rec.Time < th.pos {
			im.unsorted++
		}
		th.advance(rec.Time)
		th.state, th.stateEnd = rec.State, rec.End
		if th.pos > rec.Time { // overlap with accounted time: keep the rest
			th.stateEnd = max(th.stateEnd, th.pos)
		}
	case KindEvent:
		last := rec.Time
		rec.Time = min(rec.Time, im.end)
		th, err := im.thread(rec)
		if err != nil {
			return err
		}
		if th.parked {
			th.task.unpark(th)
		}
		im.records++
		im.last = max(im.last, last)
		im.event(th, rec)
	case KindComm:
		c := &rec.Comm
		im.records++
		im.last = max(im.last, c.LogicalSend, c.PhysicalSend, c.LogicalRecv, c.PhysicalRecv)
		im.comms++
		im.sawMPI = true
	}
	return nil
}

// foreign notes a record of another application: only how far it reaches.
func (im *importer) foreign(rec *Record) error {
	if rec.Kind == KindGlobalComm {
		return nil // not interpreted
	}
	if int(rec.App) > len(im.h.Apps) {
		return fmt.Errorf("application %d does not exist (the header declares %d)", rec.App, len(im.h.Apps))
	}
	switch rec.Kind {
	case KindState:
		im.last = max(im.last, rec.End)
	case KindEvent:
		im.last = max(im.last, rec.Time)
	case KindComm:
		c := &rec.Comm
		im.last = max(im.last, c.LogicalSend, c.PhysicalSend, c.LogicalRecv, c.PhysicalRecv)
	}
	im.records++
	return nil
}

// event applies an event record to its thread.
func (im *importer) event(th *thread, rec *Record) {
	t := rec.Time
	if t < th.pos {
		im.unsorted++
	}
	th.advance(t)
	tk := th.task
	for _, e := range rec.Events {
		switch {
		case e.Type == EventInstructions:
			im.sawInstr = true
			if th.lastUseful {
				th.instructions = satAdd(th.instructions, e.Value)
			}
		case e.Type == EventCycles:
			im.sawCyc = true
			if th.lastUseful {
				th.cycles = satAdd(th.cycles, e.Value)
			}
		case e.Type >= EventMPIFirst && e.Type <= EventMPILast:
			im.sawMPI = true
			if th.primary {
				tk.syncWorkers(t)
			}
			if th.inMPI { // leave the open call first (a 0 or a new call)
				th.leaveMPI()
			}
			if e.Value != 0 {
				th.inMPI, th.mpiKey, th.mpiStart = true, callKey{e.Type, e.Value}, th.pos
				tk.mpiCalls++
			}
		case e.Type == EventOMPParallel:
			im.sawOMP = true
			if !th.primary {
				continue // nested or foreign: part of the encountering thread's work
			}
			if e.Value != 0 && !tk.parOpen {
				tk.syncWorkers(t)
				tk.openInstance(t)
			} else if e.Value == 0 && tk.parOpen {
				tk.syncWorkers(t)
				tk.closeInstance(t)
			}
		case e.Type == EventOMPFunction || e.Type == EventOMPTaskFunction:
			im.sawOMP = true
			th.inFunc = e.Value != 0
			if e.Value != 0 && e.Type == EventOMPTaskFunction {
				tk.ompTasks++
			}
		case e.Type == EventOMPBarrier:
			im.sawOMP = true
		}
	}
}

// leaveMPI closes the thread's open MPI call at its position (the caller
// has advanced it to the call's end; where a record went back in time,
// calls still never overlap).
func (th *thread) leaveMPI() {
	cs := th.task.calls[th.mpiKey]
	if cs == nil {
		cs = &callStat{}
		th.task.calls[th.mpiKey] = cs
	}
	cs.calls++
	cs.time += th.pos - th.mpiStart
	th.inMPI = false
}

// syncWorkers accounts the task's other threads up to t, before the
// primary's context (parallel region, MPI) changes at t: the idle thread
// and the active workers; an active worker found idle there is parked.
func (tk *task) syncWorkers(t int64) {
	p := &tk.idle
	p.advance(t)
	for i := 0; i < len(tk.active); {
		w := tk.active[i]
		w.advance(t)
		tk.visits++
		if !tk.eager && w.pos == p.pos && w.idleLike() {
			tk.park(w)
			last := len(tk.active) - 1
			tk.active[i], tk.active[last] = tk.active[last], nil
			tk.active = tk.active[:last]
			continue
		}
		i++
	}
}

// idleLike reports whether the worker's time from its position on is
// classified like an idle thread's until its next record: it is not in MPI
// and not running an outlined function.
func (th *thread) idleLike() bool {
	return !th.inMPI && !(th.inFunc && th.state == StateRunning && th.stateEnd > th.pos)
}

// park parks an active worker whose position is the idle thread's.
func (tk *task) park(w *thread) {
	p := &tk.idle
	w.parked = true
	w.parkIser, w.parkMw = p.iser, p.mw
	w.parkEpoch, w.parkOffset = tk.epoch, w.inInstance-p.inInstance
	tk.parkIn += w.parkOffset
	tk.parked++
	if w.worked {
		tk.parkedWorked = append(tk.parkedWorked, w)
	}
}

// unpark brings a parked worker's accounts up to the idle thread's
// position (the last change of the primary's context: from there the
// worker's own records take over, as if it had been active) and makes it
// active.
func (tk *task) unpark(w *thread) {
	p := &tk.idle
	w.iser += p.iser - w.parkIser
	w.mw += p.mw - w.parkMw
	if w.parkEpoch == tk.epoch {
		w.inInstance = p.inInstance + w.parkOffset
		tk.parkIn -= w.parkOffset
	} else { // parked before the open instance, or outside instances
		w.inInstance, w.worked = p.inInstance, false
	}
	if p.pos > w.pos {
		w.pos, w.lastUseful = p.pos, false
	}
	w.parked = false
	tk.parked--
	tk.active = append(tk.active, w)
}

// openInstance opens a parallel region instance at t.
func (tk *task) openInstance(t int64) {
	p0 := tk.threads[0]
	p0.advance(t)
	// From the primary's position: where a record went back in time,
	// instances still never overlap.
	tk.parOpen, tk.parStart = true, p0.pos
	tk.parallels++
	p0.inInstance, p0.worked = 0, false
	for _, w := range tk.active {
		w.inInstance, w.worked = 0, false
	}
	tk.newEpoch()
}

// newEpoch starts the idle accounting of a new instance (or of the time
// after one): parked workers' instance idle starts again from 0.
func (tk *task) newEpoch() {
	tk.idle.inInstance, tk.parkIn = 0, 0
	tk.epoch++
	tk.parkedWorked = tk.parkedWorked[:0]
}

// closeInstance closes the open instance at t: the idle times of the team
// give scheduling (the least idle thread's idle, on every team thread) and
// load imbalance (the rest); threads that did no work are outside the team
// and their time is serialization (docs/measurement-format.md, OpenMP
// accounting). The caller has synced the workers to t.
func (tk *task) closeInstance(t int64) {
	p0 := tk.threads[0]
	p0.advance(t)
	tk.parWall += p0.pos - tk.parStart
	for _, w := range tk.parkedWorked { // in the team: needed one by one
		if w.parked && w.parkEpoch == tk.epoch {
			tk.unpark(w)
			w.advance(t)
		}
	}
	n := int64(1)
	minIdle := p0.inInstance
	for _, w := range tk.active {
		if w.worked {
			n++
			minIdle = min(minIdle, w.inInstance)
		}
	}
	tk.ilb += p0.inInstance - minIdle
	p0.inInstance, p0.worked = 0, false
	for _, w := range tk.active {
		if w.worked {
			tk.ilb += w.inInstance - minIdle
		} else {
			tk.iserInst += w.inInstance
		}
		w.inInstance, w.worked = 0, false
	}
	// Never in the team: the workers no record named yet, and the parked
	// ones (their idle in the instance is the idle thread's, plus their
	// offsets).
	tk.iserInst += tk.idle.inInstance*(tk.unseen+tk.parked) + tk.parkIn
	tk.newEpoch()
	tk.isch += n * minIdle
	tk.parOpen = false
}

// advance accounts the thread's time from its position up to t: the
// current state until its end, then Idle where no state record covers the
// time.
func (th *thread) advance(t int64) {
	if t <= th.pos {
		return
	}
	if th.pos < th.stateEnd {
		e := min(t, th.stateEnd)
		th.account(th.state, e-th.pos)
		th.pos = e
	}
	if t > th.pos {
		th.account(StateIdle, t-th.pos)
		th.pos = t
	}
}

// account classifies dt of the thread in state s under its current context.
func (th *thread) account(s int32, dt int64) {
	if dt <= 0 {
		return
	}
	tk := th.task
	if s == StateRunning && (th.primary || th.inFunc) {
		th.useful += dt
		if th.inFunc || tk.parOpen { // inside a parallel region: not serial
			th.parUseful += dt
		} else {
			th.serialUseful += dt
		}
		if tk.parOpen {
			th.worked = true
		}
		th.lastUseful = true
		return
	}
	// Not useful: a worker running outside outlined functions is in the
	// OpenMP runtime (spinning), like every non-running state.
	th.lastUseful = false
	switch {
	case th.inMPI:
		th.mpi += dt
	case tk.parOpen:
		th.inInstance += dt
	case !th.primary:
		if tk.threads[0].inMPI {
			th.mw += dt
		} else {
			th.iser += dt
		}
	default:
		th.other += dt
	}
}

// finish checks that the trace is complete, closes what is open at its end
// and builds the measurement.
func (im *importer) finish() (*measure.Measurement, error) {
	h := im.h
	f, _ := scale(h.Unit)
	end, notes, warnings, err := im.complete()
	if err != nil {
		return nil, err
	}
	im.closeAt(end)
	ns := func(v int64) int64 {
		if v > math.MaxInt64/f {
			return math.MaxInt64
		}
		return v * f
	}
	counters := im.sawInstr && im.sawCyc
	m := im.header(counters)
	g, nodes := im.global(m, end, counters, ns)
	m.MPICalls = im.callProfile(ns)
	m.Regions = []measure.Region{g}
	m.Resources.Processes = len(im.tasks)
	m.Resources.Nodes = max(nodes, 1)
	for _, tk := range im.tasks {
		m.Resources.CPUs += tk.declared
	}
	m.Source = &measure.Source{Kind: measure.SourceParaver, Path: im.opt.Path, Notes: append(im.notes(counters), notes...)}
	m.Warnings = append(m.Warnings, warnings...)
	if h.Date != "" {
		m.Source.Tool = "Paraver trace written " + h.Date
	}
	if im.bad > 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("skipped %d malformed line(s) of the trace (--skip-bad); the first: %s", im.bad, im.firstBad))
	}
	if im.unsorted > 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("%d record(s) of the trace go back in time on their thread; their overlap was not counted twice (is the trace sorted?)", im.unsorted))
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("the converted trace is not a valid measurement (a popmon bug; please report it): %w", err)
	}
	m.Violations() // derived once, here, for pop and the reports
	return m, nil
}

// complete checks that the trace is complete enough to import (records,
// an end time, the declared tasks; with --skip-bad, what is there) and
// returns the end time to close it at (in trace units), the notes and
// warnings that say what was imported; it sorts the tasks by id.
func (im *importer) complete() (end int64, notes, warnings []string, err error) {
	h := im.h
	f, _ := scale(h.Unit)
	end = im.end // in trace units
	skipped := ""
	if im.bad > 0 {
		skipped = fmt.Sprintf(" (%d malformed line(s) skipped; the first: %s)", im.bad, im.firstBad)
	}
	if im.records == 0 {
		return 0, nil, nil, fmt.Errorf("the trace has a header but no records%s: it was cut short or never written; re-run mpi2prv or re-copy the file", skipped)
	}
	if end == 0 {
		return 0, nil, nil, fmt.Errorf("the header's end time is 0: the trace has no duration to account (a damaged header); re-run mpi2prv or re-copy the file")
	}
	if im.cut != "" {
		warnings = append(warnings, fmt.Sprintf("the trace file ends early (%s); the records before it were imported (--skip-bad)", im.cut))
	}
	if float64(im.last) < completeShare*float64(end) {
		reach := fmt.Sprintf("its records stop at %s, %.1f %% of the %s its header declares", units.DurationSignificant(im.last*f), 100*float64(im.last)/float64(end), units.DurationSignificant(h.End))
		if !im.opt.SkipBad {
			return 0, nil, nil, fmt.Errorf("the trace is truncated: %s (a complete trace reaches at least %.0f %%)%s; %s", reach, 100*completeShare, skipped, cutShort)
		}
		if im.last == 0 {
			return 0, nil, nil, fmt.Errorf("the trace is truncated: %s, so nothing can be imported; re-run mpi2prv or re-copy the file", reach)
		}
		end = im.last
		notes = append(notes, fmt.Sprintf("elapsed = 0 … %s only: the trace is truncated (%s); imported up to where the records stop (--skip-bad)", units.DurationSignificant(end*f), reach))
		warnings = append(warnings, fmt.Sprintf("the trace is truncated: %s; only the first %s were imported (--skip-bad)", reach, units.DurationSignificant(end*f)))
	} else {
		notes = append(notes, "elapsed = the trace's whole duration from its header, for every process (one region, Global)")
	}
	if declared := len(h.Apps[im.app-1].Tasks); len(im.tasks) == 0 {
		return 0, nil, nil, fmt.Errorf("none of the %d task(s) the header declares in application %d has a record: there is nothing to import (is it the right --app?)", declared, im.app)
	} else if len(im.tasks) < declared {
		missing := im.byID.firstMissing()
		if !im.opt.SkipBad {
			return 0, nil, nil, fmt.Errorf("the header declares %d tasks in application %d but only %d of them have records (the first without: task %d): the header does not describe this trace (damaged, or another trace's); pass --skip-bad to import the tasks that are there", declared, im.app, len(im.tasks), missing)
		}
		notes = append(notes, fmt.Sprintf("processes = the %d tasks with records, of the %d the header declares (--skip-bad)", len(im.tasks), declared))
		warnings = append(warnings, fmt.Sprintf("%d of the %d tasks the header declares have no record (the first: task %d) and are not in the measurement (--skip-bad)", declared-len(im.tasks), declared, missing))
	}
	sort.Slice(im.tasks, func(i, j int) bool { return im.tasks[i].id < im.tasks[j].id })
	var silent int64 // declared threads without a record
	var firstSilent string
	for _, tk := range im.tasks {
		n := tk.unseen
		if !tk.threads[0].seen {
			n++
		}
		if n > 0 && firstSilent == "" {
			first := int32(1) // the primary, created with its task
			if tk.threads[0].seen {
				first = tk.byID.firstMissing()
			}
			firstSilent = fmt.Sprintf("thread %d of task %d", first, tk.id)
		}
		silent += n
	}
	if silent > 0 {
		warnings = append(warnings, fmt.Sprintf("%d thread(s) the header declares have no record (the first: %s): they are counted as CPUs idle throughout the trace", silent, firstSilent))
	}
	return end, notes, warnings, nil
}

// closeAt closes what is open at end on every thread: parallel
// instances, parked workers, MPI calls.
func (im *importer) closeAt(end int64) {
	for _, tk := range im.tasks {
		tk.syncWorkers(end)
		tk.threads[0].advance(end)
		if tk.parOpen {
			tk.closeInstance(end)
		}
		for _, w := range tk.threads[1:] {
			if w.parked {
				tk.unpark(w)
			}
		}
		for _, th := range tk.threads {
			th.advance(end)
			if th.inMPI {
				th.leaveMPI()
			}
		}
	}
}

// header returns the measurement's header: tool, time, counters (counters
// says whether the trace has instruction and cycle events), MPI and
// OpenMP.
func (im *importer) header(counters bool) *measure.Measurement {
	h := im.h
	m := &measure.Measurement{
		Format: measure.Format, Version: measure.Version,
		Tool:     measure.Tool{Name: "popmon import", Version: im.opt.ToolVersion},
		Command:  []string{},
		Launcher: measure.Launcher{Kind: measure.LauncherNone},
		Clock:    measure.Clock{Source: measure.ClockTrace},
		Warnings: []string{},
	}
	if ts, ok := headerTime(h.Date); ok {
		m.Timestamp = ts.Add(time.Duration(h.End)).UTC().Format(time.RFC3339)
	}
	m.Resources.HardwareCounters = counters
	if !counters {
		m.Counters = &measure.Counters{Mode: measure.CountersAuto, Reason: "counters unavailable: the trace has no instruction and cycle events (42000050, 42000059)"}
	}
	if im.sawMPI {
		m.MPI = &measure.MPI{Library: "MPI (from the trace)", ThreadLevel: "unknown"}
	}
	maxThreads := 0
	for _, tk := range im.tasks {
		maxThreads = max(maxThreads, tk.declared)
	}
	if im.sawOMP {
		m.OpenMP = &measure.OpenMP{Runtime: "OpenMP (from the trace)", OMPT: true, MaxThreads: maxThreads}
	} else if maxThreads > 1 {
		m.OpenMP = &measure.OpenMP{Runtime: "threads without OpenMP events", OMPT: false, MaxThreads: maxThreads,
			Reason: "the trace has several threads per task but no OpenMP events (60000001, 60000018, 60000023)"}
	}

	return m
}

// global adds the processes to m and returns the Global region, the
// trace's one region (elapsed time end, in trace units; ns converts), and
// the number of nodes.
func (im *importer) global(m *measure.Measurement, end int64, counters bool, ns func(int64) int64) (measure.Region, int) {
	// Nodes: index in order of each node's lowest rank.
	nodeIndex := map[int]int{}
	for _, tk := range im.tasks {
		if _, ok := nodeIndex[tk.node]; !ok {
			nodeIndex[tk.node] = len(nodeIndex)
		}
	}
	g := measure.Region{Name: measure.GlobalRegion}
	for _, tk := range im.tasks {
		host := ""
		if row := im.opt.Row; row != nil && tk.node >= 1 && tk.node <= len(row.Nodes) {
			host = row.Nodes[tk.node-1]
		}
		m.Processes = append(m.Processes, measure.Process{Rank: tk.rank, Node: nodeIndex[tk.node], Hostname: host, CPUs: tk.declared})
		a := measure.ProcessAccounts{
			Rank: tk.rank, CPUs: tk.declared, Visits: 1, ElapsedNS: ns(end),
			MPICalls: tk.mpiCalls, OMPParallels: tk.parallels, OMPTasks: tk.ompTasks,
			OMPLoadImbalanceNS: ns(tk.ilb), OMPSchedulingNS: ns(tk.isch), OMPSerializationNS: ns(tk.iserInst),
			PrimaryParallelNS: ns(tk.parWall),
		}
		for _, th := range tk.threads {
			a.UsefulNS += ns(th.useful)
			a.MPINS += ns(th.mpi)
			a.OtherNS += ns(th.other)
			a.OMPSerializationNS += ns(th.iser)
			a.MPIWorkerIdleNS += ns(th.mw)
			a.ParallelUsefulNS += ns(th.parUseful)
			a.ThreadUsefulMaxNS = max(a.ThreadUsefulMaxNS, ns(th.useful))
			if counters {
				a.Instructions = addCount(a.Instructions, th.instructions)
				a.Cycles = addCount(a.Cycles, th.cycles)
			}
		}
		// The workers no record names: idle throughout (checkSize keeps
		// the products in range).
		a.OMPSerializationNS += ns(tk.idle.iser) * tk.unseen
		a.MPIWorkerIdleNS += ns(tk.idle.mw) * tk.unseen
		p := tk.threads[0]
		a.PrimaryUsefulNS = ns(p.useful)
		a.PrimaryMPINS = ns(p.mpi)
		a.PrimaryOtherNS = ns(p.other)
		a.PrimarySerialUsefulNS = ns(p.serialUseful)
		g.Processes = append(g.Processes, a)
	}
	return g, len(nodeIndex)
}

// callProfile aggregates the processes' MPI call profiles by call name:
// totals, and min/max over processes (a process that never made a call
// counts as 0 for its minimum), longest total time first. Its cost is the
// processes' own profiles, never their number times the number of names.
func (im *importer) callProfile(ns func(int64) int64) []measure.MPICall {
	type agg struct {
		c     measure.MPICall
		procs int // processes that made the call
	}
	byName := map[string]*agg{}
	var order []*agg
	for _, tk := range im.tasks { // in rank order: the first rank wins ties
		local := map[string]*callStat{} // several event values may share a name
		for k, cs := range tk.calls {
			name := callName(im.opt.PCF, k)
			s := local[name]
			if s == nil {
				s = &callStat{}
				local[name] = s
			}
			s.calls += cs.calls
			s.time += cs.time
		}
		for name, s := range local {
			a := byName[name]
			if a == nil {
				a = &agg{c: measure.MPICall{Name: name, MinTimeNS: math.MaxInt64, MaxTimeNS: -1}}
				byName[name] = a
				order = append(order, a)
			}
			t := ns(s.time)
			a.c.Calls += s.calls
			a.c.TimeNS += t
			a.c.MinTimeNS = min(a.c.MinTimeNS, t)
			if t > a.c.MaxTimeNS || (t == a.c.MaxTimeNS && tk.rank < a.c.MaxRank) {
				a.c.MaxTimeNS, a.c.MaxRank = t, tk.rank
			}
			a.procs++
		}
	}
	out := make([]measure.MPICall, 0, len(order))
	for _, a := range order {
		if a.procs < len(im.tasks) {
			a.c.MinTimeNS = 0
		}
		out = append(out, a.c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TimeNS != out[j].TimeNS {
			return out[i].TimeNS > out[j].TimeNS
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// notes are the conventions a reader of the imported measurement should know.
func (im *importer) notes(counters bool) []string {
	notes := []string{
		"useful = state Running (on OpenMP worker threads only inside executed parallel or task functions, events 60000018/60000023)",
		"MPI = time inside MPI call events (50000001-50000005); other = remaining non-running time of primary threads (I/O, tracing disabled, the tracer's flushing), charged with MPI time as BSC's basic analysis does",
	}
	if len(im.h.Apps) > 1 {
		notes = append(notes, fmt.Sprintf("application %d of %d imported", im.opt.App, len(im.h.Apps)))
	}
	if counters {
		notes = append(notes, "instructions and cycles = PAPI events 42000050/42000059 carried at the end of useful bursts")
	}
	return notes
}

// callName names an MPI call from the .pcf, or by its event value.
func callName(p *PCF, k callKey) string {
	if n := p.ValueName(k.typ, k.val); n != "" {
		return n
	}
	return fmt.Sprintf("MPI call %d (event %d)", k.val, k.typ)
}

// satAdd adds counter values, saturating.
func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}

// addCount adds an unsigned counter sum to a non-negative int64,
// saturating.
func addCount(sum int64, v uint64) int64 {
	if v > uint64(math.MaxInt64-sum) {
		return math.MaxInt64
	}
	return sum + int64(v)
}

// headerTime parses the header's "dd/mm/yyyy at hh:mm" (the start of the
// trace, local time of the traced machine, read as UTC).
func headerTime(date string) (time.Time, bool) {
	date = strings.TrimSpace(date)
	for _, layout := range []string{"02/01/2006 at 15:04", "2/1/2006 at 15:04", "02/01/06 at 15:04"} {
		if t, err := time.Parse(layout, date); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
