package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/pop"
)

// Scaling format names (FormatText, FormatJSON and FormatCSV also apply).
const (
	FormatMarkdown = "markdown"
)

// ScalingFormats returns the formats RenderScaling accepts, the default
// first.
func ScalingFormats() []string {
	return []string{FormatText, FormatCSV, FormatJSON, FormatMarkdown}
}

// ScalingOptions adjust the scaling renderers.
type ScalingOptions struct {
	// Color colours efficiencies by goodness in the text format (ANSI
	// escapes; the caller sets it only for a terminal).
	Color bool
}

// RenderScaling writes s in the named format: text (a table per region,
// metrics down, runs across, 2 decimals), csv (long format), json
// (POP-METRICS.md §9) or markdown. Names from the run files (regions,
// labels, file names) are made safe for each format: escaped control
// characters in text, formula-safe text cells in csv, escaped Markdown and
// HTML in markdown (package safetext).
func RenderScaling(w io.Writer, format string, s *pop.Scaling, opts ScalingOptions) error {
	if s == nil {
		return fmt.Errorf("render %s scaling: no scaling", format)
	}
	var err error
	switch format {
	case FormatText:
		err = scalingText(w, s, opts)
	case FormatCSV:
		err = scalingCSV(w, s)
	case FormatJSON:
		err = scalingJSON(w, s)
	case FormatMarkdown:
		err = scalingMarkdown(w, s)
	default:
		return fmt.Errorf("unknown scaling format %q: use one of %s", format, strings.Join(ScalingFormats(), ", "))
	}
	if err != nil {
		return fmt.Errorf("render %s scaling: %w", format, err)
	}
	return nil
}

// scalingCell formats one value for text and markdown: 2 decimals, "-"
// when absent, "refused" for every row of a run whose region is refused.
func scalingCell(g *pop.ScalingRegion, r *pop.ScalingRow, i int) string {
	if g.Runs[i].Refused != "" {
		return cellRefused
	}
	v, ok := r.Value(i)
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// ANSI colours of efficiencies: POP's usual bands.
const (
	ansiGood  = "\x1b[32m" // ≥ 0.8
	ansiFair  = "\x1b[33m" // ≥ 0.6
	ansiBad   = "\x1b[31m" // < 0.6
	ansiReset = "\x1b[0m"
)

// ColourReset ends a Colour.
const ColourReset = ansiReset

// Colour returns the ANSI colour of efficiency v in POP's usual bands:
// green from 0.8, yellow from 0.6, red below (popmon top, scaling tables).
func Colour(v float64) string {
	switch {
	case v >= 0.8:
		return ansiGood
	case v >= 0.6:
		return ansiFair
	}
	return ansiBad
}

// cellRefused is the cell of a refused run in the text and markdown
// tables; the sentence why follows the table.
const cellRefused = "refused"

// hasReference reports whether the region has a reference run: one whose
// metrics are not refused (pop.Scale picks such a run when there is one).
func hasReference(g *pop.ScalingRegion) bool {
	return len(g.Runs) > 0 && g.Runs[g.Reference].Refused == ""
}

func scalingHeader(s *pop.Scaling) string {
	return safetext.Text(fmt.Sprintf("POP scaling: model %s, %s scaling (%s)", s.Model, s.Mode, s.ModeReason))
}

func scalingText(w io.Writer, s *pop.Scaling, opts ScalingOptions) error {
	b := bufio.NewWriter(w)
	fmt.Fprintln(b, scalingHeader(s))
	for k := range s.Regions {
		g := &s.Regions[k]
		fmt.Fprintf(b, "\nRegion %s", safetext.Text(g.Name))
		if len(g.Runs) > 0 && !hasReference(g) {
			b.WriteString(" (no reference: no run has POP metrics here)")
		} else if len(g.Runs) > 0 {
			ref := g.Runs[g.Reference]
			fmt.Fprintf(b, " (reference: %s, %s)", safetext.Text(ref.Label), safetext.Text(ref.Source))
		}
		fmt.Fprintln(b)
		names := make([]string, len(g.Rows))
		nameW := len("Metric")
		for j, r := range g.Rows {
			names[j] = safetext.Text(r.Name)
			nameW = max(nameW, 2*r.Depth+len([]rune(names[j])))
		}
		labels := make([]string, len(g.Runs))
		colW := make([]int, len(g.Runs))
		for i, x := range g.Runs {
			labels[i] = safetext.Text(x.Label)
			colW[i] = max(len([]rune(labels[i])), len(strconv.Itoa(x.CPUs))+5, 6)
			if x.Refused != "" {
				colW[i] = max(colW[i], len(cellRefused))
			}
		}
		fmt.Fprintf(b, "%-*s", nameW, "Metric")
		for i, l := range labels {
			fmt.Fprintf(b, "  %s", padLeft(l, colW[i]))
		}
		fmt.Fprintf(b, "\n%-*s", nameW, "")
		for i, x := range g.Runs {
			fmt.Fprintf(b, "  %*s", colW[i], fmt.Sprintf("%d CPUs", x.CPUs))
		}
		fmt.Fprintln(b)
		for j := range g.Rows {
			r := &g.Rows[j]
			label := strings.Repeat("  ", r.Depth) + names[j]
			fmt.Fprintf(b, "%s%s", label, strings.Repeat(" ", nameW-len([]rune(label))))
			for i := range g.Runs {
				cell := scalingCell(g, r, i)
				v, ok := r.Value(i)
				if opts.Color && ok && r.Kind == pop.KindEfficiency {
					fmt.Fprintf(b, "  %s%s%s%s", strings.Repeat(" ", colW[i]-len(cell)), Colour(v), cell, ansiReset)
				} else {
					fmt.Fprintf(b, "  %*s", colW[i], cell)
				}
			}
			fmt.Fprintln(b)
		}
		for _, x := range g.Runs {
			if x.Refused != "" {
				fmt.Fprintf(b, "%s (%s): No POP metrics: %s.\n", safetext.Text(x.Label), safetext.Text(x.Source), safetext.Text(x.Refused))
			}
		}
	}
	return b.Flush()
}

// padLeft right-aligns s in a field of width runes (fmt's %*s counts
// bytes, which misaligns a label with non-ASCII characters).
func padLeft(s string, width int) string {
	return strings.Repeat(" ", max(0, width-len([]rune(s)))) + s
}

// scalingCSV writes the long-format table: region, label and source are
// text cells (safetext.CSVCell), cpus and value numbers.
func scalingCSV(w io.Writer, s *pop.Scaling) error {
	c := csv.NewWriter(w)
	if err := c.Write([]string{"region", "label", "cpus", "source", "metric", "value"}); err != nil {
		return err
	}
	for k := range s.Regions {
		g := &s.Regions[k]
		for i, x := range g.Runs {
			lead := []string{safetext.CSVCell(g.Name), safetext.CSVCell(x.Label), strconv.Itoa(x.CPUs), safetext.CSVCell(x.Source)}
			if x.Refused != "" {
				// No value rows: one row saying why, its value a sentence.
				if err := c.Write(append(lead, "refused", safetext.CSVCell(x.Refused))); err != nil {
					return err
				}
				continue
			}
			for j := range g.Rows {
				v, ok := g.Rows[j].Value(i)
				if !ok {
					continue
				}
				rec := append(append([]string(nil), lead...), safetext.CSVCell(g.Rows[j].ID), num(v))
				if err := c.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	c.Flush()
	return c.Error()
}

func scalingJSON(w io.Writer, s *pop.Scaling) error {
	regs := make([]object, 0, len(s.Regions))
	for k := range s.Regions {
		g := &s.Regions[k]
		runs := make([]object, 0, len(g.Runs))
		for i, x := range g.Runs {
			metrics := object{}
			for j := range g.Rows {
				if v, ok := g.Rows[j].Value(i); ok {
					metrics = append(metrics, member{g.Rows[j].ID, float(v)})
				}
			}
			o := object{
				{"label", x.Label}, {"cpus", x.CPUs}, {"source", x.Source},
				{"reference", i == g.Reference && x.Refused == ""},
			}
			if x.Refused != "" {
				o = append(o, member{"refused", x.Refused}) // "metrics" is then empty
			}
			runs = append(runs, append(o, member{"metrics", metrics}))
		}
		regs = append(regs, object{{"name", g.Name}, {"runs", runs}})
	}
	return writeIndented(w, object{
		{"model", string(s.Model)}, {"mode", string(s.Mode)}, {"mode_reason", s.ModeReason}, {"regions", regs},
	})
}

// mdEscape makes s safe as inline Markdown (safetext.Markdown).
func mdEscape(s string) string {
	return safetext.Markdown(s)
}

// mdCode shows s as a Markdown code span when that is safe (no control
// character, no backtick or pipe, which would end the span or the table
// cell, and no HTML character, for renderers that do not keep code spans
// literal), else as escaped text.
func mdCode(s string) string {
	if safetext.Text(s) == s && !strings.ContainsAny(s, "`|<>&") {
		return "`" + s + "`"
	}
	return mdEscape(s)
}

// scalingMarkdown writes the scaling tables as Markdown: every name is
// escaped (mdEscape, mdCode), so that a name can inject neither HTML nor
// Markdown nor break a table.
func scalingMarkdown(w io.Writer, s *pop.Scaling) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "## POP scaling\n\nModel %s, **%s scaling** (%s).\n", mdCode(string(s.Model)), mdEscape(string(s.Mode)), mdEscape(s.ModeReason))
	for k := range s.Regions {
		g := &s.Regions[k]
		fmt.Fprintf(b, "\n### Region %s\n\n", mdEscape(g.Name))
		if len(g.Runs) > 0 && !hasReference(g) {
			b.WriteString("No reference: no run has POP metrics here.\n\n")
		} else if len(g.Runs) > 0 {
			ref := g.Runs[g.Reference]
			fmt.Fprintf(b, "Reference: %s (%s).\n\n", mdEscape(ref.Label), mdCode(ref.Source))
		}
		b.WriteString("| Metric |")
		for _, x := range g.Runs {
			fmt.Fprintf(b, " %s (%d CPUs) |", mdEscape(x.Label), x.CPUs)
		}
		b.WriteString("\n|---|")
		for range g.Runs {
			b.WriteString("---:|")
		}
		b.WriteString("\n")
		for j := range g.Rows {
			r := &g.Rows[j]
			fmt.Fprintf(b, "| %s%s |", strings.Repeat("&nbsp;&nbsp;", r.Depth), mdEscape(r.Name))
			for i := range g.Runs {
				fmt.Fprintf(b, " %s |", scalingCell(g, r, i))
			}
			b.WriteString("\n")
		}
		first := true
		for _, x := range g.Runs {
			if x.Refused == "" {
				continue
			}
			if first {
				b.WriteString("\n")
				first = false
			}
			fmt.Fprintf(b, "- %s (%s): no POP metrics: %s.\n", mdEscape(x.Label), mdCode(x.Source), mdEscape(x.Refused))
		}
	}
	return b.Flush()
}
