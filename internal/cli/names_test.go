package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var spaces = regexp.MustCompile(` +`)

// namesRun writes a measurement whose user regions are named like
// popmon's anonymous regions and like the word "all", in two cases, each
// with its own parallel efficiency: Global 0.90, "Anonymous Region 3"
// 0.70, "all" 0.75, "ALL" 0.60.
func namesRun(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "names.json")
	s := popmonRun("800000000", region("Anonymous Region 3", 4e7)+region("all", 5e7)+region("ALL", 2e7))
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRegionNamesAreExact: "all", "ALL" and "Anonymous Region 3" are user
// regions like any other in report, scaling, check and pages (never
// refused, never Global); --region matches exactly and suggests the
// right case.
func TestRegionNamesAreExact(t *testing.T) {
	dir := t.TempDir()
	file := namesRun(t, dir)
	cases := []struct {
		name string
		args []string
		code int
		want []string // in stdout
		not  []string // not in stdout
		err  string   // in stderr
	}{
		{"report every region", []string{"report", "--format", "csv", file}, ExitOK,
			[]string{"Global,parallel_efficiency,0.9\n", "Anonymous Region 3,parallel_efficiency,0.7\n", "all,parallel_efficiency,0.75\n", "ALL,parallel_efficiency,0.6\n"}, nil, ""},
		{"report all", []string{"report", "--format", "csv", "--region", "all", file}, ExitOK,
			[]string{"all,parallel_efficiency,0.75\n"}, []string{"Global,", "ALL,", "Anonymous"}, ""},
		{"report ALL", []string{"report", "--format", "csv", "--region", "ALL", file}, ExitOK,
			[]string{"ALL,parallel_efficiency,0.6\n"}, []string{"Global,", "all,"}, ""},
		{"report anonymous-like", []string{"report", "--format", "csv", "--region", "Anonymous Region 3", file}, ExitOK,
			[]string{"Anonymous Region 3,parallel_efficiency,0.7\n"}, []string{"Global,"}, ""},
		{"report All", []string{"report", "--region", "All", file}, ExitUsage, nil, nil,
			`popmon report: no region "All"; did you mean "all" or "ALL"? names are case-sensitive` + "\n"},
		{"report global", []string{"report", "--region", "global", file}, ExitUsage, nil, nil,
			`popmon report: no region "global"; did you mean "Global"? names are case-sensitive` + "\n"},
		{"report unknown", []string{"report", "--region", "solve", file}, ExitUsage, nil, nil,
			`popmon report: no region "solve" in ` + file + `: available regions are "Global", "Anonymous Region 3", "all", "ALL"` + "\n"},
		{"scaling every region", []string{"scaling", "--format", "csv", file}, ExitOK,
			[]string{"\nGlobal,", "\nAnonymous Region 3,", "\nall,", "\nALL,"}, nil, ""},
		{"scaling all", []string{"scaling", "--format", "csv", "--region", "all", file}, ExitOK,
			[]string{"\nall,"}, []string{"\nGlobal,", "\nALL,"}, ""},
		{"scaling ALL", []string{"scaling", "--format", "csv", "--region", "ALL", file}, ExitOK,
			[]string{"\nALL,"}, []string{"\nGlobal,", "\nall,"}, ""},
		{"scaling All", []string{"scaling", "--region", "All", file}, ExitUsage, nil, nil,
			`popmon scaling: no region "All"; did you mean "all" or "ALL"? names are case-sensitive` + "\n"},
		{"check every region", []string{"check", "--all", "--baseline", file, file}, ExitOK,
			[]string{"\nGlobal parallel_efficiency 0.90 0.90", "\nAnonymous Region 3 parallel_efficiency 0.70 0.70", "\nall parallel_efficiency 0.75 0.75", "\nALL parallel_efficiency 0.60 0.60", "24 values compared"}, nil, ""},
		{"check ALL", []string{"check", "--all", "--region", "ALL", "--baseline", file, file}, ExitOK,
			[]string{"\nALL parallel_efficiency 0.60 0.60", "6 values compared"}, []string{"Global", "\nall "}, ""},
		{"check Global", []string{"check", "--region", "global", "--baseline", file, file}, ExitUsage, nil, nil,
			`popmon check: no region "global"; did you mean "Global"? names are case-sensitive` + "\n"},
	}
	for _, c := range cases {
		code, out, errs := runMain(c.args...)
		out = spaces.ReplaceAllString(out, " ") // tables: one space between cells
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, code, c.code, out, errs)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: stdout lacks %q:\n%s", c.name, w, out)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: stdout has %q:\n%s", c.name, w, out)
			}
		}
		if c.err != "" && errs != c.err {
			t.Errorf("%s: stderr %q, want %q", c.name, errs, c.err)
		}
	}
}

// TestCheckPairsRegionsExactly: a baseline region "all" is not the new
// run's "ALL", nor is either Global.
func TestCheckPairsRegionsExactly(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	os.WriteFile(base, []byte(popmonRun("800000000", region("all", 5e7))), 0o644)
	newRun := filepath.Join(dir, "new.json")
	os.WriteFile(newRun, []byte(popmonRun("800000000", region("ALL", 2e7))), 0o644)
	code, out, errs := runMain("check", "--all", "--baseline", base, newRun)
	if code != ExitOK || !strings.Contains(out, "Global  parallel_efficiency") || !strings.Contains(out, "6 values compared") || strings.Contains(out, "ALL") || strings.Contains(out, "all ") {
		t.Errorf("exit %d: only Global should be compared:\n%s%s", code, out, errs)
	}
	code, _, errs = runMain("check", "--region", "ALL", "--baseline", base, newRun)
	if code != ExitUsage || errs != `popmon check: no region "ALL" in both runs: available regions are "Global"`+"\n" {
		t.Errorf("--region ALL: exit %d, %q", code, errs)
	}
}

// TestPagesRegionNames: pages shows a region named "all" as itself and
// refuses a name that differs only in case.
func TestPagesRegionNames(t *testing.T) {
	in := filepath.Join(t.TempDir(), "exp")
	os.MkdirAll(in, 0o755)
	namesRun(t, in)
	site := filepath.Join(t.TempDir(), "site")
	code, out, errs := runMain("pages", "-i", in, "-o", site, "--region", "all", "--region", "Anonymous Region 3")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(site, "exp", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, `data-region="all"`) || !strings.Contains(page, `data-region="Anonymous Region 3"`) || strings.Contains(page, `data-region="Global"`) {
		t.Errorf("page lacks the tables of regions all and Anonymous Region 3 (or has Global's)")
	}
	code, _, errs = runMain("pages", "-i", in, "-o", filepath.Join(t.TempDir(), "s2"), "--region", "All")
	if code != ExitUsage || !strings.Contains(errs, `no region "All"; did you mean "all" or "ALL"? names are case-sensitive`) {
		t.Errorf("--region All: exit %d, %q", code, errs)
	}
}
