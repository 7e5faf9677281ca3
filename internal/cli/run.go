package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/launch"
	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/outfile"
	"github.com/popmon/popmon/internal/session"
	"github.com/popmon/popmon/internal/subprocess"
	"github.com/popmon/popmon/internal/term"
	"github.com/popmon/popmon/pop"
)

const runHelp = `
Runs COMMAND with the measurement library preloaded into it and every process
it starts (mpirun and its ranks, a job script, or a plain program), then
writes the measurement file and prints the POP report to stderr. The exit
code is COMMAND's; a signal that ends COMMAND ends popmon the same way.

  popmon run -- mpirun -np 4 ./app
  popmon run -o base.json -- ./serial_app input.dat

The library is built for the MPI the job runs (the launcher's, else the one
the program is linked with) unless --mpicc names a compiler wrapper.
Launchers (mpirun, mpiexec, srun) and shells are not measured themselves;
Open MPI's mpirun is told to pass LD_PRELOAD and popmon's variables on to
other nodes (OMPI_MCA_mca_base_env_list); MPICH and Slurm pass them by
default. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to popmon are passed on to
COMMAND (from the terminal, they reach it directly). -o FILE is refused when
FILE exists, unless --force; default names are numbered when taken
(popmon-APP-DATE.json, .1.json, ...). --serve ADDR and --prom-textfile DIR
publish the job's efficiencies while it runs, as popmon serve does
(docs/live-metrics.md).`

func runCmd(env *Env, args []string) error {
	fs := newFlags("run", "[-o FILE [--force]] [--mpicc PATH] [--openmp MODE] [--counters MODE] [--format F] [--model M] [--trace [--trace-buffer SIZE]] [--lewi] [--] COMMAND [ARGS...]", runHelp, env.Stderr)
	var mf measureFlags
	mf.register(fs)
	format := fs.String("format", "text", "report printed at the end: text, json, csv, talp-json, omp-regions-csv, or none")
	model := fs.String("model", "talp", "metric model of the report: talp, pop-hybrid, pop-additive, all")
	traced := fs.Bool("trace", false, "also record an event trace (docs/trace-format.md) next to the measurement (FILE.trace/) and replay it on an ideal network")
	traceBuffer := fs.String("trace-buffer", "", "trace buffer per thread (default 64m; k, m, g suffixes): a full buffer is written out during the run")
	var lo liveOutput
	lo.register(fs, true)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := lo.check(); err != nil {
		return err
	}
	cmdline := fs.Args()
	if len(cmdline) == 0 {
		fs.Usage()
		return fault.Usagef("no command given: popmon run -- COMMAND [ARGS...]")
	}
	if err := checkFormat(*format, true); err != nil {
		return err
	}
	if _, _, _, err := launch.OpenMPFor(mf.OpenMP, nil); err != nil {
		return err
	}
	if err := launch.CheckCountersMode(mf.Counters); err != nil {
		return err
	}
	if err := launch.CheckProcessRecords(mf.Records); err != nil {
		return err
	}
	if err := launch.CheckTraceBuffer(*traceBuffer); err != nil {
		return err
	}
	if _, err := pop.ParseModels(*model); err != nil {
		return fault.Usagef("%v", err)
	}
	if mf.output != "" {
		if err := outfile.CheckTarget(mf.output, mf.force); err != nil {
			return err
		}
	}
	path, err := lookCommand(cmdline[0])
	if err != nil {
		return fault.NotRunnable(err, "cannot run %s: %v", cmdline[0], err)
	}
	scan := launch.ScanCommand(cmdline)
	lib, err := mf.Build(context.Background(), env.Stderr, scan)
	if err != nil {
		return err
	}
	cwd, _ := os.Getwd()
	job := session.Job{
		Argv: cmdline, Path: path, Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr,
		Say: func(line string) { fmt.Fprintf(env.Stderr, "popmon: %s\n", line) },
		Info: session.Info{Command: cmdline, Cwd: cwd, Launcher: launch.LauncherKind(scan),
			JobID: os.Getenv("SLURM_JOB_ID"), MPILibrary: lib.MPI, Output: mf.output, Force: mf.force},
		Scan: scan, Refusals: launch.Refusals(scan), Trace: *traced, TraceBuffer: *traceBuffer,
		Environ: func(vars map[string]string) ([]string, []string, error) {
			// An enclosing run's or exec's variables go; this run's are in vars.
			environ, note, err := mf.Environment(lib, scan, vars, subprocess.SessionVars)
			if err != nil {
				return nil, nil, err
			}
			argv, environ := launch.OpenMPIExportArgs(cmdline, scan, environ, os.Getenv("OMPI_MCA_mca_base_env_list"))
			if note != "" {
				fmt.Fprintln(env.Stderr, note)
			}
			return environ, argv, nil
		},
		Report: func(path string, final bool) {
			if final {
				showReport(env, path, *format, *model) // with the OpenMP line where the report does not say it
				return
			}
			if *format != "none" {
				if err := renderFile(env, env.Stderr, path, *format, reportOptions{model: *model}); err != nil {
					fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
				}
			}
		},
		InForeground: term.InForeground,
	}
	if lo.active() {
		job.Live = func(latest func() []*live.Snapshot, info session.Info) (func(), error) {
			svc, err := lo.start(env, latest, time.Second, info)
			if err != nil {
				return nil, err
			}
			return svc.Close, nil
		}
	}
	return session.Run(job)
}

// lookCommand resolves a command's name through PATH as a shell does, a
// relative folder on PATH (".", an empty entry) included, which Go's
// LookPath reports as exec.ErrDot.
func lookCommand(name string) (string, error) {
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		if !strings.ContainsRune(path, filepath.Separator) {
			path = "." + string(filepath.Separator) + path
		}
		return path, nil
	}
	return path, err
}
