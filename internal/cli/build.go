package cli

import (
	"context"
	"fmt"
)

const buildHelp = `
Builds the measurement library for the MPI compiler wrapper found (or finds
it in the cache) and prints its path, for use by hand:

  LD_PRELOAD=$(popmon build) mpirun -np 4 ./app

'popmon run' and 'popmon exec' do this themselves.`

func buildCmd(env *Env, args []string) error {
	fs := newFlags("build", "[--mpicc PATH] [--no-mpi]", buildHelp, env.Stderr)
	var mf measureFlags
	mf.register(fs)
	verbose := fs.Bool("v", false, "also print the compiler and MPI used")
	if err := parse(fs, args); err != nil {
		return err
	}
	lib, err := mf.build(context.Background(), env.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, lib.Path)
	if *verbose {
		state := "built now"
		if lib.Cached {
			state = "from the cache"
		}
		fmt.Fprintf(env.Stderr, "popmon: %s with %s (%s)\n", state, lib.Compiler, lib.MPI)
	}
	return nil
}
