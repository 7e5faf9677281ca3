package session

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/binscan"
	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/outfile"
)

// A measurement that cannot be written where it belongs (a full, read-only
// or over-quota file system) is kept where there is room, never lost
// (docs/cli.md, "Output"): the library (shim/output.c, keep_elsewhere) and
// popmon run's partial measurement write it as popmon-kept-TAG-NAME, TAG
// being the random part of the session folder's name, in the first of
// KeptDirs that takes it; Run then tries to move it to the output and,
// when that fails too, leaves it there, says where, and returns a
// fault.NotWritten. WriteKeeping writes the partial measurement so.

// keepUnwritten tells what became of a measurement popmon run could not
// write to target: its report (from where it is, through report), then
// one line on stderr naming where it was kept. It returns whether that is
// inside the session folder, which must then stay.
func keepUnwritten(say func(string), report func(path string, final bool), path, target string, err error, session string) bool {
	if report != nil {
		report(path, false)
	}
	say(fmt.Sprintf("cannot write %s: %s; the measurement was kept in %s (move it there with mv once there is room)",
		target, outfile.ErrText(err), path))
	rel, rerr := filepath.Rel(session, path)
	return rerr == nil && !strings.HasPrefix(rel, "..")
}

// unwrittenResult is popmon run's ending: the command's own failure first;
// else a fault.NotWritten when a measurement could not be written (kept
// elsewhere, or lost to a full file system).
func unwrittenResult(job error, published, unwritten int, sess *Result) error {
	if job != nil {
		return job
	}
	if unwritten > 0 || (published == 0 && sess != nil && sess.Full != "") {
		return fault.Silent(fault.NotWritten)
	}
	return nil
}

// ReadBack returns a file to read the measurement src from once it is
// published as target, and a function that removes it: "" when target can
// be read back (a regular file); else (a device or a pipe: -o /dev/null
// prints the report all the same, and reading a pipe would wait forever) a
// second name of src, a hard link beside it, or a copy in $TMPDIR.
func ReadBack(src, target string) (string, func()) {
	if !outfile.IsThrough(target) {
		return "", func() {}
	}
	hold := src + ".report"
	if err := os.Link(src, hold); err != nil {
		f, err := os.CreateTemp("", ".popmon-report-*.json")
		if err != nil {
			return "", func() {}
		}
		hold = f.Name()
		in, err := os.Open(src)
		if err == nil {
			_, err = io.Copy(f, in)
			in.Close()
		}
		if cerr := f.Close(); err != nil || cerr != nil {
			os.Remove(hold)
			return "", func() {}
		}
	}
	return hold, func() { os.Remove(hold) }
}

// Shown is the file a report is read from: view when ReadBack gave one,
// else final.
func Shown(view, final string) string {
	if view != "" {
		return view
	}
	return final
}

// execOutputs reports (through report) each measurement a `popmon exec -o
// FILE` in popmon run's job wrote during the run (exec's explicit file
// wins over run's session folder, so run has none of its own; the
// library said where it wrote it), and returns how many there were.
// Without it, run said that no measurement was written.
func execOutputs(scan *binscan.Result, since time.Time, report func(path string, final bool)) int {
	if scan == nil {
		return 0
	}
	seen := map[string]bool{}
	n := 0
	for _, p := range scan.Programs {
		f := p.ExecOutput
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		// File systems with whole-second times: a file of this second counts.
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() || st.ModTime().Before(since.Truncate(time.Second)) {
			continue
		}
		n++
		if report != nil {
			report(f, false)
		}
	}
	return n
}
