package measure

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalid is wrapped by every error that [Measurement.Validate] returns,
// so callers can tell a bad file from an I/O failure with errors.Is.
var ErrInvalid = errors.New("invalid measurement")

var errNoTimestamp = &ValidationError{Path: "timestamp", Problem: "is missing"}

// FormatError says that the input is not a popmon measurement file at all.
type FormatError struct {
	// File is the file name; empty for an unnamed reader.
	File string
	// Format is the value of the "format" key that was found ("" when
	// there was none).
	Format string
	// Reason, when not empty, explains what is wrong instead of Format
	// (invalid JSON, no format key, ...).
	Reason string
}

// Error implements error.
func (e *FormatError) Error() string {
	subject := e.File
	if subject == "" {
		subject = "input"
	}
	if e.Reason != "" {
		return fmt.Sprintf("%s is not a popmon measurement file (%s)", subject, e.Reason)
	}
	return fmt.Sprintf("%s is not a popmon measurement file (format %q)", subject, e.Format)
}

// Unwrap makes a FormatError match [ErrInvalid].
func (e *FormatError) Unwrap() error { return ErrInvalid }

// VersionError says that a measurement file is newer than this package.
type VersionError struct {
	// File is the file name; empty for an unnamed reader.
	File string
	// Version is the file's version.
	Version int
	// Supported is the newest version this package reads ([Version]).
	Supported int
}

// Error implements error.
func (e *VersionError) Error() string {
	msg := fmt.Sprintf("measurement file version %d is newer than this popmon supports (%d): upgrade popmon", e.Version, e.Supported)
	if e.File != "" {
		return e.File + ": " + msg
	}
	return msg
}

// Unwrap makes a VersionError match [ErrInvalid].
func (e *VersionError) Unwrap() error { return ErrInvalid }

// ValidationError is one problem in the content of a measurement: the
// place (a JSON path such as `regions[1] "solve": processes[0]`) and what
// is wrong there.
type ValidationError struct {
	// Path locates the problem, in the file's key names.
	Path string
	// Problem says what is wrong.
	Problem string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("%v: %s %s", ErrInvalid, e.Path, e.Problem)
}

// Unwrap makes a ValidationError match [ErrInvalid].
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// maxProblems bounds how many problems Validate reports at once.
const maxProblems = 10

type problems struct {
	errs  []error
	extra int
}

func (p *problems) add(path, format string, args ...any) {
	if len(p.errs) >= maxProblems {
		p.extra++
		return
	}
	p.errs = append(p.errs, &ValidationError{Path: path, Problem: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	if p.extra > 0 {
		p.errs = append(p.errs, fmt.Errorf("%w: and %d more problems", ErrInvalid, p.extra))
	}
	if len(p.errs) == 1 {
		return p.errs[0]
	}
	return errors.Join(p.errs...)
}

// Validate checks that m is a consistent measurement: the right format and a
// supported version, at least one process and one region, unique ranks and
// region names, no negative times or counts (also in "openmp" and
// "omp_regions"), at least one CPU per process, and every rank of a region
// listed in processes. It does not compare times with each other (a
// primary thread's time above the process's, say): clocks and rounding make
// such relations hold only approximately, and the metric models clamp. It reports up to ten
// problems; every returned error wraps [ErrInvalid].
func (m *Measurement) Validate() error {
	if m == nil {
		return fmt.Errorf("%w: no measurement", ErrInvalid)
	}
	if m.Format != Format {
		return &FormatError{Format: m.Format}
	}
	if m.Version > Version {
		return &VersionError{Version: m.Version, Supported: Version}
	}
	var p problems
	if m.Version < 1 {
		p.add("version", "is %d; versions start at 1", m.Version)
	}
	if pa := m.Partial; pa != nil {
		if m.Version < 3 && m.Version != 0 {
			p.add("partial", "needs version 3 (an older reader would take the file for complete)")
		}
		if pa.Ranks < 1 || pa.Included < 1 || pa.Included > pa.Ranks || pa.CutNS < 0 {
			p.add("partial", "has %d included of %d ranks, cut at %d ns", pa.Included, pa.Ranks, pa.CutNS)
		}
	}
	if in := m.Incomplete; in != nil {
		if m.Version < 2 {
			p.add("incomplete", "needs version 2 (a version-1 reader would take the file for complete)")
		}
		if in.Processes < 1 || in.Measured < 0 || in.Measured > in.Processes {
			p.add("incomplete", "has %d measured of %d processes", in.Measured, in.Processes)
		}
	}
	if m.Timestamp != "" {
		if _, err := time.Parse(time.RFC3339, m.Timestamp); err != nil {
			p.add("timestamp", "%q is not an RFC 3339 time", m.Timestamp)
		}
	}
	r := m.Resources
	for _, f := range []struct {
		name string
		v    int
	}{{"processes", r.Processes}, {"nodes", r.Nodes}, {"cpus", r.CPUs}, {"gpus", r.GPUs}} {
		if f.v < 0 {
			p.add("resources."+f.name, "is negative (%d)", f.v)
		}
	}
	if m.Summarized != nil {
		m.validateSummary(&p)
	} else if len(m.Processes) == 0 {
		p.add("processes", "is missing or empty: a measurement has at least one process")
	} else if r.Processes != len(m.Processes) {
		p.add("resources.processes", "is %d but %d processes are listed", r.Processes, len(m.Processes))
	}
	ranks := make(map[int]bool, len(m.Processes))
	for i, pr := range m.Processes {
		path := fmt.Sprintf("processes[%d]", i)
		if pr.Rank < 0 {
			p.add(path, "has a negative rank (%d)", pr.Rank)
		}
		if ranks[pr.Rank] {
			p.add(path, "repeats rank %d", pr.Rank)
		}
		ranks[pr.Rank] = true
		if pr.Node < 0 || (r.Nodes > 0 && pr.Node >= r.Nodes) {
			p.add(path, "has node %d outside 0 … %d (resources.nodes is %d)", pr.Node, r.Nodes-1, r.Nodes)
		}
		if pr.CPUs < 1 {
			p.add(path, "has %d CPUs; every process has at least 1", pr.CPUs)
		}
	}
	if len(m.Regions) == 0 {
		p.add("regions", "is missing or empty: a measurement has at least the Global region")
	}
	names := make(map[string]int, len(m.Regions))
	for i := range m.Regions {
		m.Regions[i].validate(i, ranks, names, &p)
	}
	for i, c := range m.MPICalls {
		path := fmt.Sprintf("mpi_calls[%d]", i)
		if c.Name == "" {
			p.add(path, "has no name")
		} else {
			path += fmt.Sprintf(" %q", c.Name)
		}
		for _, f := range []struct {
			name string
			v    int64
		}{{"calls", c.Calls}, {"time_ns", c.TimeNS}, {"min_time_ns", c.MinTimeNS}, {"max_time_ns", c.MaxTimeNS},
			{"bytes_sent", c.BytesSent}, {"bytes_recv", c.BytesRecv}} {
			if f.v < 0 {
				p.add(path, "has negative %s (%d)", f.name, f.v)
			}
		}
		if len(c.SizeHist) > 64 {
			p.add(path, "has %d size_hist buckets (at most 64: sizes are below 2^63 bytes)", len(c.SizeHist))
		}
		for k, v := range c.SizeHist {
			if v < 0 {
				p.add(path, "has a negative size_hist[%d] (%d)", k, v)
			}
		}
	}
	m.validateOpenMP(&p)
	m.validateGPU(&p)
	if in := m.IdealNetwork; in != nil {
		if in.RuntimeNS < 1 || in.UsefulMaxNS < 0 || in.UsefulMaxNS > in.RuntimeNS || in.EagerLimit < 0 {
			p.add("ideal_network", "has runtime_ns %d, useful_max_ns %d and eager_limit %d (want runtime_ns ≥ 1, 0 ≤ useful_max_ns ≤ runtime_ns, eager_limit ≥ 0)", in.RuntimeNS, in.UsefulMaxNS, in.EagerLimit)
		}
	}
	return p.err()
}

// validateOpenMP checks the "openmp" object and the "omp_regions" array:
// no negative counts or times. Neither is required.
func (m *Measurement) validateOpenMP(p *problems) {
	if o := m.OpenMP; o != nil && o.MaxThreads < 0 {
		p.add("openmp", "has negative max_threads (%d)", o.MaxThreads)
	}
	for i, r := range m.OMPRegions {
		path := fmt.Sprintf("omp_regions[%d]", i)
		if r.Threads < 0 {
			p.add(path, "has negative threads (%d)", r.Threads)
		}
		for _, f := range []field{
			{"executions", r.Executions},
			{"wall_ns", r.WallNS},
			{"useful_ns", r.UsefulNS},
			{"imbalance_ns", r.ImbalanceNS},
			{"synchronization_ns", r.SynchronizationNS},
			{"limited_parallelism_ns", r.LimitedParallelismNS},
			{"thread_management_ns", r.ThreadManagementNS},
		} {
			if f.v < 0 {
				p.add(path, "has negative %s (%d)", f.name, f.v)
			}
		}
	}
}

func (g *Region) validate(i int, ranks map[int]bool, names map[string]int, p *problems) {
	path := fmt.Sprintf("regions[%d]", i)
	if g.Name == "" {
		p.add(path, "has no name")
	} else {
		path += fmt.Sprintf(" %q", g.Name)
		if j, dup := names[g.Name]; dup {
			p.add(path, "has the same name as regions[%d]", j)
		} else {
			names[g.Name] = i
		}
	}
	seen := make(map[int]bool, len(g.Processes))
	for k, a := range g.Processes {
		ppath := fmt.Sprintf("%s: processes[%d]", path, k)
		if !ranks[a.Rank] {
			p.add(ppath, "has rank %d, which is not listed in processes", a.Rank)
		}
		if seen[a.Rank] {
			p.add(ppath, "repeats rank %d", a.Rank)
		}
		seen[a.Rank] = true
		if a.CPUs < 1 {
			p.add(ppath, "has %d CPUs; a process that visited a region has at least 1", a.CPUs)
		}
		for _, f := range a.fields() {
			if f.v < 0 {
				p.add(ppath, "has negative %s (%d)", f.name, f.v)
			}
		}
		if a.Threads < 0 || (a.Threads > 0 && a.CPUs != 1) {
			p.add(ppath, "has threads %d with cpus %d (a region measured per thread has 1 CPU)", a.Threads, a.CPUs)
		}
	}
}

type field struct {
	name string
	v    int64
}

// fields lists the times and counts of a, in file key names.
func (a *ProcessAccounts) fields() []field {
	return []field{
		{"visits", a.Visits},
		{"elapsed_ns", a.ElapsedNS},
		{"useful_ns", a.UsefulNS},
		{"mpi_ns", a.MPINS},
		{"mpi_worker_idle_ns", a.MPIWorkerIdleNS},
		{"omp_serialization_ns", a.OMPSerializationNS},
		{"omp_load_imbalance_ns", a.OMPLoadImbalanceNS},
		{"omp_scheduling_ns", a.OMPSchedulingNS},
		{"gpu_runtime_ns", a.GPURuntimeNS},
		{"instrumentation_ns", a.InstrumentationNS},
		{"mpi_calls", a.MPICalls},
		{"omp_parallels", a.OMPParallels},
		{"omp_tasks", a.OMPTasks},
		{"gpu_runtime_calls", a.GPURuntimeCalls},
		{"cycles", a.Cycles},
		{"instructions", a.Instructions},
		{"primary_useful_ns", a.PrimaryUsefulNS},
		{"primary_mpi_ns", a.PrimaryMPINS},
		{"other_ns", a.OtherNS},
		{"primary_other_ns", a.PrimaryOtherNS},
		{"primary_parallel_ns", a.PrimaryParallelNS},
		{"primary_serial_useful_ns", a.PrimarySerialUsefulNS},
		{"parallel_useful_ns", a.ParallelUsefulNS},
		{"thread_useful_max_ns", a.ThreadUsefulMaxNS},
	}
}
