package cli

import (
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/trace"
)

// loadTrace reads the event trace every trace command works on (popmon
// trace export, popmon report --patterns, popmon pages' wait states) from
// path with runs.LoadTrace: a Paraver trace, a traced run's trace folder
// or its measurement. Errors carry exit code ExitInput and say what to
// give instead.
func loadTrace(path string, opt inputOptions) (*trace.Trace, error) {
	tr, err := runs.LoadTrace(path, runs.ReadOptions{SkipBad: opt.skipBad, App: opt.app, ToolVersion: Version})
	if err != nil {
		return nil, fault.Inputf("%v", err)
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
			return sel, fault.Usagef("--ranks: %v", err)
		}
		sel.Ranks = rs
	}
	if window != "" {
		from, to, err := trace.ParseWindow(window)
		if err != nil {
			return sel, fault.Usagef("--window: %v", err)
		}
		sel.From, sel.To = from, to
	}
	return sel, nil
}
