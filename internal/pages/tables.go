package pages

import (
	"fmt"
	"html/template"
	"sort"

	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Table is a table of a run shown on an experiment page: the MPI call
// profile, the GPU tables, the per-process quantiles, and the wait states
// of a traced run.
type Table struct {
	// Title is shown above the table; Note under it.
	Title, Note string
	// Head are the column headers (with units); Rows the cells, the first
	// column left-aligned, the others right-aligned (numbers).
	Head []string
	Rows [][]string
	// Chart, when set, is an SVG drawn under the table.
	Chart template.HTML
}

// maxMPICallRows is the most MPI functions listed.
const maxMPICallRows = 20

// mpiCallTable is the MPI call profile of run m: per function the calls,
// the time, its share of MPI time, the extremes over processes and, when
// the library counted them, the bytes and the message-size histogram.
func mpiCallTable(m *measure.Measurement) *Table {
	if m == nil || len(m.MPICalls) == 0 {
		return nil
	}
	calls := append([]measure.MPICall(nil), m.MPICalls...)
	sort.SliceStable(calls, func(i, j int) bool {
		if calls[i].TimeNS != calls[j].TimeNS {
			return calls[i].TimeNS > calls[j].TimeNS
		}
		return calls[i].Name < calls[j].Name
	})
	var total float64
	bytes := false
	var hist []int64
	for _, c := range calls {
		total += float64(c.TimeNS)
		if c.BytesSent > 0 || c.BytesRecv > 0 || len(c.SizeHist) > 0 {
			bytes = true
		}
		for k, n := range c.SizeHist {
			for len(hist) <= k {
				hist = append(hist, 0)
			}
			hist[k] += n
		}
	}
	t := &Table{Title: fmt.Sprintf("MPI calls (whole run, all processes; %s s in MPI)", units.SecondsCellFine(total/1e9)),
		Head: []string{"Function", "Calls", "Time (s, Σ processes)", "% of MPI time", "Min per process (s)", "Max per process (s)", "Rank with max"}}
	if bytes {
		t.Head = append(t.Head, "Bytes sent", "Bytes received", "Mean message size")
	}
	shown := calls[:min(len(calls), maxMPICallRows)]
	for _, c := range shown {
		pct := "-"
		if total > 0 {
			pct = fmt.Sprintf("%.1f %%", 100*float64(c.TimeNS)/total)
		}
		row := []string{c.Name, fmt.Sprint(c.Calls), units.SecondsCellFine(float64(c.TimeNS) / 1e9), pct,
			units.SecondsCellFine(float64(c.MinTimeNS) / 1e9), units.SecondsCellFine(float64(c.MaxTimeNS) / 1e9), fmt.Sprint(c.MaxRank)}
		if bytes {
			var msgs int64
			for _, n := range c.SizeHist {
				msgs += n
			}
			mean := "-"
			if msgs > 0 {
				mean = units.BytesSI(float64(c.BytesSent) / float64(msgs))
			}
			row = append(row, units.BytesSI(float64(c.BytesSent)), units.BytesSI(float64(c.BytesRecv)), mean)
		}
		t.Rows = append(t.Rows, row)
	}
	if rest := len(calls) - len(shown); rest > 0 {
		t.Note = fmt.Sprintf("… and %d more functions.", rest)
	}
	if !bytes {
		t.Note += " Bytes and message sizes: not counted in this run (traced runs and newer libpopmon count them)."
	}
	if len(hist) > 0 {
		labels := make([]string, len(hist))
		vals := make([]float64, len(hist))
		for k, n := range hist {
			labels[k] = sizeBucket(k)
			vals[k] = float64(n)
		}
		t.Chart = template.HTML(BarChart("Message sizes: messages per size (all calls, all processes)", "message size (bytes, power-of-two buckets)", "messages", labels, vals))
	}
	return t
}

// sizeBucket names bucket k of a message-size histogram: 0 bytes, then
// 2^(k−1) to 2^k − 1 bytes ("1", "2–3", "4–7", "1Ki–2Ki").
func sizeBucket(k int) string {
	if k == 0 {
		return "0"
	}
	lo := int64(1) << (k - 1)
	if k == 1 {
		return "1"
	}
	return fmt.Sprintf("%s–%s", sizeShort(lo), sizeShort(2*lo-1))
}

// sizeShort writes a byte count with binary prefixes where exact.
func sizeShort(v int64) string {
	switch {
	case v >= 1<<30 && v%(1<<30) == 0:
		return fmt.Sprintf("%dGi", v>>30)
	case v >= 1<<20 && v%(1<<20) == 0:
		return fmt.Sprintf("%dMi", v>>20)
	case v >= 1<<10 && v%(1<<10) == 0:
		return fmt.Sprintf("%dKi", v>>10)
	case v >= 1<<20:
		return fmt.Sprintf("%.0fMi", float64(v+1)/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.0fKi", float64(v+1)/(1<<10))
	}
	return fmt.Sprint(v)
}

// gpuTables are the GPU tables of run r in region name: the host and
// device efficiency trees side by side, then popmon report's kernel, copy
// and idle tables.
func gpuTables(r *runs.Run, name string) []Table {
	m := r.Measurement
	if m == nil || (len(m.GPUDevices) == 0 && len(m.GPUKernels) == 0) {
		return nil
	}
	var out []Table
	if g, ok := r.Region(name); ok {
		t := Table{Title: "GPU: host and device efficiency trees (model talp)", Head: []string{"Efficiency (0–1)", "Tree", "Value"}}
		var host, device [][]string
		for _, n := range g.Tree {
			row := []string{indentName(n.Depth, n.Name), "host", fmt.Sprintf("%.2f", g.Metrics[n.ID])}
			if isDeviceID(n.ID) {
				row[1] = "device"
				device = append(device, row)
				continue
			}
			host = append(host, row)
		}
		// The device computational metrics (device counters), where sampled.
		for _, c := range []struct{ id, name, format string }{
			{pop.IDGPUIPC, "Average device IPC", "%.2f"}, {pop.IDGPUSMFrequencyGHz, "Average SM frequency (GHz)", "%.2f"},
			{pop.IDGPUSMUtilization, "SM utilization", "%.2f"}, {pop.IDGPUAchievedOccupancy, "Achieved occupancy", "%.2f"},
			{pop.IDGPUDRAMBandwidthGBs, "DRAM bandwidth (GB/s)", "%.1f"},
		} {
			if v, ok := g.Metrics[c.id]; ok && len(device) > 0 {
				device = append(device, []string{c.name, "device counters", fmt.Sprintf(c.format, v)})
			}
		}
		if len(device) > 0 {
			t.Rows = append(host, device...)
			t.Note = report.GPUNotValidated(m)
			out = append(out, t)
		}
	}
	for _, gt := range report.GPUTables(m) {
		if len(gt.Rows) == 0 {
			continue
		}
		out = append(out, Table{Title: gt.Title, Head: gt.Rows[0], Rows: gt.Rows[1:], Note: gt.More})
	}
	return out
}

// isDeviceID reports whether a metric belongs to the GPU device tree.
func isDeviceID(id string) bool {
	switch id {
	case pop.IDGPUParallelEfficiency, pop.IDGPULoadBalance, pop.IDGPUCommunicationEfficiency, pop.IDGPUOrchestrationEfficiency:
		return true
	}
	return false
}

// indentName indents a tree node's name by its depth (no-break spaces).
func indentName(depth int, name string) string {
	s := ""
	for i := 0; i < depth; i++ {
		s += "\u00a0\u00a0"
	}
	return s + name
}

// quantiles are the per-process quantiles shown at scale.
var quantiles = []struct {
	q    float64
	head string
}{{0.1, "10 %"}, {0.25, "25 %"}, {0.5, "median"}, {0.75, "75 %"}, {0.9, "90 %"}}

// distributionTable is the table of per-process distributions at scale:
// the extremes with their ranks and the quantiles (from the histogram of
// measure.HistogramBins bins: each within one bin of the true value).
func distributionTable(useful, mpi measure.Distribution, processes int) Table {
	t := Table{Title: fmt.Sprintf("Per process at scale: %d processes", processes),
		Head: []string{"Time per process (s, Σ over its CPUs)", "Min", "Rank with min"},
		Note: fmt.Sprintf("Quantiles are estimated from a histogram of %d equal bins between the extremes (the middle of the bin); the extremes and their ranks are exact.", measure.HistogramBins)}
	for _, q := range quantiles {
		t.Head = append(t.Head, q.head)
	}
	t.Head = append(t.Head, "Max", "Rank with max")
	for _, d := range []struct {
		name string
		d    measure.Distribution
	}{{"useful", useful}, {"MPI", mpi}} {
		row := []string{d.name, units.SecondsCellFine(float64(d.d.Min) / 1e9), fmt.Sprint(d.d.MinRank)}
		for _, q := range quantiles {
			row = append(row, units.SecondsCellFine(d.d.Quantile(q.q)/1e9))
		}
		row = append(row, units.SecondsCellFine(float64(d.d.Max)/1e9), fmt.Sprint(d.d.MaxRank))
		t.Rows = append(t.Rows, row)
	}
	return t
}
