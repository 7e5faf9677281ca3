package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/popmon/popmon/measure"
)

// A measurement that cannot be written where it belongs (a full, read-only
// or over-quota file system) is kept where there is room, never lost
// (docs/cli.md, "Output"): the library (shim/output.c, keep_elsewhere) and
// popmon run's partial measurement write it as popmon-kept-TAG-NAME, TAG
// being the random part of the session folder's name, in the first of
// keptDirs that takes it; popmon run then tries to move it to the output
// and, when that fails too, leaves it there, says where, and exits with
// ExitNotWritten.

const keptPrefix = "popmon-kept-"

// keptTag is the part of the session folder's name that names its kept
// files: ".popmon-session-123" gives "123".
func keptTag(session string) string {
	return strings.TrimPrefix(filepath.Base(session), ".popmon-session-")
}

// keptDirs are the folders where a measurement is kept, in order: the
// private folder that holds the live folder (/dev/shm/popmon-UID: node-local
// memory that nothing removes; not the session folder, when the live folder
// is the session's own live/), then $TMPDIR, then /tmp.
func keptDirs(session, liveDir string) []string {
	var dirs []string
	add := func(d string) {
		if d == "" || !filepath.IsAbs(d) {
			return
		}
		d = filepath.Clean(d)
		for _, o := range dirs {
			if o == d {
				return
			}
		}
		dirs = append(dirs, d)
	}
	if liveDir != "" {
		if p := filepath.Dir(filepath.Clean(liveDir)); p != filepath.Clean(session) {
			add(p)
		}
	}
	add(os.TempDir())
	add("/tmp")
	return dirs
}

// findKept returns the measurements of session kept outside it: regular
// files of this user (not links) named popmon-kept-TAG-*.json in keptDirs.
func findKept(session, liveDir string) []string {
	var out []string
	pattern := keptPrefix + keptTag(session) + "-*.json"
	for _, d := range keptDirs(session, liveDir) {
		names, _ := filepath.Glob(filepath.Join(d, pattern))
		for _, p := range names {
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// keptName returns the name a kept file had in the session folder:
// "popmon-kept-123-mpi-host-7.json" gives "mpi-host-7.json".
func keptName(name string) string {
	rest, ok := strings.CutPrefix(name, keptPrefix)
	if !ok {
		return name
	}
	if i := strings.IndexByte(rest, '-'); i >= 0 {
		return rest[i+1:]
	}
	return name
}

// writeMeasurementKeeping writes m as dir/name (dir is the session folder);
// when that fails, it keeps m as popmon-kept-TAG-name in the first of
// keptDirs that takes it, and returns where it went. The error is the
// first failure, when m could be kept nowhere.
func writeMeasurementKeeping(dir, name, liveDir string, m *measure.Measurement) (string, error) {
	path := filepath.Join(dir, name)
	first := writeMeasurement(path, m)
	if first == nil {
		return path, nil
	}
	for _, d := range keptDirs(dir, liveDir) {
		if p, err := keepIn(d, keptPrefix+keptTag(dir)+"-"+name, m); err == nil {
			return p, nil
		}
	}
	return "", first
}

// keepIn writes m into folder d as name (numbered when taken, never
// replacing anything), readable by its owner only.
func keepIn(d, name string, m *measure.Measurement) (string, error) {
	return writeNumberedAs(m, filepath.Join(d, name), 0o600, ".popmon-kept-*.tmp")
}

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
		target, errText(err), path)
	rel, rerr := filepath.Rel(session, path)
	return rerr == nil && !strings.HasPrefix(rel, "..")
}

// errText is what went wrong, without the path the message names anyway:
// "no space left on device".
func errText(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	}
	return err.Error()
}

// noRoom says, when the session folder's file system has no room left
// (where the library writes the measurement), so; "" otherwise.
func noRoom(session string) string {
	if _, free, err := fsInfo(session); err == nil && free < 64<<10 {
		return fmt.Sprintf("the file system of %s is full (%d KiB free)", filepath.Dir(session), free>>10)
	}
	return ""
}

// unwrittenResult is popmon run's ending: the command's own failure first;
// else ExitNotWritten when a measurement could not be written (kept
// elsewhere, or lost to a full file system).
func unwrittenResult(job error, published, unwritten int, sess *sessionResult) error {
	if job != nil {
		return job
	}
	if unwritten > 0 || (published == 0 && sess != nil && sess.full != "") {
		return &exitError{code: ExitNotWritten, err: errors.New("")}
	}
	return nil
}
