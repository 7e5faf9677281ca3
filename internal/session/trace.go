package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/internal/outfile"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
)

// TraceEnv adds the variables that make libpopmon trace (docs/trace-format.md)
// into the session folder's trace/ to vars.
func TraceEnv(vars map[string]string, session, buffer string) {
	vars["POPMON_TRACE"] = "1"
	vars["POPMON_TRACE_DIR"] = filepath.Join(session, "trace")
	if buffer != "" {
		vars["POPMON_TRACE_BUFFER"] = buffer
	}
}

// AttachTrace moves the session's trace next to the measurement file
// final (FILE.trace/ for FILE.json) and records it in the measurement with
// runs.AttachTrace (trace; the ideal-network replay, ideal_network, the
// same step as an imported trace's). It returns what went wrong and the
// replay's warnings, which are also the measurement's, one line each for
// popmon run to print: the run's measurement stands without the replay.
func AttachTrace(session, final string) []string {
	src := filepath.Join(session, "trace")
	if _, err := os.Stat(src); err != nil {
		return []string{fmt.Sprintf("no trace: the processes wrote none to %s", src)}
	}
	if k, _ := outfile.TargetKind(final); k == outfile.Through {
		// -o /dev/null, a pipe: nothing to read back, nowhere beside it.
		return []string{fmt.Sprintf("the trace is not kept: the measurement went to %s, a device or a pipe", final)}
	}
	m, err := measure.ReadFile(final)
	if err != nil {
		return []string{fmt.Sprintf("the trace is not attached: %v", err)}
	}
	dst := strings.TrimSuffix(final, ".json") + ".trace"
	for k := 1; ; k++ {
		if _, err := os.Lstat(dst); os.IsNotExist(err) {
			break
		}
		dst = fmt.Sprintf("%s.%d.trace", strings.TrimSuffix(final, ".json"), k)
	}
	if err := os.Rename(src, dst); err != nil {
		return []string{fmt.Sprintf("cannot move the trace next to %s: %v", final, err)}
	}
	lines := runs.AttachTrace(m, dst)
	if err := outfile.WriteMeasurement(final, m); err != nil {
		lines = append(lines, fmt.Sprintf("the trace is not recorded in %s: %v", final, err))
	}
	return lines
}
