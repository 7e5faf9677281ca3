package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/popmon/popmon/pop"
)

func renderAll(t *testing.T, format string, file, models string, opts Options) string {
	t.Helper()
	reps, m := loadModels(t, file, models)
	var b bytes.Buffer
	if err := RenderAll(&b, format, withRuns(reps, m), opts); err != nil {
		t.Fatalf("RenderAll %s: %v", format, err)
	}
	return b.String()
}

func TestJSONModels(t *testing.T) {
	reps, _ := loadModels(t, "hybrid_2nodes.json", "all")
	out := renderAll(t, FormatJSON, "hybrid_2nodes.json", "all", Options{})
	var doc struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
		Source  string `json:"source"`
		Model   string `json:"model"`
		Models  []struct {
			Model   string `json:"model"`
			Regions []struct {
				Name        string             `json:"name"`
				Metrics     map[string]float64 `json:"metrics"`
				NotMeasured map[string]string  `json:"not_measured"`
			} `json:"regions"`
		} `json:"models"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != JSONFormat || doc.Version != JSONVersion || doc.Source != "hybrid_2nodes.json" || doc.Model != "" || len(doc.Models) != 3 {
		t.Fatalf("doc = %+v", doc)
	}
	for i, got := range doc.Models {
		want := reps[i]
		if got.Model != string(want.Model) || len(got.Regions) != len(want.Regions) {
			t.Fatalf("models[%d] = %s with %d regions", i, got.Model, len(got.Regions))
		}
		for k, r := range got.Regions {
			w := &want.Regions[k]
			measured, notMeasured := 0, 0
			for _, x := range w.Metrics {
				if !x.Measured() {
					notMeasured++
					if r.NotMeasured[x.ID] != x.NotMeasured {
						t.Errorf("%s %s: not_measured %s = %q, want %q", got.Model, r.Name, x.ID, r.NotMeasured[x.ID], x.NotMeasured)
					}
					if _, ok := r.Metrics[x.ID]; ok {
						t.Errorf("%s %s: %s not measured but in metrics", got.Model, r.Name, x.ID)
					}
					continue
				}
				measured++
				if r.Metrics[x.ID] != x.Value {
					t.Errorf("%s %s: %s = %v, want %v", got.Model, r.Name, x.ID, r.Metrics[x.ID], x.Value)
				}
			}
			if len(r.Metrics) != measured || len(r.NotMeasured) != notMeasured {
				t.Errorf("%s %s: %d metrics, %d not measured; want %d, %d", got.Model, r.Name, len(r.Metrics), len(r.NotMeasured), measured, notMeasured)
			}
		}
	}
	if !strings.Contains(out, `"not_measured": {
            "serialisation_efficiency": "needs a trace: measure with popmon run --trace, or report a Paraver trace",
            "transfer_efficiency": "needs a trace: measure with popmon run --trace, or report a Paraver trace"
          }`) {
		t.Errorf("pop-additive lacks its not_measured object:\n%s", out)
	}
	// A single model has no "not_measured" where everything is measured.
	if one := renderAll(t, FormatJSON, "hybrid_2nodes.json", "pop-hybrid", Options{}); strings.Contains(one, "not_measured") || !strings.Contains(one, `"model": "pop-hybrid"`) {
		t.Errorf("pop-hybrid json:\n%s", one)
	}
}

func TestCSVModels(t *testing.T) {
	out := renderAll(t, FormatCSV, "openmp_only.json", "all", Options{Region: "stencil"})
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "model,region,metric,value" {
		t.Errorf("header = %v", rows[0])
	}
	perModel := map[string]int{}
	for _, row := range rows[1:] {
		perModel[row[0]]++
		if row[1] != "stencil" {
			t.Errorf("row %v: region filter ignored", row)
		}
		if _, err := strconv.ParseFloat(row[3], 64); err != nil {
			t.Errorf("row %v: %v", row, err)
		}
	}
	// elapsed_s + talp 5, pop-hybrid 6 (no MPI), pop-additive 5 (no MPI branch).
	if perModel["talp"] != 6 || perModel["pop-hybrid"] != 7 || perModel["pop-additive"] != 6 {
		t.Errorf("rows per model = %v", perModel)
	}
	// Not-measured metrics have no row; a single model keeps the 3 columns.
	one := renderAll(t, FormatCSV, "hybrid_2nodes.json", "pop-additive", Options{})
	if !strings.HasPrefix(one, "region,metric,value\nGlobal,elapsed_s,10\nGlobal,parallel_efficiency,") || strings.Contains(one, "serialisation") {
		t.Errorf("pop-additive csv:\n%s", one)
	}
}

func TestTextModels(t *testing.T) {
	out := renderAll(t, FormatText, "hybrid_2nodes.json", "all", Options{Region: "solve"})
	for _, want := range []string{
		"popmon POP metrics, model talp (", "\npopmon POP metrics, model pop-hybrid (", "\npopmon POP metrics, model pop-additive (",
		"Hybrid Parallel efficiency ........ 0.77\n",
		"  OpenMP Parallel efficiency ...... 0.94\n    Load Balance .................. 0.94\n    Communication efficiency ...... 0.99\n",
		"      Serialisation efficiency .... not measured: needs a trace: measure with popmon run --trace, or report a Paraver trace\n",
		"  Thread efficiency ............... 0.95\n    OpenMP region efficiency ...... 0.98\n    Serial region efficiency ...... 0.97\n",
		"OpenMP:    LLVM OMP version: 5.0.20140926 · 4 threads per process\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// The run header, MPI calls and warnings appear once; each model's
	// region once.
	for want, n := range map[string]int{"Command:": 1, "Top MPI calls": 1, "Warnings\n": 1, "### Name: solve\n": 3, "### Name: Global": 0} {
		if got := strings.Count(out, want); got != n {
			t.Errorf("%q appears %d times, want %d:\n%s", want, got, n, out)
		}
	}
	// OpenMP not measured: said plainly, with the reason, in the header;
	// the tree refers to it.
	out = renderAll(t, FormatText, "hybrid_libgomp.json", "talp", Options{})
	for _, want := range []string{
		"OpenMP:    not measured: GNU libgomp has no OMPT: run with popmon run --openmp=libomp\n",
		"  OpenMP Parallel efficiency ...... not measured: see OpenMP above\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Serialization efficiency") {
		t.Errorf("OpenMP branch shown although not measured:\n%s", out)
	}
}

func TestRenderAllErrors(t *testing.T) {
	reps, m := loadModels(t, "hybrid_2nodes.json", "all")
	tests := []struct {
		name, format string
		reps         []*pop.Report
		opts         Options
		want         string
	}{
		{"talp-json of all", FormatTALPJSON, reps, Options{}, "render talp-json report: talp-json has DLB/TALP's metrics only (model talp), not model pop-hybrid: use --format json"},
		{"talp-json of one other model", FormatTALPJSON, reps[2:], Options{}, "not model pop-additive"},
		{"talp-json of two talp reports", FormatTALPJSON, []*pop.Report{reps[0], reps[0]}, Options{}, "talp-json holds one report, not 2"},
		{"unknown format", "xml", reps, Options{}, `unknown report format "xml"`},
		{"unknown region", FormatJSON, reps, Options{Region: "x"}, `render json report: no region "x"`},
		{"unknown region csv", FormatCSV, reps, Options{Region: "x"}, `no region "x"`},
		{"unknown region text", FormatText, reps, Options{Region: "x"}, `no region "x"`},
		{"none", FormatText, nil, Options{}, "no report"},
		{"nil report", FormatCSV, []*pop.Report{reps[0], nil}, Options{}, "no report"},
	}
	for _, tt := range tests {
		err := RenderAll(&bytes.Buffer{}, tt.format, withRuns(tt.reps, m), tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	// Render refuses talp-json of another model too.
	if err := Render(&bytes.Buffer{}, FormatTALPJSON, withRun(reps[1], m), Options{}); err == nil || !strings.Contains(err.Error(), "not model pop-hybrid") {
		t.Errorf("Render talp-json of pop-hybrid: err = %v", err)
	}
	for _, f := range []string{FormatText, FormatJSON, FormatCSV} {
		if err := RenderAll(failWriter{}, f, withRuns(reps, m), Options{}); err == nil || !strings.Contains(err.Error(), "pipe closed") {
			t.Errorf("%s: err = %v, want the write error", f, err)
		}
	}
}
