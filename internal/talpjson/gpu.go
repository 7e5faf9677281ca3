package talpjson

import (
	"fmt"
	"math"
	"strings"

	"github.com/popmon/popmon/measure"
)

// gpuTimes are a region's GPU device times as DLB writes them:
// gpuUsefulTime (Σ over devices of the node-merged useful time),
// gpuCommunicationTime (likewise, copy time not under kernels),
// maxGpuUsefulTime and maxGpuActiveTime (DLB: maxima over processes of
// the process's sums over its devices; popmon's own files: maxima over
// devices).
type gpuTimes struct {
	useful, comm, maxUseful, maxActive int64
}

func (g gpuTimes) any() bool {
	return g.useful > 0 || g.comm > 0 || g.maxUseful > 0 || g.maxActive > 0
}

// gpuDevices returns the synthesized GPU devices of a file with n GPUs
// (numGpus) whose regions have device times; nil when none has. A file
// with device times but numGpus 0 gets one device per the largest
// region numGpus, at least 1.
func gpuDevices(regs []region, n int) []measure.GPUDevice {
	n = deviceCount(regs, n)
	if n == 0 {
		return nil
	}
	devs := make([]measure.GPUDevice, n)
	for d := range devs {
		devs[d] = measure.GPUDevice{Index: d, UUID: fmt.Sprintf("talp-json-gpu-%d", d)}
	}
	return devs
}

// deviceCount returns how many devices [gpuDevices] synthesizes.
func deviceCount(regs []region, n int) int {
	active, most := false, 0
	for i := range regs {
		active = active || regs[i].gpuTimes.any()
		most = max(most, regs[i].gpus)
	}
	if !active {
		return 0
	}
	if n < 1 {
		n = max(most, 1)
	}
	return n
}

// addGPUAccounts synthesizes the per-device accounts of region g from the
// region's DLB times so that model talp's device tree (per-device maxima,
// N = n run-wide) gives DLB's values where DLB's inputs are consistent:
// device 0 has maxGpuUsefulTime useful and maxGpuActiveTime active time,
// the region's other devices (numGpus, at most n) share the rest of
// gpuUsefulTime and gpuUsefulTime + gpuCommunicationTime evenly, each
// kept within the maxima. Maxima missing from the file (0) are those of
// an even split. It returns the accounts with some time, by device, and
// false when the times could not be honoured exactly (the file's maxima
// are below its sums over one device, or above them).
func gpuAccounts(r *region, n int) ([]measure.GPUDeviceAccount, bool) {
	t := r.gpuTimes
	if !t.any() || n < 1 {
		return nil, true
	}
	k := regionGPUs(r, n)
	active := satAdd64(t.useful, t.comm)
	if t.maxUseful <= 0 { // not in the file: the devices share evenly
		t.maxUseful = ceilDiv(t.useful, int64(k))
	}
	if t.maxActive <= 0 {
		t.maxActive = max(ceilDiv(active, int64(k)), t.maxUseful)
	}
	u0 := min(t.maxUseful, t.useful)
	a0 := max(min(t.maxActive, active), u0)
	exact := u0 == t.maxUseful && a0 == t.maxActive
	if k == 1 {
		u0, a0 = t.useful, max(active, t.useful)
		exact = exact && u0 == t.maxUseful && a0 == t.maxActive
	}
	useful := []int64{u0}
	act := []int64{a0}
	if k > 1 {
		restU := splitInt64(t.useful-u0, ones(k-1))
		restA := splitInt64(max(active-a0, 0), ones(k-1))
		for d := range k - 1 {
			u := min(restU[d], u0)
			a := min(max(restA[d], u), max(a0, u))
			exact = exact && u == restU[d] && a == restA[d]
			useful = append(useful, u)
			act = append(act, a)
		}
	}
	var devs []measure.GPUDeviceAccount
	for d := range k {
		if useful[d] == 0 && act[d] == 0 {
			continue
		}
		devs = append(devs, measure.GPUDeviceAccount{Device: d, UsefulNS: useful[d], ActiveNS: act[d]})
	}
	return devs, exact
}

// regionGPUs is the number of devices DLB counted in region r (its
// numGpus, at most the run's n; n when the region does not say).
func regionGPUs(r *region, n int) int {
	if r.gpus > 0 {
		return min(r.gpus, n)
	}
	return n
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// gpuDisagreement returns, for a region whose file has GPU efficiencies,
// the keys whose written value differs from what DLB's formulas give with
// the synthesized device accounts devs (one per device) and the region's numGpus (more than DLB's
// rounding to 2 decimals), as
// "gpuLoadBalance 1.00 (times: 0.50)"; nil when all agree.
func gpuDisagreement(devs []measure.GPUDeviceAccount, r *region, n int) []string {
	if n < 1 || !(r.elapsed > 0) {
		return nil
	}
	var sum, mu, ma float64
	for _, d := range devs {
		sum += float64(d.UsefulNS)
		mu = max(mu, float64(d.UsefulNS))
		ma = max(ma, float64(d.ActiveNS))
	}
	T, N := float64(r.elapsed), float64(regionGPUs(r, n)) // DLB's N: the region's devices
	// In the order of the device tree: parallel efficiency, load balance,
	// communication and orchestration efficiency.
	ours := []float64{sum / (T * N), sum / (N * mu), mu / ma, ma / T}
	var out []string
	for i, e := range gpuEfficiencies {
		v := r.own(e.ID)
		if math.IsNaN(v) || math.IsNaN(ours[i]) || math.IsInf(ours[i], 0) {
			continue
		}
		if math.Abs(v-ours[i]) > 0.0051 {
			out = append(out, fmt.Sprintf("%s %.2f (times: %.2f)", e.Key, v, ours[i]))
		}
	}
	return out
}

// satAdd64 returns a + b for non-negative values, saturating.
func satAdd64(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// gpuNotes says how the GPU devices and their accounts were synthesized,
// and where the file's times do not give its own GPU efficiencies.
func gpuNotes(n, fileGPUs int, inexact, differ []string) []string {
	notes := []string{fmt.Sprintf("GPU devices: %s synthesized (numGpus%s); per region, device 0 holds maxGpuUsefulTime and maxGpuActiveTime and the region's other devices share the rest of gpuUsefulTime and gpuUsefulTime + gpuCommunicationTime evenly, so that the talp model's device tree (maxima per device, N run-wide) gives DLB's values for one GPU per process. DLB takes its maxima per process (a process driving several GPUs is one \"device\" to it) and counts only the devices active in a region.",
		plural(n, "device", "devices"), ifStr(fileGPUs < 1, " was 0 but the file has device times", ""))}
	if len(inexact) > 0 {
		notes = append(notes, fmt.Sprintf("GPU times that no per-device split honours exactly (maxima above the sums, or sums above N × maxima) in %s: the device accounts were clipped.", regionList(inexact)))
	}
	if len(differ) > 0 {
		notes = append(notes, fmt.Sprintf("GPU efficiencies in the file do not follow from its times (DLB's formulas with numGpus; talp-pages' multi-GPU samples were hand-edited this way): %s. popmon reports what the times give.", strings.Join(differ, "; ")))
	}
	return notes
}
