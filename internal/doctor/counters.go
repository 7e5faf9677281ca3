package doctor

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
)

// counterProbe is what the built library's counter probe
// (POPMON_COUNTERS_PROBE, shim/counters.c popmon_counters_probe) found on
// this machine: the library opens its counter group itself, so the reason
// is the one it records in measurement files, from one source.
type counterProbe struct {
	available bool
	method    string // "rdpmc" or "read" when available
	reason    string // when not: the library's reason, "counters unavailable: ..."
	errno     syscall.Errno
	paranoid  string // /proc/sys/kernel/perf_event_paranoid, "" if unknown
	seccomp   bool   // a seccomp filter is active
	err       error  // the probe could not run: no library, or it failed
}

// probeCounters runs the built library's counter probe: true with the
// library preloaded and POPMON_COUNTERS_PROBE=1, which prints key=value
// lines. lib "" (no library could be built) is not probed: the check says
// so rather than guess what the library would find.
func probeCounters(ctx context.Context, lib string) counterProbe {
	if lib == "" {
		return counterProbe{err: errors.New("the measurement library could not be built (it probes them)")}
	}
	out, err := runLibraryProbe(ctx, lib, "POPMON_COUNTERS_PROBE", "counter")
	if err != nil {
		return counterProbe{err: err}
	}
	return parseCounterProbe(out)
}

// parseCounterProbe reads the counter probe's key=value lines.
func parseCounterProbe(out string) counterProbe {
	var p counterProbe
	seen := false
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k {
		case "counters_available":
			p.available, seen = v == "1", true
		case "counters_method":
			p.method = v
		case "counters_reason":
			p.reason = v
		case "counters_errno":
			n, _ := strconv.Atoi(v)
			p.errno = syscall.Errno(n)
		case "perf_event_paranoid":
			p.paranoid = v
		case "seccomp":
			p.seccomp = v == "1"
		}
	}
	if !seen {
		p.err = errors.New("the library's counter probe said nothing (a library without one?)")
	}
	return p
}

// countersCheck is popmon doctor's line about hardware counters: what the
// library lib finds, with its reason and a fix when counters are
// unavailable.
func countersCheck(ctx context.Context, lib string) check {
	return countersCheckFrom(probeCounters(ctx, lib))
}

func countersCheckFrom(p counterProbe) check {
	const what = "hardware counters"
	if p.err != nil {
		return check{ok: true, warn: true, what: what, detail: "not checked: " + p.err.Error()}
	}
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
