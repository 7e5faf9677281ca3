package pop

import (
	"math"
	"testing"

	"github.com/popmon/popmon/measure"
)

func i64(v int64) *int64 { return &v }

// TestRegionDeviceWork: per device the sampling process's counters (a
// shared device counted once), sums over devices, the derived values, and
// no counters when a device that ran kernels was not sampled.
func TestRegionDeviceWork(t *testing.T) {
	devs := []measure.GPUDevice{{Index: 0, SMs: 100, MaxWarpsPerSM: 64, Counters: true}, {Index: 1, SMs: 100, MaxWarpsPerSM: 64, Counters: true}}
	c := func(inst, act, el, sampled int64) *measure.GPUCounterValues {
		return &measure.GPUCounterValues{Instructions: inst, SMActiveCycles: act, SMElapsedCycles: el, SampledNS: sampled,
			WarpsActive: i64(act * 32), DRAMReadBytes: i64(1000), DRAMWriteBytes: i64(3000)}
	}
	for _, tc := range []struct {
		name      string
		accounts  []measure.GPUDeviceAccount
		has       bool
		ipc, ghz  float64
		use, occ  float64
		dramBytes float64
	}{
		{"two devices", []measure.GPUDeviceAccount{
			{Device: 0, UsefulNS: 1000, ActiveNS: 1000, Counters: c(300000, 150000, 200000, 1000)},
			{Device: 1, UsefulNS: 500, ActiveNS: 500, Counters: c(100000, 50000, 200000, 1000)}},
			true, 2, 2, 200000.0 / (2 * 1500), 0.5, 8000},
		{"a device not sampled", []measure.GPUDeviceAccount{
			{Device: 0, UsefulNS: 1000, ActiveNS: 1000, Counters: c(300000, 150000, 200000, 1000)},
			{Device: 1, UsefulNS: 500, ActiveNS: 500}},
			false, 0, 0, 0, 0, 0},
		{"an idle device not sampled", []measure.GPUDeviceAccount{
			{Device: 0, UsefulNS: 1000, ActiveNS: 1000, Counters: c(300000, 150000, 200000, 1000)}},
			true, 2, 2, 150000.0 / 2000, 0.5, 4000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &measure.RegionSummary{Sum: measure.ProcessAccounts{GPUDevices: tc.accounts}}
			w := RegionDeviceWork(a, devs)
			if w.HasCounters != tc.has {
				t.Fatalf("HasCounters = %v, want %v (%+v)", w.HasCounters, tc.has, w)
			}
			if !tc.has {
				if _, ok := w.IPC(); ok {
					t.Errorf("IPC given without counters")
				}
				return
			}
			ipc, _ := w.IPC()
			ghz, _ := w.SMFrequencyGHz()
			use, _ := w.SMUse()
			for _, x := range []struct {
				name      string
				got, want float64
			}{{"ipc", ipc, tc.ipc}, {"GHz", ghz, tc.ghz}, {"SM use", use, tc.use},
				{"occupancy", w.Warps / w.WarpSlots, tc.occ}, {"DRAM bytes", w.DRAMBytes, tc.dramBytes}} {
				if math.Abs(x.got-x.want) > 1e-9*math.Max(1, x.want) {
					t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
				}
			}
		})
	}
}

// TestScaleDevice: the device computation scalability is the product of
// its four factors (strong and weak scaling), each from its definition.
func TestScaleDevice(t *testing.T) {
	ref := &DeviceWork{Devices: 1, HasCounters: true, UsefulNS: 1e9, Instructions: 4e12, ActiveCycles: 2e12, ElapsedCycles: 3e12, SMSampledNS: 132 * 1.2e9}
	x := &DeviceWork{Devices: 2, HasCounters: true, UsefulNS: 0.8e9, Instructions: 5e12, ActiveCycles: 1.6e12, ElapsedCycles: 3.2e12, SMSampledNS: 264 * 1.1e9}
	for _, weak := range []bool{false, true} {
		rows := map[string]*ScalingRow{}
		mk := func(id string) *ScalingRow {
			r := &ScalingRow{ID: id, Values: make([]float64, 1), Has: make([]bool, 1)}
			rows[id] = r
			return r
		}
		set := func(r *ScalingRow, v float64, ok bool) { r.Values[0], r.Has[0] = v, ok }
		scaleDevice(x, ref, weak, set, mk("comp"), mk("instr"), mk("ipc"), mk("freq"), mk("use"), mk("ipcv"), mk("freqv"))
		for id, r := range rows {
			if !r.Has[0] {
				t.Fatalf("weak %v: %s absent", weak, id)
			}
		}
		v := func(id string) float64 { return rows[id].Values[0] }
		n := 1.0
		if weak {
			n = 2
		}
		if want := n * 1e9 / 0.8e9; math.Abs(v("comp")-want) > 1e-12 {
			t.Errorf("weak %v: computation scalability %v, want %v", weak, v("comp"), want)
		}
		if want := n * 4e12 / 5e12; math.Abs(v("instr")-want) > 1e-12 {
			t.Errorf("weak %v: instruction scaling %v, want %v", weak, v("instr"), want)
		}
		if p := v("instr") * v("ipc") * v("freq") * v("use"); math.Abs(p-v("comp")) > 1e-12 {
			t.Errorf("weak %v: the factors' product %v is not the scalability %v", weak, p, v("comp"))
		}
	}
	// No counters in one run: the scalability alone.
	noCtr := *x
	noCtr.HasCounters = false
	got := map[string]bool{}
	set := func(r *ScalingRow, v float64, ok bool) { got[r.ID] = ok }
	mk := func(id string) *ScalingRow { return &ScalingRow{ID: id} }
	scaleDevice(&noCtr, ref, false, set, mk("comp"), mk("instr"), mk("ipc"), mk("freq"), mk("use"), mk("ipcv"), mk("freqv"))
	if !got["comp"] || got["instr"] || got["ipc"] || got["use"] {
		t.Errorf("without counters: %v, want the scalability only", got)
	}
}
