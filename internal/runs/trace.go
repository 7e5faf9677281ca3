package runs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/measure"
)

// LoadTrace reads the event trace at path, the one way every trace input
// is resolved (popmon trace export, popmon report --patterns, the wait
// states of popmon pages): an Extrae/Paraver trace (.prv, .prv.gz), the
// folder of per-rank trace files of a `popmon run --trace`, or a run file
// that [Open] accepts whose "trace" field names that folder (relative to
// the file's folder, [TraceDir]). The trace is read only here, when asked
// for: [Open] never reads a measurement's trace folder. Errors say what to
// give instead.
func LoadTrace(path string, opt ReadOptions) (*trace.Trace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: give a Paraver trace, a traced run's measurement or its trace folder", path, err)
	}
	if st.IsDir() {
		tr, err := trace.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return tr, nil
	}
	if paraver.IsTraceFile(path) {
		return paraver.ReadTrace(path, paraver.Options{SkipBad: opt.SkipBad, App: opt.App, Path: path, ToolVersion: opt.ToolVersion})
	}
	f, err := Open(path, opt)
	if err != nil {
		return nil, err
	}
	m := f.Measurement
	switch {
	case f.Kind == KindTALP:
		return nil, fmt.Errorf("%s is a DLB/TALP file, which has no event trace: measure the program with popmon run --trace", path)
	case m.Trace == nil && m.Source != nil && m.Source.Path != "":
		return nil, fmt.Errorf("%s was imported from %s and keeps no trace: give the trace itself", path, m.Source.Path)
	case m.Trace == nil:
		return nil, fmt.Errorf("%s: this measurement was not traced: run it again with popmon run --trace", path)
	case strings.TrimSpace(m.Trace.Dir) == "":
		return nil, fmt.Errorf("%s: the measurement's trace field names no folder: give the trace folder itself", path)
	}
	dir := TraceDir(path, m)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: its trace folder %s is missing: keep the trace folder next to the measurement (or give the folder itself)", path, dir)
	}
	tr, err := trace.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s (the trace of %s): %v", dir, path, err)
	}
	return tr, nil
}

// TraceDir is the trace folder that the measurement m, read from the file
// at path, names in its "trace" field: as written when absolute, else
// relative to the file's folder. It is "" when m names none.
func TraceDir(path string, m *measure.Measurement) string {
	if m == nil || m.Trace == nil || m.Trace.Dir == "" {
		return ""
	}
	dir := m.Trace.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(path), dir)
	}
	return dir
}

// AttachTrace records in m (read from the file final) the trace folder dir
// that a traced run wrote next to it (m.Trace: the folder relative to
// final's, its records, bytes and flushes), reads it and replays it on the
// ideal network ([ApplyReplay]). It returns the warnings it added to m; a
// trace that cannot be read or replayed leaves the measurement standing
// without the replay.
func AttachTrace(m *measure.Measurement, dir string) []string {
	n := len(m.Warnings)
	tr, err := trace.ReadDir(dir)
	st := trace.DirStats(dir)
	m.Trace = &measure.TraceInfo{Dir: filepath.Base(dir), Records: st.Records, Bytes: st.Bytes, Flushes: st.Flushes}
	why := ""
	if err != nil {
		why = fmt.Sprintf("the trace in %s could not be read: %v", dir, err)
	}
	ApplyReplay(m, tr, why)
	return m.Warnings[n:len(m.Warnings):len(m.Warnings)]
}
