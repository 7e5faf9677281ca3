package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/launch"

	"github.com/popmon/popmon/internal/outfile"
	"github.com/popmon/popmon/internal/session"
)

const execHelp = `
The per-rank form, for launchers that start the ranks themselves:

  mpirun -np 4 popmon exec -- ./app
  srun -n 64 popmon exec -o run.json -- ./app

Each rank's popmon builds (or finds) the measurement library for the MPI the
program is linked with, preloads it and replaces itself with APP (same process
id). At MPI_Finalize rank 0 writes the measurement file (default
popmon-APP-DATE.json in the working folder, numbered when that name exists;
-o FILE fails when FILE exists, unless --force) and prints its name. Read it
with 'popmon report FILE'. Only rank 0 prints popmon's notes. A job killed
before MPI_Finalize keeps no measurement in this form (rank 0 says so once):
'popmon run -- mpirun ...' keeps what it measured until then.`

func execCmd(env *Env, args []string) error {
	fs := newFlags("exec", "[-o FILE [--force]] [--mpicc PATH] [--openmp MODE] [--counters MODE] [--lewi] [--] APP [ARGS...]", execHelp, env.Stderr)
	var mf measureFlags
	mf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fs.Usage()
		return fault.Usagef("no program given: popmon exec -- APP [ARGS...]")
	}
	if err := launch.CheckCountersMode(mf.Counters); err != nil {
		return err
	}
	if err := launch.CheckProcessRecords(mf.Records); err != nil {
		return err
	}
	set := map[string]string{"POPMON_PID": strconv.Itoa(os.Getpid())}
	var drop []string
	if mf.output != "" {
		if err := outfile.CheckTarget(mf.output, mf.force); err != nil {
			return err
		}
		abs, err := filepath.Abs(mf.output)
		if err != nil {
			return fault.Usagef("bad output path %s: %v", mf.output, err)
		}
		set["POPMON_OUTPUT"] = abs
		if mf.force {
			set["POPMON_OUTPUT_FORCE"] = "1"
		}
		// An explicit file wins over an enclosing `popmon run` session.
		drop = []string{"POPMON_SESSION"}
	}
	path, err := lookCommand(argv[0])
	if err != nil {
		return fault.NotRunnable(err, "cannot run %s: %v", argv[0], err)
	}
	scan := launch.ScanCommand(argv)
	lib, err := mf.Build(context.Background(), env.Stderr, scan)
	if err != nil {
		return err
	}
	environ, note, err := mf.Environment(lib, scan, set, drop)
	if err != nil {
		return err
	}
	// Every rank runs popmon exec: only rank 0 speaks.
	rank := launch.EnvRank()
	if rank <= 0 {
		if note != "" {
			fmt.Fprintln(env.Stderr, note)
		}
		for _, r := range launch.Refusals(scan) {
			fmt.Fprintf(env.Stderr, "popmon: %s\n", r)
		}
		if line := session.DisabledLine(environ); line != "" {
			fmt.Fprintf(env.Stderr, "popmon: %s\n", line)
		}
	}
	if line := unsupervisedNote(rank, os.Getenv); line != "" {
		fmt.Fprintln(env.Stderr, line)
	}
	if err := syscall.Exec(path, argv, environ); err != nil {
		return &fault.Error{Kind: fault.NotExec, Err: fmt.Errorf("cannot execute %s: %v", path, err)}
	}
	return nil
}

// unsupervisedNote is the line rank 0 of a launcher's job prints (once per
// job) when no `popmon run` supervises it: each rank's popmon is replaced
// by the program, so nobody is left to assemble what the ranks measured
// when the job ends before MPI_Finalize (no session folder, no live files;
// docs/cli.md, "popmon exec"). Under `popmon run` (POPMON_SESSION set), a
// process that is not rank 0, or one no launcher started: "".
func unsupervisedNote(rank int, getenv func(string) string) string {
	if rank != 0 || getenv("POPMON_SESSION") != "" {
		return ""
	}
	launcher := "mpirun"
	if getenv("SLURM_STEP_ID") != "" {
		launcher = "srun"
	}
	return "popmon: a job measured by popmon exec on each rank keeps no measurement when it is killed or crashes before MPI_Finalize; popmon run -- " + launcher + " ... keeps what it measured until then"
}
