package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportModels(t *testing.T) {
	file := filepath.Join("..", "..", "measure", "testdata", "hybrid_2nodes.json")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings
		stderr string
	}{
		{"default talp", []string{"report", file}, ExitOK, []string{"model talp (", "Serialization efficiency"}, ""},
		{"pop-hybrid", []string{"report", "--model", "pop-hybrid", file}, ExitOK, []string{"model pop-hybrid (", "Hybrid Parallel efficiency"}, ""},
		{"pop-additive csv", []string{"report", "--model", "POP-ADDITIVE", "--format", "csv", file}, ExitOK,
			[]string{"region,metric,value\n", "Global,thread_efficiency,"}, ""},
		{"all text", []string{"report", "--model", "all", "--region", "solve", file}, ExitOK,
			[]string{"model talp (", "model pop-hybrid (", "model pop-additive (", "not measured: needs a trace: measure with popmon run --trace"}, ""},
		{"all csv", []string{"report", "--model", "all", "--format", "csv", file}, ExitOK,
			[]string{"model,region,metric,value\ntalp,Global,elapsed_s,10\n", "pop-additive,halo exchange,process_efficiency,"}, ""},
		{"talp-json of talp", []string{"report", "--model", "talp", "--format", "talp-json", file}, ExitOK, []string{`"dlbVersion": "3.7"`}, ""},
		{"talp-json of another model", []string{"report", "--model", "pop-hybrid", "--format", "talp-json", file}, ExitUsage, nil,
			"--format talp-json has DLB/TALP's metrics only (model talp), not --model pop-hybrid: use --format json for other models"},
		{"talp-json of all", []string{"report", "--model", "all", "--format", "talp-json", file}, ExitUsage, nil, "not --model all"},
		{"unknown model", []string{"report", "--model", "pop", file}, ExitUsage, nil,
			`unknown metric model "pop": use one of talp, pop-hybrid, pop-additive, all`},
		{"help lists models", []string{"report", "--help"}, ExitOK, nil, "metric model: talp, pop-hybrid, pop-additive, all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tt.args, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, errb.String())
			}
			for _, want := range tt.stdout {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, out.String())
				}
			}
			if !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("stderr = %q, want %q", errb.String(), tt.stderr)
			}
		})
	}
}

func TestReportAllJSON(t *testing.T) {
	file := filepath.Join("..", "..", "measure", "testdata", "openmp_only.json")
	outFile := filepath.Join(t.TempDir(), "all.json")
	var errb bytes.Buffer
	if code := Main([]string{"report", "--model", "all", "--format", "json", "-o", outFile, file}, &Env{Stdout: &bytes.Buffer{}, Stderr: &errb}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Source string `json:"source"`
		Models []struct {
			Model   string `json:"model"`
			Regions []struct {
				Name    string             `json:"name"`
				Metrics map[string]float64 `json:"metrics"`
			} `json:"regions"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Source != file || len(doc.Models) != 3 || doc.Models[1].Model != "pop-hybrid" || doc.Models[2].Regions[1].Name != "stencil" {
		t.Fatalf("doc = %+v", doc)
	}
	if pe := doc.Models[2].Regions[0].Metrics["parallel_efficiency"]; pe != 0.85 {
		t.Errorf("pop-additive parallel_efficiency = %v, want 0.85", pe)
	}
}

// TestReportRefusesUntrustworthy: a measurement that lacks ranks of the job,
// or whose MPI calls did not all reach the library, gets one sentence
// instead of a tree in every format, exit code 3, and is refused by
// scaling and check too.
func TestReportRefusesUntrustworthy(t *testing.T) {
	for _, tc := range []struct {
		file, sentence string
	}{
		{"testdata/partial.json", "No POP metrics: popmon measured 2 of the job's 4 processes: the measurement library did not reach ranks 1,3 of 4"},
		{"testdata/own_wrappers.json", "No POP metrics: the program's MPI calls did not all reach popmon: ./own_wrappers defines MPI_Allreduce itself (its own PMPI wrappers)"},
	} {
		code, stdout, stderr := runMain("report", tc.file)
		if code != ExitInput || !strings.Contains(stdout, tc.sentence) || strings.Contains(stdout, "Parallel efficiency") {
			t.Errorf("report %s: exit %d\n%s\n%s", tc.file, code, stdout, stderr)
		}
		code, stdout, _ = runMain("report", "--format", "json", "--model", "all", tc.file)
		if code != ExitInput || !strings.Contains(stdout, `"refused": "`) || strings.Contains(stdout, "parallel_efficiency") {
			t.Errorf("report json %s: exit %d\n%s", tc.file, code, stdout)
		}
		for _, f := range []string{"csv", "talp-json"} {
			code, stdout, stderr = runMain("report", "--format", f, tc.file)
			if code != ExitInput || stdout != "" || !strings.Contains(stderr, "popmon measured 2 of") && !strings.Contains(stderr, "did not all reach popmon") {
				t.Errorf("report --format %s %s: exit %d\nstdout %q\nstderr %s", f, tc.file, code, stdout, stderr)
			}
		}
		code, _, stderr = runMain("scaling", tc.file)
		if code != ExitInput || !strings.Contains(stderr, "has no trustworthy metrics") {
			t.Errorf("scaling %s: exit %d\n%s", tc.file, code, stderr)
		}
		code, _, stderr = runMain("check", "--baseline", "testdata/partial.json", tc.file)
		if code != ExitInput {
			t.Errorf("check %s: exit %d\n%s", tc.file, code, stderr)
		}
	}
}

// TestRefusedReportNoEmptyErrorLine: a report that refuses its metrics
// says why in its place and ends there. popmon report exits 3 without a
// message line of its own, and renderFile, after which popmon run and
// popmon recover print "popmon: <error>", returns no error for it: it used
// to return an empty one, and those commands ended with a line "popmon: ".
func TestRefusedReportNoEmptyErrorLine(t *testing.T) {
	for _, file := range []string{"testdata/partial.json", "testdata/own_wrappers.json"} {
		for _, format := range []string{"text", "json"} {
			code, stdout, stderr := runMain("report", "--format", format, file)
			if code != ExitInput || !strings.Contains(stdout, "refused") && !strings.Contains(stdout, "No POP metrics: ") {
				t.Errorf("report --format %s %s: exit %d\n%s", format, file, code, stdout)
			}
			assertNoEmptyErrorLine(t, "report "+file, stderr)
		}
		var out bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
		if err := renderFile(env, &out, file, "text", reportOptions{model: "talp"}); err != nil {
			t.Errorf("renderFile %s (as popmon run prints the report): error %q, want none", file, err)
		}
		if !strings.Contains(out.String(), "No POP metrics: ") {
			t.Errorf("renderFile %s: no refusal sentence:\n%s", file, out.String())
		}
	}
}

// assertNoEmptyErrorLine fails when a line of stderr is a bare "popmon:"
// or "popmon COMMAND:" prefix with no message after it.
func assertNoEmptyErrorLine(t *testing.T, what, stderr string) {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		l := strings.TrimSpace(line)
		if l == "popmon:" || strings.HasPrefix(l, "popmon ") && strings.HasSuffix(l, ":") && !strings.Contains(strings.TrimSuffix(l, ":"), ":") {
			t.Errorf("%s: stderr has an empty error line %q:\n%s", what, line, stderr)
		}
	}
}
