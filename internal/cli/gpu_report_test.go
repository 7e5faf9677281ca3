package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGPUCommands runs report, scaling and check on GPU measurements: a
// popmon measurement with per-device accounts (measure/testdata) and DLB's
// self-consistent GPU sample, whose written efficiencies the report
// reproduces.
func TestGPUCommands(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "measure", "testdata", "gpu_devices.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "base.json")
	worse := filepath.Join(dir, "worse.json")
	os.WriteFile(base, src, 0o644)
	// Rank 1's GPU does less in Global: device load balance 0.75 → 0.67.
	os.WriteFile(worse, []byte(strings.Replace(string(src),
		`"gpu_devices": [{"device": 1, "useful_ns": 150000000, "active_ns": 250000000}]`,
		`"gpu_devices": [{"device": 1, "useful_ns": 100000000, "active_ns": 250000000}]`, 1)), 0o644)
	dlb := filepath.Join("..", "..", "..", "shared", "data", "talp-json", "jsons", "unit-tests", "dlb_1gpu_2mpi.json")
	type cliCase struct {
		name string
		args []string
		code int
		want []string
	}
	cases := []cliCase{
		{"report blocks", []string{"report", base}, 0, []string{"### Host\nParallel efficiency ............... 0.50\n",
			"### NVIDIA Device\nParallel efficiency ............... 0.20\n  Load Balance .................... 0.75\n",
			"GPU:       2 × NVIDIA H100 80GB HBM3", "Top GPU kernels", "GPU memory operations", "GPU idle gaps"}},
		{"report csv", []string{"report", "--format", "csv", base}, 0, []string{"Global,gpu_load_balance,0.75\n"}},
		{"check gates on the device tree", []string{"check", "--baseline", base, worse}, 1,
			[]string{"gpu_load_balance", "0.75", "0.67", "REGRESSION"}},
		{"check one GPU metric", []string{"check", "--baseline", base, "--metric", "gpu_orchestration_efficiency", worse}, 0,
			[]string{"2 values compared (max drop 0.05): 0 regression(s)"}},
		{"scaling rows", []string{"scaling", base, worse}, 0, []string{"GPU Parallel efficiency", "Orchestration efficiency"}},
	}
	if _, err := os.Stat(dlb); err == nil {
		cases = append(cases,
			cliCase{"DLB sample", []string{"report", dlb}, 0, []string{"Parallel efficiency ............... 0.77\n",
				"  Device offload efficiency ....... 0.77\n", "### NVIDIA Device\nParallel efficiency ............... 0.07\n  Load Balance .................... 1.00\n  Communication efficiency ........ 0.54\n  Orchestration efficiency ........ 0.12\n"}},
			cliCase{"DLB sample talp-json", []string{"report", "--format", "talp-json", dlb}, 0, []string{`"gpuUsefulTime": 413959838`,
				`"gpuCommunicationTime": 351761869`, `"maxGpuActiveTime": 765721707`, `"gpuLoadBalance": 1.0`}},
			cliCase{"DLB sample scaling", []string{"scaling", dlb, filepath.Join(filepath.Dir(dlb), "dlb_2gpu_2mpi.json")}, 0,
				[]string{"2xMPI 1xOpenMP 1xGPU", "2xMPI 1xOpenMP 2xGPU", "GPU Parallel efficiency"}})
	}
	for _, c := range cases {
		code, out, errs := runCLI(c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, code, c.code, out, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, out)
			}
		}
	}
}
