package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestGPUFakeHIPVersions: the AMD backend on every rocprofiler-sdk layout it
// knows (0.4.0 and 0.6.0: the 0.x callback record; 1.0.0: the 1.0 one),
// with the HIP operation ids shifted (libpopmon maps calls by name, never by
// id) and the SDK's clock (CLOCK_BOOTTIME) 5 s ahead of CLOCK_MONOTONIC, as
// after a suspend (the offset is calibrated): V4's designed values ±0.02.
func TestGPUFakeHIPVersions(t *testing.T) {
	needAMDMeasurement(t)
	impl := impls(t)[0]
	dir := fakeROCm(t, impl.mpicc)
	var v4 gpuCase
	for _, c := range gpuCases {
		if c.mode == "V4" {
			v4 = c
		}
	}
	for _, version := range []string{"0.4.0", "0.6.0", "1.0.0"} {
		t.Run(version, func(t *testing.T) {
			o := runOpts{
				env: fakeHIPEnv(dir, "FAKEHIP_DEVICES=1", "GPU_POP_COPY_MS=", "FAKEROCM_VERSION="+version,
					"FAKEROCM_OP_SHIFT=3", "FAKEROCM_SUSPENDED_MS=5000"),
				flags: []string{"--gpu", "auto"},
				dir:   dir,
			}
			r := measureRunWith(t, impl, o, v4.np, "gpu_pop_hip", v4.mode, fmt.Sprint(gpuReps), fmt.Sprint(gpuUnitMS))
			if version != "0.4.0" {
				checkHIPRun(t, r, v4)
			} else {
				// Agents carry no UUID before 0.6.0: the device is named
				// by its node and host.
				for id, want := range v4.want {
					r.expect(t, "work", id, want, effTol)
				}
				if len(r.m.GPUDevices) != 1 || !strings.HasPrefix(r.m.GPUDevices[0].UUID, "AMD-node-") ||
					r.m.GPUDevices[0].Vendor != "amd" {
					t.Errorf("devices %+v, want one AMD device named AMD-node-N@HOST", r.m.GPUDevices)
				}
				if r.m.GPU.DroppedRecords != 0 || r.m.GPU.RejectedRecords != 0 {
					t.Errorf("gpu = %+v: records lost or rejected", r.m.GPU)
				}
			}
			if r.m.GPU.Clock != "calibrated" {
				t.Errorf("clock %q, want calibrated (the SDK's CLOCK_BOOTTIME)", r.m.GPU.Clock)
			}
		})
	}
}
