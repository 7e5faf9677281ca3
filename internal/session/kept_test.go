package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/measure"
)

// fullTmpfs mounts a 64 KiB tmpfs on a new folder and fills it; skipped
// where mounting is not permitted.
func fullTmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mounting a small tmpfs is not permitted here: %v %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = f.Write(make([]byte, 4096))
	}
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling %s: %v", dir, err)
	}
	return dir
}

func testMeasurement(t *testing.T) *measure.Measurement {
	t.Helper()
	m, err := measure.ReadFile(partialRun(t, t.TempDir(), "p.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPartialKeptWhenSessionFails: popmon run's partial measurement, whose
// write into the session folder fails (a full file system; a folder that
// is gone), is kept in the private folder of the live folder, then in
// $TMPDIR, under a popmon-kept-TAG- name, never replacing a file. It used
// to be lost ("no partial measurement: ... no space left on device").
func TestPartialKeptWhenSessionFails(t *testing.T) {
	m := testMeasurement(t)
	for _, c := range []struct {
		name   string
		parent func(t *testing.T) string
	}{
		{"full file system", fullTmpfs},
		{"missing folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "gone") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			folder := filepath.Join(c.parent(t), ".popmon-session-42")
			os.Mkdir(folder, 0o700) // on the full file system: a folder takes no block
			shm := t.TempDir()
			live := filepath.Join(shm, "run-7")
			for i, want := range []string{"popmon-kept-42-partial.json", "popmon-kept-42-partial.1.json"} {
				p, err := WriteKeeping(folder, "partial.json", live, m)
				if err != nil {
					t.Fatal(err)
				}
				if p != filepath.Join(shm, want) {
					t.Errorf("write %d kept in %s, want %s", i, p, filepath.Join(shm, want))
				}
				if got, err := measure.ReadFile(p); err != nil || got.Partial == nil || len(got.Processes) != 2 {
					t.Errorf("kept file %s: %v", p, err)
				}
			}
			if tmps, _ := filepath.Glob(filepath.Join(shm, ".popmon-kept-*")); len(tmps) != 0 {
				t.Errorf("temporary files left: %v", tmps)
			}
			// The live folder inside the session (no /dev/shm): $TMPDIR.
			tmpdir := t.TempDir()
			t.Setenv("TMPDIR", tmpdir)
			p, err := WriteKeeping(folder, "partial.json", filepath.Join(folder, "live"), m)
			if err != nil || p != filepath.Join(tmpdir, "popmon-kept-42-partial.json") {
				t.Errorf("kept in %s (%v), want %s", p, err, filepath.Join(tmpdir, "popmon-kept-42-partial.json"))
			}
			// popmon run finds them all, as files of the session.
			kept := FindKept(folder, live)
			if len(kept) != 3 {
				t.Errorf("findKept: %v, want the 3 kept files", kept)
			}
		})
	}
}

// TestPartialWrittenInSession: with room, the partial measurement goes to
// the session folder as before.
func TestPartialWrittenInSession(t *testing.T) {
	folder := filepath.Join(t.TempDir(), ".popmon-session-1")
	os.Mkdir(folder, 0o700)
	p, err := WriteKeeping(folder, "partial.json", filepath.Join(t.TempDir(), "run-1"), testMeasurement(t))
	if err != nil || p != filepath.Join(folder, "partial.json") {
		t.Errorf("written to %s (%v), want the session folder", p, err)
	}
}

// TestReadSessionKept: a measurement the library kept outside the session
// folder is one of the session's: an MPI job's by its name, the only one,
// and findKept takes only regular files of this user (not a link planted
// in /tmp) of this session.
func TestReadSessionKept(t *testing.T) {
	folder := filepath.Join(t.TempDir(), ".popmon-session-9")
	os.Mkdir(folder, 0o700)
	shm := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	kept := partialRun(t, shm, "popmon-kept-9-mpi-host-12.json")
	partialRun(t, shm, "popmon-kept-8-mpi-host-13.json") // another session's
	os.Symlink(kept, filepath.Join(shm, "popmon-kept-9-mpi-host-14.json"))
	found := FindKept(folder, filepath.Join(shm, "run-1"))
	if len(found) != 1 || found[0] != kept {
		t.Fatalf("findKept: %v, want [%s]", found, kept)
	}
	sess, err := Read(folder, 0, found...)
	if err != nil || len(sess.Files) != 1 || !sess.Files[0].MPI || sess.Files[0].Path != kept || len(sess.Files[0].Command) == 0 {
		t.Fatalf("readSession: %+v (%v)", sess, err)
	}
	// Processes without MPI (a script's programs): one is picked, the
	// others' kept files go, as their files in the session folder do.
	short := partialRun(t, shm, "popmon-kept-9-proc-host-20.json")
	child := partialRun(t, shm, "popmon-kept-9-proc-host-21.json")
	if sess, _ = Read(folder, 10, short, child); len(sess.Files) != 1 || sess.Files[0].MPI {
		t.Fatalf("readSession of processes without MPI: %+v", sess)
	}
	if _, err := os.Stat(sess.Files[0].Path); err != nil {
		t.Errorf("the picked file is gone: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(shm, "popmon-kept-9-proc-*")); len(left) != 1 {
		t.Errorf("kept files left: %v, want the picked one", left)
	}
	if sess.Full != "" {
		t.Errorf("full %q with a measurement", sess.Full)
	}
}

// TestKeepUnwrittenSaysWhere: the line of a measurement that could not be
// written names the target, the reason without repeating the path, and the
// kept file; the session folder stays only when the file is in it.
func TestKeepUnwrittenSaysWhere(t *testing.T) {
	var se bytes.Buffer
	var reported []string
	report := func(path string, final bool) {
		if final {
			t.Errorf("the report of a kept file %s is final", path)
		}
		reported = append(reported, path)
		se.WriteString("(report)\n")
	}
	session := t.TempDir()
	p := partialRun(t, t.TempDir(), "popmon-kept-1-partial.json")
	err := &os.PathError{Op: "open", Path: "/full/m.json", Err: syscall.ENOSPC}
	if keepUnwritten(sayTo(&se), report, p, "/full/m.json", err, session) {
		t.Error("a file outside the session folder keeps the session folder")
	}
	want := "(report)\npopmon: cannot write /full/m.json: no space left on device; the measurement was kept in " + p +
		" (move it there with mv once there is room)\n"
	if se.String() != want || len(reported) != 1 || reported[0] != p {
		t.Errorf("stderr:\n%s\nwant the report of %s, then %q", se.String(), p, want)
	}
	if !keepUnwritten(sayTo(&se), nil, filepath.Join(session, "mpi-h-1.json"), "/full/m.json", err, session) {
		t.Error("a file inside the session folder does not keep it")
	}
}

// TestUnwrittenExitCode: popmon run exits 5 when a measurement could not be
// written where asked (or there was no room for any), unless the job
// failed: its own code first. It used to exit 0.
func TestUnwrittenExitCode(t *testing.T) {
	// The exit code cli gives each: 0, 5 (fault.NotWritten), the job's.
	code := func(err error) int {
		var f *fault.Error
		switch kind, _ := fault.KindOf(err); {
		case err == nil:
			return 0
		case kind == fault.NotWritten:
			return 5
		case kind == fault.Job && errors.As(err, &f):
			return f.Code
		}
		return -1
	}
	job := jobStatus{code: 3}.result()
	full := &Result{Full: "the file system of /x is full (0 KiB free)"}
	for _, c := range []struct {
		job                  error
		published, unwritten int
		sess                 *Result
		want                 int
	}{
		{nil, 0, 1, &Result{}, 5},
		{nil, 1, 1, &Result{}, 5},
		{job, 0, 1, &Result{}, 3},
		{nil, 0, 0, full, 5},
		{nil, 1, 0, full, 0},
		{nil, 1, 0, &Result{}, 0},
		{nil, 0, 0, &Result{}, 0},
	} {
		if got := code(unwrittenResult(c.job, c.published, c.unwritten, c.sess)); got != c.want {
			t.Errorf("%+v: exit %d, want %d", c, got, c.want)
		}
	}
}

// TestNothingWrittenOnFullFileSystem: when nothing was written (not even
// kept elsewhere) and the session folder's file system is full, popmon run
// says so instead of asking whether the program called MPI_Finalize.
func TestNothingWrittenOnFullFileSystem(t *testing.T) {
	folder := filepath.Join(fullTmpfs(t), ".popmon-session-5")
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	sess, err := Read(folder, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(sess.Explain("mpirun", nil, 0), "\n")
	if !strings.Contains(lines, fmt.Sprintf("the file system of %s is full", filepath.Dir(folder))) ||
		strings.Contains(lines, "MPI_Finalize") {
		t.Errorf("explain:\n%s", lines)
	}
	if sess, _ := Read(t.TempDir(), 0); sess.Full != "" {
		t.Errorf("a folder with room is full: %q", sess.Full)
	}
}

// TestReadBack: a report of a measurement published to a device or a pipe
// is read from a second name of the source (the device cannot be read
// back, a pipe would wait forever), removed afterwards; a regular target
// is read itself.
func TestReadBack(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "mpi-h-1.json")
	os.WriteFile(src, []byte("{}"), 0o600)
	if view, done := ReadBack(src, filepath.Join(dir, "out.json")); view != "" {
		t.Errorf("a regular target read from %q", view)
	} else {
		done()
	}
	view, done := ReadBack(src, "/dev/null")
	if view == "" || Shown(view, "/dev/null") != view {
		t.Fatalf("no second name for a device target")
	}
	os.Remove(src) // published: the source goes
	if b, err := os.ReadFile(view); err != nil || string(b) != "{}" {
		t.Errorf("second name holds %q, %v", b, err)
	}
	done()
	if _, err := os.Stat(view); err == nil {
		t.Errorf("%s left behind", view)
	}
}

// partialRun copies testdata/partial-aborted.json to dir/name: a partial
// measurement (version 3) of a 2-rank job cut at 2 s after rank 1 called
// MPI_Abort(7): rank 0 U 1 s M 1 s, rank 1 U 2 s (LB 0.75).
func partialRun(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "partial-aborted.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
