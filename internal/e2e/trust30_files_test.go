package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/pop"
)

// Issue 30, items 2 and 6: what -o names is never destroyed (a device is
// written through, never renamed over), popmon recover uses the
// measurement the library kept outside a full session folder, and the
// sentence for "nothing measured" says what happened.

// devNullScript is run by TestDevNullStaysADevice in a private mount
// namespace: /dev there is a new tmpfs with its own null node (the real
// /dev/null is never at risk) and the real /dev/shm (the live files and
// MPI's shared memory). Each step runs one popmon command and prints one
// line: its name, its exit code, what /dev/null is afterwards and what
// /dev holds; a /dev/null that is no longer a device is made again for
// the next step.
const devNullScript = `set -u
T=$1
mkdir -p "$T/shm" && mount --bind /dev/shm "$T/shm" || exit 90
mount -t tmpfs -o mode=0755,size=1m popmon-e2e-dev /dev || exit 90
mkdir /dev/shm && mount --move "$T/shm" /dev/shm || exit 90
mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 && mknod -m 666 /dev/random c 1 8 &&
	mknod -m 666 /dev/urandom c 1 9 && ln -s /proc/self/fd /dev/fd || exit 90
cd "$T" || exit 90
step() {
	name=$1
	shift
	timeout 60 "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	rc=$?
	echo "step $name rc=$rc null=$(stat -c %F /dev/null | tr ' ' _) dev=$(ls -A /dev | tr '\n' ,)"
	[ -c /dev/null ] || { rm -f /dev/null; mknod -m 666 /dev/null c 1 3; }
}
. "$T/steps.sh"
`

// TestDevNullStaysADevice: `-o /dev/null` (with and without --force) of
// popmon report, popmon run and popmon recover, as root, used to rename a
// temporary file over /dev/null, which became a regular file. Now the
// bytes go through the device, which stays a character device, and
// nothing else appears in /dev.
func TestDevNullStaysADevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a private mount namespace with its own /dev")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare (util-linux) for a private mount namespace")
	}
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "true").CombinedOutput(); err != nil {
		t.Skipf("unshare --mount is not permitted here: %v %s", err, strings.TrimSpace(string(out)))
	}
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			T := t.TempDir()
			os.Mkdir(filepath.Join(T, "k"), 0o755)
			job := strings.Join(append(launch(impl, 2), filepath.Join(dir, "imbalance"), "20", "2"), " ")
			run := popmonBin + " run --format none --mpicc " + impl.mpicc
			in := filepath.Join(repoRoot, "measure", "testdata", "mpi_imbalance.json")
			steps := []string{
				fmt.Sprintf("step report-force %s report -o /dev/null --force %s", popmonBin, in),
				fmt.Sprintf("step report %s report -o /dev/null %s", popmonBin, in),
				// The report is printed all the same (read from the
				// session's copy: a device cannot be read back).
				fmt.Sprintf("step run-force %s run --mpicc %s -o /dev/null --force -- %s", popmonBin, impl.mpicc, job),
				// A pipe with a reader gets the measurement, and
				// popmon run does not wait on reading it back.
				fmt.Sprintf("mkfifo %s/pipe && { timeout 60 cat %s/pipe >%s/pipe.got 2>/dev/null </dev/null & }", T, T, T),
				fmt.Sprintf("step run-pipe %s -o %s/pipe -- %s", run, T, job),
				// popmon run killed once its job finished leaves its
				// session folder, with the job's measurement, to recover.
				fmt.Sprintf("step killed %s -o %s/k/m.json -- sh -c '%s; kill -KILL $PPID'", run, T, job),
				fmt.Sprintf("step recover-force %s recover -o /dev/null --force %s/k/.popmon-session-*", popmonBin, T),
			}
			if err := os.WriteFile(filepath.Join(T, "steps.sh"), []byte(strings.Join(steps, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			so, se, code := runCommand(t, 4*time.Minute, nil, "unshare", "--mount", "--propagation", "private",
				"sh", "-c", devNullScript, "sh", T)
			if code == 90 {
				t.Skipf("cannot make a private /dev in the namespace:\n%s", se)
			}
			if code != 0 {
				t.Fatalf("the namespace's script: exit %d\n%s%s", code, so, se)
			}
			const dev = "fd,null,random,shm,urandom,zero,"
			want := map[string]int{"report-force": 0, "report": 0, "run-force": 0, "run-pipe": 0, "killed": 137, "recover-force": 0}
			line := regexp.MustCompile(`(?m)^step (\S+) rc=(\d+) null=(\S+) dev=(\S*)$`)
			seen := 0
			for _, m := range line.FindAllStringSubmatch(so, -1) {
				name, rc, null, ls := m[1], m[2], m[3], m[4]
				seen++
				errs, _ := os.ReadFile(filepath.Join(T, name+".err"))
				if fmt.Sprint(want[name]) != rc {
					t.Errorf("%s: exit %s, want %d\n%s", name, rc, want[name], errs)
				}
				if null != "character_special_file" {
					t.Errorf("%s: /dev/null is now a %s, not a character device\n%s", name, strings.ReplaceAll(null, "_", " "), errs)
				}
				if ls != dev {
					t.Errorf("%s: /dev holds %s, want %s (nothing new)", name, ls, dev)
				}
				if name == "run-force" || name == "recover-force" {
					if !strings.Contains(string(errs), "popmon: measurement written to /dev/null\n") {
						t.Errorf("%s: no line saying the measurement went to /dev/null:\n%s", name, errs)
					}
					if !strings.Contains(string(errs), "Load Balance") {
						t.Errorf("%s: no report:\n%s", name, errs)
					}
				}
			}
			if seen != len(want) {
				t.Errorf("%d steps ran, want %d:\n%s%s", seen, len(want), so, se)
			}
			if left, _ := filepath.Glob(filepath.Join(T, "*", ".popmon-session-*")); len(left) != 0 {
				t.Errorf("session folders left: %v", left)
			}
			if left, _ := filepath.Glob(filepath.Join(T, ".popmon-session-*")); len(left) != 0 {
				t.Errorf("session folders left: %v", left)
			}
			if m := readChecked(t, filepath.Join(T, "pipe.got")); len(m.Processes) != 2 {
				t.Errorf("the pipe's reader got a measurement of %d processes, want 2", len(m.Processes))
			}
		})
	}
}

// smallFolder mounts a 64 KiB tmpfs on a new folder: room for a session
// folder and its small files, not for much more. Skipped where mounting
// is not permitted.
func smallFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a small file system needs a tmpfs, and mounting one is not permitted here: %v %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

var keptByLibrary = regexp.MustCompile(`No space left on device; the measurement was kept in (\S+)\n`)

// TestRecoverUsesKept: the job finished while its session folder's file
// system was full, so the library kept the whole measurement in
// /dev/shm/popmon-UID; popmon run was killed before it could publish it.
// popmon recover used to ignore the kept file and publish a partial
// measurement from the live files ("killed"); now it publishes the kept
// one, complete, and says where it came from.
func TestRecoverUsesKept(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			small := smallFolder(t)
			filler := filepath.Join(small, "filler")
			job := strings.Join(append(launch(impl, 2), filepath.Join(dir, "imbalance"), "50", "4"), " ")
			// The file system fills once popmon run has made its session
			// folder; popmon run dies once the job ended.
			script := fmt.Sprintf("cat /dev/zero > %s 2>/dev/null; %s; kill -KILL $PPID", filler, job)
			_, se, _ := popmon(t, nil, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", filepath.Join(small, "m.json"),
				"--", "sh", "-c", script)
			m := keptByLibrary.FindStringSubmatch(se)
			if m == nil {
				t.Fatalf("the library did not keep the measurement:\n%s", se)
			}
			kept := m[1]
			t.Cleanup(func() { os.Remove(kept) })
			sessions, _ := filepath.Glob(filepath.Join(small, ".popmon-session-*"))
			if len(sessions) != 1 {
				t.Fatalf("session folders %v, want the one popmon run left", sessions)
			}
			os.Remove(filler) // room again
			_, se, code := popmon(t, nil, "recover", "--format", "none", sessions[0])
			if code != 0 {
				t.Fatalf("recover: exit %d\n%s", code, se)
			}
			if want := "popmon: the job finished; its measurement was kept in " + kept; !strings.Contains(se, want) {
				t.Errorf("recover did not say it used the kept measurement (%q):\n%s", want, se)
			}
			out := filepath.Join(small, "m.json")
			meas := readChecked(t, out)
			if meas.Partial != nil || meas.MPI == nil || len(meas.Processes) != 2 {
				t.Fatalf("recovered measurement: partial %+v, MPI %v, %d processes; want the whole job of 2",
					meas.Partial, meas.MPI != nil, len(meas.Processes))
			}
			rep := compute(t, meas, pop.ModelTALP)
			near(t, "recovered load balance", value(t, rep, "Global", "mpi_load_balance"), 0.75, effTol)
			if _, err := os.Stat(kept); err == nil {
				t.Errorf("the kept file %s is still there", kept)
			}
			if _, err := os.Stat(sessions[0]); err == nil {
				t.Errorf("recover left the session folder")
			}
		})
	}
}

// TestNeverStartedOnSmallFileSystem: on a small file system (60 KiB free)
// a job whose program never started used to get "the file system … is
// full … (its line above says why)" with no such line, and exit 5. Now no
// process having started measuring, the sentence says so, and the exit
// code is the job's.
func TestNeverStartedOnSmallFileSystem(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			small := smallFolder(t)
			out := filepath.Join(small, "m.json")
			cases := []struct {
				name string
				argv []string
				code int // -1: any but 0 and 5
			}{
				{"missing program", append(launch(impl, 2), filepath.Join(small, "missing")), -1},
				{"utility only", []string{"true"}, 0},
			}
			for _, c := range cases {
				_, se, code := popmon(t, nil, append([]string{"run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, c.argv...)...)
				if (c.code == -1 && (code == 0 || code == 5)) || (c.code >= 0 && code != c.code) {
					t.Errorf("%s: exit %d, want %d (-1: the job's failure)\n%s", c.name, code, c.code, se)
				}
				if strings.Contains(se, "is full") || strings.Contains(se, "line above") {
					t.Errorf("%s: blamed on the file system:\n%s", c.name, se)
				}
				if want := "popmon: no measurement was written: no process that " + c.argv[0] + " started was measured"; !strings.Contains(se, want) {
					t.Errorf("%s: no line %q:\n%s", c.name, want, se)
				}
			}
		})
	}
}

// TestDisableNamed: POPMON_DISABLE=1 in the environment used to end popmon
// run with the generic "did the program call MPI_Finalize?"; now popmon
// run ends, and popmon exec's rank 0 starts, with one line naming it.
func TestDisableNamed(t *testing.T) {
	const line = "POPMON_DISABLE=1 is set in the environment: it switches popmon's measurement off in every process"
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			env := []string{"POPMON_DISABLE=1"}
			prog := []string{filepath.Join(dir, "imbalance"), "20", "2"}
			_, _, se, code := runPopmon(t, env, []string{"--mpicc", impl.mpicc}, append(launch(impl, 2), prog...)...)
			if code != 0 || strings.Count(se, line) != 1 || strings.Contains(se, "MPI_Finalize") {
				t.Errorf("popmon run: exit %d, want 0 and one line %q:\n%s", code, line, se)
			}
			argv := append(append(launch(impl, 2), popmonBin, "exec", "--mpicc", impl.mpicc, "--"), prog...)
			_, se, code = runCommand(t, 2*time.Minute, env, argv...)
			if code != 0 || strings.Count(se, "popmon: "+line) != 1 {
				t.Errorf("popmon exec: exit %d, want 0 and one line %q:\n%s", code, line, se)
			}
		})
	}
}

// TestExecPipeWithoutReader: popmon exec -o PIPE, where no process reads
// the pipe: rank 0's library used to wait at the exit forever on opening
// it (with --force; without, popmon exec refused the existing name). Now
// the pipe needs no --force and, unread, the measurement is kept in
// $TMPDIR with one line.
func TestExecPipeWithoutReader(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			tmp := t.TempDir()
			pipe := filepath.Join(t.TempDir(), "pipe")
			if err := syscall.Mkfifo(pipe, 0o600); err != nil {
				t.Skipf("no named pipes here: %v", err)
			}
			argv := append(append(launch(impl, 2), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", pipe, "--"),
				filepath.Join(dir, "imbalance"), "20", "2")
			_, se, code := runCommand(t, time.Minute, []string{"TMPDIR=" + tmp}, argv...)
			if code != 0 {
				t.Fatalf("exit %d (-1: it hung)\n%s", code, se)
			}
			kept := filepath.Join(tmp, "popmon-kept-pipe")
			if want := "popmon: cannot write the measurement file " + pipe + ": no process reads the pipe; the measurement was kept in " + kept; !strings.Contains(se, want) {
				t.Fatalf("no line %q:\n%s", want, se)
			}
			if m := readChecked(t, kept); len(m.Processes) != 2 {
				t.Errorf("kept measurement of %d processes, want 2", len(m.Processes))
			}
			if fi, err := os.Lstat(pipe); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%s is no longer a pipe", pipe)
			}
		})
	}
}
