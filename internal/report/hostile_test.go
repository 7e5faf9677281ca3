package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// cut127 is a region name cut by the C library at its 127-byte limit in
// the middle of "€" (e2 82 ac): 126 × "a", then the byte e2.
var cut127 = strings.Repeat("a", 126) + "€"[:1]

// hostileNames are names a hostile or damaged file may carry, with how
// each renderer must show them: text (text report, scaling text), csv (a
// text cell), md (Markdown) and json (the string a JSON reader gets back).
var hostileNames = []struct {
	what, name, text, csv, md, json string
}{
	{"clear screen", "\x1b[2J", `\x1b[2J`, `\x1b[2J`, `\\x1b\[2J`, "\x1b[2J"},
	{"carriage return", "a\rb", `a\rb`, `a\rb`, `a\\rb`, "a\rb"},
	{"new line", "a\n### Name: forged", `a\n### Name: forged`, `a\n### Name: forged`, `a\\n\#\#\# Name: forged`, "a\n### Name: forged"},
	{"NUL", "nul\x00", `nul\x00`, `nul\x00`, `nul\\x00`, "nul\x00"},
	{"C1 CSI", "c1\u009b2J", `c1\u009b2J`, `c1\u009b2J`, `c1\\u009b2J`, "c1\u009b2J"},
	{"bidi override", "evil\u202etxt", `evil\u202etxt`, `evil\u202etxt`, `evil\\u202etxt`, "evil\u202etxt"},
	{"formula", "=cmd|' /C calc'!A0", "=cmd|' /C calc'!A0", `'=cmd|' /C calc'!A0`, `=cmd\|' /C calc'!A0`, "=cmd|' /C calc'!A0"},
	{"plus", "+1+1", "+1+1", "'+1+1", "+1+1", "+1+1"},
	{"negative-looking name", "-0.5", "-0.5", "'-0.5", "-0.5", "-0.5"},
	{"at", "@SUM(A1)", "@SUM(A1)", "'@SUM(A1)", "@SUM(A1)", "@SUM(A1)"},
	{"script", "<script>alert(1)</script>", "<script>alert(1)</script>", "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;", "<script>alert(1)</script>"},
	{"img onerror", `<img src=x onerror="alert(1)">`, `<img src=x onerror="alert(1)">`, `<img src=x onerror="alert(1)">`, `&lt;img src=x onerror="alert(1)"&gt;`, `<img src=x onerror="alert(1)">`},
	{"pipes", "|a|b|", "|a|b|", "|a|b|", `\|a\|b\|`, "|a|b|"},
	{"markdown", "`x` [l](u) *e*", "`x` [l](u) *e*", "`x` [l](u) *e*", "\\`x\\` \\[l\\](u) \\*e\\*", "`x` [l](u) *e*"},
	{"Latin-1", "caf\xe9", `caf\xe9`, `caf\xe9`, `caf\\xe9`, "caf\ufffd"},
	{"cut at 127 bytes", cut127, strings.Repeat("a", 126) + `\xe2`, strings.Repeat("a", 126) + `\xe2`, strings.Repeat("a", 126) + `\\xe2`, strings.Repeat("a", 126) + "\ufffd"},
}

// checkSafeOutput fails when out is not valid UTF-8 or holds a control
// character other than the line feed, or a bidi formatting character.
func checkSafeOutput(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: output is not valid UTF-8", what)
	}
	for i, r := range out {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
			t.Errorf("%s: raw %U at byte %d: %q", what, r, i, out[max(0, i-20):min(len(out), i+20)])
			return
		}
	}
}

// hostileReport loads mpi_imbalance.json, puts name everywhere a file can
// carry a name (the "compute" region, the busiest MPI function, the
// command, the MPI library, a warning, the report's source) and computes
// the report.
func hostileReport(t *testing.T, name string) (*pop.Report, *measure.Measurement) {
	t.Helper()
	_, m := load(t, "mpi_imbalance.json")
	for i := range m.Regions {
		if m.Regions[i].Name == "compute" {
			m.Regions[i].Name = name
		}
	}
	m.MPICalls[0].Name = name
	m.Command = []string{"./app", name}
	m.MPI.Library = name
	m.Warnings = append(m.Warnings, name)
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	rep.Source = name
	return rep, m
}

func TestHostileNamesText(t *testing.T) {
	for _, h := range hostileNames {
		t.Run(h.what, func(t *testing.T) {
			rep, m := hostileReport(t, h.name)
			out := render(t, FormatText, rep, m, Options{})
			checkSafeOutput(t, "text", out)
			for _, want := range []string{
				"Source:    " + h.text + "\n",
				"Command:   ./app " + h.text + "\n",
				"### Name: " + h.text + "\n",
				"  " + h.text + "\n", // the warning
			} {
				if !strings.Contains(out, want) {
					t.Errorf("text report lacks %q:\n%s", want, out)
				}
			}
			// The MPI call table shows the name escaped, followed by its
			// call count (40).
			if !regexp.MustCompile(`\n  ` + regexp.QuoteMeta(h.text) + ` +40  `).MatchString(out) {
				t.Errorf("MPI call table lacks %q:\n%s", h.text, out)
			}
			// The run line names the MPI library escaped.
			if !strings.Contains(out, "· "+h.text+"\n") {
				t.Errorf("run line lacks the library %q:\n%s", h.text, out)
			}
		})
	}
}

func TestHostileNamesCSV(t *testing.T) {
	for _, h := range hostileNames {
		t.Run(h.what, func(t *testing.T) {
			rep, _ := hostileReport(t, h.name)
			out := render(t, FormatCSV, rep, nil, Options{})
			checkSafeOutput(t, "csv", out)
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatalf("csv does not parse: %v\n%s", err, out)
			}
			found := false
			for _, rec := range recs[1:] {
				if rec[0] == h.csv {
					found = true
				}
				// The value column stays a number, never neutralised.
				if _, err := strconv.ParseFloat(rec[2], 64); err != nil {
					t.Errorf("value %q is not a number", rec[2])
				}
			}
			if !found {
				t.Errorf("no row of region %q:\n%s", h.csv, out)
			}
		})
	}
}

func TestHostileNamesJSON(t *testing.T) {
	for _, h := range hostileNames {
		t.Run(h.what, func(t *testing.T) {
			rep, m := hostileReport(t, h.name)
			for _, f := range []string{FormatJSON, FormatTALPJSON} {
				out := render(t, f, rep, m, Options{})
				checkSafeOutput(t, f, out)
				// The exact name comes back to a JSON reader (invalid
				// UTF-8 as U+FFFD).
				if !jsonHasString(t, out, h.json) {
					t.Errorf("%s does not hold %q:\n%s", f, h.json, out)
				}
			}
			var doc struct {
				Source  string
				Regions []struct{ Name string }
			}
			if err := json.Unmarshal([]byte(render(t, FormatJSON, rep, m, Options{})), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Source != h.json || len(doc.Regions) < 2 || doc.Regions[1].Name != h.json {
				t.Errorf("source %q, regions %q; want %q", doc.Source, doc.Regions, h.json)
			}
		})
	}
}

// jsonHasString reports whether the JSON document doc holds the string s
// anywhere (as a key or a value).
func jsonHasString(t *testing.T, doc, s string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return x == s
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for k, e := range x {
				if k == s || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func TestJSONSafeEscapes(t *testing.T) {
	for _, s := range []string{"del\x7f", "c1\u0085", "bidi\u202e", "iso\u2066", "fine é €"} {
		var b bytes.Buffer
		if err := writeIndented(&b, s); err != nil {
			t.Fatal(err)
		}
		out := strings.TrimSuffix(b.String(), "\n")
		var back string
		if err := json.Unmarshal([]byte(out), &back); err != nil || back != s {
			t.Errorf("%q: decodes to %q (%v)", s, back, err)
		}
		checkSafeOutput(t, s, out)
	}
}

func TestHostileNamesOMPRegions(t *testing.T) {
	for _, h := range hostileNames {
		t.Run(h.what, func(t *testing.T) {
			m := ompMeasurement()
			m.OMPRegions[0].Module = h.name // no "/": the cell starts with the name
			m.OpenMP.Runtime = h.name

			text := ompText(m, topOMPRegions)
			checkSafeOutput(t, "omp text", text)
			// The table names the module by its base name.
			if !strings.Contains(h.name, "/") && !strings.Contains(text, "  "+h.text+"+0x4f10") {
				t.Errorf("OpenMP table lacks %q:\n%s", h.text+"+0x4f10", text)
			}
			if !strings.Contains(text, "No source location for "+h.text+": ") {
				t.Errorf("OpenMP table lacks the module %q:\n%s", h.text, text)
			}

			var b bytes.Buffer
			if err := OMPRegionsCSV(&b, runOf(m)); err != nil {
				t.Fatal(err)
			}
			checkSafeOutput(t, "omp csv", b.String())
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := len(ompRegionsCSVHeader) - 2 // module
			found := false
			for _, rec := range recs[1:] {
				found = found || rec[col] == h.csv
			}
			if !found {
				t.Errorf("no row with module %q: %q", h.csv, recs)
			}
		})
	}
}

// hostileScaling is a scaling study whose region, labels and file names
// are name.
func hostileScaling(t *testing.T, name string) *pop.Scaling {
	t.Helper()
	s, err := pop.Scale(pop.ScalingInput{Model: pop.ModelTALP, Mode: pop.ScalingAuto, Reference: -1,
		Regions: []pop.ScalingRegionInput{{Name: name,
			Tree: []pop.ScalingNode{{ID: pop.IDParallelEfficiency, Name: "Parallel efficiency"}},
			Runs: []pop.ScalingRun{
				{ID: 0, Label: name, Source: name, CPUs: 2, ElapsedNS: 1.5e9, UsefulNS: 2e9,
					Metrics: map[string]float64{pop.IDParallelEfficiency: 0.8}},
				{ID: 1, Label: "4 ranks", Source: "b.json", CPUs: 4, ElapsedNS: 1e9, UsefulNS: 2.5e9,
					Metrics: map[string]float64{pop.IDParallelEfficiency: -0.5}},
			}}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHostileNamesScaling(t *testing.T) {
	for _, h := range hostileNames {
		t.Run(h.what, func(t *testing.T) {
			s := hostileScaling(t, h.name)

			text := renderScaling(t, FormatText, s, ScalingOptions{})
			checkSafeOutput(t, "text", text)
			if want := "\nRegion " + h.text + " (reference: " + h.text + ", " + h.text + ")\n"; !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
			// Columns stay aligned: every line of the table has the same
			// width in runes.
			lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
			table := lines[len(lines)-4:]
			for _, l := range table[1:] {
				if utf8.RuneCountInString(l) != utf8.RuneCountInString(table[0]) {
					t.Errorf("misaligned table:\n%s", strings.Join(table, "\n"))
					break
				}
			}

			out := renderScaling(t, FormatCSV, s, ScalingOptions{})
			checkSafeOutput(t, "csv", out)
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs[1:] {
				if rec[0] != h.csv {
					t.Errorf("region cell %q, want %q", rec[0], h.csv)
				}
				if rec[1] != "4 ranks" && (rec[1] != h.csv || rec[3] != h.csv) {
					t.Errorf("label, source cells %q, %q, want %q", rec[1], rec[3], h.csv)
				}
				if _, err := strconv.ParseFloat(rec[5], 64); err != nil {
					t.Errorf("value %q is not a number", rec[5])
				}
			}
			if !strings.Contains(out, ",parallel_efficiency,-0.5\n") {
				t.Errorf("negative value neutralised or lost:\n%s", out)
			}

			md := renderScaling(t, FormatMarkdown, s, ScalingOptions{})
			checkSafeOutput(t, "markdown", md)
			for _, want := range []string{
				"\n### Region " + h.md + "\n",
				"| " + h.md + " (2 CPUs) |",
			} {
				if !strings.Contains(md, want) {
					t.Errorf("markdown lacks %q:\n%s", want, md)
				}
			}
			if strings.Contains(md, "<script") || strings.Contains(md, "<img") {
				t.Errorf("markdown holds raw HTML:\n%s", md)
			}
			// Every table row has exactly the table's cells: no name adds
			// a column.
			for _, l := range strings.Split(md, "\n") {
				if strings.HasPrefix(l, "|") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != 4 {
					t.Errorf("markdown row with a wrong number of cells: %q", l)
				}
			}

			js := renderScaling(t, FormatJSON, s, ScalingOptions{})
			checkSafeOutput(t, "json", js)
			if !jsonHasString(t, js, h.json) {
				t.Errorf("json lacks %q:\n%s", h.json, js)
			}
		})
	}
}

func TestScalingMarkdownCodeSpan(t *testing.T) {
	s := hostileScaling(t, "Global")
	if md := renderScaling(t, FormatMarkdown, s, ScalingOptions{}); !strings.Contains(md, "Reference: Global (`Global`).") {
		t.Errorf("a clean source is not a code span:\n%s", md)
	}
	s = hostileScaling(t, "a`b")
	if md := renderScaling(t, FormatMarkdown, s, ScalingOptions{}); !strings.Contains(md, "Reference: a\\`b (a\\`b).") {
		t.Errorf("a source with a backtick:\n%s", md)
	}
}
