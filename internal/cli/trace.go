package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/perfetto"

	"github.com/popmon/popmon/internal/outfile"
)

const traceHelp = `
Works on event traces: those of 'popmon run --trace' (give the
measurement file or its trace folder) and Extrae/Paraver traces.

  popmon trace export --format perfetto run.json        run.perfetto.json, for ui.perfetto.dev
  popmon trace export --format prv -o app run.json      app.prv, app.pcf, app.row, for Paraver
  popmon trace export --format perfetto --ranks 0-3 --window 1.5:2 app.prv.gz

--ranks keeps some ranks (a list such as 0-3,8); --window keeps the calls
that overlap T0:T1 (seconds from the trace start; T0: or :T1 for an open
end). A message is kept when both its ends are. The formats are described
in docs/perfetto.md and docs/import.md; wait states and the critical path
are 'popmon report --patterns'.`

func traceCmd(env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.Stderr, "Usage: popmon trace export [options] TRACE\n%s\n", traceHelp)
		if len(args) == 0 {
			return fault.Usagef("expected a subcommand: export")
		}
		return nil
	}
	switch args[0] {
	case "export":
		return traceExport(env, args[1:])
	}
	return fault.Usagef("unknown subcommand %q: use popmon trace export", args[0])
}

func traceExport(env *Env, args []string) error {
	fs := newFlags("trace export", "--format prv|perfetto [--ranks LIST] [--window T0:T1] [-o OUT [--force]] TRACE", traceHelp, env.Stderr)
	format := fs.String("format", "", "prv (Paraver .prv/.pcf/.row) or perfetto (Chrome/Perfetto trace-event JSON)")
	ranks := fs.String("ranks", "", "keep these ranks only: a list such as 0-3,8")
	window := fs.String("window", "", "keep the calls overlapping T0:T1, in seconds from the trace start")
	output := fs.String("o", "", "output: a .json file for perfetto (default TRACE.perfetto.json here), a prefix for prv (writes OUT.prv, OUT.pcf, OUT.row; default TRACE.popmon)")
	force := fs.Bool("force", false, "replace existing output files")
	skipBad := fs.Bool("skip-bad", false, "for a Paraver trace: skip malformed lines instead of refusing the trace")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fault.Usagef("expected exactly one trace, got %d", fs.NArg())
	}
	if *format != "prv" && *format != "perfetto" {
		return fault.Usagef("--format %q: use prv or perfetto", *format)
	}
	sel, err := traceSelection(*ranks, *window)
	if err != nil {
		return err
	}
	path := fs.Arg(0)
	// Check the outputs before reading the trace.
	var targets []string
	var prefix string
	if *format == "perfetto" {
		target := *output
		if target == "" {
			target = traceBase(path) + ".perfetto.json"
		}
		targets = []string{target}
	} else {
		prefix = strings.TrimSuffix(*output, ".prv")
		if prefix == "" {
			prefix = traceBase(path) + ".popmon"
		}
		targets = []string{prefix + ".prv", prefix + ".pcf", prefix + ".row"}
	}
	for _, t := range targets {
		if err := outfile.CheckTarget(t, *force); err != nil {
			return err
		}
	}
	tr, err := loadTrace(path, inputOptions{skipBad: *skipBad})
	if err != nil {
		return err
	}
	if tr, err = tr.Filter(sel); err != nil {
		return fault.Usagef("%v", err)
	}
	if *format == "perfetto" {
		out, err := outfile.Create(targets[0], *force)
		if err != nil {
			return err
		}
		defer out.Abort()
		if err := perfetto.Write(out, tr); err != nil {
			return fault.Failf("writing %s: %v", targets[0], err)
		}
		if err := out.Commit(); err != nil {
			return err
		}
	} else if err := paraver.WriteTrace(prefix, tr); err != nil {
		return fault.Failf("writing %s: %v", strings.Join(targets, ", "), err)
	}
	for _, t := range targets {
		if _, err := os.Stat(t); errors.Is(err, os.ErrNotExist) {
			return fault.Failf("%s was not written", t)
		}
	}
	fmt.Fprintf(env.Stderr, "popmon: %s (%s) → %s\n", path, tr.Summary(), strings.Join(targets, ", "))
	if *format == "perfetto" {
		fmt.Fprintf(env.Stderr, "popmon: next: open %s in https://ui.perfetto.dev (Open trace file) or chrome://tracing\n", targets[0])
	}
	return nil
}
