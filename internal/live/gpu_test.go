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
	p0 := &Snapshot{Rank: 0, GPU: GPUState{Active: true, Mode: "auto", Used: 1 | 2}}
	p0.GPU.UUID[0], p0.GPU.UUID[1] = shared, "GPU-bbbb"
	p1 := &Snapshot{Rank: 1, GPU: GPUState{Active: true, Mode: "auto", Used: 1}}
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
