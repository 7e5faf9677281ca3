package cli

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/term"
)

// jobStatus is how the measured command ended.
type jobStatus struct {
	code   int            // its exit code (0 … 255), when it exited
	signal syscall.Signal // the signal that killed it, 0 when it exited
	// forwarded is the last signal popmon passed on to the job, 0 if none.
	forwarded syscall.Signal
}

// result is the error runCmd returns for the job's ending: nil for exit 0,
// its exit code otherwise, or its signal (popmon then ends by the same
// signal, see Env.Raise).
func (s jobStatus) result() error { return fault.JobEnded(s.code, s.signal) }

// forwardedSignals are the signals popmon run passes on to the job.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2}

// waitForwarding waits for cmd, passing on the termination signals popmon
// receives (docs/cli.md, "Signals"). SIGINT and SIGQUIT typed at the
// terminal reach the whole foreground process group, the job included:
// they are passed on only when popmon is not in the terminal's foreground
// (a kill from elsewhere, a batch system), so the job never gets them
// twice (a second SIGINT makes mpirun abort without cleaning up).
func waitForwarding(cmd *exec.Cmd) jobStatus {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var forwarded syscall.Signal
	for {
		select {
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			if (sig == syscall.SIGINT || sig == syscall.SIGQUIT) && term.InForeground() {
				forwarded = sig // the job got it from the terminal
				continue
			}
			forwarded = sig
			_ = cmd.Process.Signal(s)
		case err := <-done:
			st := exitStatus(err)
			st.forwarded = forwarded
			return st
		}
	}
}

func exitStatus(err error) jobStatus {
	if err == nil {
		return jobStatus{}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return jobStatus{signal: ws.Signal()}
		}
		return jobStatus{code: ee.ExitCode()}
	}
	return jobStatus{code: ExitFailure}
}

// raiseSignal ends popmon by sig, as the job ended, so that a shell or batch
// system sees the same ending (a script's `trap`, `$?` of 130 for SIGINT,
// 139 for SIGSEGV, 134 for SIGABRT), without a dump of popmon's own (no Go
// crash dump, no core file); it returns only when sig does not end the
// process, and Main then exits with 128 + sig.
func raiseSignal(sig syscall.Signal) {
	signal.Reset(sig)
	if !defaultAction(sig) {
		return
	}
	runtime.LockOSThread()
	raiseSelf(sig)
	// A signal whose default action is to ignore it (SIGCHLD, SIGURG) or
	// to stop (SIGTSTP: resumed later) returns here.
	time.Sleep(100 * time.Millisecond)
}
