package talpjson

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/popmon/popmon/internal/ojson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Write writes the regions (model talp's reports of the regions of run m)
// in DLB/TALP's JSON layout (DLB 3.7 key names, order and meanings, with
// DLB's mpiWorkerIdleTime of after 3.7.0) so TALP tooling such as
// talp-pages reads it. Times mean what TALP's do: mpiTime is the time
// threads spent inside MPI, mpiWorkerIdleTime the time OpenMP workers
// idled while their primary thread was in MPI (Mw), and
// ompSerializationTime includes Mw (DLB counts it in both; popmon's
// measurement keeps it apart), so DLB's formulas applied to the times give
// the efficiencies written. numOmpParallels counts every parallel region,
// nested ones included, as TALP does. Deviations, documented in
// docs/report-formats.md: efficiencies at full precision; "popmonVersion"
// added; the timestamp in UTC; GPU device maxima per device, not per
// process (0 without per-device accounts). As DLB does, an efficiency
// whose branch does not apply (no MPI, no OpenMP, no GPU) is written as
// 1.0, and every efficiency of a region without measured time as 0.0.
// Write refuses a region whose metrics were refused.
func Write(w io.Writer, m *pop.Run, regions []pop.RegionReport) error {
	out, err := document(m, regions)
	if err != nil {
		return err
	}
	return ojson.WriteIndented(w, out)
}

// document is the whole file of [Write], which [WriteCSV] and [WriteText]
// write in DLB's other layouts.
func document(m *pop.Run, regions []pop.RegionReport) (ojson.Object, error) {
	if m == nil {
		return nil, errors.New("no run: the report was not computed from a measurement")
	}
	for i := range regions {
		if regions[i].Refused != "" {
			// TALP's readers would compute the region's efficiencies from
			// times that do not add up.
			return nil, fmt.Errorf("no talp-json for region %q: %s", regions[i].Name, regions[i].Refused)
		}
	}
	out := ojson.Object{{"dlbVersion", DLBVersion}, {"popmonVersion", m.Tool.Version}}
	if t := m.Time; !t.IsZero() {
		out = append(out, ojson.Member{"timestamp", t.UTC().Format(TimeLayout)})
	}
	ranks := func(n int) int {
		if m.HasMPI {
			return n
		}
		return 0 // DLB writes 0 MPI ranks for a program without MPI
	}
	r := m.Resources
	out = append(out, ojson.Member{"resources", ojson.Object{
		{"numCpus", m.HardwareCPUs("", r.CPUs)},
		{"numNodes", r.Nodes},
		{"numMpiRanks", ranks(r.Processes)},
		{"numGpus", r.GPUs},
	}})
	app := make(ojson.Object, 0, len(regions))
	for i := range regions {
		g := &regions[i]
		t := &g.Totals
		cpus := m.RegionThreads(g.Name, g.CPUs)
		o := ojson.Object{
			{"numCpus", m.HardwareCPUs(g.Name, cpus)},
			// DLB main: the OpenMP threads taking part, over all
			// processes; popmon's CPUs are its threads (the largest
			// team plus MPI threads, nested teams' threads included;
			// a region measured per thread: the threads that measured
			// it: docs/coming-from-dlb.md).
			{"numOmpThreads", cpus},
			{"numMpiRanks", ranks(g.Processes)},
			{"numNodes", g.Nodes},
			{"avgCpus", ojson.Float(cpus)},
			{"numGpus", g.GPUs},
		}
		if r.HardwareCounters {
			// Absent counters are absent, never 0 (POP-METRICS.md §2).
			o = append(o, ojson.Member{"cycles", t.Cycles}, ojson.Member{"instructions", t.Instructions})
		}
		o = append(o, ojson.Object{
			{"numMeasurements", t.Visits},
			{"numMpiCalls", t.MPICalls + initFinalizeCalls(m, g)},
			{"numOmpParallels", t.OMPParallels},
			{"numOmpTasks", t.OMPTasks},
			{"numGpuRuntimeCalls", t.GPURuntimeCalls},
			{"elapsedTime", g.ElapsedNS},
			{"usefulTime", t.UsefulNS},
			// TALP's accounting (docs/report-formats.md): mpiTime is the
			// time of threads inside MPI (other time of imported traces
			// charged with it), mpiWorkerIdleTime the time OpenMP workers
			// idle while their primary thread is in MPI, which
			// ompSerializationTime includes as well.
			{"mpiTime", satAdd64(t.MPINS, t.OtherNS)},
			{"mpiWorkerIdleTime", t.MPIWorkerIdleNS},
			{"ompLoadImbalanceTime", t.OMPLoadImbalanceNS},
			{"ompSchedulingTime", t.OMPSchedulingNS},
			{"ompSerializationTime", satAdd64(t.OMPSerializationNS, t.MPIWorkerIdleNS)},
			{"gpuRuntimeTime", t.GPURuntimeNS},
			{"minMpiNormdProc", roundNS(t.MinMPIProcNS)},
			{"minMpiNormdNode", roundNS(t.MinMPINodeNS)},
			// Device times of model talp's device tree: sums and maxima
			// over devices, each device merged over processes by max
			// (DLB: maxima per process); 0 without device accounts.
			{"gpuUsefulTime", roundNS(g.Device.SumUsefulNS)},
			{"gpuCommunicationTime", roundNS(g.Device.SumActiveNS - g.Device.SumUsefulNS)},
			// DLB main writes it and never sets it (0).
			{"gpuInactiveTime", 0},
			{"maxGpuUsefulTime", roundNS(g.Device.MaxUsefulNS)},
			{"maxGpuActiveTime", roundNS(g.Device.MaxActiveNS)},
		}...)
		_, measured := g.Value(pop.IDParallelEfficiency)
		device := hasDevice(g)
		for _, e := range inFileOrder {
			v, ok := g.Value(e.ID)
			switch {
			case e.Branch == BranchGPU:
				// Written for regions with the device tree (all four; a
				// ratio that is not measured, 0/0, as DLB's 0.0).
				if !device {
					continue
				}
			case ok:
			case measured:
				v = 1 // the branch does not apply: DLB writes 1.00
			default:
				v = 0 // nothing measured in the region
			}
			o = append(o, ojson.Member{e.Key, ojson.Float(v)})
		}
		app = append(app, ojson.Member{g.Name, o})
	}
	out = append(out, ojson.Member{"Application", app})
	return out, nil
}

// initFinalizeCalls is what DLB counts in the whole-run region and popmon
// does not: MPI_Init and MPI_Finalize, one each per process (popmon's Global
// runs from MPI_Init's return to MPI_Finalize's entry, so neither call is
// in it; [Read] takes them out again).
func initFinalizeCalls(m *pop.Run, g *pop.RegionReport) int64 {
	if !m.HasMPI || g.Name != measure.GlobalRegion {
		return 0
	}
	return 2 * int64(g.Processes)
}

// hasDevice reports whether the region has model talp's device tree.
func hasDevice(g *pop.RegionReport) bool {
	for _, e := range gpuEfficiencies {
		if _, ok := g.Metric(e.ID); ok {
			return true
		}
	}
	return false
}

// roundNS rounds a time in ns to an integer, 0 for non-finite input.
func roundNS(v float64) int64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= math.MinInt64 || v >= math.MaxInt64 {
		return 0
	}
	return int64(math.Round(v))
}
