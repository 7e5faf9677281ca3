package patterns

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/popmon/popmon/internal/units"
)

// FormatID is the "format" of the JSON document WriteJSON writes.
const FormatID = "popmon-patterns"

// FormatVersion is its version; fields are only added within a version.
const FormatVersion = 1

// document is the JSON output: the result with what it describes.
type document struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Source  string `json:"source"`
	*Result
}

// WriteJSON writes res as the JSON document of docs/report-formats.md
// ("format": "popmon-patterns"), times in ns.
func WriteJSON(w io.Writer, source string, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(document{FormatID, FormatVersion, source, res}); err != nil {
		return fmt.Errorf("writing the patterns as JSON: %w", err)
	}
	return nil
}

// topRanks is how many ranks and call sites the text shows per pattern.
const topRanks = 3

// WriteText writes res as the text report: the wait-state table (time,
// share of MPI time, instances, top ranks, top call sites) and the
// critical path.
func WriteText(w io.Writer, source string, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Wait states of %s (%d ranks, %s s in MPI over all ranks)\n\n", source, res.Ranks, units.SecondsCell(res.MPINS))
	any := false
	fmt.Fprintf(&b, "  %-44s %10s %7s %9s  %-30s %s\n", "pattern", "time (s)", "% MPI", "instances", "top ranks (s)", "top call sites (s)")
	for _, p := range res.Patterns {
		if p.NS == 0 {
			continue
		}
		any = true
		name := p.Name
		if p.Parent != "" {
			name = "  " + strings.TrimPrefix(name, "Late Sender, ")
		}
		fmt.Fprintf(&b, "  %-44s %10s %6.1f%% %9d  %-30s %s\n", name, units.SecondsCell(p.NS), pct(p.NS, res.MPINS), p.Instances, topOf(p.RankNS), sitesOf(p.Sites))
	}
	if !any {
		b.WriteString("  (no wait states)\n")
	}
	cp := &res.CriticalPath
	fmt.Fprintf(&b, "\nCritical path: %s s, from the end of MPI_Init (%s s) to the end of the last rank (%s s)\n", units.SecondsCell(cp.NS), units.SecondsCell(cp.Start), units.SecondsCell(cp.End))
	if cp.NS > 0 {
		fmt.Fprintf(&b, "  on ranks: %s\n", topN(cp.RankNS, 8))
		fmt.Fprintf(&b, "  %-32s %12s %8s %18s %14s\n", "call path", "on path (s)", "% path", "mean per rank (s)", "imbalance (s)")
		for i, e := range cp.Profile {
			if i == 10 {
				fmt.Fprintf(&b, "  … %d more call paths (--format json has all)\n", len(cp.Profile)-i)
				break
			}
			fmt.Fprintf(&b, "  %-32s %12s %7.1f%% %18s %14s\n", e.Name, units.SecondsCell(e.NS), pct(e.NS, cp.NS), units.SecondsCell(e.MeanNS), units.SecondsCell(e.ImbalanceNS))
		}
		fmt.Fprintf(&b, "  critical-path imbalance: %s s (%.1f%% of the path)\n", units.SecondsCell(cp.ImbalanceNS), pct(cp.ImbalanceNS, cp.NS))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	b.WriteString("\nDefinitions: docs/patterns.md\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the patterns: %w", err)
	}
	return nil
}

func pct(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func topOf(rankNS []int64) string { return topN(rankNS, topRanks) }

// topN lists the n ranks with most time ("1: 0.500, 3: 0.200").
func topN(rankNS []int64, n int) string {
	idx := make([]int, 0, len(rankNS))
	for r, v := range rankNS {
		if v > 0 {
			idx = append(idx, r)
		}
	}
	sort.SliceStable(idx, func(i, j int) bool { return rankNS[idx[i]] > rankNS[idx[j]] })
	var parts []string
	for i, r := range idx {
		if i == n {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%d: %s", r, units.SecondsCell(rankNS[r])))
	}
	return strings.Join(parts, ", ")
}

func sitesOf(s []Site) string {
	var parts []string
	for i, x := range s {
		if i == topRanks {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, x.Name+" "+units.SecondsCell(x.NS))
	}
	return strings.Join(parts, ", ")
}
