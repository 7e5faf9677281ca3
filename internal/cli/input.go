package cli

import (
	"errors"
	"fmt"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/term"
	"github.com/popmon/popmon/measure"
)

// inputOptions control how readMeasurement reads traces.
type inputOptions struct {
	skipBad bool // skip malformed trace lines
	app     int  // Paraver application to import (0: the first)
}

// readMeasurement reads any input popmon understands through runs.Open,
// the one validation path of every command that reads runs: a popmon
// measurement file, a DLB/TALP JSON file (converted by internal/talpjson)
// or an Extrae/Paraver trace (imported by internal/paraver, with a
// progress line on a terminal; its warnings go to stderr). Errors carry
// exit code ExitInput.
func readMeasurement(env *Env, path string, opt inputOptions) (*measure.Measurement, error) {
	f, err := openRun(env, path, opt)
	if err != nil {
		return nil, err
	}
	return f.Measurement, nil
}

// openRun opens path with runs.Open (see readMeasurement).
func openRun(env *Env, path string, opt inputOptions) (*runs.File, error) {
	ro := runs.ReadOptions{SkipBad: opt.skipBad, App: opt.app, ToolVersion: Version}
	var p *term.Progress
	if term.IsTerminal(env.Stderr) {
		p = term.NewProgress(env.Stderr, path)
		ro.Progress = p.Update
	}
	f, err := runs.Open(path, ro)
	if p != nil {
		p.Clear()
	}
	if err != nil {
		return nil, fault.Inputf("%v", err)
	}
	if f.Kind == runs.KindParaver {
		for _, w := range f.Measurement.Warnings {
			fmt.Fprintf(env.Stderr, "popmon: %v\n", &runs.Warning{Path: path, Text: w})
		}
	}
	return f, nil
}

// loadWarner returns the warn function of runs.LoadAll for command cmd:
// skipped files ("popmon scaling: skipping FILE ...") and warnings about
// files read anyway ("popmon scaling: FILE: ...").
func loadWarner(env *Env, cmd string) func(error) {
	return func(err error) {
		var w *runs.Warning
		if errors.As(err, &w) {
			fmt.Fprintf(env.Stderr, "popmon %s: %v\n", cmd, err)
			return
		}
		fmt.Fprintf(env.Stderr, "popmon %s: skipping %v\n", cmd, err)
	}
}
