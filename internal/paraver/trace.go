package paraver

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/measure"
)

// maxTraceItems bounds the MPI calls, messages, communicator members and
// non-Running states an import keeps for the in-memory trace (64 bytes
// each, about 160 with the slices' slack: 0.6 GB at the bound, about 0.8
// times the .prv text below it): past it the measurement is still
// imported, without the trace (and so without the ideal-network replay).
// A variable only for the tests.
var maxTraceItems = 1 << 22

// ReadTrace reads the Paraver trace at path (.prv, .prv.gz, with its .pcf
// and .row when they exist) into the in-memory trace model: per rank the
// MPI calls of its MPI thread (thread 1), the communicators of the c:
// lines and the messages of the communication records, each attached to
// the calls that contain its times. It reads the trace in the same single
// pass as [ImportFile], with the same checks: what makes an import fail
// makes ReadTrace fail.
func ReadTrace(path string, opt Options) (*trace.Trace, error) {
	_, tr, err := ImportTrace(path, opt, nil)
	if err != nil {
		return nil, err
	}
	if tr.Trace == nil {
		return nil, fmt.Errorf("%s: %s", path, tr.Why)
	}
	return tr.Trace, nil
}

// TraceResult is the in-memory trace an import built alongside its
// measurement.
type TraceResult struct {
	// Trace is the trace; nil when it could not be built.
	Trace *trace.Trace
	// Why says, when Trace is nil, why not (one sentence).
	Why string
}

// ImportTrace is [ImportFile] that also builds the in-memory trace (see
// [ReadTrace]) in the same pass. A trace that cannot be built (too large,
// tasks without records) does not fail the import: the result says why.
func ImportTrace(path string, opt Options, progress func(read, size int64)) (*measure.Measurement, TraceResult, error) {
	opt.buildTrace = true
	m, im, err := importFile(path, opt, progress)
	if err != nil {
		return nil, TraceResult{}, err
	}
	tr, err := im.tb.finish(im)
	if err != nil {
		return m, TraceResult{Why: err.Error()}, nil
	}
	tr.Source = "paraver: " + opt.pathOr(path)
	return m, TraceResult{Trace: tr}, nil
}

// pathOr returns the trace's name for messages: Options.Path, or path.
func (o Options) pathOr(path string) string {
	if o.Path != "" {
		return o.Path
	}
	return path
}

// rawMessage is a communication record, kept until the calls are known.
type rawMessage struct {
	src, dst                   int32 // world ranks
	lsend, psend, lrecv, precv int64 // ns
	size, tag                  int64
}

// rankTrace is the trace of one task's MPI thread being built.
type rankTrace struct {
	calls    []trace.Call
	open     int // index of the open call, -1 when none
	end      int64
	unsorted bool
	// states are the thread's states other than Running, kept to find
	// its non-useful time outside MPI calls (spans of kind "other").
	states []rawState
}

// rawState is a state record other than Running (ns).
type rawState struct {
	begin, end int64
	state      int32
}

// traceBuilder builds the in-memory trace from the records of an import.
type traceBuilder struct {
	f      int64 // trace units → ns
	app    int32
	ntasks int
	ranks  ids[rankTrace]
	comms  []trace.Comm
	commOf map[uint64]int32 // c: line id → index in comms
	msgs   []rawMessage
	items  int
	err    error // why no trace can be built

	foreignMsgs, badComm int64
}

func newTraceBuilder(h *Header, app int32) *traceBuilder {
	f, _ := scale(h.Unit)
	return &traceBuilder{f: f, app: app, ntasks: len(h.Apps[app-1].Tasks), commOf: map[uint64]int32{}}
}

// fail gives up the trace (the import goes on) and frees what it kept.
func (tb *traceBuilder) fail(err error) {
	if tb.err == nil {
		tb.err = err
	}
	tb.ranks, tb.msgs, tb.comms = ids[rankTrace]{}, nil, nil
}

// count adds n items to the budget; false once it is spent.
func (tb *traceBuilder) count(n int) bool {
	if tb.err != nil {
		return false
	}
	tb.items += n
	if tb.items > maxTraceItems {
		tb.fail(fmt.Errorf("the trace holds more than %d MPI calls and messages, more than popmon keeps in memory for the ideal-network replay", maxTraceItems))
		return false
	}
	return true
}

// ns converts a time in trace units to ns, saturating.
func (tb *traceBuilder) ns(t int64) int64 {
	if t > math.MaxInt64/tb.f {
		return math.MaxInt64
	}
	return t * tb.f
}

// comm parses a communicator line c:app:id:ntasks:task...
func (tb *traceBuilder) comm(line []byte) error {
	f := fields{b: line, i: 2}
	app := f.id()
	id := f.uint()
	n := f.uint()
	if f.bad {
		return errors.New("malformed communicator line (want c:app:id:ntasks:task...)")
	}
	if app != tb.app {
		for !f.done() && !f.bad {
			f.uint()
		}
		return nil
	}
	if n > uint64(tb.ntasks) {
		return fmt.Errorf("communicator %d has %d tasks; the application has %d", id, n, tb.ntasks)
	}
	if !tb.count(int(n)) {
		return nil
	}
	members := make([]int32, 0, min(n, uint64(len(line))/2)) // the text bounds it, not the announcement
	for !f.done() && !f.bad {
		t := f.id()
		if t < 1 || int(t) > tb.ntasks {
			return fmt.Errorf("communicator %d names task %d; the application has %d", id, t, tb.ntasks)
		}
		members = append(members, t-1)
	}
	if f.bad || uint64(len(members)) != n {
		return fmt.Errorf("communicator %d announces %d tasks and lists %d", id, n, len(members))
	}
	if _, dup := tb.commOf[id]; dup {
		return fmt.Errorf("communicator %d is defined twice", id)
	}
	tb.commOf[id] = int32(len(tb.comms))
	tb.comms = append(tb.comms, trace.Comm{Members: members})
	return nil
}

// rank returns the trace of task id (valid), created on first sight.
func (tb *traceBuilder) rank(id int32) *rankTrace {
	r := tb.ranks.get(id)
	if r == nil {
		r = &rankTrace{open: -1}
		tb.ranks.put(id, r)
	}
	return r
}

// record adds one record that the importer accepted.
func (tb *traceBuilder) record(rec *Record, pcf *PCF) {
	if tb.err != nil || rec.App != tb.app {
		return
	}
	switch rec.Kind {
	case KindState:
		if rec.Thread == 1 {
			r := tb.rank(rec.Task)
			r.end = max(r.end, tb.ns(rec.End))
			if rec.State != StateRunning && rec.End > rec.Time && tb.count(1) {
				r.states = append(r.states, rawState{tb.ns(rec.Time), tb.ns(rec.End), rec.State})
			}
		}
	case KindEvent:
		if rec.Thread == 1 {
			tb.event(tb.rank(rec.Task), rec, pcf)
		}
	case KindComm:
		c := &rec.Comm
		if c.RecvApp != tb.app || int(rec.Task) > tb.ntasks || int(c.RecvTask) > tb.ntasks {
			tb.foreignMsgs++
			return
		}
		if !tb.count(1) {
			return
		}
		tb.msgs = append(tb.msgs, rawMessage{src: rec.Task - 1, dst: c.RecvTask - 1,
			lsend: tb.ns(c.LogicalSend), psend: tb.ns(c.PhysicalSend), lrecv: tb.ns(c.LogicalRecv), precv: tb.ns(c.PhysicalRecv),
			size: c.Size, tag: c.Tag})
	}
}

// event applies an event record of a task's MPI thread.
func (tb *traceBuilder) event(r *rankTrace, rec *Record, pcf *PCF) {
	t := tb.ns(rec.Time)
	r.end = max(r.end, t)
	var send, recv, commID uint64
	var root, hasColl, hasComm bool
	for _, e := range rec.Events {
		switch {
		case e.Type >= EventMPIFirst && e.Type <= EventMPILast:
			if r.open >= 0 {
				r.calls[r.open].Leave = max(t, r.calls[r.open].Enter)
				r.open = -1
			}
			if e.Value == 0 || !tb.count(1) {
				continue
			}
			c, ok := extraeCalls[e.Value]
			if !ok || c.typ != e.Type {
				c = mpiCall{name: callName(pcf, callKey{e.Type, e.Value}), kind: trace.KindOther}
			}
			if n := len(r.calls); n > 0 && t < r.calls[n-1].Enter {
				r.unsorted = true
			}
			r.open = len(r.calls)
			r.calls = append(r.calls, trace.Call{Name: c.name, Kind: c.kind, Coll: c.coll, Enter: t, Leave: t, Comm: -1, Root: -1})
		case e.Type == EventCollSendBytes:
			send, hasColl = e.Value, true
		case e.Type == EventCollRecvBytes:
			recv, hasColl = e.Value, true
		case e.Type == EventCollRoot:
			root, hasColl = e.Value == 1, true
		case e.Type == EventCollComm:
			commID, hasComm, hasColl = e.Value, true, true
		}
	}
	if !hasColl || r.open < 0 {
		return
	}
	c := &r.calls[r.open]
	c.SendBytes, c.RecvBytes = clampBytes(send), clampBytes(recv)
	if root {
		c.Root = -2 // this rank: set to its world rank in finish
	}
	if hasComm {
		if i, ok := tb.commOf[commID]; ok {
			c.Comm = i
		} else {
			tb.badComm++
		}
	}
}

func clampBytes(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// finish builds the trace once the import has accepted the whole stream.
func (tb *traceBuilder) finish(im *importer) (*trace.Trace, error) {
	if tb.err != nil {
		return nil, tb.err
	}
	if len(im.tasks) < tb.ntasks {
		return nil, fmt.Errorf("%d of the %d tasks have no record, so the trace's messages and collectives cannot be replayed", tb.ntasks-len(im.tasks), tb.ntasks)
	}
	tr := &trace.Trace{Ranks: make([]trace.Rank, tb.ntasks)}
	world := -1
	for i, c := range tb.comms {
		if len(c.Members) == tb.ntasks && isIdentity(c.Members) {
			world = i
			break
		}
	}
	// Comms[0] is the world: move it there (or make it) and renumber.
	remap := make([]int32, len(tb.comms))
	if world < 0 {
		members := make([]int32, tb.ntasks)
		for i := range members {
			members[i] = int32(i)
		}
		tr.Comms = append(tr.Comms, trace.Comm{Members: members})
	} else {
		tr.Comms = append(tr.Comms, tb.comms[world])
		remap[world] = 0
	}
	for i, c := range tb.comms {
		if i != world {
			remap[i] = int32(len(tr.Comms))
			tr.Comms = append(tr.Comms, c)
		}
	}
	var noComm int64
	for _, tk := range im.tasks {
		r := tb.ranks.get(tk.id)
		rk := &tr.Ranks[tk.id-1]
		rk.Threads = int32(tk.declared)
		if row := im.opt.Row; row != nil && tk.node >= 1 && tk.node <= len(row.Nodes) {
			rk.Node = row.Nodes[tk.node-1]
		}
		if r == nil {
			continue // records only on other threads
		}
		if r.open >= 0 {
			r.calls[r.open].Leave = max(r.end, r.calls[r.open].Enter)
		}
		if r.unsorted {
			sort.SliceStable(r.calls, func(i, j int) bool { return r.calls[i].Enter < r.calls[j].Enter })
		}
		for i := range r.calls {
			c := &r.calls[i]
			if c.Root == -2 {
				c.Root = tk.id - 1
			}
			if c.Comm >= 0 {
				c.Comm = remap[c.Comm]
			} else if c.Kind == trace.KindCollective || c.Kind == trace.KindICollective {
				c.Comm = 0
				noComm++
			}
			r.end = max(r.end, c.Leave)
		}
		rk.Calls, rk.End = r.calls, r.end
		rk.Spans = otherSpans(r.calls, r.states, im.opt.PCF)
		r.states = nil
		tr.End = max(tr.End, r.end)
	}
	fillRoots(tr)
	unmatched := tb.attach(tr)
	if tb.foreignMsgs > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d communication record(s) with another application's task were left out", tb.foreignMsgs))
	}
	if unmatched > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d communication record(s) fall outside the MPI calls of their ranks and were left out", unmatched))
	}
	if tb.badComm > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d collective(s) name a communicator without a c: line; replayed on MPI_COMM_WORLD", tb.badComm))
	}
	if noComm > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d collective(s) carry no communicator event (50100004); replayed on MPI_COMM_WORLD", noComm))
	}
	return tr, nil
}

// isIdentity reports whether members are 0, 1, 2, ...
func isIdentity(members []int32) bool {
	for i, m := range members {
		if m != int32(i) {
			return false
		}
	}
	return true
}

// attach attaches the communication records to the calls that contain
// their times (prv2dim's rule) and returns how many fit no call.
func (tb *traceBuilder) attach(tr *trace.Trace) int64 {
	var unmatched int64
	tr.Messages = make([]trace.Message, 0, len(tb.msgs))
	for _, m := range tb.msgs {
		sc := tr.Ranks[m.src].Calls
		rc := tr.Ranks[m.dst].Calls
		send := entered(sc, m.lsend)
		post := entered(rc, m.lrecv)
		done := int32(-1)
		if post >= 0 {
			done = left(rc, m.precv, post)
		}
		if send < 0 || post < 0 || done < 0 {
			unmatched++
			continue
		}
		sendDone := send
		if sc[send].Kind == trace.KindIsend {
			sendDone = -1 // the Wait that completed it is not in the record
		}
		tr.Messages = append(tr.Messages, trace.Message{Src: m.src, Dst: m.dst, Tag: int32(min(max(m.tag, math.MinInt32), math.MaxInt32)),
			Comm: 0, Bytes: m.size, SendCall: send, SendDone: sendDone, RecvPost: post, RecvDone: done,
			LogSend: m.lsend, PhysSend: m.psend, LogRecv: m.lrecv, PhysRecv: m.precv})
	}
	tb.msgs = nil
	return unmatched
}

// entered returns the call that contains t, the last to enter at or
// before it (for entry times: a call that ends where the next begins
// gives t to the next); -1 when none does.
func entered(calls []trace.Call, t int64) int32 {
	i := sort.Search(len(calls), func(i int) bool { return calls[i].Enter > t }) - 1
	if i < 0 || t > calls[i].Leave {
		return -1
	}
	return int32(i)
}

// left returns the first call from 'from' on that contains t (for exit
// times); -1 when none does.
func left(calls []trace.Call, t int64, from int32) int32 {
	rest := calls[from:]
	i := sort.Search(len(rest), func(i int) bool { return rest[i].Leave >= t })
	if i == len(rest) || rest[i].Enter > t {
		return -1
	}
	return from + int32(i)
}

// fillRoots gives every member of a rooted collective the root that the
// root's own record names (Extrae flags only the root's entry): the k-th
// collective of each rank on a communicator is one operation.
func fillRoots(tr *trace.Trace) {
	type key struct {
		comm int32
		seq  int64
	}
	roots := map[key]int32{}
	seq := map[int32]int64{}
	for _, r := range tr.Ranks {
		clear(seq)
		for _, c := range r.Calls {
			if c.Kind != trace.KindCollective || !rooted(c.Coll) {
				continue
			}
			k := key{c.Comm, seq[c.Comm]}
			seq[c.Comm]++
			if c.Root >= 0 {
				roots[k] = c.Root
			}
		}
	}
	if len(roots) == 0 {
		return
	}
	for ri := range tr.Ranks {
		clear(seq)
		calls := tr.Ranks[ri].Calls
		for i := range calls {
			c := &calls[i]
			if c.Kind != trace.KindCollective || !rooted(c.Coll) {
				continue
			}
			k := key{c.Comm, seq[c.Comm]}
			seq[c.Comm]++
			if root, ok := roots[k]; ok && c.Root < 0 {
				c.Root = root
			}
		}
	}
}

// rooted reports whether a collective has a root.
func rooted(c trace.Coll) bool {
	return c == trace.CollBcast || c == trace.CollScatter || c == trace.CollReduce || c == trace.CollGather
}

// SpanOther is the Span.Kind of the MPI thread's time outside MPI calls
// that is not useful: Paraver states other than Running there (Not
// created, I/O, Others, Idle). Its Name is the state's name.
const SpanOther = "other"

// stateNames are Paraver's standard state names, by value (Extrae's .pcf).
var stateNames = []string{"Idle", "Running", "Not created", "Waiting a message", "Blocking Send", "Synchronization",
	"Test/Probe", "Scheduling and Fork/Join", "Wait/WaitAll", "Blocked", "Immediate Send", "Immediate Receive", "I/O",
	"Group Communication", "Tracing Disabled", "Others", "Send Receive"}

// stateName names a state value: Paraver's standard name, the .pcf's, or
// "state N".
func stateName(s int32, pcf *PCF) string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	if pcf != nil && pcf.States[s] != "" {
		return pcf.States[s]
	}
	return fmt.Sprintf("state %d", s)
}

// otherSpans returns the parts of the non-Running states outside the
// calls, as spans of kind "other", adjacent ones of one state merged.
func otherSpans(calls []trace.Call, states []rawState, pcf *PCF) []trace.Span {
	sort.SliceStable(states, func(i, j int) bool { return states[i].begin < states[j].begin })
	var spans []trace.Span
	add := func(a, b int64, st int32) {
		if b <= a {
			return
		}
		name := stateName(st, pcf)
		if n := len(spans); n > 0 && spans[n-1].Leave == a && spans[n-1].Name == name {
			spans[n-1].Leave = b
			return
		}
		spans = append(spans, trace.Span{Kind: SpanOther, Name: name, Enter: a, Leave: b})
	}
	for _, st := range states {
		a := st.begin
		// The calls that overlap [a, end): from the last that enters at or
		// before a.
		i := max(sort.Search(len(calls), func(i int) bool { return calls[i].Enter > a })-1, 0)
		for ; i < len(calls) && a < st.end; i++ {
			c := calls[i]
			if c.Leave <= a {
				continue
			}
			if c.Enter >= st.end {
				break
			}
			add(a, c.Enter, st.state)
			a = max(a, c.Leave)
		}
		add(a, st.end, st.state)
	}
	return spans
}
