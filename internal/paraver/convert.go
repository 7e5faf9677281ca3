package paraver

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

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
}

// maxBadLines bounds how many malformed lines SkipBad tolerates before the
// import fails anyway: past that, the file is not a damaged trace but not a
// trace.
const maxBadLines = 1000

// thread is the accounting state of one trace thread.
type thread struct {
	task    *task
	primary bool

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

// task is the accounting state of one trace task (process).
type task struct {
	rank    int
	node    int // 1-based as in the header; 0 unknown
	threads []*thread

	parOpen   bool
	parStart  int64
	parWall   int64
	ilb, isch int64
	iserInst  int64 // idle of threads outside the team during instances

	parallels, ompTasks, mpiCalls int64
	calls                         map[callKey]*callStat
}

// importer converts one stream.
type importer struct {
	h       *Header
	opt     Options
	app     int32
	tasks   []*task
	threads [][]*thread // [task-1][thread-1]

	sawMPI, sawOMP   bool
	sawInstr, sawCyc bool
	comms            int64
	bad              int64
	firstBad         string
	unsorted         int64
}

// Import reads a .prv stream and converts the selected application into a
// measurement with one region, Global, spanning the whole trace. See
// docs/import.md for how trace states and events map to popmon's accounts.
func Import(r io.Reader, opt Options) (*measure.Measurement, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	h := rd.Header()
	if opt.App == 0 {
		opt.App = 1
	}
	if opt.App < 1 || opt.App > len(h.Apps) {
		return nil, fmt.Errorf("the trace has %d application(s); there is no application %d", len(h.Apps), opt.App)
	}
	im := &importer{h: h, opt: opt, app: int32(opt.App)}
	im.setup()
	nextProgress := int64(4 << 20)
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *SyntaxError
			if opt.SkipBad && errors.As(err, &se) {
				im.bad++
				if im.firstBad == "" {
					im.firstBad = se.Error()
				}
				if im.bad > maxBadLines {
					return nil, fmt.Errorf("more than %d malformed lines (the first: %s): this is not a damaged trace but not a Paraver trace", maxBadLines, im.firstBad)
				}
				continue
			}
			if se != nil || errors.As(err, &se) {
				return nil, fmt.Errorf("%w (use --skip-bad to skip malformed lines)", err)
			}
			return nil, err
		}
		if err := im.record(rec); err != nil {
			if opt.SkipBad {
				im.bad++
				if im.firstBad == "" {
					im.firstBad = fmt.Sprintf("line %d: %v", rd.Line(), err)
				}
				continue
			}
			return nil, fmt.Errorf("line %d: %w (use --skip-bad to skip malformed lines)", rd.Line(), err)
		}
		if opt.Progress != nil && rd.Bytes() >= nextProgress {
			opt.Progress(rd.Bytes())
			nextProgress = rd.Bytes() + 4<<20
		}
	}
	if opt.Progress != nil {
		opt.Progress(rd.Bytes())
	}
	return im.finish()
}

// setup allocates the per-thread accounts of the selected application.
func (im *importer) setup() {
	app := im.h.Apps[im.opt.App-1]
	for i, t := range app.Tasks {
		tk := &task{rank: i, node: t.Node, calls: map[callKey]*callStat{}}
		ths := make([]*thread, t.Threads)
		for j := range ths {
			ths[j] = &thread{task: tk, primary: j == 0}
		}
		tk.threads = ths
		im.tasks = append(im.tasks, tk)
		im.threads = append(im.threads, ths)
	}
}

// thread returns the accounts of a record's thread.
func (im *importer) thread(rec *Record) (*thread, error) {
	t, th := int(rec.Task), int(rec.Thread)
	if t < 1 || t > len(im.threads) {
		return nil, fmt.Errorf("task %d does not exist (the header declares %d tasks in application %d)", t, len(im.threads), im.app)
	}
	if th < 1 || th > len(im.threads[t-1]) {
		return nil, fmt.Errorf("thread %d of task %d does not exist (the header declares %d)", th, t, len(im.threads[t-1]))
	}
	return im.threads[t-1][th-1], nil
}

// record accounts one record.
func (im *importer) record(rec *Record) error {
	if rec.App != im.app {
		if rec.Kind == KindGlobalComm || int(rec.App) <= len(im.h.Apps) {
			return nil // another application
		}
		return fmt.Errorf("application %d does not exist (the header declares %d)", rec.App, len(im.h.Apps))
	}
	switch rec.Kind {
	case KindState:
		th, err := im.thread(rec)
		if err != nil {
			return err
		}
		if rec.Time < th.pos {
			im.unsorted++
		}
		th.advance(rec.Time)
		th.state, th.stateEnd = rec.State, rec.End
		if th.pos > rec.Time { // overlap with accounted time: keep the rest
			th.stateEnd = max(th.stateEnd, th.pos)
		}
	case KindEvent:
		th, err := im.thread(rec)
		if err != nil {
			return err
		}
		im.event(th, rec)
	case KindComm:
		im.comms++
		im.sawMPI = true
	}
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
				th.instructions += e.Value
			}
		case e.Type == EventCycles:
			im.sawCyc = true
			if th.lastUseful {
				th.cycles += e.Value
			}
		case e.Type >= EventMPIFirst && e.Type <= EventMPILast:
			im.sawMPI = true
			if th.primary {
				tk.syncWorkers(t)
			}
			if th.inMPI { // leave the open call first (a 0 or a new call)
				th.leaveMPI(t)
			}
			if e.Value != 0 {
				th.inMPI, th.mpiKey, th.mpiStart = true, callKey{e.Type, e.Value}, t
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

// leaveMPI closes the thread's open MPI call at t.
func (th *thread) leaveMPI(t int64) {
	cs := th.task.calls[th.mpiKey]
	if cs == nil {
		cs = &callStat{}
		th.task.calls[th.mpiKey] = cs
	}
	cs.calls++
	cs.time += max(t-th.mpiStart, 0)
	th.inMPI = false
}

// syncWorkers accounts the task's other threads up to t, before the
// primary's context (parallel region, MPI) changes at t.
func (tk *task) syncWorkers(t int64) {
	for _, w := range tk.threads[1:] {
		w.advance(t)
	}
}

// openInstance opens a parallel region instance at t.
func (tk *task) openInstance(t int64) {
	tk.parOpen, tk.parStart = true, t
	tk.parallels++
	for _, th := range tk.threads {
		th.inInstance, th.worked = 0, false
	}
	tk.threads[0].advance(t)
}

// closeInstance closes the open instance at t: the idle times of the team
// give scheduling (the least idle thread's idle, on every team thread) and
// load imbalance (the rest); threads that did no work are outside the team
// and their time is serialization (docs/measurement-format.md, OpenMP
// accounting).
func (tk *task) closeInstance(t int64) {
	tk.threads[0].advance(t)
	tk.parWall += max(t-tk.parStart, 0)
	n := int64(0)
	minIdle := int64(math.MaxInt64)
	for i, th := range tk.threads {
		if i == 0 || th.worked {
			n++
			minIdle = min(minIdle, th.inInstance)
		}
	}
	for i, th := range tk.threads {
		if i == 0 || th.worked {
			tk.ilb += th.inInstance - minIdle
		} else {
			tk.iserInst += th.inInstance
		}
		th.inInstance, th.worked = 0, false
	}
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
		if th.inFunc {
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

// finish closes what is open at the trace's end and builds the measurement.
func (im *importer) finish() (*measure.Measurement, error) {
	h := im.h
	f, _ := scale(h.Unit)
	end := h.End / f // in trace units
	for _, tk := range im.tasks {
		tk.syncWorkers(end)
		tk.threads[0].advance(end)
		if tk.parOpen {
			tk.closeInstance(end)
		}
		for _, th := range tk.threads {
			th.advance(end)
			if th.inMPI {
				th.leaveMPI(end)
			}
		}
	}
	ns := func(v int64) int64 {
		if v > math.MaxInt64/f {
			return math.MaxInt64
		}
		return v * f
	}

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
	counters := im.sawInstr && im.sawCyc
	m.Resources.HardwareCounters = counters
	if !counters {
		m.Counters = &measure.Counters{Mode: measure.CountersAuto, Reason: "counters unavailable: the trace has no instruction and cycle events (42000050, 42000059)"}
	}
	if im.sawMPI {
		m.MPI = &measure.MPI{Library: "MPI (from the trace)", ThreadLevel: "unknown"}
	}
	maxThreads := 0
	for _, tk := range im.tasks {
		maxThreads = max(maxThreads, len(tk.threads))
	}
	if im.sawOMP {
		m.OpenMP = &measure.OpenMP{Runtime: "OpenMP (from the trace)", OMPT: true, MaxThreads: maxThreads}
	} else if maxThreads > 1 {
		m.OpenMP = &measure.OpenMP{Runtime: "threads without OpenMP events", OMPT: false, MaxThreads: maxThreads,
			Reason: "the trace has several threads per task but no OpenMP events (60000001, 60000018, 60000023)"}
	}

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
		m.Processes = append(m.Processes, measure.Process{Rank: tk.rank, Node: nodeIndex[tk.node], Hostname: host, CPUs: len(tk.threads)})
		a := measure.ProcessAccounts{
			Rank: tk.rank, CPUs: len(tk.threads), Visits: 1, ElapsedNS: ns(end),
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
				a.Instructions += clampCount(th.instructions)
				a.Cycles += clampCount(th.cycles)
			}
		}
		p := tk.threads[0]
		a.PrimaryUsefulNS = ns(p.useful)
		a.PrimaryMPINS = ns(p.mpi)
		a.PrimaryOtherNS = ns(p.other)
		a.PrimarySerialUsefulNS = ns(p.serialUseful)
		g.Processes = append(g.Processes, a)
	}
	m.MPICalls = im.callProfile(ns)
	m.Regions = []measure.Region{g}
	m.Resources.Processes = len(im.tasks)
	m.Resources.Nodes = max(len(nodeIndex), 1)
	for _, tk := range im.tasks {
		m.Resources.CPUs += len(tk.threads)
	}
	m.Source = &measure.Source{Kind: measure.SourceParaver, Path: im.opt.Path, Notes: im.notes(counters)}
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
	return m, nil
}

// callProfile aggregates the processes' MPI call profiles by call name:
// totals, and min/max over processes (a process that never made a call
// counts as 0 for its minimum), longest total time first.
func (im *importer) callProfile(ns func(int64) int64) []measure.MPICall {
	byName := make([]map[string]*callStat, len(im.tasks))
	var names []string
	seen := map[string]bool{}
	for i, tk := range im.tasks {
		byName[i] = map[string]*callStat{}
		for k, cs := range tk.calls {
			name := callName(im.opt.PCF, k)
			s := byName[i][name]
			if s == nil {
				s = &callStat{}
				byName[i][name] = s
			}
			s.calls += cs.calls
			s.time += cs.time
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	out := make([]measure.MPICall, 0, len(names))
	for _, name := range names {
		c := measure.MPICall{Name: name, MinTimeNS: math.MaxInt64, MaxTimeNS: -1}
		for i, tk := range im.tasks {
			var calls, t int64
			if s := byName[i][name]; s != nil {
				calls, t = s.calls, ns(s.time)
			}
			c.Calls += calls
			c.TimeNS += t
			c.MinTimeNS = min(c.MinTimeNS, t)
			if t > c.MaxTimeNS {
				c.MaxTimeNS, c.MaxRank = t, tk.rank
			}
		}
		out = append(out, c)
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
		"elapsed = the trace's whole duration from its header, for every process (one region, Global)",
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

// clampCount converts an unsigned counter sum to int64, saturating.
func clampCount(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
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
