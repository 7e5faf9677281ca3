package session

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/live"
)

// jobStatus is how the measured command ended.
type jobStatus struct {
	code   int            // its exit code (0 … 255), when it exited
	signal syscall.Signal // the signal that killed it, 0 when it exited
	// forwarded is the last signal popmon passed on to the job, 0 if none.
	forwarded syscall.Signal
}

// result is the error Run returns for the job's ending: nil for exit 0, a
// fault.Job with its exit code otherwise, or with its signal (popmon then
// ends by the same signal).
func (s jobStatus) result() error { return fault.JobEnded(s.code, s.signal) }

// end is what popmon run saw of the command's ending (pid, its exit
// status, the signal it passed on), for a job whose processes did not all
// say why they ended.
func (s jobStatus) end(pid int, argv []string) live.JobEnd {
	e := live.JobEnd{PID: pid, Signal: int(s.signal), Code: s.code}
	if len(argv) > 0 {
		e.Name = filepath.Base(argv[0])
	}
	if s.forwarded != 0 {
		e.Forwarded = live.SignalName(int(s.forwarded)) + " sent to popmon run"
	}
	return e
}

// forwardedSignals are the signals popmon run passes on to the job.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2}

// waitForwarding waits for cmd, passing on the termination signals popmon
// receives (docs/cli.md, "Signals"). SIGINT and SIGQUIT typed at the
// terminal reach the whole foreground process group, the job included:
// they are passed on only when popmon is not in the terminal's foreground
// (inForeground false: a kill from elsewhere, a batch system), so the job
// never gets them twice (a second SIGINT makes mpirun abort without
// cleaning up).
func waitForwarding(cmd *exec.Cmd, inForeground func() bool) jobStatus {
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
			if (sig == syscall.SIGINT || sig == syscall.SIGQUIT) && inForeground != nil && inForeground() {
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
	return jobStatus{code: 1} // popmon's own failure (exit 1)
}
