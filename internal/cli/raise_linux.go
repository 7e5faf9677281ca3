package cli

import (
	"syscall"
	"unsafe"
)

// kernelSigaction is the kernel's struct sigaction of rt_sigaction(2) on
// Linux (x86-64, arm64 and the other architectures with sa_restorer).
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// defaultAction gives sig its default action for the whole process,
// beneath Go's runtime: signal.Reset alone leaves the runtime's handler in
// place, and the runtime turns SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
// SIGQUIT, SIGTRAP and SIGSYS into a crash dump of popmon's goroutines.
// No core file is written for popmon (the command's own core, if it left
// one in the folder, must not be overwritten by popmon's). Returns whether
// the action was set.
func defaultAction(sig syscall.Signal) bool {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	act := kernelSigaction{} // SIG_DFL, no flags, empty mask
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return false
	}
	// Unblock it in this thread, which raises it.
	set := uint64(1) << (uint(sig) - 1)
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	return true
}

// raiseSelf sends sig to the calling thread.
func raiseSelf(sig syscall.Signal) {
	_ = syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig)
}
