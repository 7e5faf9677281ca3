// Package paraver reads Extrae/Paraver traces (.prv, plain or gzip, with
// their .pcf and .row companions) in one streaming pass, and converts them
// into popmon's measurement model (package measure), so that every popmon
// command works on a trace as on a live measurement.
//
// The reader keeps memory independent of the trace size: one reusable
// record, a read buffer, and accounts for the tasks and threads that the
// records name (never sized by the header's declarations, which a damaged
// or hostile header may inflate). Records must be sorted by time, as
// Paraver writes them.
//
// File format (Paraver trace format, as written by Extrae's mpi2prv):
//
//	#Paraver (dd/mm/yyyy at hh:mm):END[_ns|_us]:NODES:NAPPL:APP[:APP...][,NCOMMS]
//	  NODES = N(cpus1,...,cpusN) or 0;  APP = NTASKS(threads:node,...)
//	c:app:id:ntasks:task...                         communicator (NCOMMS lines)
//	1:cpu:app:task:thread:begin:end:state            state record
//	2:cpu:app:task:thread:time:type:value[:type:value...]   event record
//	3:cpu:app:task:thread:lsend:psend:cpu:app:task:thread:lrecv:precv:size:tag
//	                                                 communication record
//	# ...                                            comment
//
// A time without unit suffix is in microseconds.
package paraver

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Header is the first line of a .prv file: the resource model and the
// process model of the trace.
type Header struct {
	// Date is the date text between the parentheses, e.g.
	// "09/10/2019 at 16:09".
	Date string
	// End is the trace's end time in nanoseconds (the header's time
	// converted from its unit).
	End int64
	// Unit is the header's time unit suffix: "ns", "us" (also when the
	// header has none), "ms" or "s".
	Unit string
	// NodeCPUs holds the CPUs of each node; empty when the header has no
	// resource model ("0").
	NodeCPUs []int
	// Apps holds the applications of the trace.
	Apps []App
	// Communicators is the number of communicator lines after the header.
	Communicators int
}

// App is one application (Paraver "ptask") of a trace.
type App struct {
	// Tasks holds the tasks (MPI ranks) of the application.
	Tasks []Task
}

// Task is one task (process) of an application.
type Task struct {
	// Threads is the number of threads of the task.
	Threads int
	// Node is the node the task ran on, 1-based as in the file (0 when
	// unknown).
	Node int
}

// scale returns the factor from a unit to nanoseconds.
func scale(unit string) (int64, bool) {
	switch unit {
	case "ns":
		return 1, true
	case "us", "":
		return 1000, true
	case "ms":
		return 1000_000, true
	case "s":
		return 1000_000_000, true
	}
	return 0, false
}

// ParseHeader parses the "#Paraver (...)" first line of a .prv file.
func ParseHeader(line string) (*Header, error) {
	line = strings.TrimRight(line, "\r\n")
	const magic = "#Paraver"
	if !strings.HasPrefix(line, magic) {
		return nil, fmt.Errorf("not a Paraver trace: the first line does not start with %q", magic)
	}
	rest := strings.TrimSpace(line[len(magic):])
	h := &Header{}
	if strings.HasPrefix(rest, "(") {
		end := strings.Index(rest, ")")
		if end < 0 {
			return nil, fmt.Errorf("bad Paraver header: unclosed date parenthesis")
		}
		h.Date = rest[1:end]
		rest = rest[end+1:]
	}
	rest = strings.TrimPrefix(rest, ":")
	fields := splitTop(rest, ':')
	if len(fields) < 3 {
		return nil, fmt.Errorf("bad Paraver header: want END:NODES:NAPPL:APPS after the date, got %q", rest)
	}
	// The communicator count follows the last application after a comma.
	last := fields[len(fields)-1]
	if i := strings.LastIndex(last, ","); i >= 0 && i > strings.LastIndex(last, ")") {
		n, err := strconv.Atoi(strings.TrimSpace(last[i+1:]))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad Paraver header: communicator count %q", last[i+1:])
		}
		h.Communicators = n
		fields[len(fields)-1] = last[:i]
	}

	endText := fields[0]
	h.Unit = ""
	if i := strings.IndexByte(endText, '_'); i >= 0 {
		h.Unit = endText[i+1:]
		endText = endText[:i]
	}
	f, ok := scale(h.Unit)
	if !ok {
		return nil, fmt.Errorf("bad Paraver header: unknown time unit %q (want ns, us, ms or s)", h.Unit)
	}
	if h.Unit == "" {
		h.Unit = "us"
	}
	end, err := strconv.ParseInt(endText, 10, 64)
	if err != nil || end < 0 {
		return nil, fmt.Errorf("bad Paraver header: end time %q is not a non-negative integer", fields[0])
	}
	if end > math.MaxInt64/f {
		return nil, fmt.Errorf("bad Paraver header: end time %q is over 292 years", fields[0])
	}
	h.End = end * f

	if h.NodeCPUs, err = parseNodes(fields[1]); err != nil {
		return nil, err
	}
	napps, err := strconv.Atoi(fields[2])
	if err != nil || napps < 0 {
		return nil, fmt.Errorf("bad Paraver header: application count %q", fields[2])
	}
	apps := fields[3:]
	if len(apps) != napps {
		return nil, fmt.Errorf("bad Paraver header: %d applications announced, %d described", napps, len(apps))
	}
	for i, a := range apps {
		app, err := parseApp(a)
		if err != nil {
			return nil, fmt.Errorf("bad Paraver header: application %d: %w", i+1, err)
		}
		h.Apps = append(h.Apps, app)
	}
	return h, nil
}

// splitTop splits s at sep outside parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// list calls item for each of the n comma-separated elements of s (the
// caller has counted them: memory and time follow the text, not n).
func list(s string, n int, item func(i int, p string) error) error {
	for i := 0; i < n; i++ {
		p, rest, _ := strings.Cut(s, ",")
		if err := item(i, p); err != nil {
			return err
		}
		s = rest
	}
	return nil
}

// parseNodes parses "N(c1,c2,...)" or "0".
func parseNodes(s string) ([]int, error) {
	open := strings.IndexByte(s, '(')
	if open < 0 {
		n, err := strconv.Atoi(s)
		if err != nil || n != 0 {
			return nil, fmt.Errorf("bad Paraver header: node list %q", s)
		}
		return nil, nil
	}
	n, err := strconv.Atoi(s[:open])
	if err != nil || n < 0 || !strings.HasSuffix(s, ")") {
		return nil, fmt.Errorf("bad Paraver header: node list %q", quote(s))
	}
	inner := s[open+1 : len(s)-1]
	if got := strings.Count(inner, ",") + 1; got != n {
		return nil, fmt.Errorf("bad Paraver header: %d nodes announced, %d described in %q", n, got, quote(s))
	}
	cpus := make([]int, n)
	err = list(inner, n, func(i int, p string) error {
		c, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || c < 0 {
			return fmt.Errorf("bad Paraver header: node %d CPUs %q", i+1, quote(p))
		}
		cpus[i] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cpus, nil
}

// parseApp parses "NTASKS(threads:node,...)".
func parseApp(s string) (App, error) {
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return App{}, fmt.Errorf("task list %q is not NTASKS(threads:node,...)", quote(s))
	}
	n, err := strconv.Atoi(s[:open])
	if err != nil || n < 0 {
		return App{}, fmt.Errorf("task count %q", quote(s[:open]))
	}
	inner := s[open+1 : len(s)-1]
	if got := strings.Count(inner, ",") + 1; got != n {
		return App{}, fmt.Errorf("%d tasks announced, %d described", n, got)
	}
	app := App{Tasks: make([]Task, n)}
	err = list(inner, n, func(i int, p string) error {
		ths, node, hasNode := strings.Cut(p, ":")
		th, err := strconv.Atoi(strings.TrimSpace(ths))
		if err != nil || th < 1 {
			return fmt.Errorf("task %d: thread count %q", i+1, quote(ths))
		}
		t := Task{Threads: th}
		if hasNode {
			if t.Node, err = strconv.Atoi(strings.TrimSpace(node)); err != nil || t.Node < 0 {
				return fmt.Errorf("task %d: node %q", i+1, quote(node))
			}
		}
		app.Tasks[i] = t
		return nil
	})
	if err != nil {
		return App{}, err
	}
	return app, nil
}

// quote shortens s for a message about a header that may be megabytes long.
func quote(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// Threads returns the total number of threads of application a (1-based),
// as the header declares them (saturating at math.MaxInt).
func (h *Header) Threads(a int) int {
	if a < 1 || a > len(h.Apps) {
		return 0
	}
	n := 0
	for _, t := range h.Apps[a-1].Tasks {
		if t.Threads > math.MaxInt-n {
			return math.MaxInt // a hostile header: saturate, never wrap
		}
		n += t.Threads
	}
	return n
}
