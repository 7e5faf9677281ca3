package talpjson

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// NoteImpossibleLoadBalance starts the note of a converted measurement
// that says DLB's own load balance In/Out are impossible in some regions
// and how popmon replaces them (popmon scaling shows DLB's other
// efficiencies, so it should print this note for such files).
const NoteImpossibleLoadBalance = "DLB's own load balance In/Out are impossible"

// summaryAbove is the number of processes beyond which a converted file
// is in summary form: libpopmon's default limit (a variable for the tests,
// which compare both forms).
var summaryAbove = measure.DefaultProcessRecordLimit

// placement is the synthesized run: per rank its CPUs, per node its
// ranks.
type placement struct {
	cpus  vec // file-level CPUs of each process
	nodes vec // ranks of each node: contiguous blocks, the larger first
}

// build turns a parsed file into a measurement.
func build(f *file, path string) (*measure.Measurement, error) {
	regs := f.regions
	sh, err := shapeOf(f)
	if err != nil {
		return nil, err
	}
	notes := sh.notes
	pl := placement{cpus: splitCounts(sh.cpus, sh.P), nodes: splitCounts(sh.P, sh.N)}
	m := &measure.Measurement{
		Format:    measure.Format,
		Version:   measure.Version,
		Tool:      measure.Tool{Name: ToolName, Version: f.dlbVersion},
		Command:   []string{},
		Launcher:  measure.Launcher{Kind: measure.LauncherNone},
		Clock:     measure.Clock{Source: measure.ClockTALP},
		MPICalls:  []measure.MPICall{},
		Warnings:  []string{},
		Git:       f.git,
		Resources: measure.Resources{Processes: sh.P, Nodes: sh.N, GPUs: sh.gpus},
	}
	if f.timestamp != "" {
		if t, ok := parseTime(f.timestamp); ok {
			m.Timestamp = t.Format(time.RFC3339)
		} else {
			notes = append(notes, fmt.Sprintf("The file's timestamp %q is neither DLB's layout (%s) nor RFC 3339: the measurement has no timestamp.", f.timestamp, TimeLayout))
		}
	}
	m.Resources.CPUs = int(pl.cpus.sum())
	maxThreads := int(pl.cpus.first()) // the larger shares first
	addProcesses(m, &pl, sh)
	counters, dropped := setCounters(m, regs)
	notes = append(notes, dropped...)
	workerIdle := setRuntimes(m, regs, sh, maxThreads)
	fd := addRegions(m, regs, &pl, sh, counters)
	m.Source = source(f, path, sh, counters, workerIdle, maxThreads, len(m.GPUDevices), fd, notes)
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("the converted file is not a valid measurement (a popmon bug; please report it): %w", err)
	}
	m.Violations() // derived once, here, for pop and the reports
	return m, nil
}

// shape is the synthesized run's size: P processes on N nodes with cpus
// CPUs in all, the file's GPUs, whether it has MPI and is converted in
// summary form, and the notes on what was changed to make it consistent.
type shape struct {
	P, N, cpus, gpus int
	hasMPI, summary  bool
	notes            []string
}

// shapeOf returns the run's shape from the file's resources (the
// "resources" object, else the Global region's, else the first region's),
// or why the file is too large to convert.
func shapeOf(f *file) (shape, error) {
	regs := f.regions
	ref := &regs[0] // the Global region, else the first
	fileInt := func(key string, fileValue, regionValue int) int {
		if f.resources.has(key) {
			return fileValue
		}
		return regionValue
	}
	ranks := fileInt("numMpiRanks", f.res.ranks, ref.ranks)
	nodes := fileInt("numNodes", f.res.nodes, ref.nodes)
	cpus := fileInt("numCpus", f.res.cpus, ref.cpus)
	gpus := fileInt("numGpus", f.res.gpus, ref.gpus)

	var notes []string
	maxRegionRanks := 0
	for i := range regs {
		maxRegionRanks = max(maxRegionRanks, regs[i].ranks)
	}
	hasMPI := ranks > 0 || maxRegionRanks > 0
	P := max(ranks, maxRegionRanks, 1)
	if maxRegionRanks > ranks && ranks > 0 {
		notes = append(notes, fmt.Sprintf("The file's resources list %d MPI ranks but a region has %d: %d processes were synthesized.", ranks, maxRegionRanks, P))
	}
	devices := deviceCount(regs, gpus)
	if err := backed(regs, P, devices); err != nil {
		return shape{}, err
	}
	if devices > maxDevices {
		return shape{}, fmt.Errorf("the file declares %d GPUs (numGpus) with device times; popmon converts at most %d (more than any machine has), as each device gets its own accounts", devices, maxDevices)
	}
	if len(regs)*devices > maxAccounts {
		return shape{}, fmt.Errorf("%d regions × %d GPUs is more than popmon converts (%d device accounts)", len(regs), devices, maxAccounts)
	}
	N := min(max(nodes, 1), P)
	// Beyond a few thousand process accounts the measurement is in
	// summary form (as libpopmon writes it for large jobs): its cost does
	// not grow with the declared ranks. Its nodes are still walked one by
	// one (each node's MPI time), which the file's regions times nodes
	// bound.
	summary := P > summaryAbove || len(regs)*P > maxFullAccounts
	if summary && len(regs)*N > maxAccounts {
		return shape{}, fmt.Errorf("%d regions × %d nodes is more than popmon converts (%d node accounts)", len(regs), N, maxAccounts)
	}
	if nodes > P {
		notes = append(notes, fmt.Sprintf("The file lists %d nodes for %d MPI ranks: %d nodes were used.", nodes, P, N))
	}
	if cpus < P {
		if cpus > 0 {
			notes = append(notes, fmt.Sprintf("The file lists %d CPUs for %d processes: each process was given at least 1 CPU.", cpus, P))
		}
		cpus = P
	}
	return shape{P: P, N: N, cpus: cpus, gpus: gpus, hasMPI: hasMPI, summary: summary, notes: notes}, nil
}

// addProcesses adds the synthesized processes to m (placed on the nodes
// in contiguous blocks, with their CPUs), or marks m as in summary form.
func addProcesses(m *measure.Measurement, pl *placement, sh shape) {
	P, summary := sh.P, sh.summary
	if summary {
		m.Version = max(m.Version, measure.SummaryVersion)
		m.Summarized = &measure.Summarized{Processes: P, Limit: measure.DefaultProcessRecordLimit}
	} else {
		m.Processes = make([]measure.Process, 0, P)
		node := 0
		for _, r := range pl.nodes {
			for range r.n {
				for range r.v {
					m.Processes = append(m.Processes, measure.Process{Rank: len(m.Processes), Node: node})
				}
				node++
			}
		}
		i := 0
		for _, r := range pl.cpus {
			for range r.n {
				m.Processes[i].CPUs = int(r.v)
				i++
			}
		}
	}

}

// setCounters records whether the file has hardware counters (those of
// the Global region, else the first) and returns it, with the note on
// regions whose counters were dropped.
func setCounters(m *measure.Measurement, regs []region) (bool, []string) {
	ref := &regs[0]
	var notes []string
	counters := ref.cycles > 0 && ref.instructions > 0 && !ref.badCounters
	m.Resources.HardwareCounters = counters
	switch {
	case counters:
		m.Counters = &measure.Counters{Mode: measure.CountersAuto, Available: true}
	case ref.badCounters:
		m.Counters = &measure.Counters{Mode: measure.CountersAuto, Reason: fmt.Sprintf("counters unavailable: the TALP file has negative cycles/instructions for region %q (a DLB/PAPI error)", ref.orig)}
	default:
		m.Counters = &measure.Counters{Mode: measure.CountersAuto, Reason: "counters unavailable: the TALP file has no cycles/instructions (DLB was run without PAPI)"}
	}
	if counters {
		var bad []string
		for i := range regs {
			if regs[i].badCounters {
				bad = append(bad, regs[i].name)
			}
		}
		if len(bad) > 0 {
			notes = append(notes, fmt.Sprintf("The file has negative cycles/instructions (a DLB/PAPI error) for %s: their counters were dropped.", regionList(bad)))
		}
	}
	return counters, notes
}

// setRuntimes records the run's GPU devices, OpenMP and MPI runtimes
// (maxThreads: the largest CPUs of a process), and returns whether the
// file has mpiWorkerIdleTime (DLB after 3.7.0).
func setRuntimes(m *measure.Measurement, regs []region, sh shape, maxThreads int) bool {
	gpus, hasMPI := sh.gpus, sh.hasMPI
	omp, workerIdle := false, false
	m.GPUDevices = gpuDevices(regs, gpus)
	if len(m.GPUDevices) > 0 {
		m.Resources.GPUs = len(m.GPUDevices)
	}
	for i := range regs {
		r := &regs[i]
		omp = omp || r.ompParallels > 0 || r.ompTasks > 0 || r.ompLB > 0 || r.ompSched > 0 || r.ompSer > 0 || r.mpiWorkerIdle > 0
		workerIdle = workerIdle || r.f.has("mpiWorkerIdleTime")
	}
	threadLevel := "unknown" // TALP does not record it
	switch {
	case omp:
		m.OpenMP = &measure.OpenMP{Runtime: OpenMPRuntime, OMPT: true, MaxThreads: maxThreads}
	case maxThreads > 1:
		m.OpenMP = &measure.OpenMP{Runtime: "unknown (DLB/TALP file)", OMPT: false, MaxThreads: maxThreads,
			Reason: fmt.Sprintf("the DLB/TALP file has up to %d CPUs per process but no OpenMP data (DLB's OpenMP measurement was off, or the threads are not OpenMP threads)", maxThreads)}
	}
	if hasMPI {
		m.MPI = &measure.MPI{Library: MPILibrary, ThreadLevel: threadLevel}
	}
	return workerIdle
}

// findings are what the regions' conversion found that the source's notes
// say: per MPI tier the regions and why, and the regions with each kind of
// inconsistency or derivation.
type findings struct {
	dist, reasons                                                            map[mpiTier][]string
	serShort, derived, notDerived, lbImpossible, gpuInexact, gpuDiffer, over []string
	maxOver                                                                  float64
	moreThreads                                                              bool // numOmpThreads > numCpus in a region that exceeds elapsed × CPUs
	hybridMPI                                                                bool // a region with MPI time and several CPUs per rank
}

// addRegions adds the synthesized regions to m (in summary form when sh
// says so) and returns what their conversion found.
func addRegions(m *measure.Measurement, regs []region, pl *placement, sh shape, counters bool) findings {
	summary, hasMPI := sh.summary, sh.hasMPI
	dist := map[mpiTier][]string{}
	reasons := map[mpiTier][]string{}
	var serShort, derived, notDerived, lbImpossible, gpuInexact, gpuDiffer []string
	var over []string
	maxOver := 0.0
	moreThreads, hybridMPI := false, false
	for i := range regs {
		r := &regs[i]
		sy, info := account(r, pl, counters)
		devs, exact := gpuAccounts(r, len(m.GPUDevices))
		if !exact {
			gpuInexact = append(gpuInexact, r.name)
		}
		if d := gpuDisagreement(devs, r, len(m.GPUDevices)); len(d) > 0 {
			gpuDiffer = append(gpuDiffer, fmt.Sprintf("%s: %s", quote(r.name), strings.Join(d, ", ")))
		}
		if summary {
			m.Regions = append(m.Regions, sy.summary(r.name, devs))
		} else {
			m.Regions = append(m.Regions, sy.region(r.name, devs))
		}
		if hasMPI && r.mpi+r.mpiWorkerIdle > 0 {
			dist[info.tier] = append(dist[info.tier], r.name)
			if info.why != "" {
				reasons[info.tier] = append(reasons[info.tier], fmt.Sprintf("%s: %s", quote(r.name), info.why))
			}
			hybridMPI = hybridMPI || sy.pr > 0 && info.cpus > sy.pr
		}
		if info.serShort {
			serShort = append(serShort, r.name)
		}
		if info.overBy > 0 {
			over = append(over, r.name)
			maxOver = max(maxOver, info.overBy)
			moreThreads = moreThreads || r.ompThreads > info.cpus
		}
		if info.cpus == sy.pr && sy.pr > 0 && r.elapsed > 0 && r.useful > 0 {
			if info.derived {
				derived = append(derived, r.name)
			} else {
				notDerived = append(notDerived, r.name)
			}
		}
		if in, out := r.own(pop.IDMPILoadBalanceIn), r.own(pop.IDMPILoadBalanceOut); impossible(in) || impossible(out) {
			lbImpossible = append(lbImpossible, fmt.Sprintf("%s (In %s, Out %s)", quote(r.name), showEff(in), showEff(out)))
		}
	}

	return findings{dist: dist, reasons: reasons, serShort: serShort, derived: derived, notDerived: notDerived,
		lbImpossible: lbImpossible, gpuInexact: gpuInexact, gpuDiffer: gpuDiffer,
		over: over, maxOver: maxOver, moreThreads: moreThreads, hybridMPI: hybridMPI}
}

// source returns where the measurement came from and its notes: what was
// synthesized, and what the talp model's metrics mean (devices: the
// run's GPU devices; notes: those of the shape and the counters, last).
func source(f *file, path string, sh shape, counters, workerIdle bool, maxThreads, devices int, fd findings, notes []string) *measure.Source {
	regs, P, N, gpus, hasMPI := f.regions, sh.P, sh.N, sh.gpus, sh.hasMPI
	dist, reasons := fd.dist, fd.reasons
	serShort, derived, notDerived, lbImpossible, gpuInexact, gpuDiffer := fd.serShort, fd.derived, fd.notDerived, fd.lbImpossible, fd.gpuInexact, fd.gpuDiffer
	over, maxOver, moreThreads, hybridMPI := fd.over, fd.maxOver, fd.moreThreads, fd.hybridMPI
	src := &measure.Source{Kind: measure.SourceTALP, Path: path, Tool: "DLB " + f.dlbVersion}
	switch {
	case f.popmonVersion != "":
		src.Tool = fmt.Sprintf("popmon %s talp-json (DLB %s layout)", f.popmonVersion, orDefault(f.dlbVersion, "?"))
	case f.dlbVersion == "":
		src.Tool = "DLB (version not recorded)"
	}
	layout := "DLB ≥ 3.6 layout"
	if isLayout35(regs) {
		layout = "DLB 3.5 layout"
	}
	src.Notes = append(src.Notes, fmt.Sprintf("A DLB/TALP JSON file (%s) holds per-region totals over all processes only: the %s and their accounts are synthesized. CPUs are split as evenly as possible over the ranks (the remainder to the first), ranks are placed on the %s in contiguous blocks, useful, OpenMP and GPU runtime times%s are split by CPUs, and visits (numMeasurements, which DLB sums over ranks) and event counts are split evenly over the ranks.",
		layout, plural(P, "process", "processes"), plural(N, "node", "nodes"), ifStr(counters, ", cycles and instructions", "")))
	if f.global < 0 {
		src.Notes = append(src.Notes, fmt.Sprintf("The file has no whole-run region (%s): there is no Global region.", strings.Join(GlobalNames, ", ")))
	} else if f.renamed != "" {
		src.Notes = append(src.Notes, fmt.Sprintf("DLB's whole-run region %q is the Global region.", f.renamed))
	}
	if hasMPI {
		src.Notes = append(src.Notes, mpiNotes(dist, reasons, workerIdle)...)
		if workerIdle {
			src.Notes = append(src.Notes, "The file has mpiWorkerIdleTime (DLB after 3.7.0): the time OpenMP workers idle while their primary thread is in MPI is recorded as mpi_worker_idle_ns and, since DLB counts it in ompSerializationTime as well, ompSerializationTime − mpiWorkerIdleTime is omp_serialization_ns; model talp counts it once, in both branches, as DLB does.")
		}
		if hybridMPI && !workerIdle {
			if v, ok := parseVersion(f.dlbVersion); ok && f.popmonVersion == "" && v.before(3, 6, 2) {
				src.Notes = append(src.Notes, "DLB before 3.6.2 leaves the time OpenMP workers idle while their primary thread is in MPI out of mpiTime (it is in ompSerializationTime only): the MPI efficiencies of this hybrid run, DLB's and popmon's alike, are too high.")
			}
		}
		if len(lbImpossible) > 0 {
			src.Notes = append(src.Notes, fmt.Sprintf(NoteImpossibleLoadBalance+" (below 0 or above 1) in %s: DLB caps a node's CPUs at its hardware CPUs, which breaks them when a node runs more ranks or threads than it has cores (POP-METRICS.md, Deviation (node CPUs)). popmon computes them from the file's times instead: exactly on one node (In = load balance, Out = 1); on several nodes popmon scaling leaves them out, as the file does not say how MPI time divides among the nodes.",
				strings.Join(first(lbImpossible, 3), "; ")))
		}
		src.Notes = append(src.Notes, "A TALP file names neither the MPI library nor the thread level: both are recorded as unknown.")
	}
	if len(serShort) > 0 {
		src.Notes = append(src.Notes, fmt.Sprintf("ompSerializationTime is below mpiWorkerIdleTime in %s (DLB counts the workers' idle time during MPI in both): omp_serialization_ns was recorded as 0, so the serialization efficiency popmon computes differs from DLB's.", regionList(serShort)))
	}
	if len(over) > 0 {
		why := "the file is inconsistent (hand-edited, or written by a faulty tool): popmon's efficiencies follow its times, like DLB's."
		if moreThreads {
			why = "DLB after 3.7.0 counts as numCpus the hardware CPUs a process's threads ran on (at most those of its affinity mask) but sums the times of all its threads (numOmpThreads, nested ones included): with more threads than CPUs (oversubscription, nested parallel regions) the times exceed numCpus × elapsedTime. popmon reproduces DLB's efficiencies from these times: parallel efficiency and the OpenMP efficiencies are shares of thread time, not of CPU time."
		}
		if v, ok := parseVersion(f.dlbVersion); hybridMPI && !workerIdle && f.popmonVersion == "" && !(ok && v.before(3, 6, 2)) {
			why = "DLB 3.6.2 to 3.7.0 do so for the time OpenMP workers idle while their primary thread is in MPI, which they count in mpiTime (multiplied by the process's CPUs) and again in ompSerializationTime. popmon reproduces DLB's efficiencies from these times: the MPI efficiencies are right, but parallel efficiency is too low and the OpenMP efficiencies are distorted (DLB after 3.7.0 writes mpiWorkerIdleTime and counts the time once)."
		}
		src.Notes = append(src.Notes, fmt.Sprintf("The file's times add up to more than elapsedTime × numCpus (by up to %s) in %s: some CPU time is counted twice. %s", percent(maxOver), regionList(over), why))
	}
	switch {
	case len(derived) > 0 && len(notDerived) == 0 && maxThreads <= 1:
		src.Notes = append(src.Notes, "Every process has one CPU: per-process useful times are derived assuming every process spent the region's whole elapsed time in it (useful = elapsed − the process's MPI and other times, with the MPI split above), which the file's sums confirm within 1 %; pop-hybrid and pop-additive use them (OpenMP factors 1). The talp model's metrics depend only on the sums and minima, so they are TALP's.")
	case len(derived) > 0:
		src.Notes = append(src.Notes, fmt.Sprintf("Per-process useful times are derived (one CPU per process, equal elapsed times, which the file's sums confirm within 1 %%) for %s, where pop-hybrid and pop-additive have values; elsewhere per-process and per-thread times are not in the file and those models report their metrics as not measured. The talp model's metrics depend only on the sums and minima, so they are TALP's.", regionList(derived)))
	default:
		src.Notes = append(src.Notes, "Per-process and per-thread times are not in TALP files (only sums and the MPI minima above), and popmon derives them only for one CPU per process with DLB's MPI minima when the sums show equal elapsed times: the pop-hybrid and pop-additive models report their metrics as not measured; the talp model's metrics depend only on the sums and minima, so they are TALP's.")
	}
	if devices > 0 {
		src.Notes = append(src.Notes, gpuNotes(devices, gpus, gpuInexact, gpuDiffer)...)
	}
	if f.hasPerProcess {
		src.Notes = append(src.Notes, perProcessNote(f, regs))
	}
	src.Notes = append(src.Notes, notes...)
	return src
}

// backed checks that the file's times back the P processes and the gpus
// GPU devices (0: none synthesized) it declares, before they are synthesized: beyond
// unbackedRanks, some region must hold at least 1 ns of CPU time per
// process (useful, MPI, OpenMP and GPU runtime time: DLB sums them over
// the processes, and every process spends its Global region, MPI_Init to
// MPI_Finalize, in some of them), and, with GPU device times, at least
// 1 ns of device time per device (DLB counts a process's devices in
// numGpus only when they have some). A file that declares more than its
// content can hold is refused instead of costing memory and time
// proportional to the declared size.
func backed(regs []region, P, gpus int) error {
	if P <= unbackedRanks && gpus <= unbackedRanks {
		return nil
	}
	var cpuMax, devMax float64
	cpuName, devName := "", ""
	for i := range regs {
		r := &regs[i]
		cpu := float64(r.useful) + float64(r.mpi) + float64(r.mpiWorkerIdle) + float64(r.ompLB) +
			float64(r.ompSched) + float64(r.ompSer) + float64(r.gpuRuntime)
		if cpu > cpuMax || cpuName == "" {
			cpuMax, cpuName = cpu, r.orig
		}
		dev := float64(r.gpuTimes.useful) + float64(r.gpuTimes.comm)
		if dev > devMax || devName == "" {
			devMax, devName = dev, r.orig
		}
	}
	if P > unbackedRanks && cpuMax < float64(P) {
		return fmt.Errorf("the file declares %d MPI ranks (numMpiRanks) but its largest region, %q, holds %.0f ns of CPU time (usefulTime + mpiTime + OpenMP and GPU runtime times), less than 1 ns per process: the declared size does not match the content (a damaged or edited file)", P, cpuName, cpuMax)
	}
	if gpus > unbackedRanks && devMax < float64(gpus) {
		return fmt.Errorf("the file declares %d GPUs (numGpus) but its largest region, %q, holds %.0f ns of device time (gpuUsefulTime + gpuCommunicationTime), less than 1 ns per device: the declared size does not match the content (a damaged or edited file)", gpus, devName, devMax)
	}
	return nil
}

// perProcessNote describes DLB 3.5's per-process "region" array, which the
// conversion does not use, and whether its sums agree with the totals.
func perProcessNote(f *file, regs []region) string {
	note := `The file also holds per-process values (the top-level "region" array of DLB 3.5); this conversion uses the per-region totals of "Application", from which DLB computed the efficiencies it wrote.`
	if f.perProcessBad {
		return note + ` The "region" array could not be read.`
	}
	byName := make(map[string]*region, len(regs))
	for i := range regs {
		byName[regs[i].orig] = &regs[i]
	}
	keys := []struct {
		proc, total string
		get         func(*region) int64
	}{
		{"useful", "usefulTime", func(r *region) int64 { return r.useful }},
		{"notUsefulMPI", "mpiTime", func(r *region) int64 { return r.mpi }},
		{"notUsefulOMPLoadBalance", "ompLoadImbalanceTime", func(r *region) int64 { return r.ompLB }},
		{"notUsefulOMPScheduling", "ompSchedulingTime", func(r *region) int64 { return r.ompSched }},
		{"notUsefulOMPSerialization", "ompSerializationTime", func(r *region) int64 { return r.ompSer }},
	}
	count := map[string]int{}
	example := map[string]string{}
	var order []string
	for _, pr := range f.perProcess {
		r := byName[pr.Name]
		if r == nil {
			continue
		}
		for _, k := range keys {
			sum := 0.0
			for _, p := range pr.Process {
				fs := fields{m: p}
				v, ok, err := fs.float(k.proc)
				if err != nil || !ok { // not comparable
					sum = math.NaN()
					break
				}
				sum += v
			}
			total := float64(k.get(r))
			if math.IsNaN(sum) || math.Abs(sum-total) <= 1+1e-6*max(sum, total) {
				continue
			}
			if count[k.total] == 0 {
				order = append(order, k.total)
				example[k.total] = fmt.Sprintf("%q: %.0f ns, per-process sum %.0f ns", pr.Name, total, sum)
			}
			count[k.total]++
		}
	}
	if len(order) == 0 {
		return note + " Their sums agree with the totals."
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s in %s (e.g. %s)", k, plural(count[k], "region", "regions"), example[k]))
	}
	return note + " The totals disagree with the sums of the per-process values for " + strings.Join(parts, "; ") + ": those totals, and DLB's efficiencies computed from them, are questionable."
}

// orderRegions puts the whole-run region first, renamed to Global when the
// file calls it otherwise. It returns the index the Global region had in
// the file (-1: none) and the name DLB gave it when that was not "Global".
func orderRegions(in []region) (out []region, global int, renamed string) {
	out = append([]region(nil), in...)
	global = -1
	for _, want := range GlobalNames {
		for i := range out {
			if out[i].name == want {
				global = i
				break
			}
		}
		if global >= 0 {
			break
		}
	}
	if global < 0 {
		return out, -1, ""
	}
	g := out[global]
	if g.name != measure.GlobalRegion {
		renamed = g.name
		g.name = measure.GlobalRegion
	}
	copy(out[1:global+1], out[:global])
	out[0] = g
	return out, global, renamed
}

// isLayout35 reports whether the file is DLB 3.5's layout: normalized
// useful/MPI times instead of the MPI minima.
func isLayout35(regs []region) bool {
	for i := range regs {
		if regs[i].hasMinProc || regs[i].hasMinNode {
			return false
		}
	}
	for i := range regs {
		if regs[i].hasOfMaxUseful {
			return true
		}
	}
	return false
}

// accounted is what [account] found out about one region.
type accounted struct {
	tier mpiTier
	why  string // why the MPI minima were not reproduced exactly
	// serShort says ompSerializationTime is below mpiWorkerIdleTime (a
	// file with that key): the model's Iser is then mpiWorkerIdleTime.
	serShort bool
	// derived says the per-process useful times were derived (one CPU per
	// process, equal elapsed times; see deriveUseful).
	derived bool
	// cpus is the CPUs of the region's processes.
	cpus int
	// overBy is by how much (a fraction) the file's times exceed
	// elapsedTime × numCpus beyond the invariant's tolerance; 0 if not.
	overBy float64
}

// account synthesizes the per-process accounts of one region.
//
// The measurement keeps the time OpenMP workers idle while their primary
// thread is in MPI (Mw) apart from omp_serialization_ns. A file with
// mpiWorkerIdleTime (DLB after 3.7.0) counts that time in both
// mpiWorkerIdleTime and ompSerializationTime, so omp_serialization_ns is
// ompSerializationTime − mpiWorkerIdleTime and model talp (whose Iser is
// omp_serialization_ns + Mw) sees DLB's ompSerializationTime. A file
// without it has Mw in mpiTime (DLB 3.6.2–3.7.0, multiplied by the
// process's CPUs) or nowhere (earlier DLB): mpiTime is recorded as mpi_ns
// and ompSerializationTime as omp_serialization_ns, which reproduces
// DLB's efficiencies in either case.
func account(r *region, pl *placement, counters bool) (*synth, accounted) {
	P := pl.cpus.length()
	pr := r.ranks
	if pr < 1 || pr > P {
		pr = P
	}
	cpus := pl.cpus.slice(0, pr)
	if r.cpus > 0 {
		cpus = splitCounts(max(r.cpus, pr), pr)
	}
	byCPU := func(total int64) vec { return split(total, cpus) }
	even := func(total int64) vec { return split(total, onesVec(pr)) }
	nodes := pl.nodes.upTo(pr)

	total := r.mpi + r.mpiWorkerIdle
	mpi, tier, why := distributeMPI(total, r, cpus, int(nodes.first()))
	info := accounted{tier: tier, why: why}
	ser := r.ompSer
	if r.hasWorkerIdle {
		info.serShort = ser < r.mpiWorkerIdle
		ser = max(ser-r.mpiWorkerIdle, 0)
	}
	s := &synth{
		pr: pr, cpus: cpus, nodes: nodes, elapsed: r.elapsed,
		useful: byCPU(r.useful), ompLB: byCPU(r.ompLB), ompSched: byCPU(r.ompSched), ompSer: byCPU(ser), gpu: byCPU(r.gpuRuntime),
		visits: even(r.measurements), calls: even(r.mpiCalls), pars: even(r.ompParallels), tasks: even(r.ompTasks), gcalls: even(r.gpuCalls),
		cyc: constVec(pr, 0), ins: constVec(pr, 0),
	}
	if counters {
		s.cyc, s.ins = byCPU(r.cycles), byCPU(r.instructions)
	}

	C := int(cpus.sum())
	info.cpus = C
	sum := float64(r.useful) + float64(total) + float64(r.ompLB) + float64(r.ompSched) + float64(ser) + float64(r.gpuRuntime)
	if exp := float64(r.elapsed) * float64(C); sum > exp && !measure.AddsUp(sum, float64(r.elapsed), C) {
		info.overBy = math.Inf(1)
		if exp > 0 {
			info.overBy = (sum - exp) / exp
		}
	}
	if C == pr && tier != tierEven && measure.AddsUp(sum, float64(r.elapsed), C) {
		others := zip(zip(zip(mpi, s.ompLB, plus), zip(s.ompSched, s.ompSer, plus), plus), s.gpu, plus)
		if u, ok := deriveUseful(r.useful, r.elapsed, others); ok {
			s.useful, s.derived, info.derived = u, true, true
		}
	}

	// mpi is each process's share of mpiTime + mpiWorkerIdleTime; a file
	// with mpiWorkerIdleTime has Mw apart.
	s.mpi, s.workerIdle = mpi, constVec(pr, 0)
	if r.mpiWorkerIdle > 0 && total > 0 {
		s.mpi = mpi.mapVec(func(x int64) int64 {
			return min(max(int64(math.Round(float64(x)*float64(r.mpi)/float64(total))), 0), x)
		})
		s.workerIdle = zip(mpi, s.mpi, func(x, m int64) int64 { return x - m })
	}
	return s, info
}

// synth is one region's synthesized processes, ranks 0 … pr−1, as
// vectors in run-length form (see [vec]): a few runs each, whatever pr.
type synth struct {
	pr      int
	cpus    vec
	nodes   vec // ranks of each node (contiguous blocks from rank 0)
	elapsed int64
	// derived says useful was derived and is every process's only
	// thread's (see [deriveUseful]).
	derived                                      bool
	useful, mpi, workerIdle                      vec
	ompLB, ompSched, ompSer, gpu                 vec
	visits, calls, pars, tasks, gcalls, cyc, ins vec
}

// each calls f for every run of processes with equal accounts: ranks
// first … first+n−1, each with a (a.Rank is first).
func (s *synth) each(f func(a *measure.ProcessAccounts, first, n int)) {
	xs := []vec{s.cpus, s.visits, s.useful, s.mpi, s.workerIdle, s.ompLB, s.ompSched, s.ompSer, s.gpu,
		s.calls, s.pars, s.tasks, s.gcalls, s.cyc, s.ins}
	segments(xs, func(g segment) {
		v := g.v
		a := measure.ProcessAccounts{
			Rank: g.start, CPUs: int(v[0]), Visits: v[1], ElapsedNS: s.elapsed,
			UsefulNS: v[2], MPINS: v[3], MPIWorkerIdleNS: v[4],
			OMPLoadImbalanceNS: v[5], OMPSchedulingNS: v[6], OMPSerializationNS: v[7], GPURuntimeNS: v[8],
			MPICalls: v[9], OMPParallels: v[10], OMPTasks: v[11], GPURuntimeCalls: v[12],
			Cycles: v[13], Instructions: v[14],
		}
		if s.derived {
			// One CPU: its only thread has all the useful time. This
			// also marks the process's times as derived, for pop's hybrid
			// models.
			a.ThreadUsefulMaxNS = a.UsefulNS
		}
		f(&a, g.start, g.n)
	})
}

// region returns the region named name with one account per process and
// the GPU device accounts devs, device d on process d mod pr (the full
// form).
func (s *synth) region(name string, devs []measure.GPUDeviceAccount) measure.Region {
	g := measure.Region{Name: name, Processes: make([]measure.ProcessAccounts, 0, s.pr)}
	s.each(func(a *measure.ProcessAccounts, first, n int) {
		for i := first; i < first+n; i++ {
			a.Rank = i
			g.Processes = append(g.Processes, *a)
		}
	})
	for _, d := range devs {
		a := &g.Processes[d.Device%s.pr]
		a.GPUDevices = append(a.GPUDevices, d)
	}
	return g
}

// summary returns the region named name in summary form, with the GPU
// device accounts devs: the same summary the full form gives, computed
// from the runs.
func (s *synth) summary(name string, devs []measure.GPUDeviceAccount) measure.Region {
	b := measure.NewSummaryBuilder()
	s.each(b.Add)
	// The nodes: a node's MPI time is the sum of its ranks'.
	mpi := zip(s.mpi, s.workerIdle, plus)
	mc, cc := cursor{x: mpi}, cursor{x: s.cpus}
	for _, r := range s.nodes {
		for range r.n {
			b.AddNode(mc.next(int(r.v)), int(cc.next(int(r.v))), 1)
		}
	}
	sum := b.Summary()
	sum.Sum.GPUDevices = devs
	return measure.Region{Name: name, Summary: &sum}
}

// cursor reads a vector's elements in order.
type cursor struct {
	x    vec
	i    int // current run
	used int // elements used of x[i]
}

// next returns the sum of the next n elements.
func (c *cursor) next(n int) float64 {
	var s float64
	for n > 0 && c.i < len(c.x) {
		k := min(n, c.x[c.i].n-c.used)
		s += float64(k) * float64(c.x[c.i].v)
		n -= k
		c.used += k
		if c.used == c.x[c.i].n {
			c.i, c.used = c.i+1, 0
		}
	}
	return s
}

// deriveUseful derives the useful time of each 1-CPU process of a region
// from the other accounts (others, distributed by [account]), assuming
// every process was in the region for its whole elapsed time:
// U_i = elapsed − others_i, the rounding difference to the file's total
// useful time shared evenly. It fails when a process would get negative
// useful time.
func deriveUseful(total, elapsed int64, others vec) (vec, bool) {
	u := others.mapVec(func(o int64) int64 { return max(elapsed-o, 0) })
	diff := total - u.sum()
	shares := split(absInt(diff), onesVec(u.length()))
	u = zip(u, shares, func(x, sh int64) int64 {
		if diff < 0 {
			return x - sh
		}
		return x + sh
	})
	for _, r := range u {
		if r.v < 0 {
			return nil, false
		}
	}
	return u, true
}

func absInt(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// mpiTier says how a region's MPI time was distributed.
type mpiTier int

const (
	// tierExact: DLB's minMpiNormdProc and minMpiNormdNode are reproduced.
	tierExact mpiTier = iota
	// tierProc: only minMpiNormdProc is reproduced (the node minimum is
	// inconsistent or absent).
	tierProc
	// tier35: DLB 3.5: rank 0 holds mpiNormdOfMaxUseful.
	tier35
	// tierEven: split by CPUs (DLB's values inconsistent or absent).
	tierEven
)

// distributeMPI splits total (DLB's mpiTime, M + Mw of all CPUs) over the
// processes of a region with the given CPUs and nodes (contiguous blocks,
// node[0] = 0) so that popmon's talp model reproduces DLB's minima:
// mpi_proc_min = min_i x_i/cpus_i and mpi_node_min = min over nodes of
// Σx_i/C_node. Rank 0 gets minProc×cpus_0; the other ranks of node 0 make
// up minNode×C_node0; the other nodes share the rest by CPUs. It checks
// that DLB's numbers allow that (every process at or above minProc, every
// node at or above minNode) and otherwise falls back: to minProc alone,
// then to a split by CPUs. why says what was inconsistent.
func distributeMPI(total int64, r *region, cpus vec, k int) (x vec, tier mpiTier, why string) {
	n := cpus.length()
	k = min(max(k, 1), n) // ranks on node 0
	C := cpus.sum()
	c0Node := cpus.slice(0, k).sum()
	even := split(total, cpus)
	if total == 0 {
		return even, tierExact, ""
	}
	X := float64(total)
	cpus0 := cpus.first()
	c0 := float64(cpus0)
	cn0 := float64(c0Node)
	// DLB writes the minima rounded to ns (%.0f); allow a little more.
	tol := 1 + 1e-9*float64(r.elapsed)

	// rank0Rest gives rank 0 the amount a0 (normalized v = a0/cpus_0) and
	// shares the rest by CPUs over the other ranks.
	rank0Rest := func(a0 int64) vec {
		a0 = min(max(a0, 0), total)
		if n == 1 {
			a0 = total // DLB's value matched up to rounding
		}
		return concat(constVec(1, a0), split(total-a0, cpus.slice(1, n)))
	}
	tryProc := func(v float64) (bool, string) {
		a0 := v * c0
		if n == 1 {
			if math.Abs(X-a0) > tol*c0 {
				return false, fmt.Sprintf("one process, but its MPI time per CPU %.0f ns is not mpiTime/numCpus %.0f ns", v, X/c0)
			}
			return true, ""
		}
		if a0 > X+tol*c0 {
			return false, fmt.Sprintf("%.0f ns × %d CPUs exceeds mpiTime %d ns", v, cpus0, total)
		}
		if rest := (X - a0) / (float64(C) - c0); rest < v-tol {
			return false, fmt.Sprintf("the other processes would have %.0f ns of MPI time per CPU, below the minimum %.0f ns", rest, v)
		}
		return true, ""
	}

	switch {
	case r.hasMinProc && r.hasMinNode:
		ok, reason := tryExact(X, r.minProc, r.minNode, c0, cn0, float64(C), n, k, tol)
		if ok {
			a0 := int64(math.Round(r.minProc * c0))
			a0 = min(max(a0, 0), total)
			r0 := int64(0)
			if k > 1 {
				r0 = int64(math.Round(r.minNode*cn0)) - a0
				if k == n { // one node: node 0 holds everything
					r0 = total - a0
				}
				r0 = min(max(r0, 0), total-a0)
			}
			if k == n && k == 1 {
				return constVec(1, total), tierExact, ""
			}
			return concat(constVec(1, a0), split(r0, cpus.slice(1, k)), split(total-a0-r0, cpus.slice(k, n))), tierExact, ""
		}
		ok2, reason2 := tryProc(r.minProc)
		if ok2 {
			return rank0Rest(int64(math.Round(r.minProc * c0))), tierProc, reason
		}
		return even, tierEven, reason + "; " + reason2
	case r.hasMinProc:
		ok, reason := tryProc(r.minProc)
		if ok {
			return rank0Rest(int64(math.Round(r.minProc * c0))), tierProc, "no minMpiNormdNode"
		}
		return even, tierEven, reason
	case r.hasOfMaxUseful:
		// DLB 3.5: the normalized MPI time of the process with the most
		// useful time, not necessarily the minimum.
		a0 := r.ofMaxUseful * c0
		if n == 1 && math.Abs(X-a0) > tol*c0 || a0 > X+tol*c0 {
			return even, tierEven, fmt.Sprintf("mpiNormdOfMaxUseful %.0f ns × %d CPUs does not fit mpiTime %d ns", r.ofMaxUseful, cpus0, total)
		}
		if n == 1 {
			return even, tier35, ""
		}
		return rank0Rest(int64(math.Round(a0))), tier35, ""
	}
	return even, tierEven, "no MPI minima recorded"
}

// tryExact checks that the distribution of [distributeMPI] reproduces
// minProc (mp) and minNode (mn) with every process ≥ mp and every node ≥
// mn: X total, c0 CPUs of rank 0, cn0 CPUs of node 0, C all CPUs, n ranks,
// k of them on node 0.
func tryExact(X, mp, mn, c0, cn0, C float64, n, k int, tol float64) (bool, string) {
	if mn < mp-tol {
		return false, fmt.Sprintf("minMpiNormdNode %.0f ns is below minMpiNormdProc %.0f ns (a node's average is never below its smallest process)", mn, mp)
	}
	a0 := mp * c0
	if a0 > X+tol*c0 {
		return false, fmt.Sprintf("minMpiNormdProc %.0f ns × %.0f CPUs exceeds mpiTime %.0f ns", mp, c0, X)
	}
	if k == n { // one node: its average is the application's
		if math.Abs(mn*C-X) > tol*C {
			return false, fmt.Sprintf("one node, but minMpiNormdNode %.0f ns is not mpiTime/numCpus %.0f ns (DLB counted another number of CPUs on the node)", mn, X/C)
		}
		if n > 1 {
			if rest := (X - a0) / (C - c0); rest < mp-tol {
				return false, fmt.Sprintf("the other processes would have %.0f ns of MPI time per CPU, below minMpiNormdProc %.0f ns", rest, mp)
			}
		} else if math.Abs(X-a0) > tol*c0 {
			return false, fmt.Sprintf("one process, but minMpiNormdProc %.0f ns is not mpiTime/numCpus %.0f ns", mp, X/c0)
		}
		return true, ""
	}
	if k == 1 {
		// Every node holds one rank: a node's value is its process's.
		if math.Abs(mn-mp) > tol {
			return false, fmt.Sprintf("one process per node, but minMpiNormdNode %.0f ns differs from minMpiNormdProc %.0f ns", mn, mp)
		}
	} else {
		r0 := mn*cn0 - a0
		if r0 < -tol*cn0 || r0/(cn0-c0) < mp-tol {
			return false, fmt.Sprintf("the other processes of node 0 would have %.0f ns of MPI time per CPU, below minMpiNormdProc %.0f ns", r0/(cn0-c0), mp)
		}
	}
	r1 := X - mn*cn0
	if rest := r1 / (C - cn0); r1 < -tol*C || rest < mn-tol {
		return false, fmt.Sprintf("the other nodes would have %.0f ns of MPI time per CPU, below minMpiNormdNode %.0f ns", rest, mn)
	}
	return true, ""
}

// mpiNotes explains how MPI time was distributed, per tier.
func mpiNotes(dist map[mpiTier][]string, reasons map[mpiTier][]string, workerIdle bool) []string {
	var notes []string
	what := "DLB's mpiTime, recorded as mpi_ns (DLB 3.6.2 to 3.7.0 include in it the time OpenMP workers idle while their primary thread is in MPI, popmon's mpi_worker_idle_ns)"
	if workerIdle {
		what = "DLB's mpiTime + mpiWorkerIdleTime (popmon's mpi_ns + mpi_worker_idle_ns, split in the file's proportion)"
	}
	if rs := dist[tierExact]; len(rs) > 0 {
		notes = append(notes, fmt.Sprintf("MPI time: %s is distributed so that the talp model reproduces DLB's minMpiNormdProc and minMpiNormdNode: rank 0 holds the per-process minimum, the other ranks of node 0 make up the per-node minimum, the other nodes share the rest by CPUs. Communication efficiency and load balance (In, Out) are DLB's; the per-process MPI times themselves are synthetic (%s).", what, regionList(rs)))
	}
	if rs := dist[tierProc]; len(rs) > 0 {
		notes = append(notes, fmt.Sprintf("MPI time: DLB's minMpiNormdNode is absent or inconsistent with the other totals (%s) — DLB caps a node's CPUs at its hardware CPUs, which breaks it with oversubscription (POP-METRICS.md, Deviation (node CPUs)) — so only minMpiNormdProc is reproduced: rank 0 holds it, the other ranks share the rest by CPUs; load balance In/Out are not DLB's (%s).", strings.Join(first(reasons[tierProc], 3), "; "), regionList(rs)))
	}
	if rs := dist[tier35]; len(rs) > 0 {
		notes = append(notes, fmt.Sprintf("MPI time (DLB 3.5 layout, which records no per-process or per-node MPI minimum): rank 0 stands for the process with the most useful time and holds its normalized MPI time (mpiNormdOfMaxUseful, which approximates the per-process minimum), the other ranks share the rest by CPUs; the per-node minimum is not recorded, so load balance In/Out follow from this synthesized placement. DLB 3.5 computed its MPI efficiencies from normalized useful times (usefulNormdApp, maxUsefulNormdProc, maxUsefulNormdNode), popmon's talp model from elapsed time, as DLB ≥ 3.6 does: the MPI efficiencies can differ from those in the file (%s).", regionList(rs)))
	}
	if rs := dist[tierEven]; len(rs) > 0 {
		notes = append(notes, fmt.Sprintf("MPI time is split evenly by CPUs because DLB's MPI minima are absent or inconsistent with the totals (%s): communication efficiency and load balance of these regions are not DLB's (%s).", strings.Join(first(reasons[tierEven], 3), "; "), regionList(rs)))
	}
	return notes
}

// impossible reports whether DLB's efficiency v (NaN: absent) is outside
// [0, 1].
func impossible(v float64) bool {
	return !math.IsNaN(v) && (v < 0 || v > 1+1e-9)
}

// showEff formats one of DLB's efficiencies for a note.
func showEff(v float64) string {
	if math.IsNaN(v) {
		return "absent"
	}
	return fmt.Sprintf("%.2f", v)
}

// percent formats a fraction as a percentage for a note.
func percent(f float64) string {
	if math.IsInf(f, 0) {
		return "an unbounded factor (elapsedTime is 0)"
	}
	return units.PercentOneDecimal(f)
}

// version is a DLB version: major.minor.patch.
type version struct{ major, minor, patch int }

// parseVersion reads the leading "X.Y" or "X.Y.Z" of a DLB version
// ("3.5a", "3.7.0", "3.7.0+63-9d67").
func parseVersion(s string) (version, bool) {
	var v version
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return v, false
	}
	num := func(p string) (int, bool) {
		n, i := 0, 0
		for i < len(p) && p[i] >= '0' && p[i] <= '9' && i < 6 {
			n = 10*n + int(p[i]-'0')
			i++
		}
		return n, i > 0
	}
	var ok bool
	if v.major, ok = num(parts[0]); !ok {
		return v, false
	}
	if v.minor, ok = num(parts[1]); !ok {
		return v, false
	}
	if len(parts) == 3 {
		v.patch, _ = num(parts[2])
	}
	return v, true
}

// before reports whether v is older than major.minor.patch.
func (v version) before(major, minor, patch int) bool {
	if v.major != major {
		return v.major < major
	}
	if v.minor != minor {
		return v.minor < minor
	}
	return v.patch < patch
}

func regionList(names []string) string {
	label := "region "
	if len(names) > 1 {
		label = fmt.Sprintf("%d regions: ", len(names))
	}
	q := make([]string, 0, 5)
	for _, n := range names[:min(len(names), 5)] {
		q = append(q, quote(n))
	}
	s := label + strings.Join(q, ", ")
	if len(names) > 5 {
		s += fmt.Sprintf(" and %d more", len(names)-5)
	}
	return s
}

// first returns the first n elements of s, and "… N more" when there are
// more.
func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("… %d more", len(s)-n))
	}
	return s
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func ifStr(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
