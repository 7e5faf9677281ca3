package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// modelJSONOut is the part of `popmon model --format json` the tests read.
type modelJSONOut struct {
	Format  string `json:"format"`
	Fitted  []int  `json:"fitted_cpus"`
	Holdout []int  `json:"holdout_cpus"`
	Curves  []struct {
		ID     string             `json:"id"`
		Params map[string]float64 `json:"params"`
		Err    string             `json:"error"`
	} `json:"curves"`
	Predictions []struct {
		CPUs      int      `json:"cpus"`
		MeasuredS *float64 `json:"measured_s"`
		Models    []struct {
			Curve   string   `json:"curve"`
			TimeS   float64  `json:"time_s"`
			Speedup float64  `json:"speedup"`
			RelErr  *float64 `json:"rel_err"`
		} `json:"models"`
	} `json:"predictions"`
	Components *struct {
		Parts []struct {
			ID  string `json:"id"`
			Fit struct {
				Law string `json:"law"`
			} `json:"fit"`
			Constant bool `json:"held_constant"`
			Holdout  []struct {
				CPUs      int     `json:"cpus"`
				Predicted float64 `json:"predicted"`
				Measured  float64 `json:"measured"`
			} `json:"holdout"`
		} `json:"parts"`
		Communication struct {
			Missing string `json:"missing"`
		} `json:"communication"`
		Assumptions []string `json:"assumptions"`
	} `json:"components"`
	Kernels []struct {
		Kind        string `json:"kind"`
		Name        string `json:"name"`
		NonScalable bool   `json:"non_scalable"`
	} `json:"kernels"`
}

func (o *modelJSONOut) time(t *testing.T, curve string, cpus int) float64 {
	t.Helper()
	for _, p := range o.Predictions {
		for _, m := range p.Models {
			if p.CPUs == cpus && m.Curve == curve {
				return m.TimeS
			}
		}
	}
	t.Fatalf("no prediction of %s at %d CPUs", curve, cpus)
	return 0
}

// TestModelEPOCH is issue 15's done-when on the EPOCH traces of
// internal/paraver/testdata (imported once into a temporary folder):
// fitted on 1, 2, 4 processes with 8 and 16 held out, the predictions are
// within 0.5 % of the independent reference of
// internal/model/testdata/reference.py (pure python3 from the basicanalysis
// formulas and modelfactors.csv: amdahl factors 3.506041 s and 2.238212 s,
// runtime Amdahl s = 0.038749, 3.479809 s and 2.164177 s; pipe 3.060497 s
// and 1.542044 s; linear 2.741431 s and 1.370715 s), the component model's
// instructions at 16 within 3.1 % of the measured 93,158,874,793, and the
// non-scalable list names MPI_Bcast and MPI_Finalize, not useful
// computation.
func TestModelEPOCH(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"1", "2", "4", "8", "16"} {
		trace := filepath.Join("..", "paraver", "testdata", "epoch_"+p+"proc.prv.gz")
		if code, _, errs := runMain("import", "-o", filepath.Join(dir, "epoch_"+p+".json"), trace); code != 0 {
			t.Fatalf("import %s: exit %d: %s", trace, code, errs)
		}
	}
	run := func(t *testing.T, args ...string) *modelJSONOut {
		t.Helper()
		code, out, errs := runMain(append(append([]string{"model", "--format", "json"}, args...), dir)...)
		if code != 0 {
			t.Fatalf("popmon model %v: exit %d: %s", args, code, errs)
		}
		var o modelJSONOut
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatalf("JSON: %v\n%s", err, out)
		}
		return &o
	}
	within := func(t *testing.T, what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got/want-1) > tol {
			t.Errorf("%s = %.6f, want %.6f within %.2g %%", what, got, want, tol*100)
		}
	}

	t.Run("all models", func(t *testing.T) {
		o := run(t, "--holdout", "8,16")
		if o.Format != "popmon-model" || len(o.Fitted) != 3 || len(o.Holdout) != 2 {
			t.Fatalf("format %q fitted %v holdout %v", o.Format, o.Fitted, o.Holdout)
		}
		for _, c := range []struct {
			curve   string
			t8, t16 float64
		}{
			{"factors-amdahl", 3.506041, 2.238212},
			{"runtime-amdahl", 3.479809, 2.164177},
			{"factors-pipe", 3.060497, 1.542044},
			{"factors-linear", 2.741431, 1.370715},
		} {
			within(t, c.curve+" T(8)", o.time(t, c.curve, 8), c.t8, 0.005)
			within(t, c.curve+" T(16)", o.time(t, c.curve, 16), c.t16, 0.005)
		}
		for _, c := range o.Curves {
			if c.ID == "runtime-amdahl" {
				within(t, "serial fraction s", c.Params["s"], 0.038749, 0.005)
			}
		}
		if o.Components == nil {
			t.Fatal("no component model")
		}
		for _, p := range o.Components.Parts {
			switch p.ID {
			case "instructions":
				if p.Fit.Law != "log2" && p.Fit.Law != "sqrt" {
					t.Errorf("instruction law %s, want log2 or sqrt", p.Fit.Law)
				}
				if len(p.Holdout) != 2 || p.Holdout[1].CPUs != 16 {
					t.Fatalf("instruction holdout %+v", p.Holdout)
				}
				within(t, "instructions at 16", p.Holdout[1].Predicted, 93158874793, 0.031)
			case "ipc":
				if !p.Constant || len(p.Holdout) != 2 {
					t.Errorf("IPC: %+v", p)
				} else {
					within(t, "IPC measured at 16", p.Holdout[1].Measured, 1.540, 0.001)
				}
			}
		}
		if !strings.Contains(strings.Join(o.Components.Assumptions, " "), "IPC and frequency are held constant") {
			t.Errorf("assumptions do not state IPC/frequency held constant: %q", o.Components.Assumptions)
		}
		if !strings.Contains(o.Components.Communication.Missing, "no bytes per call") {
			t.Errorf("communication fits should say bytes are missing: %q", o.Components.Communication.Missing)
		}
		flagged := map[string]bool{}
		for _, k := range o.Kernels {
			flagged[k.Name] = k.NonScalable
		}
		if !flagged["MPI_Bcast"] || !flagged["MPI_Finalize"] || flagged["useful computation"] {
			t.Errorf("non-scalable: %v, want MPI_Bcast and MPI_Finalize, not useful computation", flagged)
		}
	})

	t.Run("one model", func(t *testing.T) {
		o := run(t, "--holdout", "8,16", "--fit-model", "pipe", "--predict", "32")
		if len(o.Curves) != 1 || o.Curves[0].ID != "factors-pipe" || o.Components != nil {
			t.Fatalf("curves %+v", o.Curves)
		}
		within(t, "pipe T(16)", o.time(t, "factors-pipe", 16), 1.542044, 0.0005)
		if p := o.Predictions[2]; p.CPUs != 32 || p.MeasuredS != nil {
			t.Errorf("prediction at 32: %+v", p)
		}
	})

	t.Run("text", func(t *testing.T) {
		code, out, errs := runMain("model", "--holdout", "8,16", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, want := range []string{"3.506 s", "(-0.2 %)", "2.238 s", "(-4.3 %)", "3.480 s", "(-1.0 %)", "2.164 s", "(-7.5 %)",
			"s = 0.03875", "held constant at 1.867", "measured 1.540 (+21.3 %)", "MPI_Bcast", "NON-SCALABLE", "no bytes per call"} {
			if !strings.Contains(out, want) {
				t.Errorf("text lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("communication from the traces", func(t *testing.T) {
		// Read from the traces themselves, the component model fits the
		// point-to-point costs per protocol regime (the research note's
		// rendezvous fit on these traces: R² 0.99) — once
		// paraver.ReadTrace exists; before, it says why it did not.
		args := []string{"model", "--format", "json", "--fit-model", "components", "--holdout", "8,16"}
		for _, p := range []string{"1", "2", "4", "8", "16"} {
			args = append(args, filepath.Join("..", "paraver", "testdata", "epoch_"+p+"proc.prv.gz"))
		}
		code, out, errs := runMain(args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var o struct {
			Notes      []string `json:"notes"`
			Components struct {
				Communication struct {
					Fits []struct {
						ID string  `json:"id"`
						R2 float64 `json:"r2"`
					} `json:"fits"`
				} `json:"communication"`
			} `json:"components"`
		}
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Notes) > 0 && strings.Contains(strings.Join(o.Notes, " "), "not implemented") {
			t.Skipf("paraver.ReadTrace not implemented on this branch: %s", o.Notes[0])
		}
		found := false
		for _, f := range o.Components.Communication.Fits {
			if f.ID == "p2p-rendezvous" {
				found = true
				if f.R2 < 0.95 {
					t.Errorf("rendezvous fit R² %.3f, want ≥ 0.95", f.R2)
				}
			}
		}
		if !found {
			t.Errorf("no p2p-rendezvous fit: %+v (notes %q)", o.Components.Communication.Fits, o.Notes)
		}
	})

	t.Run("pages draw the model", func(t *testing.T) {
		// popmon pages fits the default model of popmon model on the
		// experiment and labels its predictions at 2× and 4× the largest
		// run; the labels must be the speedups popmon model predicts.
		o := run(t, "--fit-model", "amdahl", "--predict", "32,64")
		site := filepath.Join(t.TempDir(), "site")
		if code, out, errs := runMain("pages", "-i", dir, "-o", site); code != ExitOK {
			t.Fatalf("pages: exit %d\n%s%s", code, out, errs)
		}
		page, err := os.ReadFile(filepath.Join(site, filepath.Base(dir), "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), "model factor projection (amdahl) fitted on 5 configurations") {
			t.Error("the scaling page does not say which model it drew")
		}
		found := 0
		for _, p := range o.Predictions {
			for _, m := range p.Models {
				if m.Curve != "factors-amdahl" {
					continue
				}
				label := fmt.Sprintf(`data-metric="predicted">%.2f<`, m.Speedup)
				if !strings.Contains(string(page), label) {
					t.Errorf("%d CPUs: no label %s on the page", p.CPUs, label)
				}
				found++
			}
		}
		if found != 2 {
			t.Errorf("%d amdahl predictions, want 2", found)
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--holdout", "2,4,8,16"}, "at least 3"},
			{[]string{"--holdout", "3"}, "no run has 3 CPUs"},
			{[]string{"--predict", "x"}, "give CPU counts"},
			{[]string{"--fit-model", "cubic"}, `unknown model "cubic"`},
			{[]string{"--threshold", "2"}, "give a time share"},
			{[]string{"--format", "xml"}, `unknown format "xml"`},
		} {
			code, _, errs := runMain(append(append([]string{"model"}, c.args...), dir)...)
			if code != ExitUsage || !strings.Contains(errs, c.want) {
				t.Errorf("%v: exit %d, stderr %q, want usage error %q", c.args, code, errs, c.want)
			}
		}
	})
}
