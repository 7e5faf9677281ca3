package report

import (
	"fmt"
	"math"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// maxAccountWarnings is how many invariant violations the text report
// lists before summarising the rest in one line.
const maxAccountWarnings = 5

// accountViolations returns the accounts-invariant violations of the run
// (POP-METRICS.md §1), as its reader derived them (pop.Run).
func accountViolations(run *pop.Run) []measure.AccountViolation {
	if run == nil {
		return nil
	}
	return run.AccountViolations
}

// accountWarnings returns the warning lines of the text report for the
// invariant violations of the run: one per violation, at most
// maxAccountWarnings, then one line counting the rest. Violations in the
// regions of shown are left out: the report printed those regions' refusal
// sentences (pop.RegionReport.Refused) in their place.
func accountWarnings(run *pop.Run, shown map[string]bool) []string {
	var vs []measure.AccountViolation
	for _, v := range accountViolations(run) {
		if !shown[v.Region] {
			vs = append(vs, v)
		}
	}
	var lines []string
	for i, v := range vs {
		if i == maxAccountWarnings {
			lines = append(lines, fmt.Sprintf("accounts do not add up in %d more places (process and region)", len(vs)-i))
			break
		}
		lines = append(lines, "accounts do not add up: "+v.String()+"; the efficiencies of this region cannot be trusted (docs/metrics.md, accounts invariant)")
	}
	return lines
}

// appendAccountViolationsJSON adds the "account_violations" array of the
// JSON report (docs/report-formats.md) when the run breaks the accounts
// invariant; nothing otherwise.
func appendAccountViolationsJSON(out object, run *pop.Run) object {
	vs := accountViolations(run)
	if len(vs) == 0 {
		return out
	}
	list := make([]object, 0, len(vs))
	for _, v := range vs {
		o := object{{"region", v.Region}}
		if v.Rank >= 0 {
			o = append(o, member{"rank", v.Rank})
		}
		o = append(o,
			member{"cpus", v.CPUs},
			member{"elapsed_s", float(float64(v.ElapsedNS) / 1e9)},
			member{"accounts_s", float(float64(v.AccountsNS) / 1e9)},
		)
		if d := v.Deviation(); !math.IsInf(d, 0) {
			o = append(o, member{"deviation", float(d)}) // absent without elapsed time
		}
		list = append(list, o)
	}
	return append(out, member{"account_violations", list})
}
