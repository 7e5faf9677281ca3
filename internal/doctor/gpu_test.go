package doctor

import (
	"errors"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/report"
)

func TestGPUCheck(t *testing.T) {
	tests := []struct {
		name, probe string
		warn        bool
		want        []string
	}{
		{name: "no driver", probe: "libcuda=\ncupti=\ncupti_tried=libcupti.so\ninjection=\n",
			want: []string{"no CUDA driver (libcuda.so.1 not found)"}},
		{name: "no cupti", probe: "libcuda=/usr/lib/libcuda.so.1\ndriver_version=12040\ncupti=\ncupti_tried=libcupti.so\ncupti_tried=libcupti.so.13\ninjection=\n",
			warn: true, want: []string{"CUDA 12.4", "no CUPTI library found (tried libcupti.so, libcupti.so.13)"}},
		{name: "measured", probe: "libcuda=/usr/lib/libcuda.so.1\ndriver_version=13000\ncupti=/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13\ncupti_version=130001\ninjection=\n",
			want: []string{"CUDA 13.0", "CUPTI /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 (API version 130001)", "GPU metrics are measured"}},
		{name: "taken", probe: "libcuda=/usr/lib/libcuda.so.1\ncupti=/x/libcupti.so\ninjection=/opt/nsys/libToolsInjection64.so\n",
			warn: true, want: []string{"CUDA_INJECTION64_PATH is already set to /opt/nsys/libToolsInjection64.so"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := gpuCheck(parseGPUProbe(tc.probe))
			if !c.ok || c.warn != tc.warn {
				t.Errorf("ok=%v warn=%v, want ok, warn=%v", c.ok, c.warn, tc.warn)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.detail, w) {
					t.Errorf("detail %q lacks %q", c.detail, w)
				}
			}
		})
	}
}

// TestROCmCheck feeds stand-in probe outputs (the library's ROCm keys)
// to popmon doctor's ROCm line.
func TestROCmCheck(t *testing.T) {
	const cuda = "libcuda=\ncupti=\ncupti_tried=libcupti.so\ninjection=\n"
	tests := []struct {
		name, probe string
		line        bool // a ROCm line at all
		warn        bool
		want        []string
		fix         string
	}{
		{name: "library before AMD support", probe: cuda},
		{name: "no HIP runtime", probe: cuda + "hip_runtime=\nhip_runtime_version=0\nrocprofiler_sdk=\nrocprofiler_sdk_version=0\nrocp_tool_libraries=\n",
			line: true, want: []string{"no HIP runtime (libamdhip64.so not found)"}},
		{name: "HIP without rocprofiler-sdk", probe: cuda + "hip_runtime=/opt/rocm/lib/libamdhip64.so.6\nhip_runtime_version=60241134\nrocprofiler_sdk=\nrocprofiler_sdk_version=0\nrocp_tool_libraries=\n",
			line: true, warn: true, want: []string{"HIP runtime /opt/rocm/lib/libamdhip64.so.6 (HIP 6.2.41134)", "no rocprofiler-sdk found", "no AMD GPU metrics"},
			fix: "install rocprofiler-sdk (ROCm 6.2 or newer"},
		{name: "HIP too old for rocprofiler-sdk", probe: "hip_runtime=/opt/rocm-6.1.0/lib/libamdhip64.so\nhip_runtime_version=60140092\nrocprofiler_sdk=\n",
			line: true, warn: true, want: []string{"(HIP 6.1.40092)", "no AMD GPU metrics"}, fix: "use ROCm 6.2 or newer (HIP 6.1.40092 predates rocprofiler-sdk)"},
		{name: "measured", probe: cuda + "hip_runtime=/opt/rocm/lib/libamdhip64.so.6\nhip_runtime_version=60443482\nrocprofiler_sdk=/opt/rocm/lib/librocprofiler-sdk.so.0\nrocprofiler_sdk_version=600\nrocp_tool_libraries=/cache/libpopmon.so\n",
			line: true, warn: !report.AMDValidated,
			want: []string{"HIP 6.4.43482", "rocprofiler-sdk /opt/rocm/lib/librocprofiler-sdk.so.0 (0.6.0)", "AMD GPU metrics are measured (--gpu auto)"}},
		{name: "another rocprofiler-sdk tool", probe: "hip_runtime=/opt/rocm/lib/libamdhip64.so.6\nrocprofiler_sdk=/opt/rocm/lib/librocprofiler-sdk.so.0\nrocp_tool_libraries=/opt/rocm/lib/rocprofiler-sdk/librocprofiler-sdk-tool.so:/cache/libpopmon.so\n",
			line: true, warn: !report.AMDValidated,
			want: []string{"ROCP_TOOL_LIBRARIES also loads /opt/rocm/lib/rocprofiler-sdk/librocprofiler-sdk-tool.so, which measures alongside popmon"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, line := rocmCheck(parseGPUProbe(tc.probe))
			if line != tc.line {
				t.Fatalf("line = %v, want %v (%+v)", line, tc.line, c)
			}
			if !line {
				return
			}
			if !c.ok || c.warn != tc.warn || c.what != "GPU (ROCm)" {
				t.Errorf("ok=%v warn=%v what=%q, want ok, warn=%v, GPU (ROCm)", c.ok, c.warn, c.what, tc.warn)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.detail, w) {
					t.Errorf("detail %q lacks %q", c.detail, w)
				}
			}
			if !strings.HasPrefix(c.fix, tc.fix) {
				t.Errorf("fix %q, want it to start with %q", c.fix, tc.fix)
			}
			// Honesty: a found HIP runtime says AMD is not validated
			// until it is.
			if found := strings.HasPrefix(c.detail, "HIP runtime") && !strings.Contains(c.detail, "no rocprofiler-sdk"); found &&
				strings.Contains(c.detail, report.AMDNotValidated) == report.AMDValidated {
				t.Errorf("detail %q and AMDValidated %v disagree", c.detail, report.AMDValidated)
			}
		})
	}
	if c, line := rocmCheck(gpuProbe{err: errors.New("boom")}); !line || !c.warn || !strings.Contains(c.detail, "not checked: boom") {
		t.Errorf("probe error: %+v", c)
	}
	// The CUDA line is unchanged by the ROCm keys.
	c := gpuCheck(parseGPUProbe("libcuda=\nhip_runtime=/opt/rocm/lib/libamdhip64.so\n"))
	if !strings.Contains(c.detail, "no CUDA driver") {
		t.Errorf("CUDA line with ROCm keys: %q", c.detail)
	}
}

// TestGPUCountersCheck: popmon doctor's device-counter line from the
// probe's keys: no line without CUPTI or from a library that does not say;
// a CUPTI without PM sampling, and profiling restricted to administrators
// for a user who is not one, each with its fix.
func TestGPUCountersCheck(t *testing.T) {
	const base = "libcuda=/usr/lib/libcuda.so.1\ndriver_version=13000\ncupti=/x/libcupti.so\ncupti_version=130001\ninjection=\n"
	for _, tc := range []struct {
		name, probe string
		line, warn  bool
		want        string
	}{
		{"no cupti", "libcuda=/usr/lib/libcuda.so.1\ncupti=\ninjection=\n", false, false, ""},
		{"older library", base, false, false, ""},
		{"sampled", base + "pm_sampling=1\nprofiling_admin_only=0\neuid=1000\n", true, false, "CUPTI PM sampling: device counters are sampled"},
		{"root", base + "pm_sampling=1\nprofiling_admin_only=1\neuid=0\n", true, false, "device counters are sampled"},
		{"admin only", base + "pm_sampling=1\nprofiling_admin_only=1\neuid=1000\n", true, true, "needs administrator rights"},
		{"old cupti", "libcuda=/usr/lib/libcuda.so.1\ncupti=/x/libcupti.so\ncupti_version=18\ninjection=\npm_sampling=0\n", true, true, "this CUPTI (API version 18) has no PM sampling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := gpuCountersCheck(parseGPUProbe(tc.probe))
			if ok != tc.line {
				t.Fatalf("line %v, want %v (%+v)", ok, tc.line, c)
			}
			if !ok {
				return
			}
			if !c.ok || c.warn != tc.warn || !strings.Contains(c.detail, tc.want) || (tc.warn && c.fix == "") {
				t.Errorf("%+v, want warn %v and %q (with a fix when a warning)", c, tc.warn, tc.want)
			}
		})
	}
}
