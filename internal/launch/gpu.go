package launch

import (
	"github.com/popmon/popmon/internal/fault"
	"path/filepath"
	"strings"
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
	return fault.Usagef("unknown --gpu mode %q: use auto, on or off", mode)
}

// gpuEnv adds to set what GPU measurement needs: POPMON_GPU for a --gpu
// value, CUDA_INJECTION64_PATH naming the library lib, through which
// the CUDA driver starts libpopmon's GPU measurement inside cuInit (only in
// processes that use CUDA), and ACC_PROFLIB naming it too, through which an
// OpenACC runtime registers libpopmon's profiling callbacks. With mode off (the flag, else $POPMON_GPU) the
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
	// OpenACC runtimes load the profiling library ACC_PROFLIB names (GCC's
	// libgomp does not look for acc_register_library in the process): the
	// same library, unless another tool's is named.
	if cur := getenv("ACC_PROFLIB"); cur == "" || cur == lib || strings.HasPrefix(filepath.Base(cur), "libpopmon") {
		set["ACC_PROFLIB"] = lib
	}
	if cur := getenv("CUDA_INJECTION64_PATH"); cur != "" && cur != lib && !strings.HasPrefix(filepath.Base(cur), "libpopmon") {
		return nil
	}
	set["CUDA_INJECTION64_PATH"] = lib
	return nil
}

// gpuCountersEnv sets POPMON_GPU_COUNTERS for a --gpu-counters value:
// whether the GPUs' performance counters are sampled (device
// computational metrics; off costs nothing).
func gpuCountersEnv(mode string, set map[string]string) error {
	switch mode {
	case "":
		return nil
	case gpuAuto, gpuOn, gpuOff:
		set["POPMON_GPU_COUNTERS"] = mode
		return nil
	}
	return fault.Usagef("unknown --gpu-counters mode %q: use auto, on or off", mode)
}
