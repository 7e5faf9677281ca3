package pages

import (
	"fmt"
	"strconv"

	"github.com/popmon/popmon/internal/patterns"
	"github.com/popmon/popmon/internal/units"
)

// WaitStateTables renders a wait-state analysis (popmon report
// --patterns' numbers) as two tables: the patterns with time, share of
// MPI time, instances, the rank with most and the top call site; and the
// critical path's profile with its imbalance. title heads the first.
func WaitStateTables(title string, res *patterns.Result) []Table {
	s := units.SecondsCell
	pct := func(a, b int64) string {
		if b <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f", 100*float64(a)/float64(b))
	}
	ws := Table{
		Title: title,
		Head:  []string{"Pattern", "Time (s, Σ ranks)", "% of MPI time", "Instances", "Most on rank", "Top call site"},
		Note: fmt.Sprintf("%d ranks, %s s inside MPI over all ranks. Definitions (Scalasca's): docs/patterns.md; "+
			"popmon report --patterns gives every rank and call site.", res.Ranks, s(res.MPINS)),
	}
	for _, p := range res.Patterns {
		if p.NS <= 0 {
			continue
		}
		top, topNS := "", int64(0)
		for rk, ns := range p.RankNS {
			if ns > topNS {
				top, topNS = strconv.Itoa(rk)+" ("+s(ns)+" s)", ns
			}
		}
		site := ""
		if len(p.Sites) > 0 {
			site = p.Sites[0].Name + " (" + s(p.Sites[0].NS) + " s)"
		}
		name := p.Name
		if p.Parent != "" {
			name = "↳ " + name
		}
		ws.Rows = append(ws.Rows, []string{name, s(p.NS), pct(p.NS, res.MPINS), strconv.FormatInt(p.Instances, 10), top, site})
	}
	if len(ws.Rows) == 0 {
		ws.Note = "No wait states in this trace. " + ws.Note
	}
	cp := &res.CriticalPath
	path := Table{
		Title: "Critical path (traced run)",
		Head:  []string{"Call path", "On the path (s)", "% of the path", "Mean per rank (s)", "Imbalance (s)"},
		Note: fmt.Sprintf("The path is %s s long, from the end of MPI_Init to the end of the last rank; "+
			"its imbalance (time a call path spends on the path beyond its mean per rank) is %s s, %s %% of the path.",
			s(cp.NS), s(cp.ImbalanceNS), pct(cp.ImbalanceNS, cp.NS)),
	}
	for i, e := range cp.Profile {
		if i == 10 {
			path.Note += fmt.Sprintf(" %d more call paths: popmon report --patterns.", len(cp.Profile)-i)
			break
		}
		path.Rows = append(path.Rows, []string{e.Name, s(e.NS), pct(e.NS, cp.NS), s(e.MeanNS), s(e.ImbalanceNS)})
	}
	return []Table{ws, path}
}
