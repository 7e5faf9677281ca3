package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/pages"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/term"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

const pagesHelp = `
Writes a static, self-contained web site from a folder of runs (popmon
measurement files, DLB/TALP JSON files and Paraver traces): an index of
experiments with their trends and, per experiment, the scaling table
coloured red (0) to green (1), charts of the efficiencies and the speedup
against CPUs, history charts of configurations with several runs (over
time or commits), the newest run's time series, per-process times, MPI
call profile and GPU tables, and a badge (badge.svg). Every folder holding
*.json, *.prv or *.prv.gz files is one experiment (talp-pages'
convention). The site loads nothing from the network.

  popmon pages -i runs/ -o public/
  popmon pages -i runs/ -o public/ --region Global --region solve --title "My app"

The output folder must be new, empty, or written by popmon pages before
(it holds a .popmon-pages marker); files others put there are kept. Run
files are read and checked like 'popmon scaling' reads them (the same
files are accepted and refused); --region names are exact.
Documentation: docs/pages.md.`

// pagesRegions collects repeated --region flags.
type pagesRegions []string

func (l *pagesRegions) String() string { return strings.Join(*l, ",") }

func (l *pagesRegions) Set(s string) error {
	if s == "" {
		return fmt.Errorf("empty region name")
	}
	*l = append(*l, s)
	return nil
}

func pagesCmd(env *Env, args []string) error {
	fs := newFlags("pages", "-i DIR -o SITE [--model M] [--region NAME ...] [--skip-bad] [--title T]", pagesHelp, env.Stderr)
	in := fs.String("i", "", "input folder: experiments are the folders holding run files (*.json, *.prv, *.prv.gz)")
	out := fs.String("o", "", "output folder of the site (new, empty, or an earlier popmon pages site)")
	model := fs.String("model", string(pop.ModelTALP), "metric model: talp, pop-hybrid, pop-additive (TALP files: talp only)")
	var regions pagesRegions
	fs.Var(&regions, "region", "region to show, exact name (case-sensitive), repeatable (default Global)")
	skipBad := fs.Bool("skip-bad", false, "warn about unusable files and go on without them; import traces skipping malformed lines")
	title := fs.String("title", pages.DefaultTitle, "site title")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *in == "" || *out == "" || fs.NArg() != 0 {
		fs.Usage()
		return fault.Usagef("expected -i DIR and -o SITE and no other arguments")
	}
	m, err := pop.ParseModel(*model)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	opts := pages.Options{
		Input: *in, Output: *out, Model: m, Regions: regions, Title: *title,
		Read: runs.ReadOptions{SkipBad: *skipBad, ToolVersion: Version},
		Warn: func(err error) {
			var w *runs.Warning
			if errors.As(err, &w) {
				fmt.Fprintf(env.Stderr, "popmon pages: %v\n", err)
				return
			}
			fmt.Fprintf(env.Stderr, "popmon pages: skipping: %v\n", err)
		},
	}
	if term.IsTerminal(env.Stderr) {
		opts.Progress = env.Stderr
	}
	res, err := pages.Generate(opts)
	var re *measure.RegionError
	if errors.As(err, &re) {
		return fault.Usagef("%v", err)
	}
	if err != nil {
		return fault.Inputf("%v", err)
	}
	fmt.Fprintf(env.Stdout, "popmon pages: wrote %s/index.html: %d experiment(s), %d run(s)", strings.TrimRight(*out, "/"), res.Experiments, res.Runs)
	if res.Skipped > 0 {
		fmt.Fprintf(env.Stdout, ", %d bad file(s) skipped", res.Skipped)
	}
	fmt.Fprintln(env.Stdout)
	return nil
}
