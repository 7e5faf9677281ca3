package talpjson

import (
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TimeLayout is DLB's timestamp layout: local time without a zone. popmon
// reads it as UTC and writes UTC in it.
const TimeLayout = "2006-01-02T15:04:05"

// DLBVersion is the "dlbVersion" [Write] writes: the DLB release whose JSON
// layout and metric meanings popmon's talp-json follows.
const DLBVersion = "3.7"

// GlobalNames are the names DLB gave the whole-run region: "Global" (DLB ≥
// 3.5 and popmon), "Application" (DLB 3.5 pre-releases, e.g. GENE-X's
// files) and "MPI Execution" (DLB ≤ 3.4). [Read] makes the first of them
// the file has, in this order, the Global region.
var GlobalNames = []string{measure.GlobalRegion, "Application", "MPI Execution"}

// Branch is the part of model talp's tree an efficiency belongs to; DLB
// writes every efficiency of every region, with placeholders where a
// branch does not apply (see [Read]).
type Branch string

// Branches of model talp's tree.
const (
	BranchTop     Branch = ""        // parallel efficiency
	BranchMPI     Branch = "mpi"     // the MPI efficiencies
	BranchOpenMP  Branch = "omp"     // the OpenMP efficiencies
	BranchOffload Branch = "offload" // device offload efficiency
	BranchGPU     Branch = "gpu"     // the GPU device tree
)

// Efficiency is one of DLB's efficiency keys: popmon's metric id for it
// (POP-METRICS.md §9) and its node in model talp's tree.
type Efficiency struct {
	// Key is DLB's key, ID popmon's metric id.
	Key, ID string
	// Name and Depth place the metric in model talp's tree (the names of
	// popmon's and TALP's text reports).
	Name  string
	Depth int
	// Branch is the part of the tree the metric belongs to.
	Branch Branch
	// FileOrder is the key's place in a region of DLB's files (DLB 3.7),
	// which lists OpenMP's serialization efficiency after its load balance
	// and scheduling efficiency; the table is in the tree's order.
	FileOrder int
}

// Efficiencies are DLB's efficiency keys in the order of model talp's tree
// (the GPU device tree last, in both orders).
var Efficiencies = []Efficiency{
	{"parallelEfficiency", pop.IDParallelEfficiency, "Parallel efficiency", 0, BranchTop, 0},
	{"mpiParallelEfficiency", pop.IDMPIParallelEfficiency, "MPI Parallel efficiency", 1, BranchMPI, 1},
	{"mpiCommunicationEfficiency", pop.IDMPICommunicationEfficiency, "Communication efficiency", 2, BranchMPI, 2},
	{"mpiLoadBalance", pop.IDMPILoadBalance, "Load Balance", 2, BranchMPI, 3},
	{"mpiLoadBalanceIn", pop.IDMPILoadBalanceIn, "In", 3, BranchMPI, 4},
	{"mpiLoadBalanceOut", pop.IDMPILoadBalanceOut, "Out", 3, BranchMPI, 5},
	{"ompParallelEfficiency", pop.IDOMPParallelEfficiency, "OpenMP Parallel efficiency", 1, BranchOpenMP, 6},
	{"ompSerializationEfficiency", pop.IDOMPSerializationEfficiency, "Serialization efficiency", 2, BranchOpenMP, 9},
	{"ompLoadBalance", pop.IDOMPLoadBalance, "Load Balance", 2, BranchOpenMP, 7},
	{"ompSchedulingEfficiency", pop.IDOMPSchedulingEfficiency, "Scheduling efficiency", 2, BranchOpenMP, 8},
	{"deviceOffloadEfficiency", pop.IDDeviceOffloadEfficiency, "Device offload efficiency", 1, BranchOffload, 10},
	{"gpuParallelEfficiency", pop.IDGPUParallelEfficiency, "GPU Parallel efficiency", 0, BranchGPU, 11},
	{"gpuLoadBalance", pop.IDGPULoadBalance, "Load Balance", 1, BranchGPU, 12},
	{"gpuCommunicationEfficiency", pop.IDGPUCommunicationEfficiency, "Communication efficiency", 1, BranchGPU, 13},
	{"gpuOrchestrationEfficiency", pop.IDGPUOrchestrationEfficiency, "Orchestration efficiency", 1, BranchGPU, 14},
}

// inFileOrder is [Efficiencies] in DLB's order.
var inFileOrder = func() []Efficiency {
	out := make([]Efficiency, len(Efficiencies))
	for _, e := range Efficiencies {
		out[e.FileOrder] = e
	}
	return out
}()

// gpuEfficiencies are the GPU device tree's entries of [Efficiencies].
var gpuEfficiencies = func() []Efficiency {
	var out []Efficiency
	for _, e := range Efficiencies {
		if e.Branch == BranchGPU {
			out = append(out, e)
		}
	}
	return out
}()
