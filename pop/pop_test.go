package pop_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

const s = int64(1_000_000_000) // one second in ns

// proc is one process of a synthetic measurement: placement and the
// accounts of the one region under test.
type proc struct {
	node, cpus           int
	e, u, m, mw          float64 // seconds
	iser, ilb, isch, gpu float64 // seconds
	absent               bool    // did not visit the region
}

func ns(sec float64) int64 { return int64(math.Round(sec * float64(s))) }

// build makes a valid measurement with one region "R" from procs.
func build(mpi bool, gpus int, procs ...proc) *measure.Measurement {
	m := &measure.Measurement{Format: measure.Format, Version: measure.Version}
	if mpi {
		m.MPI = &measure.MPI{Library: "test", Standard: "3.1", ThreadLevel: "single"}
	}
	nodes := 0
	g := measure.Region{Name: "R"}
	for i, p := range procs {
		nodes = max(nodes, p.node+1)
		m.Processes = append(m.Processes, measure.Process{Rank: i, Node: p.node, CPUs: p.cpus})
		m.Resources.CPUs += p.cpus
		if p.absent {
			continue
		}
		g.Processes = append(g.Processes, measure.ProcessAccounts{
			Rank: i, CPUs: p.cpus, Visits: 1, ElapsedNS: ns(p.e), UsefulNS: ns(p.u), MPINS: ns(p.m),
			MPIWorkerIdleNS: ns(p.mw), OMPSerializationNS: ns(p.iser), OMPLoadImbalanceNS: ns(p.ilb),
			OMPSchedulingNS: ns(p.isch), GPURuntimeNS: ns(p.gpu),
		})
	}
	m.Resources.Processes = len(procs)
	m.Resources.Nodes = nodes
	m.Resources.GPUs = gpus
	m.Regions = []measure.Region{g}
	return m
}

// want maps metric ids to expected values; absent lists ids that must be
// absent.
type want map[string]float64

const tol = 1e-9

func TestTALP(t *testing.T) {
	tests := []struct {
		name   string
		m      *measure.Measurement
		want   want
		absent []string
		elapse int64
		nodes  int
		cpus   int
	}{
		{
			// POP-METRICS.md §2's pure MPI example: useful 1,2,3,4 s, T = 4 s.
			name: "pure MPI imbalance",
			m: build(true, 0,
				proc{cpus: 1, e: 4, u: 1, m: 3},
				proc{cpus: 1, e: 4, u: 2, m: 2},
				proc{cpus: 1, e: 4, u: 3, m: 1},
				proc{cpus: 1, e: 4, u: 4, m: 0}),
			want: want{"parallel_efficiency": 0.625, "mpi_parallel_efficiency": 0.625, "mpi_communication_efficiency": 1,
				"mpi_load_balance": 0.625, "mpi_load_balance_in": 0.625, "mpi_load_balance_out": 1},
			absent: []string{"omp_parallel_efficiency", "omp_load_balance", "device_offload_efficiency", "ipc"},
			elapse: 4 * s, nodes: 1, cpus: 4,
		},
		{
			// Both ranks lose the same MPI time: a communication, not a
			// balance, problem.
			name: "communication loss on every rank",
			m: build(true, 0,
				proc{cpus: 1, e: 2, u: 1.5, m: 0.5},
				proc{cpus: 1, e: 2, u: 1.5, m: 0.5}),
			want: want{"parallel_efficiency": 0.75, "mpi_parallel_efficiency": 0.75, "mpi_communication_efficiency": 0.75,
				"mpi_load_balance": 1, "mpi_load_balance_in": 1, "mpi_load_balance_out": 1},
			elapse: 2 * s, nodes: 1, cpus: 2,
		},
		{
			// Two nodes with different loads, imbalance inside node 0 and
			// between nodes: mpi_app 1.5, proc min 0, node min 1 →
			// In 3/4, Out 2.5/3, LB 2.5/4 = In × Out.
			name: "two nodes",
			m: build(true, 0,
				proc{node: 0, cpus: 1, e: 4, u: 4, m: 0},
				proc{node: 0, cpus: 1, e: 4, u: 2, m: 2},
				proc{node: 1, cpus: 1, e: 4, u: 3, m: 1},
				proc{node: 1, cpus: 1, e: 4, u: 1, m: 3}),
			want: want{"parallel_efficiency": 0.625, "mpi_parallel_efficiency": 0.625, "mpi_communication_efficiency": 1,
				"mpi_load_balance": 0.625, "mpi_load_balance_in": 0.75, "mpi_load_balance_out": 2.5 / 3},
			elapse: 4 * s, nodes: 2, cpus: 4,
		},
		{
			// Balanced within nodes, node 1 waits for node 0: In 1, Out < 1.
			name: "imbalance across nodes only",
			m: build(true, 0,
				proc{node: 0, cpus: 1, e: 4, u: 4},
				proc{node: 0, cpus: 1, e: 4, u: 4},
				proc{node: 1, cpus: 1, e: 4, u: 2, m: 2},
				proc{node: 1, cpus: 1, e: 4, u: 2, m: 2}),
			want: want{"mpi_load_balance": 0.75, "mpi_load_balance_in": 1, "mpi_load_balance_out": 0.75,
				"mpi_communication_efficiency": 1, "parallel_efficiency": 0.75},
			elapse: 4 * s, nodes: 2, cpus: 4,
		},
		{
			// Node CPU counts differ: node 0 has one 3-CPU rank, node 1 a
			// 1-CPU rank. C_node = Σ cpus: node 0 MPI (0.5·3)/3 = 0.5, node
			// 1 2/1 = 2; proc min 0.5, node min 0.5; mpi_app = 3.5/4. The
			// workers' 1 s idle while their primary is in MPI (Mw) is
			// serialization: active 16, active_nomp 15.
			name: "uneven CPUs per node",
			m: build(true, 0,
				proc{node: 0, cpus: 3, e: 4, u: 10.5, m: 0.5, mw: 1},
				proc{node: 1, cpus: 1, e: 4, u: 2, m: 2}),
			want: want{"mpi_parallel_efficiency": (4 - 3.5/4) / 4, "mpi_communication_efficiency": 3.5 / 4,
				"mpi_load_balance": (4 - 3.5/4) / 3.5, "mpi_load_balance_in": 1, "mpi_load_balance_out": (4 - 3.5/4) / 3.5,
				"parallel_efficiency": 12.5 / 16, "omp_parallel_efficiency": 15.0 / 16, "omp_serialization_efficiency": 15.0 / 16},
			elapse: 4 * s, nodes: 2, cpus: 4,
		},
		{
			// OpenMP only, 8 threads, T = 1 s: U 6, Iser 1, Ilb 0.6, Isch 0.4.
			name: "OpenMP without MPI",
			m:    build(false, 0, proc{cpus: 8, e: 1, u: 6, iser: 1, ilb: 0.6, isch: 0.4}),
			want: want{"parallel_efficiency": 0.75, "omp_parallel_efficiency": 0.75,
				"omp_serialization_efficiency": 6.0 / 7, "omp_load_balance": 7 / 7.6, "omp_scheduling_efficiency": 7.6 / 8},
			absent: []string{"mpi_parallel_efficiency", "mpi_load_balance", "mpi_load_balance_in", "device_offload_efficiency"},
			elapse: 1 * s, nodes: 1, cpus: 8,
		},
		{
			// Hybrid: 2 ranks × 2 CPUs, T = 1 s. The primary of rank 0 is
			// in MPI 0.3 s while its worker idles (Mw 0.3): the model's
			// Iser is 0.2 + Mw 0.4 = 0.6, and M + Mw = 0.8 is MPI time.
			name: "hybrid MPI + OpenMP",
			m: build(true, 0,
				proc{cpus: 2, e: 1, u: 1.2, m: 0.3, mw: 0.3, iser: 0.1, ilb: 0.1},
				proc{cpus: 2, e: 1, u: 1.6, m: 0.1, mw: 0.1, iser: 0.1, ilb: 0.05, isch: 0.05}),
			want: want{
				"parallel_efficiency":          2.8 / 4,
				"mpi_parallel_efficiency":      0.8,       // (1 − 0.8/4) / 1
				"mpi_communication_efficiency": 0.9,       // 1 − min(0.6/2, 0.2/2)
				"mpi_load_balance":             0.8 / 0.9, // = In × Out
				"mpi_load_balance_in":          0.8 / 0.9, // one node: node min = app
				"mpi_load_balance_out":         1,
				"omp_parallel_efficiency":      3.2 / 4, // (U + M) / active
				"omp_serialization_efficiency": 3.2 / 3.8,
				"omp_load_balance":             3.8 / 3.95,
				"omp_scheduling_efficiency":    3.95 / 4,
			},
			elapse: 1 * s, nodes: 1, cpus: 4,
		},
		{
			// GPU offload without MPI: U 4.8, G 1.466 (dlb_3_6_0.json's
			// numbers, rounded): device offload = U / (U + G).
			name:   "GPU offload",
			m:      build(false, 1, proc{cpus: 1, e: 6.268, u: 4.8, gpu: 1.466}),
			want:   want{"parallel_efficiency": 4.8 / 6.266, "device_offload_efficiency": 4.8 / 6.266},
			absent: []string{"mpi_parallel_efficiency", "omp_parallel_efficiency", "gpu_parallel_efficiency"},
			elapse: ns(6.268), nodes: 1, cpus: 1,
		},
		{
			// Rank 1 never entered the region: only ranks 0 and 2 count.
			name: "region visited by a subset of ranks",
			m: build(true, 0,
				proc{node: 0, cpus: 1, e: 2, u: 2},
				proc{node: 0, cpus: 1, absent: true},
				proc{node: 1, cpus: 1, e: 2, u: 1, m: 1}),
			want: want{"parallel_efficiency": 0.75, "mpi_parallel_efficiency": 0.75, "mpi_communication_efficiency": 1,
				"mpi_load_balance": 0.75, "mpi_load_balance_in": 1, "mpi_load_balance_out": 0.75},
			elapse: 2 * s, nodes: 2, cpus: 2,
		},
		{
			name:   "zero-time region",
			m:      build(true, 0, proc{cpus: 1}, proc{cpus: 1}),
			want:   want{},
			absent: []string{"parallel_efficiency", "mpi_parallel_efficiency", "mpi_communication_efficiency", "mpi_load_balance"},
			elapse: 0, nodes: 1, cpus: 2,
		},
		{
			// Every rank in MPI for the whole region: nonmpi_proc = 0, so
			// LB, In and Out are undefined and absent, not Inf or NaN.
			name: "all ranks entirely in MPI",
			m: build(true, 0,
				proc{cpus: 1, e: 1, m: 1},
				proc{cpus: 1, e: 1, m: 1}),
			want:   want{"parallel_efficiency": 0, "mpi_parallel_efficiency": 0, "mpi_communication_efficiency": 0},
			absent: []string{"mpi_load_balance", "mpi_load_balance_in", "mpi_load_balance_out"},
			elapse: 1 * s, nodes: 1, cpus: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := pop.Compute(tt.m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Model != pop.ModelTALP || len(rep.Regions) != 1 {
				t.Fatalf("report = %+v", rep)
			}
			r := &rep.Regions[0]
			if r.ElapsedNS != tt.elapse || r.Nodes != tt.nodes || r.CPUs != tt.cpus {
				t.Errorf("elapsed, nodes, cpus = %d, %d, %d; want %d, %d, %d", r.ElapsedNS, r.Nodes, r.CPUs, tt.elapse, tt.nodes, tt.cpus)
			}
			for id, w := range tt.want {
				got, ok := r.Value(id)
				if !ok {
					t.Errorf("%s absent, want %.6f", id, w)
				} else if math.Abs(got-w) > tol {
					t.Errorf("%s = %.9f, want %.9f", id, got, w)
				}
			}
			for _, id := range tt.absent {
				if v, ok := r.Value(id); ok {
					t.Errorf("%s = %v, want absent", id, v)
				}
			}
			checkInvariants(t, r)
		})
	}
}

// checkInvariants asserts the identities of POP-METRICS.md §2 wherever the
// metrics are present, and that the tree is well formed.
func checkInvariants(t *testing.T, r *pop.RegionReport) {
	t.Helper()
	v := func(id string) (float64, bool) { return r.Value(id) }
	product := func(whole string, parts ...string) {
		w, ok := v(whole)
		if !ok {
			return
		}
		p := 1.0
		for _, id := range parts {
			x, ok := v(id)
			if !ok {
				return
			}
			p *= x
		}
		if math.Abs(w-p) > 1e-9 {
			t.Errorf("%s = %.9f but the product of %v = %.9f", whole, w, parts, p)
		}
	}
	product("mpi_parallel_efficiency", "mpi_communication_efficiency", "mpi_load_balance")
	product("mpi_load_balance", "mpi_load_balance_in", "mpi_load_balance_out")
	product("omp_parallel_efficiency", "omp_serialization_efficiency", "omp_load_balance", "omp_scheduling_efficiency")

	seen := map[string]int{}
	for _, m := range r.Metrics {
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			t.Errorf("%s = %v", m.ID, m.Value)
		}
		if _, dup := seen[m.ID]; dup {
			t.Errorf("%s appears twice", m.ID)
		}
		if m.Parent == "" {
			if m.Depth != 0 {
				t.Errorf("%s: root with depth %d", m.ID, m.Depth)
			}
		} else if d, ok := seen[m.Parent]; !ok || m.Depth != d+1 {
			t.Errorf("%s: parent %s (seen %v) depth %d", m.ID, m.Parent, ok, m.Depth)
		}
		seen[m.ID] = m.Depth
		if m.Name == "" {
			t.Errorf("%s has no name", m.ID)
		}
	}
}

// TestParallelEfficiencyIsMPITimesOpenMP checks the TALP relation
// PE = MPI PE × OpenMP PE (no GPU) where it holds exactly: when all CPU
// time is accounted, no worker idles while its primary is in MPI (Mw = 0)
// and either the OpenMP idle time or the MPI time is zero. (Otherwise the
// talp model is not multiplicative: with X = M + Mw + O and I = Iser + Ilb
// + Isch (Iser including Mw), PE = MPI PE × OMP PE + Mw/(T·C) − X·I/(T·C)²,
// a property of TALP's hybrid-v2 model.)
func TestParallelEfficiencyIsMPITimesOpenMP(t *testing.T) {
	tests := []struct {
		name string
		m    *measure.Measurement
	}{
		{"every thread calls MPI, no OpenMP idle", build(true, 0,
			proc{cpus: 2, e: 2, u: 3, m: 1},
			proc{cpus: 2, e: 2, u: 2, m: 2})},
		{"OpenMP imbalance with MPI present but unused", build(true, 0,
			proc{cpus: 4, e: 1, u: 3, ilb: 0.5, iser: 0.3, isch: 0.2},
			proc{cpus: 4, e: 1, u: 3.5, ilb: 0.5})},
		{"pure MPI", build(true, 0,
			proc{cpus: 1, e: 3, u: 1, m: 2},
			proc{cpus: 1, e: 3, u: 3})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := pop.Compute(tt.m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			r := &rep.Regions[0]
			pe, _ := r.Value("parallel_efficiency")
			mpi, ok1 := r.Value("mpi_parallel_efficiency")
			omp, ok2 := r.Value("omp_parallel_efficiency")
			if !ok1 {
				t.Fatal("mpi_parallel_efficiency absent")
			}
			if !ok2 {
				omp = 1 // no OpenMP: the branch is absent, its efficiency 1
			}
			if pe >= 1 || math.Abs(pe-mpi*omp) > 1e-9 {
				t.Errorf("PE %.9f, MPI PE × OMP PE = %.9f × %.9f = %.9f", pe, mpi, omp, mpi*omp)
			}
		})
	}
}

func TestTreeShape(t *testing.T) {
	m := build(true, 1, proc{cpus: 2, e: 1, u: 1.5, m: 0.1, mw: 0.1, iser: 0.1, gpu: 0.2})
	m.Resources.HardwareCounters = true
	m.Regions[0].Processes[0].Cycles = 3 * s
	m.Regions[0].Processes[0].Instructions = 6 * s
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range rep.Regions[0].Metrics {
		got = append(got, strings.Repeat(".", x.Depth)+x.ID+"<"+x.Parent+">")
	}
	want := []string{
		"parallel_efficiency<>",
		".mpi_parallel_efficiency<parallel_efficiency>",
		"..mpi_communication_efficiency<mpi_parallel_efficiency>",
		"..mpi_load_balance<mpi_parallel_efficiency>",
		"...mpi_load_balance_in<mpi_load_balance>",
		"...mpi_load_balance_out<mpi_load_balance>",
		".omp_parallel_efficiency<parallel_efficiency>",
		"..omp_serialization_efficiency<omp_parallel_efficiency>",
		"..omp_load_balance<omp_parallel_efficiency>",
		"..omp_scheduling_efficiency<omp_parallel_efficiency>",
		".device_offload_efficiency<parallel_efficiency>",
		"ipc<>", "frequency_ghz<>", "instructions<>", "cycles<>",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r := &rep.Regions[0]
	for id, w := range map[string]float64{"ipc": 2, "frequency_ghz": 2, "instructions": 6e9, "cycles": 3e9,
		"device_offload_efficiency": 1.7 / 1.9, "parallel_efficiency": 1.5 / 2} {
		if got, ok := r.Value(id); !ok || math.Abs(got-w) > tol {
			t.Errorf("%s = %v (%v), want %v", id, got, ok, w)
		}
	}
	if m, ok := r.Metric("omp_load_balance"); !ok || m.Name != "Load Balance" || m.Kind != pop.KindEfficiency {
		t.Errorf("omp_load_balance = %+v", m)
	}
	if m, ok := r.Metric("frequency_ghz"); !ok || m.Kind != pop.KindFrequency {
		t.Errorf("frequency_ghz = %+v", m)
	}
}

func TestTotals(t *testing.T) {
	m := build(true, 0,
		proc{node: 0, cpus: 2, e: 2, u: 3, m: 0.4, mw: 0.4, iser: 0.2},
		proc{node: 1, cpus: 1, e: 1.5, u: 1, m: 0.5})
	m.Regions[0].Processes[0].MPICalls = 7
	m.Regions[0].Processes[1].MPICalls = 5
	m.Regions[0].Processes[1].Visits = 3
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	tot := rep.Regions[0].Totals
	if tot.UsefulNS != 4*s || tot.MPINS != ns(0.9) || tot.MPIWorkerIdleNS != ns(0.4) || tot.OMPSerializationNS != ns(0.2) ||
		tot.MPICalls != 12 || tot.Visits != 4 {
		t.Errorf("totals = %+v", tot)
	}
	// mpi_app = 1.3 s / 3 CPUs; proc min = min(0.8/2, 0.5/1) = 0.4 s;
	// node min = min(0.8/2, 0.5/1) = 0.4 s.
	for name, pair := range map[string][2]float64{
		"MPIAppNS": {tot.MPIAppNS, 1.3e9 / 3}, "MinMPIProcNS": {tot.MinMPIProcNS, 0.4e9}, "MinMPINodeNS": {tot.MinMPINodeNS, 0.4e9},
	} {
		if math.Abs(pair[0]-pair[1]) > 1 {
			t.Errorf("%s = %v, want %v", name, pair[0], pair[1])
		}
	}
	if rep.Regions[0].ElapsedNS != 2*s {
		t.Errorf("elapsed = %d, want T = max E_i = 2 s", rep.Regions[0].ElapsedNS)
	}
}

func TestComputeTestdata(t *testing.T) {
	tests := []struct {
		file, region string
		want         want
		absent       []string
	}{
		{"doc_example.json", "Global", want{"parallel_efficiency": 0.75, "mpi_load_balance": 0.75, "mpi_communication_efficiency": 1}, []string{"omp_parallel_efficiency"}},
		{"mpi_imbalance.json", "Global", want{"parallel_efficiency": 0.625, "mpi_load_balance_in": 0.625, "mpi_load_balance_out": 1}, nil},
		{"mpi_imbalance.json", "io", want{"parallel_efficiency": 0.8, "mpi_communication_efficiency": 0.8, "mpi_load_balance": 1}, nil},
		{"mpi_imbalance.json", "empty", want{}, []string{"parallel_efficiency"}},
		{"openmp_only.json", "Global", want{"parallel_efficiency": 34.0 / 40, "omp_serialization_efficiency": 34.0 / 37}, []string{"mpi_parallel_efficiency"}},
		{"gpu_offload.json", "Global", want{"device_offload_efficiency": 4802526101.0 / (4802526101 + 1466012373)}, nil},
		{"hybrid_2nodes.json", "halo exchange", want{"parallel_efficiency": 0.6, "mpi_parallel_efficiency": 0.6}, nil},
	}
	for _, tt := range tests {
		m, err := measure.ReadFile(filepath.Join("..", "measure", "testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := pop.Compute(m, pop.ModelTALP)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := rep.Region(tt.region)
		if !ok {
			t.Fatalf("%s: no region %q in %v", tt.file, tt.region, rep.RegionNames())
		}
		for id, w := range tt.want {
			if got, ok := r.Value(id); !ok || math.Abs(got-w) > 1e-6 {
				t.Errorf("%s %s: %s = %v (%v), want %v", tt.file, tt.region, id, got, ok, w)
			}
		}
		for _, id := range tt.absent {
			if _, ok := r.Value(id); ok {
				t.Errorf("%s %s: %s present, want absent", tt.file, tt.region, id)
			}
		}
		checkInvariants(t, r)
	}
}

func TestComputeErrors(t *testing.T) {
	good := build(true, 0, proc{cpus: 1, e: 1, u: 1})
	bad := build(true, 0, proc{cpus: 1, e: 1, u: 1})
	bad.Regions[0].Processes[0].UsefulNS = -1
	tests := []struct {
		name  string
		m     *measure.Measurement
		model pop.Model
		want  string
	}{
		{"unknown model", good, "pop-magic", `unknown metric model "pop-magic": use one of talp`},
		{"nil", nil, pop.ModelTALP, "no measurement"},
		{"invalid", bad, pop.ModelTALP, "compute talp metrics: invalid measurement: regions[0] \"R\": processes[0] has negative useful_ns"},
	}
	for _, tt := range tests {
		_, err := pop.Compute(tt.m, tt.model)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestParseModel(t *testing.T) {
	for in, want := range map[string]pop.Model{"": pop.ModelTALP, "talp": pop.ModelTALP, "TALP": pop.ModelTALP} {
		if got, err := pop.ParseModel(in); err != nil || got != want {
			t.Errorf("ParseModel(%q) = %q, %v", in, got, err)
		}
	}
	for in, want := range map[string]pop.Model{"pop-hybrid": pop.ModelPOPHybrid, "POP-ADDITIVE": pop.ModelPOPAdditive} {
		if got, err := pop.ParseModel(in); err != nil || got != want {
			t.Errorf("ParseModel(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := pop.ParseModel("pop-magic"); err == nil || !strings.Contains(err.Error(), "use one of talp, pop-hybrid, pop-additive") {
		t.Errorf("ParseModel(pop-magic) err = %v", err)
	}
}

func TestComputeIsDeterministic(t *testing.T) {
	m, err := measure.ReadFile(filepath.Join("..", "measure", "testdata", "hybrid_2nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := pop.ComputeAll(m)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		b, _ := pop.ComputeAll(m)
		if !reflect.DeepEqual(a, b) {
			t.Fatal("two Compute calls differ")
		}
	}
}

func FuzzCompute(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "measure", "testdata", "*.json"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := measure.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		reps, err := pop.ComputeAll(m)
		if err != nil {
			t.Fatalf("Compute failed on a measurement Read accepted: %v", err)
		}
		for _, rep := range reps {
			for i := range rep.Regions {
				for _, x := range rep.Regions[i].Metrics {
					if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
						t.Fatalf("%s %s %s = %v", rep.Model, rep.Regions[i].Name, x.ID, x.Value)
					}
				}
			}
		}
	})
}

func TestUnvisitedRegionAndLookup(t *testing.T) {
	m := build(true, 0, proc{cpus: 1, e: 1, u: 1})
	m.Regions = append(m.Regions, measure.Region{Name: "never"}, measure.Region{Name: "Solve", Processes: m.Regions[0].Processes})
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.RegionNames(); !reflect.DeepEqual(got, []string{"R", "never", "Solve"}) {
		t.Errorf("RegionNames = %v", got)
	}
	r, ok := rep.Region("never")
	if !ok || r.Name != "never" {
		t.Fatalf("Region(never) = %v, %v", r, ok)
	}
	if _, ok := rep.Region("NEVER"); ok {
		t.Error("Region(NEVER) found a region: names are case-sensitive")
	}
	if r.Processes != 0 || r.Nodes != 0 || r.CPUs != 0 || r.ElapsedNS != 0 || len(r.Metrics) != 0 {
		t.Errorf("unvisited region = %+v", *r)
	}
	if _, ok := r.Value(pop.IDParallelEfficiency); ok {
		t.Error("unvisited region has a parallel efficiency")
	}
	if r, ok := rep.Region("Solve"); !ok || r.Name != "Solve" {
		t.Errorf("Region(Solve) = %v, %v", r, ok)
	}
	if _, ok := rep.Region("missing"); ok {
		t.Error("Region(missing) found something")
	}
	var nilRep *pop.Report
	if _, ok := nilRep.Region("R"); ok {
		t.Error("nil report has regions")
	}
}
