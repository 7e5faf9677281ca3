package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/popmon/popmon/internal/dlbhome"
	"github.com/popmon/popmon/internal/fault"
)

const dlbHomeHelp = `
Lays out DIR as a DLB-compatible prefix, so that DLB_HOME=DIR works
unchanged for programs, job scripts and tests written for DLB 3.7's TALP:

  lib/libdlb.so                  the measurement library without MPI
  lib/libdlb_mpi.so (_mpic, _mpif) the library for your MPI (--mpicc)
  include/dlb.h, dlb_talp.h, dlb_drom.h, dlb_errors.h, dlb_types.h,
          dlbf.h, dlbf_talp.h, dlbf_drom.h, dlbf-errors.h
  bin/dlb                        --version, -h/-hh (DLB_ARGS options), -l
  bin/dlb_taskset                DLB's DROM command: popmon taskset
  lib/pythonX.Y/site-packages    import dlb
  libexec/popmon                 writes DLB's output files at the end of a run

Then, as with DLB:

  mpicc app.c -I$DLB_HOME/include -L$DLB_HOME/lib -ldlb
  mpirun -x LD_PRELOAD=$DLB_HOME/lib/libdlb_mpi.so \
         -x DLB_ARGS="--talp --talp-output-file=talp.json" ./app

DIR must be new, empty, or a prefix laid out before (replaced).
docs/coming-from-dlb.md says what maps to what.`

func dlbHomeCmd(env *Env, args []string) error {
	fs := newFlags("dlb-home", "[--mpicc PATH] [--no-mpi] DIR", dlbHomeHelp, env.Stderr)
	mpicc := fs.String("mpicc", "", "MPI C compiler wrapper for the MPI libraries (default: $POPMON_MPICC, then mpicc)")
	noMPI := fs.Bool("no-mpi", false, "lay out libdlb.so only (no MPI compiler here)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fault.Usagef("dlb-home takes one folder (popmon dlb-home DIR)")
	}
	res, err := dlbhome.Layout(context.Background(), fs.Arg(0), dlbhome.Options{MPICC: *mpicc, NoMPI: *noMPI, Log: env.Stderr})
	if errors.Is(err, dlbhome.ErrTarget) {
		return fault.Usagef("%v", err)
	}
	if err != nil {
		return fault.Envf("%v", err)
	}
	fmt.Fprintln(env.Stdout, res.Dir)
	mpi := res.MPI
	if mpi == "" {
		mpi = "no MPI libraries (--no-mpi)"
	}
	fmt.Fprintf(env.Stderr, "popmon: DLB_HOME=%s (%s)\n", res.Dir, mpi)
	if res.Python == "" {
		fmt.Fprintln(env.Stderr, "popmon: no python3 on PATH: no Python module laid out")
	}
	return nil
}
