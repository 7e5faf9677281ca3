package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/symbolize"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"

	"github.com/popmon/popmon/internal/outfile"
)

const reportHelp = `
Prints the POP metrics of a measurement file written by 'popmon run',
'popmon exec' or 'popmon import', of a DLB/TALP JSON file, or of an
Extrae/Paraver trace (imported on the fly):

  popmon report run.json                       the text tree (like TALP's)
  popmon report --format json run.json         metric ids of POP-METRICS.md §9
  popmon report --format csv --region solve run.json
  popmon report --format talp-json run.json > talp.json   for TALP tooling
  popmon report --model pop-additive run.json  another metric model
  popmon report --model all run.json           every model, one after another
  popmon report talp.json                      a DLB/TALP JSON file
  popmon report app.prv.gz                     an Extrae/Paraver trace
  popmon report --patterns run.json            wait states and critical path of a traced run

Models: talp (default, DLB/TALP's tree), pop-hybrid (POP multiplicative
hybrid MPI+OpenMP model), pop-additive (POP additive hybrid model), all.
talp-json is always model talp. Formats and models are documented in
docs/report-formats.md and docs/metrics.md.

--region takes a region's exact name (names are case-sensitive). -o FILE
is refused when FILE exists, before any work; --force replaces it
atomically. Files are checked like 'popmon scaling' and 'popmon check'
check them (docs/cli.md); an unusable file is exit 3. A measurement without
trustworthy metrics, or a region whose accounts do not add up, gets a
'No POP metrics: why' sentence instead of its tree, and exit 3 when such a
region is shown (--region naming another region: exit 0).`

var formats = report.Formats()

type reportOptions struct {
	region   string
	model    string
	input    inputOptions
	overTime bool // per-interval efficiencies (report --over-time)
	// serTransfer is the definition of serialisation and transfer
	// efficiency (report --ser-transfer).
	serTransfer pop.SerTransfer
}

func checkFormat(f string, allowNone bool) error {
	for _, ok := range formats {
		if f == ok {
			return nil
		}
	}
	if allowNone && f == "none" {
		return nil
	}
	return fault.Usagef("unknown format %q: use one of %s", f, strings.Join(formats, ", "))
}

func reportCmd(env *Env, args []string) error {
	fs := newFlags("report", "[--format F] [--region NAME] [--model M] [--ser-transfer bsc|pop] [--patterns] [--skip-bad] [-o OUT [--force]] FILE", reportHelp, env.Stderr)
	format := fs.String("format", "text", "output format: "+strings.Join(formats, ", "))
	region := fs.String("region", "", "only this region (exact name: names are case-sensitive)")
	model := fs.String("model", string(pop.ModelTALP), "metric model: "+modelNames())
	output := fs.String("o", "", "write to this file instead of stdout (refused when it exists, unless --force)")
	force := fs.Bool("force", false, "with -o: replace an existing file (atomically)")
	skipBad := fs.Bool("skip-bad", false, "for a trace: skip malformed lines (with a warning) instead of refusing the trace")
	overTime := fs.Bool("over-time", false, "the region's efficiencies in each interval of the run (text or csv; Global unless --region)")
	serTransfer := fs.String("ser-transfer", "bsc", "model pop-additive on a replayed trace: serialisation/transfer efficiency definition, bsc (bsc-basicanalysis: SerE = U_ideal,max/T_ideal, TransE = CommE/SerE) or pop (SerE = U_max/T_ideal, TransE = T_ideal/T)")
	patterns := fs.Bool("patterns", false, "the wait states and the critical path of a trace (a traced run's measurement, its trace folder, or a Paraver trace; text or json)")
	if err := parse(fs, args); err != nil {
		return err
	}
	st, err := pop.ParseSerTransfer(*serTransfer)
	if err != nil {
		return fault.Usagef("--ser-transfer: %v", err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fault.Usagef("expected exactly one measurement file, got %d", fs.NArg())
	}
	if err := checkFormat(*format, false); err != nil {
		return err
	}
	if err := checkModel(*model, *format); err != nil {
		return err
	}
	if *force && *output == "" {
		return fault.Usagef("--force needs -o FILE")
	}
	if *patterns {
		if *overTime || *region != "" {
			return fault.Usagef("--patterns analyses the whole trace: drop --over-time and --region")
		}
		return reportPatterns(env, fs.Arg(0), *format, *output, *force, inputOptions{skipBad: *skipBad})
	}
	opts := reportOptions{region: *region, model: *model, input: inputOptions{skipBad: *skipBad}, overTime: *overTime, serTransfer: st}
	if *overTime && *format != "text" && *format != "csv" {
		return fault.Usagef("--over-time prints text or csv, not %s", *format)
	}
	if *overTime && *model == pop.AllModels {
		return fault.Usagef("--over-time shows one model: choose it with --model")
	}
	if *output == "" {
		refused, err := renderReport(env, env.Stdout, fs.Arg(0), *format, opts)
		if err != nil {
			return err
		}
		return refusedExit(refused)
	}
	out, err := outfile.Create(*output, *force)
	if err != nil {
		return err
	}
	defer out.Abort()
	refused, err := renderReport(env, out, fs.Arg(0), *format, opts)
	if err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	return refusedExit(refused)
}

// refusedExit is popmon report's ending for a report that refused its
// metrics: exit 3, an unusable input, as popmon scaling and popmon check
// see it, with no message of its own (the report says why, in its place).
func refusedExit(refused bool) error {
	if !refused {
		return nil
	}
	return fault.Silent(fault.Input)
}

// modelNames lists the --model values: the models, then "all".
func modelNames() string {
	names := make([]string, 0, len(pop.Models())+1)
	for _, m := range pop.Models() {
		names = append(names, string(m))
	}
	return strings.Join(append(names, pop.AllModels), ", ")
}

// checkModel checks a --model value and that the format can show it:
// talp-json has model talp only.
func checkModel(model, format string) error {
	models, err := pop.ParseModels(model)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	if strings.HasPrefix(format, "talp-") && (len(models) != 1 || models[0] != pop.ModelTALP) {
		return fault.Usagef("--format %s has DLB/TALP's metrics only (model talp), not --model %s: use --format json for other models", format, model)
	}
	return nil
}

// renderFile reads a measurement (or a TALP JSON file, or a trace: see
// readMeasurement) and renders the report of the model opts names (all
// models for "all"). A report that refuses its metrics is rendered (it
// says why) and is no error: popmon run and popmon recover, which print
// the report after writing the measurement, print nothing more.
func renderFile(env *Env, w io.Writer, path, format string, opts reportOptions) error {
	_, _, err := renderRun(env, w, path, format, opts)
	return err
}

// showReport is what popmon run prints after writing the measurement at
// path: its report in format ("none": no report) and, where that report
// does not say it, why OpenMP was not measured (report.OpenMPEndNote),
// from the one read of the file.
func showReport(env *Env, path, format, model string) {
	why := ""
	if format == "none" {
		why = openMPNotMeasured(path)
	} else {
		_, run, err := renderRun(env, env.Stderr, path, format, reportOptions{model: model})
		if err != nil {
			fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
		}
		if run != nil {
			why = run.OpenMPNotMeasured
		}
	}
	if line := report.OpenMPEndNote(why, format); line != "" {
		fmt.Fprintln(env.Stderr, line)
	}
}

// openMPNotMeasured returns why the measurement file at path says OpenMP
// was not measured ("" when it was, and when the file cannot be read: no
// report is printed that would say what is wrong), reading only its
// "openmp" object.
func openMPNotMeasured(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	o, err := measure.ReadOpenMP(f)
	if err != nil {
		return ""
	}
	return o.NotMeasured()
}

// renderReport is renderFile that also says whether the report refused
// metrics it was asked for (popmon report then exits 3): those of the
// whole measurement, or those of a region it shows (every region, or the
// one --region names), whose accounts do not add up.
func renderReport(env *Env, w io.Writer, path, format string, opts reportOptions) (refused bool, err error) {
	refused, _, err = renderRun(env, w, path, format, opts)
	return refused, err
}

// renderRun is renderReport that also returns what the report said about
// the run (pop.Run; nil when it computed no report).
func renderRun(env *Env, w io.Writer, path, format string, opts reportOptions) (refused bool, run *pop.Run, err error) {
	m, err := readMeasurement(env, path, opts.input)
	if err != nil {
		return false, nil, err
	}
	models, err := pop.ParseModels(opts.model)
	if err != nil {
		return false, nil, fault.Usagef("%v", err)
	}
	region := opts.region
	if region != "" {
		if region, err = measure.MatchRegion(m.RegionNames(), region, "in "+path); err != nil {
			return false, nil, fault.Usagef("%v", err)
		}
	}
	if opts.overTime {
		if region == "" {
			region = measure.GlobalRegion
		}
		ivs, err := pop.OverTime(m, models[0], region)
		if err != nil {
			return false, nil, fault.Inputf("%s: %v", path, err)
		}
		if err := report.RenderOverTime(w, format, region, ivs, m.Series.IntervalNS); err != nil {
			return false, nil, fault.Usagef("%v", err)
		}
		return false, nil, nil
	}
	if report.ShowsOMPRegions(format) {
		// Once, after reading: the report prints the locations as they are.
		symbolize.OMPRegions(m)
	}
	reps := make([]*pop.Report, 0, len(models))
	for _, model := range models {
		rep, err := pop.ComputeWith(m, model, pop.Options{SerTransfer: opts.serTransfer})
		if err != nil {
			return false, nil, fault.Inputf("%s: %v", path, err)
		}
		rep.Source = path
		reps = append(reps, rep)
	}
	refused = refusedShown(reps[0], region)
	if err := report.RenderAll(w, format, reps, report.Options{Region: region}); err != nil {
		if refused {
			return true, reps[0].Run, fault.Inputf("%s: %v", path, err)
		}
		return false, reps[0].Run, fault.Usagef("%v", err)
	}
	// The report said why it shows no metrics; scripts see an unusable
	// input, as popmon scaling and popmon check do.
	return refused, reps[0].Run, nil
}

// refusedShown reports whether rep refuses the metrics of the whole
// measurement, or of region ("" for every region) or a region it shows.
// Every model of a measurement refuses the same regions.
func refusedShown(rep *pop.Report, region string) bool {
	if rep.Refused != "" {
		return true
	}
	for i := range rep.Regions {
		g := &rep.Regions[i]
		if g.Refused != "" && (region == "" || g.Name == region) {
			return true
		}
	}
	return false
}
