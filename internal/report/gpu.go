package report

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// topGPUKernels is how many kernels the text report lists.
const topGPUKernels = 10

// gpuKernelNameWidth bounds a kernel name in the text table (C++ names
// are long); longer names are cut with "…".
const gpuKernelNameWidth = 60

// AMDValidated says whether popmon's AMD GPU measurement (rocprofiler-sdk)
// has been validated on AMD hardware. Until scripts/gpu-validate.sh
// --vendor amd has passed on an AMD GPU (its scenarios measured against
// their expected values, as for NVIDIA), it is false and every report of
// an AMD run, and popmon doctor where it finds a HIP runtime, says
// [AMDNotValidated]. Flip it, with the validation's record in
// docs/metrics.md ("AMD GPUs"), once that has passed.
const AMDValidated = false

// AMDNotValidated is the sentence reports and popmon doctor print while
// [AMDValidated] is false.
const AMDNotValidated = "AMD measurement is not yet validated on AMD hardware"

// deviceLabels are TALP's labels of the device tree in its "NVIDIA
// Device" (or "AMD Device") block, by metric id.
var deviceLabels = map[string]string{
	pop.IDGPUParallelEfficiency: "Parallel efficiency",
}

// deviceBlock is the title of the text report's device tree block, as
// TALP writes it: "NVIDIA Device" or "AMD Device" by the vendor of the
// run's devices (NVIDIA without a measurement, and for devices that do not
// say: files before AMD support, imported DLB/TALP files). The device tree
// is computed over all devices of the run, so a run with devices of both
// vendors has one block, "GPU Device (NVIDIA and AMD)" (TALP's title when
// it does not know the vendor, with both named).
func deviceBlock(m *pop.Run) string {
	if m == nil {
		return "NVIDIA Device"
	}
	switch v := m.GPUVendors; {
	case len(v) > 1:
		return "GPU Device (NVIDIA and AMD)"
	case len(v) == 1 && v[0] == measure.GPUVendorAMD:
		return "AMD Device"
	}
	return "NVIDIA Device"
}

// hasAMD reports whether the run measured, or tried to measure, AMD GPUs:
// an AMD device, or a "gpu" object of rocprofiler-sdk or with HIP's
// versions.
func hasAMD(m *pop.Run) bool {
	if m == nil {
		return false
	}
	for i := range m.GPUDevices {
		if m.GPUDevices[i].VendorOrNVIDIA() == measure.GPUVendorAMD {
			return true
		}
	}
	return m.GPU.Vendor() == measure.GPUVendorAMD
}

// CountersValidated says whether popmon's GPU device counters (CUPTI's PM
// sampling) have been validated on an NVIDIA GPU. Until
// scripts/gpu-validate.sh's scenario C has passed on one (popmon's counters
// against Nsight Compute's), it is false and every report of a run with
// device counters says [CountersNotValidated]. Flip it, with the
// validation's record in BENCHMARKS.md and docs/metrics.md, once it has.
const CountersValidated = false

// CountersNotValidated is the sentence reports print while
// [CountersValidated] is false.
const CountersNotValidated = "device counters are not yet validated on a GPU (checked against a fake CUPTI only)"

// countersNotValidated returns [CountersNotValidated] for a run with
// device counters while [CountersValidated] is false, else "".
func countersNotValidated(m *pop.Run) string {
	if CountersValidated || m == nil || m.GPU == nil || m.GPU.Counters == nil || !m.GPU.Counters.Available {
		return ""
	}
	return CountersNotValidated
}

// GPUNotValidated returns what of the run's GPU measurement is not yet
// validated on hardware ([AMDNotValidated], [CountersNotValidated], joined
// by "; "), else "": what popmon pages notes under the run's GPU tables
// and the JSON report's gpu_not_validated.
func GPUNotValidated(m *measure.Measurement) string {
	return gpuNotValidated(pop.NewRun(m))
}

// gpuNotValidated is [GPUNotValidated] of a report's run.
func gpuNotValidated(m *pop.Run) string {
	var out []string
	for _, s := range []string{amdNotValidated(m), countersNotValidated(m)} {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

// amdNotValidated returns [AMDNotValidated] for a run with AMD GPUs while
// [AMDValidated] is false, else "".
func amdNotValidated(m *pop.Run) string {
	if AMDValidated || !hasAMD(m) {
		return ""
	}
	return AMDNotValidated
}

// gpuOtherModels is the line the text report of models pop-hybrid and
// pop-additive prints for a run with GPU device data: their trees (seed
// 001) have no GPU branch. %s is the runtime ([gpuRuntimeName]).
const gpuOtherModels = "GPU:       no GPU metrics in this model (its tree has no GPU branch): host time inside the %s is non-useful time here; the device tree is model talp's (--model talp)"

// gpuRuntimeName names the GPU runtime of the run's devices: "CUDA
// runtime", "HIP runtime" or, with both vendors, "CUDA and HIP runtimes".
func gpuRuntimeName(m *pop.Run) string {
	switch deviceBlock(m) {
	case "AMD Device":
		return "HIP runtime"
	case "NVIDIA Device":
		return "CUDA runtime"
	}
	return "CUDA and HIP runtimes"
}

// isDevice reports whether x belongs to the device tree of model talp.
func isDevice(x pop.Metric) bool {
	switch x.ID {
	case pop.IDGPUParallelEfficiency, pop.IDGPULoadBalance, pop.IDGPUCommunicationEfficiency, pop.IDGPUOrchestrationEfficiency:
		return true
	}
	return false
}

// hasDevice reports whether the region has the device tree.
func hasDevice(r *pop.RegionReport) bool {
	for _, x := range r.Metrics {
		if isDevice(x) {
			return true
		}
	}
	return false
}

// textDevice writes TALP's "### NVIDIA Device" block (title: see
// [deviceBlock]): the device tree of the region.
func textDevice(b *bufio.Writer, title string, xs []pop.Metric) {
	if len(xs) == 0 {
		return
	}
	fmt.Fprintf(b, "### %s\n", title)
	for _, x := range xs {
		name := x.Name
		if l := deviceLabels[x.ID]; l != "" {
			name = l
		}
		textMetric(b, x.Depth, name, x)
	}
}

// textGPU describes the run's GPU measurement for the header: the devices
// and how they were measured, or that the device metrics are missing and
// why; "" for a run without devices whose "gpu" object is absent or says
// the program used no GPU runtime. A run with AMD GPUs ends with
// [AMDNotValidated] while [AMDValidated] is false.
func textGPU(m *pop.Run) string {
	g := m.GPU
	if len(m.GPUDevices) == 0 && (g == nil || g.Unused()) {
		return "" // no GPU in the run: its report is as without GPU support
	}
	line := textGPUDevices(m)
	if s := gpuNotValidated(m); s != "" {
		line += " · " + s
	}
	return line
}

// textGPUDevices is textGPU without the validation sentence.
func textGPUDevices(m *pop.Run) string {
	g := m.GPU
	if len(m.GPUDevices) == 0 {
		return "no device metrics: " + m.GPUNotMeasured
	}
	names := map[string]int{}
	var order []string
	for _, d := range m.GPUDevices {
		n := strings.TrimSpace(d.Name)
		if names[n] == 0 {
			order = append(order, n)
		}
		names[n]++
	}
	var parts []string
	for _, n := range order {
		switch {
		case n == "":
			parts = append(parts, plural(names[n], "device", ""))
		case names[n] > 1:
			parts = append(parts, fmt.Sprintf("%d × %s", names[n], n))
		default:
			parts = append(parts, n)
		}
	}
	line := strings.Join(parts, ", ")
	if g == nil {
		return line
	}
	how, sep := gpuLibrary(g), ", "
	// A run with devices of both vendors: the object has the versions of
	// one vendor's library (that of the first process that measured).
	if vs := m.GPUVendors; len(vs) > 1 {
		var other string
		switch g.Vendor() {
		case measure.GPUVendorAMD:
			how, other = []string{strings.Join(how, ", ") + " on the AMD devices"}, "CUPTI on the NVIDIA devices, versions not recorded"
		case measure.GPUVendorNVIDIA:
			how, other = []string{strings.Join(how, ", ") + " on the NVIDIA devices"}, "rocprofiler-sdk on the AMD devices, versions not recorded"
		}
		if other != "" {
			how, sep = append(how, other), "; "
		}
	}
	if g.Clock != "" {
		how = append(how, "clock "+g.Clock)
	}
	if len(how) > 0 {
		line += " (" + strings.Join(how, sep) + ")"
	}
	if g.DroppedRecords > 0 {
		line += fmt.Sprintf(" · %s dropped: device times are lower bounds", plural(int(min(g.DroppedRecords, 1<<31)), "activity record", ""))
	}
	if g.RejectedRecords > 0 {
		line += fmt.Sprintf(" · %s rejected as implausible", plural(int(min(g.RejectedRecords, 1<<31)), "activity record", ""))
	}
	if c := textGPUCounters(g.Counters); c != "" {
		line += " · " + c
	}
	return line
}

// textGPUCounters describes the device counters for the GPU line: how
// they were sampled, or why there are no device computational metrics;
// "" for files without the "counters" object.
func textGPUCounters(c *measure.GPUCounters) string {
	switch {
	case c == nil:
		return ""
	case !c.Available:
		return "no device computational metrics: " + orDefault(c.Reason, "device counters were not sampled")
	}
	line := "device counters sampled every " + units.Duration(c.PeriodNS)
	if c.Method == measure.GPUCountersMethodPMSampling {
		line += " (CUPTI PM sampling)"
	}
	if c.Overflows > 0 {
		line += fmt.Sprintf(", %s lost: device counters are lower bounds", plural(int(min(c.Overflows, 1<<31)), "sample buffer", ""))
	}
	if c.Reason != "" {
		line += "; some devices not sampled: " + c.Reason
	}
	return line
}

// isDeviceComputational reports whether x is a device computational metric.
func isDeviceComputational(x pop.Metric) bool {
	switch x.ID {
	case pop.IDGPUIPC, pop.IDGPUSMFrequencyGHz, pop.IDGPUSMUtilization, pop.IDGPUAchievedOccupancy,
		pop.IDGPUInstructions, pop.IDGPUDRAMBytes, pop.IDGPUDRAMBandwidthGBs:
		return x.Depth == 0
	}
	return false
}

// deviceComputationalLabels are the labels of the device computational
// metrics in the text report, in the style of the host's.
var deviceComputationalLabels = map[string]string{
	pop.IDGPUIPC:               "Average device IPC",
	pop.IDGPUSMFrequencyGHz:    "Average SM frequency",
	pop.IDGPUSMUtilization:     "SM utilization",
	pop.IDGPUAchievedOccupancy: "Achieved occupancy",
	pop.IDGPUInstructions:      "Number of warp instructions",
	pop.IDGPUDRAMBandwidthGBs:  "DRAM bandwidth (GB/s)",
}

// textDeviceComputational writes the device's computational metrics under
// its block.
func textDeviceComputational(b *bufio.Writer, xs []pop.Metric) {
	textLabelled(b, "Device computational metrics", deviceComputationalLabels, xs)
}

// gpuLibrary describes the vendor library of the "gpu" object and its
// versions: "CUPTI API 130001", "driver 13.0" (NVIDIA, also for an unknown
// vendor: files before AMD support), or "rocprofiler-sdk 0.6.0", "HIP
// runtime 6.4.43482" (AMD).
func gpuLibrary(g *measure.GPU) []string {
	var how []string
	if g.Vendor() == measure.GPUVendorAMD {
		if v := g.ROCprofilerSDKVersion; v > 0 {
			how = append(how, fmt.Sprintf("rocprofiler-sdk %d.%d.%d", v/10000, v%10000/100, v%100))
		} else if g.Method != "" {
			how = append(how, g.Method)
		}
		if v := g.HIPRuntimeVersion; v > 0 {
			how = append(how, "HIP runtime "+hipVersion(v))
		}
		return how
	}
	if g.Method != "" {
		m := strings.ToUpper(g.Method)
		if g.CUPTIVersion > 0 {
			m += fmt.Sprintf(" API %d", g.CUPTIVersion)
		}
		how = append(how, m)
	}
	if g.DriverVersion > 0 {
		how = append(how, fmt.Sprintf("driver %d.%d", g.DriverVersion/1000, g.DriverVersion%1000/10))
	}
	return how
}

// hipVersion writes a HIP version number (10⁷·major + 10⁵·minor + patch,
// as hipRuntimeGetVersion gives it) as "6.4.43482".
func hipVersion(v int64) string {
	return fmt.Sprintf("%d.%d.%d", v/10000000, v%10000000/100000, v%100000)
}

// deviceName names device d for a table: "0 NVIDIA H100" or "0".
func deviceName(m *pop.Run, d int) string {
	if d >= 0 && d < len(m.GPUDevices) && m.GPUDevices[d].Name != "" {
		return fmt.Sprintf("%d %s", d, safetext.Text(m.GPUDevices[d].Name))
	}
	return fmt.Sprint(d)
}

// GPUTable is one of the GPU tables of a run beyond its trees: Rows[0]
// is the header; More, when not empty, says what was left out.
type GPUTable struct {
	Title string
	Rows  [][]string
	More  string
}

// GPUTables returns the GPU tables beyond the tree (as nsys stats gives
// them): the top kernels by device time, the memory operations per kind
// with bytes and bandwidth, and each device's idle gaps inside Global.
// popmon report's text output and popmon pages show them.
func GPUTables(m *measure.Measurement) []GPUTable {
	return gpuTables(pop.NewRun(m))
}

// gpuTables is [GPUTables] of a report's run.
func gpuTables(m *pop.Run) []GPUTable {
	var out []GPUTable
	if len(m.GPUKernels) > 0 {
		var total float64
		for _, k := range m.GPUKernels {
			total += float64(k.TimeNS)
		}
		shown := m.GPUKernels[:min(len(m.GPUKernels), topGPUKernels)]
		rows := [][]string{{"Kernel", "Device", "Calls", "Time", "Avg", "Min", "Max", "% kernel time"}}
		for _, k := range shown {
			avg := "-"
			if k.Count > 0 {
				avg = units.Duration(k.TimeNS / k.Count)
			}
			pct := "-"
			if total > 0 {
				pct = fmt.Sprintf("%.1f%%", 100*float64(k.TimeNS)/total)
			}
			rows = append(rows, []string{cut(safetext.Text(k.Name), gpuKernelNameWidth), fmt.Sprint(k.Device), fmt.Sprint(k.Count),
				units.Duration(k.TimeNS), avg, units.Duration(k.MinNS), units.Duration(k.MaxNS), pct})
		}
		t := GPUTable{Title: fmt.Sprintf("Top GPU kernels (whole run, all processes; %s of kernels listed)", units.Duration(int64(total))), Rows: rows}
		if rest := len(m.GPUKernels) - len(shown); rest > 0 {
			t.More = plural(rest, "more kernel", "")
		}
		out = append(out, t)
	}
	if len(m.GPUCopies) > 0 {
		rows := [][]string{{"Kind", "Count", "Bytes", "Time", "Bandwidth"}}
		for _, c := range m.GPUCopies {
			bw := "-"
			if c.TimeNS > 0 {
				bw = units.BytesSI(float64(c.Bytes)/(float64(c.TimeNS)/1e9)) + "/s"
			}
			rows = append(rows, []string{safetext.Text(c.Kind), fmt.Sprint(c.Count), units.BytesSI(float64(c.Bytes)), units.Duration(c.TimeNS), bw})
		}
		out = append(out, GPUTable{Title: "GPU memory operations (whole run, all processes and devices)", Rows: rows})
	}
	if len(m.GPUIdle) > 0 {
		T := m.GlobalElapsedNS
		rows := [][]string{{"Device", "Gaps", "Idle", "Longest", "% of Global"}}
		for _, g := range m.GPUIdle {
			pct := "-"
			if T > 0 {
				pct = fmt.Sprintf("%.1f%%", 100*float64(g.IdleNS)/float64(T))
			}
			rows = append(rows, []string{deviceName(m, g.Device), fmt.Sprint(g.Gaps), units.Duration(g.IdleNS), units.Duration(g.LongestNS), pct})
		}
		out = append(out, GPUTable{Title: "GPU idle gaps (between device activity inside Global)", Rows: rows})
	}
	return out
}

// textGPUTables writes the tables of GPUTables.
func textGPUTables(b *bufio.Writer, m *pop.Run) {
	for _, t := range gpuTables(m) {
		fmt.Fprintf(b, "\n%s\n", t.Title)
		writeTable(b, t.Rows)
		if t.More != "" {
			fmt.Fprintf(b, "  (%s)\n", t.More)
		}
	}
}

// cut shortens s to at most n runes, ending it with "…" when cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// appendGPUJSON adds the GPU tables of m to a JSON report: "gpu" (the
// file's object), "gpu_not_validated" ([AMDNotValidated], for a run with
// AMD GPUs while [AMDValidated] is false), "gpu_devices", "gpu_kernels",
// "gpu_copies" and "gpu_idle" as the measurement has them; nothing for a
// run without.
func appendGPUJSON(out object, m *pop.Run) object {
	if m == nil {
		return out
	}
	if m.GPU != nil {
		out = append(out, member{"gpu", m.GPU})
	}
	if s := gpuNotValidated(m); s != "" {
		out = append(out, member{"gpu_not_validated", s})
	}
	for _, l := range []struct {
		key string
		n   int
		v   any
	}{
		{"gpu_devices", len(m.GPUDevices), m.GPUDevices},
		{"gpu_kernels", len(m.GPUKernels), m.GPUKernels},
		{"gpu_copies", len(m.GPUCopies), m.GPUCopies},
		{"gpu_idle", len(m.GPUIdle), m.GPUIdle},
	} {
		if l.n > 0 {
			out = append(out, member{l.key, l.v})
		}
	}
	return out
}
