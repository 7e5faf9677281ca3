package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/internal/runs"
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
// final (FILE.trace/ for FILE.json) and records it in the measurement with
// runs.AttachTrace (trace; the ideal-network replay, ideal_network, the
// same step as an imported trace's). Its warnings, the replay's, are the
// measurement's and one line each on stderr: the run's measurement stands
// without the replay.
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
	for _, w := range runs.AttachTrace(m, dst) {
		fmt.Fprintf(stderr, "popmon: %s\n", w)
	}
	if err := writeMeasurement(final, m); err != nil {
		fmt.Fprintf(stderr, "popmon: the trace is not recorded in %s: %v\n", final, err)
	}
}
