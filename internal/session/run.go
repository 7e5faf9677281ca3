package session

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/popmon/popmon/internal/binscan"
	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/outfile"
)

// Job is what popmon run runs and how; the command line fills it from its
// flags, the launch environment and the report it prints.
type Job struct {
	// Argv is the command line as typed; Path its program, resolved as a
	// shell does.
	Argv []string
	Path string
	// Stdin, Stdout and Stderr are the job's.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Say prints one of popmon's own lines about the run (a sentence,
	// without "popmon: "): cli prints them, Run says what. Nil: none.
	Say func(line string)
	// Info says what the job is (popmon-live.info, the live view): its
	// Output and Force are -o and --force (Output "": a default name per
	// measurement); Run sets LiveDir.
	Info Info
	// Scan is what the command line runs (binscan; nil when unknown);
	// Refusals the reasons it cannot be measured at all (launch.Refusals).
	Scan     *binscan.Result
	Refusals []string
	// Trace records the MPI event trace (--trace) with a buffer of
	// TraceBuffer per thread ("": the default).
	Trace       bool
	TraceBuffer string
	// Environ returns the job's environment and command line for the
	// session's variables vars (the launch environment: LD_PRELOAD, the
	// POPMON_* options, Open MPI's export list).
	Environ func(vars map[string]string) (environ, argv []string, err error)
	// Live, when set, starts the live view of the job (--serve,
	// --prom-textfile) reading latest; stop ends it.
	Live func(latest func() []*live.Snapshot, info Info) (stop func(), err error)
	// Report prints the report of a measurement: final for one Run
	// published (the report and the lines that go with it), not final for
	// one kept elsewhere or written by the job's popmon exec -o.
	Report func(path string, final bool)
	// InForeground says whether popmon is in its terminal's foreground
	// process group (a SIGINT from the terminal reached the job too).
	InForeground func() bool
}

// say prints one of popmon's lines through Say.
func (job Job) say(line string) {
	if job.Say != nil {
		job.Say(line)
	}
}

// Run is popmon run's lifecycle: the session folder next to the output
// and the live folder, the job started with the session's variables and
// waited for (signals passed on), its live files sampled while it runs, the
// measurements found in the session folder (a partial one assembled from
// the live files when the job did not finish, the time series added to a
// finished one) published to the output and reported, and, when none
// was, why. Its error is a fault: the job's own failing end (fault.Job),
// a command that could not be started, or a measurement not written where
// asked (fault.NotWritten).
func Run(job Job) error {
	outDir := "."
	if k, _ := outfile.TargetKind(job.Info.Output); job.Info.Output != "" && k != outfile.Through {
		outDir = filepath.Dir(job.Info.Output) // not /dev for -o /dev/null
	}
	sessionDir, err := os.MkdirTemp(outDir, ".popmon-session-")
	if err != nil {
		return fault.Envf("cannot create a session folder next to the output in %s: %v", outDir, err)
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
		vars["POPMON_BIN"] = self // the node agent (RunAgent) on the other nodes
	}
	if job.Trace {
		TraceEnv(vars, absSession, job.TraceBuffer)
	}
	liveDir, err := MakeLiveDir(absSession)
	if err != nil {
		job.say(fmt.Sprintf("%v: a job that does not reach MPI_Finalize will leave no measurement", err))
	}
	var sampler *live.Sampler
	info := job.Info
	info.LiveDir = liveDir
	if liveDir != "" {
		vars["POPMON_LIVE_DIR"] = liveDir
		if err := WriteInfo(absSession, info); err != nil {
			job.say(err.Error())
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

	cmd := &exec.Cmd{Path: job.Path}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = job.Stdin, job.Stdout, job.Stderr
	environ, argv, err := job.Environ(vars)
	if err != nil {
		return err
	}
	// argv[0] is the word the user typed, as a shell passes it: Open MPI's
	// mpirun takes an absolute argv[0] for --prefix (its folder's bin and
	// lib first in the ranks' PATH and LD_LIBRARY_PATH), which would run
	// another python3 or test in the ranks than the same command line
	// without popmon.
	cmd.Args, cmd.Env = append([]string{job.Argv[0]}, argv[1:]...), environ
	stopLive := func() {}
	if sampler != nil && job.Live != nil {
		// The live view reads what the sampler read (docs/live-metrics.md).
		if stopLive, err = job.Live(sampler.Latest, info); err != nil {
			return err
		}
	} else if job.Live != nil {
		job.say("no live metrics without a live folder")
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		stopLive()
		return fault.NotRunnable(err, "cannot start %s: %v", job.Argv[0], err)
	}
	if sampler != nil {
		sampler.Start()
	}
	st := waitForwarding(cmd, job.InForeground)
	stopLive()
	if sampler != nil {
		sampler.Stop()
	}

	sess := collect(job, sampler, st, cmd.Process.Pid, absSession, liveDir)
	published, unwritten := 0, 0
	for i, f := range sess.Files {
		ok, kept := publish(job, f, i == 0, absSession)
		keep = keep || kept
		if ok {
			published++
		} else {
			unwritten++
		}
	}
	if published+unwritten == 0 { // the job's popmon exec -o wrote it
		published = execOutputs(job.Scan, started, job.Report)
	}
	if published == 0 && unwritten == 0 {
		measured := -1 // unknown without live files
		if sampler != nil {
			_, measured = sampler.Ended()
		}
		sess.Saw(measured, os.Environ())
		for _, line := range sess.Explain(job.Argv[0], job.Refusals, st.signal) {
			job.say(line)
		}
	}
	return unwrittenResult(st.result(), published, unwritten, sess)
}

// collect reads the measurements of the session folder after the job
// ended: the finished job's file gets the time series popmon sampled; a
// job that did not finish gets a partial measurement from its live files.
func collect(job Job, sampler *live.Sampler, st jobStatus, pid int, absSession, liveDir string) *Result {
	sess, err := Read(absSession, pid, FindKept(absSession, liveDir)...)
	if err != nil {
		job.say(err.Error())
	}
	if nmpi := countMPI(sess.Files); nmpi == 1 && sampler != nil {
		// The job finished: its file gets the time series popmon sampled.
		for _, f := range sess.Files {
			if f.MPI {
				if err := AddSeries(sampler, f.Path); err != nil {
					job.say("no time series in the measurement: " + err.Error())
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
			info := job.Info
			info.LiveDir = liveDir
			p, m, err := WritePartial(sampler, info, st.end(pid, job.Argv), "run", absSession)
			if err != nil {
				job.say("no partial measurement: " + err.Error())
			} else {
				sess.Files = append(sess.Files, File{Path: p, MPI: m.MPI != nil, Command: m.Command})
			}
		}
	}
	return sess
}

// publish moves the measurement f to the output (-o for the first, else
// a default name, numbered when taken) and reports it; ok is false when it
// could not be written there, and kept says whether it was kept inside the
// session folder, which must then stay.
func publish(job Job, f File, first bool, absSession string) (ok, kept bool) {
	target, force := job.Info.Output, job.Info.Force
	if target == "" {
		target, force = outfile.DefaultName(f.Command), false
	}
	view, viewed := ReadBack(f.Path, target) // -o /dev/null: the report all the same
	defer viewed()
	var final string
	var err error
	if first && force {
		final, err = outfile.Replace(f.Path, target)
	} else if first && job.Info.Output != "" {
		// Checked before the run; a file that appeared meanwhile is
		// not overwritten: the measurement gets the next number.
		if final, err = outfile.PublishNumbered(f.Path, target); err == nil && final != target {
			job.say(target + " appeared during the run and is left alone")
		}
	} else {
		final, err = outfile.PublishNumbered(f.Path, target)
	}
	if err != nil {
		return false, keepUnwritten(job.say, job.Report, f.Path, target, err, absSession)
	}
	if job.Trace && f.MPI && first {
		// The run's measurement stands without the replay: what
		// went wrong is said, one line each.
		for _, line := range AttachTrace(absSession, final) {
			job.say(line)
		}
	}
	job.say("measurement written to " + final)
	if job.Report != nil {
		job.Report(Shown(view, final), true)
	}
	return true, false
}

func countMPI(files []File) int {
	n := 0
	for _, f := range files {
		if f.MPI {
			n++
		}
	}
	return n
}
