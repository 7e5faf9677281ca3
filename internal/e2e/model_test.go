package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// TestModelAmdahl: examples/amdahl (rank 0 works S alone, then every rank
// W/P; T(P) = N·(S + W/P), serial fraction s = S/(S+W) = 200/1000 = 0.2)
// measured at 1, 2 and 4 ranks with Open MPI gives `popmon model` a
// runtime Amdahl fit with s = 0.2 ± 0.02, whose prediction at 8 ranks
// (designed 0.9 s) is within 5 % of a measured 8-rank run (held out of the
// fit with --holdout 8).
func TestModelAmdahl(t *testing.T) {
	var impl *mpiImpl
	for _, c := range impls(t) {
		if c.name == "openmpi" {
			c := c
			impl = &c
		}
	}
	if impl == nil {
		t.Skip("needs Open MPI (mpicc.openmpi, mpirun.openmpi)")
	}
	dir := t.TempDir()
	var files []string
	for _, np := range []int{1, 2, 4, 8} {
		r := measureRun(t, *impl, np, "amdahl")
		f := filepath.Join(dir, fmt.Sprintf("amdahl%d.json", np))
		copyFile(t, r.file, f)
		files = append(files, f)
	}
	so, se, code := popmon(t, nil, append([]string{"model", "--format", "json", "--fit-model", "runtime,amdahl", "--holdout", "8"}, files...)...)
	if code != 0 {
		t.Fatalf("popmon model: exit %d: %s", code, se)
	}
	var out struct {
		Curves []struct {
			ID     string             `json:"id"`
			Params map[string]float64 `json:"params"`
		} `json:"curves"`
		Predictions []struct {
			CPUs      int     `json:"cpus"`
			MeasuredS float64 `json:"measured_s"`
			Models    []struct {
				Curve  string  `json:"curve"`
				TimeS  float64 `json:"time_s"`
				RelErr float64 `json:"rel_err"`
			} `json:"models"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(so), &out); err != nil {
		t.Fatalf("%v\n%s", err, so)
	}
	var s float64 = math.NaN()
	for _, c := range out.Curves {
		if c.ID == "runtime-amdahl" {
			s = c.Params["s"]
		}
	}
	if !(math.Abs(s-0.2) <= 0.02) {
		t.Errorf("fitted serial fraction s = %.4f, want 0.2 ± 0.02\n%s", s, so)
	}
	if len(out.Predictions) != 1 || out.Predictions[0].CPUs != 8 {
		t.Fatalf("predictions %+v", out.Predictions)
	}
	p := out.Predictions[0]
	if math.Abs(p.MeasuredS/0.9-1) > 0.10 {
		t.Errorf("measured T(8) = %.3f s, designed 0.9 s (±10 %%)", p.MeasuredS)
	}
	for _, m := range p.Models {
		if m.Curve == "runtime-amdahl" {
			if math.Abs(m.RelErr) > 0.05 {
				t.Errorf("predicted T(8) = %.3f s against measured %.3f s: %+.1f %%, want within 5 %%", m.TimeS, p.MeasuredS, m.RelErr*100)
			}
			t.Logf("s = %.4f; T(8) predicted %.3f s, measured %.3f s (%+.2f %%)", s, m.TimeS, p.MeasuredS, m.RelErr*100)
		}
	}
}
