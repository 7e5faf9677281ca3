package cli

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"

	"github.com/popmon/popmon/internal/fault"
)

// TestExitCode: the one mapping of fault kinds to popmon's exit codes
// (docs/cli.md), a fault wrapped by a package below included.
func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		sig  syscall.Signal
	}{
		{errors.New("plain"), ExitFailure, 0},
		{fault.Failf("x"), ExitFailure, 0},
		{fault.Usagef("x"), ExitUsage, 0},
		{fault.Silent(fault.Usage), ExitUsage, 0},
		{fmt.Errorf("wrapped: %w", fault.Envf("x")), ExitEnv, 0},
		{fault.Inputf("x"), ExitInput, 0},
		{fault.Silent(fault.NotWritten), ExitNotWritten, 0},
		{fault.NotRunnable(exec.ErrNotFound, "x"), ExitNotFound, 0},
		{fault.NotRunnable(errors.New("exec format error"), "x"), ExitNotExec, 0},
		{fault.JobEnded(3, 0), 3, 0},
		{fault.JobEnded(0, syscall.SIGTERM), 128 + 15, syscall.SIGTERM},
	} {
		if code, sig := exitCode(c.err); code != c.code || sig != c.sig {
			t.Errorf("%v: exit %d, signal %d; want %d, %d", c.err, code, sig, c.code, c.sig)
		}
	}
	if fault.JobEnded(0, 0) != nil {
		t.Error("a job that exited 0 is an error")
	}
}
