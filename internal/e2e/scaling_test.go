package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScalingOwnRuns: popmon's own runs of imbalance at 1, 2 and 4 ranks give
// the scaling table of POP-METRICS.md §6 with hand-calculated values. Rank r
// works (r+1)·K per iteration, so with P ranks: T = N·P·K,
// ΣU = N·K·P(P+1)/2, PE = LB = (P+1)/(2P). Against P = 1 (strong scaling):
// computation scalability = ΣU₁/ΣU = 2/(P(P+1)), speedup = T₁/T = 1/P,
// global efficiency = PE × computation scalability.
func TestScalingOwnRuns(t *testing.T) {
	impl := impls(t)[0]
	dir := t.TempDir()
	for _, np := range []int{1, 2, 4} {
		r := measureRun(t, impl, np, "imbalance", "50", "4")
		copyFile(t, r.file, filepath.Join(dir, fmt.Sprintf("run%d.json", np)))
	}
	so, se, code := popmon(t, nil, "scaling", "--format", "json", filepath.Join(dir, "run1.json"), filepath.Join(dir, "run2.json"), filepath.Join(dir, "run4.json"))
	if code != 0 {
		t.Fatalf("scaling: exit %d: %s", code, se)
	}
	var table struct {
		Mode    string `json:"mode"`
		Regions []struct {
			Name string `json:"name"`
			Runs []struct {
				CPUs    int                `json:"cpus"`
				Metrics map[string]float64 `json:"metrics"`
			} `json:"runs"`
		} `json:"regions"`
	}
	if err := json.Unmarshal([]byte(so), &table); err != nil {
		t.Fatalf("%v\n%s", err, so)
	}
	if table.Mode != "strong" || len(table.Regions) == 0 || table.Regions[0].Name != "Global" {
		t.Fatalf("table %+v", table)
	}
	for _, run := range table.Regions[0].Runs {
		p := float64(run.CPUs)
		pe := (p + 1) / (2 * p)
		cs := 2 / (p * (p + 1))
		for _, c := range []struct {
			id        string
			want, tol float64
		}{
			{"parallel_efficiency", pe, effTol},
			{"mpi_load_balance", pe, effTol},
			{"computation_scalability", cs, 0.02},
			{"speedup", 1 / p, 0.05 / p},
			{"global_efficiency", pe * cs, 0.02},
			{"speedup_efficiency", 1 / (p * p), 0.05 / p},
		} {
			got, ok := run.Metrics[c.id]
			if !ok || got < c.want-c.tol || got > c.want+c.tol {
				t.Errorf("P=%d: %s = %v (present %v), want %.4f ± %.3f", run.CPUs, c.id, got, ok, c.want, c.tol)
			}
		}
	}
}

// TestCheckRegression: `popmon check` passes an unchanged run and fails
// (exit 1) a run with a designed regression (load imbalance), naming it.
func TestCheckRegression(t *testing.T) {
	impl := impls(t)[0]
	base := measureRun(t, impl, 2, "balanced", "300", "2")
	same := measureRun(t, impl, 2, "balanced", "300", "2")
	worse := measureRun(t, impl, 2, "imbalance", "100", "3")
	so, se, code := popmon(t, nil, "check", "--baseline", base.file, same.file)
	if code != 0 {
		t.Errorf("unchanged run: exit %d\n%s%s", code, so, se)
	}
	so, se, code = popmon(t, nil, "check", "--baseline", base.file, worse.file)
	if code != 1 {
		t.Errorf("regressed run: exit %d, want 1\n%s%s", code, so, se)
	}
	if !strings.Contains(so+se, "mpi_load_balance") {
		t.Errorf("the table does not name the load balance drop:\n%s%s", so, se)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
