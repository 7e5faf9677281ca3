package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/shimbuild"
	"github.com/popmon/popmon/pop"
)

const runHelp = `
Runs COMMAND with the measurement library preloaded into it and every process
it starts (mpirun and its ranks, a job script, or a plain program), then
writes the measurement file and prints the POP report to stderr. The exit
code is COMMAND's.

  popmon run -- mpirun -np 4 ./app
  popmon run -o base.json -- ./serial_app input.dat

Launchers (mpirun, mpiexec, srun) and shells are not measured themselves. On
several nodes, the launcher must pass LD_PRELOAD on (Open MPI: -x LD_PRELOAD
-x POPMON_SESSION; Slurm and MPICH do by default), or use the per-rank form
'mpirun -np N popmon exec -- ./app'.`

type measureFlags struct {
	output    string
	mpicc     string
	noMPI     bool
	openmp    string
	counters  string
	gitCommit string
	gitBranch string
	gitTime   string
}

func (m *measureFlags) register(fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&m.output, "o", "", "measurement file to write (default popmon-APP-DATE.json; never overwritten)")
	fs.StringVar(&m.mpicc, "mpicc", "", "MPI C compiler wrapper to build the library with (default $POPMON_MPICC, then mpicc)")
	fs.BoolVar(&m.noMPI, "no-mpi", false, "measure a program that does not use MPI (builds the library with cc)")
	fs.StringVar(&m.gitCommit, "git-commit", "", "record this commit in the measurement (default: the CI environment of GitLab CI / GitHub Actions)")
	fs.StringVar(&m.gitBranch, "git-branch", "", "record this branch in the measurement (default: the CI environment)")
	fs.StringVar(&m.gitTime, "git-time", "", "record this commit time (RFC 3339) in the measurement (default: the CI environment)")
	fs.StringVar(&m.openmp, "openmp", openmpAuto, "OpenMP runtime: auto (preload LLVM libomp for GCC/libgomp programs, which have no OMPT), libomp, native, off")
	fs.StringVar(&m.counters, "counters", "", "hardware counters (instructions, cycles: IPC and frequency): auto (when the machine has them), on (warn when it has not), off (default $POPMON_COUNTERS, else auto)")
}

// gitEnv returns the POPMON_GIT_* variables through which the library
// records the version-control state: the flags, else the CI environment.
func (m *measureFlags) gitEnv(getenv func(string) string) map[string]string {
	g := runs.GitFromEnv(getenv)
	if m.gitCommit != "" {
		g = runs.Git{Commit: m.gitCommit, Branch: m.gitBranch, Timestamp: m.gitTime}
	}
	if m.gitBranch != "" {
		g.Branch = m.gitBranch
	}
	if m.gitTime != "" {
		g.Timestamp = m.gitTime
	}
	if g.Commit == "" {
		return nil
	}
	out := map[string]string{"POPMON_GIT_COMMIT": g.Commit}
	if g.Branch != "" {
		out["POPMON_GIT_BRANCH"] = g.Branch
	}
	if g.Timestamp != "" {
		out["POPMON_GIT_TIMESTAMP"] = g.Timestamp
	}
	if g.DefaultBranch != "" {
		out["POPMON_GIT_DEFAULT_BRANCH"] = g.DefaultBranch
	}
	if g.IsMergeRequest {
		out["POPMON_GIT_MERGE_REQUEST"] = "1"
	}
	return out
}

// environment returns the measured command's environment: the library (and
// LLVM's libomp where needed) preloaded, set added, drop removed.
func (m *measureFlags) environment(stderr io.Writer, lib string, cmdline []string, set map[string]string, drop []string) ([]string, error) {
	extra, env, note, err := openmpEnv(m.openmp, cmdline)
	if err != nil {
		return nil, err
	}
	if note != "" {
		fmt.Fprintln(stderr, note)
	}
	for k, v := range env {
		set[k] = v
	}
	if err := countersEnv(m.counters, set); err != nil {
		return nil, err
	}
	for k, v := range m.gitEnv(os.Getenv) {
		set[k] = v
	}
	preload := strings.Join(append([]string{lib}, extra...), ":")
	return measuredEnv(os.Environ(), preload, set, drop), nil
}

func (m *measureFlags) build(ctx context.Context, stderr io.Writer) (*shimbuild.Library, error) {
	lib, err := shimbuild.Build(ctx, shimbuild.Options{MPICC: m.mpicc, NoMPI: m.noMPI, Log: stderr})
	if err != nil {
		if errors.Is(err, shimbuild.ErrNoMPICC) {
			return nil, fail(ExitEnv, "%v (or --no-mpi for a program without MPI)", err)
		}
		return nil, wrapCode(ExitEnv, err)
	}
	return lib, nil
}

func runCmd(env *Env, args []string) error {
	fs := newFlags("run", "[-o FILE] [--mpicc PATH] [--openmp MODE] [--counters MODE] [--format F] [--model M] [--] COMMAND [ARGS...]", runHelp, env.Stderr)
	var mf measureFlags
	mf.register(fs)
	format := fs.String("format", "text", "report printed at the end: text, json, csv, talp-json, omp-regions-csv, or none")
	model := fs.String("model", "talp", "metric model of the report: talp, pop-hybrid, pop-additive, all")
	if err := parse(fs, args); err != nil {
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
	if _, _, _, err := openmpEnv(mf.openmp, nil); err != nil {
		return err
	}
	if err := checkCountersMode(mf.counters); err != nil {
		return err
	}
	if _, err := pop.ParseModels(*model); err != nil {
		return fail(ExitUsage, "%v", err)
	}
	if mf.output != "" {
		if err := checkWritableTarget(mf.output); err != nil {
			return err
		}
	}
	ctx := context.Background()
	lib, err := mf.build(ctx, env.Stderr)
	if err != nil {
		return err
	}
	path, err := exec.LookPath(cmdline[0])
	if err != nil {
		return fail(ExitNotFound, "cannot run %s: %v", cmdline[0], err)
	}

	outDir := "."
	if mf.output != "" {
		outDir = filepath.Dir(mf.output)
	}
	session, err := os.MkdirTemp(outDir, ".popmon-session-")
	if err != nil {
		return fail(ExitEnv, "cannot create a session folder next to the output in %s: %v", outDir, err)
	}
	keep := false // a measurement that could not be moved stays in the session folder
	defer func() {
		if !keep {
			os.RemoveAll(session)
		}
	}()
	absSession, _ := filepath.Abs(session)

	cmd := exec.Command(path, cmdline[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.Stdin, env.Stdout, env.Stderr
	cmd.Env, err = mf.environment(env.Stderr, lib.Path, cmdline, map[string]string{
		"POPMON_SESSION": absSession,
	}, []string{"POPMON_OUTPUT", "POPMON_PID"})
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fail(ExitNotFound, "cannot start %s: %v", cmdline[0], err)
	}
	code := waitForwarding(cmd)

	files, err := collect(absSession, cmd.Process.Pid)
	if err != nil {
		fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
	}
	if len(files) == 0 {
		fmt.Fprintf(env.Stderr, "popmon: no measurement was written: %s ran no program popmon could measure "+
			"(statically linked programs cannot be measured; did the program call MPI_Finalize?)\n", cmdline[0])
		return &exitError{code: code, err: errors.New("")}
	}
	for i, f := range files {
		target := mf.output
		if target == "" {
			target = defaultOutputName(f.command)
		}
		if i > 0 {
			target = fmt.Sprintf("%s.%d", strings.TrimSuffix(target, ".json"), i) + ".json"
		}
		final, err := publish(f.path, target)
		if err != nil {
			fmt.Fprintf(env.Stderr, "popmon: cannot write %s: %v; the measurement is kept in %s\n", target, err, f.path)
			keep = true
			continue
		}
		fmt.Fprintf(env.Stderr, "popmon: measurement written to %s\n", final)
		if *format != "none" {
			if err := renderFile(env, env.Stderr, final, *format, reportOptions{model: *model}); err != nil {
				fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
			}
		}
	}
	if code != 0 {
		return &exitError{code: code, err: errors.New("")}
	}
	return nil
}

// measuredEnv returns environ with lib prepended to LD_PRELOAD, set added
// and the keys in drop removed.
func measuredEnv(environ []string, lib string, set map[string]string, drop []string) []string {
	out := make([]string, 0, len(environ)+len(set)+1)
	preload := lib
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if k == "LD_PRELOAD" {
			if v != "" && !strings.Contains(v, lib) {
				preload = lib + ":" + v
			} else if v != "" {
				preload = v
			}
			continue
		}
		if _, ok := set[k]; ok {
			continue
		}
		skip := false
		for _, d := range drop {
			skip = skip || k == d
		}
		if !skip {
			out = append(out, kv)
		}
	}
	out = append(out, "LD_PRELOAD="+preload)
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+set[k])
	}
	return out
}

// waitForwarding waits for cmd, forwarding termination signals to it, and
// returns its exit code (128+signal when killed).
func waitForwarding(cmd *exec.Cmd) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			// SIGINT from a terminal already reached the whole process
			// group; forwarding it again would make mpirun abort hard.
			if s != syscall.SIGINT {
				_ = cmd.Process.Signal(s)
			}
		case err := <-done:
			if err == nil {
				return 0
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal())
				}
				return ee.ExitCode()
			}
			return ExitFailure
		}
	}
}

type sessionFile struct {
	path    string
	mpi     bool
	pid     int
	elapsed int64
	command []string
	mod     time.Time
}

// collect picks the measurements of a session: every MPI job's file; or,
// when no process used MPI, the direct child's file (else the longest).
func collect(dir string, childPid int) ([]sessionFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the session folder: %w", err)
	}
	var mpi, single []sessionFile
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		p := filepath.Join(dir, name)
		info, err := e.Info()
		if err != nil {
			continue
		}
		sf := sessionFile{path: p, mpi: strings.HasPrefix(name, "mpi-"), mod: info.ModTime()}
		var head struct {
			Command   []string `json:"command"`
			Processes []struct {
				Pid int `json:"pid"`
			} `json:"processes"`
			Regions []struct {
				Processes []struct {
					ElapsedNS int64 `json:"elapsed_ns"`
				} `json:"processes"`
			} `json:"regions"`
		}
		if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &head) == nil {
			sf.command = head.Command
			if len(head.Processes) > 0 {
				sf.pid = head.Processes[0].Pid
			}
			if len(head.Regions) > 0 {
				for _, pr := range head.Regions[0].Processes {
					sf.elapsed = max(sf.elapsed, pr.ElapsedNS)
				}
			}
		}
		if sf.mpi {
			mpi = append(mpi, sf)
		} else {
			single = append(single, sf)
		}
	}
	if len(mpi) > 0 {
		sort.Slice(mpi, func(i, j int) bool { return mpi[i].mod.Before(mpi[j].mod) })
		return mpi, nil
	}
	if len(single) == 0 {
		return nil, nil
	}
	for _, s := range single {
		if s.pid == childPid {
			return []sessionFile{s}, nil
		}
	}
	sort.Slice(single, func(i, j int) bool { return single[i].elapsed > single[j].elapsed })
	return single[:1], nil
}

func defaultOutputName(command []string) string {
	app := "app"
	if len(command) > 0 {
		app = filepath.Base(command[0])
	}
	app = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r < 32 {
			return '_'
		}
		return r
	}, app)
	return fmt.Sprintf("popmon-%s-%s.json", app, time.Now().Format("20060102-150405"))
}

// publish moves src to target without overwriting anything: if target
// exists, target with .1, .2, ... before the extension is used.
func publish(src, target string) (string, error) {
	ext := filepath.Ext(target)
	stem := strings.TrimSuffix(target, ext)
	for i := 0; i < 1000; i++ {
		name := target
		if i > 0 {
			name = fmt.Sprintf("%s.%d%s", stem, i, ext)
		}
		err := os.Link(src, name)
		if err == nil {
			os.Remove(src)
			return name, nil
		}
		if errors.Is(err, os.ErrExist) {
			continue
		}
		// No hard links here: exclusive create and copy.
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		b, rerr := os.ReadFile(src)
		if rerr != nil {
			f.Close()
			os.Remove(name)
			return "", rerr
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			os.Remove(name)
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
		os.Remove(src)
		return name, nil
	}
	return "", fmt.Errorf("%s and 999 numbered variants exist", target)
}

// checkWritableTarget fails early when the output's folder does not exist.
func checkWritableTarget(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fail(ExitUsage, "cannot write %s: folder %s does not exist", path, dir)
	}
	if !st.IsDir() {
		return fail(ExitUsage, "cannot write %s: %s is not a folder", path, dir)
	}
	return nil
}
