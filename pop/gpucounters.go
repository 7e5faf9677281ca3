package pop

import "github.com/popmon/popmon/measure"

// Metric ids of the device computational metrics (model talp, when the
// GPUs' counters were sampled): the device's counterpart of ipc,
// frequency_ghz and instructions.
const (
	IDGPUInstructions      = "gpu_instructions"
	IDGPUIPC               = "gpu_ipc"
	IDGPUSMFrequencyGHz    = "gpu_sm_frequency_ghz"
	IDGPUSMUtilization     = "gpu_sm_utilization"
	IDGPUAchievedOccupancy = "gpu_achieved_occupancy"
	IDGPUDRAMBytes         = "gpu_dram_bytes"
	IDGPUDRAMBandwidthGBs  = "gpu_dram_bandwidth_gbs"
)

// DeviceWork are the device computation inputs of one region, summed over
// the run's devices (per device, the counters of the process that sampled
// it: a device's counters are the whole device's):
//
//	IPC            = I / C                 (warp instructions per active SM cycle)
//	SM frequency f = E / S                 (elapsed SM cycles per SM-ns sampled, GHz)
//	SM utilization = C / E                 (active SM cycles per elapsed SM cycle)
//	SM use u       = C / (f · ΣGu)         (SMs active, on average, during kernel time)
//	occupancy      = W / Σ_d C_d·warps_d   (warps resident per active SM cycle, of the most)
//
// so that ΣGu = I / (IPC · f · u): the device computation scalability
// ΣGu_ref/ΣGu is the product of the instruction, IPC, SM frequency and SM
// use scalings.
type DeviceWork struct {
	// UsefulNS is ΣGu, the devices' kernel time (as in DeviceTimes).
	UsefulNS float64
	// Devices is N, the run's devices.
	Devices int
	// HasCounters says every device that ran kernels in the region had
	// its counters sampled; the sums below are meaningful only then.
	HasCounters bool
	// Instructions (I), ActiveCycles (C), ElapsedCycles (E) and
	// SMSampledNS (S: Σ_d SMs_d · sampled_d) are sums over devices.
	Instructions, ActiveCycles, ElapsedCycles, SMSampledNS float64
	// Warps (W) and WarpSlots (Σ_d C_d · max warps per SM_d) over the
	// devices that counted warps (HasWarps: all of them).
	Warps, WarpSlots float64
	HasWarps         bool
	// DRAMBytes are the bytes read and written; DRAMGBs Σ_d bytes_d /
	// sampled_d (HasDRAM: every device counted both).
	DRAMBytes, DRAMGBs float64
	HasDRAM            bool
}

// IPC, SMFrequencyGHz and SMUse are the derived values of w (ok false when
// a denominator is 0 or the counters are missing).
func (w DeviceWork) IPC() (float64, bool) {
	if !w.HasCounters {
		return 0, false
	}
	return ratio(w.Instructions, w.ActiveCycles)
}

// SMFrequencyGHz is E / S.
func (w DeviceWork) SMFrequencyGHz() (float64, bool) {
	if !w.HasCounters {
		return 0, false
	}
	return ratio(w.ElapsedCycles, w.SMSampledNS)
}

// SMUse is C / (f · ΣGu).
func (w DeviceWork) SMUse() (float64, bool) {
	f, ok := w.SMFrequencyGHz()
	if !ok {
		return 0, false
	}
	return ratio(w.ActiveCycles, f*w.UsefulNS)
}

// RegionDeviceWork gathers the device computation inputs of region
// summary a over the run's devices devs.
func RegionDeviceWork(a *measure.RegionSummary, devs []measure.GPUDevice) DeviceWork {
	w := DeviceWork{Devices: len(devs), HasCounters: true, HasWarps: true, HasDRAM: true}
	n := len(devs)
	if a == nil || n == 0 {
		w.HasCounters = false
		return w
	}
	gu := make([]int64, n)
	ctr := make([]*measure.GPUCounterValues, n)
	for _, d := range a.Sum.GPUDevices {
		if d.Device < 0 || d.Device >= n {
			continue
		}
		gu[d.Device] = max(gu[d.Device], d.UsefulNS)
		if d.Counters != nil {
			ctr[d.Device] = d.Counters
		}
	}
	sampled := 0
	for d := range n {
		w.UsefulNS += float64(gu[d])
		c := ctr[d]
		if c == nil || devs[d].SMs <= 0 {
			if gu[d] > 0 {
				w.HasCounters = false
			}
			continue
		}
		sampled++
		w.Instructions += float64(c.Instructions)
		w.ActiveCycles += float64(c.SMActiveCycles)
		w.ElapsedCycles += float64(c.SMElapsedCycles)
		w.SMSampledNS += float64(devs[d].SMs) * float64(c.SampledNS)
		if c.WarpsActive != nil && devs[d].MaxWarpsPerSM > 0 {
			w.Warps += float64(*c.WarpsActive)
			w.WarpSlots += float64(c.SMActiveCycles) * float64(devs[d].MaxWarpsPerSM)
		} else {
			w.HasWarps = false
		}
		if c.DRAMReadBytes != nil && c.DRAMWriteBytes != nil {
			b := float64(*c.DRAMReadBytes) + float64(*c.DRAMWriteBytes)
			w.DRAMBytes += b
			if c.SampledNS > 0 {
				w.DRAMGBs += b / float64(c.SampledNS)
			}
		} else {
			w.HasDRAM = false
		}
	}
	if sampled == 0 || w.ElapsedCycles <= 0 {
		w.HasCounters = false
	}
	w.HasWarps = w.HasWarps && w.HasCounters
	w.HasDRAM = w.HasDRAM && w.HasCounters
	return w
}

// addDeviceComputational adds the device computational metrics of w to
// tree (roots, like the host's computational metrics).
func addDeviceComputational(tree *builder, w DeviceWork) {
	if !w.HasCounters {
		return
	}
	tree.add(IDGPUIPC, "Device IPC", "", KindRatio)(w.IPC())
	tree.add(IDGPUSMFrequencyGHz, "SM frequency", "", KindFrequency)(w.SMFrequencyGHz())
	tree.add(IDGPUSMUtilization, "SM utilization", "", KindRatio)(ratio(w.ActiveCycles, w.ElapsedCycles))
	if w.HasWarps {
		tree.add(IDGPUAchievedOccupancy, "Achieved occupancy", "", KindRatio)(ratio(w.Warps, w.WarpSlots))
	}
	tree.add(IDGPUInstructions, "Device instructions", "", KindCount)(w.Instructions, true)
	if w.HasDRAM {
		tree.add(IDGPUDRAMBytes, "DRAM bytes", "", KindCount)(w.DRAMBytes, true)
		tree.add(IDGPUDRAMBandwidthGBs, "DRAM bandwidth (GB/s)", "", KindRatio)(w.DRAMGBs, true)
	}
}
