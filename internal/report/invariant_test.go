package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestAccountWarnings: accounts that break the invariant of POP-METRICS.md
// §1 give one warning line each in the text report (first among the
// warnings, at most maxAccountWarnings, then a count) and an
// "account_violations" entry in JSON; accounts that add up give neither.
func TestAccountWarnings(t *testing.T) {
	rep, m := load(t, "mpi_imbalance.json")
	if len(m.AccountViolations) != 0 {
		t.Fatalf("testdata breaks the invariant: %v", m.AccountViolations)
	}
	text := render(t, FormatText, rep, m, Options{})
	js := render(t, FormatJSON, rep, m, Options{})
	if strings.Contains(text, "accounts do not add up") || strings.Contains(js, "account_violations") {
		t.Errorf("warning for accounts that add up:\n%s\n%s", text, js)
	}

	// Rank 1 of Global holds 10 % too much useful time; the reader's
	// record is what the report shows.
	g := &m.Regions[0]
	g.Processes[1].UsefulNS += g.Processes[1].ElapsedNS / 10
	m.AccountViolations = measure.CheckAccounts(m)
	m.Warnings = []string{"library warning"}
	text = render(t, FormatText, rep, m, Options{})
	want := "Warnings\n  accounts do not add up: region \"Global\", rank 1: the accounts add up to 4.400000 s, 10.0 % more than elapsed × CPUs (4.000000 s × 1); the efficiencies of this region cannot be trusted (docs/metrics.md, accounts invariant)\n  library warning\n"
	if !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
	var doc struct {
		Violations []map[string]any `json:"account_violations"`
	}
	if err := json.Unmarshal([]byte(render(t, FormatJSON, rep, m, Options{})), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Violations) != 1 || doc.Violations[0]["region"] != "Global" || doc.Violations[0]["rank"] != 1.0 ||
		doc.Violations[0]["cpus"] != 1.0 || doc.Violations[0]["accounts_s"] != 4.4 || math.Abs(doc.Violations[0]["deviation"].(float64)-0.1) > 1e-12 {
		t.Errorf("account_violations = %v", doc.Violations)
	}

	// A measurement that did not come from the reader (an import) is
	// checked when rendered; many violations are summarised.
	m.AccountViolations = nil
	for i := range m.Regions {
		for k := range m.Regions[i].Processes {
			m.Regions[i].Processes[k].UsefulNS *= 2
		}
	}
	text = render(t, FormatText, rep, m, Options{})
	if n := strings.Count(text, "accounts do not add up:"); n != maxAccountWarnings || !strings.Contains(text, "accounts do not add up in ") {
		t.Errorf("%d warning lines, want %d and a count:\n%s", n, maxAccountWarnings, text)
	}
	all := renderReportsAll(t, m)
	if !strings.Contains(all, `"account_violations"`) {
		t.Errorf("--model all JSON lacks account_violations:\n%s", all)
	}
}

// renderReportsAll renders the JSON of every model of m.
func renderReportsAll(t *testing.T, m *measure.Measurement) string {
	t.Helper()
	reps, err := pop.ComputeAll(m)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := RenderAll(&b, FormatJSON, reps, m, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
