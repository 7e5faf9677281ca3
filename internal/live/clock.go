package live

import (
	"syscall"
	"unsafe"
)

// MonotonicNS returns CLOCK_MONOTONIC in nanoseconds: the clock of the
// live files' t0_ns and of libpopmon's conversions.
func MonotonicNS() int64 {
	var ts syscall.Timespec
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		return 0
	}
	return ts.Sec*1e9 + ts.Nsec
}

// clockNow returns the process's clock (ticks) and CLOCK_MONOTONIC at this
// moment, read together.
func clockNow(tsc bool) (tick uint64, ns int64) {
	if tsc && haveTSC {
		t := rdtsc()
		return t, MonotonicNS()
	}
	ns = MonotonicNS()
	return uint64(ns), ns
}
