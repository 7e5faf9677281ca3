package cli

import (
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

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
