package e2e

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestSummaryForm runs examples/imbalance on 4 ranks with the per-process
// record limit at 2 (POPMON_MAX_PROCESS_RECORDS, and the
// --max-process-records flag of popmon exec), so that finalize reduces
// instead of gathering, with both MPIs: the file is the summary form
// (version 4, no per-process records, a valid schema), its metrics are the
// designed ones, its counts equal those of the same job measured with full
// records, and every model's metrics agree with that job's within the
// validation tolerance; the reports, scaling, check and pages read it.
func TestSummaryForm(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			const np = 4
			k, iters := imbalanceArgs(impl, np)
			args := []string{fmt.Sprint(k), fmt.Sprint(iters)}
			full := measureRun(t, impl, np, "imbalance", args...)
			t.Setenv("POPMON_MAX_PROCESS_RECORDS", "2")
			sum := measureRun(t, impl, np, "imbalance", args...)
			m := sum.m
			if m.Version != measure.SummaryVersion || m.Summarized == nil || m.Summarized.Processes != np ||
				m.Summarized.Limit != 2 || len(m.Processes) != 0 {
				t.Fatalf("not the summary form: version %d, summary %+v, %d processes", m.Version, m.Summarized, len(m.Processes))
			}
			g, _ := m.Global()
			if g.Summary == nil || len(g.Processes) != 0 {
				t.Fatalf("Global: summary %v, %d processes", g.Summary, len(g.Processes))
			}
			s := g.Summary
			if s.Processes != np || s.Nodes != 1 || s.CPUs != np || s.Sum.Visits != np ||
				s.Sum.MPICalls != int64(np*(iters+2)) {
				t.Errorf("Global summary: %d processes, %d nodes, %d CPUs, %d visits, %d MPI calls", s.Processes, s.Nodes, s.CPUs, s.Sum.Visits, s.Sum.MPICalls)
			}
			// Rank r works (r+1)·k per iteration: the least useful time is
			// rank 0's, the most rank np−1's, the MPI times the reverse.
			if s.Useful.MinRank != 0 || s.Useful.MaxRank != np-1 || s.MPI.MaxRank != 0 || s.MPI.MinRank != np-1 {
				t.Errorf("extreme ranks: useful %d/%d, MPI %d/%d", s.Useful.MinRank, s.Useful.MaxRank, s.MPI.MinRank, s.MPI.MaxRank)
			}
			var n int64
			for _, c := range s.Useful.Histogram {
				n += c
			}
			if n != np || s.Useful.Histogram[0] != 1 || s.Useful.Histogram[measure.HistogramBins-1] != 1 {
				t.Errorf("useful histogram %v", s.Useful.Histogram)
			}
			lb := float64(np+1) / float64(2*np)
			sum.expect(t, "Global", "mpi_load_balance", lb, effTol)
			sum.expect(t, "Global", "mpi_load_balance_in", lb, effTol)
			sum.expect(t, "Global", "mpi_load_balance_out", 1, effTol)
			sum.expect(t, "Global", "mpi_communication_efficiency", 1, effTol)
			sum.expect(t, "Global", "parallel_efficiency", lb, effTol)
			if got, want := sum.calls("MPI_Allreduce"), full.calls("MPI_Allreduce"); got != want {
				t.Errorf("MPI_Allreduce calls %d, full records %d", got, want)
			}
			for _, model := range pop.Models() {
				a, err := pop.Compute(full.m, model)
				if err != nil {
					t.Fatal(err)
				}
				b, err := pop.Compute(m, model)
				if err != nil {
					t.Fatal(err)
				}
				ga, gb := a.Regions[0], b.Regions[0]
				if ga.Processes != gb.Processes || ga.Nodes != gb.Nodes || ga.CPUs != gb.CPUs || len(ga.Metrics) != len(gb.Metrics) {
					t.Errorf("%s: full %d processes %d nodes %d CPUs %d metrics, summary %d %d %d %d", model,
						ga.Processes, ga.Nodes, ga.CPUs, len(ga.Metrics), gb.Processes, gb.Nodes, gb.CPUs, len(gb.Metrics))
					continue
				}
				for i, x := range ga.Metrics {
					y := gb.Metrics[i]
					if x.ID != y.ID || x.NotMeasured != y.NotMeasured || (x.Kind == pop.KindEfficiency && math.Abs(x.Value-y.Value) > effTol) {
						t.Errorf("%s %s: full %.4f %q, summary %s %.4f %q", model, x.ID, x.Value, x.NotMeasured, y.ID, y.Value, y.NotMeasured)
					}
				}
			}
			// The readers: every report format, scaling and pages.
			for _, format := range []string{"text", "json", "csv", "talp-json"} {
				argv := []string{"report", "--format", format, "--model", "all", sum.file}
				if format == "talp-json" {
					argv = []string{"report", "--format", format, sum.file}
				}
				out, errOut, code := popmon(t, nil, argv...)
				if code != 0 || !strings.Contains(out, "0.") {
					t.Errorf("report --format %s: exit %d\n%s%s", format, code, out, errOut)
				}
			}
			if out, errOut, code := popmon(t, nil, "scaling", full.file, sum.file); code != 0 || !strings.Contains(out, "Load Balance") {
				t.Errorf("scaling: exit %d\n%s%s", code, out, errOut)
			}
			if out, errOut, code := popmon(t, nil, "check", "--baseline", full.file, sum.file); code != 0 || !strings.Contains(out, "0 regression(s)") {
				t.Errorf("check against the full form: exit %d\n%s%s", code, out, errOut)
			}
			in, site := t.TempDir(), filepath.Join(t.TempDir(), "site")
			raw, err := os.ReadFile(sum.file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(in, "run.json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, errOut, code := popmon(t, nil, "pages", "-i", in, "-o", site); code != 0 {
				t.Fatalf("pages: exit %d\n%s%s", code, out, errOut)
			}
			page, err := os.ReadFile(filepath.Join(site, filepath.Base(in), "index.html"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(page), "distribution of useful and MPI time per process") {
				t.Error("pages: no distribution chart for the summary form")
			}

			// The per-rank form with the flag (the variable unset).
			t.Setenv("POPMON_MAX_PROCESS_RECORDS", "")
			out := filepath.Join(t.TempDir(), "exec.json")
			argv := append(append([]string{}, impl.extra...), "-np", fmt.Sprint(np), popmonBin, "exec", "--mpicc", impl.mpicc,
				"--max-process-records", "2", "-o", out, "--", filepath.Join(examples(t, impl), "imbalance"))
			cmd := exec.Command(impl.mpirun, append(argv, args...)...)
			var se bytes.Buffer
			cmd.Stderr = &se
			if _, err := cmd.Output(); err != nil {
				t.Fatalf("%v\n%s", err, se.String())
			}
			em, err := measure.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if em.Summarized == nil || em.Summarized.Limit != 2 || len(em.Processes) != 0 {
				t.Fatalf("popmon exec --max-process-records 2: summary %+v, %d processes", em.Summarized, len(em.Processes))
			}
			rep, _ := pop.Compute(em, pop.ModelTALP)
			gr, _ := rep.Region("Global")
			if v, _ := gr.Value("mpi_load_balance"); math.Abs(v-lb) > effTol {
				t.Errorf("popmon exec: load balance %.3f, want %.3f", v, lb)
			}
		})
	}
}

// TestSummaryFormEdges runs the summary path (limit 1) where the full form
// needs per-process records: a PMPI tool preloaded before libpopmon on
// rank 2 only (its reason reaches rank 0 from rank 2, the file says 1
// process), and the library missing on rank 1 (the ranks present reduce
// over their own communicator; version 4 with incomplete).
func TestSummaryFormEdges(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			tool := filepath.Join(dir, "libpmpi_tool.so")
			script := filepath.Join(t.TempDir(), "edge.sh")
			os.WriteFile(script, []byte(`#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
[ "$r" = "$TOOL_RANK" ] && export LD_PRELOAD="`+tool+`:$LD_PRELOAD"
[ "$r" = "$DROP_RANK" ] && unset LD_PRELOAD
exec "$@"
`), 0o755)
			argv := append(launch(impl, 4), script, filepath.Join(dir, "imbalance"), "20", "2")
			flags := []string{"--max-process-records", "1"}

			file, so, se, code := runPopmon(t, []string{"TOOL_RANK=2"}, flags, argv...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, so, se)
			}
			m := readChecked(t, file)
			if m.Summarized == nil || m.Interception == nil || m.Interception.Processes != 1 ||
				!strings.Contains(m.Interception.Reason, "libpmpi_tool.so wraps MPI_Allreduce") {
				t.Errorf("tool on rank 2: summary %+v, interception %+v", m.Summarized, m.Interception)
			}

			file, so, se, code = runPopmon(t, []string{"DROP_RANK=1"}, flags, argv...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, so, se)
			}
			m = readChecked(t, file)
			if m.Version != measure.SummaryVersion || m.Summarized == nil || m.Summarized.Processes != 3 ||
				m.Incomplete == nil || m.Incomplete.MissingRanks != "1" || m.Resources.Processes != 3 {
				t.Errorf("rank 1 without the library: version %d, summary %+v, incomplete %+v", m.Version, m.Summarized, m.Incomplete)
			}
			if g, _ := m.Global(); g.Summary == nil || g.Summary.Processes != 3 || g.Summary.Useful.MaxRank != 3 {
				t.Errorf("Global summary %+v", g.Summary)
			}
		})
	}
}

// TestSummaryFormMultiNode: the job of TestMultiNodeLoadBalanceOut (2
// nodes × 2 ranks, LB 0.5, In 0.9, Out 0.556) in summary form: the node
// terms come from the node communicators' reductions.
func TestSummaryFormMultiNode(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			c := needCluster(t, 2)
			dir := examples(t, impl)
			out := filepath.Join(t.TempDir(), "m.json")
			job := c.Launch(impl, 4, c.Hosts(2, 2), filepath.Join(dir, "weighted"), "100", "0.5,1.5,8,10")
			argv := c.OnEnv(0, clusterEnv(), append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc,
				"--max-process-records", "2", "-o", out, "--"}, job...)...)
			so, se, code := c.run(t, 3*time.Minute, argv)
			if code != 0 || !strings.Contains(so, "ok 20") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			m := readChecked(t, out)
			g, _ := m.Global()
			if m.Summarized == nil || m.Resources.Processes != 4 || m.Resources.Nodes != 2 || g.Summary == nil || g.Summary.Nodes != 2 {
				t.Fatalf("summary %+v, resources %+v, Global %+v:\n%s", m.Summarized, m.Resources, g.Summary, se)
			}
			rep := compute(t, m, pop.ModelTALP)
			near(t, "load balance", value(t, rep, "Global", "mpi_load_balance"), 0.5, effTol)
			near(t, "load balance in", value(t, rep, "Global", "mpi_load_balance_in"), 0.9, effTol)
			near(t, "load balance out", value(t, rep, "Global", "mpi_load_balance_out"), 5.0/9, effTol)
			noLeftovers(t, c)
		})
	}
}
