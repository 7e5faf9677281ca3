package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/popmon/popmon/internal/fault"
)

// sayTo prints popmon's lines to w as cli does.
func sayTo(w io.Writer) func(string) {
	return func(line string) { fmt.Fprintf(w, "popmon: %s\n", line) }
}

// testJob is a Job of sh -c script, its environment popmon's variables
// added to this process's, its report recorded.
func testJob(t *testing.T, script, output string, reported *[]string) (Job, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	return Job{
		Argv: []string{"sh", "-c", script}, Path: "/bin/sh",
		Stdin: strings.NewReader(""), Stdout: &stderr, Stderr: &stderr, Say: sayTo(&stderr),
		Info: Info{Command: []string{"sh"}, Output: output},
		Environ: func(vars map[string]string) ([]string, []string, error) {
			env := os.Environ()
			for k, v := range vars {
				env = append(env, k+"="+v)
			}
			return env, []string{"sh", "-c", script}, nil
		},
		Report: func(path string, final bool) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("report of %s: %v", path, err)
			}
			*reported = append(*reported, path)
			if final && !bytes.Contains(b, []byte(`"Global"`)) {
				t.Errorf("report of %s: not the measurement", path)
			}
		},
	}, &stderr
}

// TestRunPublishes: the measurement a job writes into its session folder
// ($POPMON_SESSION) is published to -o and reported, the session folder
// goes, and the job's own exit code is Run's fault.
func TestRunPublishes(t *testing.T) {
	dir := t.TempDir()
	src := partialRun(t, t.TempDir(), "m.json")
	out := filepath.Join(dir, "out.json")
	var reported []string
	job, stderr := testJob(t, `cp "$SRC" "$POPMON_SESSION/mpi-h-1.json"; exit 3`, out, &reported)
	t.Setenv("SRC", src)
	err := Run(job)
	var f *fault.Error
	if !errors.As(err, &f) || f.Kind != fault.Job || f.Code != 3 || f.Signal != 0 {
		t.Errorf("Run: %v (%+v), want the job's exit 3", err, f)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("not published: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr.String(), "popmon: measurement written to "+out+"\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if len(reported) != 1 || reported[0] != out {
		t.Errorf("reported %v, want [%s]", reported, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".popmon-session-*")); len(left) != 0 {
		t.Errorf("session folder left: %v", left)
	}
}

// TestRunSaysThroughJob: Run prints none of popmon's lines itself: they
// go through Job.Say, which cli gives (the job's own output still reaches
// Stderr). Without Say, a published run leaves Stderr empty.
func TestRunSaysThroughJob(t *testing.T) {
	dir := t.TempDir()
	src := partialRun(t, t.TempDir(), "m.json")
	out := filepath.Join(dir, "out.json")
	var reported []string
	job, stderr := testJob(t, `cp "$SRC" "$POPMON_SESSION/mpi-h-1.json"; echo job >&2`, out, &reported)
	var said []string
	job.Say = func(line string) { said = append(said, line) }
	t.Setenv("SRC", src)
	if err := Run(job); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if stderr.String() != "job\n" {
		t.Errorf("stderr %q, want the job's line only", stderr)
	}
	if want := []string{"measurement written to " + out}; !reflect.DeepEqual(said, want) {
		t.Errorf("said %q, want %q", said, want)
	}
}

// TestRunNothingWritten: a job that writes nothing and ends by a signal
// gets the lines that say why there is no measurement, and Run's fault
// carries the signal.
func TestRunNothingWritten(t *testing.T) {
	dir := t.TempDir()
	var reported []string
	job, stderr := testJob(t, `kill -TERM $$`, filepath.Join(dir, "out.json"), &reported)
	err := Run(job)
	var f *fault.Error
	if !errors.As(err, &f) || f.Kind != fault.Job || f.Signal != syscall.SIGTERM {
		t.Errorf("Run: %v, want the job's SIGTERM", err)
	}
	if !strings.Contains(stderr.String(), "popmon: no measurement") || len(reported) != 0 {
		t.Errorf("reported %v; stderr:\n%s", reported, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.json")); err == nil {
		t.Error("a measurement was published")
	}
}

// TestRunNotStarted: a program that cannot be executed is fault.NotExec.
func TestRunNotStarted(t *testing.T) {
	var reported []string
	job, _ := testJob(t, "", filepath.Join(t.TempDir(), "out.json"), &reported)
	job.Path = t.TempDir() // a folder
	if kind, _ := fault.KindOf(Run(job)); kind != fault.NotExec {
		t.Errorf("kind %v, want NotExec", kind)
	}
}
