package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/outfile"
	"github.com/popmon/popmon/internal/session"
)

// A measurement that cannot be written where it belongs (a full, read-only
// or over-quota file system) is kept where there is room, never lost
// (docs/cli.md, "Output"): the library (shim/output.c, keep_elsewhere) and
// popmon run's partial measurement write it as popmon-kept-TAG-NAME, TAG
// being the random part of the session folder's name, in the first of
// session.KeptDirs that takes it; popmon run then tries to move it to the output
// and, when that fails too, leaves it there, says where, and exits with
// ExitNotWritten. session.WriteKeeping writes the partial measurement so.

// keepUnwritten tells what became of a measurement popmon run could not
// write to target: its report (from where it is), then one line naming
// where it was kept. It returns whether that is inside the session folder,
// which must then stay.
func keepUnwritten(env *Env, path, target string, err error, session, format, model string) bool {
	if format != "none" {
		if err := renderFile(env, env.Stderr, path, format, reportOptions{model: model}); err != nil {
			fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
		}
	}
	fmt.Fprintf(env.Stderr, "popmon: cannot write %s: %s; the measurement was kept in %s (move it there with mv once there is room)\n",
		target, outfile.ErrText(err), path)
	rel, rerr := filepath.Rel(session, path)
	return rerr == nil && !strings.HasPrefix(rel, "..")
}

// unwrittenResult is popmon run's ending: the command's own failure first;
// else ExitNotWritten when a measurement could not be written (kept
// elsewhere, or lost to a full file system).
func unwrittenResult(job error, published, unwritten int, sess *session.Result) error {
	if job != nil {
		return job
	}
	if unwritten > 0 || (published == 0 && sess != nil && sess.Full != "") {
		return fault.Silent(fault.NotWritten)
	}
	return nil
}

// readBack returns a file to read the measurement src from once it is
// published as target, and a function that removes it: "" when target can
// be read back (a regular file); else (a device or a pipe: -o /dev/null
// prints the report all the same, and reading a pipe would wait forever) a
// second name of src, a hard link beside it, or a copy in $TMPDIR.
func readBack(src, target string) (string, func()) {
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

// shown is the file a report is read from: view when readBack gave one,
// else final.
func shown(view, final string) string {
	if view != "" {
		return view
	}
	return final
}
