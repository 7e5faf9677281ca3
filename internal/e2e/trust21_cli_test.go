package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 21: the edges a new user still hits, command line side: how popmon
// run ends when the command crashes, the end-of-job sentence, and recover
// with a session folder it must not trust.

// crashProgram builds a program without MPI that works 300 ms, then dies of
// SIGSEGV (argument segv) or abort() (SIGABRT, a failed assert).
func crashProgram(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "crash.c")
	os.WriteFile(src, []byte(`#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int main(int argc, char **argv)
{
	struct timespec ts = {0, 300000000};
	nanosleep(&ts, NULL);
	if (argc > 1 && strcmp(argv[1], "segv") == 0)
		raise(SIGSEGV);
	abort();
}
`), 0o644)
	bin := filepath.Join(dir, "crash")
	if out, err := exec.Command("cc", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return bin
}

// TestCommandCrashExit: a command that dies of SIGSEGV or SIGABRT ends
// popmon run the same way (a shell sees 139 and 134), without a Go crash
// dump of popmon's (at a9d5b23: exit 2 and a 170-line dump); a program
// without MPI that died of SIGSEGV is said to have, not to have been
// killed (SIGKILL).
func TestCommandCrashExit(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	crash := crashProgram(t)
	for _, tc := range []struct {
		name   string
		argv   []string
		code   int
		detail string
	}{
		{"segv", []string{crash, "segv"}, 139, "the process died of signal 11 (SIGSEGV)"},
		{"abort", []string{crash, "abort"}, 134, "the process died of signal 6 (SIGABRT)"},
		{"shell", []string{"sh", "-c", "kill -SEGV $$"}, 139, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m.json")
			// Through a shell, as a user or a batch script sees it.
			script := popmonBin + " run --format none -o " + out + " -- " + strings.Join(tc.argv, " ")
			if tc.name == "shell" {
				script = popmonBin + " run --format none -o " + out + " -- sh -c 'kill -SEGV $$'"
			}
			so, se, code := runCommand(t, time.Minute, nil, "sh", "-c", script+"; echo status=$?")
			if !strings.Contains(so, fmt.Sprintf("status=%d", tc.code)) {
				t.Errorf("%s: %s, want status=%d\nstderr:\n%s", script, strings.TrimSpace(so), tc.code, se)
			}
			if code != 0 || strings.Contains(se, "goroutine ") || strings.Contains(se, "runtime.") || strings.Count(se, "\n") > 3 {
				t.Errorf("popmon's stderr is more than its own lines (a Go crash dump?):\n%s", se)
			}
			if tc.detail == "" {
				return
			}
			m := readChecked(t, out)
			if m.Partial == nil || m.Partial.Detail != tc.detail {
				t.Errorf("partial %+v, want %q", m.Partial, tc.detail)
			}
		})
	}
}

// rankPID finds the process of rank r of a running job of prog (its
// launcher's rank variable in its environment).
func rankPID(prog string, r int) int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if exe, _ := os.Readlink(filepath.Join(p, "exe")); exe != prog {
			continue
		}
		env, _ := os.ReadFile(filepath.Join(p, "environ"))
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", r) || kv == fmt.Sprintf("PMI_RANK=%d", r) {
				var pid int
				fmt.Sscan(filepath.Base(p), &pid)
				return pid
			}
		}
	}
	return 0
}

// TestKilledRankNamed: rank 0 of 4 SIGKILLed in mid-run. Open MPI then
// terminates the other ranks (SIGTERM, recorded); the partial
// measurement's sentence names rank 0 first (at a9d5b23: "rank 2 was ended
// by SIGTERM first"). MPICH kills the others too (no trace): the sentence
// counts them and says how the launcher ended (at a9d5b23 it did not).
func TestKilledRankNamed(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(examples(t, impl), "imbalance")
			out := filepath.Join(t.TempDir(), "m.json")
			argv := append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, append(launch(impl, 4), prog, "200", "50")...)
			cmd := exec.Command(argv[0], argv[1:]...)
			var se strings.Builder
			cmd.Stderr = &se
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := 0
			for deadline := time.Now().Add(30 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				pid = rankPID(prog, 0)
			}
			if pid == 0 {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("rank 0 never started")
			}
			time.Sleep(1500 * time.Millisecond)
			syscall.Kill(pid, syscall.SIGKILL)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("popmon run did not end\n%s", se.String())
			}
			m := readChecked(t, out)
			if m.Partial == nil {
				t.Fatalf("no partial measurement\n%s", se.String())
			}
			d := m.Partial.Detail
			t.Logf("%s", d)
			// The sentence's subject is the rank named first; another
			// rank may follow as the consequence ("… before rank 1 was
			// ended by …").
			if strings.HasPrefix(d, "0 of") || strings.HasPrefix(d, "rank ") && !strings.HasPrefix(d, "rank 0 ") {
				t.Errorf("sentence %q does not name the killed rank 0 first", d)
			}
			if impl.name == "openmpi" && !strings.HasPrefix(d, "rank 0 was killed first") {
				t.Errorf("sentence %q, want rank 0 named first", d)
			}
			// MPICH's Hydra SIGKILLs the other ranks at once: none is
			// first, and the sentence says how the launcher ended.
			if impl.name == "mpich" && !(strings.Contains(d, "the job was ended by ") && strings.Contains(d, filepath.Base(impl.mpirun))) {
				t.Errorf("sentence %q, want how %s ended", d, filepath.Base(impl.mpirun))
			}
		})
	}
}

// TestLauncherKilledNamed: SIGKILL to mpirun, and `timeout -s KILL` inside
// the command, end the job without a rank recording why; the sentence says
// how the command ended (at a9d5b23: "0 of 4 processes were killed", the
// ranks still running when popmon run assembled).
func TestLauncherKilledNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	for i, impl := range impls(t) {
		for _, how := range []string{"mpirun", "timeout"} {
			if how == "timeout" && i > 0 {
				continue // one MPI is enough for timeout's part
			}
			t.Run(impl.name+"/"+how, func(t *testing.T) {
				np := partialRanks(impl)
				s := &started{out: filepath.Join(t.TempDir(), "p.json")}
				argv := []string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", s.out, "--"}
				if how == "timeout" {
					argv = append(argv, "timeout", "-s", "KILL", "4")
				}
				argv = append(append(argv, launch(impl, np)...), filepath.Join(examples(t, impl), "imbalance"), fmt.Sprint(partialK), "200")
				s.start(t, argv, nil, np, "imbalance")
				defer func() {
					for _, pid := range s.ranks { // orphans of a killed mpirun
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}()
				want := "(SIGKILL) to timeout"
				if how == "mpirun" {
					time.Sleep(1500 * time.Millisecond)
					launcher := childOf(s.cmd.Process.Pid)
					if launcher <= 0 {
						t.Fatal("no launcher under popmon run")
					}
					want = "(SIGKILL) to " + filepath.Base(impl.mpirun)
					syscall.Kill(launcher, syscall.SIGKILL)
				}
				ws := s.wait(t)
				if ws.ExitStatus() != 137 && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
					t.Errorf("popmon run: %v, want to end as the command did (SIGKILL)", ws)
				}
				m := readChecked(t, s.out)
				if m.Partial == nil {
					t.Fatalf("no partial measurement\n%s", s.se.String())
				}
				d := m.Partial.Detail
				t.Logf("%s", d)
				if strings.HasPrefix(d, "0 of") || !strings.Contains(d, want) {
					t.Errorf("sentence %q, want it to say %q", d, want)
				}
			})
		}
	}
}
