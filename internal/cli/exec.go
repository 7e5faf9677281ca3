package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

const execHelp = `
The per-rank form, for launchers that start the ranks themselves:

  mpirun -np 4 popmon exec -- ./app
  srun -n 64 popmon exec -o run.json -- ./app

Each rank's popmon builds (or finds) the measurement library, preloads it and
replaces itself with APP (same process id). At MPI_Finalize rank 0 writes the
measurement file (default popmon-APP-DATE.json in the working folder; an
existing file is never overwritten) and prints its name. Read it with
'popmon report FILE'.`

func execCmd(env *Env, args []string) error {
	fs := newFlags("exec", "[-o FILE] [--mpicc PATH] [--counters MODE] [--] APP [ARGS...]", execHelp, env.Stderr)
	var mf measureFlags
	mf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fs.Usage()
		return fail(ExitUsage, "no program given: popmon exec -- APP [ARGS...]")
	}
	if err := checkCountersMode(mf.counters); err != nil {
		return err
	}
	lib, err := mf.build(context.Background(), env.Stderr)
	if err != nil {
		return err
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(ExitNotFound, "cannot run %s: %v", argv[0], err)
	}
	set := map[string]string{"POPMON_PID": strconv.Itoa(os.Getpid())}
	if mf.output != "" {
		if err := checkWritableTarget(mf.output); err != nil {
			return err
		}
		abs, err := filepath.Abs(mf.output)
		if err != nil {
			return fail(ExitUsage, "bad output path %s: %v", mf.output, err)
		}
		set["POPMON_OUTPUT"] = abs
	}
	var drop []string
	if mf.output != "" {
		// An explicit file wins over an enclosing `popmon run` session.
		drop = []string{"POPMON_SESSION"}
	}
	environ, err := mf.environment(env.Stderr, lib.Path, argv, set, drop)
	if err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, environ); err != nil {
		return fail(126, "cannot execute %s: %v", path, err)
	}
	return nil
}
