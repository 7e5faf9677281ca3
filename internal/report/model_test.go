package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/model"
)

// modelFixture: runs of T(x) = 10·(0.2 + 0.8/x) at 1, 2, 4 and 8 CPUs,
// 8 held out and 16 predicted; one MPI call with a hostile name.
func modelFixture(t *testing.T) *model.Result {
	t.Helper()
	var pts []model.Point
	for _, x := range []int{1, 2, 4, 8} {
		el := 10 * (0.2 + 0.8/float64(x))
		pts = append(pts, model.Point{CPUs: x, Processes: x, Source: "=cmd|run.json", ElapsedS: el, UsefulS: 10,
			Parts: []model.Part{{Kind: model.PartMPI, Name: "MPI_\x1b[31mBad", PerProcessS: 0.1 * float64(x)}}})
	}
	r, err := model.Fit(pts, model.Options{Models: []string{"runtime"}, Holdout: []int{8}, Predict: []int{16}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRenderModel(t *testing.T) {
	r := modelFixture(t)
	render := func(format string) string {
		var b bytes.Buffer
		if err := RenderModel(&b, format, r, ModelInfo{Region: "Global", ModeReason: "given"}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	text := render(FormatText)
	// s = 0.2; T(8) = 10·(0.2 + 0.1) = 3 s, exactly the measurement;
	// T(16) = 10·(0.2 + 0.05) = 2.5 s.
	for _, want := range []string{"s = 0.2,", "3.000 s ±0.000 (+0.0 %)", "2.500 s", "NON-SCALABLE", `MPI_\x1b[31mBad`} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\x1b") {
		t.Error("text writes a raw escape character from a name")
	}
	rows, err := csv.NewReader(strings.NewReader(render(FormatCSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range rows {
		if len(row) != 5 {
			t.Fatalf("row %q: want 5 cells", row)
		}
		if row[0] == "run" && strings.HasPrefix(row[1], "=") {
			t.Errorf("formula cell not neutralised: %q", row)
		}
		if row[0] == "prediction" && row[1] == "runtime-amdahl" && row[2] == "16" && row[3] == "time_s" {
			found = row[4] == "2.5" || strings.HasPrefix(row[4], "2.49999") || strings.HasPrefix(row[4], "2.50000")
		}
	}
	if !found {
		t.Errorf("csv lacks prediction,runtime-amdahl,16,time_s,2.5:\n%v", rows)
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(render(FormatJSON)), &j); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"format", "region", "runs", "curves", "predictions", "kernels", "fitted_cpus", "holdout_cpus"} {
		if _, ok := j[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if err := RenderModel(&bytes.Buffer{}, "xml", r, ModelInfo{}); err == nil {
		t.Error("unknown format accepted")
	}
}
