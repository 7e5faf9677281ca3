package cli

import (
	"context"
	"fmt"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/shimbuild"
)

const buildHelp = `
Builds the measurement library for the MPI compiler wrapper found (or finds
it in the cache, checked against the manifest written when it was built)
and prints its path, for use by hand:

  LD_PRELOAD=$(popmon build) mpirun -np 4 ./app

'popmon run' and 'popmon exec' do this themselves. The cache is
$POPMON_CACHE_DIR, else $XDG_CACHE_HOME/popmon/lib, else
$HOME/.cache/popmon/lib, else popmon-UID/lib in the temporary folder; popmon
refuses it when other users could write it. -v also prints the cache
folder and the library's sha256.

It also writes popmon's Python modules (import popmon, import dlb) into
the cache, as 'popmon run' does for the jobs it measures; --python prints
their folder instead of the library's path, for PYTHONPATH by hand:

  PYTHONPATH=$(popmon build --python) LD_PRELOAD=$(popmon build) python3 script.py`

func buildCmd(env *Env, args []string) error {
	fs := newFlags("build", "[--mpicc PATH] [--no-mpi]", buildHelp, env.Stderr)
	var mf measureFlags
	mf.register(fs)
	verbose := fs.Bool("v", false, "also print the compiler and MPI used")
	python := fs.Bool("python", false, "print the folder of popmon's Python modules (for PYTHONPATH) instead of the library's path")
	if err := parse(fs, args); err != nil {
		return err
	}
	lib, err := mf.Build(context.Background(), env.Stderr, nil)
	if err != nil {
		return err
	}
	// A cache prepared here (on a login node, by `popmon build`) serves
	// the compute nodes' jobs with the Python modules too.
	py, perr := shimbuild.PythonDir(lib.Cache)
	if *python {
		if perr != nil {
			return fault.Envf("cannot place popmon's Python modules: %v", perr)
		}
		fmt.Fprintln(env.Stdout, py)
		return nil
	}
	if perr != nil {
		fmt.Fprintf(env.Stderr, "popmon: cannot place popmon's Python modules: %v\n", perr)
	}
	fmt.Fprintln(env.Stdout, lib.Path)
	if *verbose {
		state := "built now and load-tested"
		if lib.Cached {
			state = "from the cache, matching its manifest"
		}
		mpi := lib.MPI
		if mpi == "" {
			mpi = "without MPI"
		}
		fmt.Fprintf(env.Stderr, "popmon: %s with %s (%s)\n", state, lib.Compiler, mpi)
		fmt.Fprintf(env.Stderr, "popmon: cache %s (private; from %s), sha256 %s\n", lib.Cache.Dir, lib.Cache.From, lib.SHA256)
		if perr == nil {
			fmt.Fprintf(env.Stderr, "popmon: Python modules %s\n", py)
		}
	}
	return nil
}
