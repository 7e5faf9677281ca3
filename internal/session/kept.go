package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A measurement that cannot be written where it belongs (a full, read-only
// or over-quota file system) is kept where there is room, never lost
// (docs/cli.md, "Output"): the library (shim/output.c, keep_elsewhere) and
// popmon run's partial measurement (WriteKeeping) write it as
// popmon-kept-TAG-NAME (KeptName), TAG being the random part of the session
// folder's name, in the first of KeptDirs that takes it.

const keptPrefix = "popmon-kept-"

// keptTag is the part of the session folder's name that names its kept
// files: ".popmon-session-123" gives "123".
func keptTag(session string) string {
	return strings.TrimPrefix(filepath.Base(session), ".popmon-session-")
}

// KeptDirs are the folders where a measurement is kept, in order: the
// private folder that holds the live folder (/dev/shm/popmon-UID: node-local
// memory that nothing removes; not the session folder, when the live folder
// is the session's own live/), then $TMPDIR, then /tmp.
func KeptDirs(session, liveDir string) []string {
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

// FindKept returns the measurements of session kept outside it: regular
// files of this user (not links) named popmon-kept-TAG-*.json in KeptDirs.
func FindKept(session, liveDir string) []string {
	var out []string
	pattern := keptPrefix + keptTag(session) + "-*.json"
	for _, d := range KeptDirs(session, liveDir) {
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

// KeptName is the name under which a measurement of the session folder
// named name is kept outside it: popmon-kept-TAG-name.
func KeptName(session, name string) string {
	return keptPrefix + keptTag(session) + "-" + name
}

// NoRoom says, when the session folder's file system has no room left
// (where the library writes the measurement), so; "" otherwise.
func NoRoom(session string) string {
	if _, free, err := FSInfo(session); err == nil && free < 64<<10 {
		return fmt.Sprintf("the file system of %s is full (%d KiB free)", filepath.Dir(session), free>>10)
	}
	return ""
}
