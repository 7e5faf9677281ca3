//go:build !linux

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// defaultAction restores sig's default action as far as Go allows.
func defaultAction(sig syscall.Signal) bool {
	signal.Reset(sig)
	return true
}

// raiseSelf sends sig to the process.
func raiseSelf(sig syscall.Signal) {
	_ = syscall.Kill(os.Getpid(), sig)
}
