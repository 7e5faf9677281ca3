package pop_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

const ms = int64(1_000_000) // one millisecond in ns

// gproc is one process of a synthetic GPU measurement (times in ms): its
// host accounts in the one region "work" and its activity per device
// (device index → useful, active).
type gproc struct {
	e, u, g, m int64
	dev        map[int][2]int64
}

// buildGPU makes a valid measurement with n GPU devices and one region
// "work" from procs; MPI when there are several processes.
func buildGPU(n int, procs ...gproc) *measure.Measurement {
	m := &measure.Measurement{Format: measure.Format, Version: measure.Version}
	if len(procs) > 1 {
		m.MPI = &measure.MPI{Library: "test", Standard: "3.1", ThreadLevel: "single"}
	}
	g := measure.Region{Name: "work"}
	for i, p := range procs {
		m.Processes = append(m.Processes, measure.Process{Rank: i, CPUs: 1})
		a := measure.ProcessAccounts{Rank: i, CPUs: 1, Visits: 1, ElapsedNS: p.e * ms, UsefulNS: p.u * ms,
			GPURuntimeNS: p.g * ms, MPINS: p.m * ms, GPURuntimeCalls: 3}
		for d := range n {
			if t, ok := p.dev[d]; ok {
				a.GPUDevices = append(a.GPUDevices, measure.GPUDeviceAccount{Device: d, UsefulNS: t[0] * ms, ActiveNS: t[1] * ms})
			}
		}
		g.Processes = append(g.Processes, a)
	}
	for d := range n {
		m.GPUDevices = append(m.GPUDevices, measure.GPUDevice{Index: d, UUID: fmt.Sprintf("GPU-%d", d)})
	}
	m.Resources = measure.Resources{Processes: len(procs), Nodes: 1, CPUs: len(procs), GPUs: n}
	m.Regions = []measure.Region{g}
	return m
}

// TestGPUValidation checks the expected values of the GPU validation
// programs V1–V7 (research gpu.md §5), built as measurements, with the
// device tree of model talp: per-device maxima over processes, N
// run-wide, and the host tree unchanged by the GPU keys.
func TestGPUValidation(t *testing.T) {
	mpiV6 := want{"mpi_parallel_efficiency": 0.875, "mpi_communication_efficiency": 1, "mpi_load_balance": 0.875,
		"mpi_load_balance_in": 0.875, "mpi_load_balance_out": 1}
	tests := []struct {
		name   string
		m      *measure.Measurement
		w      want
		mpi    want
		absent []string
		nm     map[string]string
	}{
		{"V1 offload-sync", buildGPU(1, gproc{200, 100, 100, 0, map[int][2]int64{0: {100, 100}}}),
			want{"parallel_efficiency": 0.5, "device_offload_efficiency": 0.5, "gpu_parallel_efficiency": 0.5,
				"gpu_load_balance": 1, "gpu_communication_efficiency": 1, "gpu_orchestration_efficiency": 0.5}, nil,
			[]string{"mpi_parallel_efficiency"}, nil},
		{"V2 overlap", buildGPU(1, gproc{200, 200, 0, 0, map[int][2]int64{0: {200, 200}}}),
			want{"parallel_efficiency": 1, "device_offload_efficiency": 1, "gpu_parallel_efficiency": 1,
				"gpu_load_balance": 1, "gpu_communication_efficiency": 1, "gpu_orchestration_efficiency": 1}, nil, nil, nil},
		{"V3 orchestration", buildGPU(1, gproc{200, 150, 50, 0, map[int][2]int64{0: {50, 50}}}),
			want{"parallel_efficiency": 0.75, "device_offload_efficiency": 0.75, "gpu_parallel_efficiency": 0.25,
				"gpu_load_balance": 1, "gpu_communication_efficiency": 1, "gpu_orchestration_efficiency": 0.25}, nil, nil, nil},
		{"V4 communication", buildGPU(1, gproc{300, 100, 200, 0, map[int][2]int64{0: {100, 200}}}),
			want{"parallel_efficiency": 1.0 / 3, "device_offload_efficiency": 1.0 / 3, "gpu_parallel_efficiency": 1.0 / 3,
				"gpu_load_balance": 1, "gpu_communication_efficiency": 0.5, "gpu_orchestration_efficiency": 2.0 / 3}, nil, nil, nil},
		{"V5 hidden copy", buildGPU(1, gproc{400, 200, 200, 0, map[int][2]int64{0: {200, 200}}}),
			want{"parallel_efficiency": 0.5, "device_offload_efficiency": 0.5, "gpu_parallel_efficiency": 0.5,
				"gpu_load_balance": 1, "gpu_communication_efficiency": 1, "gpu_orchestration_efficiency": 0.5}, nil, nil, nil},
		{"V6 GPU imbalance, 2 GPUs", buildGPU(2,
			gproc{200, 100, 100, 0, map[int][2]int64{0: {100, 100}}},
			gproc{200, 100, 50, 50, map[int][2]int64{1: {50, 50}}}),
			want{"parallel_efficiency": 0.5, "device_offload_efficiency": 200.0 / 350, "gpu_parallel_efficiency": 0.375,
				"gpu_load_balance": 0.75, "gpu_communication_efficiency": 1, "gpu_orchestration_efficiency": 0.5}, mpiV6, nil, nil},
		{"V6 on 1 shared GPU (max-merge, not sum)", buildGPU(1,
			gproc{200, 100, 100, 0, map[int][2]int64{0: {100, 100}}},
			gproc{200, 100, 50, 50, map[int][2]int64{0: {50, 50}}}),
			want{"parallel_efficiency": 0.5, "device_offload_efficiency": 200.0 / 350, "gpu_parallel_efficiency": 0.5,
				"gpu_load_balance": 1, "gpu_communication_efficiency": 1, "gpu_orchestration_efficiency": 0.5}, mpiV6, nil, nil},
		{"V7 CPU imbalance, 2 GPUs", buildGPU(2,
			gproc{200, 100, 100, 0, map[int][2]int64{0: {100, 100}}},
			gproc{200, 50, 100, 50, map[int][2]int64{1: {100, 100}}}),
			want{"parallel_efficiency": 0.375, "device_offload_efficiency": 150.0 / 350, "gpu_parallel_efficiency": 0.5,
				"gpu_load_balance": 1, "gpu_communication_efficiency": 1, "gpu_orchestration_efficiency": 0.5}, mpiV6, nil, nil},
		{"V7 on 1 shared GPU", buildGPU(1,
			gproc{200, 100, 100, 0, map[int][2]int64{0: {100, 100}}},
			gproc{200, 50, 100, 50, map[int][2]int64{0: {100, 100}}}),
			want{"gpu_parallel_efficiency": 0.5, "gpu_load_balance": 1, "gpu_communication_efficiency": 1,
				"gpu_orchestration_efficiency": 0.5}, mpiV6, nil, nil},
		// DLB's per-process maxima give LB 0.5 and orchestration 2.0 here
		// (research gpu.md §1.6 bug 1); per-device maxima give 1 and 1.
		{"one process driving 2 busy GPUs", buildGPU(2, gproc{200, 200, 0, 0, map[int][2]int64{0: {200, 200}, 1: {200, 200}}}),
			want{"gpu_parallel_efficiency": 1, "gpu_load_balance": 1, "gpu_communication_efficiency": 1,
				"gpu_orchestration_efficiency": 1}, nil, nil, nil},
		// N is run-wide: a device idle in the region lowers its load
		// balance (DLB counts only devices active in the region).
		{"a GPU idle in the region", buildGPU(2, gproc{200, 200, 0, 0, map[int][2]int64{0: {100, 150}}}),
			want{"gpu_parallel_efficiency": 0.25, "gpu_load_balance": 0.5, "gpu_communication_efficiency": 100.0 / 150,
				"gpu_orchestration_efficiency": 0.75}, nil, nil, nil},
		{"copies only", buildGPU(1, gproc{200, 200, 0, 0, map[int][2]int64{0: {0, 50}}}),
			want{"gpu_parallel_efficiency": 0, "gpu_communication_efficiency": 0, "gpu_orchestration_efficiency": 0.25}, nil,
			nil, map[string]string{"gpu_load_balance": pop.ReasonNoGPUKernels}},
		{"no device activity in the region", buildGPU(1, gproc{200, 200, 0, 0, nil}),
			want{"gpu_parallel_efficiency": 0, "gpu_orchestration_efficiency": 0}, nil,
			nil, map[string]string{"gpu_load_balance": pop.ReasonNoGPUKernels, "gpu_communication_efficiency": "no GPU activity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := computeOne(t, tt.m, pop.ModelTALP)
			w := want{}
			for id, v := range tt.w {
				w[id] = v
			}
			for id, v := range tt.mpi {
				w[id] = v
			}
			checkModel(t, r, w, tt.absent, tt.nm)
			product(t, r, "gpu_parallel_efficiency", "gpu_load_balance", "gpu_communication_efficiency", "gpu_orchestration_efficiency")
			// The host MPI parallel efficiency of seed 002, (ΣU+ΣG)/(T·P),
			// is the talp model's for these runs (no OpenMP).
			if v, ok := r.Value("mpi_parallel_efficiency"); ok {
				var sum float64
				for _, a := range tt.m.Regions[0].Processes {
					sum += float64(a.UsefulNS + a.GPURuntimeNS)
				}
				if seed := sum / (float64(r.ElapsedNS) * float64(r.Processes)); math.Abs(v-seed) > tol {
					t.Errorf("mpi_parallel_efficiency = %v, seed 002's (ΣU+ΣG)/(T·P) = %v", v, seed)
				}
			}
			if x, ok := r.Metric("gpu_parallel_efficiency"); !ok || x.Parent != "" || x.Depth != 0 {
				t.Errorf("gpu_parallel_efficiency = %+v, want a root of the tree (TALP's Device block)", x)
			}
		})
	}
}

// TestGPUDLBSample reproduces the efficiencies DLB wrote in talp-pages'
// dlb_1gpu_2mpi.json (the one self-consistent GPU sample: one process,
// one GPU) from its times, to DLB's 2 decimals.
func TestGPUDLBSample(t *testing.T) {
	m := &measure.Measurement{Format: measure.Format, Version: measure.Version,
		Resources:  measure.Resources{Processes: 1, Nodes: 1, CPUs: 1, GPUs: 1},
		Processes:  []measure.Process{{Rank: 0, CPUs: 1}},
		GPUDevices: []measure.GPUDevice{{Index: 0, UUID: "GPU-0"}},
		Regions: []measure.Region{{Name: "Global", Processes: []measure.ProcessAccounts{{
			Rank: 0, CPUs: 1, ElapsedNS: 6268538474, UsefulNS: 4802526101, GPURuntimeNS: 1466012373,
			GPUDevices: []measure.GPUDeviceAccount{{Device: 0, UsefulNS: 413959838, ActiveNS: 413959838 + 351761869}},
		}}}},
	}
	r := computeOne(t, m, pop.ModelTALP)
	for id, dlb := range map[string]float64{
		"parallel_efficiency": 0.77, "device_offload_efficiency": 0.77, "gpu_parallel_efficiency": 0.07,
		"gpu_load_balance": 1.00, "gpu_communication_efficiency": 0.54, "gpu_orchestration_efficiency": 0.12,
	} {
		v, ok := r.Value(id)
		if !ok || math.Round(v*100)/100 != dlb {
			t.Errorf("%s = %v (%v), DLB wrote %.2f", id, v, ok, dlb)
		}
	}
	if d := r.Device; d.N != 1 || d.SumUsefulNS != 413959838 || d.MaxActiveNS != 765721707 || d.SumActiveNS-d.SumUsefulNS != 351761869 {
		t.Errorf("Device = %+v", d)
	}
}

// TestGPUNoDeviceAccounts checks that a measurement with GPU runtime time
// but no per-device accounts (an older library, or CUDA not measured) has
// device offload efficiency and no device tree, and that the other
// models have no GPU metrics.
func TestGPUNoDeviceAccounts(t *testing.T) {
	m := buildGPU(1, gproc{200, 100, 100, 0, map[int][2]int64{0: {100, 100}}})
	r := computeOne(t, m, pop.ModelPOPHybrid)
	for _, x := range r.Metrics {
		if x.ID == pop.IDDeviceOffloadEfficiency || len(x.ID) > 4 && x.ID[:4] == "gpu_" {
			t.Errorf("pop-hybrid has %s", x.ID)
		}
	}
	m.GPUDevices = nil
	m.Regions[0].Processes[0].GPUDevices = nil
	r = computeOne(t, m, pop.ModelTALP)
	checkModel(t, r, want{"device_offload_efficiency": 0.5}, []string{"gpu_parallel_efficiency", "gpu_load_balance"}, nil)
	if r.Device.N != 0 {
		t.Errorf("Device = %+v, want none", r.Device)
	}
}
