package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/popmon/popmon/pop"
)

// scalingFixture is a strong-scaling study of two runs with counters.
func scalingFixture(t *testing.T) *pop.Scaling {
	t.Helper()
	s, err := pop.Scale(pop.ScalingInput{Model: pop.ModelTALP, Mode: pop.ScalingAuto, Reference: -1,
		Regions: []pop.ScalingRegionInput{{Name: "Global",
			Tree: []pop.ScalingNode{{ID: pop.IDParallelEfficiency, Name: "Parallel efficiency"}, {ID: pop.IDMPIParallelEfficiency, Name: "MPI Parallel efficiency", Depth: 1}},
			Runs: []pop.ScalingRun{
				{ID: 0, Label: "2xMPI 1xOpenMP", Source: "a.json", CPUs: 2, ElapsedNS: 1.5e9, UsefulNS: 2e9, Instructions: 4e9, Cycles: 2e9, HasCounters: true,
					Metrics: map[string]float64{pop.IDParallelEfficiency: 0.8, pop.IDMPIParallelEfficiency: 0.8}},
				{ID: 1, Label: "4xMPI 1xOpenMP", Source: "b|c.json", CPUs: 4, ElapsedNS: 1e9, UsefulNS: 2.5e9, Instructions: 5e9, Cycles: 3.125e9, HasCounters: true,
					Metrics: map[string]float64{pop.IDParallelEfficiency: 0.625}},
			}}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func renderScaling(t *testing.T, format string, s *pop.Scaling, opts ScalingOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderScaling(&b, format, s, opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestScalingGolden(t *testing.T) {
	s := scalingFixture(t)
	for _, c := range []struct{ format, ext string }{{FormatText, "txt"}, {FormatCSV, "csv"}, {FormatJSON, "json"}, {FormatMarkdown, "md"}} {
		golden(t, "scaling."+c.ext, renderScaling(t, c.format, s, ScalingOptions{}))
	}
}

func TestScalingJSONShape(t *testing.T) {
	var doc struct {
		Model, Mode string
		Regions     []struct {
			Name string
			Runs []struct {
				Label, Source string
				CPUs          int
				Metrics       map[string]float64
			}
		}
	}
	if err := json.Unmarshal([]byte(renderScaling(t, FormatJSON, scalingFixture(t), ScalingOptions{})), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "talp" || doc.Mode != "strong" || len(doc.Regions) != 1 || len(doc.Regions[0].Runs) != 2 {
		t.Fatalf("%+v", doc)
	}
	r := doc.Regions[0].Runs[1]
	if r.Label != "4xMPI 1xOpenMP" || r.CPUs != 4 || r.Metrics["global_efficiency"] != 0.5 || r.Metrics["speedup"] != 1.5 {
		t.Errorf("%+v", r)
	}
	if _, ok := r.Metrics["mpi_parallel_efficiency"]; ok {
		t.Error("absent metric present in JSON")
	}
}

func TestScalingTextColourAndCSV(t *testing.T) {
	s := scalingFixture(t)
	if plain := renderScaling(t, FormatText, s, ScalingOptions{}); strings.Contains(plain, "\x1b[") {
		t.Error("colour without the option")
	}
	col := renderScaling(t, FormatText, s, ScalingOptions{Color: true})
	if !strings.Contains(col, ansiBad+"0.50"+ansiReset) || !strings.Contains(col, ansiGood) {
		t.Errorf("colours missing:\n%q", col)
	}
	rows, err := csv.NewReader(strings.NewReader(renderScaling(t, FormatCSV, s, ScalingOptions{}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if rows[0][4] != "metric" || len(rows[0]) != 6 {
		t.Errorf("header %v", rows[0])
	}
	if err := RenderScaling(&bytes.Buffer{}, "yaml", s, ScalingOptions{}); err == nil {
		t.Error("unknown format accepted")
	}
	if err := RenderScaling(&bytes.Buffer{}, FormatText, nil, ScalingOptions{}); err == nil {
		t.Error("nil scaling accepted")
	}
	for _, f := range ScalingFormats() {
		if err := RenderScaling(failWriter{}, f, s, ScalingOptions{}); err == nil {
			t.Errorf("%s: write error lost", f)
		}
	}
}

// TestScalingRefusedRun: a run whose region is refused shows no number in
// any scaling format: "refused" cells and the sentence under the table
// (text, markdown), one "refused" row (csv), "refused" and empty "metrics"
// (json); it is not the reference.
func TestScalingRefusedRun(t *testing.T) {
	const why = "the accounts of rank 0 do not add up: 4.00 s accounted for 2 CPUs × 4.00 s elapsed (off by 50 %, tolerance 1 %)"
	s, err := pop.Scale(pop.ScalingInput{Model: pop.ModelTALP, Reference: -1,
		Regions: []pop.ScalingRegionInput{{Name: "Global",
			Tree: []pop.ScalingNode{{ID: pop.IDParallelEfficiency, Name: "Parallel efficiency"}},
			Runs: []pop.ScalingRun{
				{ID: 0, Label: "2xMPI 1xOpenMP", Source: "a.json", CPUs: 2, ElapsedNS: 1.5e9, Refused: why},
				{ID: 1, Label: "4xMPI 1xOpenMP", Source: "b.json", CPUs: 4, ElapsedNS: 1e9, UsefulNS: 2.5e9,
					Metrics: map[string]float64{pop.IDParallelEfficiency: 0.625}},
			}}}})
	if err != nil {
		t.Fatal(err)
	}
	text := renderScaling(t, FormatText, s, ScalingOptions{})
	for _, want := range []string{
		"Region Global (reference: 4xMPI 1xOpenMP, b.json)\n",
		"Global efficiency                 refused            0.62\n",
		"2xMPI 1xOpenMP (a.json): No POP metrics: " + why + ".\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "1.50") {
		t.Errorf("text shows the refused run's elapsed time:\n%s", text)
	}
	md := renderScaling(t, FormatMarkdown, s, ScalingOptions{})
	if !strings.Contains(md, "| Global efficiency | refused | 0.62 |") || !strings.Contains(md, "- 2xMPI 1xOpenMP (`a.json`): no POP metrics: "+why+".") {
		t.Errorf("markdown:\n%s", md)
	}
	rows, err := csv.NewReader(strings.NewReader(renderScaling(t, FormatCSV, s, ScalingOptions{}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var refused int
	for _, r := range rows {
		if r[3] == "a.json" {
			refused++
			if r[4] != "refused" || r[5] != why {
				t.Errorf("csv row of the refused run: %q", r)
			}
		}
	}
	if refused != 1 {
		t.Errorf("%d csv rows of the refused run, want 1: %q", refused, rows)
	}
	var doc struct {
		Regions []struct {
			Runs []struct {
				Source    string
				Reference bool
				Refused   string
				Metrics   map[string]float64
			}
		}
	}
	if err := json.Unmarshal([]byte(renderScaling(t, FormatJSON, s, ScalingOptions{})), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Regions[0].Runs
	if r[0].Refused != why || len(r[0].Metrics) != 0 || r[0].Reference || !r[1].Reference || r[1].Refused != "" || len(r[1].Metrics) == 0 {
		t.Errorf("json runs %+v", r)
	}
}
