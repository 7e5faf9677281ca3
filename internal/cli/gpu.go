package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// GPU measurement modes (--gpu, POPMON_GPU; docs/cli.md).
const (
	gpuAuto = "auto"
	gpuOn   = "on"
	gpuOff  = "off"
)

// checkGPUMode validates a --gpu value ("" leaves the library's default:
// $POPMON_GPU, else auto).
func checkGPUMode(mode string) error {
	switch mode {
	case "", gpuAuto, gpuOn, gpuOff:
		return nil
	}
	return fail(ExitUsage, "unknown --gpu mode %q: use auto, on or off", mode)
}

// gpuEnv adds to set what GPU measurement needs: POPMON_GPU for a --gpu
// value, and CUDA_INJECTION64_PATH naming the library lib, through which
// the CUDA driver starts libpopmon's GPU measurement inside cuInit (only in
// processes that use CUDA). With mode off (the flag, else $POPMON_GPU) the
// driver is left alone; when another tool's library is already injected
// (nsys, ncu) it is left in place, and the library says why the GPU was not
// measured (in the file; with --gpu on also in its one warning line).
func gpuEnv(mode, lib string, set map[string]string, getenv func(string) string) error {
	if err := checkGPUMode(mode); err != nil {
		return err
	}
	if mode != "" {
		set["POPMON_GPU"] = mode
	}
	eff := mode
	if eff == "" {
		eff = getenv("POPMON_GPU")
	}
	if eff == gpuOff || eff == "0" || eff == "no" {
		return nil
	}
	if cur := getenv("CUDA_INJECTION64_PATH"); cur != "" && cur != lib && !strings.HasPrefix(filepath.Base(cur), "libpopmon") {
		return nil
	}
	set["CUDA_INJECTION64_PATH"] = lib
	return nil
}

// gpuProbe is what libpopmon finds of CUDA on this machine (its probe mode,
// POPMON_GPU_PROBE: the popmon binary is static and cannot dlopen).
type gpuProbe struct {
	libcuda, cupti string
	driver, cuptiV int
	tried          []string
	injection      string
	err            error
}

// probeGPU runs the built library's probe: /bin/true with the library
// preloaded and POPMON_GPU_PROBE=1, which prints key=value lines.
func probeGPU(ctx context.Context, lib string) gpuProbe {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	truePath, err := exec.LookPath("true")
	if err != nil {
		return gpuProbe{err: fmt.Errorf("no true program to run the probe in: %w", err)}
	}
	cmd := exec.CommandContext(ctx, truePath)
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib, "POPMON_GPU_PROBE=1")
	out, err := cmd.Output()
	if err != nil {
		return gpuProbe{err: fmt.Errorf("running the library's GPU probe: %w", err)}
	}
	return parseGPUProbe(string(out))
}

// parseGPUProbe reads the probe's key=value lines.
func parseGPUProbe(out string) gpuProbe {
	var p gpuProbe
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
