package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/replay"
	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/measure"
)

// ReadOptions control how [Open] reads a file.
type ReadOptions struct {
	// SkipBad skips a trace's malformed lines (counted in the
	// measurement's warnings) instead of refusing the trace.
	SkipBad bool
	// App is the Paraver application to import (0: the first).
	App int
	// Progress, when set, gets the bytes of a trace read so far and its
	// size.
	Progress func(read, size int64)
	// ToolVersion is popmon's version, recorded in imported traces.
	ToolVersion string
}

// File is one run file that [Open] read and found usable.
type File struct {
	// Path is the file's path as given.
	Path string
	// Kind is KindPopmon, KindTALP or KindParaver.
	Kind string
	// Measurement is the file's measurement: read (popmon files),
	// imported (traces) or converted by internal/talpjson (DLB/TALP JSON).
	// It passes [measure.Measurement.Validate].
	Measurement *measure.Measurement
	// talp is a DLB/TALP file's summary with DLB's own efficiencies.
	talp *Run
}

// FileError says why a file cannot be used as a run: the file, the problem
// and what to do about it, in one sentence.
type FileError struct {
	// Path is the file.
	Path string
	// Problem says what is wrong, as a predicate of the file ("does not
	// exist", "is not valid JSON (...)").
	Problem string
	// Fix says what to do.
	Fix string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error: "PATH PROBLEM: FIX".
func (e *FileError) Error() string { return fmt.Sprintf("%s %s: %s", e.Path, e.Problem, e.Fix) }

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// Warning is a problem of a file that was read anyway (a trace's skipped
// malformed lines, say).
type Warning struct {
	// Path is the file.
	Path string
	// Text says what happened.
	Text string
}

// Error implements error: "PATH: TEXT".
func (w *Warning) Error() string { return w.Path + ": " + w.Text }

// Fixes shared by several problems.
const (
	fixRemeasure = "measure again (popmon run, popmon import), or give a DLB/TALP JSON file"
	fixNotARun   = "give a popmon measurement (popmon run, popmon import), a DLB/TALP JSON file or an Extrae/Paraver trace (.prv, .prv.gz)"
)

// Open reads the file at path and checks that it is a usable run: a popmon
// measurement that passes validation, a DLB/TALP JSON file that
// internal/talpjson converts and whose efficiencies parse, or an
// Extrae/Paraver trace (by name or by its first bytes) that imports. It is
// the one validation path of every command that reads runs (report,
// scaling, check, pages), so that they accept and reject the same files.
// Errors are [*FileError]s: the file, the problem, the fix.
func Open(path string, opt ReadOptions) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, statError(path, err)
	}
	if st.IsDir() {
		return nil, &FileError{Path: path, Problem: "is a directory, not a run file",
			Fix: "name a measurement file (popmon scaling and popmon check --baseline read every run of a directory)"}
	}
	if !st.Mode().IsRegular() {
		return nil, &FileError{Path: path, Problem: fmt.Sprintf("is not a regular file (%s)", st.Mode().Type()), Fix: fixNotARun}
	}
	if st.Size() == 0 {
		return nil, &FileError{Path: path, Problem: "is empty",
			Fix: "a job killed before it wrote its measurement leaves such a file; " + fixRemeasure}
	}
	if paraver.IsTrace(path) {
		return openTrace(path, opt)
	}
	data, isTrace, err := readRun(path, st.Size())
	if err != nil {
		return nil, statError(path, err)
	}
	if isTrace {
		return openTrace(path, opt)
	}
	return openJSON(path, data)
}

// readRun reads the file at path (size bytes as it was stated) in one
// open: all of it, or, for a Paraver trace by its first bytes ("#Paraver",
// paraver.IsTraceFile), only those (the import streams it).
func readRun(path string, size int64) (data []byte, isTrace bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	head := make([]byte, 8) // paraver.IsTraceHead's
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, false, err
	}
	if paraver.IsTraceHead(head[:n]) {
		return nil, true, nil
	}
	var b bytes.Buffer
	b.Grow(int(min(size, 1<<30)) + bytes.MinRead)
	b.Write(head[:n])
	if _, err := b.ReadFrom(f); err != nil {
		return nil, false, err
	}
	return b.Bytes(), false, nil
}

// statError turns an error of os.Stat or os.ReadFile into a FileError.
func statError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &FileError{Path: path, Problem: "does not exist", Fix: "check the path (did the job that writes it succeed?)", Err: err}
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	return &FileError{Path: path, Problem: "cannot be read (" + msg + ")", Fix: "check its permissions", Err: err}
}

// openTrace imports a Paraver trace and replays it on the ideal network
// in the same pass (m.IdealNetwork, for serialisation and transfer
// efficiency). A trace that cannot be replayed still imports, with a
// warning that says why.
func openTrace(path string, opt ReadOptions) (*File, error) {
	m, tr, err := paraver.ImportTrace(path, paraver.Options{SkipBad: opt.SkipBad, App: opt.App, ToolVersion: opt.ToolVersion}, opt.Progress)
	if err == nil {
		ApplyReplay(m, tr.Trace, tr.Why)
	}
	if err != nil {
		// paraver's messages say what to do (re-copy, --skip-bad, ...).
		msg := strings.TrimPrefix(err.Error(), path+": ")
		return nil, &FileError{Path: path, Problem: "is not a usable Paraver trace", Fix: msg, Err: err}
	}
	if err := m.Validate(); err != nil {
		return nil, &FileError{Path: path, Problem: "is a Paraver trace that imports into an invalid measurement (" + oneLine(err) + ")",
			Fix: "re-generate the trace", Err: err}
	}
	return &File{Path: path, Kind: KindParaver, Measurement: m}, nil
}

// ApplyReplay replays tr on the ideal network into m.IdealNetwork: the one
// replay step of imported traces ([Open]) and traced runs ([AttachTrace]),
// with one wording of its warnings. When tr is nil (why says why) or the
// replay fails, m gets a warning instead, and serialisation and transfer
// efficiency say they are not measured. A run without MPI is left alone.
// The trace's notes (left-out records) go to the measurement's source
// notes (an imported trace's; a run popmon measured has none).
func ApplyReplay(m *measure.Measurement, tr *trace.Trace, why string) {
	if m.MPI == nil {
		return // no MPI: nothing to split
	}
	if tr == nil {
		m.Warnings = append(m.Warnings, "no ideal-network replay (serialisation and transfer efficiency not measured): "+why)
		return
	}
	if err := replay.Apply(m, tr, replay.Options{}); err != nil {
		m.Warnings = append(m.Warnings, "no ideal-network replay (serialisation and transfer efficiency not measured): "+strings.TrimPrefix(err.Error(), "replay: "))
		return
	}
	if m.Source != nil {
		for _, n := range tr.Notes {
			m.Source.Notes = append(m.Source.Notes, "replay: "+n)
		}
	}
}

// openJSON reads a popmon measurement or a DLB/TALP JSON file.
func openJSON(path string, data []byte) (*File, error) {
	body := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(body) == 0 {
		return nil, &FileError{Path: path, Problem: "holds only white space",
			Fix: "a job killed before it wrote its measurement leaves such a file; " + fixRemeasure}
	}
	if !json.Valid(body) {
		var raw json.RawMessage
		reason := "invalid JSON"
		if err := json.Unmarshal(body, &raw); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				reason = fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
			} else {
				reason = "invalid JSON: " + err.Error()
			}
		}
		return nil, &FileError{Path: path, Problem: "is not valid JSON (" + reason + ")",
			Fix: "a truncated file means the job was killed while writing it; " + fixRemeasure}
	}
	if body[0] != '{' {
		return nil, &FileError{Path: path, Problem: "is not a run file (its top level is not a JSON object)", Fix: fixNotARun}
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, &FileError{Path: path, Problem: "is not valid JSON (" + err.Error() + ")", Fix: fixNotARun, Err: err}
	}
	if _, ok := head["format"]; ok {
		return openPopmon(path, body)
	}
	if talpjson.IsTALP(body) {
		return openTALP(path, body)
	}
	return nil, &FileError{Path: path,
		Problem: fmt.Sprintf("is neither a popmon measurement (no \"format\": %q) nor DLB/TALP JSON (no \"dlbVersion\" or \"Application\")", measure.Format),
		Fix:     fixNotARun}
}

// openPopmon reads and validates a popmon measurement.
func openPopmon(path string, data []byte) (*File, error) {
	m, err := measure.Read(bytes.NewReader(data))
	if err == nil {
		return &File{Path: path, Kind: KindPopmon, Measurement: m}, nil
	}
	var fe *measure.FormatError
	var ve *measure.VersionError
	switch {
	case errors.As(err, &fe) && fe.Reason != "":
		return nil, &FileError{Path: path, Problem: "is not a popmon measurement (" + fe.Reason + ")", Fix: fixNotARun, Err: err}
	case errors.As(err, &fe):
		return nil, &FileError{Path: path, Problem: fmt.Sprintf("is not a popmon measurement (its \"format\" is %q, not %q)", fe.Format, measure.Format), Fix: fixNotARun, Err: err}
	case errors.As(err, &ve):
		return nil, &FileError{Path: path,
			Problem: fmt.Sprintf("is a measurement of format version %d, newer than this popmon reads (%d)", ve.Version, ve.Supported),
			Fix:     "upgrade popmon", Err: err}
	}
	return nil, &FileError{Path: path, Problem: "is not a valid measurement (" + oneLine(err) + ")",
		Fix: "the file is damaged or was edited (docs/measurement-format.md has the rules); " + fixRemeasure, Err: err}
}

// openTALP reads a DLB/TALP JSON file (talpjson.Read): the measurement
// synthesized from it and the summary of what DLB wrote itself.
func openTALP(path string, data []byte) (*File, error) {
	m, d, err := talpjson.Read(data, path)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "convert DLB/TALP JSON "+path+": ")
		return nil, &FileError{Path: path, Problem: "is not a usable DLB/TALP JSON file (" + msg + ")",
			Fix: "the file is damaged or was edited; write it again with DLB (or popmon report --format talp-json)", Err: err}
	}
	return &File{Path: path, Kind: KindTALP, Measurement: m, talp: talpRun(path, m, d)}, nil
}

// oneLine joins the lines of err's message (errors.Join of validation
// problems) with "; ".
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
