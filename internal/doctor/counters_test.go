package doctor

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
)

func TestCountersCheck(t *testing.T) {
	tests := []struct {
		name   string
		probe  counterProbe
		warn   bool
		detail string
		fix    string
	}{
		{"rdpmc", counterProbe{available: true, method: "rdpmc", paranoid: "2"}, false,
			"cycles and instructions in user space, read with rdpmc; perf_event_paranoid=2", ""},
		{"read", counterProbe{available: true, method: "read"}, false, "read with the read system call (rdpmc is not allowed", ""},
		{"no PMU", counterProbe{errno: syscall.ENOENT, reason: "R"}, true, "R: no IPC, frequency or instruction metrics", "bare metal"},
		{"paranoid", counterProbe{errno: syscall.EACCES, reason: "R"}, true, "R", "perf_event_paranoid=2"},
		{"seccomp", counterProbe{errno: syscall.EPERM, seccomp: true, reason: "R"}, true, "R", "seccomp profile"},
		{"not checked", counterProbe{err: errors.New("E")}, true, "not checked: E", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := countersCheckFrom(tt.probe)
			if !c.ok || c.warn != tt.warn || !strings.Contains(c.detail, tt.detail) || !strings.Contains(c.fix, tt.fix) {
				t.Errorf("check %+v, want warn %v, detail ~%q, fix ~%q", c, tt.warn, tt.detail, tt.fix)
			}
		})
	}
}

// TestParseCounterProbe reads what the library's counter probe prints
// (shim/counters.c, popmon_counters_probe).
func TestParseCounterProbe(t *testing.T) {
	p := parseCounterProbe("counters_available=0\ncounters_reason=counters unavailable: not permitted, kernel.perf_event_paranoid=2 (perf_event_open: EACCES)\n" +
		"counters_errno=13\nperf_event_paranoid=2\nseccomp=1\n")
	if p.err != nil || p.available || p.errno != syscall.EACCES || !p.seccomp || p.paranoid != "2" ||
		p.reason != "counters unavailable: not permitted, kernel.perf_event_paranoid=2 (perf_event_open: EACCES)" {
		t.Errorf("unavailable: %+v", p)
	}
	p = parseCounterProbe("counters_available=1\ncounters_method=rdpmc\nperf_event_paranoid=\nseccomp=0\n")
	if p.err != nil || !p.available || p.method != "rdpmc" || p.paranoid != "" || p.seccomp {
		t.Errorf("available: %+v", p)
	}
	if p := parseCounterProbe(""); p.err == nil {
		t.Errorf("a silent probe is not an error: %+v", p)
	}
	if p := probeCounters(context.Background(), ""); p.err == nil || !strings.Contains(p.err.Error(), "could not be built") {
		t.Errorf("no library: %+v", p)
	}
}
