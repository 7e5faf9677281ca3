// Package cli implements popmon's command line: one file per subcommand,
// flag parsing, wiring and exit codes. The measurement and metric logic live
// in other packages.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"syscall"

	popmon "github.com/popmon/popmon"
	"github.com/popmon/popmon/internal/safetext"

	"github.com/popmon/popmon/internal/fault"
)

// Version is popmon's version, reported by `popmon version` and written into
// measurement files by the library (one constant, popmon.Version, which
// the library is compiled with).
const Version = popmon.Version

// Exit codes, documented in docs/cli.md.
const (
	ExitOK         = 0   // success
	ExitFailure    = 1   // unexpected failure
	ExitUsage      = 2   // wrong command line
	ExitInput      = 3   // an input file is unusable: missing, unreadable, not a run, invalid, truncated
	ExitEnv        = 4   // the machine lacks something (MPI compiler, ...) or the library failed to build
	ExitNotWritten = 5   // popmon run could not write the measurement where asked (full file system): kept elsewhere, or lost (kept.go)
	ExitNotExec    = 126 // the command was found but cannot be executed (POSIX)
	ExitNotFound   = 127 // the command was not found (POSIX)
)

// exitCode is the one mapping of errors to popmon's exit codes: a fault's
// kind decides it (the measured job's own code, or 128 + the signal that
// ended it, with that signal to end popmon by); any other error is
// ExitFailure.
func exitCode(err error) (int, syscall.Signal) {
	var f *fault.Error
	if !errors.As(err, &f) {
		return ExitFailure, 0
	}
	switch f.Kind {
	case fault.Usage:
		return ExitUsage, 0
	case fault.Env:
		return ExitEnv, 0
	case fault.Input:
		return ExitInput, 0
	case fault.NotWritten:
		return ExitNotWritten, 0
	case fault.NotFound:
		return ExitNotFound, 0
	case fault.NotExec:
		return ExitNotExec, 0
	case fault.Job:
		if f.Signal != 0 {
			return 128 + int(f.Signal), f.Signal
		}
		return f.Code, 0
	}
	return ExitFailure, 0
}

// Env is what a command sees of the outside world.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// RaiseSignals lets Main end the process by the signal that ended the
	// measured job (popmon run), as the job ended; off in tests, where
	// Main returns 128 + the signal number instead.
	RaiseSignals bool
}

type command struct {
	name    string
	summary string
	run     func(env *Env, args []string) error
}

func commands() []command {
	return []command{
		{"run", "run a program (or launcher) under popmon and print its report", runCmd},
		{"exec", "per-rank form: mpirun -np N popmon exec -- ./app", execCmd},
		{"recover", "assemble the partial measurement of a job whose popmon run was killed", recoverCmd},
		{"top", "watch the efficiencies of a job popmon run is measuring on this node", topCmd},
		{"serve", "serve a running job's efficiencies: Prometheus /metrics and a JSON API", serveCmd},
		{"query", "print a running job's efficiencies once (run so far or the last N s)", queryCmd},
		{"report", "print the report of a measurement file (text, json, csv, talp-json)", reportCmd},
		{"import", "convert an Extrae/Paraver trace (.prv, .prv.gz) into a measurement", importCmd},
		{"trace", "export a traced run or a Paraver trace for Paraver or Perfetto (trace export)", traceCmd},
		{"scaling", "compare runs on different resources: scaling table (text, csv, json, markdown)", scalingCmd},
		{"model", "predict scaling from a few runs and find the parts that will not scale (text, csv, json)", modelCmd},
		{"check", "compare a run against a baseline; exit 1 when an efficiency dropped", checkCmd},
		{"pages", "write a static site: scaling tables, evolution charts, badge (offline)", pagesCmd},
		{"doctor", "explain what this machine supports and what is missing", doctorCmd},
		{"build", "build (or find) the measurement library and print its path", buildCmd},
		{"taskset", "list or change the CPUs of processes running with DROM (DLB's dlb_taskset)", tasksetCmd},
		{"dlb-home", "lay out a DLB-compatible prefix (DLB_HOME): libdlb*.so, DLB's headers, bin/dlb", dlbHomeCmd},
		{"version", "print popmon's version", versionCmd},
	}
}

// Main runs popmon with args (without the program name) and returns the
// process exit code.
func Main(args []string, env *Env) int {
	if len(args) == 0 {
		usage(env.Stderr)
		return ExitUsage
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		if len(args) > 1 {
			return Main([]string{args[1], "--help"}, env)
		}
		usage(env.Stdout)
		return ExitOK
	}
	if name == "--version" || name == "-version" {
		name = "version"
	}
	if name == "agent" { // not a user command: libpopmon starts it (agent.go)
		return agentMain(args[1:])
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(env, args[1:])
		if err == nil {
			return ExitOK
		}
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		code, sig := exitCode(err)
		if _, isFault := fault.KindOf(err); !isFault || err.Error() != "" {
			fmt.Fprintf(env.Stderr, "popmon %s: %s\n", name, safetext.Text(err.Error()))
		}
		if sig != 0 && env.RaiseSignals {
			raiseSignal(sig)
		}
		return code
	}
	fmt.Fprintf(env.Stderr, "popmon: unknown command %q; run 'popmon help' for the list\n", name)
	return ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `popmon %s: POP efficiency metrics for MPI programs

Usage: popmon COMMAND [options] [--] [arguments]

Commands:
`, Version)
	cs := commands()
	sort.SliceStable(cs, func(i, j int) bool { return false })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Quick start:
  popmon run -- mpirun -np 4 ./app      measure, write popmon-app-*.json, print the report
  popmon report --format json FILE      the metrics as JSON (also csv, talp-json)
  popmon doctor                         what works on this machine

'popmon COMMAND --help' explains a command. Exit codes: 0 ok, 1 failure, 2 usage,
3 unusable input file, 4 missing MPI/compiler, 5 measurement not written where asked
(kept elsewhere: popmon says where); run and exec return the program's own code.
`)
}

// newFlags returns a flag set that prints usage text on -h and reports
// parse errors as usage errors.
func newFlags(name, synopsis, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: popmon %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(help))
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintln(stderr, "\nOptions:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fault.Silent(fault.Usage)
	}
	return nil
}

func versionCmd(env *Env, args []string) error {
	fs := newFlags("version", "", "Prints popmon's version.", env.Stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "popmon %s\n", Version)
	return nil
}
