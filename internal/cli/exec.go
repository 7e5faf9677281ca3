package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

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
with 'popmon report FILE'. Only rank 0 prints popmon's notes.`

func execCmd(env *Env, args []string) error {
	fs := newFlags("exec", "[-o FILE [--force]] [--mpicc PATH] [--openmp MODE] [--counters MODE] [--] APP [ARGS...]", execHelp, env.Stderr)
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
	if err := launch.CheckCountersMode(mf.Counters); err != nil {
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
			return fail(ExitUsage, "bad output path %s: %v", mf.output, err)
		}
		set["POPMON_OUTPUT"] = abs
		if mf.force {
			set["POPMON_OUTPUT_FORCE"] = "1"
		}
		// An explicit file wins over an enclosing `popmon run` session.
		drop = []string{"POPMON_SESSION"}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(notRunnable(err), "cannot run %s: %v", argv[0], err)
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
	if launch.EnvRank() <= 0 {
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
	if err := syscall.Exec(path, argv, environ); err != nil {
		return fail(126, "cannot execute %s: %v", path, err)
	}
	return nil
}
