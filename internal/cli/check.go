package cli

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/popmon/popmon/internal/compare"
	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/pop"
)

const checkHelp = `
Compares a new run against a baseline and fails (exit 1) when an
efficiency dropped by more than --max-drop: a regression gate for CI.

  popmon check --baseline main.json new.json
  popmon check --baseline history/ new.json     newest run in history/ with
                                                the same resources as new.json
  popmon check --baseline old.json --metric parallel_efficiency \
      --max-drop 0.05 --max-drop mpi_load_balance=0.02 new.json
  popmon check --baseline old.json --max-slowdown 0.10 new.json

Every region present in both runs is compared (or those --region names,
exact and case-sensitive),
for parallel_efficiency and every efficiency of the new run's tree that the
baseline has too (or those --metric names). --max-drop is absolute, in
efficiency units: 0.05 lets 0.80 fall to 0.75 but not to 0.74; ID=VALUE sets
it for one metric. --max-slowdown is relative: 0.10 fails when the elapsed
time grows by more than 10 % (off by default). The table lists regressions
and changes of at least half the allowed drop (--all: every value).
Exit codes: 0 no regression (also when a baseline directory has no run with
the same resources), 1 regression, 2 usage, 3 unusable input: a new run or
baseline that is missing, not a run file, invalid or a truncated trace, a
compared region without POP metrics in either run (its accounts do not add
up), or runs with no region or no value in common (0 values compared). NEW and a
baseline file are read like 'popmon report' reads them; --skip-bad leaves
unusable files of a baseline directory out and imports traces skipping
malformed lines. See docs/ci.md.`

// listFlag is a repeatable flag; each value may hold several,
// comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

func checkCmd(env *Env, args []string) error {
	fs := newFlags("check", "--baseline FILE|DIR [--metric ID ...] [--max-drop 0.05] [--max-drop ID=0.02] [--region NAME ...] [--max-slowdown R] [--model M] NEW", checkHelp, env.Stderr)
	baseline := fs.String("baseline", "", "baseline run file, or a directory of runs (the newest with the same resources is used)")
	var metrics, regions listFlag
	fs.Var(&metrics, "metric", "metric id to compare (repeatable; default: parallel_efficiency and the efficiencies of the tree)")
	fs.Var(&regions, "region", "region to compare, exact name (repeatable; default: every region of both runs)")
	drops := compare.NewDrops(0.05)
	fs.Var(drops, "max-drop", "largest allowed drop, absolute in efficiency units; ID=VALUE for one metric (repeatable)")
	slowdown := fs.Float64("max-slowdown", 0, "largest allowed relative growth of elapsed time (0.10 = 10 %); 0 is off")
	model := fs.String("model", string(pop.ModelTALP), "metric model: talp, pop-hybrid, pop-additive (TALP files: talp only)")
	all := fs.Bool("all", false, "list every compared value, not only what moved")
	skipBad := fs.Bool("skip-bad", false, "leave unusable files of a baseline directory out (with a warning); import traces skipping malformed lines")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *baseline == "" {
		fs.Usage()
		return fault.Usagef("--baseline FILE|DIR is required")
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fault.Usagef("expected exactly one new run file, got %d", fs.NArg())
	}
	if *slowdown < 0 || math.IsNaN(*slowdown) {
		return fault.Usagef("--max-slowdown must be ≥ 0 (0 is off), got %v", *slowdown)
	}
	m, err := pop.ParseModel(*model)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	newPath := fs.Arg(0)
	ro := runs.ReadOptions{SkipBad: *skipBad, ToolVersion: Version}
	nr, err := runs.LoadWith(newPath, m, ro)
	if err != nil {
		return fault.Inputf("new run %v", err)
	}
	warnRun(env, "check", nr)
	br, err := pickBaseline(env, *baseline, nr, m, ro)
	if err != nil {
		return err
	}
	if br == nil {
		fmt.Fprintf(env.Stdout, "popmon check: no run with the resources of %s (%s) in %s: nothing to compare\n", newPath, nr.Label, *baseline)
		return nil
	}
	rows, err := compare.Runs(br, nr, metrics, regions, drops, *slowdown)
	if kind, _ := fault.KindOf(err); err != nil && kind == fault.Usage {
		return fault.Usagef("%v", err)
	} else if err != nil {
		return fault.Inputf("%v", err)
	}
	regressions, err := compare.Print(env.Stdout, br, nr, rows, drops, *all)
	if err != nil {
		return fault.Failf("%v", err)
	}
	if regressions > 0 {
		return fault.Failf("%d regression(s) against the baseline %s", regressions, br.Source)
	}
	return nil
}

// warnRun prints the run's warnings (a trace's skipped malformed lines, a
// TALP file's impossible load balance), as runs.LoadAll passes them for
// directories.
func warnRun(env *Env, cmd string, r *runs.Run) {
	for _, w := range r.Warnings {
		fmt.Fprintf(env.Stderr, "popmon %s: %v\n", cmd, &runs.Warning{Path: r.Source, Text: w})
	}
}

// pickBaseline loads the baseline file, or the newest run of the directory
// with the same resource configuration as nr (nil when there is none).
func pickBaseline(env *Env, path string, nr *runs.Run, m pop.Model, ro runs.ReadOptions) (*runs.Run, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		r, err := runs.LoadWith(path, m, ro)
		if err != nil {
			return nil, fault.Inputf("baseline %v", err)
		}
		warnRun(env, "check", r)
		return r, nil
	}
	all, err := runs.LoadAll([]string{path}, m, ro.SkipBad, loadWarner(env, "check"))
	if err != nil {
		return nil, fault.Inputf("baseline %v (--skip-bad skips such files)", err)
	}
	return runs.NewestLike(all, nr), nil
}
