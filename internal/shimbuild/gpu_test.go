package shimbuild

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildGPUTest compiles shim/test/gpu_test.c with shim/gpu.c, gpu_cupti.c,
// gpu_cupti_pm.c, gpu_counters.c, gpu_rocm.c, gpu_pool.c, gpu_mode.c and
// gpu_backends.c (the GPU measurement, with CUPTI and the CUDA
// driver replaced by the test's fake backend) and the bottom layer
// (shim/base) with compiler cc, warnings as errors, and returns the program.
func buildGPUTest(t *testing.T, cc string) string {
	t.Helper()
	shim := filepath.Join("..", "..", "shim")
	bin := filepath.Join(t.TempDir(), "gpu_test")
	args := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-DPOPMON_GPU_TEST",
		"-I", shim}
	args = append(args, baseSources(t, shim)...)
	args = append(args, filepath.Join(shim, "gpu.c"), filepath.Join(shim, "gpu_cupti.c"), filepath.Join(shim, "gpu_cupti_pm.c"),
		filepath.Join(shim, "gpu_counters.c"), filepath.Join(shim, "gpu_rocm.c"), filepath.Join(shim, "gpu_pool.c"),
		filepath.Join(shim, "gpu_mode.c"), filepath.Join(shim, "gpu_backends.c"),
		filepath.Join(shim, "test", "gpu_test.c"),
		"-ldl", "-lpthread", "-o", bin)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return bin
}

// TestGPUC runs the C unit tests of the GPU measurement with recorded API
// sequences and activity records fed through a fake CUPTI and driver, on
// any machine (no GPU, no CUDA): research/gpu.md §4.1 scenarios 1–9.
func TestGPUC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	scenarios := []struct{ args, what string }{
		{"decode", "every record family through the stable prefixes; host-to-host copies and untimed records skipped; implausible records rejected, counted, one warning"},
		{"unions", "overlap, nesting, duplicates, out of order; 10^6 disjoint intervals exact in a fixed window; idle gaps; A-K for copies under kernels"},
		{"clipping", "an interval across a snapshot split between two region intervals; a late record counted in the next"},
		{"api", "GPU runtime time and calls; runtime->driver nesting counted once; a CUDA call inside MPI stays MPI; state restored; unaccounted threads ignored"},
		{"devices", "ordinal -> UUID and name; records past the device table rejected; the distinct-device-per-rank test hook"},
		{"reasons missing", "no CUPTI library: reason; mode on warns once"},
		{"reasons 15", "CUPTI_ERROR_NOT_INITIALIZED: reason; mode auto silent"},
		{"reasons 35", "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: reason"},
		{"reasons 39", "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: reason"},
		{"reasons 27", "CUPTI_ERROR_NOT_SUPPORTED: reason"},
		{"reasons off", "mode off never probes"},
		{"reasons on-nocuda", "no CUDA in mode on: one warning"},
		{"reasons auto-nocuda", "no CUDA in mode auto: silent"},
		{"pool", "the buffer cap reached (CUPTI >= 12.9): requests refused, CUPTI's drops counted, one warning with the number and the cap, buffers zeroed and reused"},
		{"pool old", "the cap reached with a CUPTI older than 12.9: never no buffer; a discard buffer's records lost, counted, never accounted"},
		{"pool grow", "the pool's thread keeps a reserve for the buffers threads hold (none allocated on a requesting thread); completed buffers processed off the requesting thread"},
		{"forced", "a record in progress holds its buffer back from a region's flush; the last flush (finish, context destroyed) is forced and delivers the finished records"},
		{"reentrant", "a flush delivering buffers synchronously under the region lock, and from the context-destroy callback: no deadlock"},
		{"clock", "the timestamp callback is CLOCK_MONOTONIC and records are clipped on it"},
		{"clock calibrated", "no timestamp callback: the offset to CUPTI's CLOCK_REALTIME is calibrated"},
		{"commkernel", "NCCL's kernels (ncclKernel_*, ncclDevKernel_*, plain or mangled) are device communication; other names are not"},
		{"counters", "device counter samples: whole before a snapshot, prorated across it, none after; values never go back; a full ring folds the oldest exactly; negative and NaN increments count 0"},
	}
	for _, cc := range cCompilers(t) {
		bin := buildGPUTest(t, cc)
		for _, s := range scenarios {
			t.Run(cc+"/"+strings.ReplaceAll(s.args, " ", "-"), func(t *testing.T) {
				cmd := exec.Command(bin, strings.Fields(s.args)...)
				cmd.Env = []string{"PATH=/usr/bin:/bin"}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s (%s): %v\n%s", s.args, s.what, err, out)
				}
				if !strings.Contains(string(out), "ok "+s.args+"\n") {
					t.Fatalf("%s: no ok line:\n%s", s.args, out)
				}
			})
		}
	}
}
