package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestLewiSummaryForm: examples/lewi/lewi_imbalance under --lewi with
// --max-process-records 1, so that finalize writes the summary form (no
// per-process records, the run's facts reduced). The run-level lewi record
// must still be there: 2 processes, rank 1's lent CPU time at least half
// its wait (as TestLewiImbalance asks of its per-process record), some
// borrowed time; and the report's LeWI line. Before the facts' reduction
// carried LeWI's sums, this form had no lewi record at all.
func TestLewiSummaryForm(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(examples(t, impl), "lewi_imbalance.clang")
			if _, err := os.Stat(prog); err != nil {
				t.Skipf("%s not built", prog)
			}
			key := lewiKey(t)
			flags := []string{"--lewi", "--max-process-records", "1"}
			out, so, se, code := runPopmon(t, []string{"POPMON_LEWI_KEY=" + key}, flags,
				append(bound(impl, 2), prog, "8")...)
			if code != 0 {
				t.Fatalf("popmon run %v: exit %d\nstdout:\n%s\nstderr:\n%s", flags, code, so, se)
			}
			ms := lewiRankLine.FindAllStringSubmatch(so, -1)
			if len(ms) != 2 {
				t.Fatalf("unexpected output:\n%s\nstderr:\n%s", so, se)
			}
			var wait1 float64
			for _, m := range ms {
				if m[1] == "1" {
					wait1, _ = strconv.ParseFloat(m[2], 64)
				}
			}
			m := readChecked(t, out)
			if m.Summarized == nil || len(m.Processes) != 0 {
				t.Fatalf("not the summary form: summary %+v, %d process records", m.Summarized, len(m.Processes))
			}
			if m.Lewi == nil || m.Lewi.Processes != 2 {
				t.Fatalf("the summary form's lewi record: %+v; want 2 processes", m.Lewi)
			}
			if float64(m.Lewi.LentCPUNS) < 0.5*wait1*1e9 {
				t.Errorf("lent %d ns of CPU time; rank 1 waited %.3f s", m.Lewi.LentCPUNS, wait1)
			}
			if m.Lewi.BorrowedCPUNS <= 0 {
				t.Errorf("no CPU time borrowed: %+v", m.Lewi)
			}
			rso, rse, rc := popmon(t, nil, "report", out)
			if rc != 0 || !regexp.MustCompile(`(?m)^LeWI: +on in 2 processes: .* CPU time lent, .* borrowed`).MatchString(rso) {
				t.Errorf("report: exit %d, no LeWI line:\n%s\n%s", rc, rso, rse)
			}
		})
	}
}
