package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGPUBothVendors: a process that uses CUDA and HIP (examples/gpu/both:
// CUDA starts first). CUPTI measures its GPU (the first backend to start);
// rocprofiler-sdk's records are not counted twice, and one line says that
// HIP's calls and device work are not measured, whatever the GPU mode.
func TestGPUBothVendors(t *testing.T) {
	needAMDMeasurement(t)
	impl := impls(t)[0]
	cuda := fakeCUDA(t, impl.mpicc)
	rocm := fakeROCm(t, impl.mpicc)
	dir := t.TempDir()
	gpu := filepath.Join(repoRoot, "examples", "gpu")
	out, err := exec.Command(impl.mpicc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
		"-I"+filepath.Join(repoRoot, "shim"), "-I"+filepath.Join(gpu, "fake"), "-I"+filepath.Join(gpu, "fake_rocm"),
		"-o", filepath.Join(dir, "both"), filepath.Join(gpu, "both", "both.c"),
		"-L"+cuda, "-Wl,-rpath,"+cuda, "-lcuda", "-L"+rocm, "-Wl,-rpath,"+rocm, "-lamdhip64").CombinedOutput()
	if err != nil {
		t.Fatalf("building both.c: %v\n%s", err, out)
	}
	for _, mode := range []string{"auto", "on"} {
		t.Run(mode, func(t *testing.T) {
			env := append(fakeEnv(cuda), "LD_LIBRARY_PATH="+cuda+":"+rocm)
			o := runOpts{env: env, flags: []string{"--gpu", mode}, dir: dir}
			r := measureRunWith(t, impl, o, 1, "both")
			if r.m.GPU == nil || !r.m.GPU.Available || r.m.GPU.Method != "cupti" {
				t.Fatalf("gpu = %+v, want measured through CUPTI", r.m.GPU)
			}
			for _, d := range r.m.GPUDevices {
				if d.Vendor != "" && d.Vendor != "nvidia" {
					t.Errorf("device %+v: want NVIDIA only", d)
				}
			}
			names := map[string]bool{}
			for _, k := range r.m.GPUKernels {
				names[k.Name] = true
			}
			if !names["cuda_kernel"] || names["hip_kernel"] {
				t.Errorf("kernels %v: want cuda_kernel and not hip_kernel", r.m.GPUKernels)
			}
			want := "popmon: this process uses CUDA and HIP: its GPUs are measured through CUPTI only, HIP's calls and device work are not measured"
			if n := strings.Count(r.stderr, want); n != 1 {
				t.Errorf("%d lines %q, want 1:\n%s", n, want, r.stderr)
			}
		})
	}
}
