package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/internal/replay"
	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/measure"
)

// traceEnv adds the variables that make libpopmon trace (docs/trace-format.md)
// into the session folder's trace/ to vars.
func traceEnv(vars map[string]string, session, buffer string) {
	vars["POPMON_TRACE"] = "1"
	vars["POPMON_TRACE_DIR"] = filepath.Join(session, "trace")
	if buffer != "" {
		vars["POPMON_TRACE_BUFFER"] = buffer
	}
}

// attachTrace moves the session's trace next to the measurement file
// final (FILE.trace/ for FILE.json), reads it, records it in the
// measurement (trace) and replays it on an ideal network (ideal_network).
// What fails becomes a warning of the measurement and one line on stderr:
// the run's measurement stands without it.
func attachTrace(stderr io.Writer, session, final string) {
	src := filepath.Join(session, "trace")
	if _, err := os.Stat(src); err != nil {
		fmt.Fprintf(stderr, "popmon: no trace: the processes wrote none to %s\n", src)
		return
	}
	m, err := measure.ReadFile(final)
	if err != nil {
		fmt.Fprintf(stderr, "popmon: the trace is not attached: %v\n", err)
		return
	}
	dst := strings.TrimSuffix(final, ".json") + ".trace"
	for k := 1; ; k++ {
		if _, err := os.Lstat(dst); os.IsNotExist(err) {
			break
		}
		dst = fmt.Sprintf("%s.%d.trace", strings.TrimSuffix(final, ".json"), k)
	}
	if err := os.Rename(src, dst); err != nil {
		fmt.Fprintf(stderr, "popmon: cannot move the trace next to %s: %v\n", final, err)
		return
	}
	info := &measure.TraceInfo{Dir: filepath.Base(dst)}
	warn := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		m.Warnings = append(m.Warnings, line)
		fmt.Fprintf(stderr, "popmon: %s\n", line)
	}
	tr, err := trace.ReadDir(dst)
	st := trace.DirStats(dst)
	info.Records, info.Bytes, info.Flushes = st.Records, st.Bytes, st.Flushes
	m.Trace = info
	if err != nil {
		warn("the trace in %s could not be read: %v", dst, err)
	} else if err := replay.Apply(m, tr, replay.Options{}); err != nil {
		warn("the trace was not replayed on an ideal network (serialisation and transfer not measured): %v", err)
	}
	if err := writeMeasurement(final, m); err != nil {
		fmt.Fprintf(stderr, "popmon: the trace is not recorded in %s: %v\n", final, err)
	}
}
