package report

import (
	"io"

	"github.com/popmon/popmon/pop"
)

// JSONFormat and JSONVersion identify popmon's JSON report shape
// (docs/report-formats.md). The version grows when a key changes meaning;
// added keys do not change it.
const (
	JSONFormat  = "popmon-report"
	JSONVersion = 1
)

// JSON writes the report in the shape of POP-METRICS.md §9:
//
//	{"format": "popmon-report", "version": 1, "model": "talp",
//	 "regions": [{"name": "Global", "elapsed_s": 1.0, "processes": 4,
//	              "nodes": 1, "cpus": 4, "metrics": {"parallel_efficiency": 0.62, ...}}]}
//
// Metrics are at full precision, in tree order; absent metrics are
// omitted, and so are metrics that are not measured, which a region lists
// with their reasons under "not_measured" (omitted when there are none).
// "openmp_not_measured" says why the run's OpenMP runtime was not measured
// (the file's reason, once; the OpenMP metrics of the regions' "not_measured"
// refer to it). "window" and "window_s" are present for a live view's window
// (Options.Window); "source" is present when the report has one; "partial" (the measurement
// file's object) when the job ended before MPI_Finalize; "refused" when no metric of
// the measurement can be trusted (the sentence why; every "metrics" is then
// empty), and in a region when no metric of that region can be (its
// accounts do not add up; its "metrics" is then empty).
func JSON(w io.Writer, rep *pop.Report, opts Options) error {
	m := rep.Run
	regs, err := regions(rep, opts)
	if err != nil {
		return err
	}
	out := object{{"format", JSONFormat}, {"version", JSONVersion}, {"model", string(rep.Model)}}
	if opts.Window != "" {
		out = append(out, member{"window", opts.Window}, member{"window_s", float(float64(opts.WindowNS) / 1e9)})
	}
	if rep.Source != "" {
		out = append(out, member{"source", rep.Source})
	}
	if rep.Refused != "" {
		out = append(out, member{"refused", rep.Refused})
	}
	out = appendSerTransferJSON(out, rep)
	if m != nil && m.Partial != nil {
		out = append(out, member{"partial", m.Partial})
	}
	out = appendLewiJSON(out, m)
	out = appendDromJSON(out, m)
	out = appendOMPNotMeasuredJSON(out, m)
	out = append(out, member{"regions", jsonRegions(ompReferenced(regs, m, ompReasonRefJSON))})
	out = appendOMPRegionsJSON(out, m)
	out = appendGPUJSON(out, m)
	out = appendAccountViolationsJSON(out, m)
	return writeIndented(w, out)
}

// appendLewiJSON adds "lewi" when LeWI was on (docs/lewi.md): the run's
// CPU time lent and borrowed, and each process's, with the accounts
// against the CPUs held over time ("held") or why they are not known
// ("held_not_known").
func appendLewiJSON(out object, m *pop.Run) object {
	if m == nil || m.Lewi == nil {
		return out
	}
	procs := make([]object, len(m.LewiProcesses))
	for i, p := range m.LewiProcesses {
		procs[i] = object{{"rank", p.Rank}, {"lent_cpu_s", float(float64(p.LentCPUNS) / 1e9)},
			{"borrowed_cpu_s", float(float64(p.BorrowedCPUNS) / 1e9)}}
		if p.Held != nil {
			procs[i] = append(procs[i], member{"held", heldJSON(p.Held)})
		}
	}
	l := object{{"processes", m.Lewi.Processes},
		{"lent_cpu_s", float(float64(m.Lewi.LentCPUNS) / 1e9)},
		{"borrowed_cpu_s", float(float64(m.Lewi.BorrowedCPUNS) / 1e9)}}
	if m.LewiHeld != nil {
		l = append(l, member{"held", heldJSON(m.LewiHeld)})
	} else {
		l = append(l, member{"held_not_known", m.LewiHeldNote})
	}
	return append(out, member{"lewi", append(l, member{"per_process", procs})})
}

// appendDromJSON adds "drom" when DROM changed a process's CPUs in a run
// without LeWI (docs/drom.md): the accounts against the CPUs held over time
// ("held") or why they are not known ("held_not_known"), and each
// registered process's own CPUs, their change and its held accounts.
func appendDromJSON(out object, m *pop.Run) object {
	if m == nil || len(m.DromProcesses) == 0 {
		return out
	}
	procs := make([]object, len(m.DromProcesses))
	for i, p := range m.DromProcesses {
		procs[i] = object{{"rank", p.Rank}, {"own_cpus", p.OwnCPUs}, {"own_change_cpu_s", float(float64(p.OwnChangeCPUNS) / 1e9)}}
		if p.Held != nil {
			procs[i] = append(procs[i], member{"held", heldJSON(p.Held)})
		}
	}
	var d object
	if m.DromHeld != nil {
		d = object{{"held", heldJSON(m.DromHeld)}}
	} else {
		d = object{{"held_not_known", m.DromHeldNote}}
	}
	return append(out, member{"drom", append(d, member{"per_process", procs})})
}

// heldJSON is accounts against the CPUs held: the CPU time, the mean CPUs
// over the elapsed time, and each part's share.
func heldJSON(h *pop.HeldAccounts) object {
	return object{{"cpu_s", float(float64(h.CPUNS) / 1e9)}, {"mean_cpus", float(h.MeanCPUs())},
		{"useful", float(h.Share(h.UsefulNS))}, {"mpi", float(h.Share(h.MPINS))},
		{"openmp", float(h.Share(h.OpenMPNS))}, {"gpu_runtime", float(h.Share(h.GPUNS))}}
}

// jsonRegions returns the "regions" array of a report.
func jsonRegions(regs []pop.RegionReport) []object {
	list := make([]object, 0, len(regs))
	for i := range regs {
		r := &regs[i]
		metrics := make(object, 0, len(r.Metrics))
		var notMeasured object
		for _, x := range r.Metrics {
			if !x.Measured() {
				notMeasured = append(notMeasured, member{x.ID, x.NotMeasured})
				continue
			}
			if x.Kind == pop.KindCount {
				metrics = append(metrics, member{x.ID, int64(x.Value)}) // counts are integers
				continue
			}
			metrics = append(metrics, member{x.ID, float(x.Value)})
		}
		o := object{
			{"name", r.Name},
			{"elapsed_s", float(float64(r.ElapsedNS) / 1e9)},
			{"processes", r.Processes},
			{"nodes", r.Nodes},
			{"cpus", r.CPUs},
		}
		if r.Refused != "" {
			o = append(o, member{"refused", r.Refused}) // "metrics" is then empty
		}
		o = append(o, member{"metrics", metrics})
		if len(notMeasured) > 0 {
			o = append(o, member{"not_measured", notMeasured})
		}
		list = append(list, o)
	}
	return list
}
