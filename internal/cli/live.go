package cli

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

	"github.com/popmon/popmon/internal/binscan"
	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/measure"
)

// liveInfoName is the file of a session folder that says where the live
// files are and what the job was (popmon recover reads it).
const liveInfoName = "popmon-live.info"

// liveInfo is the content of liveInfoName.
type liveInfo struct {
	LiveDir    string   `json:"live_dir"`
	Command    []string `json:"command"`
	Cwd        string   `json:"cwd"`
	Launcher   string   `json:"launcher"`
	JobID      string   `json:"job_id,omitempty"` // $SLURM_JOB_ID of popmon run (sbatch, salloc)
	MPILibrary string   `json:"mpi_library"`
	Output     string   `json:"output"`
	Force      bool     `json:"force"`
}

// liveBase is where live folders are made: node-local memory (tmpfs).
var liveBase = "/dev/shm"

// makeLiveDir creates the private folder of a run's live files: below
// /dev/shm/popmon-UID (node-local memory, where a store costs nothing and
// the kernel keeps the pages of a killed process), else in the session
// folder itself.
func makeLiveDir(session string) (string, error) {
	if base, err := privateDir(filepath.Join(liveBase, "popmon-"+strconv.Itoa(os.Getuid()))); err == nil {
		if d, err := os.MkdirTemp(base, "run-"); err == nil {
			return d, nil
		}
	}
	if kind, _, err := fsInfo(session); err == nil && sharedFS[kind] {
		return "", fmt.Errorf("no private folder in %s, and the session folder is on %s (a network file system, where every store of the measured processes could wait for the network)", liveBase, kind)
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

// ownFolder checks that dir is a folder (not a link to one) owned by this
// user.
func ownFolder(dir string) error {
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

// checkLiveDir checks that dir, a session folder's live_dir, is one that
// makeLiveDir makes for this user: run-* directly in the private
// liveBase/popmon-UID, or live directly in the session folder; a folder
// of this user's, not a link.
func checkLiveDir(session, dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("not an absolute path")
	}
	clean := filepath.Clean(dir)
	root := filepath.Join(liveBase, "popmon-"+strconv.Itoa(os.Getuid()))
	parent, base := filepath.Dir(clean), filepath.Base(clean)
	inRoot := parent == root && strings.HasPrefix(base, "run-") && len(base) > len("run-")
	inSession := base == "live" && sameFile(parent, session)
	if !inRoot && !inSession {
		return fmt.Errorf("popmon run keeps live files only in %s/run-* or in the session folder's live folder", root)
	}
	if inRoot {
		if err := ownFolder(root); err != nil {
			return fmt.Errorf("%s: %v", root, err)
		}
		if fi, err := os.Lstat(root); err != nil || fi.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("%s is not private", root)
		}
	}
	return ownFolder(clean)
}

// sameFile reports whether paths a and b name the same existing file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// writeLiveInfo records info in the session folder.
func writeLiveInfo(session string, info liveInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(session, liveInfoName), append(b, '\n'), 0o600)
}

// partialFromSampler assembles the partial measurement of what s read and
// writes it as file name in dir; returns its path and command.
func partialFromSampler(s *live.Sampler, info liveInfo, end live.JobEnd, by, dir string) (string, *measure.Measurement, error) {
	procs, p, err := s.Procs(end)
	if err != nil {
		return "", nil, err
	}
	p.AssembledBy = by
	m, err := live.Assemble(procs, live.Job{Command: info.Command, Cwd: info.Cwd, Launcher: info.Launcher, JobID: info.JobID, MPILibrary: info.MPILibrary}, &p)
	if err != nil {
		return "", nil, err
	}
	final, order := live.FinalOf(m)
	m.Series = s.Series(final, s.T0(), order)
	path, err := writeMeasurementKeeping(dir, "partial.json", info.LiveDir, m)
	if err != nil {
		return "", nil, err
	}
	return path, m, nil
}

// jobEnd is what popmon run saw of the command's ending (pid, its exit
// status, the signal it passed on), for a job whose processes did not all
// say why they ended.
func jobEnd(st jobStatus, pid int, argv []string) live.JobEnd {
	e := live.JobEnd{PID: pid, Signal: int(st.signal), Code: st.code}
	if len(argv) > 0 {
		e.Name = filepath.Base(argv[0])
	}
	if st.forwarded != 0 {
		e.Forwarded = live.SignalName(int(st.forwarded)) + " sent to popmon run"
	}
	return e
}

const recoverHelp = `Assembles the measurement of a job whose popmon run was itself killed,
from the session folder it left next to the output (.popmon-session-*) and
the processes' live files. The measurement is marked partial, says why the
job ended and up to when it was measured, and is written next to the session
folder under the name popmon run would have used (numbered when taken).
Nothing in the session folder is trusted: it must be a folder of yours, its
live folder one that popmon run makes for you (else nothing is read or
removed), and -o and --force come from the command line only.`

// recoverCmd is popmon recover SESSION.
func recoverCmd(env *Env, args []string) error {
	fs := newFlags("recover", "[-o FILE [--force]] [--format F] SESSION_FOLDER", recoverHelp, env.Stderr)
	output := fs.String("o", "", "write the measurement to `FILE` (default: next to the session folder, the name popmon run would have used)")
	force := fs.Bool("force", false, "overwrite an existing -o file")
	format := fs.String("format", "text", "report printed: text, json, csv, talp-json, omp-regions-csv, or none")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fail(ExitUsage, "recover takes one session folder")
	}
	if err := checkFormat(*format, true); err != nil {
		return err
	}
	session := filepath.Clean(fs.Arg(0))
	if err := ownFolder(session); err != nil {
		return fail(ExitInput, "%s is not a session folder of yours: %v; nothing was read or removed", session, err)
	}
	b, err := os.ReadFile(filepath.Join(session, liveInfoName))
	if err != nil {
		return fail(ExitInput, "%s is not a popmon run session folder with live files (%v)", session, err)
	}
	var info liveInfo
	if err := json.Unmarshal(b, &info); err != nil || info.LiveDir == "" {
		return fail(ExitInput, "%s: unreadable %s", session, liveInfoName)
	}
	// The session folder may be anyone's (a shared project folder, an
	// unpacked archive): its live_dir is read and removed only when it is
	// a live folder popmon run makes for this user.
	if err := checkLiveDir(session, info.LiveDir); err != nil {
		return fail(ExitInput, "%s: refusing its live folder %q: %v; nothing was read or removed", session, info.LiveDir, err)
	}
	s, err := live.ScanSession(info.LiveDir, filepath.Join(session, "nodes"))
	if err != nil {
		return fail(ExitInput, "%v", err)
	}
	defer s.Close()
	// A job that finished: rank 0's measurement is in the session folder.
	var path string
	var command []string
	if sess, _ := readSession(session, 0); sess != nil && len(sess.files) > 0 {
		path, command = sess.files[0].path, sess.files[0].command
	} else {
		p, m, err := partialFromSampler(s, info, live.JobEnd{}, "recover", session)
		if err != nil {
			return fail(ExitInput, "cannot recover %s: %v", session, err)
		}
		path, command = p, m.Command
	}
	// -o and --force come from the command line only: the file's output
	// names the file's base name, written next to the session folder
	// without overwriting anything.
	target, frc := *output, *force
	if target == "" {
		frc = false
		name := filepath.Base(info.Output)
		if info.Output == "" || name == "." || name == ".." || name == string(filepath.Separator) {
			name = defaultOutputName(command)
		}
		target = filepath.Join(filepath.Dir(session), filepath.Base(name))
	}
	var final string
	if frc {
		final, err = replaceFile(path, target)
	} else {
		final, err = publishNumbered(path, target)
	}
	if err != nil {
		return fail(ExitEnv, "cannot write %s: %v; the measurement is in %s", target, err, path)
	}
	fmt.Fprintf(env.Stderr, "popmon: measurement written to %s\n", final)
	if *format != "none" {
		if err := renderFile(env, env.Stderr, final, *format, reportOptions{model: "talp"}); err != nil {
			fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
		}
	}
	os.RemoveAll(info.LiveDir)
	os.RemoveAll(session)
	return nil
}

// launcherKind is the measurement's launcher kind for a command line, as
// libpopmon would have written it.
func launcherKind(scan *binscan.Result) string {
	if os.Getenv("SLURM_JOB_ID") != "" {
		return measure.LauncherSlurm
	}
	switch jobMPI(scan) {
	case binscan.OpenMPI:
		return measure.LauncherOpenMPI
	case binscan.MPICH:
		return measure.LauncherMPICH
	}
	return measure.LauncherNone
}

// addSeries adds the time series the sampler took to the measurement file
// at path (rank 0's, of a job that finished), rewriting it in place.
func addSeries(s *live.Sampler, path string) error {
	m, err := measure.ReadFile(path)
	if err != nil {
		return err
	}
	final, order := live.FinalOf(m)
	if m.Series = s.Series(final, s.T0(), order); m.Series == nil {
		return nil
	}
	return writeMeasurement(path, m)
}

// writeMeasurement writes m as path, replacing it atomically (a file of
// popmon's own session folder).
func writeMeasurement(path string, m *measure.Measurement) error {
	out, err := createOutput(path, true)
	if err != nil {
		return err
	}
	defer out.abort()
	if err := measure.Write(out, m); err != nil {
		return err
	}
	return out.commit()
}
