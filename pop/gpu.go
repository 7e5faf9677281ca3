package pop

import "github.com/popmon/popmon/measure"

// ReasonNoGPUKernels is why the device load balance of a region is not
// measured: no device ran a kernel while the region was open, so the
// ratio is 0/0.
const ReasonNoGPUKernels = "no GPU kernel ran in this region"

// reasonNoDeviceWork is why the device communication efficiency of a
// region is not measured: no device did anything (kernels, copies,
// memsets) while the region was open.
const reasonNoDeviceWork = "no GPU activity in this region"

// DeviceTimes are the device inputs of one region (POP-METRICS.md §5):
// per device d, Gu_d and Ga_d are the maxima over the processes that used
// d of their useful (kernel union) and active (kernels ∪ copies ∪ memsets)
// times, so that processes sharing one GPU count it once.
type DeviceTimes struct {
	// N is the number of GPU devices of the run (run-wide, not only those
	// active in the region).
	N int
	// SumUsefulNS is Σ_d Gu_d (TALP's gpuUsefulTime).
	SumUsefulNS float64
	// SumActiveNS is Σ_d Ga_d; SumActiveNS − SumUsefulNS is TALP's
	// gpuCommunicationTime.
	SumActiveNS float64
	// MaxUsefulNS is max_d Gu_d (TALP's maxGpuUsefulTime, which DLB takes
	// per process).
	MaxUsefulNS float64
	// MaxActiveNS is max_d Ga_d (TALP's maxGpuActiveTime).
	MaxActiveNS float64
}

// RegionDeviceTimes merges the per-process device accounts of region g
// over the n devices of the run: per device the maximum over processes
// (a shared GPU is counted once; its merged time is a lower bound of its
// busy time when the processes' work did not overlap), then the sums and
// maxima over devices. Accounts naming a device outside 0 … n−1 are
// ignored (Validate rejects them).
func RegionDeviceTimes(a *measure.RegionSummary, n int) DeviceTimes {
	dt := DeviceTimes{N: n}
	if a == nil || n <= 0 {
		return dt
	}
	gu := make([]int64, n)
	ga := make([]int64, n)
	for _, d := range a.Sum.GPUDevices {
		if d.Device < 0 || d.Device >= n {
			continue
		}
		gu[d.Device] = max(gu[d.Device], d.UsefulNS)
		ga[d.Device] = max(ga[d.Device], d.ActiveNS, d.UsefulNS)
	}
	for d := range n {
		dt.SumUsefulNS += float64(gu[d])
		dt.SumActiveNS += float64(ga[d])
		dt.MaxUsefulNS = max(dt.MaxUsefulNS, float64(gu[d]))
		dt.MaxActiveNS = max(dt.MaxActiveNS, float64(ga[d]))
	}
	return dt
}

// addDeviceTree adds the device tree of model talp (POP-METRICS.md §5) to
// tree, with T the region's elapsed time:
//
//	gpu_parallel_efficiency      = Σ Gu / (T·N)  = LB × Comm × Orch
//	  gpu_load_balance           = Σ Gu / (N · max Gu)
//	  gpu_communication_efficiency = max Gu / max Ga
//	  gpu_orchestration_efficiency = max Ga / T
//
// A ratio whose denominator is 0 is not measured (DLB writes 0).
func addDeviceTree(tree *builder, dt DeviceTimes, T float64) {
	if dt.N <= 0 || !(T > 0) {
		return
	}
	N := float64(dt.N)
	tree.add(IDGPUParallelEfficiency, "GPU Parallel efficiency", "", KindEfficiency)(ratio(dt.SumUsefulNS, T*N))
	lbWhy, commWhy := "", ""
	if dt.MaxUsefulNS <= 0 {
		lbWhy = ReasonNoGPUKernels
	}
	if dt.MaxActiveNS <= 0 {
		commWhy = reasonNoDeviceWork
	}
	tree.addOr(IDGPULoadBalance, "Load Balance", IDGPUParallelEfficiency, KindEfficiency, lbWhy)(ratio(dt.SumUsefulNS, N*dt.MaxUsefulNS))
	tree.addOr(IDGPUCommunicationEfficiency, "Communication efficiency", IDGPUParallelEfficiency, KindEfficiency, commWhy)(ratio(dt.MaxUsefulNS, dt.MaxActiveNS))
	tree.add(IDGPUOrchestrationEfficiency, "Orchestration efficiency", IDGPUParallelEfficiency, KindEfficiency)(ratio(dt.MaxActiveNS, T))
}
