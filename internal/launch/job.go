package launch

import (
	"os"
	"strconv"

	"github.com/popmon/popmon/internal/binscan"
	"github.com/popmon/popmon/measure"
)

// LauncherKind is the measurement's launcher kind for a command line, as
// libpopmon would have written it.
func LauncherKind(scan *binscan.Result) string {
	if os.Getenv("SLURM_JOB_ID") != "" {
		return measure.LauncherSlurm
	}
	switch JobMPI(scan) {
	case binscan.OpenMPI:
		return measure.LauncherOpenMPI
	case binscan.MPICH:
		return measure.LauncherMPICH
	}
	return measure.LauncherNone
}

// EnvRank is the MPI rank the launcher's environment gives this process,
// -1 when it names none (as the library reads it: docs/library.md); last,
// inside an srun step, Slurm's task number, which srun sets whatever its
// --mpi (a batch script has SLURM_PROCID but no step).
func EnvRank() int {
	for _, v := range []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"} {
		if v == "SLURM_PROCID" && os.Getenv("SLURM_STEP_ID") == "" {
			break
		}
		if s := os.Getenv(v); s != "" {
			if r, err := strconv.Atoi(s); err == nil {
				return r
			}
		}
	}
	return -1
}
