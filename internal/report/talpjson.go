package report

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TALPDLBVersion is the "dlbVersion" popmon writes in talp-json: the DLB
// release whose JSON layout and metric meanings talp-json follows.
const TALPDLBVersion = "3.7"

// talpTimeLayout is DLB's timestamp layout (no zone).
const talpTimeLayout = "2006-01-02T15:04:05"

// talpEfficiencies maps TALP's efficiency keys, in DLB's order, to popmon
// metric ids, with the value DLB writes when the branch does not apply.
var talpEfficiencies = []struct {
	key, id string
}{
	{"parallelEfficiency", pop.IDParallelEfficiency},
	{"mpiParallelEfficiency", pop.IDMPIParallelEfficiency},
	{"mpiCommunicationEfficiency", pop.IDMPICommunicationEfficiency},
	{"mpiLoadBalance", pop.IDMPILoadBalance},
	{"mpiLoadBalanceIn", pop.IDMPILoadBalanceIn},
	{"mpiLoadBalanceOut", pop.IDMPILoadBalanceOut},
	{"ompParallelEfficiency", pop.IDOMPParallelEfficiency},
	{"ompLoadBalance", pop.IDOMPLoadBalance},
	{"ompSchedulingEfficiency", pop.IDOMPSchedulingEfficiency},
	{"ompSerializationEfficiency", pop.IDOMPSerializationEfficiency},
	{"deviceOffloadEfficiency", pop.IDDeviceOffloadEfficiency},
}

// talpGPUEfficiencies are written for regions with the device tree (all
// four; a ratio that is not measured, 0/0, as DLB's 0.0).
var talpGPUEfficiencies = []struct {
	key, id string
}{
	{"gpuParallelEfficiency", pop.IDGPUParallelEfficiency},
	{"gpuLoadBalance", pop.IDGPULoadBalance},
	{"gpuCommunicationEfficiency", pop.IDGPUCommunicationEfficiency},
	{"gpuOrchestrationEfficiency", pop.IDGPUOrchestrationEfficiency},
}

// TALPJSON writes the report in DLB/TALP's JSON layout (DLB 3.7 key
// names, order and meanings, with DLB's mpiWorkerIdleTime of after 3.7.0)
// so TALP tooling such as talp-pages reads it. Times mean what TALP's do:
// mpiTime is the time threads spent inside MPI, mpiWorkerIdleTime the time
// OpenMP workers idled while their primary thread was in MPI (Mw), and
// ompSerializationTime includes Mw (DLB counts it in both; popmon's
// measurement keeps it apart), so DLB's formulas applied to the times
// give the efficiencies written. numOmpParallels counts every parallel
// region, nested ones included, as TALP does. Deviations, documented in
// docs/report-formats.md: efficiencies at full precision; "popmonVersion"
// added; the timestamp in UTC; GPU device maxima per device, not per
// process (0 without per-device accounts). As
// DLB does, an efficiency whose branch does not apply (no MPI, no OpenMP,
// no GPU) is written as 1.0, and every efficiency of a region without
// measured time as 0.0.
func TALPJSON(w io.Writer, rep *pop.Report, m *measure.Measurement, opts Options) error {
	if m == nil {
		return errors.New("talp-json needs the measurement, not only the report")
	}
	if rep.Refused != "" {
		// TALP's readers compute efficiencies from the times: they would
		// trust what popmon does not.
		return fmt.Errorf("no talp-json for this measurement: %s", rep.Refused)
	}
	regs, err := regions(rep, opts)
	if err != nil {
		return err
	}
	for i := range regs {
		if regs[i].Refused != "" {
			// TALP's readers would compute the region's efficiencies from
			// times that do not add up.
			return fmt.Errorf("no talp-json for region %q: %s", regs[i].Name, regs[i].Refused)
		}
	}
	out := object{{"dlbVersion", TALPDLBVersion}, {"popmonVersion", m.Tool.Version}}
	if t, err := m.Time(); err == nil {
		out = append(out, member{"timestamp", t.UTC().Format(talpTimeLayout)})
	}
	ranks := func(n int) int {
		if m.HasMPI() {
			return n
		}
		return 0 // DLB writes 0 MPI ranks for a program without MPI
	}
	r := m.Resources
	out = append(out, member{"resources", object{
		{"numCpus", r.CPUs},
		{"numNodes", r.Nodes},
		{"numMpiRanks", ranks(r.Processes)},
		{"numGpus", r.GPUs},
	}})
	app := make(object, 0, len(regs))
	for i := range regs {
		g := &regs[i]
		t := &g.Totals
		o := object{
			{"numCpus", g.CPUs},
			{"numMpiRanks", ranks(g.Processes)},
			{"numNodes", g.Nodes},
			{"avgCpus", float(g.CPUs)},
			{"numGpus", g.GPUs},
		}
		if r.HardwareCounters {
			// Absent counters are absent, never 0 (POP-METRICS.md §2).
			o = append(o, member{"cycles", t.Cycles}, member{"instructions", t.Instructions})
		}
		o = append(o, object{
			{"numMeasurements", t.Visits},
			{"numMpiCalls", t.MPICalls},
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
			{"mpiTime", satAdd(t.MPINS, t.OtherNS)},
			{"mpiWorkerIdleTime", t.MPIWorkerIdleNS},
			{"ompLoadImbalanceTime", t.OMPLoadImbalanceNS},
			{"ompSchedulingTime", t.OMPSchedulingNS},
			{"ompSerializationTime", satAdd(t.OMPSerializationNS, t.MPIWorkerIdleNS)},
			{"gpuRuntimeTime", t.GPURuntimeNS},
			{"minMpiNormdProc", roundNS(t.MinMPIProcNS)},
			{"minMpiNormdNode", roundNS(t.MinMPINodeNS)},
			// Device times of model talp's device tree: sums and maxima
			// over devices, each device merged over processes by max
			// (DLB: maxima per process); 0 without device accounts.
			{"gpuUsefulTime", roundNS(g.Device.SumUsefulNS)},
			{"gpuCommunicationTime", roundNS(g.Device.SumActiveNS - g.Device.SumUsefulNS)},
			{"maxGpuUsefulTime", roundNS(g.Device.MaxUsefulNS)},
			{"maxGpuActiveTime", roundNS(g.Device.MaxActiveNS)},
		}...)
		_, measured := g.Value(pop.IDParallelEfficiency)
		for _, e := range talpEfficiencies {
			v, ok := g.Value(e.id)
			switch {
			case ok:
			case measured:
				v = 1 // the branch does not apply: DLB writes 1.00
			default:
				v = 0 // nothing measured in the region
			}
			o = append(o, member{e.key, float(v)})
		}
		if hasDevice(g) {
			for _, e := range talpGPUEfficiencies {
				v, _ := g.Value(e.id) // not measured (0/0): DLB writes 0.00
				o = append(o, member{e.key, float(v)})
			}
		}
		app = append(app, member{g.Name, o})
	}
	out = append(out, member{"Application", app})
	return writeIndented(w, out)
}

// roundNS rounds a time in ns to an integer, 0 for non-finite input.
func roundNS(v float64) int64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= math.MinInt64 || v >= math.MaxInt64 {
		return 0
	}
	return int64(math.Round(v))
}

// satAdd returns a + b for non-negative times, saturating at MaxInt64.
func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
