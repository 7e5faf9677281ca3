package paraver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Kind is the kind of a trace record.
type Kind uint8

// Record kinds, as numbered in the file.
const (
	KindState Kind = 1
	KindEvent Kind = 2
	KindComm  Kind = 3
	// KindGlobalComm is Paraver's rarely used global communication
	// record ("4:"); its fields are not interpreted.
	KindGlobalComm Kind = 4
)

// Event is one type/value pair of an event record. Values are unsigned in
// the format (hardware counter deltas may use all 64 bits).
type Event struct {
	Type  int64
	Value uint64
}

// Comm is the payload of a communication record.
type Comm struct {
	// Sender and receiver objects (1-based, as in the file).
	RecvCPU, RecvApp, RecvTask, RecvThread int32
	// LogicalSend, PhysicalSend, LogicalRecv and PhysicalRecv are times
	// in the trace's unit.
	LogicalSend, PhysicalSend, LogicalRecv, PhysicalRecv int64
	// Size is the message size in bytes; Tag the message tag.
	Size, Tag int64
}

// Record is one state, event or communication record. The reader reuses
// one Record (and its Events slice) for every record: copy what you keep.
type Record struct {
	Kind Kind
	// CPU, App, Task and Thread are the record's object (the sender for
	// communications), 1-based as in the file.
	CPU, App, Task, Thread int32
	// Time is the state's begin, the event's time or the logical send
	// time, in the trace's unit.
	Time int64
	// End is a state's end time.
	End int64
	// State is a state record's state value.
	State int32
	// Events holds an event record's type/value pairs.
	Events []Event
	// Comm is a communication record's payload.
	Comm Comm
}

// SyntaxError is a malformed or truncated line of a .prv file.
type SyntaxError struct {
	// Line is the 1-based line number.
	Line int64
	// Msg says what is wrong.
	Msg string
	// Truncated is set when the line is malformed because the file ends
	// there: a last line without its newline, or compressed data cut
	// short. Nothing can be read after it.
	Truncated bool
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Reader reads the records of a .prv stream one at a time.
type Reader struct {
	br     *bufio.Reader
	header *Header
	rec    Record
	line   int64
	nbytes int64
	long   []byte // a line longer than the read buffer
	err    error  // sticky read error
	// partial is set when the line last read is the file's last and has
	// no newline: a malformed one is a file cut short.
	partial bool
	// onComm, when set, gets each communicator ("c:") line; an error it
	// returns is the line's syntax error.
	onComm func(line []byte) error
}

// readBufferSize is the read buffer: large enough for any ordinary line and
// for few, large reads. (A variable only so that the fuzz targets, which
// import thousands of tiny traces a second, can make it small.)
var readBufferSize = 1 << 20

// maxLineBytes bounds one line, so that a file without line ends cannot
// take the reader's memory with it. The longest legitimate line is the
// header of a trace of millions of tasks (about 10 bytes a task); an event
// record of every counter Extrae knows is a few kilobytes.
const maxLineBytes = 64 << 20

// NewReader reads the header line of a .prv stream and returns a reader
// positioned at the first line after it.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, readBufferSize), rec: Record{Events: make([]Event, 0, 16)}}
	line, err := rd.readLine()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty trace: no #Paraver header line")
		}
		return nil, err
	}
	h, err := ParseHeader(string(line))
	if err != nil {
		if rd.partial {
			return nil, &SyntaxError{Line: 1, Truncated: true, Msg: "the trace ends in the middle of its header line (" + err.Error() + ")"}
		}
		return nil, &SyntaxError{Line: 1, Msg: err.Error()}
	}
	rd.header = h
	return rd, nil
}

// Header returns the trace's header.
func (r *Reader) Header() *Header { return r.header }

// Line returns the number of the line last read (1 is the header).
func (r *Reader) Line() int64 { return r.line }

// Bytes returns the number of bytes of .prv text read so far.
func (r *Reader) Bytes() int64 { return r.nbytes }

// readLine returns the next line without its line end. The slice is valid
// until the next call. At the end of the stream it returns io.EOF; a last
// line without a newline is returned first.
func (r *Reader) readLine() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	line, err := r.br.ReadSlice('\n')
	r.nbytes += int64(len(line))
	tooLong := false
	if err == bufio.ErrBufferFull {
		r.long = r.long[:0]
		r.keep(line)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			r.nbytes += int64(len(line))
			if !tooLong && len(r.long)+len(line) > maxLineBytes {
				tooLong = true // read on to the line's end without keeping it
				r.long = r.long[:0]
			}
			if !tooLong {
				r.keep(line)
			}
		}
		line = r.long
	}
	if err != nil {
		if err == io.EOF {
			r.err = io.EOF
			if len(line) == 0 && !tooLong {
				return nil, io.EOF
			}
			r.partial = true
		} else {
			// A gzip stream cut short, a failing disk: say where.
			r.err = fmt.Errorf("line %d: reading the trace: %w", r.line+1, err)
			if errors.Is(err, io.ErrUnexpectedEOF) {
				r.err = &SyntaxError{Line: r.line + 1, Msg: "the trace is truncated (unexpected end of compressed data)", Truncated: true}
			}
			return nil, r.err
		}
	}
	r.line++
	if tooLong {
		return nil, &SyntaxError{Line: r.line, Msg: fmt.Sprintf("the line is longer than %d MiB: not a Paraver record", maxLineBytes>>20)}
	}
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
	}
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	return line[:n], nil
}

// keep appends b to the long line, doubling its buffer (at most to
// maxLineBytes) so that reaching the bound allocates about twice the bound.
func (r *Reader) keep(b []byte) {
	if need := len(r.long) + len(b); need > cap(r.long) {
		grown := make([]byte, len(r.long), min(max(2*cap(r.long), need), maxLineBytes))
		copy(grown, r.long)
		r.long = grown
	}
	r.long = append(r.long, b...)
}

// Next returns the next state, event or communication record. Comment
// lines, communicator lines, blank lines and the old "new format" marker
// are skipped. At the end of the trace it returns io.EOF. A malformed line
// returns a *SyntaxError; reading may continue with the next call.
func (r *Reader) Next() (*Record, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			continue
		}
		switch line[0] {
		case '1', '2', '3', '4':
			if len(line) < 2 || line[1] != ':' {
				return nil, r.syntax(line, "unknown record type")
			}
			if err := r.parse(line); err != nil {
				return nil, err
			}
			return &r.rec, nil
		case '#':
			continue // comment
		case 'c':
			if bytes.HasPrefix(line, []byte("c:")) {
				if r.onComm != nil {
					if err := r.onComm(line); err != nil {
						return nil, r.syntax(line, err.Error())
					}
				}
				continue // communicator definition
			}
		case 'n':
			if string(line) == "new format" { // marker in traces of old tools
				continue
			}
		}
		return nil, r.syntax(line, "unknown record type")
	}
}

// syntax returns a SyntaxError for the current line, quoting its start.
func (r *Reader) syntax(line []byte, msg string) error {
	q := string(line)
	if len(q) > 60 {
		q = q[:60] + "…"
	}
	if r.partial {
		// The file ends inside this line: that, not its syntax, is the news.
		return &SyntaxError{Line: r.line, Truncated: true,
			Msg: fmt.Sprintf("the trace ends in the middle of this line (%s): %q", msg, strings.ToValidUTF8(q, "?"))}
	}
	return &SyntaxError{Line: r.line, Msg: fmt.Sprintf("%s: %q", msg, strings.ToValidUTF8(q, "?"))}
}

// field parsing: p.i is the cursor into p.b.
type fields struct {
	b   []byte
	i   int
	bad bool
}

// uint returns the next ':'-terminated unsigned decimal field.
func (f *fields) uint() uint64 {
	b, i := f.b, f.i
	start := i
	var v uint64
	for i < len(b) {
		c := b[i]
		if c == ':' {
			break
		}
		d := c - '0'
		if d > 9 || v > (1<<64-1-uint64(d))/10 {
			f.bad = true
			return 0
		}
		v = v*10 + uint64(d)
		i++
	}
	if i == start {
		f.bad = true
	}
	if i < len(b) {
		i++ // the ':'
	}
	f.i = i
	return v
}

// int returns the next field as a non-negative int64.
func (f *fields) int() int64 {
	v := f.uint()
	if v > 1<<63-1 {
		f.bad = true
		return 0
	}
	return int64(v)
}

// id returns the next field as a 1-based object id.
func (f *fields) id() int32 {
	v := f.uint()
	if v > 1<<31-1 {
		f.bad = true
		return 0
	}
	return int32(v)
}

func (f *fields) done() bool { return f.i >= len(f.b) }

// parse fills r.rec from a record line.
func (r *Reader) parse(line []byte) error {
	rec := &r.rec
	rec.Kind = Kind(line[0] - '0')
	f := fields{b: line, i: 2}
	switch rec.Kind {
	case KindState:
		rec.CPU, rec.App, rec.Task, rec.Thread = f.id(), f.id(), f.id(), f.id()
		rec.Time, rec.End = f.int(), f.int()
		rec.State = f.id()
		if f.bad || !f.done() || line[len(line)-1] == ':' {
			return r.syntax(line, "malformed state record (want 1:cpu:app:task:thread:begin:end:state)")
		}
		if rec.End < rec.Time {
			return r.syntax(line, "state record ends before it begins")
		}
	case KindEvent:
		rec.CPU, rec.App, rec.Task, rec.Thread = f.id(), f.id(), f.id(), f.id()
		rec.Time = f.int()
		rec.Events = rec.Events[:0]
		for !f.done() && !f.bad {
			t := f.int()
			if f.done() {
				f.bad = true // a type without a value
				break
			}
			v := f.uint()
			rec.Events = append(rec.Events, Event{Type: t, Value: v})
		}
		if f.bad || len(rec.Events) == 0 || line[len(line)-1] == ':' {
			return r.syntax(line, "malformed event record (want 2:cpu:app:task:thread:time:type:value[:type:value...])")
		}
	case KindComm:
		rec.CPU, rec.App, rec.Task, rec.Thread = f.id(), f.id(), f.id(), f.id()
		c := &rec.Comm
		c.LogicalSend, c.PhysicalSend = f.int(), f.int()
		c.RecvCPU, c.RecvApp, c.RecvTask, c.RecvThread = f.id(), f.id(), f.id(), f.id()
		c.LogicalRecv, c.PhysicalRecv = f.int(), f.int()
		c.Size, c.Tag = f.int(), f.int()
		rec.Time = c.LogicalSend
		if f.bad || !f.done() || line[len(line)-1] == ':' {
			return r.syntax(line, "malformed communication record (want 3:cpu:app:task:thread:lsend:psend:cpu:app:task:thread:lrecv:precv:size:tag)")
		}
	case KindGlobalComm:
		// Not interpreted; only checked to be a list of numbers.
		for !f.done() && !f.bad {
			f.uint()
		}
		if f.bad {
			return r.syntax(line, "malformed global communication record")
		}
	}
	if rec.Kind != KindGlobalComm && (rec.App == 0 || rec.Task == 0 || rec.Thread == 0) ||
		rec.Kind == KindComm && (rec.Comm.RecvApp == 0 || rec.Comm.RecvTask == 0 || rec.Comm.RecvThread == 0) {
		return r.syntax(line, "object ids (app, task, thread) start at 1")
	}
	return nil
}
