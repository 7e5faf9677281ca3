package paraver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/outfile"
	"github.com/popmon/popmon/internal/trace"
)

// writeTime is the date WriteTrace puts in the header (a variable for the
// golden-file tests).
var writeTime = time.Now

// Paraver states WriteTrace writes for the calls (Extrae's).
const (
	stateRecv        = 3
	stateSend        = 4
	stateSync        = 5
	stateWaitAll     = 8
	stateIsend       = 10
	stateIrecv       = 11
	stateGroupComm   = 13
	stateOthers      = 15
	stateSendRecv    = 16
	stateTestProbe   = 6
	firstPrivateCall = 1000 // event values WriteTrace gives calls Extrae has no id for
)

// WriteTrace writes tr as prefix.prv, prefix.pcf and prefix.row the way
// Extrae writes a trace (docs/import.md, "Writing Paraver traces"): one
// thread per rank (its MPI thread), states covering it from 0 to its end
// (Running outside MPI calls except the trace's "other" spans, the call's
// state inside), the 5000000X call events at entry (Extrae's call id) and
// exit (0), the collective events 50100001-4 on a collective's entry, one
// communication record per message, sorted by time. The files are written
// under temporary names and renamed into place.
func WriteTrace(prefix string, tr *trace.Trace) error {
	if tr == nil || len(tr.Ranks) == 0 {
		return errors.New("paraver: no trace to write (no ranks)")
	}
	w := newTraceWriter(tr)
	body, err := w.records()
	if err != nil {
		return err
	}
	files := []struct {
		ext   string
		write func(io.Writer) error
	}{
		{".prv", func(out io.Writer) error { return w.writePRV(out, body) }},
		{".pcf", w.writePCF},
		{".row", w.writeRow},
	}
	for _, f := range files {
		if err := writeFile(prefix+f.ext, f.write); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes path atomically through a temporary file beside it (a
// character device or a pipe at path is written through, never renamed
// over: outfile.Create).
func writeFile(path string, write func(io.Writer) error) error {
	out, err := outfile.Create(path, true)
	if err != nil {
		return err
	}
	defer out.Abort()
	bw := bufio.NewWriterSize(out, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.Commit()
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// traceWriter holds what the three files share.
type traceWriter struct {
	tr *trace.Trace
	// nodes are the node names in order of each node's lowest rank; node
	// is each rank's index in it.
	nodes []string
	node  []int
	// private numbers the calls Extrae has no id for.
	private map[string]uint64
	// used are the call event values per event type.
	used map[int64]map[uint64]string
}

func newTraceWriter(tr *trace.Trace) *traceWriter {
	w := &traceWriter{tr: tr, node: make([]int, len(tr.Ranks)), private: map[string]uint64{}, used: map[int64]map[uint64]string{}}
	index := map[string]int{}
	for i, r := range tr.Ranks {
		k, ok := index[r.Node]
		if !ok {
			k = len(w.nodes)
			index[r.Node] = k
			w.nodes = append(w.nodes, r.Node)
		}
		w.node[i] = k
	}
	return w
}

// event returns the event type and value of a call, noting them for the
// .pcf.
func (w *traceWriter) event(c *trace.Call) (int64, uint64) {
	typ, val := int64(EventMPIFirst+2), uint64(0)
	if id, ok := extraeIDs[c.Name]; ok {
		typ, val = extraeCalls[id].typ, id
	} else {
		v, ok := w.private[c.Name]
		if !ok {
			v = firstPrivateCall + uint64(len(w.private))
			w.private[c.Name] = v
		}
		val = v
	}
	if w.used[typ] == nil {
		w.used[typ] = map[uint64]string{}
	}
	w.used[typ][val] = c.Name
	return typ, val
}

// callState is the Paraver state of the time inside a call.
func callState(c *trace.Call) int {
	switch c.Kind {
	case trace.KindSend:
		return stateSend
	case trace.KindRecv:
		return stateRecv
	case trace.KindSendrecv:
		return stateSendRecv
	case trace.KindIsend:
		return stateIsend
	case trace.KindIrecv:
		return stateIrecv
	case trace.KindWait:
		return stateWaitAll
	case trace.KindProbe:
		return stateTestProbe
	case trace.KindCollective, trace.KindICollective:
		if c.Coll == trace.CollBarrier {
			return stateSync
		}
		return stateGroupComm
	}
	return stateOthers
}

// spanState is the Paraver state of an "other" span, by its name.
func spanState(name string) int {
	for i, n := range stateNames {
		if n == name && i != StateRunning {
			return i
		}
	}
	return stateOthers
}

// record is one body line and the time it sorts by.
type record struct {
	t    int64
	line string
}

// records returns the body lines of every rank, sorted by time (stable:
// a rank's records at one time keep their order: state, then events).
func (w *traceWriter) records() ([]record, error) {
	tr := w.tr
	var out []record
	for ri := range tr.Ranks {
		r := &tr.Ranks[ri]
		obj := fmt.Sprintf("%d:1:%d:1", ri+1, ri+1) // cpu:app:task:thread
		state := func(a, b int64, s int) {
			if b > a {
				out = append(out, record{a, fmt.Sprintf("1:%s:%d:%d:%d", obj, a, b, s)})
			}
		}
		var others []trace.Span
		for _, s := range r.Spans {
			if s.Kind == SpanOther && s.Thread == 0 {
				others = append(others, s)
			}
		}
		// gap writes [a, b) outside calls: Running but for the other spans.
		gap := func(a, b int64) {
			for len(others) > 0 && a < b {
				s := others[0]
				if s.Leave <= a {
					others = others[1:]
					continue
				}
				if s.Enter >= b {
					break
				}
				state(a, max(a, s.Enter), StateRunning)
				a = max(a, s.Enter)
				e := min(b, s.Leave)
				state(a, e, spanState(s.Name))
				a = e
			}
			state(a, b, StateRunning)
		}
		pos := int64(0)
		for ci := range r.Calls {
			c := &r.Calls[ci]
			if c.Enter < pos || c.Leave < c.Enter {
				return nil, fmt.Errorf("paraver: rank %d: call %d (%s) overlaps the previous one or ends before it starts", ri, ci, c.Name)
			}
			gap(pos, c.Enter)
			state(c.Enter, c.Leave, callState(c))
			typ, val := w.event(c)
			line := fmt.Sprintf("2:%s:%d:%d:%d", obj, c.Enter, typ, val)
			if c.Kind == trace.KindCollective || c.Kind == trace.KindICollective {
				comm := max(c.Comm, 0)
				line += fmt.Sprintf(":%d:%d:%d:%d", EventCollSendBytes, c.SendBytes, EventCollRecvBytes, c.RecvBytes)
				if c.Root == int32(ri) {
					line += fmt.Sprintf(":%d:1", EventCollRoot)
				}
				line += fmt.Sprintf(":%d:%d", EventCollComm, comm+1)
			}
			out = append(out, record{c.Enter, line}, record{c.Leave, fmt.Sprintf("2:%s:%d:%d:0", obj, c.Leave, typ)})
			pos = c.Leave
		}
		if r.End < pos {
			return nil, fmt.Errorf("paraver: rank %d ends at %d ns, before its last call leaves (%d ns)", ri, r.End, pos)
		}
		gap(pos, r.End)
	}
	for i, m := range tr.Messages {
		if m.Src < 0 || int(m.Src) >= len(tr.Ranks) || m.Dst < 0 || int(m.Dst) >= len(tr.Ranks) {
			return nil, fmt.Errorf("paraver: message %d goes from rank %d to rank %d; the trace has %d ranks", i, m.Src, m.Dst, len(tr.Ranks))
		}
		sc, rc := tr.Ranks[m.Src].Calls, tr.Ranks[m.Dst].Calls
		if m.SendCall < 0 || int(m.SendCall) >= len(sc) || m.RecvPost < 0 || int(m.RecvPost) >= len(rc) || m.RecvDone < 0 || int(m.RecvDone) >= len(rc) {
			return nil, fmt.Errorf("paraver: message %d (rank %d to rank %d) is attached to calls that do not exist", i, m.Src, m.Dst)
		}
		ls := sc[m.SendCall].Enter
		lr, pr := rc[m.RecvPost].Enter, rc[m.RecvDone].Leave
		// The physical send is the send call's entry, unless the trace
		// knows a later time inside the call (Extrae's for large messages).
		ps, last := ls, sc[m.SendCall].Leave
		if m.SendDone > m.SendCall && int(m.SendDone) < len(sc) {
			last = sc[m.SendDone].Leave
		}
		if m.PhysSend > ls && m.PhysSend <= last {
			ps = m.PhysSend
		}
		out = append(out, record{ls, fmt.Sprintf("3:%d:1:%d:1:%d:%d:%d:1:%d:1:%d:%d:%d:%d",
			m.Src+1, m.Src+1, ls, ps, m.Dst+1, m.Dst+1, lr, pr, m.Bytes, m.Tag)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t < out[j].t })
	return out, nil
}

// writePRV writes the header, the communicators and the body.
func (w *traceWriter) writePRV(out io.Writer, body []record) error {
	tr := w.tr
	end := tr.End
	for _, r := range tr.Ranks {
		end = max(end, r.End)
	}
	bw := bufio.NewWriter(out)
	cpus := make([]string, len(w.nodes))
	perNode := make([]int, len(w.nodes))
	for _, k := range w.node {
		perNode[k]++
	}
	for i, n := range perNode {
		cpus[i] = strconv.Itoa(n)
	}
	tasks := make([]string, len(tr.Ranks))
	for i := range tr.Ranks {
		tasks[i] = fmt.Sprintf("1:%d", w.node[i]+1)
	}
	fmt.Fprintf(bw, "#Paraver (%s):%d_ns:%d(%s):1:%d(%s),%d\n", writeTime().UTC().Format("02/01/2006 at 15:04"), end,
		len(w.nodes), strings.Join(cpus, ","), len(tr.Ranks), strings.Join(tasks, ","), len(tr.Comms))
	for i, c := range tr.Comms {
		fmt.Fprintf(bw, "c:1:%d:%d", i+1, len(c.Members))
		for _, m := range c.Members {
			fmt.Fprintf(bw, ":%d", m+1)
		}
		bw.WriteByte('\n')
	}
	for _, r := range body {
		bw.WriteString(r.line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// writePCF writes the states and the events the body uses.
func (w *traceWriter) writePCF(out io.Writer) error {
	bw := bufio.NewWriter(out)
	bw.WriteString("DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\nLOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\nNUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\nDEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\n\nSTATES\n")
	for i, n := range stateNames {
		fmt.Fprintf(bw, "%d    %s\n", i, n)
	}
	labels := map[int64]string{50000001: "MPI Point-to-point", 50000002: "MPI Collective Comm", 50000003: "MPI Other", 50000004: "MPI One-sided", 50000005: "MPI I/O"}
	for typ := int64(EventMPIFirst); typ <= EventMPILast; typ++ {
		vals := w.used[typ]
		if len(vals) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n\nEVENT_TYPE\n9   %d    %s\nVALUES\n", typ, labels[typ])
		keys := make([]uint64, 0, len(vals))
		for v := range vals {
			keys = append(keys, v)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, v := range keys {
			fmt.Fprintf(bw, "%d   %s\n", v, vals[v])
		}
		bw.WriteString("0   Outside MPI\n")
	}
	fmt.Fprintf(bw, "\n\nEVENT_TYPE\n1    %d    Send Size in MPI Global OP\n1    %d    Recv Size in MPI Global OP\n1    %d    Root in MPI Global OP\n1    %d    Communicator in MPI Global OP\n",
		EventCollSendBytes, EventCollRecvBytes, EventCollRoot, EventCollComm)
	return bw.Flush()
}

// writeRow writes the names of the CPUs, nodes and threads.
func (w *traceWriter) writeRow(out io.Writer) error {
	bw := bufio.NewWriter(out)
	name := func(k int) string {
		if n := w.nodes[k]; n != "" {
			return n
		}
		return fmt.Sprintf("node%d", k+1)
	}
	fmt.Fprintf(bw, "LEVEL CPU SIZE %d\n", len(w.tr.Ranks))
	for i := range w.tr.Ranks {
		fmt.Fprintf(bw, "%d.%s\n", i+1, name(w.node[i]))
	}
	fmt.Fprintf(bw, "\nLEVEL NODE SIZE %d\n", len(w.nodes))
	for k := range w.nodes {
		fmt.Fprintf(bw, "%s\n", name(k))
	}
	fmt.Fprintf(bw, "\nLEVEL THREAD SIZE %d\n", len(w.tr.Ranks))
	for i := range w.tr.Ranks {
		fmt.Fprintf(bw, "THREAD 1.%d.1\n", i+1)
	}
	return bw.Flush()
}
