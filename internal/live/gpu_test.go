package live

import (
	"testing"

	"github.com/popmon/popmon/measure"
)

// TestGPUAssemble checks the GPU part of a partial measurement: devices
// merged by UUID across processes (a shared GPU counted once), each
// process's region device time on its run-wide index, A never below K,
// and the gpu object from the processes' states.
func TestGPUAssemble(t *testing.T) {
	shared := "GPU-aaaa"
	p0 := &Snapshot{Rank: 0, GPU: GPUState{Active: true, Vendor: "nvidia", Mode: "auto", Used: 1 | 2}}
	p0.GPU.UUID[0], p0.GPU.UUID[1] = shared, "GPU-bbbb"
	p1 := &Snapshot{Rank: 1, GPU: GPUState{Active: true, Vendor: "nvidia", Mode: "auto", Used: 1}}
	p1.GPU.UUID[0] = shared
	p2 := &Snapshot{Rank: 2} // never initialised CUDA
	procs := []Proc{{Snap: p0}, {Snap: p1}, {Snap: p2}}
	devs, idx := gpuDevicesOf(procs)
	if len(devs) != 2 || devs[0].UUID != shared || devs[1].UUID != "GPU-bbbb" || devs[1].Index != 1 {
		t.Fatalf("devices = %+v", devs)
	}
	if idx[0][0] != 0 || idx[0][1] != 1 || idx[1][0] != 0 || idx[1][1] != -1 || idx[2][0] != -1 {
		t.Errorf("indices = %v %v %v", idx[0][:2], idx[1][:2], idx[2][:2])
	}
	var r Region
	r.Tot.GPUK[0], r.Tot.GPUA[0] = 100, 150
	r.Tot.GPUK[1], r.Tot.GPUA[1] = 80, 79 // rounded under K: written as K
	got := gpuAccountsOf(r, idx[0])
	want := []measure.GPUDeviceAccount{{Device: 0, UsefulNS: 100, ActiveNS: 150}, {Device: 1, UsefulNS: 80, ActiveNS: 80}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("accounts = %+v, want %+v", got, want)
	}
	if g := gpuOf(procs); g == nil || !g.Available || g.Mode != "auto" || g.Method != "cupti" {
		t.Errorf("gpu = %+v", g)
	}
	p1.GPU.Active = false // injected, not measured
	if g := gpuOf(procs); g == nil || g.Available || g.Reason == "" {
		t.Errorf("gpu with an unmeasured process = %+v", g)
	}
	if g := gpuOf([]Proc{{Snap: p2}}); g != nil {
		t.Errorf("gpu without CUDA = %+v, want nil", g)
	}
}

// TestGPUAssembleAMD checks a partial measurement of AMD processes (live
// gpu_active 2): rocprofiler-sdk as the method, each device with its
// vendor; with processes of both vendors, the first measuring process's
// method.
func TestGPUAssembleAMD(t *testing.T) {
	if gpuVendor(1) != "nvidia" || gpuVendor(2) != "amd" || gpuVendor(0) != "" || gpuVendor(7) != "" {
		t.Errorf("gpuVendor: %q %q %q %q", gpuVendor(1), gpuVendor(2), gpuVendor(0), gpuVendor(7))
	}
	a0 := &Snapshot{Rank: 0, GPU: GPUState{Active: true, Vendor: "amd", Mode: "auto", Used: 1}}
	a0.GPU.UUID[0] = "GPU-0123456789abcdef0123456789abcdef"
	n1 := &Snapshot{Rank: 1, GPU: GPUState{Active: true, Vendor: "nvidia", Mode: "auto", Used: 1}}
	n1.GPU.UUID[0] = "GPU-6f1c2a10-0000-0000-0000-000000000000"
	if g := gpuOf([]Proc{{Snap: a0}}); g == nil || !g.Available || g.Method != "rocprofiler-sdk" {
		t.Errorf("AMD gpu = %+v", g)
	}
	procs := []Proc{{Snap: a0}, {Snap: n1}}
	devs, _ := gpuDevicesOf(procs)
	if len(devs) != 2 || devs[0].Vendor != "amd" || devs[1].Vendor != "nvidia" {
		t.Errorf("devices = %+v", devs)
	}
	if g := gpuOf(procs); g == nil || g.Method != "rocprofiler-sdk" {
		t.Errorf("mixed gpu = %+v", g)
	}
	if g := gpuOf([]Proc{{Snap: n1}, {Snap: a0}}); g == nil || g.Method != "cupti" {
		t.Errorf("mixed gpu, NVIDIA first = %+v", g)
	}
	m := &measure.Measurement{GPU: gpuOf([]Proc{{Snap: a0}}), GPUDevices: devs[:1]}
	if m.GPU.Vendor() != "amd" || m.GPUDevices[0].VendorOrNVIDIA() != "amd" {
		t.Errorf("measurement vendors: %q %q", m.GPU.Vendor(), m.GPUDevices[0].VendorOrNVIDIA())
	}
}
