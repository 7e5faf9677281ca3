package measure_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

func gpuTestdata(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gpu_devices.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fileEdit is one hostile edit of a testdata file: replace old by new, and
// expect an error containing want.
type fileEdit struct {
	name, old, new, want string
}

// checkEdits applies each edit to base and checks that check (Read or
// ValidateSchema) fails with the expected error.
func checkEdits(t *testing.T, base []byte, edits []fileEdit, check func([]byte) error) {
	t.Helper()
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(base, []byte(tt.old)) {
				t.Fatalf("testdata lacks %q", tt.old)
			}
			err := check(bytes.Replace(base, []byte(tt.old), []byte(tt.new), 1))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// readBytes is measure.Read of data.
func readBytes(data []byte) error {
	_, err := measure.Read(bytes.NewReader(data))
	return err
}

// TestReadGPU checks that the GPU keys read into the model.
func TestReadGPU(t *testing.T) {
	m, err := measure.Read(bytes.NewReader(gpuTestdata(t)))
	if err != nil {
		t.Fatal(err)
	}
	if g := m.GPU; g == nil || !g.Available || g.Method != "cupti" || g.CUPTIVersion != 130001 || g.Clock != "monotonic" {
		t.Errorf("gpu = %+v", g)
	}
	if len(m.GPUDevices) != 2 || m.GPUDevices[1].Index != 1 || !strings.HasPrefix(m.GPUDevices[1].UUID, "GPU-9a7d") {
		t.Errorf("gpu_devices = %+v", m.GPUDevices)
	}
	if len(m.GPUKernels) != 3 || m.GPUKernels[0].TimeNS != 300000000 || m.GPUKernels[1].Device != 1 {
		t.Errorf("gpu_kernels = %+v", m.GPUKernels)
	}
	if len(m.GPUCopies) != 3 || m.GPUCopies[0].Kind != measure.GPUCopyHtoD || m.GPUCopies[0].Bytes != 2000000000 {
		t.Errorf("gpu_copies = %+v", m.GPUCopies)
	}
	if len(m.GPUIdle) != 2 || m.GPUIdle[1].LongestNS != 350000000 {
		t.Errorf("gpu_idle = %+v", m.GPUIdle)
	}
	a := m.Regions[1].Processes[1]
	if len(a.GPUDevices) != 1 || a.GPUDevices[0] != (measure.GPUDeviceAccount{Device: 1, UsefulNS: 150000000, ActiveNS: 150000000}) {
		t.Errorf("work rank 1 gpu_devices = %+v", a.GPUDevices)
	}
	if why := m.GPUNotMeasured(); why != "" {
		t.Errorf("GPUNotMeasured = %q", why)
	}
	if err := measure.ValidateSchema(gpuTestdata(t)); err != nil {
		t.Errorf("schema: %v", err)
	}
}

// TestGPUNotMeasured checks the reason a measurement without device data
// gives.
func TestGPUNotMeasured(t *testing.T) {
	var m measure.Measurement
	if why := m.GPUNotMeasured(); why != "GPU device activity was not measured" {
		t.Errorf("no gpu object: %q", why)
	}
	m.GPU = &measure.GPU{Mode: "on", Reason: "libcupti was not found: set POPMON_CUPTI_LIBRARY"}
	if why := m.GPUNotMeasured(); why != m.GPU.Reason {
		t.Errorf("with reason: %q", why)
	}
}

// TestValidateGPU feeds hostile GPU values and checks each is refused
// with an error that says where and what.
func TestValidateGPU(t *testing.T) {
	tests := []fileEdit{
		{"negative useful", `{"device": 1, "useful_ns": 150000000, "active_ns": 250000000}`, `{"device": 1, "useful_ns": -1, "active_ns": 250000000}`,
			`regions[0] "Global": processes[1]: gpu_devices[0] has negative times (useful_ns -1, active_ns 250000000)`},
		{"active below useful", `{"device": 1, "useful_ns": 150000000, "active_ns": 250000000}`, `{"device": 1, "useful_ns": 150000000, "active_ns": 100}`,
			"gpu_devices[0] has useful_ns 150000000 above active_ns 100"},
		{"device out of range", `"gpu_devices": [{"device": 1, "useful_ns": 150000000, "active_ns": 250000000}]`, `"gpu_devices": [{"device": 2, "useful_ns": 150000000, "active_ns": 250000000}]`,
			"names device 2, which is not in gpu_devices (2 listed)"},
		{"negative device", `"gpu_devices": [{"device": 1, "useful_ns": 150000000, "active_ns": 250000000}]`, `"gpu_devices": [{"device": -1, "useful_ns": 150000000, "active_ns": 250000000}]`,
			"names device -1"},
		{"device twice", `"gpu_devices": [{"device": 1, "useful_ns": 150000000, "active_ns": 250000000}]`,
			`"gpu_devices": [{"device": 1, "useful_ns": 150000000, "active_ns": 250000000}, {"device": 1, "useful_ns": 1, "active_ns": 2}]`,
			"gpu_devices[1] repeats device 1"},
		{"duplicate uuid", `"uuid": "GPU-9a7d3b22-0000-0000-0000-000000000000"`, `"uuid": "GPU-6f1c2a10-0000-0000-0000-000000000000"`,
			`gpu_devices[1] repeats the uuid "GPU-6f1c2a10-0000-0000-0000-000000000000" of gpu_devices[0]`},
		{"empty uuid", `"uuid": "GPU-9a7d3b22-0000-0000-0000-000000000000"`, `"uuid": " "`, "gpu_devices[1] has no uuid"},
		{"index out of order", `{"index": 1, "uuid"`, `{"index": 5, "uuid"`, "gpu_devices[1] has index 5"},
		{"gpus disagree", `"gpus": 2`, `"gpus": 3`, "resources.gpus is 3 but 2 GPU devices are listed"},
		{"kernel device", `{"name": "spin_kernel", "device": 1`, `{"name": "spin_kernel", "device": 7`, "gpu_kernels[1] names device 7"},
		{"kernel negative", `"count": 3, "time_ns": 300000000`, `"count": -3, "time_ns": 300000000`, "gpu_kernels[0] has negative count (-3)"},
		{"kernel max above time", `"time_ns": 300000000, "min_ns": 99000000, "max_ns": 101000000`, `"time_ns": 300000000, "min_ns": 99000000, "max_ns": 401000000`,
			"gpu_kernels[0] has min_ns 99000000, max_ns 401000000, time_ns 300000000"},
		{"copy kind", `"kind": "DtoH"`, `"kind": "HtoH"`, `gpu_copies[1] has kind "HtoH"`},
		{"copy kind twice", `"kind": "DtoH"`, `"kind": "HtoD"`, `gpu_copies[1] repeats kind "HtoD"`},
		{"idle device twice", `{"device": 1, "gaps": 4`, `{"device": 0, "gaps": 4`, "gpu_idle[1] repeats device 0"},
		{"copy negative", `"bytes": 2000000000`, `"bytes": -2`, "gpu_copies[0] has negative bytes (-2)"},
		{"idle device", `{"device": 1, "gaps": 4`, `{"device": 9, "gaps": 4`, "gpu_idle[1] names device 9"},
		{"idle longest", `"idle_ns": 700000000, "longest_ns": 300000000`, `"idle_ns": 700000000, "longest_ns": 800000000`,
			"gpu_idle[0] has longest_ns 800000000 above idle_ns 700000000"},
		{"dropped negative", `"clock": "monotonic"`, `"clock": "monotonic", "dropped_records": -1`, "gpu has negative dropped_records (-1)"},
	}
	checkEdits(t, gpuTestdata(t), tests, readBytes)
}

// TestSchemaGPU checks that the schema describes the GPU keys.
func TestSchemaGPU(t *testing.T) {
	tests := []fileEdit{
		{"mode enum", `"mode": "auto"`, `"mode": "maybe"`, `$.gpu.mode: is "maybe"`},
		{"uuid missing", `{"index": 0, "uuid": "GPU-6f1c2a10-0000-0000-0000-000000000000", `, `{"index": 0, `, `$.gpu_devices[0]: misses required key "uuid"`},
		{"account negative", `"active_ns": 400000000`, `"active_ns": -4`, "$.regions[0].processes[0].gpu_devices[0].active_ns: is -4, below the minimum 0"},
		{"copy kind", `"kind": "DtoH"`, `"kind": "HtoH"`, `$.gpu_copies[1].kind: is "HtoH"`},
		{"kernel time type", `"time_ns": 300000000, "min_ns"`, `"time_ns": "3", "min_ns"`, "$.gpu_kernels[0].time_ns: is a string, want integer"},
		{"idle missing", `"gaps": 4, `, ``, `$.gpu_idle[0]: misses required key "gaps"`},
	}
	checkEdits(t, gpuTestdata(t), tests, measure.ValidateSchema)
}

// TestReadGPUAMD checks the AMD keys: the method, rocprofiler-sdk's and
// HIP's versions, and each device's vendor.
func TestReadGPUAMD(t *testing.T) {
	m, err := measure.ReadFile(filepath.Join("testdata", "gpu_amd.json"))
	if err != nil {
		t.Fatal(err)
	}
	g := m.GPU
	if g == nil || g.Method != measure.GPUMethodROCprofilerSDK || g.ROCprofilerSDKVersion != 600 || g.HIPRuntimeVersion != 60443482 ||
		g.CUPTIVersion != 0 || g.DriverVersion != 0 || g.Vendor() != measure.GPUVendorAMD {
		t.Errorf("gpu = %+v (vendor %q)", g, g.Vendor())
	}
	if len(m.GPUDevices) != 2 || m.GPUDevices[1].UUID != "AMD-node-3@mi01" || m.GPUDevices[0].VendorOrNVIDIA() != measure.GPUVendorAMD {
		t.Errorf("gpu_devices = %+v", m.GPUDevices)
	}
	if v := m.GPUVendors(); !slices.Equal(v, []string{"amd"}) {
		t.Errorf("GPUVendors = %q", v)
	}
	mixed, err := measure.ReadFile(filepath.Join("testdata", "gpu_mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if v := mixed.GPUVendors(); !slices.Equal(v, []string{"nvidia", "amd"}) {
		t.Errorf("mixed GPUVendors = %q", v)
	}
	// A file written before AMD support: devices without vendor are NVIDIA.
	old, err := measure.Read(bytes.NewReader(gpuTestdata(t)))
	if err != nil {
		t.Fatal(err)
	}
	if old.GPUDevices[0].Vendor != "" || old.GPUDevices[0].VendorOrNVIDIA() != measure.GPUVendorNVIDIA ||
		!slices.Equal(old.GPUVendors(), []string{"nvidia"}) || old.GPU.Vendor() != measure.GPUVendorNVIDIA {
		t.Errorf("old file: devices %+v, vendors %q, gpu vendor %q", old.GPUDevices, old.GPUVendors(), old.GPU.Vendor())
	}
	var none measure.Measurement
	if v := none.GPUVendors(); v != nil {
		t.Errorf("no devices: GPUVendors = %q", v)
	}
}

// TestGPUVendorOfObject checks which vendor a "gpu" object names: by
// method, else (nothing measured) by its version keys.
func TestGPUVendorOfObject(t *testing.T) {
	tests := []struct {
		g    *measure.GPU
		want string
	}{
		{nil, ""},
		{&measure.GPU{Mode: "auto", Reason: "the program did not use CUDA or HIP"}, ""},
		{&measure.GPU{Method: "cupti"}, "nvidia"},
		{&measure.GPU{Method: "rocprofiler-sdk"}, "amd"},
		{&measure.GPU{Method: "other", HIPRuntimeVersion: 1}, ""},
		{&measure.GPU{HIPRuntimeVersion: 60443482, Reason: "the program used HIP but no rocprofiler-sdk was found"}, "amd"},
		{&measure.GPU{ROCprofilerSDKVersion: 600}, "amd"},
		{&measure.GPU{DriverVersion: 12040, Reason: "no CUPTI"}, "nvidia"},
	}
	for _, tt := range tests {
		if got := tt.g.Vendor(); got != tt.want {
			t.Errorf("%+v: Vendor() = %q, want %q", tt.g, got, tt.want)
		}
	}
}

// TestGPUUnused checks that both wordings of "no GPU runtime used" (files
// before and after AMD support) leave reports without a GPU line, unless
// mode is on.
func TestGPUUnused(t *testing.T) {
	tests := []struct {
		g    *measure.GPU
		want bool
	}{
		{&measure.GPU{Mode: "auto", Reason: "the program did not use CUDA"}, true},
		{&measure.GPU{Mode: "auto", Reason: "the program did not use CUDA or HIP"}, true},
		{&measure.GPU{Mode: "off", Reason: "the program did not use CUDA or HIP"}, true},
		{&measure.GPU{Mode: "on", Reason: "the program did not use CUDA or HIP"}, false},
		{&measure.GPU{Mode: "auto", Reason: "the program used HIP but no rocprofiler-sdk was found"}, false},
		{&measure.GPU{Mode: "auto", Available: true, Method: "rocprofiler-sdk"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := tt.g.Unused(); got != tt.want {
			t.Errorf("%+v: Unused() = %v, want %v", tt.g, got, tt.want)
		}
	}
}

// TestValidateGPUAMD feeds hostile AMD values.
func TestValidateGPUAMD(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "gpu_amd.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []fileEdit{
		{"unknown method", `"method": "rocprofiler-sdk"`, `"method": "roctracer"`, `gpu has method "roctracer"; want cupti or rocprofiler-sdk`},
		{"unknown vendor", `"name": "AMD Instinct MI250X", "vendor": "amd"}`, `"name": "AMD Instinct MI250X", "vendor": "intel"}`,
			`gpu_devices[0] has vendor "intel"; want nvidia or amd`},
		{"AMD device without vendor", `"uuid": "AMD-node-3@mi01", "name": "AMD Instinct MI250X", "vendor": "amd"}`, `"uuid": "AMD-node-3@mi01", "name": "AMD Instinct MI250X"}`,
			"gpu_devices[1] has no vendor but gpu.method is rocprofiler-sdk"},
		{"negative SDK version", `"rocprofiler_sdk_version": 600`, `"rocprofiler_sdk_version": -600`, "gpu has negative rocprofiler_sdk_version (-600)"},
		{"negative HIP version", `"hip_runtime_version": 60443482`, `"hip_runtime_version": -1`, "gpu has negative hip_runtime_version (-1)"},
		{"CUDA version with rocprofiler-sdk", `"rocprofiler_sdk_version": 600`, `"rocprofiler_sdk_version": 600, "cupti_version": 130001`,
			"gpu has method rocprofiler-sdk but CUDA versions"},
		{"AMD version with cupti", `"method": "rocprofiler-sdk"`, `"method": "cupti"`, "gpu has method cupti but AMD versions"},
		{"both vendors' versions, no method", `"method": "rocprofiler-sdk", `, `"driver_version": 13000, `, "gpu has both CUDA versions"},
	}
	checkEdits(t, data, tests, readBytes)
	schema := []fileEdit{
		{"method enum", `"method": "rocprofiler-sdk"`, `"method": "roctracer"`, `$.gpu.method: is "roctracer"`},
		{"vendor enum", `"vendor": "amd"}`, `"vendor": "AMD"}`, `$.gpu_devices[0].vendor: is "AMD"`},
		{"version type", `"hip_runtime_version": 60443482`, `"hip_runtime_version": "6.4"`, "$.gpu.hip_runtime_version: is a string, want integer"},
	}
	checkEdits(t, data, schema, measure.ValidateSchema)
}
