package measure

import (
	"encoding/json"
	"fmt"
	"io"
)

// OpenMP describes the OpenMP runtime of a run (docs/measurement-format.md,
// "openmp"). It is present when the program used an OpenMP runtime.
type OpenMP struct {
	// Runtime is the runtime's name and version as OMPT reports it, or
	// "GNU libgomp".
	Runtime string `json:"runtime"`
	// OMPT reports whether OpenMP events were measured (through OMPT or,
	// on GNU libgomp, by interposing its entry points: Method).
	OMPT bool `json:"ompt"`
	// Method says how OpenMP was measured: "OMPT" or "GOMP interposition"
	// ("" in files of older libraries, which measured through OMPT only).
	Method string `json:"method,omitempty"`
	// Reason says, when OMPT is false, why and how to fix it.
	Reason string `json:"reason,omitempty"`
	// MaxThreads is omp_get_max_threads() at start-up: the CPUs of each
	// process.
	MaxThreads int `json:"max_threads,omitempty"`
}

// OMPRegion is the profile of one OpenMP parallel construct, summed over
// processes and executions (docs/measurement-format.md, "omp_regions").
// Times are thread times in nanoseconds.
type OMPRegion struct {
	// Module is the path of the executable or shared library holding the
	// construct.
	Module string `json:"module"`
	// Address is the construct's return address as a virtual address of
	// Module's ELF file; look up Address-1 in its DWARF line table.
	Address uint64 `json:"address"`
	// Executions is the number of instances over all processes.
	Executions int64 `json:"executions"`
	// Threads is the largest team size seen.
	Threads int `json:"threads"`
	// WallNS is Σ over instances of the instance's wall time.
	WallNS int64 `json:"wall_ns"`
	// UsefulNS is Σ useful thread time inside the instances.
	UsefulNS int64 `json:"useful_ns"`
	// ImbalanceNS is Σ thread time waiting in implicit barriers.
	ImbalanceNS int64 `json:"imbalance_ns"`
	// SynchronizationNS is Σ thread time in explicit barriers, critical,
	// locks, ordered, taskwait and taskgroup.
	SynchronizationNS int64 `json:"synchronization_ns"`
	// LimitedParallelismNS is Σ wall time of CPUs that did no work in an
	// instance (team threads without useful time, CPUs outside the team).
	LimitedParallelismNS int64 `json:"limited_parallelism_ns"`
	// ThreadManagementNS is Σ thread time in the region outside its
	// implicit task (fork and join).
	ThreadManagementNS int64 `json:"thread_management_ns"`
	// Location is where the construct is in the source, looked up in
	// Module's debug information once after reading
	// (symbolize.OMPRegions); nil until then. It is not part of the file.
	Location *OMPLocation `json:"-"`
}

// OMPLocation is the source location of an OpenMP parallel construct: the
// function that contains the directive and the directive's file and line,
// each empty (0) when unknown, and why it is incomplete.
type OMPLocation struct {
	Function string
	File     string
	Line     int
	// Err says why the location is incomplete (the module cannot be read
	// or has no debug information); nil when it is not.
	Err error
}

// Measured reports whether OpenMP events were measured: o is present and
// its OMPT tool was active. It is false for a nil *OpenMP.
func (o *OpenMP) Measured() bool {
	return o != nil && o.OMPT
}

// NotMeasured returns why OpenMP metrics are missing: "" when OpenMP was
// measured or no OpenMP runtime was used (o is nil); otherwise o's Reason,
// or a generic reason when the file gives none.
func (o *OpenMP) NotMeasured() string {
	if o == nil || o.OMPT {
		return ""
	}
	if o.Reason != "" {
		return o.Reason
	}
	if o.Runtime != "" {
		return o.Runtime + " was not measured (no OMPT tool)"
	}
	return "the OpenMP runtime was not measured (no OMPT tool)"
}

// ReadOpenMP reads only the "openmp" object of a measurement file from r
// (the decoder skips the rest without building values): nil when the file
// has none. It fails for input that is not a JSON object.
func ReadOpenMP(r io.Reader) (*OpenMP, error) {
	var doc struct {
		OpenMP *OpenMP `json:"openmp"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("read measurement: %w", err)
	}
	return doc.OpenMP, nil
}
