package cli

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCountersReasonMatchesLibrary: popmon doctor says word for word what
// libpopmon writes in the measurement file (shim/counters.c,
// popmon_ctr_reason), for every errno it names.
func TestCountersReasonMatchesLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	shim := filepath.Join("..", "..", "shim")
	bin := filepath.Join(t.TempDir(), "counters_test")
	if out, err := exec.Command("cc", "-std=c11", "-D_GNU_SOURCE", "-DPOPMON_COUNTERS_TEST", "-I", shim,
		filepath.Join(shim, "counters.c"), filepath.Join(shim, "test", "counters_test.c"), "-lpthread", "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("building the C test: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "reasons").Output()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]syscall.Errno{}
	for e, name := range errnoNames {
		byName[name] = e
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("too few reasons:\n%s", out)
	}
	for _, line := range lines {
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 {
			t.Fatalf("bad line %q", line)
		}
		e, ok := byName[f[0]]
		if !ok {
			t.Fatalf("errno %s unknown to the Go side", f[0])
		}
		if got := countersReason(e, f[1], f[2] == "1"); got != f[3] {
			t.Errorf("%s paranoid=%q seccomp=%s:\n Go: %s\n  C: %s", f[0], f[1], f[2], got, f[3])
		}
	}
}

func TestCountersReason(t *testing.T) {
	tests := []struct {
		err      syscall.Errno
		paranoid string
		seccomp  bool
		want     string
	}{
		{syscall.ENOENT, "2", false, "counters unavailable: the CPU's performance monitoring unit is not exposed here (perf_event_open: ENOENT)"},
		{syscall.EACCES, "4", false, "counters unavailable: not permitted: kernel.perf_event_paranoid=4 must be 2 or lower (perf_event_open: EACCES)"},
		{syscall.EPERM, "2", true, "counters unavailable: perf_event_open is blocked by a seccomp filter (perf_event_open: EPERM)"},
		{syscall.ENOSYS, "", false, "counters unavailable: the kernel has no perf_event support (perf_event_open: ENOSYS)"},
		{syscall.ESRCH, "2", false, "counters unavailable: No such process (perf_event_open: errno 3)"},
	}
	for _, tt := range tests {
		if got := countersReason(tt.err, tt.paranoid, tt.seccomp); got != tt.want {
			t.Errorf("countersReason(%v, %q, %v) = %q, want %q", tt.err, tt.paranoid, tt.seccomp, got, tt.want)
		}
	}
}

func TestCountersMode(t *testing.T) {
	tests := []struct {
		mode    string
		env     string // POPMON_COUNTERS set, "" none
		wantErr bool
	}{
		{"", "", false},
		{"auto", "auto", false},
		{"on", "on", false},
		{"off", "off", false},
		{"yes", "", true},
	}
	for _, tt := range tests {
		set := map[string]string{}
		err := countersEnv(tt.mode, set)
		if (err != nil) != tt.wantErr {
			t.Errorf("countersEnv(%q) error %v, want error %v", tt.mode, err, tt.wantErr)
		}
		var ee *exitError
		if err != nil && (!errors.As(err, &ee) || ee.code != ExitUsage) {
			t.Errorf("countersEnv(%q): %v is not a usage error", tt.mode, err)
		}
		if set["POPMON_COUNTERS"] != tt.env {
			t.Errorf("countersEnv(%q) sets POPMON_COUNTERS=%q, want %q", tt.mode, set["POPMON_COUNTERS"], tt.env)
		}
	}
}

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

// TestProbeCounters replaces the system call: the attributes are the
// library's (user-space cycles leading the group, then instructions) and a
// failure gives the library's reason.
func TestProbeCounters(t *testing.T) {
	saved := perfEventOpen
	defer func() { perfEventOpen = saved }()
	var attrs []perfEventAttr
	var groups []int
	perfEventOpen = func(attr *perfEventAttr, group int) (int, syscall.Errno) {
		attrs = append(attrs, *attr)
		groups = append(groups, group)
		return -1, syscall.ENOENT
	}
	p := probeCounters()
	if p.available || p.errno != syscall.ENOENT || !strings.HasPrefix(p.reason, "counters unavailable: the CPU's performance monitoring unit") {
		t.Errorf("probe %+v", p)
	}
	if len(attrs) != 1 || attrs[0].Type != perfTypeHardware || attrs[0].Config != perfCountHWCPUCycles || groups[0] != -1 ||
		attrs[0].Size != 64 || attrs[0].Flags != attrBit(perfAttrBitExcludeKernel)|attrBit(perfAttrBitExcludeHV) ||
		attrs[0].ReadFormat != perfFormatGroup|perfFormatTotalEnabled|perfFormatTotalRunning {
		t.Errorf("first perf_event_open: %+v group %v", attrs, groups)
	}

	// Both open: the second joins the first's group; descriptors closed.
	attrs, groups = nil, nil
	perfEventOpen = func(attr *perfEventAttr, group int) (int, syscall.Errno) {
		attrs = append(attrs, *attr)
		groups = append(groups, group)
		return -1 - len(attrs), 0 // invalid descriptors: Close and Mmap fail harmlessly
	}
	p = probeCounters()
	if !p.available || p.method != "read" || len(attrs) != 2 || attrs[1].Config != perfCountHWInstructions || groups[1] != -2 {
		t.Errorf("probe %+v, attrs %+v, groups %v", p, attrs, groups)
	}
}

func TestAttrBit(t *testing.T) {
	// x86 and arm64 are little-endian: bit fields fill from bit 0.
	if got := attrBit(5); got != 1<<5 && got != 1<<58 {
		t.Errorf("attrBit(5) = %#x", got)
	}
}
