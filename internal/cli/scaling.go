package cli

import (
	"os"
	"strings"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/term"
	"github.com/popmon/popmon/pop"
)

const scalingHelp = `
Compares runs of one program on different resources (a scaling study):
per region, one column per run (sorted by CPUs), the efficiency tree of
each run, computation scalability (instruction, IPC and frequency scaling
with hardware counters), global efficiency, speedup and elapsed time,
relative to a reference run (the one with the fewest CPUs unless
--reference names another). Reads popmon measurement files, DLB/TALP
JSON files and Paraver traces, and accepts and refuses the same files as
'popmon report' and 'popmon check'; a directory stands for every *.json,
*.prv and *.prv.gz file below it. --skip-bad leaves unusable files out
(with a warning) and imports traces skipping malformed lines. --region
names are exact (case-sensitive).

  popmon scaling runs/                         text table
  popmon scaling --format markdown runs/ > scaling.md
  popmon scaling --mode weak --reference "4xMPI 1xOpenMP" a.json b.json c.json

--mode auto decides weak scaling when every run's instructions per CPU
are at least 0.75 times the reference's (needs hardware counters), else
strong. Formulas, labels and the JSON shape: docs/scaling.md.`

func scalingCmd(env *Env, args []string) error {
	fs := newFlags("scaling", "[--model M] [--reference LABEL|FILE] [--mode auto|strong|weak] [--format F] [--region NAME] [--skip-bad] FILES/DIRS...", scalingHelp, env.Stderr)
	model := fs.String("model", string(pop.ModelTALP), "metric model: talp, pop-hybrid, pop-additive (TALP files: talp only)")
	ref := fs.String("reference", "", "reference run: a label (\"2xMPI 1xOpenMP\") or a file; default: the fewest CPUs")
	mode := fs.String("mode", "auto", "scaling mode: auto, strong or weak")
	format := fs.String("format", report.FormatText, "output format: "+strings.Join(report.ScalingFormats(), ", "))
	region := fs.String("region", "", "only this region (exact name: names are case-sensitive)")
	skipBad := fs.Bool("skip-bad", false, "warn about unusable files and go on without them; import traces skipping malformed lines")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fault.Usagef("expected measurement files or directories")
	}
	okFormat := false
	for _, f := range report.ScalingFormats() {
		okFormat = okFormat || f == *format
	}
	if !okFormat {
		return fault.Usagef("unknown format %q: use one of %s", *format, strings.Join(report.ScalingFormats(), ", "))
	}
	m, err := pop.ParseModel(*model)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	sm, err := pop.ParseScalingMode(*mode)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	rs, err := loadStudy(env, "scaling", fs.Args(), m, *skipBad)
	if err != nil {
		return err
	}
	refIdx := -1
	if *ref != "" {
		if refIdx, err = runs.FindReference(rs, *ref); err != nil {
			return fault.Usagef("%v", err)
		}
	}
	in, err := runs.ScalingInput(rs, m, sm, refIdx, *region)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	s, err := pop.Scale(in)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	opts := report.ScalingOptions{Color: term.IsTerminal(env.Stdout) && os.Getenv("NO_COLOR") == ""}
	if err := report.RenderScaling(env.Stdout, *format, s, opts); err != nil {
		return fault.Failf("%v", err)
	}
	return nil
}

// loadStudy reads the runs of a study (scaling, model) with runs.LoadAll,
// warning on stderr as command cmd; no usable run is an input error.
func loadStudy(env *Env, cmd string, paths []string, m pop.Model, skipBad bool) ([]*runs.Run, error) {
	rs, err := runs.LoadAll(paths, m, skipBad, loadWarner(env, cmd))
	if err != nil {
		return nil, fault.Inputf("%v (--skip-bad skips such files)", err)
	}
	if len(rs) == 0 {
		return nil, fault.Inputf("no usable runs in %s: give popmon measurements, DLB/TALP JSON files or Paraver traces", strings.Join(paths, " "))
	}
	return rs, nil
}
