package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"github.com/popmon/popmon/pop"
)

// RenderAll writes the reports of several models of the same measurement
// (pop.ComputeAll, `popmon report --model all`) in the named format:
//
//   - text: the run header once, then each model's title and region trees
//     one after another, then the MPI calls and warnings once;
//   - json: {"format": "popmon-report", "version": 1, "source": …,
//     "models": [{"model": …, "regions": […]}, …]} (POP-METRICS.md §9), each
//     model object with the keys and the "regions" of [JSON];
//   - csv: the header "model,region,metric,value" and the rows of [CSV] for
//     each model, led by the model's name.
//
// talp-json has only model talp and fails for several models. With one
// report RenderAll is [Render]. The reports' Source is taken from the
// first.
func RenderAll(w io.Writer, format string, reps []*pop.Report, opts Options) error {
	if len(reps) == 0 {
		return fmt.Errorf("render %s report: no report", format)
	}
	if len(reps) == 1 {
		return Render(w, format, reps[0], opts)
	}
	for _, rep := range reps {
		if rep == nil {
			return fmt.Errorf("render %s report: no report", format)
		}
	}
	var err error
	switch format {
	case FormatOMPRegionsCSV:
		if reps[0].Run == nil {
			return fmt.Errorf("render %s report: no measurement", format)
		}
		err = OMPRegionsCSV(w, reps[0].Run)
	case FormatText:
		err = textReports(w, reps, opts)
	case FormatJSON:
		err = jsonModels(w, reps, opts)
	case FormatCSV:
		err = csvModels(w, reps, opts)
	case FormatTALPJSON, FormatTALPCSV, FormatTALPText:
		for _, rep := range reps {
			if rep.Model != pop.ModelTALP {
				err = errTALPModel(rep.Model)
				break
			}
		}
		if err == nil {
			err = fmt.Errorf("talp-json holds one report, not %d", len(reps))
		}
	default:
		return fmt.Errorf("unknown report format %q: use one of %s", format, strings.Join(Formats(), ", "))
	}
	if err != nil {
		return fmt.Errorf("render %s report: %w", format, err)
	}
	return nil
}

// errTALPModel says that talp-json cannot hold model.
func errTALPModel(model pop.Model) error {
	return fmt.Errorf("talp-json has DLB/TALP's metrics only (model %s), not model %s: use --format json for other models", pop.ModelTALP, model)
}

// jsonModels writes the JSON report of several models.
func jsonModels(w io.Writer, reps []*pop.Report, opts Options) error {
	m := reps[0].Run
	out := object{{"format", JSONFormat}, {"version", JSONVersion}}
	if reps[0].Source != "" {
		out = append(out, member{"source", reps[0].Source})
	}
	out = appendOMPNotMeasuredJSON(out, m)
	models := make([]object, 0, len(reps))
	for _, rep := range reps {
		regs, err := regions(rep, opts)
		if err != nil {
			return err
		}
		o := object{{"model", string(rep.Model)}}
		if rep.Refused != "" {
			o = append(o, member{"refused", rep.Refused})
		}
		o = appendSerTransferJSON(o, rep)
		models = append(models, append(o, member{"regions", jsonRegions(ompReferenced(regs, m, ompReasonRefJSON))}))
	}
	out = append(out, member{"models", models})
	out = appendOMPRegionsJSON(out, m)
	out = appendAccountViolationsJSON(out, m)
	return writeIndented(w, out)
}

// csvModels writes the CSV report of several models, with a leading
// "model" column.
func csvModels(w io.Writer, reps []*pop.Report, opts Options) error {
	c := csv.NewWriter(w)
	if err := c.Write([]string{"model", "region", "metric", "value"}); err != nil {
		return err
	}
	for _, rep := range reps {
		regs, err := regions(rep, opts)
		if err != nil {
			return err
		}
		if err := csvRows(c, []string{string(rep.Model)}, regs); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}
