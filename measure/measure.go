// Package measure is popmon's measurement model: the Go types of the
// measurement file ("popmon-measurement", docs/measurement-format.md), and
// functions to read, validate and write it.
//
// The measurement file is the contract between the measurement library
// (libpopmon, which writes it) and every consumer (reports, pages, models).
// The types below mirror the file key for key; their JSON tags are the
// file's keys. All times are nanoseconds of a monotonic clock, summed over
// the CPUs (threads) of a process, as defined in POP-METRICS.md §1.
//
// Readers accept every file version up to [Version], ignore unknown keys and
// treat a missing time or count as 0. [Read] and [ReadFile] validate what
// they read, so a *Measurement they return satisfies [Measurement.Validate].
package measure

import (
	"fmt"
	"strings"
	"time"
)

// Format is the value of the "format" key of every measurement file.
const Format = "popmon-measurement"

// Version is the newest measurement file version this package reads.
// Version 2 marks a measurement that may not cover the whole job: it can
// hold [Incomplete], which a version-1 reader would ignore and take the
// file for complete; writers write version 1 when Incomplete is nil.
// Version 4 is the summary form (see [Summarized]).
const Version = 4

// GlobalRegion is the name of the implicit whole-run region.
const GlobalRegion = "Global"

// Measurement is one measurement file: one run of one program.
type Measurement struct {
	// Format is always [Format].
	Format string `json:"format"`
	// Version is the file's major version, 1 ≤ Version ≤ [Version].
	Version int `json:"version"`
	// Tool names the library that wrote the file.
	Tool Tool `json:"tool"`
	// Timestamp is the end of the run, RFC 3339 in UTC; see [Measurement.Time].
	Timestamp string `json:"timestamp,omitempty"`
	// Command is the measured program's argv as rank 0 saw it.
	Command []string `json:"command"`
	// Cwd is the working directory of rank 0.
	Cwd string `json:"cwd"`
	// Launcher describes how the program was started.
	Launcher Launcher `json:"launcher"`
	// MPI is present when the program initialised MPI; nil otherwise.
	MPI *MPI `json:"mpi,omitempty"`
	// Clock says how times were measured.
	Clock Clock `json:"clock"`
	// Resources summarises the resources of the run.
	Resources Resources `json:"resources"`
	// Processes holds one entry per process (MPI rank), in rank order.
	Processes []Process `json:"processes"`
	// Regions holds one entry per region, Global first.
	Regions []Region `json:"regions"`
	// MPICalls holds one entry per MPI function called at least once,
	// aggregated over processes and over the whole run.
	MPICalls []MPICall `json:"mpi_calls"`
	// OpenMP is present when the program used an OpenMP runtime.
	OpenMP *OpenMP `json:"openmp,omitempty"`
	// Git is the program's version-control state, when known.
	Git *Git `json:"git,omitempty"`
	// Counters says whether hardware counters were measured and, when not,
	// why; nil in files of libraries that did not record it.
	Counters *Counters `json:"counters,omitempty"`
	// GPU says whether GPU device activity was measured and, when not,
	// why; nil for runs without CUDA or HIP and files of older libraries.
	GPU *GPU `json:"gpu,omitempty"`
	// GPUDevices lists the GPU devices with activity in the run, merged
	// across processes by UUID; every "device" field indexes it.
	GPUDevices []GPUDevice `json:"gpu_devices,omitempty"`
	// GPUKernels are the top kernels by device time (whole run, all
	// processes, merged by name and device), longest first.
	GPUKernels []GPUKernel `json:"gpu_kernels,omitempty"`
	// GPUCopies are the memory operations per kind (whole run, all
	// processes and devices).
	GPUCopies []GPUCopy `json:"gpu_copies,omitempty"`
	// GPUIdle are the idle gaps of each device inside Global.
	GPUIdle []GPUIdle `json:"gpu_idle,omitempty"`
	// Trace is present when the run was traced (popmon run --trace).
	Trace *TraceInfo `json:"trace,omitempty"`
	// IdealNetwork is present when the run was traced and replayed on an
	// ideal network (popmon run --trace, an imported trace).
	IdealNetwork *IdealNetwork `json:"ideal_network,omitempty"`
	// Source says where the measurement came from when libpopmon did not
	// write it (a Paraver trace or a DLB/TALP JSON file that popmon
	// imported); nil for files written by libpopmon.
	Source *Source `json:"source,omitempty"`
	// OMPRegions profiles every outermost OpenMP parallel construct.
	OMPRegions []OMPRegion `json:"omp_regions,omitempty"`
	// Incomplete says which processes of the job the measurement lacks and
	// why (version 2); nil when it covers every process.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
	// Series holds the run's efficiencies over time: per region, the
	// accounts of every process in each interval (popmon run samples the
	// processes' live files); nil when not sampled.
	Series *Series `json:"series,omitempty"`
	// Partial is set when the job ended before every process reached
	// MPI_Finalize (killed, crashed, aborted, exited): the measurement was
	// assembled from the processes' live files up to Partial.CutNS, and the
	// file has version 3 so that an older popmon refuses it rather than
	// take it for complete.
	Partial *Partial `json:"partial,omitempty"`
	// Interception is present when some MPI calls never reached the
	// library (the program's own PMPI wrappers, MPI linked statically,
	// another tool earlier in LD_PRELOAD): the accounts then miss them.
	Interception *Interception `json:"interception,omitempty"`
	// GlobalAlignment says how far apart the ranks started and ended the
	// Global region before libpopmon aligned it (docs/library.md); nil in
	// files of libraries that did not align it and in imported ones.
	GlobalAlignment *GlobalAlignment `json:"global_alignment,omitempty"`
	// Lewi is present when LeWI was on (docs/lewi.md): CPUs moved between
	// the processes of a node; the processes' own records say how much.
	Lewi *Lewi `json:"lewi,omitempty"`
	// Warnings are the lines the library printed with the "popmon:" prefix:
	// everything it could not do.
	Warnings []string `json:"warnings"`
	// Summarized is set in summary form: per-process records were above
	// the limit, so every region carries a [RegionSummary] instead.
	Summarized *Summarized `json:"summary,omitempty"`

	// AccountViolations are the places where the accounts break the
	// invariant of POP-METRICS.md §1 ([CheckAccounts]), derived once:
	// every reader ([Read], [ReadFile], the importers, the live files'
	// assembly) calls [Measurement.Violations] when it has built the
	// measurement, and everything after it (pop's refusals, the reports'
	// warnings) uses that result. It is not part of the file (Write
	// ignores it).
	AccountViolations []AccountViolation `json:"-"`
	// checkedRegions is the region list AccountViolations was derived
	// from: a copy of the measurement with other regions (a window, an
	// interval, the summary form) is checked again.
	checkedRegions regionsID
}

// regionsID identifies a measurement's region list: its first element
// and length (a list replaced by another has another first element).
type regionsID struct {
	first *Region
	n     int
	ok    bool
}

// Violations returns the places where m breaks the accounts invariant
// ([CheckAccounts]), derived once: on the first call, which records them
// in AccountViolations, and taken from that record after it. A
// measurement's readers call it once they have built it; a measurement
// built otherwise (a test's) is checked on its first use, and a copy with
// another region list (a live window, an interval, the summary form) on
// the copy's first use. Accounts changed in place are not seen: check
// them with CheckAccounts.
func (m *Measurement) Violations() []AccountViolation {
	if m == nil {
		return nil
	}
	id := regionsID{n: len(m.Regions), ok: true}
	if id.n > 0 {
		id.first = &m.Regions[0]
	}
	if m.checkedRegions != id {
		m.AccountViolations, m.checkedRegions = CheckAccounts(m), id
	}
	return m.AccountViolations
}

// Tool names the library that wrote a measurement file.
type Tool struct {
	// Name is "popmon" for files written by libpopmon.
	Name string `json:"name"`
	// Version is the version of the library.
	Version string `json:"version"`
}

// Launcher kinds written in [Launcher.Kind].
const (
	LauncherOpenMPI = "openmpi"
	LauncherMPICH   = "mpich"
	LauncherSlurm   = "slurm"
	LauncherNone    = "none"
)

// Launcher describes the launcher environment of a run.
type Launcher struct {
	// Kind is one of LauncherOpenMPI, LauncherMPICH, LauncherSlurm or
	// LauncherNone.
	Kind string `json:"kind"`
	// JobID is the launcher's job id; empty when unknown.
	JobID string `json:"job_id,omitempty"`
	// StepID is Slurm's step id ($SLURM_STEP_ID) of the measured ranks;
	// empty when unknown or not under Slurm.
	StepID string `json:"step_id,omitempty"`
	// NodeList is Slurm's node list of the step (or of the job), in
	// Slurm's compressed form ("node[0-1]"); empty when unknown.
	NodeList string `json:"node_list,omitempty"`
}

// Job names a Slurm job for reports: "Slurm job 8, step 0 on node[0-1]";
// empty when no Slurm job id is known (other launchers' ids are internal
// to the launcher and mean nothing to a user).
func (l Launcher) Job() string {
	if l.Kind != LauncherSlurm || l.JobID == "" {
		return ""
	}
	s := "Slurm job " + l.JobID
	if l.StepID != "" {
		s += ", step " + l.StepID
	}
	if l.NodeList != "" {
		s += " on " + l.NodeList
	}
	return s
}

// MPI describes the MPI library of a run that initialised MPI.
type MPI struct {
	// Library is the first line of MPI_Get_library_version.
	Library string `json:"library"`
	// Standard is the MPI standard version, e.g. "3.1".
	Standard string `json:"standard"`
	// ThreadLevel is "single", "funneled", "serialized" or "multiple";
	// "unknown" in imported measurements.
	ThreadLevel string `json:"thread_level"`
}

// Clock says how the times of a measurement were taken.
type Clock struct {
	// Source is ClockTSC, ClockMonotonic, or for imported measurements
	// ClockTrace or ClockTALP.
	Source string `json:"source"`
}

// Clock sources ([Clock.Source]).
const (
	ClockTSC       = "tsc"
	ClockMonotonic = "monotonic"
	// ClockTrace: times are a trace's timestamps (popmon import).
	ClockTrace = "trace"
	// ClockTALP: times are DLB/TALP's (a TALP JSON file).
	ClockTALP = "talp"
)

// Resources summarises the resources of a run.
type Resources struct {
	// Processes is the number of MPI ranks (1 without MPI).
	Processes int `json:"processes"`
	// Nodes is the number of distinct shared-memory nodes.
	Nodes int `json:"nodes"`
	// CPUs is Σ CPUs of all processes (see [Process.CPUs]).
	CPUs int `json:"cpus"`
	// GPUs is the number of GPU devices used.
	GPUs int `json:"gpus"`
	// HardwareCounters says whether cycles and instructions were measured.
	HardwareCounters bool `json:"hardware_counters"`
}

// Process is one process (MPI rank) of a run.
type Process struct {
	// Rank is the rank in MPI_COMM_WORLD (0 without MPI).
	Rank int `json:"rank"`
	// Node is the node index, 0 … nodes−1, in order of each node's lowest
	// rank.
	Node int `json:"node"`
	// Hostname is the host name of the node.
	Hostname string `json:"hostname"`
	// PID is the process id.
	PID int `json:"pid"`
	// CPUs is the number of CPUs of this process in the POP model: threads
	// that did work.
	CPUs int `json:"cpus"`
	// MPIThreads is how many of the CPUs are MPI threads: threads other
	// than the primary and OpenMP threads that called MPI (0 when none).
	MPIThreads int `json:"mpi_threads,omitempty"`
	// AffinityCPUs is the number of hardware CPUs in the process's
	// affinity mask at start-up (0: not recorded): the CPUs its threads
	// could run on, which DLB/TALP counts as numCpus (talpjson).
	AffinityCPUs int `json:"affinity_cpus,omitempty"`
	// Lewi is the CPU time this process lent and borrowed under LeWI
	// (docs/lewi.md); nil when LeWI was not on in it.
	Lewi *ProcessLewi `json:"lewi,omitempty"`
	// Drom is its own CPUs over time under DROM (docs/drom.md); nil when
	// it did not register with DROM.
	Drom *ProcessDrom `json:"drom,omitempty"`
}

// ProcessDrom is a process's own CPUs under DROM: how many it registered
// and how much CPU time its CPUs differed from them over the run, as it
// adopted the masks DROM gave it (CPUs × ns; negative: fewer).
type ProcessDrom struct {
	OwnCPUs        int   `json:"own_cpus"`
	OwnChangeCPUNS int64 `json:"own_change_cpu_ns"`
}

// ProcessLewi is one process's CPU time moved by LeWI: CPUs × time, in
// nanoseconds.
type ProcessLewi struct {
	// OwnCPUs is the number of its own CPUs LeWI registered (0: files of
	// older libraries; its affinity CPUs then).
	OwnCPUs int `json:"own_cpus,omitempty"`
	// LentCPUNS is its own CPUs' time lent while it waited in blocking
	// MPI calls (lent whether or not another process used them).
	LentCPUNS int64 `json:"lent_cpu_ns"`
	// LentCallerNS is the part of LentCPUNS that was the CPU the lending
	// thread ran on: the time that thread waited in MPI on no CPU of the
	// process's. Files of older libraries lack it (nil).
	LentCallerNS *int64 `json:"lent_caller_ns,omitempty"`
	// BorrowedCPUNS is other processes' CPUs' time its parallel regions
	// ran on.
	BorrowedCPUNS int64 `json:"borrowed_cpu_ns"`
	// OwnChangeCPUNS is how much CPU time its own CPUs differed from
	// OwnCPUs over the run, DROM having changed them while LeWI was on
	// (negative: fewer; 0 without a change).
	OwnChangeCPUNS int64 `json:"own_change_cpu_ns,omitempty"`
}

// Lewi says that LeWI was on in a run (popmon run --lewi, DLB_ARGS=--lewi)
// and sums its processes' [ProcessLewi].
type Lewi struct {
	// Processes is how many processes had LeWI on.
	Processes     int   `json:"processes"`
	LentCPUNS     int64 `json:"lent_cpu_ns"`
	BorrowedCPUNS int64 `json:"borrowed_cpu_ns"`
}

// Incomplete says which processes of a job a measurement lacks.
type Incomplete struct {
	// Processes is the number of processes of the job (MPI_COMM_WORLD).
	Processes int `json:"processes"`
	// Measured is the number of processes in the measurement.
	Measured int `json:"measured"`
	// MissingRanks lists the ranks not measured, as ranges ("2-3,7").
	MissingRanks string `json:"missing_ranks"`
	// Reason says why, in one sentence with the fix.
	Reason string `json:"reason"`
}

// Reasons a measurement is partial.
const (
	PartialKilled     = "killed"      // processes ended by SIGKILL (or vanished without a trace)
	PartialTerminated = "terminated"  // a termination signal (SIGTERM, SIGINT, SIGHUP, ...)
	PartialCrashed    = "crashed"     // a process died of a fault (SIGSEGV, SIGBUS, ...)
	PartialAborted    = "aborted"     // a process called MPI_Abort
	PartialNoFinalize = "no_finalize" // a process exited without MPI_Finalize
)

// Partial says why and up to when a measurement covers the run.
type Partial struct {
	// Reason is one of the Partial* constants.
	Reason string `json:"reason"`
	// Detail is one sentence: who ended how ("rank 1 called MPI_Abort(7)").
	Detail string `json:"detail"`
	// CutNS is where the measurement ends, in nanoseconds after the
	// earliest MPI_Init.
	CutNS int64 `json:"cut_ns"`
	// Ranks is the job's size; Included the processes in the measurement;
	// MissingRanks those without data ("2-3"), empty when none.
	Ranks        int    `json:"ranks"`
	Included     int    `json:"included"`
	MissingRanks string `json:"missing_ranks"`
	// AssembledBy is "run" (popmon run, after the command ended) or
	// "recover" (popmon recover, from the files left behind).
	AssembledBy string `json:"assembled_by"`
	// ExitCodes and signals of the processes, by rank, as far as known:
	// "running", "finalized", "killed", "signal 11", "MPI_Abort(7)",
	// "exit without MPI_Finalize".
	Ends []ProcessEnd `json:"ends"`
}

// ProcessEnd is how one process ended.
type ProcessEnd struct {
	Rank int    `json:"rank"`
	End  string `json:"end"`
	// ValidUntilNS is the last moment the process's accounts are known
	// for, in nanoseconds after the earliest MPI_Init.
	ValidUntilNS int64 `json:"valid_until_ns"`
}

// Interception says that some MPI calls never reached the library.
type Interception struct {
	// Complete is false: every call reached it when the object is absent.
	Complete bool `json:"complete"`
	// Processes is the number of processes whose calls were bypassed.
	Processes int `json:"processes"`
	// Reason says which calls, where they went and the fix.
	Reason string `json:"reason"`
}

// GlobalAlignment records the skew across ranks of the Global region's
// boundaries that libpopmon removed at finalize: every process's Global
// spans from the first rank's exit of MPI_Init to the last rank's entry
// into MPI_Finalize, the time outside its own boundaries counted as MPI.
type GlobalAlignment struct {
	// StartSkewNS is how far apart the ranks left MPI_Init.
	StartSkewNS int64 `json:"start_skew_ns"`
	// EndSkewNS is how far apart they entered MPI_Finalize.
	EndSkewNS int64 `json:"end_skew_ns"`
}

// Refusal returns why the POP metrics of m cannot be trusted, as one
// sentence — the measurement lacks processes of the job, or some MPI calls
// never reached the library —, or "" when they can.
func (m *Measurement) Refusal() string {
	switch {
	case m.Incomplete != nil:
		return fmt.Sprintf("popmon measured %d of the job's %d processes: %s; without every process the POP metrics would be wrong",
			m.Incomplete.Measured, m.Incomplete.Processes, strings.TrimSuffix(m.Incomplete.Reason, "."))
	case m.Interception != nil && !m.Interception.Complete:
		return "the program's MPI calls did not all reach popmon: " + strings.TrimSuffix(m.Interception.Reason, ".") +
			"; the POP metrics would count that MPI time as useful"
	}
	return ""
}

// Region is one region of a run and the accounts of the processes that
// visited it.
type Region struct {
	// Name is the region name; GlobalRegion is the whole run.
	Name string `json:"name"`
	// Processes holds one entry per process that visited the region at least
	// once, in rank order. Processes that never visited it are absent.
	Processes []ProcessAccounts `json:"processes"`
	// Summary holds the region's reduced accounts in summary form (see
	// [Summarized]); nil in the full form.
	Summary *RegionSummary `json:"summary,omitempty"`
}

// Threads is Σ [ProcessAccounts.Threads] over the region's processes: the
// threads that measured a region measured per thread, 0 for any other
// region (and in summary form).
func (g *Region) Threads() int {
	n := 0
	for i := range g.Processes {
		n += max(g.Processes[i].Threads, 0)
	}
	return n
}

// ProcessAccounts is the record of one process in one region: the time
// accounts of POP-METRICS.md §1, in nanoseconds summed over all CPUs of the
// process while the region was open, and event counts. A key missing from
// the file reads as 0.
type ProcessAccounts struct {
	// Rank is the process ([Process.Rank]).
	Rank int `json:"rank"`
	// CPUs is the number of CPUs of the process in this region.
	CPUs int `json:"cpus"`
	// Visits is the number of completed start/stop pairs.
	Visits int64 `json:"visits"`
	// Threads is set when the region was measured per thread: started
	// inside OpenMP parallel regions, where each thread's start and stop
	// measure that thread alone (DLB 3.7+'s thread-local regions;
	// docs/openmp-regions.md). It counts the threads that measured it;
	// CPUs is then 1, Visits the measurements and ElapsedNS their summed
	// time, so the accounts add up to ElapsedNS × 1. 0 otherwise.
	Threads int `json:"threads,omitempty"`
	// ElapsedNS is E_i, the wall time the region was open in this process.
	ElapsedNS int64 `json:"elapsed_ns"`
	// UsefulNS is U_i.
	UsefulNS int64 `json:"useful_ns"`
	// MPINS is M_i.
	MPINS int64 `json:"mpi_ns"`
	// MPIWorkerIdleNS is Mw_i: OpenMP workers idle while the primary thread
	// is inside MPI.
	MPIWorkerIdleNS int64 `json:"mpi_worker_idle_ns,omitempty"`
	// OMPSerializationNS is Iser_i.
	OMPSerializationNS int64 `json:"omp_serialization_ns,omitempty"`
	// OMPLoadImbalanceNS is Ilb_i.
	OMPLoadImbalanceNS int64 `json:"omp_load_imbalance_ns,omitempty"`
	// OMPSchedulingNS is Isch_i.
	OMPSchedulingNS int64 `json:"omp_scheduling_ns,omitempty"`
	// GPURuntimeNS is G_i.
	GPURuntimeNS int64 `json:"gpu_runtime_ns,omitempty"`
	// InstrumentationNS is X_i: popmon's own cost inside the process's
	// wrapped calls (entry, bookkeeping, exit; calibrated per call at
	// start-up), which libpopmon keeps out of both UsefulNS and MPINS. It
	// is one of the accounts (the invariant includes it); the metrics
	// leave it out: they see the process as if it had run for
	// ElapsedNS − InstrumentationNS/CPUs ([ProcessAccounts.WithoutInstrumentation]).
	// Files of older libraries, partial measurements and imports lack it
	// (0: the own cost, if any, is inside the other accounts).
	InstrumentationNS int64 `json:"instrumentation_ns,omitempty"`
	// OtherNS is O_i: time that was neither useful nor inside a runtime
	// (MPI, OpenMP, GPU), summed over all threads. Only imported traces
	// have it (states other than Running outside runtime calls: I/O,
	// tracing disabled, the tracer's own flushing); libpopmon counts such
	// time as useful and never writes the key. The metric models charge it
	// with MPI time, as BSC's trace analysis charges every non-useful time
	// outside the threading runtime to communication (POP-METRICS.md §2).
	OtherNS int64 `json:"other_ns,omitempty"`
	// MPICalls is the number of MPI calls made while the region was open.
	MPICalls int64 `json:"mpi_calls,omitempty"`
	// OMPParallels is the number of OpenMP parallel regions entered.
	OMPParallels int64 `json:"omp_parallels,omitempty"`
	// OMPTasks is the number of OpenMP explicit tasks.
	OMPTasks int64 `json:"omp_tasks,omitempty"`
	// GPURuntimeCalls is the number of GPU runtime calls.
	GPURuntimeCalls int64 `json:"gpu_runtime_calls,omitempty"`
	// GPUDevices is the process's activity on each GPU device it used
	// while the region was open (absent: none measured).
	GPUDevices []GPUDeviceAccount `json:"gpu_devices,omitempty"`
	// Cycles is the number of CPU cycles during useful time; meaningful only
	// when [Resources.HardwareCounters] is true.
	Cycles int64 `json:"cycles,omitempty"`
	// Instructions is the number of instructions during useful time;
	// meaningful only when [Resources.HardwareCounters] is true.
	Instructions int64 `json:"instructions,omitempty"`
	// PrimaryUsefulNS is the useful time of the primary thread (the one
	// that runs main and calls MPI); see [ProcessAccounts.PrimaryUseful].
	PrimaryUsefulNS int64 `json:"primary_useful_ns,omitempty"`
	// PrimaryMPINS is the MPI time of the primary thread; see
	// [ProcessAccounts.PrimaryMPI].
	PrimaryMPINS int64 `json:"primary_mpi_ns,omitempty"`
	// PrimaryOtherNS is the part of OtherNS spent by the primary thread.
	PrimaryOtherNS int64 `json:"primary_other_ns,omitempty"`
	// PrimaryParallelNS is the wall time the primary thread spent inside
	// outermost OpenMP parallel regions.
	PrimaryParallelNS int64 `json:"primary_parallel_ns,omitempty"`
	// PrimarySerialUsefulNS is the useful time of the primary thread
	// outside outermost OpenMP parallel regions; see
	// [ProcessAccounts.PrimarySerialUseful] for its value when absent.
	PrimarySerialUsefulNS int64 `json:"primary_serial_useful_ns,omitempty"`
	// ParallelUsefulNS is the useful time inside outermost parallel
	// regions, summed over all threads.
	ParallelUsefulNS int64 `json:"parallel_useful_ns,omitempty"`
	// ThreadUsefulMaxNS is the largest useful time of any one thread; see
	// [ProcessAccounts.ThreadUsefulMax].
	ThreadUsefulMaxNS int64 `json:"thread_useful_max_ns,omitempty"`
}

// MPICall is the whole-run profile of one MPI function, aggregated over
// processes.
type MPICall struct {
	// Name is the C name, e.g. "MPI_Send"; Fortran calls count under it.
	Name string `json:"name"`
	// Calls is Σ over processes of the number of calls.
	Calls int64 `json:"calls"`
	// TimeNS is Σ over processes of the time spent inside the call.
	TimeNS int64 `json:"time_ns"`
	// MinTimeNS is the minimum over processes of the time inside the call
	// (processes that never called it count as 0).
	MinTimeNS int64 `json:"min_time_ns"`
	// MaxTimeNS is the maximum over processes of the time inside the call.
	MaxTimeNS int64 `json:"max_time_ns"`
	// MaxRank is the rank with MaxTimeNS.
	MaxRank int `json:"max_rank"`
	// BytesSent and BytesRecv are Σ over processes of the bytes the calls
	// sent and received (count × type size), credited to the call that
	// starts the transfer: a send when it starts (MPI_Isend itself, each
	// MPI_Start of an MPI_Send_init request under MPI_Send_init), a
	// receive when it completes, with the size its status reports (an
	// MPI_Irecv completed by MPI_Wait counts under MPI_Irecv, never under
	// MPI_Wait), a collective from its arguments (a persistent one at each
	// MPI_Start): what the process contributes and what it receives.
	// Absent in files of libraries that did not count bytes, and 0 (left
	// out) for calls that move none.
	BytesSent int64 `json:"bytes_sent,omitempty"`
	BytesRecv int64 `json:"bytes_recv,omitempty"`
	// SizeHist is the message-size histogram in power-of-two buckets:
	// SizeHist[0] counts messages of 0 bytes, SizeHist[k] for k ≥ 1 those
	// of 2^(k−1) to 2^k − 1 bytes; libpopmon's last bucket (31) also holds
	// everything larger (from 1 GiB up). A point-to-point call adds one
	// entry per message it sends or receives (MPI_Sendrecv two); a
	// collective call one entry, of the larger of its send and receive
	// buffers. Trailing zero buckets are left out.
	SizeHist []int64 `json:"size_hist,omitempty"`
}

// TraceInfo says where a traced run's trace is and what it holds.
type TraceInfo struct {
	// Dir is the folder of the per-rank trace files, relative to the
	// measurement file's folder when it is inside it.
	Dir string `json:"dir"`
	// Records and Bytes are the trace's records and bytes over all ranks.
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`
	// Flushes counts the buffer flushes during the run (each a gap in
	// the trace's precision, not in its content).
	Flushes int64 `json:"flushes"`
}

// IdealNetwork is the result of replaying the run's trace on an ideal
// network (zero latency, infinite bandwidth; Dimemas' semantics as BSC's
// basicanalysis uses them), the input of serialisation and transfer
// efficiency.
type IdealNetwork struct {
	// RuntimeNS is the replayed runtime, T_ideal.
	RuntimeNS int64 `json:"runtime_ns"`
	// UsefulMaxNS is the maximum over ranks of the time outside MPI in the
	// replay, U_ideal,max.
	UsefulMaxNS int64 `json:"useful_max_ns"`
	// EagerLimit is the message size (bytes) from which a send waits for
	// its receive (rendezvous).
	EagerLimit int64 `json:"eager_limit"`
	// Method says how the replay was made ("popmon replay of a Paraver
	// trace", "popmon replay of its own trace").
	Method string `json:"method"`
}

// Region returns the region called name, exactly (see [NameIndex]: names
// are case-sensitive, "global" does not find "Global"; [MatchRegion]
// suggests the name when only the case differs).
func (m *Measurement) Region(name string) (*Region, bool) {
	if m == nil {
		return nil, false
	}
	i := NameIndex(len(m.Regions), func(i int) string { return m.Regions[i].Name }, name)
	if i < 0 {
		return nil, false
	}
	return &m.Regions[i], true
}

// Global returns the implicit whole-run region.
func (m *Measurement) Global() (*Region, bool) {
	return m.Region(GlobalRegion)
}

// RegionNames returns the names of the regions in file order.
func (m *Measurement) RegionNames() []string {
	if m == nil {
		return nil
	}
	names := make([]string, len(m.Regions))
	for i, r := range m.Regions {
		names[i] = r.Name
	}
	return names
}

// Process returns the process with the given rank.
func (m *Measurement) Process(rank int) (*Process, bool) {
	if m == nil {
		return nil, false
	}
	// Processes are in rank order; try the direct index first.
	if rank >= 0 && rank < len(m.Processes) && m.Processes[rank].Rank == rank {
		return &m.Processes[rank], true
	}
	for i := range m.Processes {
		if m.Processes[i].Rank == rank {
			return &m.Processes[i], true
		}
	}
	return nil, false
}

// HasMPI reports whether the measured program initialised MPI.
func (m *Measurement) HasMPI() bool {
	return m != nil && m.MPI != nil
}

// Time returns the timestamp of the run. It fails when the file has no
// timestamp or the timestamp is not RFC 3339.
func (m *Measurement) Time() (time.Time, error) {
	if m == nil || m.Timestamp == "" {
		return time.Time{}, errNoTimestamp
	}
	t, err := time.Parse(time.RFC3339, m.Timestamp)
	if err != nil {
		return time.Time{}, &ValidationError{Path: "timestamp", Problem: "is not an RFC 3339 time: " + err.Error()}
	}
	return t, nil
}

// Process returns the account of the process with the given rank in this
// region; false when that process never visited the region.
func (r *Region) Process(rank int) (*ProcessAccounts, bool) {
	if r == nil {
		return nil, false
	}
	for i := range r.Processes {
		if r.Processes[i].Rank == rank {
			return &r.Processes[i], true
		}
	}
	return nil, false
}

// Sentence says in one sentence what a partial measurement covers.
func (p *Partial) Sentence() string {
	var b strings.Builder
	fmt.Fprintf(&b, "partial measurement: %s; measured up to %.2f s after MPI_Init", p.Detail, float64(p.CutNS)/1e9)
	if p.MissingRanks != "" {
		fmt.Fprintf(&b, "; %d of %d ranks (no data from ranks %s)", p.Included, p.Ranks, p.MissingRanks)
	} else {
		fmt.Fprintf(&b, "; all %d ranks", p.Ranks)
	}
	return b.String()
}

// Series is a run's accounts over time.
type Series struct {
	// IntervalNS is the sampling interval (the last interval of a run is
	// shorter; past the series' budget, 3600 intervals and 262,144
	// process accounts, it doubles: docs/measurement-format.md).
	IntervalNS int64 `json:"interval_ns"`
	// Regions are the sampled regions, Global first (past the budget,
	// those with the least time leave the series).
	Regions []SeriesRegion `json:"regions"`
}

// SeriesRegion is one region's intervals.
type SeriesRegion struct {
	Name      string           `json:"name"`
	Intervals []SeriesInterval `json:"intervals"`
}

// SeriesInterval is the accounts of every process that was in the region
// during one interval: the same fields as a region's (visits is 1 when the
// process spent time in it), for that interval only.
type SeriesInterval struct {
	// StartNS is the interval's start, ns after the earliest MPI_Init.
	StartNS   int64             `json:"start_ns"`
	Processes []ProcessAccounts `json:"processes"`
}
