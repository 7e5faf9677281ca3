package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/pop"
)

// talpTimeLayout is DLB's timestamp layout: local time without a zone,
// read as UTC.
const talpTimeLayout = "2006-01-02T15:04:05"

// talpFile is the part of a DLB/TALP JSON file that runs reads.
type talpFile struct {
	DLBVersion string `json:"dlbVersion"`
	Timestamp  string `json:"timestamp"`
	Resources  struct {
		NumCpus     int `json:"numCpus"`
		NumNodes    int `json:"numNodes"`
		NumMpiRanks int `json:"numMpiRanks"`
		NumGpus     int `json:"numGpus"`
	} `json:"resources"`
	Metadata *struct {
		GitCommit        string `json:"gitCommit"`
		GitBranch        string `json:"gitBranch"`
		GitTimestamp     string `json:"gitTimestamp"`
		IsMergeRequest   bool   `json:"isMergeRequest"`
		DefaultGitBranch string `json:"defaultGitBranch"`
	} `json:"metadata"`
}

// talpRegion is one region of "Application". Counters are floats in DLB
// 3.5 ("21817855.00").
type talpRegion struct {
	NumCpus              int      `json:"numCpus"`
	NumMpiRanks          int      `json:"numMpiRanks"`
	NumNodes             int      `json:"numNodes"`
	NumGpus              int      `json:"numGpus"`
	Cycles               float64  `json:"cycles"`
	Instructions         float64  `json:"instructions"`
	NumMpiCalls          float64  `json:"numMpiCalls"`
	NumOmpParallels      float64  `json:"numOmpParallels"`
	ElapsedTime          float64  `json:"elapsedTime"`
	UsefulTime           float64  `json:"usefulTime"`
	MpiTime              float64  `json:"mpiTime"`
	MpiWorkerIdleTime    float64  `json:"mpiWorkerIdleTime"`
	OmpLoadImbalanceTime float64  `json:"ompLoadImbalanceTime"`
	OmpSchedulingTime    float64  `json:"ompSchedulingTime"`
	OmpSerializationTime float64  `json:"ompSerializationTime"`
	GpuRuntimeTime       float64  `json:"gpuRuntimeTime"`
	MinMpiNormdProc      *float64 `json:"minMpiNormdProc"`
	ParallelEfficiency   *float64 `json:"parallelEfficiency"`
	MpiParallelEff       *float64 `json:"mpiParallelEfficiency"`
	MpiCommEff           *float64 `json:"mpiCommunicationEfficiency"`
	MpiLB                *float64 `json:"mpiLoadBalance"`
	MpiLBIn              *float64 `json:"mpiLoadBalanceIn"`
	MpiLBOut             *float64 `json:"mpiLoadBalanceOut"`
	OmpParallelEff       *float64 `json:"ompParallelEfficiency"`
	OmpSerEff            *float64 `json:"ompSerializationEfficiency"`
	OmpLB                *float64 `json:"ompLoadBalance"`
	OmpSchedEff          *float64 `json:"ompSchedulingEfficiency"`
	DeviceOffloadEff     *float64 `json:"deviceOffloadEfficiency"`
	GpuParallelEff       *float64 `json:"gpuParallelEfficiency"`
	GpuLB                *float64 `json:"gpuLoadBalance"`
	GpuCommEff           *float64 `json:"gpuCommunicationEfficiency"`
	GpuOrchEff           *float64 `json:"gpuOrchestrationEfficiency"`
}

// talpNode is one efficiency of TALP's tree, with the branch it belongs to.
type talpNode struct {
	id, name string
	depth    int
	branch   string // "", "mpi", "omp", "offload", "gpu"
	value    func(r *talpRegion) *float64
}

// talpTree is TALP's efficiency tree (model talp) in popmon's order.
var talpTree = []talpNode{
	{pop.IDParallelEfficiency, "Parallel efficiency", 0, "", func(r *talpRegion) *float64 { return r.ParallelEfficiency }},
	{pop.IDMPIParallelEfficiency, "MPI Parallel efficiency", 1, "mpi", func(r *talpRegion) *float64 { return r.MpiParallelEff }},
	{pop.IDMPICommunicationEfficiency, "Communication efficiency", 2, "mpi", func(r *talpRegion) *float64 { return r.MpiCommEff }},
	{pop.IDMPILoadBalance, "Load Balance", 2, "mpi", func(r *talpRegion) *float64 { return r.MpiLB }},
	{pop.IDMPILoadBalanceIn, "In", 3, "mpi", func(r *talpRegion) *float64 { return r.MpiLBIn }},
	{pop.IDMPILoadBalanceOut, "Out", 3, "mpi", func(r *talpRegion) *float64 { return r.MpiLBOut }},
	{pop.IDOMPParallelEfficiency, "OpenMP Parallel efficiency", 1, "omp", func(r *talpRegion) *float64 { return r.OmpParallelEff }},
	{pop.IDOMPSerializationEfficiency, "Serialization efficiency", 2, "omp", func(r *talpRegion) *float64 { return r.OmpSerEff }},
	{pop.IDOMPLoadBalance, "Load Balance", 2, "omp", func(r *talpRegion) *float64 { return r.OmpLB }},
	{pop.IDOMPSchedulingEfficiency, "Scheduling efficiency", 2, "omp", func(r *talpRegion) *float64 { return r.OmpSchedEff }},
	{pop.IDDeviceOffloadEfficiency, "Device offload efficiency", 1, "offload", func(r *talpRegion) *float64 { return r.DeviceOffloadEff }},
	{pop.IDGPUParallelEfficiency, "GPU Parallel efficiency", 0, "gpu", func(r *talpRegion) *float64 { return r.GpuParallelEff }},
	{pop.IDGPULoadBalance, "Load Balance", 1, "gpu", func(r *talpRegion) *float64 { return r.GpuLB }},
	{pop.IDGPUCommunicationEfficiency, "Communication efficiency", 1, "gpu", func(r *talpRegion) *float64 { return r.GpuCommEff }},
	{pop.IDGPUOrchestrationEfficiency, "Orchestration efficiency", 1, "gpu", func(r *talpRegion) *float64 { return r.GpuOrchEff }},
}

// loadTALP summarises a DLB/TALP JSON file. DLB writes 1.00 for the
// efficiencies of a branch that does not apply and 0.00 for a region
// without time; popmon's rule is that such metrics are absent, so a branch
// is kept only when the region shows it: MPI when the region has MPI ranks,
// MPI calls or MPI time; OpenMP when it has parallel regions or OpenMP
// idle time; device offload and GPU metrics when it has GPUs or GPU
// runtime time. A region with no elapsed or useful time has no metrics.
// DLB's load balance In/Out are replaced where they are impossible (see
// fixLoadBalanceInOut).
func loadTALP(path string, app json.RawMessage, data []byte) (*Run, error) {
	var f talpFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: bad DLB/TALP JSON: %v", path, err)
	}
	r := &Run{Source: path, Kind: KindTALP, DLBVersion: f.DLBVersion, Model: pop.ModelTALP}
	if f.Timestamp != "" {
		t, err := time.Parse(talpTimeLayout, f.Timestamp)
		if err != nil {
			t, err = time.Parse(time.RFC3339, f.Timestamp)
		}
		if err == nil {
			r.Timestamp = t.UTC()
		}
	}
	if md := f.Metadata; md != nil {
		r.Git = Git{Commit: md.GitCommit, Branch: md.GitBranch, Timestamp: md.GitTimestamp,
			IsMergeRequest: md.IsMergeRequest, DefaultBranch: md.DefaultGitBranch}
	}
	res := f.Resources
	r.Resources = Resources{
		MPI: res.NumMpiRanks > 0, Processes: max(res.NumMpiRanks, 1), Nodes: res.NumNodes,
		CPUs: res.NumCpus, GPUs: res.NumGpus,
	}
	r.Resources.ThreadsPerProcess = max(res.NumCpus/r.Resources.Processes, 1)

	names, raws, err := orderedObject(app)
	if err != nil {
		return nil, fmt.Errorf("%s: bad DLB/TALP JSON: %v", path, err)
	}
	hasGlobal := false
	for _, n := range names {
		hasGlobal = hasGlobal || n == GlobalNames[0]
	}
	global := -1
	for i, n := range names {
		var tr talpRegion
		if err := json.Unmarshal(raws[i], &tr); err != nil {
			return nil, fmt.Errorf("%s: region %q: bad DLB/TALP JSON: %v", path, n, err)
		}
		name := n
		if !hasGlobal && global < 0 && isGlobalName(n) {
			name = GlobalNames[0]
		}
		reg := talpSummary(name, &tr, res.NumGpus, res.NumNodes)
		if name == GlobalNames[0] && global < 0 {
			global = len(r.Regions)
		}
		r.Regions = append(r.Regions, reg)
	}
	if len(r.Regions) == 0 {
		return nil, fmt.Errorf("%s: DLB/TALP JSON without regions in \"Application\"", path)
	}
	if global > 0 { // Global first
		g := r.Regions[global]
		copy(r.Regions[1:global+1], r.Regions[:global])
		r.Regions[0] = g
	}
	return r, nil
}

func isGlobalName(n string) bool {
	for _, g := range GlobalNames {
		if n == g {
			return true
		}
	}
	return false
}

// talpSummary turns one TALP region into a Region; fileNodes is the
// file's resources.numNodes.
func talpSummary(name string, tr *talpRegion, fileGPUs, fileNodes int) Region {
	reg := Region{
		Name: name, Processes: max(tr.NumMpiRanks, 1), CPUs: tr.NumCpus,
		ElapsedNS: toNS(tr.ElapsedTime), UsefulNS: toNS(tr.UsefulTime), MPINS: toNS(tr.MpiTime),
		Instructions: tr.Instructions, Cycles: tr.Cycles,
		HasCounters: tr.Instructions > 0 && tr.Cycles > 0,
		Metrics:     map[string]float64{},
	}
	if reg.HasCounters {
		reg.Metrics[pop.IDIPC] = tr.Instructions / tr.Cycles
		reg.Metrics[pop.IDInstructions] = tr.Instructions
		reg.Metrics[pop.IDCycles] = tr.Cycles
		if tr.UsefulTime > 0 {
			reg.Metrics[pop.IDFrequencyGHz] = tr.Cycles / tr.UsefulTime
		}
	}
	if tr.ElapsedTime <= 0 || tr.UsefulTime <= 0 {
		return reg
	}
	gpus := tr.NumGpus > 0 || fileGPUs > 0 || tr.GpuRuntimeTime > 0
	branch := map[string]bool{
		"":        true,
		"mpi":     tr.NumMpiRanks > 0 || tr.NumMpiCalls > 0 || tr.MpiTime > 0 || tr.MpiWorkerIdleTime > 0,
		"omp":     tr.NumOmpParallels > 0 || tr.OmpLoadImbalanceTime > 0 || tr.OmpSchedulingTime > 0 || tr.OmpSerializationTime > 0,
		"offload": gpus,
		"gpu":     gpus,
	}
	for _, n := range talpTree {
		v := n.value(tr)
		if v == nil || !branch[n.branch] || math.IsNaN(*v) || math.IsInf(*v, 0) {
			continue
		}
		reg.Metrics[n.id] = *v
		reg.Tree = append(reg.Tree, Node{ID: n.id, Name: n.name, Depth: n.depth})
	}
	fixLoadBalanceInOut(&reg, tr, max(tr.NumNodes, fileNodes))
	return reg
}

// fixLoadBalanceInOut replaces DLB's load balance In and Out where either
// is impossible (below 0 or above 1: DLB caps a node's CPUs at its
// hardware CPUs, which breaks them when a node runs more ranks or threads
// than it has cores; POP-METRICS.md, Deviation (node CPUs)). On one node
// they follow from the file's times exactly, as model talp defines them:
// the node's MPI time is the application's, so In = nonmpi_app /
// nonmpi_proc (the load balance, from mpiTime + mpiWorkerIdleTime,
// numCpus and minMpiNormdProc) and Out = 1. On several nodes the file does
// not say how MPI time divides among them: both are removed. The
// converted measurement's notes (internal/talpjson) say so.
func fixLoadBalanceInOut(reg *Region, tr *talpRegion, nodes int) {
	in, okIn := reg.Metrics[pop.IDMPILoadBalanceIn]
	out, okOut := reg.Metrics[pop.IDMPILoadBalanceOut]
	if !(okIn && impossibleEff(in) || okOut && impossibleEff(out)) {
		return
	}
	drop := func(ids ...string) {
		for _, id := range ids {
			delete(reg.Metrics, id)
		}
		kept := reg.Tree[:0]
		for _, n := range reg.Tree {
			if _, ok := reg.Metrics[n.ID]; ok || n.ID != pop.IDMPILoadBalanceIn && n.ID != pop.IDMPILoadBalanceOut {
				kept = append(kept, n)
			}
		}
		reg.Tree = kept
	}
	T := tr.ElapsedTime
	nonProc := 0.0
	if tr.MinMpiNormdProc != nil {
		nonProc = T - *tr.MinMpiNormdProc
	}
	nonApp := T - (tr.MpiTime+tr.MpiWorkerIdleTime)/float64(max(tr.NumCpus, 1))
	v := nonApp / nonProc
	if nodes > 1 || tr.MinMpiNormdProc == nil || nonProc <= 0 || math.IsNaN(v) || math.IsInf(v, 0) || impossibleEff(v) {
		drop(pop.IDMPILoadBalanceIn, pop.IDMPILoadBalanceOut)
		return
	}
	reg.Metrics[pop.IDMPILoadBalanceIn] = v
	reg.Metrics[pop.IDMPILoadBalanceOut] = 1
}

// impossibleEff reports whether one of DLB's efficiencies is outside
// [0, 1] (DLB rounds to 2 decimals, so a true value never reads above
// 1.00).
func impossibleEff(v float64) bool { return v < 0 || v > 1+1e-9 }

func toNS(v float64) int64 {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(math.Round(v))
}

// orderedObject returns the regions of "Application" in file order; each
// must be a JSON object.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	names, vals, err := talpjson.OrderedObject(raw)
	if errors.Is(err, talpjson.ErrNotObject) {
		return nil, nil, errNotObject
	}
	if err != nil {
		return nil, nil, err
	}
	for i, v := range vals {
		if t := strings.TrimSpace(string(v)); !strings.HasPrefix(t, "{") {
			return nil, nil, fmt.Errorf("region %q is not a JSON object", names[i])
		}
	}
	return names, vals, nil
}
