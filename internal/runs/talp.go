package runs

import (
	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// talpRun summarises a DLB/TALP JSON file from what DLB wrote itself
// (talpjson.Read): the file's resources, per region its times, counters
// and DLB's own efficiencies (those that apply, with impossible load
// balance In/Out replaced; see [talpjson.DLB]), and the counter metrics.
func talpRun(path string, m *measure.Measurement, d *talpjson.DLB) *Run {
	r := &Run{Source: path, Kind: KindTALP, DLBVersion: d.Version, Model: pop.ModelTALP,
		Timestamp: d.Timestamp, Git: gitOf(m)}
	res := d.Resources
	r.Resources = Resources{
		MPI: res.MPIRanks > 0, Processes: max(res.MPIRanks, 1), Nodes: res.Nodes,
		CPUs: res.CPUs, GPUs: res.GPUs,
	}
	r.Resources.ThreadsPerProcess = max(res.CPUs/r.Resources.Processes, 1)
	for i := range d.Regions {
		g := &d.Regions[i]
		instr, cycles := g.Instructions, g.Cycles
		reg := Region{
			Name: g.Name, Processes: max(g.MPIRanks, 1), CPUs: g.CPUs,
			ElapsedNS: g.ElapsedNS, UsefulNS: g.UsefulNS, MPINS: g.MPINS,
			Instructions: instr, Cycles: cycles, HasCounters: instr > 0 && cycles > 0,
			Metrics: map[string]float64{},
		}
		if reg.HasCounters {
			reg.Metrics[pop.IDIPC] = instr / cycles
			reg.Metrics[pop.IDInstructions] = instr
			reg.Metrics[pop.IDCycles] = cycles
			if g.UsefulNS > 0 {
				reg.Metrics[pop.IDFrequencyGHz] = cycles / float64(g.UsefulNS)
			}
		}
		for _, e := range g.Tree {
			reg.Metrics[e.ID] = g.Efficiencies[e.ID]
			reg.Tree = append(reg.Tree, Node{ID: e.ID, Name: e.Name, Depth: e.Depth})
		}
		r.Regions = append(r.Regions, reg)
	}
	return r
}
