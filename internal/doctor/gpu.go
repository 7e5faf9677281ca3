package doctor

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/subprocess"
)

// gpuProbe is what libpopmon finds of CUDA and ROCm on this machine (its
// probe mode, POPMON_GPU_PROBE: the popmon binary is static and cannot
// dlopen).
type gpuProbe struct {
	libcuda, cupti string
	driver, cuptiV int
	tried          []string
	injection      string
	// pmSampling: CUPTI has PM sampling (-1: not said); adminOnly: the
	// driver's RmProfilingAdminOnly (-1: not read); euid: the probe's.
	pmSampling, adminOnly, euid int
	// hip is the HIP runtime found (libamdhip64.so), hipV its
	// hipRuntimeGetVersion; sdk is rocprofiler-sdk's library, sdkV its
	// version (10000·major + 100·minor + patch); rocpTools is
	// $ROCP_TOOL_LIBRARIES.
	hip, sdk    string
	hipV, sdkV  int
	rocpTools   string
	hasROCmKeys bool // the probe said anything of ROCm (a library before AMD support does not)
	err         error
}

// probeGPU runs the built library's probe: /bin/true with the library
// preloaded and POPMON_GPU_PROBE=1, which prints key=value lines.
func probeGPU(ctx context.Context, lib string) gpuProbe {
	out, err := runLibraryProbe(ctx, lib, "POPMON_GPU_PROBE", "GPU")
	if err != nil {
		return gpuProbe{err: err}
	}
	return parseGPUProbe(out)
}

// runLibraryProbe runs one of the library's probe modes (what names it in
// errors): true with library lib preloaded and env=1, whose constructor
// prints key=value lines and measures nothing (the popmon binary is static
// and cannot dlopen the libraries the library looks for; and what the
// library itself finds is what it will record).
func runLibraryProbe(ctx context.Context, lib, env, what string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	truePath, err := exec.LookPath("true")
	if err != nil {
		return "", fmt.Errorf("no true program to run the probe in: %w", err)
	}
	cmd := subprocess.Command(ctx, truePath)
	cmd.Env = append(cmd.Env, "LD_PRELOAD="+lib, env+"=1")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("running the library's %s probe: %w", what, err)
	}
	return string(out), nil
}

// parseGPUProbe reads the probe's key=value lines.
func parseGPUProbe(out string) gpuProbe {
	p := gpuProbe{pmSampling: -1, adminOnly: -1, euid: -1}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "libcuda":
			p.libcuda = v
		case "driver_version":
			p.driver, _ = strconv.Atoi(v)
		case "cupti":
			p.cupti = v
		case "cupti_version":
			p.cuptiV, _ = strconv.Atoi(v)
		case "cupti_tried":
			p.tried = append(p.tried, v)
		case "injection":
			p.injection = v
		case "pm_sampling":
			p.pmSampling, _ = strconv.Atoi(v)
		case "profiling_admin_only":
			p.adminOnly, _ = strconv.Atoi(v)
		case "euid":
			p.euid, _ = strconv.Atoi(v)
		case "hip_runtime":
			p.hip, p.hasROCmKeys = v, true
		case "hip_runtime_version":
			p.hipV, _ = strconv.Atoi(v)
		case "rocprofiler_sdk":
			p.sdk, p.hasROCmKeys = v, true
		case "rocprofiler_sdk_version":
			p.sdkV, _ = strconv.Atoi(v)
		case "rocp_tool_libraries":
			p.rocpTools = v
		}
	}
	return p
}

// cudaVersion writes a CUDA version number (1000·major + 10·minor) as
// "13.0".
func cudaVersion(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// gpuCheck is popmon doctor's GPU line: whether the CUDA driver and CUPTI
// are found (with their versions) and whether CUDA_INJECTION64_PATH is
// already taken by another tool.
func gpuCheck(p gpuProbe) check {
	const what = "GPU (CUDA)"
	if p.err != nil {
		return check{ok: true, warn: true, what: what, detail: "not checked: " + p.err.Error()}
	}
	if p.libcuda == "" {
		return check{ok: true, what: what, detail: "no CUDA driver (libcuda.so.1 not found): GPU metrics are measured only where one is installed"}
	}
	detail := "CUDA driver " + p.libcuda
	if p.driver > 0 {
		detail += " (CUDA " + cudaVersion(p.driver) + ")"
	}
	if p.cupti == "" {
		return check{ok: true, warn: true, what: what,
			detail: detail + "; no CUPTI library found (tried " + strings.Join(p.tried, ", ") + "): no GPU metrics",
			fix:    "install CUPTI (the CUDA toolkit's extras/CUPTI, or pip install nvidia-cuda-cupti-cu12) or set POPMON_CUPTI_LIBRARY to a libcupti.so"}
	}
	detail += "; CUPTI " + p.cupti
	if p.cuptiV > 0 {
		detail += fmt.Sprintf(" (API version %d)", p.cuptiV)
	}
	if p.injection != "" && !strings.HasPrefix(filepath.Base(p.injection), "libpopmon") {
		return check{ok: true, warn: true, what: what,
			detail: detail + "; CUDA_INJECTION64_PATH is already set to " + p.injection + ": another CUDA tool is injected, so popmon does not measure the GPU",
			fix:    "unset CUDA_INJECTION64_PATH (or run without the other tool)"}
	}
	return check{ok: true, what: what, detail: detail + ": GPU metrics are measured (--gpu auto)"}
}

// gpuCountersCheck is popmon doctor's line for the GPU device counters
// (CUPTI's PM sampling): whether CUPTI has it and whether the driver lets
// this user read the counters; false when there is no CUPTI to say it of
// (gpuCheck says why) or the library does not report it.
func gpuCountersCheck(p gpuProbe) (check, bool) {
	const what = "GPU counters"
	if p.err != nil || p.libcuda == "" || p.cupti == "" || p.pmSampling < 0 {
		return check{}, false
	}
	if p.pmSampling == 0 {
		return check{ok: true, warn: true, what: what,
			detail: fmt.Sprintf("this CUPTI (API version %d) has no PM sampling: no device computational metrics (IPC, SM frequency, occupancy)", p.cuptiV),
			fix:    "use the CUPTI of CUDA 12.6 or newer (POPMON_CUPTI_LIBRARY)"}, true
	}
	if p.adminOnly == 1 && p.euid != 0 {
		return check{ok: true, warn: true, what: what,
			detail: "reading the GPU's performance counters needs administrator rights on this machine (RmProfilingAdminOnly: 1): no device computational metrics",
			fix:    "run as root, or ask the administrator to load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0"}, true
	}
	return check{ok: true, what: what, detail: "CUPTI PM sampling: device counters are sampled (--gpu-counters auto; a MIG instance or a virtual GPU that forbids it is named in the report)"}, true
}

// hipVersion writes a HIP version number (10⁷·major + 10⁵·minor + patch,
// as hipRuntimeGetVersion gives it) as "6.4.43482".
func hipVersion(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/10000000, v%10000000/100000, v%100000)
}

// sdkVersion writes rocprofiler-sdk's version number (10000·major +
// 100·minor + patch) as "0.6.0".
func sdkVersion(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/10000, v%10000/100, v%100)
}

// hipFirstSDK is the first HIP runtime version of a ROCm release with
// rocprofiler-sdk (ROCm 6.2).
const hipFirstSDK = 60200000

// rocmCheck is popmon doctor's ROCm line: whether a HIP runtime and
// rocprofiler-sdk are found (with their versions), why AMD GPU metrics
// would be missing and the fix, whether $ROCP_TOOL_LIBRARIES loads
// another tool too, and, while report.AMDValidated is false, that AMD
// measurement is not validated on AMD hardware. ok is false only for a
// probe that says nothing of ROCm (a library older than AMD support: no
// line).
func rocmCheck(p gpuProbe) (check, bool) {
	const what = "GPU (ROCm)"
	if p.err != nil {
		return check{ok: true, warn: true, what: what, detail: "not checked: " + p.err.Error()}, true
	}
	if !p.hasROCmKeys {
		return check{}, false
	}
	if p.hip == "" {
		return check{ok: true, what: what, detail: "no HIP runtime (libamdhip64.so not found): AMD GPU metrics are measured only where ROCm is installed"}, true
	}
	detail := "HIP runtime " + p.hip
	if p.hipV > 0 {
		detail += " (HIP " + hipVersion(p.hipV) + ")"
	}
	if p.sdk == "" {
		fix := "install rocprofiler-sdk (ROCm 6.2 or newer: the rocprofiler-sdk package, librocprofiler-sdk.so next to the HIP runtime)"
		if p.hipV > 0 && p.hipV < hipFirstSDK {
			fix = "use ROCm 6.2 or newer (HIP " + hipVersion(p.hipV) + " predates rocprofiler-sdk) with its rocprofiler-sdk package"
		}
		return check{ok: true, warn: true, what: what,
			detail: detail + "; no rocprofiler-sdk found (librocprofiler-sdk.so): no AMD GPU metrics (neither host time in HIP nor device time: both come from rocprofiler-sdk)",
			fix:    fix}, true
	}
	detail += "; rocprofiler-sdk " + p.sdk
	if p.sdkV > 0 {
		detail += " (" + sdkVersion(p.sdkV) + ")"
	}
	detail += ": AMD GPU metrics are measured (--gpu auto)"
	if others := otherROCmTools(p.rocpTools); len(others) > 0 {
		detail += "; ROCP_TOOL_LIBRARIES also loads " + strings.Join(others, ", ") + ", which measures alongside popmon (its cost is in popmon's times)"
	}
	c := check{ok: true, what: what, detail: detail}
	if !report.AMDValidated {
		c.warn = true
		c.detail += "; " + report.AMDNotValidated
	}
	return c, true
}

// otherROCmTools returns the entries of $ROCP_TOOL_LIBRARIES (colon
// separated) that are not a popmon library.
func otherROCmTools(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ":") {
		if e = strings.TrimSpace(e); e != "" && !strings.HasPrefix(filepath.Base(e), "libpopmon") {
			out = append(out, e)
		}
	}
	return out
}
