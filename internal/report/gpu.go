package report

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// topGPUKernels is how many kernels the text report lists.
const topGPUKernels = 10

// gpuKernelNameWidth bounds a kernel name in the text table (C++ names
// are long); longer names are cut with "…".
const gpuKernelNameWidth = 60

// deviceLabels are TALP's labels of the device tree in its "NVIDIA
// Device" block, by metric id.
var deviceLabels = map[string]string{
	pop.IDGPUParallelEfficiency: "Parallel efficiency",
}

// gpuOtherModels is the line the text report of models pop-hybrid and
// pop-additive prints for a run with GPU device data: their trees (seed
// 001) have no GPU branch.
const gpuOtherModels = "GPU:       no GPU metrics in this model (its tree has no GPU branch): host time inside the CUDA runtime is non-useful time here; the device tree is model talp's (--model talp)"

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

// textDevice writes TALP's "### NVIDIA Device" block: the device tree of
// the region.
func textDevice(b *bufio.Writer, xs []pop.Metric) {
	if len(xs) == 0 {
		return
	}
	b.WriteString("### NVIDIA Device\n")
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
// the program did not use CUDA.
func textGPU(m *measure.Measurement) string {
	g := m.GPU
	if len(m.GPUDevices) == 0 && (g == nil || g.Unused()) {
		return "" // no GPU in the run: its report is as without GPU support
	}
	if len(m.GPUDevices) == 0 {
		return "no device metrics: " + m.GPUNotMeasured()
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
	var how []string
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
	if g.Clock != "" {
		how = append(how, "clock "+g.Clock)
	}
	if len(how) > 0 {
		line += " (" + strings.Join(how, ", ") + ")"
	}
	if g.DroppedRecords > 0 {
		line += fmt.Sprintf(" · %s dropped: device times are lower bounds", plural(int(min(g.DroppedRecords, 1<<31)), "activity record", ""))
	}
	if g.RejectedRecords > 0 {
		line += fmt.Sprintf(" · %s rejected as implausible", plural(int(min(g.RejectedRecords, 1<<31)), "activity record", ""))
	}
	return line
}

// deviceName names device d for a table: "0 NVIDIA H100" or "0".
func deviceName(m *measure.Measurement, d int) string {
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
				avg = Duration(k.TimeNS / k.Count)
			}
			pct := "-"
			if total > 0 {
				pct = fmt.Sprintf("%.1f%%", 100*float64(k.TimeNS)/total)
			}
			rows = append(rows, []string{cut(safetext.Text(k.Name), gpuKernelNameWidth), fmt.Sprint(k.Device), fmt.Sprint(k.Count),
				Duration(k.TimeNS), avg, Duration(k.MinNS), Duration(k.MaxNS), pct})
		}
		t := GPUTable{Title: fmt.Sprintf("Top GPU kernels (whole run, all processes; %s of kernels listed)", Duration(int64(total))), Rows: rows}
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
				bw = bytesSI(float64(c.Bytes)/(float64(c.TimeNS)/1e9)) + "/s"
			}
			rows = append(rows, []string{safetext.Text(c.Kind), fmt.Sprint(c.Count), bytesSI(float64(c.Bytes)), Duration(c.TimeNS), bw})
		}
		out = append(out, GPUTable{Title: "GPU memory operations (whole run, all processes and devices)", Rows: rows})
	}
	if len(m.GPUIdle) > 0 {
		var T int64
		if g, ok := m.Global(); ok {
			for _, a := range g.Processes {
				T = max(T, a.ElapsedNS)
			}
		}
		rows := [][]string{{"Device", "Gaps", "Idle", "Longest", "% of Global"}}
		for _, g := range m.GPUIdle {
			pct := "-"
			if T > 0 {
				pct = fmt.Sprintf("%.1f%%", 100*float64(g.IdleNS)/float64(T))
			}
			rows = append(rows, []string{deviceName(m, g.Device), fmt.Sprint(g.Gaps), Duration(g.IdleNS), Duration(g.LongestNS), pct})
		}
		out = append(out, GPUTable{Title: "GPU idle gaps (between device activity inside Global)", Rows: rows})
	}
	return out
}

// textGPUTables writes the tables of GPUTables.
func textGPUTables(b *bufio.Writer, m *measure.Measurement) {
	for _, t := range GPUTables(m) {
		fmt.Fprintf(b, "\n%s\n", t.Title)
		writeTable(b, t.Rows)
		if t.More != "" {
			fmt.Fprintf(b, "  (%s)\n", t.More)
		}
	}
}

// BytesSI formats a byte count with a decimal prefix and the unit, as the
// reports write bytes: "512 B", "2.00 GB".
func BytesSI(v float64) string { return bytesSI(v) }

// bytesSI formats a byte count with a decimal prefix: "512 B", "2.00 GB".
func bytesSI(v float64) string {
	units := []string{" B", " kB", " MB", " GB", " TB", " PB", " EB"}
	i := 0
	for v >= 999.5 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f%s", v, units[i])
	}
	return fmt.Sprintf("%.2f%s", v, units[i])
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
// file's object), "gpu_devices", "gpu_kernels", "gpu_copies" and
// "gpu_idle" as the measurement has them; nothing for a run without.
func appendGPUJSON(out object, m *measure.Measurement) object {
	if m == nil {
		return out
	}
	if m.GPU != nil {
		out = append(out, member{"gpu", m.GPU})
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
