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
			[]string{"model talp (", "model pop-hybrid (", "model pop-additive (", "not measured: needs an ideal-network replay"}, ""},
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
