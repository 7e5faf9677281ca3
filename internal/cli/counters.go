package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/popmon/popmon/measure"
)

// checkCountersMode validates a --counters value ("" leaves the library's
// default: $POPMON_COUNTERS, else auto).
func checkCountersMode(mode string) error {
	switch mode {
	case "", measure.CountersAuto, measure.CountersOn, measure.CountersOff:
		return nil
	}
	return fail(ExitUsage, "unknown --counters mode %q: use auto, on or off", mode)
}

// countersEnv adds POPMON_COUNTERS for a --counters value to set.
func countersEnv(mode string, set map[string]string) error {
	if err := checkCountersMode(mode); err != nil {
		return err
	}
	if mode != "" {
		set["POPMON_COUNTERS"] = mode
	}
	return nil
}

// counterProbe is what probing perf_event_open the way libpopmon does
// (counters.c) found on this machine.
type counterProbe struct {
	available bool
	method    string // "rdpmc" or "read" when available
	reason    string // when not: the library's reason, "counters unavailable: ..."
	errno     syscall.Errno
	paranoid  string // /proc/sys/kernel/perf_event_paranoid, "" if unknown
	seccomp   bool   // a seccomp filter is active
}

// errnoNames are the names libpopmon writes for perf_event_open errors.
var errnoNames = map[syscall.Errno]string{
	syscall.ENOENT: "ENOENT", syscall.ENODEV: "ENODEV", syscall.EOPNOTSUPP: "EOPNOTSUPP",
	syscall.EACCES: "EACCES", syscall.EPERM: "EPERM", syscall.ENOSYS: "ENOSYS",
	syscall.EINVAL: "EINVAL", syscall.EMFILE: "EMFILE", syscall.ENFILE: "ENFILE",
	syscall.EBUSY: "EBUSY", syscall.ENOMEM: "ENOMEM", syscall.E2BIG: "E2BIG",
	syscall.EBADF: "EBADF", syscall.EIO: "EIO",
}

// countersReason is libpopmon's reason for a perf_event_open error
// (popmon_ctr_reason in shim/counters.c, word for word; a test compares
// them): paranoid is the content of /proc/sys/kernel/perf_event_paranoid
// ("" if unknown), seccomp whether a seccomp filter is active.
func countersReason(err syscall.Errno, paranoid string, seccomp bool) string {
	level, known := 0, false
	if paranoid != "" {
		level, _ = strconv.Atoi(paranoid) // atoi: what does not parse is 0
		known = true
	}
	var what string
	switch err {
	case syscall.ENOENT, syscall.ENODEV, syscall.EOPNOTSUPP:
		what = "the CPU's performance monitoring unit is not exposed here"
	case syscall.EPERM, syscall.EACCES:
		switch {
		case err == syscall.EPERM && seccomp:
			what = "perf_event_open is blocked by a seccomp filter"
		case known && level > 2:
			what = fmt.Sprintf("not permitted: kernel.perf_event_paranoid=%d must be 2 or lower", level)
		case known:
			what = fmt.Sprintf("not permitted, kernel.perf_event_paranoid=%d", level)
		default:
			what = "not permitted"
		}
	case syscall.ENOSYS:
		what = "the kernel has no perf_event support"
		if seccomp {
			what = "perf_event_open is blocked by a seccomp filter"
		}
	case syscall.EINVAL:
		what = "the PMU cannot count cycles and instructions in user space"
	case syscall.EMFILE, syscall.ENFILE:
		what = "too many open files"
	case syscall.EBUSY:
		what = "the PMU is in use by another tool"
	default:
		what = err.Error() // capitalised, as the C library's strerror
		if what != "" {
			what = strings.ToUpper(what[:1]) + what[1:]
		}
	}
	name, ok := errnoNames[err]
	if !ok {
		name = fmt.Sprintf("errno %d", int(err))
	}
	return fmt.Sprintf("counters unavailable: %s (perf_event_open: %s)", what, name)
}

// readParanoid returns /proc/sys/kernel/perf_event_paranoid, trimmed ("" if
// it cannot be read: no perf_event support).
func readParanoid() string {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// seccompFiltered reports whether a seccomp filter is active in this
// process (/proc/self/status "Seccomp: 2"); the measured program runs under
// the same one in a container.
func seccompFiltered() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}

// countersCheck is popmon doctor's line about hardware counters: what the
// library will find, with the library's reason and a fix when counters are
// unavailable.
func countersCheck() check {
	return countersCheckFrom(probeCounters())
}

func countersCheckFrom(p counterProbe) check {
	const what = "hardware counters"
	if p.available {
		detail := "cycles and instructions in user space, read with rdpmc"
		if p.method != "rdpmc" {
			detail = "cycles and instructions in user space, read with the read system call " +
				"(rdpmc is not allowed: each useful/not-useful transition costs a system call)"
		}
		if p.paranoid != "" {
			detail += "; perf_event_paranoid=" + p.paranoid
		}
		return check{ok: true, what: what, detail: detail}
	}
	c := check{ok: true, warn: true, what: what, detail: p.reason + ": no IPC, frequency or instruction metrics"}
	switch {
	case p.seccomp && (p.errno == syscall.EPERM || p.errno == syscall.ENOSYS):
		c.fix = "allow perf_event_open in the container's seccomp profile (docker run --security-opt seccomp=PROFILE, or --cap-add PERFMON)"
	case p.errno == syscall.EACCES || p.errno == syscall.EPERM:
		c.fix = "sysctl kernel.perf_event_paranoid=2 (lets users count their own processes in user space)"
	case p.errno == syscall.ENOENT || p.errno == syscall.ENODEV || p.errno == syscall.EOPNOTSUPP:
		c.fix = "run on bare metal or on a virtual machine that exposes the PMU (a virtual PMU, e.g. QEMU/KVM -cpu host)"
	case p.errno == syscall.EMFILE || p.errno == syscall.ENFILE:
		c.fix = "raise the open-file limit (ulimit -n): each thread needs 2 descriptors"
	}
	return c
}
