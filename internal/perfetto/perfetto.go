// Package perfetto writes an MPI event trace (internal/trace) as Chrome
// trace-event JSON, the format ui.perfetto.dev and Chromium's
// chrome://tracing open without installing anything: one process per
// rank (pid = rank), one slice per MPI call and per useful burst on the
// rank's MPI thread (tid = thread), user regions, OpenMP regions and
// buffer flushes on a track of their own per thread (tid = SpanTrack +
// thread), and one flow arrow per message from the send to the receive.
// docs/perfetto.md describes the mapping.
package perfetto

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/popmon/popmon/internal/trace"
)

// SpanTrack is added to a thread number to give the tid of that thread's
// track of spans (regions, OpenMP regions, flushes): slices on one track
// must nest, and a region need not nest with the calls and bursts.
const SpanTrack = 1 << 20

// Event is one trace event as written (the fields the format defines).
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   Micros         `json:"ts"`
	Dur  *Micros        `json:"dur,omitempty"`
	PID  int32          `json:"pid"`
	TID  int32          `json:"tid"`
	ID   int64          `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// Micros is a time in ns written as µs with three decimals, the format's
// unit, exactly.
type Micros int64

// MarshalJSON writes m as µs ("12.345").
func (m Micros) MarshalJSON() ([]byte, error) {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return []byte(sign + strconv.FormatInt(v/1000, 10) + "." + fmt.Sprintf("%03d", v%1000)), nil
}

// UnmarshalJSON reads µs back into ns.
func (m *Micros) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("time %s: %w", b, err)
	}
	*m = Micros(f*1000 + 0.5)
	if f < 0 {
		*m = Micros(f*1000 - 0.5)
	}
	return nil
}

// Write writes tr to w as a trace-event JSON object
// ({"traceEvents": [...], ...}).
func Write(w io.Writer, tr *trace.Trace) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	first := true
	emit := func(e *Event) error {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("perfetto: encoding an event: %w", err)
		}
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		_, err = bw.Write(b)
		return err
	}
	meta, err := json.Marshal(map[string]any{"source": tr.Source, "notes": tr.Notes, "tool": "popmon"})
	if err != nil {
		return fmt.Errorf("perfetto: %w", err)
	}
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":`)
	bw.Write(meta)
	bw.WriteString(",\n\"traceEvents\":[\n")
	// Per call, the messages it sends or receives.
	ends := make([]map[int32][]msgEnd, len(tr.Ranks))
	for mi, m := range tr.Messages {
		if !ok(tr, m.Src, m.SendCall) || !ok(tr, m.Dst, m.RecvDone) {
			continue // a damaged message: no arrow with one end
		}
		for _, e := range []struct {
			r, call int32
			send    bool
		}{{m.Src, m.SendCall, true}, {m.Dst, m.RecvDone, false}} {
			if ends[e.r] == nil {
				ends[e.r] = map[int32][]msgEnd{}
			}
			ends[e.r][e.call] = append(ends[e.r][e.call], msgEnd{mi, e.send})
		}
	}
	for r := range tr.Ranks {
		rk := &tr.Ranks[r]
		if len(rk.Calls) == 0 && len(rk.Spans) == 0 {
			continue
		}
		pid := int32(r)
		pname := "rank " + strconv.Itoa(r)
		if rk.Node != "" {
			pname += " (" + rk.Node + ")"
		}
		if err := emit(&Event{Name: "process_name", Ph: "M", PID: pid, Args: map[string]any{"name": pname}}); err != nil {
			return err
		}
		if err := emit(&Event{Name: "process_sort_index", Ph: "M", PID: pid, Args: map[string]any{"sort_index": r}}); err != nil {
			return err
		}
		if err := emit(&Event{Name: "thread_name", Ph: "M", PID: pid, TID: 0, Args: map[string]any{"name": "MPI and useful"}}); err != nil {
			return err
		}
		threads := map[int32]bool{}
		for _, sp := range rk.Spans {
			threads[sp.Thread] = true
		}
		for th := range threads {
			if err := emit(&Event{Name: "thread_name", Ph: "M", PID: pid, TID: SpanTrack + th, Args: map[string]any{"name": "regions, thread " + strconv.Itoa(int(th))}}); err != nil {
				return err
			}
		}
		var prev int64 = -1
		for i := range rk.Calls {
			c := &rk.Calls[i]
			if prev >= 0 && c.Enter > prev {
				if err := emit(slice("Useful", "useful", pid, 0, prev, c.Enter, nil)); err != nil {
					return err
				}
			}
			prev = max(prev, c.Leave)
			args := callArgs(tr, c, ends[r][int32(i)])
			if err := emit(slice(c.Name, "mpi", pid, 0, c.Enter, c.Leave, args)); err != nil {
				return err
			}
			for _, e := range ends[r][int32(i)] {
				ph, bp := "s", ""
				if !e.send {
					ph, bp = "f", "e"
				}
				if err := emit(&Event{Name: "message", Cat: "msg", Ph: ph, TS: Micros(c.Enter + (c.Leave-c.Enter)/2), PID: pid, ID: int64(e.msg) + 1, BP: bp}); err != nil {
					return err
				}
			}
		}
		if prev >= 0 && rk.End > prev {
			if err := emit(slice("Useful", "useful", pid, 0, prev, rk.End, nil)); err != nil {
				return err
			}
		}
		for _, sp := range rk.Spans {
			if err := emit(slice(sp.Name, sp.Kind, pid, SpanTrack+sp.Thread, sp.Enter, sp.Leave, nil)); err != nil {
				return err
			}
		}
	}
	bw.WriteString("\n]}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("perfetto: writing: %w", err)
	}
	return nil
}

// msgEnd is a call's end of message msg (tr.Messages index): its send
// or its receive.
type msgEnd struct {
	msg  int
	send bool
}

func ok(tr *trace.Trace, r, i int32) bool {
	return r >= 0 && int(r) < len(tr.Ranks) && i >= 0 && int(i) < len(tr.Ranks[r].Calls)
}

// slice is an X event over [enter, leave] ns (a negative length is
// written as 0).
func slice(name, cat string, pid, tid int32, enter, leave int64, args map[string]any) *Event {
	d := Micros(max(0, leave-enter))
	return &Event{Name: name, Cat: cat, Ph: "X", TS: Micros(enter), Dur: &d, PID: pid, TID: tid, Args: args}
}

// callArgs are an MPI call's arguments: for collectives the
// communicator, root and bytes; for point-to-point calls the peer, bytes,
// tag and communicator of the message it sends or receives (a call that
// does both, MPI_Sendrecv, has the send's as peer/bytes/tag and the
// receive's as source/recv_bytes/recv_tag; a call completing several
// messages has their count, peers and total bytes).
func callArgs(tr *trace.Trace, c *trace.Call, ends []msgEnd) map[string]any {
	args := map[string]any{}
	if c.Comm >= 0 {
		args["comm"] = c.Comm
	}
	if c.Kind == trace.KindCollective || c.Kind == trace.KindICollective {
		if c.Root >= 0 {
			args["root"] = c.Root
		}
		args["send_bytes"] = c.SendBytes
		args["recv_bytes"] = c.RecvBytes
		return args
	}
	var sends, recvs []trace.Message
	for _, e := range ends {
		if e.send {
			sends = append(sends, tr.Messages[e.msg])
		} else {
			recvs = append(recvs, tr.Messages[e.msg])
		}
	}
	switch {
	case len(ends) == 1 || len(sends) == 1 && len(recvs) == 1:
		if len(sends) == 1 {
			m := sends[0]
			args["peer"], args["bytes"], args["tag"], args["comm"] = m.Dst, m.Bytes, m.Tag, m.Comm
		}
		if len(recvs) == 1 {
			m := recvs[0]
			if len(sends) == 0 {
				args["peer"], args["bytes"], args["tag"], args["comm"] = m.Src, m.Bytes, m.Tag, m.Comm
			} else {
				args["source"], args["recv_bytes"], args["recv_tag"] = m.Src, m.Bytes, m.Tag
			}
		}
	case len(ends) > 1:
		var peers []int32
		var bytes int64
		for _, m := range sends {
			peers, bytes = append(peers, m.Dst), bytes+m.Bytes
		}
		for _, m := range recvs {
			peers, bytes = append(peers, m.Src), bytes+m.Bytes
		}
		args["peers"], args["bytes"], args["messages"] = peers, bytes, len(ends)
	}
	if len(args) == 0 {
		return nil
	}
	return args
}
