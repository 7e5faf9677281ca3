package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// counterPeriod is the sampling period of the counter tests: short enough
// that a region of 100 ms loses at most 0.2 % to the samples it shares with
// its neighbours.
const counterPeriod = "POPMON_GPU_COUNTERS_PERIOD_US=100"

// TestGPUFakeCounters: the device counters of examples/gpu/devcounters.h on
// the fake stack, whose kernels have designed counters (fake_counters.c):
// per region, the warp instructions (±2 %), DRAM bytes (±2 %), achieved
// occupancy (±0.03) and SM frequency (±1 %) that the design fixes, so the
// samples are attributed to the regions they were taken in; the file names
// the metrics read, the period, each device's SMs; the report has the
// device block's computational metrics. Three times: with the SM sums; on
// a chip that counts the sums in 3 passes, where the per-SM averages of
// one pass are read and summed over the SMs; and on one that reads SM
// active cycles with no form of elapsed cycles but their average in one
// pass (each alone in one: an H200, GH100, read the first metrics popmon
// chose in 2 or 3 passes), where the active cycles' average is read.
func TestGPUFakeCounters(t *testing.T) {
	needGPUMeasurement(t)
	for _, impl := range impls(t) {
		for _, v := range []struct {
			name, env, instructions, active string
		}{
			{"sums", "", "sm__inst_executed.sum", "sm__cycles_active.sum"},
			{"averages", "FAKECUPTI_PM_MULTIPASS=sm__inst_executed.sum,sm__cycles_active.sum,sm__cycles_elapsed.sum,sm__warps_active.sum",
				"sm__inst_executed_realtime.avg", "sm__cycles_active.avg"},
			{"pairs", "FAKECUPTI_PM_PAIRS=sm__cycles_active.sum:sm__cycles_elapsed.sum,sm__cycles_active.sum:sm__cycles_elapsed.avg," +
				"sm__cycles_active.sum:gpc__cycles_elapsed.max", "sm__inst_executed.sum", "sm__cycles_active.avg"},
		} {
			t.Run(impl.name+"/"+v.name, func(t *testing.T) {
				dir := fakeCUDA(t, impl.mpicc)
				extra := []string{counterPeriod}
				if v.env != "" {
					extra = append(extra, v.env)
				}
				o := runOpts{env: fakeEnv(dir, extra...),
					flags: []string{"--gpu", "on", "--gpu-counters", "on"}, dir: dir}
				r := measureRunWith(t, impl, o, 1, "gpu_counters", "--reps", "5")
				c := r.m.GPU.Counters
				if c == nil || !c.Available || c.Method != measure.GPUCountersMethodPMSampling || c.PeriodNS != 100000 ||
					c.Metrics["instructions"] != v.instructions || c.Metrics["sm_active_cycles"] != v.active ||
					c.Metrics["dram_write_bytes"] != "dram__bytes_write.sum" || c.Reason != "" {
					t.Fatalf("gpu.counters = %+v", c)
				}
				if len(r.m.GPUDevices) != 1 || !r.m.GPUDevices[0].Counters || r.m.GPUDevices[0].SMs != 132 || r.m.GPUDevices[0].MaxWarpsPerSM != 64 {
					t.Errorf("gpu_devices = %+v, want one sampled device of 132 SMs, 64 warps", r.m.GPUDevices)
				}
				got := reportMetrics(t, r.file)
				checkExpect(t, r.stdout, got)
				for _, l := range strings.Split(r.stderr, "\n") {
					if strings.HasPrefix(l, "popmon: ") && strings.Contains(l, "counter") {
						t.Errorf("a warning about counters: %s", l)
					}
				}
				so, _, _ := popmon(t, nil, "report", "--region", "occ_quarter", r.file)
				for _, want := range []string{"device counters sampled every 100.00 µs (CUPTI PM sampling)", "Device computational metrics",
					"Average device IPC", "Average SM frequency ............ 1.7", "Achieved occupancy .............. 0.25"} {
					if !strings.Contains(so, want) {
						t.Errorf("report lacks %q:\n%s", want, so)
					}
				}
			})
		}
	}
}

// checkExpect compares the program's "expect REGION METRIC VALUE TOL"
// lines with the report's values (region/metric).
func checkExpect(t *testing.T, stdout string, got map[string]float64) {
	t.Helper()
	n := 0
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != "expect" {
			continue
		}
		n++
		var want, tol float64
		if _, err := fmt.Sscan(f[3], &want); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if _, err := fmt.Sscan(f[4], &tol); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		v, ok := got[f[1]+"/"+f[2]]
		if !ok || math.Abs(v-want) > tol+1e-9 {
			t.Errorf("%s %s = %v (present %v), want %v ± %v", f[1], f[2], v, ok, want, tol)
		}
	}
	if n == 0 {
		t.Fatalf("no expect lines in the program's output:\n%s", stdout)
	}
}

// TestGPUFakeCountersAbsent: where device counters cannot be read, the
// file and the report say why in one sentence, no device computational
// metric is given (never zeros), the device times are still measured,
// and --gpu-counters on says it once on stderr; an optional quantity the
// chip cannot count leaves only its own metrics out, and a chip that
// samples on its sys clock only (Turing, A100) is sampled that way.
func TestGPUFakeCountersAbsent(t *testing.T) {
	needGPUMeasurement(t)
	impl := impls(t)[0]
	dir := fakeCUDA(t, impl.mpicc)
	for _, c := range []struct {
		name  string
		env   []string
		mode  string
		why   string   // the reason ("" : counters read)
		has   []string // metrics of region instr
		lacks []string
	}{
		{"privileges", []string{"FAKECUPTI_PM_ENABLE_RESULT=35"}, "on", "needs administrator rights on this machine (NVreg_RestrictProfilingToAdminUsers=1", nil, []string{"gpu_ipc"}},
		{"mig", []string{"FAKECUPTI_PM_ENABLE_RESULT=43"}, "auto", "is a MIG instance", nil, []string{"gpu_ipc"}},
		{"vgpu", []string{"FAKECUPTI_PM_ENABLE_RESULT=40"}, "auto", "virtual GPU whose hypervisor", nil, []string{"gpu_ipc"}},
		{"unsupported", []string{"FAKECUPTI_PM_METRICS=none"}, "on", "does not support CUPTI's PM sampling", nil, []string{"gpu_ipc"}},
		{"off", nil, "off", "GPU counters were turned off (--gpu-counters off)", nil, []string{"gpu_ipc"}},
		{"no active cycles", []string{"FAKECUPTI_PM_METRICS=sm__inst_executed.sum,sm__cycles_elapsed.sum"}, "auto",
			"no PM sampling metric for SM active cycles on this GPU (chip FK100", nil, []string{"gpu_ipc"}},
		{"clock", []string{"FAKECUPTI_PM_CLOCK_SKEW_S=100000"}, "auto", "sample times are not on the host's clock", nil, []string{"gpu_ipc"}},
		{"no dram", []string{"FAKECUPTI_PM_METRICS=sm__inst_executed.sum,sm__cycles_active.sum,sm__cycles_elapsed.sum,sm__warps_active.sum"}, "auto", "",
			[]string{"gpu_ipc", "gpu_achieved_occupancy"}, []string{"gpu_dram_bytes", "gpu_dram_bandwidth_gbs"}},
		{"passes", []string{"FAKECUPTI_PM_MULTIPASS=sm__cycles_active.sum,sm__cycles_active.avg"}, "auto",
			"the device counters popmon reads need 3 passes on this GPU (chip FK100): CUPTI's PM sampling reads one", nil, []string{"gpu_ipc"}},
		{"one pass of four", []string{"FAKECUPTI_PM_MAX_ONE_PASS=4"}, "auto", "",
			[]string{"gpu_ipc", "gpu_sm_frequency_ghz"}, []string{"gpu_achieved_occupancy", "gpu_dram_bytes"}},
		{"sys clock trigger", []string{"FAKECUPTI_PM_SYSCLK_ONLY=1"}, "on", "", []string{"gpu_ipc", "gpu_dram_bytes", "gpu_achieved_occupancy"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runOpts{env: fakeEnv(dir, append([]string{counterPeriod}, c.env...)...),
				flags: []string{"--gpu", "on", "--gpu-counters", c.mode}, dir: dir}
			r := measureRunWith(t, impl, o, 1, "gpu_counters", "--reps", "2")
			g := r.m.GPU
			if g == nil || !g.Available || g.Counters == nil {
				t.Fatalf("gpu = %+v, want device activity measured and a counters object", g)
			}
			got := reportMetrics(t, r.file)
			if v := got["instr/gpu_parallel_efficiency"]; !(v > 0) {
				t.Errorf("instr/gpu_parallel_efficiency = %v: device times must be measured whatever the counters", v)
			}
			for _, id := range c.has {
				if _, ok := got["instr/"+id]; !ok {
					t.Errorf("instr/%s absent", id)
				}
			}
			for _, id := range c.lacks {
				if v, ok := got["instr/"+id]; ok {
					t.Errorf("instr/%s = %v, want absent", id, v)
				}
			}
			so, _, _ := popmon(t, nil, "report", r.file)
			warned := strings.Count(r.stderr, "popmon: GPU counters requested but")
			if c.why == "" {
				if !g.Counters.Available || g.Counters.Reason != "" {
					t.Errorf("counters = %+v, want read", g.Counters)
				}
				if warned != 0 {
					t.Errorf("a warning:\n%s", r.stderr)
				}
				return
			}
			if g.Counters.Available || !strings.Contains(g.Counters.Reason, c.why) {
				t.Errorf("counters = %+v, want unavailable because %q", g.Counters, c.why)
			}
			if !strings.Contains(so, "no device computational metrics: ") || !strings.Contains(so, c.why) ||
				strings.Contains(so, "Device computational metrics") {
				t.Errorf("report does not say why (%q):\n%s", c.why, so)
			}
			if want := map[string]int{"on": 1}[c.mode]; warned != want {
				t.Errorf("%d warnings about counters with --gpu-counters %s, want %d:\n%s", warned, c.mode, want, r.stderr)
			}
		})
	}
}

// TestGPUFakeCountersScaling: the device computation scalability of two
// recorded runs decomposes as designed. Run A: 1 rank, 1 device at
// 1755 MHz; run B: 2 ranks on 2 devices at 1500 MHz whose kernels execute
// 1.25 times the instructions in the same time. Region instr has the same
// kernel time in both (ΣGu: 4 × 20 ms), so the scalability is 1 =
// instruction scaling 0.8 × IPC scaling 1.25·1755/1500 × SM frequency
// scaling 1500/1755 × SM use scaling 1.
func TestGPUFakeCountersScaling(t *testing.T) {
	needGPUMeasurement(t)
	impl := impls(t)[0]
	dir := fakeCUDA(t, impl.mpicc)
	flags := []string{"--gpu", "on", "--gpu-counters", "on"}
	a := measureRunWith(t, impl, runOpts{env: fakeEnv(dir, counterPeriod), flags: flags, dir: dir}, 1, "gpu_counters", "--reps", "4")
	b := measureRunWith(t, impl, runOpts{env: fakeEnv(dir, counterPeriod, "FAKECUDA_DEVICES=2", "FAKECUDA_SM_MHZ=1500"), flags: flags, dir: dir},
		2, "gpu_counters", "--reps", "4", "--inst-factor", "1.25")
	// Recorded: the study reads the two files as a user's would.
	study := t.TempDir()
	for name, r := range map[string]*result{"a.json": a, "b.json": b} {
		data, err := os.ReadFile(r.file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(study, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	so, se, code := popmon(t, nil, "scaling", "--format", "json", "--region", "instr", filepath.Join(study, "a.json"), filepath.Join(study, "b.json"))
	if code != 0 {
		t.Fatalf("popmon scaling: exit %d\n%s", code, se)
	}
	var out struct {
		Regions []struct {
			Name string
			Runs []struct {
				Label   string
				Metrics map[string]float64
			}
		}
	}
	if err := json.Unmarshal([]byte(so), &out); err != nil || len(out.Regions) != 1 || len(out.Regions[0].Runs) != 2 {
		t.Fatalf("scaling json: %v\n%s", err, so)
	}
	m := out.Regions[0].Runs[1].Metrics
	want := map[string]float64{
		"gpu_computation_scalability": 1, "gpu_instruction_scaling": 0.8, "gpu_ipc_scaling": 1.25 * 1755 / 1500,
		"gpu_sm_frequency_scaling": 1500.0 / 1755, "gpu_sm_use_scaling": 1, "gpu_ipc": 5e9 / (20e6 * 1.5 * 132), "gpu_sm_frequency_ghz": 1.5,
	}
	for id, w := range want {
		if v, ok := m[id]; !ok || math.Abs(v-w) > 0.01*w {
			t.Errorf("run b: %s = %v (present %v), want %v ± 1 %%", id, v, ok, w)
		}
	}
	prod := m["gpu_instruction_scaling"] * m["gpu_ipc_scaling"] * m["gpu_sm_frequency_scaling"] * m["gpu_sm_use_scaling"]
	if math.Abs(prod-m["gpu_computation_scalability"]) > 1e-9 {
		t.Errorf("the factors' product %v is not the device computation scalability %v", prod, m["gpu_computation_scalability"])
	}
	// The pages: the scaling table's device rows and the run's device counters.
	site := filepath.Join(t.TempDir(), "site")
	if _, se, code := popmon(t, nil, "pages", "-i", study, "-o", site); code != 0 {
		t.Fatalf("popmon pages: exit %d\n%s", code, se)
	}
	var html strings.Builder
	filepath.Walk(site, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".html") {
			b, _ := os.ReadFile(p)
			html.Write(b)
		}
		return nil
	})
	for _, w := range []string{"Device computation scalability", "SM use scaling", "Average device IPC", "device counters"} {
		if !strings.Contains(html.String(), w) {
			t.Errorf("pages lack %q", w)
		}
	}
	text, _, _ := popmon(t, nil, "scaling", "--region", "instr", filepath.Join(study, "a.json"), filepath.Join(study, "b.json"))
	for _, w := range []string{"Device computation scalability", "Device instruction scaling", "SM frequency scaling"} {
		if !strings.Contains(text, w) {
			t.Errorf("scaling table lacks %q:\n%s", w, text)
		}
	}
}
