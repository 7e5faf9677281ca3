package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// InfoName is the file of a session folder that says where the live
// files are and what the job was (popmon recover reads it).
const InfoName = "popmon-live.info"

// Info is the content of InfoName.
type Info struct {
	LiveDir    string   `json:"live_dir"`
	Command    []string `json:"command"`
	Cwd        string   `json:"cwd"`
	Launcher   string   `json:"launcher"`
	JobID      string   `json:"job_id,omitempty"` // $SLURM_JOB_ID of popmon run (sbatch, salloc)
	MPILibrary string   `json:"mpi_library"`
	Output     string   `json:"output"`
	Force      bool     `json:"force"`
}

// LiveBase is where live folders are made: node-local memory (tmpfs).
var LiveBase = "/dev/shm"

// MakeLiveDir creates the private folder of a run's live files: below
// /dev/shm/popmon-UID (node-local memory, where a store costs nothing and
// the kernel keeps the pages of a killed process), else in the session
// folder itself.
func MakeLiveDir(session string) (string, error) {
	if base, err := privateDir(filepath.Join(LiveBase, "popmon-"+strconv.Itoa(os.Getuid()))); err == nil {
		if d, err := os.MkdirTemp(base, "run-"); err == nil {
			return d, nil
		}
	}
	if kind, _, err := FSInfo(session); err == nil && sharedFS[kind] {
		return "", fmt.Errorf("no private folder in %s, and the session folder is on %s (a network file system, where every store of the measured processes could wait for the network)", LiveBase, kind)
	}
	d := filepath.Join(session, "live")
	if err := os.Mkdir(d, 0o700); err != nil {
		return "", fmt.Errorf("cannot create a live folder: %w", err)
	}
	return d, nil
}

// privateDir makes (or checks) dir: a real folder of ours, mode 0700.
func privateDir(dir string) (string, error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is not a private folder of yours", dir)
	}
	return dir, nil
}

// OwnFolder checks that dir is a folder (not a link to one) owned by this
// user.
func OwnFolder(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("it is a symbolic link")
	case !fi.IsDir():
		return fmt.Errorf("not a folder")
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("owned by another user")
	}
	return nil
}

// CheckLiveDir checks that dir, a session folder's live_dir, is one that
// MakeLiveDir makes for this user: run-* directly in the private
// LiveBase/popmon-UID, or live directly in the session folder; a folder
// of this user's, not a link.
func CheckLiveDir(session, dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("not an absolute path")
	}
	clean := filepath.Clean(dir)
	root := filepath.Join(LiveBase, "popmon-"+strconv.Itoa(os.Getuid()))
	parent, base := filepath.Dir(clean), filepath.Base(clean)
	inRoot := parent == root && strings.HasPrefix(base, "run-") && len(base) > len("run-")
	inSession := base == "live" && sameFile(parent, session)
	if !inRoot && !inSession {
		return fmt.Errorf("popmon run keeps live files only in %s/run-* or in the session folder's live folder", root)
	}
	if inRoot {
		if err := OwnFolder(root); err != nil {
			return fmt.Errorf("%s: %v", root, err)
		}
		if fi, err := os.Lstat(root); err != nil || fi.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("%s is not private", root)
		}
	}
	return OwnFolder(clean)
}

// sameFile reports whether paths a and b name the same existing file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// WriteInfo records info in the session folder.
func WriteInfo(session string, info Info) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(session, InfoName), append(b, '\n'), 0o600)
}

// ReadInfo reads the session folder's InfoName. An error other than an
// *UnreadableError is os.ReadFile's: no such file.
func ReadInfo(dir string) (Info, error) {
	var info Info
	b, err := os.ReadFile(filepath.Join(dir, InfoName))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil || info.LiveDir == "" {
		return info, &UnreadableError{Dir: dir}
	}
	return info, nil
}

// UnreadableError is a session folder whose InfoName cannot be read as one.
type UnreadableError struct{ Dir string }

func (e *UnreadableError) Error() string { return fmt.Sprintf("%s: unreadable %s", e.Dir, InfoName) }

// LiveRoot is the private folder below LiveBase where MakeLiveDir makes the
// user's live folders (run-*).
func LiveRoot() string {
	return filepath.Join(LiveBase, "popmon-"+strconv.Itoa(os.Getuid()))
}

// FindLive returns the live folder of arg (a session folder, or a live
// folder) and the session's Info (empty for a live folder), or the newest
// live folder of the user's (popmon top, serve and query).
func FindLive(arg string) (string, Info, error) {
	var info Info
	if arg != "" {
		var unreadable *UnreadableError
		if i, err := ReadInfo(arg); err == nil {
			return i.LiveDir, i, nil
		} else if errors.As(err, &unreadable) {
			return "", info, err
		}
		if m, _ := filepath.Glob(filepath.Join(arg, "*.live")); len(m) > 0 {
			return arg, info, nil
		}
		return "", info, fmt.Errorf("%s is neither a popmon run session folder nor a live folder", arg)
	}
	dirs, _ := filepath.Glob(filepath.Join(LiveRoot(), "run-*"))
	best, bestT := "", time.Time{}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.ModTime().After(bestT) {
			best, bestT = d, fi.ModTime()
		}
	}
	if best == "" {
		return "", info, fmt.Errorf("no job measured by popmon run on this node (no live folder in %s): pass its session folder", LiveBase)
	}
	return best, info, nil
}
