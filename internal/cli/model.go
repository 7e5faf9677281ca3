package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/model"
	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/pop"
)

const modelHelp = `
Predicts how a program scales from a few runs at different CPU counts (at
least 3 after --holdout), and lists the parts that will not scale. Reads
the runs as 'popmon scaling' does (popmon measurements, DLB/TALP JSON
files, Paraver traces; a directory stands for every run file below it).

Models (--fit-model, default all):
  amdahl, pipe, linear  BSC basicanalysis's projections of every POP factor
                        (bounds f in [0,1], the smallest run weighted most),
                        composed into the runtime T(x) = ΣU_ref/(x·GE(x))
  runtime               Amdahl's law on the runtime, T(x) = T1·(s+(1−s)/x)
  components            RAT: instructions, IPC, frequency, load balance and
                        the non-useful time, each with its own growth law

  popmon model runs/                               fit all, print the kernels
  popmon model --holdout 8,16 runs/                leave 8 and 16 CPUs out, compare
  popmon model --predict 32,64 --format json runs/

Predictions carry the model's leave-one-out error; the text says what each
model assumed. Formulas, JSON ids: docs/model.md.`

func modelCmd(env *Env, args []string) error {
	fs := newFlags("model", "[--fit-model M[,M...]] [--predict X,...] [--holdout X,...] [--threshold F] [--format text|csv|json] [--region NAME] [--mode auto|strong|weak] [--skip-bad] FILES/DIRS...", modelHelp, env.Stderr)
	fitModel := fs.String("fit-model", "all", "models: amdahl, pipe, linear, runtime, components or all (comma-separated)")
	predict := fs.String("predict", "", "CPU counts to predict, comma-separated (e.g. 32,64)")
	holdout := fs.String("holdout", "", "CPU counts of runs to leave out of the fits and compare with their predictions (e.g. 8,16)")
	threshold := fs.Float64("threshold", model.DefaultThreshold, "time share (0-1) above which a part is a key kernel")
	format := fs.String("format", report.FormatText, "output format: "+strings.Join(report.ModelFormats(), ", "))
	region := fs.String("region", "", "the region to model (exact name; default Global)")
	mode := fs.String("mode", "auto", "scaling mode: auto, strong or weak")
	skipBad := fs.Bool("skip-bad", false, "warn about unusable files and go on without them; import traces skipping malformed lines")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fault.Usagef("expected measurement files or directories")
	}
	if !contains(report.ModelFormats(), *format) {
		return fault.Usagef("unknown format %q: use one of %s", *format, strings.Join(report.ModelFormats(), ", "))
	}
	if !(*threshold > 0 && *threshold <= 1) {
		return fault.Usagef("--threshold %g: give a time share in (0, 1], e.g. 0.05", *threshold)
	}
	predictX, err := cpuList("--predict", *predict)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	holdX, err := cpuList("--holdout", *holdout)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	models := strings.Split(*fitModel, ",")
	sm, err := pop.ParseScalingMode(*mode)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	rs, err := loadStudy(env, "model", fs.Args(), pop.ModelTALP, *skipBad)
	if err != nil {
		return err
	}
	name := *region
	if name == "" {
		name = "Global"
	}
	in, err := runs.ScalingInput(rs, pop.ModelTALP, sm, runs.FitReference(rs, name, holdX), name)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	s, err := pop.Scale(in)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	if len(s.Regions) == 0 {
		return fault.Usagef("no run has region %q", name)
	}
	g := &s.Regions[0]
	pts, factors := runs.ModelPoints(rs, g)
	var notes []string
	if wantComponents(models) {
		notes = runs.AddTraceSamples(pts, rs, runs.ReadOptions{SkipBad: *skipBad, ToolVersion: Version})
	}
	res, err := model.Fit(pts, model.Options{Models: models, Holdout: holdX, Predict: predictX,
		Threshold: *threshold, Weak: s.Mode == pop.ScalingWeak, Factors: factors, Notes: notes})
	if err != nil {
		return fault.Usagef("%v", err)
	}
	info := report.ModelInfo{Region: g.Name, ModeReason: s.ModeReason}
	if err := report.RenderModel(env.Stdout, *format, res, info); err != nil {
		return fault.Failf("%v", err)
	}
	return nil
}

// wantComponents reports whether the component model (and with it the
// communication fits, which read traces) is asked for.
func wantComponents(models []string) bool {
	for _, m := range models {
		if m == "all" || m == model.ModelComponents {
			return true
		}
	}
	return false
}

// cpuList parses "8,16" into CPU counts ≥ 1.
func cpuList(flag, s string) ([]int, error) {
	var out []int
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s %q: give CPU counts ≥ 1 separated by commas, e.g. 8,16", flag, s)
		}
		out = append(out, v)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
