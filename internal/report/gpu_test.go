package report

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestTextGPU checks the header's GPU line: what was measured, or why not.
func TestTextGPU(t *testing.T) {
	h100 := []measure.GPUDevice{{Index: 0, UUID: "a", Name: "NVIDIA H100"}, {Index: 1, UUID: "b", Name: "NVIDIA H100"}, {Index: 2, UUID: "c", Name: "NVIDIA A100"}}
	var amd []measure.GPUDevice
	for i := range 4 {
		amd = append(amd, measure.GPUDevice{Index: i, UUID: fmt.Sprintf("GPU-%032x", i), Name: "AMD Instinct MI300X", Vendor: "amd"})
	}
	tests := []struct {
		name string
		m    measure.Measurement
		want string
	}{
		{"no gpu", measure.Measurement{}, ""},
		{"no CUDA", measure.Measurement{GPU: &measure.GPU{Mode: "auto", Reason: "the program did not use CUDA"}}, ""},
		{"no CUDA, asked for", measure.Measurement{GPU: &measure.GPU{Mode: "on", Reason: "the program did not use CUDA (no cuInit)"}},
			"no device metrics: the program did not use CUDA (no cuInit)"},
		{"not available", measure.Measurement{GPU: &measure.GPU{Mode: "on", Reason: "libcupti was not found: set POPMON_CUPTI_LIBRARY"}},
			"no device metrics: libcupti was not found: set POPMON_CUPTI_LIBRARY"},
		{"available, no reason, no device", measure.Measurement{GPU: &measure.GPU{Mode: "auto", Available: true}},
			"no device metrics: GPU device activity was not measured"},
		{"measured", measure.Measurement{GPU: &measure.GPU{Mode: "auto", Available: true, Method: "cupti", CUPTIVersion: 18, DriverVersion: 12040, Clock: "monotonic",
			DroppedRecords: 3, RejectedRecords: 1}, GPUDevices: h100},
			"2 × NVIDIA H100, NVIDIA A100 (CUPTI API 18, driver 12.4, clock monotonic) · 3 activity records dropped: device times are lower bounds · 1 activity record rejected as implausible"},
		{"imported", measure.Measurement{GPUDevices: []measure.GPUDevice{{Index: 0, UUID: "x"}, {Index: 1, UUID: "y"}}}, "2 devices"},
		{"no CUDA or HIP", measure.Measurement{GPU: &measure.GPU{Mode: "auto", Reason: "the program did not use CUDA or HIP"}}, ""},
		{"no CUDA or HIP, asked for", measure.Measurement{GPU: &measure.GPU{Mode: "on", Reason: "the program did not use CUDA or HIP"}},
			"no device metrics: the program did not use CUDA or HIP"},
		{"HIP without rocprofiler-sdk", measure.Measurement{GPU: &measure.GPU{Mode: "auto", HIPRuntimeVersion: 60241134,
			Reason: "the program used HIP but no rocprofiler-sdk was found: install rocprofiler-sdk (ROCm 6.2 or newer)"}},
			"no device metrics: the program used HIP but no rocprofiler-sdk was found: install rocprofiler-sdk (ROCm 6.2 or newer) · " + AMDNotValidated},
		{"AMD measured", measure.Measurement{GPU: &measure.GPU{Mode: "auto", Available: true, Method: "rocprofiler-sdk", ROCprofilerSDKVersion: 10203,
			HIPRuntimeVersion: 70152843, Clock: "calibrated", DroppedRecords: 2}, GPUDevices: amd},
			"4 × AMD Instinct MI300X (rocprofiler-sdk 1.2.3, HIP runtime 7.1.52843, clock calibrated) · 2 activity records dropped: device times are lower bounds · " + AMDNotValidated},
		{"AMD measured, no versions", measure.Measurement{GPU: &measure.GPU{Mode: "auto", Available: true, Method: "rocprofiler-sdk"}, GPUDevices: amd[:1]},
			"AMD Instinct MI300X (rocprofiler-sdk) · " + AMDNotValidated},
		{"AMD devices, no gpu object", measure.Measurement{GPUDevices: amd[:2]}, "2 × AMD Instinct MI300X · " + AMDNotValidated},
		{"mixed, AMD first", measure.Measurement{GPU: &measure.GPU{Mode: "auto", Available: true, Method: "rocprofiler-sdk", ROCprofilerSDKVersion: 600},
			GPUDevices: []measure.GPUDevice{amd[0], {Index: 1, UUID: "n", Name: "NVIDIA H100", Vendor: "nvidia"}}},
			"AMD Instinct MI300X, NVIDIA H100 (rocprofiler-sdk 0.6.0 on the AMD devices; CUPTI on the NVIDIA devices, versions not recorded) · " + AMDNotValidated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := textGPU(runOf(&tt.m)); got != tt.want {
				t.Errorf("textGPU = %q\nwant     %q", got, tt.want)
			}
		})
	}
}

// TestTextGPUTables checks the tables beyond the tree: kernels cut to
// the top ten with a count of the rest, long names shortened, bandwidth,
// and idle time as a share of Global.
func TestTextGPUTables(t *testing.T) {
	m := &measure.Measurement{
		GPUDevices: []measure.GPUDevice{{Index: 0, UUID: "a", Name: "GPU\x1b[31m"}},
		GPUCopies:  []measure.GPUCopy{{Kind: "PtoP", Count: 1, Bytes: 500, TimeNS: 0}},
		GPUIdle:    []measure.GPUIdle{{Device: 0, Gaps: 2, IdleNS: 250, LongestNS: 200}},
		Regions:    []measure.Region{{Name: "Global", Processes: []measure.ProcessAccounts{{ElapsedNS: 1000}}}},
	}
	for i := range 12 {
		m.GPUKernels = append(m.GPUKernels, measure.GPUKernel{Name: strings.Repeat("k", 70+i), Count: 2, TimeNS: 100, MinNS: 40, MaxNS: 60})
	}
	var buf bytes.Buffer
	b := bufio.NewWriter(&buf)
	textGPUTables(b, runOf(m))
	b.Flush()
	out := buf.String()
	for _, want := range []string{
		"Top GPU kernels (whole run, all processes; 1.20 µs of kernels listed)",
		strings.Repeat("k", 59) + "…       0      2  100 ns  50 ns  40 ns  60 ns           8.3%",
		"  (2 more kernels)",
		"  PtoP      1  500 B  0 ns          -",
		`  0 GPU\x1b[31m     2  250 ns   200 ns        25.0%`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tables lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("a device name reached the report raw:\n%q", out)
	}
}

// TestTALPJSONGPUIdleRegion checks that talp-json writes all four GPU
// efficiencies of a region whose devices did nothing (0/0 as DLB's 0.0),
// while the JSON report lists the ratios under not_measured.
func TestTALPJSONGPUIdleRegion(t *testing.T) {
	_, m := load(t, "gpu_devices.json")
	for i := range m.Regions[1].Processes {
		m.Regions[1].Processes[i].GPUDevices = nil // region "work": no device activity
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, FormatTALPJSON, rep, m, Options{Region: "work"})
	for _, want := range []string{`"gpuUsefulTime": 0,`, `"gpuParallelEfficiency": 0.0,`, `"gpuLoadBalance": 0.0,`,
		`"gpuCommunicationEfficiency": 0.0,`, `"gpuOrchestrationEfficiency": 0.0`} {
		if !strings.Contains(out, want) {
			t.Errorf("talp-json lacks %s:\n%s", want, out)
		}
	}
	js := render(t, FormatJSON, rep, m, Options{Region: "work"})
	if !strings.Contains(js, `"gpu_load_balance": "no GPU kernel ran in this region"`) {
		t.Errorf("json lacks the not-measured load balance:\n%s", js)
	}
}

// TestDeviceBlock checks the title of the device tree block: TALP's
// "NVIDIA Device" or "AMD Device", one block for a run with both, and the
// runtime the other models' GPU line names.
func TestDeviceBlock(t *testing.T) {
	tests := []struct {
		name          string
		m             *measure.Measurement
		block, rtName string
	}{
		{"no measurement", nil, "NVIDIA Device", "CUDA runtime"},
		{"older file", &measure.Measurement{GPUDevices: []measure.GPUDevice{{UUID: "a"}}}, "NVIDIA Device", "CUDA runtime"},
		{"nvidia", &measure.Measurement{GPUDevices: []measure.GPUDevice{{UUID: "a", Vendor: "nvidia"}}}, "NVIDIA Device", "CUDA runtime"},
		{"amd", &measure.Measurement{GPUDevices: []measure.GPUDevice{{UUID: "a", Vendor: "amd"}, {UUID: "b", Vendor: "amd"}}}, "AMD Device", "HIP runtime"},
		{"both", &measure.Measurement{GPUDevices: []measure.GPUDevice{{UUID: "a", Vendor: "amd"}, {UUID: "b"}}}, "GPU Device (NVIDIA and AMD)", "CUDA and HIP runtimes"},
	}
	for _, tt := range tests {
		if got := deviceBlock(runOf(tt.m)); got != tt.block {
			t.Errorf("%s: deviceBlock = %q, want %q", tt.name, got, tt.block)
		}
		if got := gpuRuntimeName(runOf(tt.m)); got != tt.rtName {
			t.Errorf("%s: gpuRuntimeName = %q, want %q", tt.name, got, tt.rtName)
		}
	}
}

// TestAMDNotValidatedJSON checks that the JSON report of an AMD run says
// that AMD measurement is not validated, and that of an NVIDIA run does
// not.
func TestAMDNotValidatedJSON(t *testing.T) {
	for _, tt := range []struct {
		file string
		want bool
	}{{"gpu_amd.json", !AMDValidated}, {"gpu_mixed.json", !AMDValidated}, {"gpu_devices.json", false}} {
		rep, m := load(t, tt.file)
		out := render(t, FormatJSON, rep, m, Options{})
		if got := strings.Contains(out, `"gpu_not_validated": "`+AMDNotValidated+`"`); got != tt.want {
			t.Errorf("%s: gpu_not_validated present = %v, want %v", tt.file, got, tt.want)
		}
	}
}

func TestHIPVersion(t *testing.T) {
	for v, want := range map[int64]string{60241134: "6.2.41134", 70000000: "7.0.0", 60443482: "6.4.43482"} {
		if got := hipVersion(v); got != want {
			t.Errorf("hipVersion(%d) = %q, want %q", v, got, want)
		}
	}
}
