package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/model"
	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/internal/units"
)

// ModelFormats returns the formats RenderModel accepts, the default first.
func ModelFormats() []string { return []string{FormatText, FormatCSV, FormatJSON} }

// ModelInfo is what the renderers print about the study besides the fit.
type ModelInfo struct {
	// Region is the region modelled; ModeReason how the scaling mode was
	// decided.
	Region, ModeReason string
}

// RenderModel writes the result of model.Fit: text (what is predicted,
// how good each fit is, what was assumed), csv (long format: section, id,
// cpus, metric, value) or json (docs/model.md). Names from files are made
// safe for each format.
func RenderModel(w io.Writer, format string, r *model.Result, info ModelInfo) error {
	if r == nil {
		return fmt.Errorf("render %s model: no result", format)
	}
	var err error
	switch format {
	case FormatText:
		err = modelText(w, r, info)
	case FormatCSV:
		err = modelCSV(w, r, info)
	case FormatJSON:
		err = modelJSON(w, r, info)
	default:
		return fmt.Errorf("unknown model format %q: use one of %s", format, strings.Join(ModelFormats(), ", "))
	}
	if err != nil {
		return fmt.Errorf("render %s model: %w", format, err)
	}
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.1f %%", v*100)
}

func r2(n model.Num) string {
	if !n.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.4f", float64(n))
}

func modelText(out io.Writer, r *model.Result, info ModelInfo) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "popmon model: region %s, %d runs, %s scaling (%s)\n", safetext.Text(info.Region), len(r.Points), r.Mode, safetext.Text(info.ModeReason))
	fmt.Fprintf(w, "Fitted on %s CPUs", joinInts(r.Fitted))
	if len(r.Holdout) > 0 {
		fmt.Fprintf(w, "; held out %s CPUs (predicted, then compared)", joinInts(r.Holdout))
	}
	fmt.Fprintf(w, ". Reference: %d CPUs, %s.\n", r.Reference, units.SecondsOrMilliseconds(r.ReferenceTimeS))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}

	fmt.Fprintf(w, "\nRuntime models (R² of the runtime on the fitted runs; LOO: leave-one-out relative error)\n")
	for _, c := range r.Curves {
		if !c.OK() {
			fmt.Fprintf(w, "  %-16s not fitted: %s\n", c.ID, c.Err)
			continue
		}
		fmt.Fprintf(w, "  %-16s R² %s  LOO %s  %s%s\n", c.ID, r2(c.R2), loo(c.LOORelErr), c.Name, curveParams(c))
	}

	if len(r.Predictions) > 0 {
		fmt.Fprintf(w, "\nPredicted runtime (± the model's LOO error; (x %%) error against the measured run)\n")
		fmt.Fprintf(w, "  %-16s", "CPUs")
		for _, p := range r.Predictions {
			fmt.Fprintf(w, " %28d", p.CPUs)
		}
		fmt.Fprintf(w, "\n  %-16s", "measured")
		for _, p := range r.Predictions {
			fmt.Fprintf(w, " %28s", units.SecondsOrMilliseconds(float64(p.MeasuredS)))
		}
		fmt.Fprintln(w)
		for i, c := range r.Curves {
			if !c.OK() {
				continue
			}
			fmt.Fprintf(w, "  %-16s", c.ID)
			for _, p := range r.Predictions {
				m := p.Models[okIndex(r.Curves, i)]
				cell := units.SecondsOrMilliseconds(float64(m.TimeS))
				if m.ErrS.Valid() {
					cell += fmt.Sprintf(" ±%.3f", float64(m.ErrS))
				}
				if m.RelErr.Valid() {
					cell += " (" + pct(float64(m.RelErr)) + ")"
				}
				fmt.Fprintf(w, " %28s", cell)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  %-16s", "spread")
		for _, p := range r.Predictions {
			fmt.Fprintf(w, " %28s", units.SecondsOrMilliseconds(float64(p.MinS))+" – "+strings.TrimSuffix(units.SecondsOrMilliseconds(float64(p.MaxS)), " s"))
		}
		fmt.Fprintln(w)
	}

	if len(r.Factors) > 0 {
		fmt.Fprintf(w, "\nFactor projections (percent; x0 and f fitted, R² on the fitted runs)\n")
		xs := append(append([]int(nil), r.Holdout...), predictOnly(r)...)
		for _, f := range r.Factors {
			name := strings.Repeat("  ", f.Depth) + safetext.Text(f.Name)
			fmt.Fprintf(w, "  %-7s %-30s x0 %7.2f  f %.4f  R² %s", f.Projection, name, f.X0, f.F, r2(f.R2))
			for _, x := range xs {
				fmt.Fprintf(w, "  %d: %.2f", x, f.At(float64(x))*100)
				if m, ok := f.Measured[x]; ok {
					fmt.Fprintf(w, " (measured %.2f)", m*100)
				}
			}
			fmt.Fprintln(w)
		}
	}

	if c := r.Components; c != nil {
		fmt.Fprintf(w, "\nComponent model (RAT)\n")
		for _, p := range c.Parts {
			if p.Constant {
				fmt.Fprintf(w, "  %-54s held constant at %s", p.Name, compValue(p.ID, p.Fit.A))
			} else {
				fmt.Fprintf(w, "  %-54s law %-6s R² %s  LOO %s", p.Name, p.Fit.Law, r2(p.Fit.R2), loo(p.Fit.LOORelErr))
			}
			for _, h := range p.Holdout {
				fmt.Fprintf(w, "  %d: %s, measured %s (%s)", h.CPUs, compValue(p.ID, h.Predicted), compValue(p.ID, h.Measured), pct(h.RelErr))
			}
			fmt.Fprintln(w)
		}
		for _, f := range c.Comm.Fits {
			fmt.Fprintf(w, "  communication %-28s %s  R² %s  (%d samples; %s)\n", safetext.Text(f.ID), commFormula(f), r2(f.R2), f.N, safetext.Text(f.Formula))
		}
		if c.Comm.Missing != "" {
			fmt.Fprintf(w, "  communication: not fitted: %s\n", c.Comm.Missing)
		}
	}

	fmt.Fprintf(w, "\nKernels (key: at least %.0f %% of the runtime at %d CPUs; non-scalable: time per process ∝ x^α with α > −0.1)\n", r.Threshold*100, r.Points[len(r.Points)-1].CPUs)
	listed := 0
	for _, k := range r.Kernels {
		if !k.Listed() {
			continue
		}
		listed++
		var verdict []string
		if k.Key {
			verdict = append(verdict, "key")
		}
		if k.NonScalable {
			verdict = append(verdict, "NON-SCALABLE")
		}
		trend := make([]string, len(k.Times))
		for i, t := range k.Times {
			trend[i] = fmt.Sprintf("%d: %s", t.CPUs, units.SecondsOrMilliseconds(t.PerProcessS))
		}
		fmt.Fprintf(w, "  %-6s %-24s %-16s share %5.1f %%  α %s  per process: %s\n", k.Kind, safetext.Text(k.Name),
			strings.Join(verdict, ", "), k.Share*100, alpha(k.Exponent), strings.Join(trend, ", "))
	}
	if listed == 0 {
		fmt.Fprintf(w, "  none\n")
	}

	fmt.Fprintf(w, "\nAssumptions\n")
	seen := map[string]bool{}
	for _, c := range r.Curves {
		for _, a := range c.Assumptions {
			if !seen[a] {
				seen[a] = true
				fmt.Fprintf(w, "  - %s: %s\n", c.ID, a)
			}
		}
	}
	fmt.Fprintf(w, "  - uncertainty: ± is the model's leave-one-out relative error on the fitted runs times the prediction, a scale of its error, not a confidence interval\n")
	return w.Flush()
}

// okIndex returns the index among the fitted curves of curve i.
func okIndex(cs []*model.Curve, i int) int {
	n := 0
	for j := 0; j < i; j++ {
		if cs[j].OK() {
			n++
		}
	}
	return n
}

// predictOnly returns the predicted CPU counts that are not held out.
func predictOnly(r *model.Result) []int {
	held := map[int]bool{}
	for _, h := range r.Holdout {
		held[h] = true
	}
	var out []int
	for _, p := range r.Predictions {
		if !held[p.CPUs] {
			out = append(out, p.CPUs)
		}
	}
	return out
}

func loo(n model.Num) string {
	if !n.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", float64(n)*100)
}

func alpha(n model.Num) string {
	if !n.Valid() {
		return "-"
	}
	return fmt.Sprintf("%+.2f", float64(n))
}

func compValue(id string, v float64) string {
	switch id {
	case model.CompInstructions:
		return fmt.Sprintf("%.4g", v)
	case model.CompFrequency:
		return fmt.Sprintf("%.3f GHz", v/1e9)
	case model.CompIPC, model.CompLoadBalance:
		return fmt.Sprintf("%.3f", v)
	}
	return units.SecondsOrMilliseconds(v)
}

// commFormula writes a communication fit with its coefficients in µs.
func commFormula(f model.CommFit) string {
	if strings.HasPrefix(f.ID, "p2p") {
		return fmt.Sprintf("T = %.4g µs·S^%.2f + %.4g µs", f.A*1e6, f.B, f.C*1e6)
	}
	return fmt.Sprintf("T = %.4g µs·log2 x + %.4g µs/B·S + %.4g µs", f.A*1e6, f.B*1e6, f.C*1e6)
}

func curveParams(c *model.Curve) string {
	if s, ok := c.Params["s"]; ok {
		return fmt.Sprintf(" (s = %.4g, T1 = %.3f s)", s, c.Params["t1_s"])
	}
	return ""
}

// modelCSV writes one row per value: section, id, cpus (empty when not
// per CPU count), metric, value.
func modelCSV(out io.Writer, r *model.Result, info ModelInfo) error {
	c := csv.NewWriter(out)
	row := func(section, id string, cpus int, metric string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		x := ""
		if cpus > 0 {
			x = strconv.Itoa(cpus)
		}
		_ = c.Write([]string{section, safetext.CSVCell(id), x, metric, num(v)})
	}
	_ = c.Write([]string{"section", "id", "cpus", "metric", "value"})
	for _, p := range r.Points {
		row("run", p.Source, p.CPUs, "elapsed_s", p.ElapsedS)
	}
	for _, cu := range r.Curves {
		if !cu.OK() {
			continue
		}
		row("curve", cu.ID, 0, "r2", float64(cu.R2))
		row("curve", cu.ID, 0, "loo_rel_err", float64(cu.LOORelErr))
		for _, k := range sortedKeys(cu.Params) {
			row("curve", cu.ID, 0, k, cu.Params[k])
		}
	}
	for _, p := range r.Predictions {
		row("prediction", "measured", p.CPUs, "time_s", float64(p.MeasuredS))
		for _, m := range p.Models {
			row("prediction", m.Curve, p.CPUs, "time_s", float64(m.TimeS))
			row("prediction", m.Curve, p.CPUs, "uncertainty_s", float64(m.ErrS))
			row("prediction", m.Curve, p.CPUs, "speedup", float64(m.Speedup))
			row("prediction", m.Curve, p.CPUs, "rel_err", float64(m.RelErr))
		}
	}
	for _, f := range r.Factors {
		id := string(f.Projection) + ":" + f.Factor
		row("factor", id, 0, "x0", f.X0)
		row("factor", id, 0, "f", f.F)
		row("factor", id, 0, "r2", float64(f.R2))
		for _, p := range r.Predictions {
			row("factor", id, p.CPUs, "predicted", f.At(float64(p.CPUs)))
		}
	}
	if co := r.Components; co != nil {
		for _, p := range co.Parts {
			row("component", p.ID+":"+string(p.Fit.Law), 0, "a", p.Fit.A)
			row("component", p.ID+":"+string(p.Fit.Law), 0, "b", p.Fit.B)
			for _, h := range p.Holdout {
				row("component", p.ID, h.CPUs, "predicted", h.Predicted)
				row("component", p.ID, h.CPUs, "measured", h.Measured)
			}
		}
		for _, f := range co.Comm.Fits {
			row("communication", f.ID, 0, "a", f.A)
			row("communication", f.ID, 0, "b", f.B)
			row("communication", f.ID, 0, "c", f.C)
			row("communication", f.ID, 0, "r2", float64(f.R2))
		}
	}
	for _, k := range r.Kernels {
		id := k.Kind + ":" + k.Name
		for _, t := range k.Times {
			row("kernel", id, t.CPUs, "per_process_s", t.PerProcessS)
		}
		row("kernel", id, 0, "exponent", float64(k.Exponent))
		row("kernel", id, 0, "share", k.Share)
		row("kernel", id, 0, "non_scalable", b2f(k.NonScalable))
		row("kernel", id, 0, "key", b2f(k.Key))
	}
	c.Flush()
	_ = info
	return c.Error()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func modelJSON(w io.Writer, r *model.Result, info ModelInfo) error {
	type run struct {
		Label    string  `json:"label"`
		Source   string  `json:"source"`
		CPUs     int     `json:"cpus"`
		ElapsedS float64 `json:"elapsed_s"`
		Held     bool    `json:"held_out"`
	}
	held := map[int]bool{}
	for _, h := range r.Holdout {
		held[h] = true
	}
	rs := make([]run, len(r.Points))
	for i, p := range r.Points {
		rs[i] = run{Label: p.Label, Source: p.Source, CPUs: p.CPUs, ElapsedS: p.ElapsedS, Held: held[p.CPUs]}
	}
	return writeIndented(w, struct {
		Format     string `json:"format"`
		Region     string `json:"region"`
		ModeReason string `json:"mode_reason"`
		Runs       []run  `json:"runs"`
		*model.Result
	}{"popmon-model", info.Region, info.ModeReason, rs, r})
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
