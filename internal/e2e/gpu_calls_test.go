package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestGPUFakeCalls: which CUDA calls libpopmon times (examples/gpu/fake/calls.c).
// 20 000 cudaGetDevice calls run no callback (host useful time, not GPU
// calls); a program that launches and synchronises through the driver API
// alone (as Triton, CuPy and Numba do) has its synchronisation measured; a
// runtime call with the driver call inside it counts once.
func TestGPUFakeCalls(t *testing.T) {
	needGPUMeasurement(t)
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := fakeCUDA(t, impl.mpicc)
			o := runOpts{env: fakeEnv(dir), flags: []string{"--gpu", "on"}, dir: dir}
			r := measureRunWith(t, impl, o, 1, "gpu_calls")
			w, ok := r.m.Region("work")
			if !ok || len(w.Processes) != 1 {
				t.Fatalf("no region work of one process: %v", r.m.RegionNames())
			}
			p := w.Processes[0]
			ms := func(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }
			// cuCtxSynchronize waits 100 - 40 ms, cudaDeviceSynchronize 50 ms.
			if g := ms(p.GPURuntimeNS); g < 105 || g > 125 {
				t.Errorf("GPU runtime time %.1f ms, want 110 ms (-5, +15)", g)
			}
			if p.GPURuntimeCalls != 4 {
				t.Errorf("%d GPU runtime calls, want 4 (cuLaunchKernel, cuCtxSynchronize, cudaLaunchKernel, "+
					"cudaDeviceSynchronize; no cudaGetDevice)", p.GPURuntimeCalls)
			}
			// 40 ms of host work, plus the 20 000 getters (each well under a µs).
			if u := ms(p.UsefulNS); u < 39 || u > 60 {
				t.Errorf("useful time %.1f ms, want 40 ms (-1, +20 for the getters)", u)
			}
			want := map[string]int64{"drv_kernel": 100e6, "rt_kernel": 50e6}
			for _, k := range r.m.GPUKernels {
				if ns, ok := want[k.Name]; ok {
					if k.Count != 1 || k.TimeNS != ns {
						t.Errorf("kernel %s: %d calls, %d ns; want 1, %d", k.Name, k.Count, k.TimeNS, ns)
					}
					delete(want, k.Name)
				}
			}
			if len(want) != 0 {
				t.Errorf("kernels missing from the table: %v (table %+v)", want, r.m.GPUKernels)
			}
			if r.m.GPU == nil || r.m.GPU.DroppedRecords != 0 || r.m.GPU.RejectedRecords != 0 {
				t.Errorf("gpu = %+v, want nothing dropped or rejected", r.m.GPU)
			}
		})
	}
}

// TestGPUFakeBufferCap: where the activity buffers' cap is reached anyway
// (POPMON_GPU_BUFFER_MB=8: two 4 MiB buffers for four launching threads
// with a buffer each), the records lost are counted exactly — kept plus lost
// is every launch — and said once with the number and the cap; a CUPTI older
// than 12.9, which crashes when given no buffer, gets a discard buffer
// instead (the fake aborts on a missing buffer) with the same accounting.
func TestGPUFakeBufferCap(t *testing.T) {
	needGPUMeasurement(t)
	impl := impls(t)[0]
	dir := fakeCUDA(t, impl.mpicc)
	const launches = 400000
	for _, c := range []struct{ name, version string }{{"cupti 13.0", "130001"}, {"cupti 12.8", "26"}} {
		t.Run(c.name, func(t *testing.T) {
			o := runOpts{env: fakeEnv(dir, "POPMON_GPU_BUFFER_MB=8", "FAKECUPTI_PER_THREAD=1",
				"FAKECUPTI_VERSION="+c.version), flags: []string{"--gpu", "on"}, dir: dir}
			r := measureRunWith(t, impl, o, 1, "gpu_calls", "storm", "4", fmt.Sprint(launches))
			var kept int64
			for _, k := range r.m.GPUKernels {
				if k.Name == "storm_kernel" {
					kept += k.Count
				}
			}
			if r.m.GPU == nil {
				t.Fatalf("no gpu object")
			}
			lost := r.m.GPU.DroppedRecords
			if lost <= 0 || kept+lost != launches {
				t.Errorf("kept %d + lost %d records, want %d with some lost (4 threads, 2 buffers)", kept, lost, launches)
			}
			want := fmt.Sprintf("popmon: %d GPU activity records were lost: the activity buffers reached their cap of 8 MiB", lost)
			if n := strings.Count(r.stderr, want); n != 1 {
				t.Errorf("%d lines %q in stderr, want 1:\n%s", n, want, r.stderr)
			}
		})
	}
}
