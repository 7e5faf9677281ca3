package launch

import (
	"strings"

	"github.com/popmon/popmon/internal/fault"
)

// Lewi is popmon run/exec --lewi and DLB's LeWI options (docs/lewi.md).
type Lewi struct {
	// On is --lewi: the ranks lend their CPUs in blocking MPI calls and
	// their OpenMP parallel regions borrow the node's lent CPUs.
	On bool
	// KeepOneCPU is --lewi-keep-one-cpu: a blocking call keeps the
	// process's first CPU.
	KeepOneCPU bool
	// MPICalls is --lewi-mpi-calls: all, collectives, barrier or none.
	MPICalls string
	// RespectCpuset is --lewi-respect-cpuset (default true; false: the
	// node's CPUs no process registered are free for any to borrow).
	RespectCpuset bool
	// Barrier is --lewi-barrier: a process waiting in DLB_Barrier lends
	// its CPUs (default true).
	Barrier bool
}

// lewiCalls are --lewi-mpi-calls' values, as DLB's.
var lewiCalls = []string{"all", "collectives", "barrier", "none"}

// Check validates the options.
func (l Lewi) Check() error {
	ok := false
	for _, c := range lewiCalls {
		ok = ok || l.MPICalls == c
	}
	if !ok {
		return fault.Usagef("unknown --lewi-mpi-calls %q: use %s", l.MPICalls, strings.Join(lewiCalls, ", "))
	}
	if !l.On && (l.KeepOneCPU || l.MPICalls != "all" || !l.RespectCpuset || !l.Barrier) {
		return fault.Usagef("--lewi-* options need --lewi")
	}
	return nil
}

// lewiEnv adds the library's LeWI variables to set: POPMON_LEWI and the
// options in DLB's form (POPMON_LEWI_ARGS); and, unless the user chose a
// wait policy, OMP_WAIT_POLICY=passive: an OpenMP runtime's idle threads
// would otherwise spin on the CPUs a region borrowed after it gave them
// back (LLVM's libomp for 200 ms, GNU libgomp for its spin count).
func (l Lewi) lewiEnv(set map[string]string, getenv func(string) string) error {
	if err := l.Check(); err != nil || !l.On {
		return err
	}
	yn := map[bool]string{true: "yes", false: "no"}
	set["POPMON_LEWI"] = "1"
	set["POPMON_LEWI_ARGS"] = strings.Join([]string{
		"--lewi-mpi-calls=" + l.MPICalls,
		"--lewi-keep-one-cpu=" + yn[l.KeepOneCPU],
		"--lewi-respect-cpuset=" + yn[l.RespectCpuset],
		"--lewi-barrier=" + yn[l.Barrier],
	}, " ")
	if getenv("OMP_WAIT_POLICY") == "" && getenv("KMP_BLOCKTIME") == "" && getenv("GOMP_SPINCOUNT") == "" {
		set["OMP_WAIT_POLICY"] = "passive"
	}
	return nil
}
