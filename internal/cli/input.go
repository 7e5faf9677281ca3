package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
)

// inputOptions control how readMeasurement reads traces.
type inputOptions struct {
	skipBad bool // skip malformed trace lines
	app     int  // Paraver application to import (0: the first)
}

// readMeasurement reads any input popmon understands: a popmon measurement
// file, a DLB/TALP JSON file (converted by internal/talpjson) or an
// Extrae/Paraver trace (imported by internal/paraver, with a progress line
// on a terminal). Errors carry exit codes.
func readMeasurement(env *Env, path string, opt inputOptions) (*measure.Measurement, error) {
	if paraver.IsTraceFile(path) {
		return importTrace(env, path, opt)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fail(ExitInput, "%v", err)
	}
	if talpjson.IsTALP(data) {
		m, err := talpjson.Convert(data, path)
		if err != nil {
			return nil, fail(ExitInput, "%s: %v", path, err)
		}
		return m, nil
	}
	m, err := measure.Read(bytes.NewReader(data))
	if err != nil {
		return nil, fail(ExitInput, "%s: %v", path, err)
	}
	return m, nil
}

// importTrace imports a Paraver trace, drawing a progress line on stderr
// when it is a terminal.
func importTrace(env *Env, path string, opt inputOptions) (*measure.Measurement, error) {
	var progress func(read, size int64)
	var p *progressLine
	if isTerminal(env.Stderr) {
		p = &progressLine{w: env.Stderr, name: path, start: time.Now()}
		progress = p.update
	}
	m, err := paraver.ImportFile(path, paraver.Options{SkipBad: opt.skipBad, App: opt.app, ToolVersion: Version}, progress)
	if p != nil {
		p.clear()
	}
	if err != nil {
		return nil, fail(ExitInput, "%v", err)
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(env.Stderr, "popmon: %s: %s\n", path, w)
	}
	return m, nil
}

// progressLine draws "importing NAME  42%  123 MB/s" on a terminal, at most
// ten times a second.
type progressLine struct {
	w     io.Writer
	name  string
	start time.Time
	last  time.Time
	drawn bool
}

func (p *progressLine) update(read, size int64) {
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond || now.Sub(p.start) < 500*time.Millisecond {
		return // nothing for short imports, and no flicker
	}
	p.last = now
	pct := 0.0
	if size > 0 {
		pct = 100 * float64(read) / float64(size)
	}
	rate := float64(read) / 1e6 / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\rimporting %s  %3.0f%%  %.0f MB/s of file\x1b[K", p.name, pct, rate)
	p.drawn = true
}

func (p *progressLine) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
