package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/trace"
)

// loadTrace reads the event trace every trace command works on (popmon
// trace export, popmon report --patterns) from path: an Extrae/Paraver
// trace (.prv, .prv.gz), the folder of per-rank trace files of a `popmon
// run --trace`, or a measurement file whose "trace" field names that
// folder (relative to the measurement's folder). Errors carry exit code
// ExitInput and say what to give instead.
func loadTrace(env *Env, path string, opt inputOptions) (*trace.Trace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fail(ExitInput, "%s: %v: give a Paraver trace, a traced run's measurement or its trace folder", path, err)
	}
	if st.IsDir() {
		tr, err := trace.ReadDir(path)
		if err != nil {
			return nil, fail(ExitInput, "%s: %v", path, err)
		}
		return tr, nil
	}
	if paraver.IsTraceFile(path) {
		tr, err := paraver.ReadTrace(path, paraver.Options{SkipBad: opt.skipBad, App: opt.app, Path: path, ToolVersion: Version})
		if err != nil {
			return nil, fail(ExitInput, "%v", err)
		}
		return tr, nil
	}
	f, err := openRun(env, path, opt)
	if err != nil {
		return nil, err
	}
	m := f.Measurement
	switch {
	case f.Kind == runs.KindTALP:
		return nil, fail(ExitInput, "%s is a DLB/TALP file, which has no event trace: measure the program with popmon run --trace", path)
	case m.Trace == nil && m.Source != nil && m.Source.Path != "":
		return nil, fail(ExitInput, "%s was imported from %s and keeps no trace: give the trace itself", path, m.Source.Path)
	case m.Trace == nil:
		return nil, fail(ExitInput, "%s: this measurement was not traced: run it again with popmon run --trace", path)
	case strings.TrimSpace(m.Trace.Dir) == "":
		return nil, fail(ExitInput, "%s: the measurement's trace field names no folder: give the trace folder itself", path)
	}
	dir := m.Trace.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(path), dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fail(ExitInput, "%s: its trace folder %s is missing: keep the trace folder next to the measurement (or give the folder itself)", path, dir)
	}
	tr, err := trace.ReadDir(dir)
	if err != nil {
		return nil, fail(ExitInput, "%s (the trace of %s): %v", dir, path, err)
	}
	return tr, nil
}

// traceBase is the name outputs derived from a trace input start with:
// the file's name without .prv[.gz] or .json, or the folder's name.
func traceBase(path string) string {
	b := filepath.Base(filepath.Clean(path))
	for _, ext := range []string{".gz", ".prv", ".json"} {
		b = strings.TrimSuffix(b, ext)
	}
	if b == "" || b == "." || b == string(filepath.Separator) {
		b = "trace"
	}
	return b
}

// traceSelection parses the --ranks and --window options.
func traceSelection(ranks, window string) (trace.Selection, error) {
	var sel trace.Selection
	if ranks != "" {
		rs, err := trace.ParseRanks(ranks)
		if err != nil {
			return sel, fail(ExitUsage, "--ranks: %v", err)
		}
		sel.Ranks = rs
	}
	if window != "" {
		from, to, err := trace.ParseWindow(window)
		if err != nil {
			return sel, fail(ExitUsage, "--window: %v", err)
		}
		sel.From, sel.To = from, to
	}
	return sel, nil
}

// describeTrace is the one-line summary of a loaded trace.
func describeTrace(tr *trace.Trace) string {
	calls := 0
	for _, r := range tr.Ranks {
		calls += len(r.Calls)
	}
	return fmt.Sprintf("%d ranks, %d MPI calls, %d messages, %.3f s", len(tr.Ranks), calls, len(tr.Messages), float64(tr.End)/1e9)
}
