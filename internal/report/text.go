package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// textLabelWidth is the column where values start in the metric tree.
const textLabelWidth = 36

// topMPICalls is how many MPI functions the text report lists.
const topMPICalls = 5

// Text writes the human-readable report: a run header, then per region a
// "### Name: …" header and the metric tree (indentation = hierarchy,
// efficiencies to 2 decimals, "not measured: <reason>" for a metric the
// measurement cannot give, "not measured: see OpenMP above" where the
// reason is that OpenMP was not measured, which the header's "OpenMP:" line
// says once; "No POP metrics: <why>." instead of the tree of a refused
// region), then the top MPI calls and the warnings of the measurement
// (rep.Run; without it those parts are left out). Names and other text from the
// measurement are shown escaped (safetext.Text): no control character,
// terminal escape or invalid UTF-8 reaches w.
func Text(w io.Writer, rep *pop.Report, opts Options) error {
	return textReports(w, []*pop.Report{rep}, opts)
}

// textReports writes the text report of one or more models of the same
// measurement: the run header once, each model's title and region trees in
// turn, then the parts of the measurement that do not depend on the model
// (MPI calls, warnings) once: those of the first report's Run. Every string that came from a file is
// escaped where it is written (so that it cannot start a line or shift a
// column); the whole report then passes safetext.Lines once more, so that
// a line added without escaping cannot reach the terminal raw either.
func textReports(w io.Writer, reps []*pop.Report, opts Options) error {
	run := reps[0].Run
	var doc bytes.Buffer
	b := bufio.NewWriter(&doc)
	refused := map[string]bool{} // regions printed with their refusal
	for k, rep := range reps {
		regs, err := regions(rep, opts)
		if err != nil {
			return err
		}
		// Why OpenMP was not measured is in the header (the run's
		// "OpenMP:" line): the trees refer to it.
		regs = ompReferenced(regs, run, ompReasonRefText)
		if k == 0 {
			textHeader(b, rep, run)
		} else {
			b.WriteString("\n")
			textTitle(b, rep)
		}
		if rep.Refused != "" {
			fmt.Fprintf(b, "\nNo POP metrics: %s.\n", safetext.Text(rep.Refused))
			continue
		}
		if rep.Model != pop.ModelTALP && run != nil && len(run.GPUDevices) > 0 {
			fmt.Fprintf(b, gpuOtherModels+"\n", gpuRuntimeName(run))
		}
		textSerTransfer(b, rep)
		for i := range regs {
			b.WriteString("\n")
			textRegion(b, &regs[i], deviceBlock(run))
			if regs[i].Refused != "" {
				refused[regs[i].Name] = true
			}
		}
	}
	if run != nil {
		textMPICalls(b, run.MPICalls)
		textOMPRegions(b, run, topOMPRegions)
		textGPUTables(b, run)
		// Accounts invariant first; a region refused for it has said so
		// in its place.
		warnings := append(accountWarnings(run, refused), reportWarnings(run)...)
		if len(warnings) > 0 {
			b.WriteString("\nWarnings\n")
			for _, l := range warnings {
				fmt.Fprintf(b, "  %s\n", safetext.Text(l))
			}
		}
	}
	if err := b.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, safetext.Lines(doc.String()))
	return err
}

// textTitle writes the first line of a model's report.
func textTitle(b *bufio.Writer, rep *pop.Report) {
	model := string(rep.Model)
	if d := rep.Model.Description(); d != "" {
		model += " (" + d + ")"
	}
	fmt.Fprintf(b, "popmon POP metrics, model %s\n", model)
}

func textHeader(b *bufio.Writer, rep *pop.Report, m *pop.Run) {
	textTitle(b, rep)
	if rep.Source != "" {
		fmt.Fprintf(b, "Source:    %s\n", safetext.Text(rep.Source))
	}
	if m == nil {
		return
	}
	if len(m.Command) > 0 {
		fmt.Fprintf(b, "Command:   %s\n", safetext.Text(strings.Join(m.Command, " ")))
	}
	run := []string{}
	if m.Timestamp != "" {
		run = append(run, safetext.Text(m.Timestamp))
	}
	if job := m.Launcher.Job(); job != "" {
		run = append(run, safetext.Text(job))
	}
	r := m.Resources
	res := plural(r.Processes, "process", "processes")
	if in := m.Incomplete; in != nil {
		res = fmt.Sprintf("%d of %d processes", r.Processes, in.Processes)
	}
	res += " on " + plural(r.Nodes, "node", "") + ", " + plural(r.CPUs, "CPU", "")
	if r.GPUs > 0 {
		res += ", " + plural(r.GPUs, "GPU", "")
	}
	run = append(run, res)
	if m.MPI != nil {
		lib, _, _ := strings.Cut(m.MPI.Library, ",")
		run = append(run, safetext.Text(strings.TrimSpace(lib)))
	} else {
		run = append(run, "no MPI")
	}
	fmt.Fprintf(b, "Run:       %s\n", strings.Join(run, " · "))
	if pa := m.Partial; pa != nil {
		fmt.Fprintf(b, "PARTIAL:   %s\n", safetext.Text(pa.Sentence()))
	}
	if line := textLewi(m); line != "" {
		fmt.Fprintf(b, "LeWI:      %s\n", safetext.Text(line))
		fmt.Fprintf(b, "           %s\n", safetext.Text(textLewiHeld(m)))
	}
	if line := textDrom(m); line != "" {
		fmt.Fprintf(b, "DROM:      %s\n", safetext.Text(line))
	}
	if line := textOpenMP(m.OpenMP); line != "" {
		fmt.Fprintf(b, "OpenMP:    %s\n", safetext.Text(line))
	}
	fmt.Fprintf(b, "Counters:  %s\n", safetext.Text(textCounters(m)))
	if line := textGPU(m); line != "" {
		fmt.Fprintf(b, "GPU:       %s\n", safetext.Text(line))
	}
	if m.Tool.Version != "" {
		line := fmt.Sprintf("%s %s, clock %s", orDefault(m.Tool.Name, "popmon"), m.Tool.Version, orDefault(m.Clock.Source, "unknown"))
		fmt.Fprintf(b, "Measured:  %s\n", safetext.Text(line))
	}
	if src := m.Source; src != nil {
		what := map[string]string{measure.SourceParaver: "Paraver trace", measure.SourceTALP: "DLB/TALP JSON"}[src.Kind]
		line := strings.TrimSpace(orDefault(what, src.Kind) + " " + src.Path)
		if src.Tool != "" {
			line += " (" + src.Tool + ")"
		}
		fmt.Fprintf(b, "Imported:  %s\n", safetext.Text(line))
		for _, n := range src.Notes {
			fmt.Fprintf(b, "           - %s\n", safetext.Text(n))
		}
	}
}

// textLewi is the LeWI line of the header ("" when LeWI was not on): the CPU
// time lent and borrowed, in total and per process (up to 8).
func textLewi(m *pop.Run) string {
	l := m.Lewi
	if l == nil {
		return ""
	}
	s := fmt.Sprintf("on in %s: %s CPU time lent, %s borrowed", plural(l.Processes, "process", "processes"),
		units.DurationInSeconds(l.LentCPUNS), units.DurationInSeconds(l.BorrowedCPUNS))
	if n := len(m.LewiProcesses); n > 0 && n <= 8 {
		parts := make([]string, n)
		for i, p := range m.LewiProcesses {
			parts[i] = fmt.Sprintf("rank %d lent %s, borrowed %s", p.Rank, units.DurationInSeconds(p.LentCPUNS),
				units.DurationInSeconds(p.BorrowedCPUNS))
		}
		s += " (" + strings.Join(parts, "; ") + ")"
	}
	return s
}

// textLewiHeld is the LeWI header's second line: the CPUs the processes
// held over time and what that CPU time went to, or why that is not known.
func textLewiHeld(m *pop.Run) string {
	ranks := make([]int, len(m.LewiProcesses))
	per := make([]*pop.HeldAccounts, len(m.LewiProcesses))
	for i, p := range m.LewiProcesses {
		ranks[i], per[i] = p.Rank, p.Held
	}
	return textHeld(m.LewiHeld, m.LewiHeldNote, ranks, per)
}

// textDrom is the DROM line of the header ("" unless DROM changed a
// process's CPUs in a run without LeWI): the CPUs its processes held over
// time, as textLewiHeld says them.
func textDrom(m *pop.Run) string {
	if len(m.DromProcesses) == 0 {
		return ""
	}
	ranks := make([]int, len(m.DromProcesses))
	per := make([]*pop.HeldAccounts, len(m.DromProcesses))
	for i, p := range m.DromProcesses {
		ranks[i], per[i] = p.Rank, p.Held
	}
	return "changed CPUs; " + textHeld(m.DromHeld, m.DromHeldNote, ranks, per)
}

// textHeld says accounts against the CPUs held over time (h, the run's;
// per, by rank, up to 8), or why they are not known (note).
func textHeld(h *pop.HeldAccounts, note string, ranks []int, per []*pop.HeldAccounts) string {
	if h == nil {
		return "CPUs held over time: not known: " + note
	}
	s := fmt.Sprintf("CPUs held over time: %.2f on average over %s", h.MeanCPUs(), units.Duration(h.ElapsedNS))
	if n := len(per); n > 1 && n <= 8 {
		parts := make([]string, n)
		for i := range per {
			parts[i] = fmt.Sprintf("rank %d %.2f", ranks[i], per[i].MeanCPUs())
		}
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	s += fmt.Sprintf("; of their %s CPU time %s useful, %s MPI, %s OpenMP", units.DurationInSeconds(h.CPUNS),
		units.PercentOneDecimal(h.Share(h.UsefulNS)), units.PercentOneDecimal(h.Share(h.MPINS)),
		units.PercentOneDecimal(h.Share(h.OpenMPNS)))
	if h.GPUNS > 0 {
		s += ", " + units.PercentOneDecimal(h.Share(h.GPUNS)) + " GPU runtime"
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ownCostLine is the sentence on popmon's own cost in region r ("" when the
// measurement has no instrumentation account): how much CPU time it took,
// its share of the region's CPU time (T × C), and that the metrics leave it
// out.
func ownCostLine(r *pop.RegionReport) string {
	x := r.Totals.InstrumentationNS
	if x <= 0 {
		return ""
	}
	s := "popmon's own cost: " + units.Duration(x)
	if cpu := float64(r.ElapsedNS) * float64(r.CPUs); cpu > 0 {
		s += " (" + units.Percent(float64(x)/cpu) + " of the CPU time)"
	}
	return s + ", left out of the metrics"
}

// textRegion writes one region; device is the title of its device tree
// block ([deviceBlock]).
func textRegion(b *bufio.Writer, r *pop.RegionReport, device string) {
	fmt.Fprintf(b, "### Name: %s\n", safetext.Text(r.Name))
	fmt.Fprintf(b, "### Elapsed time: %s\n", units.Duration(r.ElapsedNS))
	res := fmt.Sprintf("%s on %s, %s", plural(r.Processes, "process", "processes"), plural(r.Nodes, "node", ""), plural(r.CPUs, "CPU", ""))
	hasDev := hasDevice(r)
	if hasDev {
		res += ", " + plural(r.GPUs, "GPU", "")
	}
	if r.Totals.Visits > 0 {
		res += fmt.Sprintf(", %s", plural(int(min(r.Totals.Visits, 1<<31)), "visit", ""))
	}
	if r.Threads > 0 {
		// docs/openmp-regions.md, "Regions started inside a parallel region".
		res += fmt.Sprintf(" · measured per thread: %s, each visit one thread's, elapsed time their sum", plural(r.Threads, "thread", ""))
	}
	fmt.Fprintf(b, "### Resources: %s\n", res)
	if line := ownCostLine(r); line != "" {
		fmt.Fprintf(b, "### %s\n", line)
	}
	if r.Refused != "" {
		fmt.Fprintf(b, "No POP metrics: %s.\n", safetext.Text(r.Refused))
		return
	}
	if len(r.Metrics) == 0 {
		if r.Processes == 0 {
			b.WriteString("(no process visited this region: no metrics)\n")
		} else {
			b.WriteString("(no time measured in this region: no metrics)\n")
		}
		return
	}
	var computational, devices, devComp []pop.Metric
	if hasDev {
		b.WriteString("### Host\n") // TALP's blocks for runs with GPUs
	}
	for _, x := range r.Metrics {
		switch {
		case isComputational(x):
			computational = append(computational, x)
			continue
		case isDevice(x):
			devices = append(devices, x)
			continue
		case isDeviceComputational(x):
			devComp = append(devComp, x)
			continue
		}
		textMetric(b, x.Depth, x.Name, x)
	}
	textDevice(b, device, devices)
	textDeviceComputational(b, devComp)
	textComputational(b, computational)
}

// textMetric writes one metric line: the label indented by depth, dots up
// to the value column, the value.
func textMetric(b *bufio.Writer, depth int, name string, x pop.Metric) {
	label := strings.Repeat("  ", depth) + name + " "
	if pad := textLabelWidth - len([]rune(label)); pad > 1 {
		label += strings.Repeat(".", pad-1) + " "
	}
	fmt.Fprintf(b, "%s%s\n", label, textValue(x))
}

// isComputational reports whether x is a computational metric (a root of
// the tree that counts or divides hardware counters).
func isComputational(x pop.Metric) bool {
	switch x.ID {
	case pop.IDIPC, pop.IDFrequencyGHz, pop.IDInstructions, pop.IDCycles:
		return x.Depth == 0
	}
	return false
}

// computationalLabels are TALP's labels of the computational metrics its
// text report prints, by metric id; cycles are in JSON and CSV only, as in
// TALP.
var computationalLabels = map[string]string{
	pop.IDIPC:          "Average useful IPC",
	pop.IDFrequencyGHz: "Average useful frequency",
	pop.IDInstructions: "Number of instructions",
}

// textComputational writes the "Computational metrics" block of a region
// (TALP's layout) from the region's computational metrics, in report order;
// nothing when the region has none (no hardware counters: the header says
// why).
func textComputational(b *bufio.Writer, xs []pop.Metric) {
	textLabelled(b, "Computational metrics", computationalLabels, xs)
}

// textLabelled writes a block headed title with the metrics of xs that
// labels names, each under its label, in report order; nothing when none
// is named.
func textLabelled(b *bufio.Writer, title string, labels map[string]string, xs []pop.Metric) {
	printed := false
	for _, x := range xs {
		label := labels[x.ID]
		if label == "" {
			continue
		}
		if !printed {
			b.WriteString(title + "\n")
			printed = true
		}
		textMetric(b, 1, label, x)
	}
}

// textCounters describes the hardware counters of the run for the header:
// what was measured, or that the computational metrics (IPC, frequency,
// instructions) are missing and why.
func textCounters(m *pop.Run) string {
	if why := m.CountersNotMeasured; why != "" {
		return "no computational metrics: " + why
	}
	line := "cycles and instructions during useful time"
	if c := m.Counters; c != nil {
		switch c.Method {
		case "":
		case "read":
			line += " (read system call)"
		default:
			line += " (" + c.Method + ")"
		}
	}
	return line
}

// textOpenMP describes the OpenMP runtime of the run for the header: its
// name and threads, or, when it was not measured, that it was not and why
// ("not measured: <reason>", led by the runtime's name unless the reason
// starts with it). This line is the one place of the text report that says
// why: the metrics it leaves out refer to it. "" without an OpenMP
// runtime.
func textOpenMP(o *measure.OpenMP) string {
	if o == nil {
		return ""
	}
	line := orDefault(o.Runtime, "unknown runtime")
	if !o.Measured() {
		why := o.NotMeasured()
		if o.Runtime != "" && strings.HasPrefix(why, o.Runtime) {
			return "not measured: " + why
		}
		return line + " · not measured: " + why
	}
	if o.Method != "" {
		line += " · measured by " + safetext.Text(o.Method)
	}
	if o.MaxThreads > 0 {
		line += " · " + plural(o.MaxThreads, "thread", "") + " per process"
	}
	return line
}

func textValue(x pop.Metric) string {
	if !x.Measured() {
		return "not measured: " + safetext.Text(x.NotMeasured)
	}
	switch x.Kind {
	case pop.KindFrequency:
		return fmt.Sprintf("%.2f GHz", x.Value)
	case pop.KindCount:
		return count(x.Value)
	}
	return fmt.Sprintf("%.2f", x.Value)
}

func textMPICalls(b *bufio.Writer, calls []measure.MPICall) {
	if len(calls) == 0 {
		return
	}
	sorted := append([]measure.MPICall(nil), calls...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].TimeNS != sorted[j].TimeNS {
			return sorted[i].TimeNS > sorted[j].TimeNS
		}
		return sorted[i].Name < sorted[j].Name
	})
	var total float64
	for _, c := range calls {
		total += float64(c.TimeNS)
	}
	shown := sorted[:min(len(sorted), topMPICalls)]
	// The bytes columns when the library counted bytes for a call shown
	// (libpopmon writes them for the calls that start transfers).
	withBytes := false
	for _, c := range shown {
		withBytes = withBytes || c.BytesSent > 0 || c.BytesRecv > 0 || len(c.SizeHist) > 0
	}
	head := []string{"Function", "Calls", "Time", "% MPI", "Max rank"}
	if withBytes {
		head = append(head, "Sent", "Received")
	}
	rows := [][]string{head}
	for _, c := range shown {
		pct := "-"
		if total > 0 {
			pct = fmt.Sprintf("%.1f%%", 100*float64(c.TimeNS)/total)
		}
		row := []string{safetext.Text(c.Name), fmt.Sprint(c.Calls), units.Duration(c.TimeNS), pct, fmt.Sprint(c.MaxRank)}
		if withBytes {
			row = append(row, byteCell(c.BytesSent), byteCell(c.BytesRecv))
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(b, "\nTop MPI calls (whole run, all processes; %s in MPI)\n", units.Duration(int64(total)))
	writeTable(b, rows)
	if rest := len(sorted) - len(shown); rest > 0 {
		fmt.Fprintf(b, "  (%s)\n", plural(rest, "more function", ""))
	}
}

// byteCell is a call profile's bytes cell: "-" for none; decimal units as
// in the GPU tables and the pages (units.BytesSI).
func byteCell(n int64) string {
	if n <= 0 {
		return "-"
	}
	return units.BytesSI(float64(n))
}

// writeTable writes rows as aligned columns: the first left-aligned (names,
// locations), the others right-aligned (numbers), indented by two spaces.
// Cells must already be escaped (safetext.Text) so that widths are those
// shown.
func writeTable(b *bufio.Writer, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		b.WriteString(" ")
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i == 0 {
				b.WriteString(" " + cell + pad)
			} else {
				b.WriteString("  " + pad + cell)
			}
		}
		b.WriteString("\n")
	}
}
