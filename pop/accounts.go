package pop

import (
	"fmt"
	"math"
	"strings"

	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
)

// maxRefusedRanks is how many further ranks a region's refusal names
// after the first whose accounts do not add up.
const maxRefusedRanks = 5

// accountRefusals returns, by region name, why the metrics of a region of
// m cannot be trusted because a process's accounts break the invariant of
// POP-METRICS.md §1 by more than its tolerance (vs, the violations m's
// reader derived: measure.Measurement.Violations): one
// sentence naming the first such process, its accounts, its CPUs × elapsed
// time, how far off they are and the tolerance, then how many others are
// off. nil when every region adds up.
//
// A measurement converted from DLB/TALP JSON is not refused here: its
// per-process accounts are synthesized, and its totals exceed T × C when
// DLB itself counts CPU time twice (DLB 3.6.2–3.7.0, and DLB after 3.7.0
// with more threads than CPUs); popmon then reproduces the efficiencies
// DLB wrote, and the import's notes and the report's warnings say so
// (docs/import.md).
func accountRefusals(m *measure.Measurement, vs []measure.AccountViolation) map[string]string {
	if m.Source != nil && m.Source.Kind == measure.SourceTALP {
		return nil
	}
	byRegion := map[string][]measure.AccountViolation{}
	var order []string
	for _, v := range vs {
		if v.Rank < 0 {
			continue // totals: TALP files only
		}
		if _, ok := byRegion[v.Region]; !ok {
			order = append(order, v.Region)
		}
		byRegion[v.Region] = append(byRegion[v.Region], v)
	}
	if len(order) == 0 {
		return nil
	}
	out := make(map[string]string, len(order))
	for _, name := range order {
		out[name] = accountsRefusal(byRegion[name])
	}
	return out
}

// accountsRefusal is the sentence why a region whose processes' accounts
// break the invariant (vs, one region's, in rank order; at least one) has
// no POP metrics: "the accounts of rank 2 do not add up: 8.00 s accounted
// for 4 CPUs × 1.00 s elapsed (off by 100 %, tolerance 1 %)", then, when
// other processes are off too, "; nor do those of 2 more processes (ranks
// 3, 5)".
func accountsRefusal(vs []measure.AccountViolation) string {
	if len(vs) == 0 {
		return ""
	}
	v := vs[0]
	off := "no elapsed time"
	if d := math.Abs(v.Deviation()); !math.IsInf(d, 0) {
		off = "off by " + units.Percent(d)
	}
	s := fmt.Sprintf("the accounts of rank %d do not add up: %s accounted for %s × %s elapsed (%s, tolerance %s)",
		v.Rank, units.DurationInSeconds(v.AccountsNS), plural(v.CPUs, "CPU"), units.DurationInSeconds(v.ElapsedNS), off, units.Percent(measure.InvariantTolerance))
	if rest := vs[1:]; len(rest) > 0 {
		ranks := make([]string, 0, maxRefusedRanks+1)
		for i, r := range rest {
			if i == maxRefusedRanks {
				ranks = append(ranks, "…")
				break
			}
			ranks = append(ranks, fmt.Sprint(r.Rank))
		}
		what := "ranks"
		if len(rest) == 1 {
			what = "rank"
		}
		s += fmt.Sprintf("; nor do those of %s (%s %s)", plural(len(rest), "more process"), what, strings.Join(ranks, ", "))
	}
	return s
}

// plural returns "1 CPU", "4 CPUs"; "1 more process", "2 more processes".
func plural(n int, one string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	if strings.HasSuffix(one, "s") {
		return fmt.Sprintf("%d %ses", n, one)
	}
	return fmt.Sprintf("%d %ss", n, one)
}
