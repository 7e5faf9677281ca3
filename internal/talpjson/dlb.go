package talpjson

import (
	"math"
	"time"

	"github.com/popmon/popmon/pop"
)

// DLB is what a DLB/TALP file says itself, beside the measurement [Read]
// synthesizes from it: the file's own resources, and per region its times,
// counters and DLB's own efficiencies. DLB writes 1.00 for the
// efficiencies of a branch that does not apply and 0.00 for a region
// without time; popmon's rule is that such metrics are absent, so a region
// keeps a branch only when it shows it: MPI when the region has MPI ranks,
// MPI calls or MPI time; OpenMP when it has parallel regions or OpenMP
// idle time; device offload and GPU metrics when it or the file has GPUs,
// or it has GPU runtime time. A region with no elapsed or useful time has
// no efficiencies. DLB's load balance In/Out are replaced where they are
// impossible (see [NoteImpossibleLoadBalance]).
type DLB struct {
	// Version is the file's "dlbVersion".
	Version string
	// Timestamp is the file's "timestamp" in UTC; zero when it has none,
	// or one in neither DLB's layout nor RFC 3339.
	Timestamp time.Time
	// Resources are the counts of the file's "resources" object (0 where
	// it lacks one).
	Resources Resources
	// Regions are the file's regions in the measurement's order: the
	// whole-run region first, named Global ([GlobalNames]).
	Regions []Region
}

// Resources are the counts of a DLB/TALP file's "resources" object, or of
// one of its regions.
type Resources struct {
	// MPIRanks is numMpiRanks (0: a program without MPI), Nodes numNodes,
	// CPUs numCpus and GPUs numGpus.
	MPIRanks, Nodes, CPUs, GPUs int
}

// Region is one region of a DLB/TALP file as DLB wrote it.
type Region struct {
	// Name is the region's name; the whole-run region is "Global".
	Name string
	// Resources are the region's numMpiRanks, numNodes, numCpus, numGpus.
	Resources
	// ElapsedNS, UsefulNS and MPINS are elapsedTime, usefulTime and
	// mpiTime.
	ElapsedNS, UsefulNS, MPINS int64
	// Instructions and Cycles are the region's counters as the file has
	// them (0 when absent): they are counter data only when both are
	// positive (DLB writes negative ones when PAPI fails).
	Instructions, Cycles float64
	// Efficiencies are DLB's own efficiencies by metric id, those that
	// apply (see [DLB]).
	Efficiencies map[string]float64
	// Tree lists the entries of [Efficiencies] that Efficiencies holds,
	// in the tree's order.
	Tree []Efficiency
}

// dlbOwn returns what the parsed file says itself.
func dlbOwn(f *file) *DLB {
	d := &DLB{
		Version:   f.dlbVersion,
		Resources: Resources{MPIRanks: f.res.ranks, Nodes: f.res.nodes, CPUs: f.res.cpus, GPUs: f.res.gpus},
	}
	if t, ok := parseTime(f.timestamp); ok {
		d.Timestamp = t
	}
	for i := range f.regions {
		d.Regions = append(d.Regions, ownRegion(&f.regions[i], d.Resources))
	}
	return d
}

// ownRegion returns DLB's view of the region r of a file with the
// resources res.
func ownRegion(r *region, res Resources) Region {
	g := Region{
		Name:      r.name,
		Resources: Resources{MPIRanks: r.ranks, Nodes: r.nodes, CPUs: r.cpus, GPUs: r.gpus},
		ElapsedNS: r.elapsed, UsefulNS: r.useful, MPINS: r.mpi,
		Instructions: r.fileInstructions, Cycles: r.fileCycles,
		Efficiencies: map[string]float64{},
	}
	if r.elapsed <= 0 || r.useful <= 0 {
		return g
	}
	gpus := r.gpus > 0 || res.GPUs > 0 || r.gpuRuntime > 0
	applies := map[Branch]bool{
		BranchTop:     true,
		BranchMPI:     r.ranks > 0 || r.mpiCalls > 0 || r.mpi > 0 || r.mpiWorkerIdle > 0,
		BranchOpenMP:  r.ompParallels > 0 || r.ompLB > 0 || r.ompSched > 0 || r.ompSer > 0,
		BranchOffload: gpus,
		BranchGPU:     gpus,
	}
	for _, e := range Efficiencies {
		if v, ok := r.eff[e.ID]; ok && applies[e.Branch] {
			g.Efficiencies[e.ID] = v
			g.Tree = append(g.Tree, e)
		}
	}
	fixLoadBalanceInOut(&g, r, max(r.nodes, res.Nodes))
	return g
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
// measurement's notes say so ([NoteImpossibleLoadBalance]).
func fixLoadBalanceInOut(g *Region, r *region, nodes int) {
	in, okIn := g.Efficiencies[pop.IDMPILoadBalanceIn]
	out, okOut := g.Efficiencies[pop.IDMPILoadBalanceOut]
	if !(okIn && impossible(in) || okOut && impossible(out)) {
		return
	}
	T := float64(r.elapsed)
	nonProc := 0.0
	if r.hasMinProc {
		nonProc = T - r.minProc
	}
	nonApp := T - (float64(r.mpi)+float64(r.mpiWorkerIdle))/float64(max(r.cpus, 1))
	v := nonApp / nonProc
	if nodes > 1 || !r.hasMinProc || nonProc <= 0 || impossible(v) || math.IsNaN(v) || math.IsInf(v, 0) {
		delete(g.Efficiencies, pop.IDMPILoadBalanceIn)
		delete(g.Efficiencies, pop.IDMPILoadBalanceOut)
		kept := g.Tree[:0]
		for _, e := range g.Tree {
			if e.ID != pop.IDMPILoadBalanceIn && e.ID != pop.IDMPILoadBalanceOut {
				kept = append(kept, e)
			}
		}
		g.Tree = kept
		return
	}
	g.Efficiencies[pop.IDMPILoadBalanceIn] = v
	g.Efficiencies[pop.IDMPILoadBalanceOut] = 1
}
