package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/popmon/popmon/internal/doctor"
	"github.com/popmon/popmon/internal/fault"
)

const doctorHelp = `
Checks what popmon can measure on this machine and says how to fix what is
missing: MPI compilers and launchers, building the measurement library, the
clock, hardware counters, GPUs (CUDA driver and CUPTI; HIP runtime and
rocprofiler-sdk), OpenMP (OMPT on libomp, GOMP interposition on libgomp) and Fortran support.`

func doctorCmd(env *Env, args []string) error {
	fs := newFlags("doctor", "[--mpicc PATH]", doctorHelp, env.Stderr)
	mpicc := fs.String("mpicc", "", "MPI C compiler wrapper to check (default $POPMON_MPICC, then mpicc)")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bad := doctor.Run(ctx, *mpicc).Print(env.Stdout)
	if bad > 0 {
		return fault.Envf("%d problem(s) found", bad)
	}
	fmt.Fprintln(env.Stdout, "popmon can measure MPI programs here.")
	return nil
}
