package measure

import (
	"fmt"
	"strings"
)

// GPU says whether GPU (CUDA or HIP) device activity was measured and,
// when not, why (the "gpu" object). Absent in files of runs without CUDA
// or HIP or of libraries that did not record it.
type GPU struct {
	// Mode is the requested mode: "auto", "on" or "off".
	Mode string `json:"mode"`
	// Available reports whether device activity was measured.
	Available bool `json:"available"`
	// Method is how it was measured: [GPUMethodCUPTI] (NVIDIA) or
	// [GPUMethodROCprofilerSDK] (AMD); empty when nothing was measured.
	Method string `json:"method,omitempty"`
	// CUPTIVersion is cuptiGetVersion's value (0 when unknown; NVIDIA).
	CUPTIVersion int64 `json:"cupti_version,omitempty"`
	// DriverVersion is cuDriverGetVersion's value (0 when unknown; NVIDIA).
	DriverVersion int64 `json:"driver_version,omitempty"`
	// ROCprofilerSDKVersion is the version of rocprofiler-sdk that
	// measured, major·10000 + minor·100 + patch (0 when unknown; AMD).
	ROCprofilerSDKVersion int64 `json:"rocprofiler_sdk_version,omitempty"`
	// HIPRuntimeVersion is hipRuntimeGetVersion's value, major·10⁷ +
	// minor·10⁵ + patch (0 when unknown; AMD).
	HIPRuntimeVersion int64 `json:"hip_runtime_version,omitempty"`
	// Clock is the clock of the activity records: "monotonic" (the
	// vendor library's timestamps are the library's clock) or
	// "calibrated" (an offset to the vendor library's own clock).
	Clock string `json:"clock,omitempty"`
	// DroppedRecords is the number of activity records the vendor library
	// dropped (no buffer free): device times are then lower bounds.
	DroppedRecords int64 `json:"dropped_records,omitempty"`
	// RejectedRecords is the number of records libpopmon rejected as
	// implausible (end before start, unknown device, …).
	RejectedRecords int64 `json:"rejected_records,omitempty"`
	// Reason says, when Available is false, why, in one sentence with the
	// fix.
	Reason string `json:"reason,omitempty"`
	// Counters says whether the devices' performance counters were
	// sampled and, when not, why (absent in files written before device
	// counters and in runs whose GPUs were not measured).
	Counters *GPUCounters `json:"counters,omitempty"`
}

// GPUCounters describes the device counters of a run (the "counters"
// object inside "gpu"): the GPUs' performance monitors sampled while the
// program ran and attributed to regions by time.
type GPUCounters struct {
	// Mode is the requested mode: "auto", "on" or "off".
	Mode string `json:"mode"`
	// Available reports whether any device's counters were sampled.
	Available bool `json:"available"`
	// Method is how: [GPUCountersMethodPMSampling].
	Method string `json:"method,omitempty"`
	// PeriodNS is the sampling period.
	PeriodNS int64 `json:"period_ns,omitempty"`
	// Metrics names, per quantity read (the keys of
	// [GPUCounterValues]), the vendor metric that counted it.
	Metrics map[string]string `json:"metrics,omitempty"`
	// Overflows is how many times samples were lost (the sample buffer
	// overflowed): counters are then lower bounds.
	Overflows int64 `json:"overflows,omitempty"`
	// Reason says why no device, or not every device of the run, was
	// sampled, in one sentence with the fix.
	Reason string `json:"reason,omitempty"`
}

// GPUCountersMethodPMSampling is CUPTI's PM sampling (NVIDIA, CUPTI ≥ 12.6).
const GPUCountersMethodPMSampling = "cupti-pm-sampling"

// GPUCounterValues are the device counters of one device while a region
// was open, summed over the samples in proportion of their time inside
// it (regions[].processes[].gpu_devices[].counters). They are the whole
// device's: on a GPU several processes share, every process's kernels.
// An optional quantity the device could not count is absent (nil), never 0.
type GPUCounterValues struct {
	// Instructions is the number of warp instructions executed.
	Instructions int64 `json:"instructions"`
	// SMActiveCycles is Σ over SMs of the cycles the SM had work.
	SMActiveCycles int64 `json:"sm_active_cycles"`
	// SMElapsedCycles is Σ over SMs of the cycles elapsed.
	SMElapsedCycles int64 `json:"sm_elapsed_cycles"`
	// WarpsActive is Σ over SMs and active cycles of the warps resident.
	WarpsActive *int64 `json:"warps_active,omitempty"`
	// DRAMReadBytes and DRAMWriteBytes are the bytes read from and
	// written to the device memory.
	DRAMReadBytes  *int64 `json:"dram_read_bytes,omitempty"`
	DRAMWriteBytes *int64 `json:"dram_write_bytes,omitempty"`
	// SampledNS is the device time the samples covered.
	SampledNS int64 `json:"sampled_ns"`
}

// GPU measurement methods ([GPU.Method]).
const (
	GPUMethodCUPTI          = "cupti"           // NVIDIA: CUPTI
	GPUMethodROCprofilerSDK = "rocprofiler-sdk" // AMD: rocprofiler-sdk
)

// GPU vendors ([GPUDevice.Vendor]).
const (
	GPUVendorNVIDIA = "nvidia"
	GPUVendorAMD    = "amd"
)

// GPUReasonNoCUDA is the start of the "gpu" object's reason when the
// program used no GPU runtime: "the program did not use CUDA" (files
// written before AMD support) or "the program did not use CUDA or HIP".
// Reports then say nothing about GPUs.
const GPUReasonNoCUDA = "the program did not use CUDA"

// Unused reports whether the "gpu" object says the program used no GPU
// runtime (auto mode, nothing to measure): no GPU line in reports.
func (g *GPU) Unused() bool {
	return g != nil && !g.Available && g.Mode != "on" && strings.HasPrefix(g.Reason, GPUReasonNoCUDA)
}

// Vendor returns the vendor whose library the "gpu" object describes:
// [GPUVendorAMD] for method rocprofiler-sdk or, without a method (nothing
// measured), for AMD version keys; [GPUVendorNVIDIA] for method cupti or
// CUDA version keys; "" when the object does not say.
func (g *GPU) Vendor() string {
	switch {
	case g == nil:
		return ""
	case g.Method == GPUMethodROCprofilerSDK:
		return GPUVendorAMD
	case g.Method == GPUMethodCUPTI:
		return GPUVendorNVIDIA
	case g.Method != "":
		return ""
	case g.ROCprofilerSDKVersion > 0 || g.HIPRuntimeVersion > 0:
		return GPUVendorAMD
	case g.CUPTIVersion > 0 || g.DriverVersion > 0:
		return GPUVendorNVIDIA
	}
	return ""
}

// GPUDevice is one GPU device of the run (the "gpu_devices" array): every
// "device" field of the file is an index into it.
type GPUDevice struct {
	// Index is the device's index, 0 … len(gpu_devices)−1.
	Index int `json:"index"`
	// UUID identifies the device across processes ("GPU-6f1c…"); devices
	// are merged across processes by UUID.
	UUID string `json:"uuid"`
	// Name is the device's product name.
	Name string `json:"name,omitempty"`
	// Vendor is the device's maker, [GPUVendorNVIDIA] or [GPUVendorAMD];
	// empty in files written before AMD support (NVIDIA: use
	// [GPUDevice.VendorOrNVIDIA]).
	Vendor string `json:"vendor,omitempty"`
	// Counters reports whether the device's counters were sampled; SMs
	// and MaxWarpsPerSM (the most warps an SM holds) then describe it.
	Counters      bool `json:"counters,omitempty"`
	SMs           int  `json:"sms,omitempty"`
	MaxWarpsPerSM int  `json:"max_warps_per_sm,omitempty"`
}

// VendorOrNVIDIA returns the device's vendor, [GPUVendorNVIDIA] when the
// file does not say (files written before AMD support measured CUDA only).
func (d *GPUDevice) VendorOrNVIDIA() string {
	if d.Vendor == "" {
		return GPUVendorNVIDIA
	}
	return d.Vendor
}

// GPUVendors returns the vendors of the run's devices (absent: NVIDIA),
// NVIDIA before AMD; nil for a run without devices.
func (m *Measurement) GPUVendors() []string {
	var nv, amd bool
	for i := range m.GPUDevices {
		switch m.GPUDevices[i].VendorOrNVIDIA() {
		case GPUVendorNVIDIA:
			nv = true
		case GPUVendorAMD:
			amd = true
		}
	}
	var out []string
	if nv {
		out = append(out, GPUVendorNVIDIA)
	}
	if amd {
		out = append(out, GPUVendorAMD)
	}
	return out
}

// GPUKernel is one kernel's whole-run profile on one device, summed over
// processes (the "gpu_kernels" array, the top kernels by device time).
type GPUKernel struct {
	// Name is the kernel's (possibly mangled) name.
	Name string `json:"name"`
	// Device is the index of the device ([GPUDevice.Index]).
	Device int `json:"device"`
	// Count is the number of executions.
	Count int64 `json:"count"`
	// TimeNS is the total device time of the executions.
	TimeNS int64 `json:"time_ns"`
	// MinNS and MaxNS are the shortest and longest execution.
	MinNS int64 `json:"min_ns"`
	MaxNS int64 `json:"max_ns"`
}

// GPU copy kinds ([GPUCopy.Kind]).
const (
	GPUCopyHtoD   = "HtoD"
	GPUCopyDtoH   = "DtoH"
	GPUCopyDtoD   = "DtoD"
	GPUCopyPtoP   = "PtoP"
	GPUCopyMemset = "memset"
)

// GPUCopy is the whole-run profile of one kind of memory operation, summed
// over processes and devices (the "gpu_copies" array).
type GPUCopy struct {
	// Kind is one of the GPUCopy* constants.
	Kind string `json:"kind"`
	// Count is the number of operations.
	Count int64 `json:"count"`
	// Bytes is the number of bytes copied (or set).
	Bytes int64 `json:"bytes"`
	// TimeNS is the total device time of the operations.
	TimeNS int64 `json:"time_ns"`
}

// GPUIdle is one device's idle gaps: the gaps between device activity
// (kernels, copies, memsets) inside the Global region that are longer than
// libpopmon's threshold (the "gpu_idle" array).
type GPUIdle struct {
	// Device is the index of the device ([GPUDevice.Index]).
	Device int `json:"device"`
	// Gaps is the number of gaps.
	Gaps int64 `json:"gaps"`
	// IdleNS is their total length.
	IdleNS int64 `json:"idle_ns"`
	// LongestNS is the longest gap.
	LongestNS int64 `json:"longest_ns"`
}

// GPUDeviceAccount is one process's device activity on one device while a
// region was open (regions[].processes[].gpu_devices).
type GPUDeviceAccount struct {
	// Device is the index of the device ([GPUDevice.Index]).
	Device int `json:"device"`
	// UsefulNS is the length of the union of the process's kernel
	// intervals on the device (K).
	UsefulNS int64 `json:"useful_ns"`
	// ActiveNS is the length of the union of its kernels, copies and
	// memsets on the device (A ≥ K); A − K is device communication.
	ActiveNS int64 `json:"active_ns"`
	// Counters are the device's counters while the region was open, when
	// this process sampled them.
	Counters *GPUCounterValues `json:"counters,omitempty"`
}

// GPUNotMeasured returns why a measurement has no GPU device data: ""
// when it has some (top-level gpu_devices); the "gpu" object's reason when
// it gives one; otherwise a generic reason.
func (m *Measurement) GPUNotMeasured() string {
	if m == nil || len(m.GPUDevices) > 0 {
		return ""
	}
	if g := m.GPU; g != nil && g.Reason != "" {
		return g.Reason
	}
	return "GPU device activity was not measured"
}

// validateGPU checks the GPU keys: a known method whose version keys are
// its vendor's, device indices 0 … n−1 in order with distinct, non-empty
// UUIDs and a known vendor, every "device" field naming a listed device,
// no negative time or count, a kernel's min ≤ max ≤ time, a known copy
// kind once, each device's idle gaps once, and per process and region
// useful ≤ active with each device at most once.
func (m *Measurement) validateGPU(p *problems) {
	if g := m.GPU; g != nil {
		for _, f := range []field{{"cupti_version", g.CUPTIVersion}, {"driver_version", g.DriverVersion},
			{"rocprofiler_sdk_version", g.ROCprofilerSDKVersion}, {"hip_runtime_version", g.HIPRuntimeVersion},
			{"dropped_records", g.DroppedRecords}, {"rejected_records", g.RejectedRecords}} {
			if f.v < 0 {
				p.add("gpu", "has negative %s (%d)", f.name, f.v)
			}
		}
		nv, amd := g.CUPTIVersion != 0 || g.DriverVersion != 0, g.ROCprofilerSDKVersion != 0 || g.HIPRuntimeVersion != 0
		switch g.Method {
		case "":
			if nv && amd {
				p.add("gpu", "has both CUDA versions (cupti_version, driver_version) and AMD ones (rocprofiler_sdk_version, hip_runtime_version); one vendor's library describes the measurement")
			}
		case GPUMethodCUPTI:
			if amd {
				p.add("gpu", "has method cupti but AMD versions (rocprofiler_sdk_version, hip_runtime_version)")
			}
		case GPUMethodROCprofilerSDK:
			if nv {
				p.add("gpu", "has method rocprofiler-sdk but CUDA versions (cupti_version, driver_version)")
			}
		default:
			p.add("gpu", "has method %q; want cupti or rocprofiler-sdk", g.Method)
		}
	}
	n := len(m.GPUDevices)
	uuids := make(map[string]int, n)
	for i, d := range m.GPUDevices {
		path := fmt.Sprintf("gpu_devices[%d]", i)
		if d.Index != i {
			p.add(path, "has index %d; devices are listed in index order from 0", d.Index)
		}
		switch d.Vendor {
		case GPUVendorNVIDIA, GPUVendorAMD:
		case "":
			if m.GPU != nil && m.GPU.Method == GPUMethodROCprofilerSDK {
				p.add(path, "has no vendor but gpu.method is rocprofiler-sdk (a device without vendor is an NVIDIA device of an older file)")
			}
		default:
			p.add(path, "has vendor %q; want nvidia or amd", d.Vendor)
		}
		switch u := strings.TrimSpace(d.UUID); {
		case u == "":
			p.add(path, "has no uuid")
		default:
			if j, dup := uuids[u]; dup {
				p.add(path, "repeats the uuid %q of gpu_devices[%d] (devices are merged by uuid)", u, j)
			} else {
				uuids[u] = i
			}
		}
	}
	if n > 0 && m.Resources.GPUs != n {
		p.add("resources.gpus", "is %d but %d GPU devices are listed", m.Resources.GPUs, n)
	}
	device := func(path string, d int) {
		if d < 0 || d >= n {
			p.add(path, "names device %d, which is not in gpu_devices (%d listed)", d, n)
		}
	}
	for i, k := range m.GPUKernels {
		path := fmt.Sprintf("gpu_kernels[%d]", i)
		device(path, k.Device)
		for _, f := range []field{{"count", k.Count}, {"time_ns", k.TimeNS}, {"min_ns", k.MinNS}, {"max_ns", k.MaxNS}} {
			if f.v < 0 {
				p.add(path, "has negative %s (%d)", f.name, f.v)
			}
		}
		if k.MinNS > k.MaxNS || k.MaxNS > k.TimeNS {
			p.add(path, "has min_ns %d, max_ns %d, time_ns %d; want min ≤ max ≤ time", k.MinNS, k.MaxNS, k.TimeNS)
		}
	}
	kinds := make(map[string]bool, len(m.GPUCopies))
	for i, c := range m.GPUCopies {
		path := fmt.Sprintf("gpu_copies[%d]", i)
		if kinds[c.Kind] {
			p.add(path, "repeats kind %q (one entry per kind)", c.Kind)
		}
		kinds[c.Kind] = true
		switch c.Kind {
		case GPUCopyHtoD, GPUCopyDtoH, GPUCopyDtoD, GPUCopyPtoP, GPUCopyMemset:
		default:
			p.add(path, "has kind %q; want HtoD, DtoH, DtoD, PtoP or memset", c.Kind)
		}
		for _, f := range []field{{"count", c.Count}, {"bytes", c.Bytes}, {"time_ns", c.TimeNS}} {
			if f.v < 0 {
				p.add(path, "has negative %s (%d)", f.name, f.v)
			}
		}
	}
	idle := make(map[int]bool, len(m.GPUIdle))
	for i, g := range m.GPUIdle {
		path := fmt.Sprintf("gpu_idle[%d]", i)
		device(path, g.Device)
		if idle[g.Device] {
			p.add(path, "repeats device %d (one entry per device)", g.Device)
		}
		idle[g.Device] = true
		for _, f := range []field{{"gaps", g.Gaps}, {"idle_ns", g.IdleNS}, {"longest_ns", g.LongestNS}} {
			if f.v < 0 {
				p.add(path, "has negative %s (%d)", f.name, f.v)
			}
		}
		if g.LongestNS > g.IdleNS {
			p.add(path, "has longest_ns %d above idle_ns %d", g.LongestNS, g.IdleNS)
		}
	}
	for i := range m.Regions {
		g := &m.Regions[i]
		for k := range g.Processes {
			a := &g.Processes[k]
			seen := make(map[int]bool, len(a.GPUDevices))
			for j, d := range a.GPUDevices {
				path := fmt.Sprintf("regions[%d] %q: processes[%d]: gpu_devices[%d]", i, g.Name, k, j)
				device(path, d.Device)
				if seen[d.Device] {
					p.add(path, "repeats device %d", d.Device)
				}
				seen[d.Device] = true
				switch {
				case d.UsefulNS < 0 || d.ActiveNS < 0:
					p.add(path, "has negative times (useful_ns %d, active_ns %d)", d.UsefulNS, d.ActiveNS)
				case d.UsefulNS > d.ActiveNS:
					p.add(path, "has useful_ns %d above active_ns %d (kernels are part of the active time)", d.UsefulNS, d.ActiveNS)
				}
				if c := d.Counters; c != nil {
					c.validate(p, path+": counters")
				}
			}
		}
	}
}

// validate checks one device's counters: nothing negative, active cycles
// within elapsed ones.
func (c *GPUCounterValues) validate(p *problems, path string) {
	fs := []field{{"instructions", c.Instructions}, {"sm_active_cycles", c.SMActiveCycles},
		{"sm_elapsed_cycles", c.SMElapsedCycles}, {"sampled_ns", c.SampledNS}}
	for _, o := range []struct {
		name string
		v    *int64
	}{{"warps_active", c.WarpsActive}, {"dram_read_bytes", c.DRAMReadBytes}, {"dram_write_bytes", c.DRAMWriteBytes}} {
		if o.v != nil {
			fs = append(fs, field{o.name, *o.v})
		}
	}
	for _, f := range fs {
		if f.v < 0 {
			p.add(path, "has negative %s (%d)", f.name, f.v)
		}
	}
	if c.SMActiveCycles > c.SMElapsedCycles {
		p.add(path, "has sm_active_cycles %d above sm_elapsed_cycles %d", c.SMActiveCycles, c.SMElapsedCycles)
	}
}
