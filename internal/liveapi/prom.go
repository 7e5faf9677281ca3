// Package liveapi publishes the view of a running job (live.View): the
// Prometheus text exposition (/metrics, or a node_exporter textfile), the
// JSON API of popmon serve, and the service that samples the job into a
// history and keeps the latest view (docs/live-metrics.md).
package liveapi

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// ContentType is the content type of the text exposition format 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Info describes the job for the popmon_info metric and the JSON API.
type Info struct {
	// Session is the job's id among popmon's jobs (live.SessionName): the
	// "session" label of every series.
	Session string
	// SlurmJobID is $SLURM_JOB_ID, when set.
	SlurmJobID string
	Command    []string
	MPILibrary string
	// Version is popmon's version.
	Version string
}

// counters are the time accounts exported per region and node (or rank):
// name, help, and the account.
var counters = []struct {
	name, help string
	get        func(measure.ProcessAccounts) int64
}{
	{"popmon_useful_seconds_total", "Useful (computation) time, summed over the processes and their threads.", func(a measure.ProcessAccounts) int64 { return a.UsefulNS }},
	{"popmon_mpi_seconds_total", "Time inside MPI, summed over the processes and their threads.", func(a measure.ProcessAccounts) int64 { return a.MPINS }},
	{"popmon_mpi_worker_idle_seconds_total", "Time OpenMP workers were idle while their primary thread was inside MPI.", func(a measure.ProcessAccounts) int64 { return a.MPIWorkerIdleNS }},
	{"popmon_omp_serialization_seconds_total", "Time OpenMP workers were idle outside parallel regions (primary thread not in MPI).", func(a measure.ProcessAccounts) int64 { return a.OMPSerializationNS }},
	{"popmon_omp_load_imbalance_seconds_total", "Time OpenMP threads waited at the end of parallel regions for the others.", func(a measure.ProcessAccounts) int64 { return a.OMPLoadImbalanceNS }},
	{"popmon_omp_scheduling_seconds_total", "Time OpenMP threads spent in the runtime's scheduling.", func(a measure.ProcessAccounts) int64 { return a.OMPSchedulingNS }},
	{"popmon_region_elapsed_seconds_total", "Wall time the region was open, summed over the processes.", func(a measure.ProcessAccounts) int64 { return a.ElapsedNS }},
}

// validName is a Prometheus metric name.
var validName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// expo writes one exposition: families in order, each with its HELP and
// TYPE lines before its samples.
type expo struct {
	w       *bufio.Writer
	session string
}

func (e *expo) family(name, typ, help string) {
	fmt.Fprintf(e.w, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(help), name, typ)
}

// sample writes name{session="…",k="v",…} value; labels are name, value
// pairs.
func (e *expo) sample(name string, v float64, labels ...string) {
	e.w.WriteString(name)
	e.w.WriteString(`{session="`)
	e.w.WriteString(escapeLabel(e.session))
	e.w.WriteByte('"')
	for i := 0; i+1 < len(labels); i += 2 {
		e.w.WriteByte(',')
		e.w.WriteString(labels[i])
		e.w.WriteString(`="`)
		e.w.WriteString(escapeLabel(labels[i+1]))
		e.w.WriteByte('"')
	}
	e.w.WriteString("} ")
	e.w.WriteString(formatValue(v))
	e.w.WriteByte('\n')
}

func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// escapeLabel escapes a label value as the exposition format requires
// (backslash, double quote, line feed), after making it valid UTF-8.
func escapeLabel(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// escapeHelp escapes a HELP text (backslash and line feed).
func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// WriteMetrics writes v in the Prometheus text exposition format: the
// job's info, process states and CPUs, the time accounts of the run so far
// per region and node (per rank with perRank) as counters, the MPI calls
// per node and function, every efficiency of model talp per region and
// window as a _ratio gauge, each window's span and the snapshots' age per
// node. Names and labels are those of docs/live-metrics.md.
func WriteMetrics(out io.Writer, v *live.View, info Info, perRank bool) error {
	e := &expo{w: bufio.NewWriter(out), session: info.Session}
	cmd := strings.Join(info.Command, " ")
	if len(cmd) > 256 {
		cmd = cmd[:256] + "…"
	}
	e.family("popmon_info", "gauge", "The job popmon measures (always 1; its labels describe the job).")
	e.sample("popmon_info", 1, "slurm_job_id", info.SlurmJobID, "command", cmd, "mpi_library", info.MPILibrary, "popmon_version", info.Version)

	e.family("popmon_processes", "gauge", "MPI processes of the job by state: running, finalized, ended (gone without MPI_Finalize).")
	for _, st := range []string{live.ProcRunning, live.ProcFinalized, live.ProcEnded} {
		e.sample("popmon_processes", float64(v.Count(st)), "state", st)
	}

	run := &v.Run
	var hosts []string
	cpus := map[string]int{}
	rankHost := map[int]string{}
	for _, p := range run.M.Processes {
		if _, ok := cpus[p.Hostname]; !ok {
			hosts = append(hosts, p.Hostname)
		}
		cpus[p.Hostname] += p.CPUs
		rankHost[p.Rank] = p.Hostname
	}
	e.family("popmon_cpus", "gauge", "CPUs of the job's processes on the node.")
	for _, h := range hosts {
		e.sample("popmon_cpus", float64(cpus[h]), "node", h)
	}

	for _, c := range counters {
		e.family(c.name, "counter", c.help)
		for _, g := range run.M.Regions {
			if perRank {
				for _, pa := range run.Ranks(g.Name) {
					e.sample(c.name, seconds(c.get(pa)), "region", g.Name, "node", rankHost[pa.Rank], "rank", strconv.Itoa(pa.Rank))
				}
				continue
			}
			for _, n := range run.Nodes(g.Name) {
				e.sample(c.name, seconds(c.get(n.ProcessAccounts)), "region", g.Name, "node", n.Host)
			}
		}
	}

	e.family("popmon_mpi_calls_total", "counter", "MPI calls per function, summed over the node's processes (all regions).")
	for _, h := range hosts {
		for _, c := range v.NodeCalls[h] {
			e.sample("popmon_mpi_calls_total", float64(c.Calls), "node", h, "function", c.Name)
		}
	}
	e.family("popmon_mpi_call_seconds_total", "counter", "Time inside MPI per function, summed over the node's processes (all regions).")
	for _, h := range hosts {
		for _, c := range v.NodeCalls[h] {
			e.sample("popmon_mpi_call_seconds_total", seconds(c.TimeNS), "node", h, "function", c.Name)
		}
	}

	// The efficiencies: one family per metric id, in tree order of the
	// first region that has it.
	windows := append([]live.WindowView{*run}, v.Windows...)
	type ratio struct {
		id, help string
	}
	var ratios []ratio
	seen := map[string]bool{}
	for _, w := range windows {
		if w.Report == nil {
			continue
		}
		for _, rr := range w.Report.Regions {
			for _, m := range rr.Metrics {
				if m.Kind != pop.KindEfficiency || !m.Measured() || seen[m.ID] || !validName.MatchString(m.ID) {
					continue
				}
				seen[m.ID] = true
				ratios = append(ratios, ratio{m.ID, fmt.Sprintf("%s (POP metric %s, model talp) of the region over the window, 0 to 1.", m.Name, m.ID)})
			}
		}
	}
	for _, r := range ratios {
		name := "popmon_" + r.id + "_ratio"
		e.family(name, "gauge", r.help)
		for _, w := range windows {
			if w.Report == nil {
				continue
			}
			for i := range w.Report.Regions {
				rr := &w.Report.Regions[i]
				if x, ok := rr.Value(r.id); ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
					e.sample(name, x, "region", rr.Name, "window", w.Name)
				}
			}
		}
	}

	e.family("popmon_window_seconds", "gauge", "What each window of the _ratio gauges spans (shorter than its name while the job is young).")
	for _, w := range windows {
		e.sample("popmon_window_seconds", seconds(w.SpanNS), "window", w.Name)
	}
	e.family("popmon_snapshot_age_seconds", "gauge", "Age of the oldest process snapshot of the node behind these values.")
	age := map[string]int64{}
	for _, p := range v.Procs {
		age[p.Host] = max(age[p.Host], p.AgeNS)
	}
	for _, h := range hosts {
		e.sample("popmon_snapshot_age_seconds", seconds(age[h]), "node", h)
	}
	return e.w.Flush()
}
