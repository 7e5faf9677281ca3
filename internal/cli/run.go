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

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/liveapi"

	"github.com/popmon/popmon/internal/session"
	"github.com/popmon/popmon/pop"

	"github.com/popmon/popmon/internal/launch"

	"github.com/popmon/popmon/internal/outfile"
	"github.com/popmon/popmon/internal/subprocess"
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
	fs := newFlags("run", "[-o FILE [--force]] [--mpicc PATH] [--openmp MODE] [--counters MODE] [--format F] [--model M] [--trace [--trace-buffer SIZE]] [--] COMMAND [ARGS...]", runHelp, env.Stderr)
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
		return fail(ExitUsage, "no command given: popmon run -- COMMAND [ARGS...]")
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
		return fail(ExitUsage, "%v", err)
	}
	if mf.output != "" {
		if err := outfile.CheckTarget(mf.output, mf.force); err != nil {
			return err
		}
	}
	path, err := lookCommand(cmdline[0])
	if err != nil {
		return fail(notRunnable(err), "cannot run %s: %v", cmdline[0], err)
	}
	scan := launch.ScanCommand(cmdline)
	ctx := context.Background()
	lib, err := mf.Build(ctx, env.Stderr, scan)
	if err != nil {
		return err
	}

	outDir := "."
	if k, _ := outfile.TargetKind(mf.output); mf.output != "" && k != outfile.Through {
		outDir = filepath.Dir(mf.output) // not /dev for -o /dev/null
	}
	sessionDir, err := os.MkdirTemp(outDir, ".popmon-session-")
	if err != nil {
		return fail(ExitEnv, "cannot create a session folder next to the output in %s: %v", outDir, err)
	}
	keep := false // a measurement that could not be moved stays in the session folder
	defer func() {
		if !keep {
			os.RemoveAll(sessionDir)
		}
	}()
	absSession, _ := filepath.Abs(sessionDir)

	// The live files: each process keeps its accounts there while it runs,
	// so that a job that is killed, crashes or aborts still gets a
	// (partial) measurement.
	vars := map[string]string{"POPMON_SESSION": absSession}
	if self, err := os.Executable(); err == nil {
		vars["POPMON_BIN"] = self // the node agent (agent.go) on the other nodes
	}
	if *traced {
		session.TraceEnv(vars, absSession, *traceBuffer)
	}
	liveDir, err := session.MakeLiveDir(absSession)
	if err != nil {
		fmt.Fprintf(env.Stderr, "popmon: %v: a job that does not reach MPI_Finalize will leave no measurement\n", err)
	}
	var sampler *live.Sampler
	cwd, _ := os.Getwd()
	info := session.Info{LiveDir: liveDir, Command: cmdline, Cwd: cwd, Launcher: launch.LauncherKind(scan),
		JobID: os.Getenv("SLURM_JOB_ID"), MPILibrary: lib.MPI, Output: mf.output, Force: mf.force}
	if liveDir != "" {
		vars["POPMON_LIVE_DIR"] = liveDir
		if err := session.WriteInfo(absSession, info); err != nil {
			fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
		}
		sampler = live.NewSampler(liveDir, live.DefaultInterval)
		sampler.ReadCopies(filepath.Join(absSession, "nodes"))
		defer func() {
			sampler.Close()
			if !keep {
				os.RemoveAll(liveDir)
			}
		}()
	}

	cmd := &exec.Cmd{Path: path}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.Stdin, env.Stdout, env.Stderr
	// An enclosing run's or exec's variables go; this run's are in vars.
	environ, note, err := mf.Environment(lib, scan, vars, subprocess.SessionVars)
	if err != nil {
		return err
	}
	var launchArgv []string
	launchArgv, environ = launch.OpenMPIExportArgs(cmdline, scan, environ, os.Getenv("OMPI_MCA_mca_base_env_list"))
	// argv[0] is the word the user typed, as a shell passes it: Open MPI's
	// mpirun takes an absolute argv[0] for --prefix (its folder's bin and
	// lib first in the ranks' PATH and LD_LIBRARY_PATH), which would run
	// another python3 or test in the ranks than the same command line
	// without popmon.
	cmd.Args, cmd.Env = append([]string{cmdline[0]}, launchArgv[1:]...), environ
	if note != "" {
		fmt.Fprintln(env.Stderr, note)
	}
	cantMeasure := launch.Refusals(scan)
	var svc *liveapi.Service
	if sampler != nil && lo.active() {
		// The live view reads what the sampler read (docs/live-metrics.md).
		if svc, err = lo.start(env, sampler.Latest, time.Second, info); err != nil {
			return err
		}
	} else if lo.active() {
		fmt.Fprintln(env.Stderr, "popmon: no live metrics without a live folder")
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		if svc != nil {
			svc.Close()
		}
		return fail(notRunnable(err), "cannot start %s: %v", cmdline[0], err)
	}
	if sampler != nil {
		sampler.Start()
	}
	st := waitForwarding(cmd)
	if svc != nil {
		svc.Close()
	}
	if sampler != nil {
		sampler.Stop()
	}

	sess, err := session.Read(absSession, cmd.Process.Pid, session.FindKept(absSession, liveDir)...)
	if err != nil {
		fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
	}
	if nmpi := countMPI(sess.Files); nmpi == 1 && sampler != nil {
		// The job finished: its file gets the time series popmon sampled.
		for _, f := range sess.Files {
			if f.MPI {
				if err := session.AddSeries(sampler, f.Path); err != nil {
					fmt.Fprintf(env.Stderr, "popmon: no time series in the measurement: %v\n", err)
				}
			}
		}
	}
	if sampler != nil {
		// A job that did not finish (the only one, or the last of a
		// script): assemble what the live files hold, if it got as far
		// as measuring anything. Processes that said why they are not
		// measured (unmeasured-*.txt: e.g. srun's wrong --mpi) left
		// nothing to assemble.
		if normal, n := sampler.Ended(); n > 0 && !normal && len(sess.Unmeasured) == 0 {
			p, m, err := session.WritePartial(sampler, info, jobEnd(st, cmd.Process.Pid, cmdline), "run", absSession)
			if err != nil {
				fmt.Fprintf(env.Stderr, "popmon: no partial measurement: %v\n", err)
			} else {
				sess.Files = append(sess.Files, session.File{Path: p, MPI: m.MPI != nil, Command: m.Command})
			}
		}
	}
	published, unwritten := 0, 0
	for i, f := range sess.Files {
		target, force := mf.output, mf.force
		if target == "" {
			target, force = outfile.DefaultName(f.Command), false
		}
		view, viewed := readBack(f.Path, target) // -o /dev/null: the report all the same
		var final string
		if i == 0 && force {
			final, err = outfile.Replace(f.Path, target)
		} else if i == 0 && mf.output != "" {
			// Checked before the run; a file that appeared meanwhile is
			// not overwritten: the measurement gets the next number.
			if final, err = outfile.PublishNumbered(f.Path, target); err == nil && final != target {
				fmt.Fprintf(env.Stderr, "popmon: %s appeared during the run and is left alone\n", target)
			}
		} else {
			final, err = outfile.PublishNumbered(f.Path, target)
		}
		if err != nil {
			viewed()
			keep = keepUnwritten(env, f.Path, target, err, absSession, *format, *model) || keep
			unwritten++
			continue
		}
		published++
		if *traced && f.MPI && i == 0 {
			// The run's measurement stands without the replay: what
			// went wrong is said, one line each.
			for _, line := range session.AttachTrace(absSession, final) {
				fmt.Fprintf(env.Stderr, "popmon: %s\n", line)
			}
		}
		fmt.Fprintf(env.Stderr, "popmon: measurement written to %s\n", final)
		showReport(env, shown(view, final), *format, *model) // with the OpenMP line where the report does not say it
		viewed()
	}
	if published+unwritten == 0 { // the job's popmon exec -o wrote it
		published = execOutputs(env, scan, started, *format, *model)
	}
	if published == 0 && unwritten == 0 {
		measured := -1 // unknown without live files
		if sampler != nil {
			_, measured = sampler.Ended()
		}
		sess.Saw(measured, os.Environ())
		for _, line := range sess.Explain(cmdline[0], cantMeasure, st.signal) {
			fmt.Fprintf(env.Stderr, "popmon: %s\n", line)
		}
	}
	return unwrittenResult(st.result(), published, unwritten, sess)
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

func countMPI(files []session.File) int {
	n := 0
	for _, f := range files {
		if f.MPI {
			n++
		}
	}
	return n
}
