package report

import (
	"fmt"
	"math"

	"github.com/popmon/popmon/measure"
)

// maxAccountWarnings is how many invariant violations the text report
// lists before summarising the rest in one line.
const maxAccountWarnings = 5

// accountViolations returns the accounts-invariant violations of m
// (POP-METRICS.md §1): those the reader recorded, or, for a measurement
// that did not come from measure.Read (an imported trace or TALP file),
// those measure.CheckAccounts finds.
func accountViolations(m *measure.Measurement) []measure.AccountViolation {
	if m == nil {
		return nil
	}
	if m.AccountViolations != nil {
		return m.AccountViolations
	}
	return measure.CheckAccounts(m)
}

// accountWarnings returns the warning lines of the text report for the
// invariant violations of m: one per violation, at most
// maxAccountWarnings, then one line counting the rest. Violations in the
// regions of shown are left out: the report printed those regions' refusal
// sentences (pop.RegionReport.Refused) in their place.
func accountWarnings(m *measure.Measurement, shown map[string]bool) []string {
	var vs []measure.AccountViolation
	for _, v := range accountViolations(m) {
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
// JSON report (docs/report-formats.md) when m breaks the accounts
// invariant; nothing otherwise.
func appendAccountViolationsJSON(out object, m *measure.Measurement) object {
	vs := accountViolations(m)
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
