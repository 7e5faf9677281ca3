package pop

import (
	"time"

	"github.com/popmon/popmon/measure"
)

// Run is what a report says about the run beside its metrics: the
// measurement's header (command, time, resources, runtimes, tool), its
// tables (MPI calls, OpenMP parallel constructs, GPU kernels, copies and
// idle gaps) and warnings, and what is derived from it once, here, for
// every renderer: why OpenMP, the hardware counters or the GPU devices were
// not measured, the GPU vendors, the accounts invariant's violations, the
// hardware CPUs of DLB's numCpus. [ComputeWith] fills [Report.Run] from the
// measurement; renderers print it as it is and never go back to the
// measurement. The slices and pointers are the measurement's own: neither
// side modifies them.
type Run struct {
	// Header.
	Command    []string
	Timestamp  string
	Launcher   measure.Launcher
	Resources  measure.Resources
	Incomplete *measure.Incomplete
	MPI        *measure.MPI
	Partial    *measure.Partial
	// Lewi and LewiProcesses: LeWI was on (nil: it was not) and each
	// process's lent and borrowed CPU time, by rank (nil in summary form).
	// LewiHeld is the run's accounts against the CPUs its processes held
	// over time (nil: not derived, LewiHeldNote says why; docs/lewi.md).
	Lewi          *measure.Lewi
	LewiProcesses []LewiProcess
	LewiHeld      *HeldAccounts
	LewiHeldNote  string
	// DromProcesses, DromHeld and DromHeldNote are the same for a run
	// where DROM changed some process's CPUs and LeWI was off (nil
	// otherwise): each registered process's own CPUs and accounts against
	// the CPUs it held, the run's sums over them (nil: not derived), why
	// not.
	DromProcesses []DromProcess
	DromHeld      *HeldAccounts
	DromHeldNote  string
	OpenMP        *measure.OpenMP
	Counters      *measure.Counters
	Tool          measure.Tool
	Clock         measure.Clock
	Source        *measure.Source
	// Time is Timestamp parsed ([measure.Measurement.Time]); zero when
	// the measurement has none or it is not RFC 3339.
	Time time.Time

	// Tables and warnings.
	MPICalls     []measure.MPICall
	OMPRegions   []measure.OMPRegion
	IdealNetwork *measure.IdealNetwork
	GPU          *measure.GPU
	GPUDevices   []measure.GPUDevice
	GPUKernels   []measure.GPUKernel
	GPUCopies    []measure.GPUCopy
	GPUIdle      []measure.GPUIdle
	// GlobalElapsedNS is the Global region's elapsed time, the largest of
	// its processes' (0 in summary form or without the region): what the
	// GPU idle gaps are a share of.
	GlobalElapsedNS int64
	Warnings        []string

	// Notes derived from the measurement.

	// OpenMPNotMeasured says why the run's OpenMP runtime was not
	// measured ([measure.OpenMP.NotMeasured]); "" when it was or there
	// was none.
	OpenMPNotMeasured string
	// CountersNotMeasured says why the hardware counters were not
	// measured ([measure.Measurement.CountersNotMeasured]); "" when they
	// were.
	CountersNotMeasured string
	// GPUNotMeasured says why the run has no device metrics
	// ([measure.Measurement.GPUNotMeasured]); "" with devices.
	GPUNotMeasured string
	// GPUVendors are the vendors of the run's devices
	// ([measure.Measurement.GPUVendors]).
	GPUVendors []string
	// AccountViolations are the places where the accounts break the
	// invariant of POP-METRICS.md §1, as the reader derived them once
	// ([measure.Measurement.Violations]); the same list the regions'
	// refusals come from.
	AccountViolations []measure.AccountViolation
	// HasMPI is set when the program initialised MPI.
	HasMPI bool
	// hardwareCPUs is DLB's numCpus by region name ("" for the whole
	// run), where it differs from the region's CPUs.
	hardwareCPUs map[string]int
	// threads is, by region name, the threads of a region measured per
	// thread (RegionThreads).
	threads map[string]int
}

// NewRun returns what reports say about the run of m besides the metrics
// ([Run]); nil for a nil m. [ComputeWith] calls it; a report built by hand
// for a measurement (a live window without activity) takes it from here.
func NewRun(m *measure.Measurement) *Run {
	if m == nil {
		return nil
	}
	r := &Run{
		Command:             m.Command,
		Timestamp:           m.Timestamp,
		Launcher:            m.Launcher,
		Resources:           m.Resources,
		Incomplete:          m.Incomplete,
		MPI:                 m.MPI,
		Partial:             m.Partial,
		OpenMP:              m.OpenMP,
		Counters:            m.Counters,
		Tool:                m.Tool,
		Clock:               m.Clock,
		Source:              m.Source,
		MPICalls:            m.MPICalls,
		OMPRegions:          m.OMPRegions,
		IdealNetwork:        m.IdealNetwork,
		GPU:                 m.GPU,
		GPUDevices:          m.GPUDevices,
		GPUKernels:          m.GPUKernels,
		GPUCopies:           m.GPUCopies,
		GPUIdle:             m.GPUIdle,
		Warnings:            m.Warnings,
		OpenMPNotMeasured:   m.OpenMP.NotMeasured(),
		CountersNotMeasured: m.CountersNotMeasured(),
		GPUNotMeasured:      m.GPUNotMeasured(),
		GPUVendors:          m.GPUVendors(),
		AccountViolations:   m.Violations(),
		HasMPI:              m.HasMPI(),
	}
	if t, err := m.Time(); err == nil {
		r.Time = t
	}
	if g, ok := m.Global(); ok {
		for _, a := range g.Processes {
			r.GlobalElapsedNS = max(r.GlobalElapsedNS, a.ElapsedNS)
		}
	}
	r.hardwareCPUs = hardwareCPUsOf(m)
	r.threads = threadsOf(m)
	r.Lewi, r.LewiProcesses, r.LewiHeld, r.LewiHeldNote = lewiOf(m)
	r.DromProcesses, r.DromHeld, r.DromHeldNote = dromOf(m)
	return r
}

// HardwareCPUs is DLB's numCpus of a region (the whole run for ""): the
// hardware CPUs its processes' threads can run on, Σ min(cpus, affinity
// CPUs) over the processes that visited it, where the measurement recorded
// their affinity masks (under LeWI, the affinity and the CPUs its teams
// borrowed: its largest team); otherwise (and for a region in summary
// form) cpus, popmon's CPUs, which are threads. The two differ only with
// more threads than CPUs (docs/coming-from-dlb.md).
func (r *Run) HardwareCPUs(region string, cpus int) int {
	if r == nil {
		return cpus
	}
	if n, ok := r.hardwareCPUs[region]; ok {
		return n
	}
	return cpus
}

// hardwareCPUsOf returns [Run.HardwareCPUs] of the whole run ("") and of
// every region that has it; nil when the measurement did not record every
// process's affinity.
func hardwareCPUsOf(m *measure.Measurement) map[string]int {
	aff := make(map[int]int, len(m.Processes))
	for _, p := range m.Processes {
		if p.AffinityCPUs <= 0 {
			return nil
		}
		aff[p.Rank] = p.AffinityCPUs
		if p.Lewi != nil {
			// LeWI binds each thread of a team to a CPU of its own
			// (its own or a borrowed one): its threads ran on as
			// many CPUs as its largest team, as DLB counts them (the
			// union of the CPUs its threads ran on).
			aff[p.Rank] = max(p.AffinityCPUs, p.CPUs)
		}
	}
	if len(aff) == 0 {
		return nil
	}
	out := map[string]int{}
	sum := 0
	for _, p := range m.Processes {
		sum += min(p.CPUs, aff[p.Rank])
	}
	out[""] = sum
regions:
	for i := range m.Regions {
		reg := &m.Regions[i]
		if reg.Summary != nil {
			continue
		}
		if _, seen := out[reg.Name]; seen || reg.Name == "" {
			continue // the first of a name, as Measurement.Region finds it
		}
		sum := 0
		for _, a := range reg.Processes {
			n, ok := aff[a.Rank]
			if !ok {
				continue regions
			}
			sum += min(max(a.CPUs, a.Threads), n)
		}
		out[reg.Name] = sum
	}
	return out
}

// RegionThreads is the threads of a region measured per thread (started
// inside OpenMP parallel regions: its records have 1 CPU each and the
// threads that measured it), summed over its processes, as DLB counts them
// (numOmpThreads, avgCpus); cpus for any other region.
func (r *Run) RegionThreads(region string, cpus int) int {
	if r == nil {
		return cpus
	}
	if n, ok := r.threads[region]; ok {
		return n
	}
	return cpus
}

// threadsOf returns [Run.RegionThreads] of every region measured per
// thread (the first of a name, in full form).
func threadsOf(m *measure.Measurement) map[string]int {
	var out map[string]int
	for i := range m.Regions {
		reg := &m.Regions[i]
		if reg.Summary != nil || reg.Threads() == 0 {
			continue
		}
		if _, seen := out[reg.Name]; seen {
			continue
		}
		sum := 0
		for _, a := range reg.Processes {
			sum += max(a.CPUs, a.Threads)
		}
		if out == nil {
			out = map[string]int{}
		}
		out[reg.Name] = sum
	}
	return out
}
