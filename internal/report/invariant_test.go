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
// §1 refuse their region (pop.RegionReport.Refused: the sentence in place of
// its tree, no metrics in JSON) and are listed under "account_violations"
// in JSON; the text report's warnings list only violations of regions it
// does not print refused (at most maxAccountWarnings, then a count).
// Accounts that add up give none of this.
func TestAccountWarnings(t *testing.T) {
	rep, m := load(t, "mpi_imbalance.json")
	if len(m.AccountViolations) != 0 {
		t.Fatalf("testdata breaks the invariant: %v", m.AccountViolations)
	}
	text := render(t, FormatText, rep, m, Options{})
	js := render(t, FormatJSON, rep, m, Options{})
	if strings.Contains(text, "accounts do not add up") || strings.Contains(text, "No POP metrics") ||
		strings.Contains(js, "account_violations") || strings.Contains(js, `"refused"`) {
		t.Errorf("warning for accounts that add up:\n%s\n%s", text, js)
	}

	// Rank 1 of Global holds 10 % too much useful time.
	g := &m.Regions[0]
	g.Processes[1].UsefulNS += g.Processes[1].ElapsedNS / 10
	m.AccountViolations = measure.CheckAccounts(m)
	m.Warnings = []string{"library warning"}
	rep = computeModels(t, m, "", "talp")[0]
	text = render(t, FormatText, rep, m, Options{})
	want := "### Resources: 4 processes on 1 node, 4 CPUs, 4 visits\n" +
		"No POP metrics: the accounts of rank 1 do not add up: 4.40 s accounted for 1 CPU × 4.00 s elapsed (off by 10 %, tolerance 1 %).\n"
	if !strings.Contains(text, want) || !strings.Contains(text, "Warnings\n  library warning\n") || strings.Contains(text, "accounts do not add up") {
		t.Errorf("text lacks %q, or warns again:\n%s", want, text)
	}
	// With another region shown, the violation is a warning.
	text = render(t, FormatText, rep, m, Options{Region: "compute"})
	want = "Warnings\n  accounts do not add up: region \"Global\", rank 1: the accounts add up to 4.400000 s, 10.0 % more than elapsed × CPUs (4.000000 s × 1); the efficiencies of this region cannot be trusted (docs/metrics.md, accounts invariant)\n  library warning\n"
	if !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
	var doc struct {
		Regions []struct {
			Name    string         `json:"name"`
			Refused string         `json:"refused"`
			Metrics map[string]any `json:"metrics"`
		} `json:"regions"`
		Violations []map[string]any `json:"account_violations"`
	}
	if err := json.Unmarshal([]byte(render(t, FormatJSON, rep, m, Options{})), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Violations) != 1 || doc.Violations[0]["region"] != "Global" || doc.Violations[0]["rank"] != 1.0 ||
		doc.Violations[0]["cpus"] != 1.0 || doc.Violations[0]["accounts_s"] != 4.4 || math.Abs(doc.Violations[0]["deviation"].(float64)-0.1) > 1e-12 {
		t.Errorf("account_violations = %v", doc.Violations)
	}
	if r := doc.Regions[0]; r.Name != "Global" || !strings.HasPrefix(r.Refused, "the accounts of rank 1 do not add up") || len(r.Metrics) != 0 {
		t.Errorf("Global in JSON: %+v", r)
	}
	if r := doc.Regions[1]; r.Refused != "" || len(r.Metrics) == 0 {
		t.Errorf("compute in JSON: %+v", r)
	}

	// A measurement built otherwise (a live window, an interval: a copy
	// with another region list) is checked on its first use; many
	// violations in regions not printed refused (a report computed
	// before) are summarised.
	c := *m
	c.Regions = append([]measure.Region(nil), m.Regions...)
	for i := range c.Regions {
		for k := range c.Regions[i].Processes {
			c.Regions[i].Processes[k].UsefulNS *= 2
		}
	}
	m = &c
	rep, _ = load(t, "mpi_imbalance.json")
	text = render(t, FormatText, rep, m, Options{})
	if n := strings.Count(text, "accounts do not add up:"); n != maxAccountWarnings || !strings.Contains(text, "accounts do not add up in ") {
		t.Errorf("%d warning lines, want %d and a count:\n%s", n, maxAccountWarnings, text)
	}
	all := renderReportsAll(t, m)
	if !strings.Contains(all, `"account_violations"`) || strings.Count(all, `"refused": "the accounts of rank 0 do not add up`) != 3*3 {
		t.Errorf("--model all JSON lacks account_violations or the refusals of 3 regions × 3 models:\n%s", all)
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
	if err := RenderAll(&b, FormatJSON, withRuns(reps, m), Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// brokenAccountsFile is a copy of measure/testdata/mpi_imbalance.json whose
// processes hold 2 CPUs each in Global but account for one (the 8 CPUs for
// 4 ranks of the mpicxx bug): Global is refused, compute and io are not.
const brokenAccountsFile = "../cli/testdata/broken_accounts.json"

// TestRefusedRegionGolden: the report of a measurement with a refused
// region, in every format: the sentence in place of its tree (text), a
// "refused" member and empty "metrics" (json, also per model with --model
// all), a "refused" row instead of metric rows (csv), no talp-json; the
// other regions as usual. At a9d5b23 Global printed its tree with a
// warning at the end, and every format had its numbers.
func TestRefusedRegionGolden(t *testing.T) {
	m, err := measure.ReadFile(brokenAccountsFile)
	if err != nil {
		t.Fatal(err)
	}
	ext := map[string]string{FormatText: "txt", FormatJSON: "json", FormatCSV: "csv"}
	for _, model := range []string{"", "all"} {
		reps := computeModels(t, m, "broken_accounts.json", model)
		name := "broken_accounts"
		if model != "" {
			name += "." + model
		}
		for _, f := range []string{FormatText, FormatJSON, FormatCSV} {
			var b strings.Builder
			if err := RenderAll(&b, f, withRuns(reps, m), Options{}); err != nil {
				t.Fatalf("%s %s: %v", name, f, err)
			}
			golden(t, name+"."+ext[f], b.String())
		}
	}
	rep := computeModels(t, m, "broken_accounts.json", "talp")[0]
	text := render(t, FormatText, rep, m, Options{})
	want := "### Name: Global\n### Elapsed time: 4.00 s\n### Resources: 4 processes on 1 node, 8 CPUs, 4 visits\n" +
		"No POP metrics: the accounts of rank 0 do not add up: 4.00 s accounted for 2 CPUs × 4.00 s elapsed (off by 50 %, tolerance 1 %); nor do those of 3 more processes (ranks 1, 2, 3).\n\n### Name: compute\n"
	if !strings.Contains(text, want) || !strings.Contains(text, "### Name: io\n### Elapsed time: 250.00 ms\n### Resources: 1 process on 1 node, 1 CPU, 2 visits\nParallel efficiency ............... 0.80\n") {
		t.Errorf("text lacks %q or io's tree:\n%s", want, text)
	}
	if strings.Contains(text, "accounts do not add up:") {
		t.Errorf("the refusal is repeated as a warning:\n%s", text)
	}
	csv := render(t, FormatCSV, rep, m, Options{})
	if !strings.Contains(csv, "Global,elapsed_s,4\nGlobal,refused,\"the accounts of rank 0 do not add up: ") || strings.Contains(csv, "Global,parallel_efficiency") ||
		!strings.Contains(csv, "compute,parallel_efficiency,0.625\n") {
		t.Errorf("csv:\n%s", csv)
	}
	var b strings.Builder
	err = Render(&b, FormatTALPJSON, withRun(rep, m), Options{})
	if err == nil || !strings.Contains(err.Error(), `no talp-json for region "Global": the accounts of rank 0 do not add up`) {
		t.Errorf("talp-json: err %v\n%s", err, b.String())
	}
	// Only a region that adds up: talp-json as usual.
	b.Reset()
	if err := Render(&b, FormatTALPJSON, withRun(rep, m), Options{Region: "compute"}); err != nil || !strings.Contains(b.String(), `"compute"`) {
		t.Errorf("talp-json of compute: %v\n%s", err, b.String())
	}
}
