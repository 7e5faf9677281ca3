package e2e

// Device communication (issue 35, item 2): NCCL's kernels, copies between
// devices and the device buffers a CUDA-aware MPI moves are the device's
// communication (POP-METRICS.md §5: Gc), not its computation (Gu). The
// scenarios V11–V13 of examples/gpu/scenarios.h on the fake CUDA stack,
// with every MPI; their designed values are asserted within ±0.02, and the
// program's own expect lines through gpu-validate.sh --compare.

import (
	"fmt"
	"strings"
	"testing"
)

func TestGPUDeviceComm(t *testing.T) {
	cases := []struct {
		mode    string
		np      int
		devices int
		want    map[string]float64
	}{
		// kernel u, NCCL kernel u, host u: Gu = u, Gc = u (5dfd947: Gu = 2u, comm 1).
		{"V11", 1, 1, map[string]float64{"gpu_communication_efficiency": 0.5, "gpu_parallel_efficiency": 1.0 / 3,
			"gpu_orchestration_efficiency": 2.0 / 3, "device_offload_efficiency": 1.0 / 3}},
		// kernel u, copy c = u between two devices (PtoP) or on one (DtoD), host u.
		{"V12", 1, 2, map[string]float64{"gpu_communication_efficiency": 0.5, "gpu_parallel_efficiency": 1.0 / 3,
			"gpu_orchestration_efficiency": 2.0 / 3}},
		{"V12", 1, 1, map[string]float64{"gpu_communication_efficiency": 0.5, "gpu_parallel_efficiency": 1.0 / 3}},
		// Rank 0 waits u in MPI_Recv into device memory: Gc = u on its
		// device (5dfd947: 0, comm 1).
		{"V13", 2, 2, map[string]float64{"gpu_communication_efficiency": 0.5, "gpu_parallel_efficiency": 0.5,
			"gpu_load_balance": 1, "gpu_orchestration_efficiency": 1}},
	}
	for _, impl := range impls(t) {
		for _, c := range cases {
			impl, c := impl, c
			t.Run(fmt.Sprintf("%s/%s/gpus%d", impl.name, c.mode, c.devices), func(t *testing.T) {
				needGPUMeasurement(t)
				dir := fakeCUDA(t, impl.mpicc)
				o := runOpts{env: fakeEnv(dir, fmt.Sprintf("FAKECUDA_DEVICES=%d", c.devices), "GPU_POP_COPY_MS="),
					flags: []string{"--gpu", "auto"}, dir: dir}
				r := measureRunWith(t, impl, o, c.np, "gpu_pop", c.mode, fmt.Sprint(gpuReps), fmt.Sprint(gpuUnitMS))
				for id, v := range c.want {
					r.expect(t, "work", id, v, 0.02)
				}
				for _, line := range gpuLines(r.stderr) {
					t.Errorf("GPU warning: %s", line)
				}
				if c.mode == "V11" {
					var nccl int64
					for _, k := range r.m.GPUKernels {
						if strings.HasPrefix(k.Name, "ncclDevKernel_") {
							nccl += k.Count
						}
					}
					if nccl != gpuReps {
						t.Errorf("NCCL kernels in the kernel table: %d, want %d (still listed, as communication)", nccl, gpuReps)
					}
				}
				out, code := validateCompare(t, r)
				if code != 0 || strings.Contains(out, "FAIL") {
					t.Errorf("gpu-validate.sh --compare: exit %d\n%s", code, out)
				}
			})
		}
	}
}
