package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestLewiSummaryForm: examples/lewi/lewi_imbalance under --lewi with
// --max-process-records 1, so that finalize writes the summary form (no
// per-process records, the run's facts reduced). The run-level lewi record
// must still be there: 2 processes, rank 1's lent CPU time at least half
// its wait (as TestLewiImbalance asks of its per-process record), some
// borrowed time; and the report's LeWI line. Before the facts' reduction
// carried LeWI's sums, this form had no lewi record at all.
func TestLewiSummaryForm(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(examples(t, impl), "lewi_imbalance.clang")
			if _, err := os.Stat(prog); err != nil {
				t.Skipf("%s not built", prog)
			}
			key := lewiKey(t)
			flags := []string{"--lewi", "--max-process-records", "1"}
			out, so, se, code := runPopmon(t, []string{"POPMON_LEWI_KEY=" + key}, flags,
				append(bound(impl, 2), prog, "8")...)
			if code != 0 {
				t.Fatalf("popmon run %v: exit %d\nstdout:\n%s\nstderr:\n%s", flags, code, so, se)
			}
			ms := lewiRankLine.FindAllStringSubmatch(so, -1)
			if len(ms) != 2 {
				t.Fatalf("unexpected output:\n%s\nstderr:\n%s", so, se)
			}
			var wait1 float64
			for _, m := range ms {
				if m[1] == "1" {
					wait1, _ = strconv.ParseFloat(m[2], 64)
				}
			}
			m := readChecked(t, out)
			if m.Summarized == nil || len(m.Processes) != 0 {
				t.Fatalf("not the summary form: summary %+v, %d process records", m.Summarized, len(m.Processes))
			}
			if m.Lewi == nil || m.Lewi.Processes != 2 {
				t.Fatalf("the summary form's lewi record: %+v; want 2 processes", m.Lewi)
			}
			if float64(m.Lewi.LentCPUNS) < 0.5*wait1*1e9 {
				t.Errorf("lent %d ns of CPU time; rank 1 waited %.3f s", m.Lewi.LentCPUNS, wait1)
			}
			if m.Lewi.BorrowedCPUNS <= 0 {
				t.Errorf("no CPU time borrowed: %+v", m.Lewi)
			}
			rso, rse, rc := popmon(t, nil, "report", out)
			if rc != 0 || !regexp.MustCompile(`(?m)^LeWI: +on in 2 processes: .* CPU time lent, .* borrowed.*\n +CPUs held over time: not known: the measurement has no per-process records \(summary form\)$`).MatchString(rso) {
				t.Errorf("report: exit %d, no LeWI lines (the second saying the CPUs held are not known in summary form):\n%s\n%s", rc, rso, rse)
			}
		})
	}
}

// TestLewiPartial: examples/lewi/lewi_imbalance under --lewi (2 ranks, one
// core each), both ranks killed (SIGSTOP, then SIGKILL) 1.5 s into a run
// of 400 iterations (about 8 s). popmon run assembles the partial
// measurement from the live files: it must say LeWI was on in both
// processes, rank 1 lent CPU time and rank 0 borrowed some (each lend and
// each borrowing region that ended before the kill is in the live file).
// Before the live file carried LeWI's totals, a killed job's measurement
// had no lewi record.
func TestLewiPartial(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			name := "lewi_imbalance.clang"
			prog := filepath.Join(examples(t, impl), name)
			if _, err := os.Stat(prog); err != nil {
				t.Skipf("%s not built", prog)
			}
			key := lewiKey(t)
			s := &started{out: filepath.Join(t.TempDir(), "p.json")}
			argv := append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", s.out, "--lewi", "--"},
				append(bound(impl, 2), prog, "400")...)
			s.start(t, argv, []string{"POPMON_LEWI_KEY=" + key}, 2, name)
			time.Sleep(1500 * time.Millisecond)
			for _, pid := range s.ranks {
				syscall.Kill(pid, syscall.SIGSTOP)
			}
			for _, pid := range s.ranks {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			s.wait(t)
			m, err := measure.ReadFile(s.out)
			if err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, s.se.String())
			}
			if m.Partial == nil {
				t.Fatalf("not a partial measurement\nstderr:\n%s", s.se.String())
			}
			if m.Lewi == nil || m.Lewi.Processes != 2 || len(m.Processes) != 2 {
				t.Fatalf("the partial measurement's lewi record: %+v, %d processes", m.Lewi, len(m.Processes))
			}
			for _, p := range m.Processes {
				if p.Lewi == nil {
					t.Fatalf("rank %d has no lewi record", p.Rank)
				}
				t.Logf("rank %d: lent %.3f s, borrowed %.3f s of CPU time", p.Rank, float64(p.Lewi.LentCPUNS)/1e9, float64(p.Lewi.BorrowedCPUNS)/1e9)
				switch {
				case p.Rank == 1 && p.Lewi.LentCPUNS < 100e6:
					t.Errorf("rank 1 lent %d ns of CPU time in ~1.5 s of a job that waits a third of it", p.Lewi.LentCPUNS)
				case p.Rank == 0 && p.Lewi.BorrowedCPUNS <= 0:
					t.Errorf("rank 0 borrowed no CPU time: %+v", p.Lewi)
				}
			}
			if m.Lewi.LentCPUNS != m.Processes[0].Lewi.LentCPUNS+m.Processes[1].Lewi.LentCPUNS {
				t.Errorf("run's lent %d, not the processes' sum", m.Lewi.LentCPUNS)
			}
			// The live files carry each process's affinity and its MPI
			// thread's lent time: the accounts against the CPUs held.
			r := pop.NewRun(m)
			h := r.LewiHeld
			if h == nil {
				t.Fatalf("no accounts against the CPUs held: %s", r.LewiHeldNote)
			}
			t.Logf("held: %.2f CPUs on average, useful %.3f", h.MeanCPUs(), h.Share(h.UsefulNS))
			if h.MeanCPUs() < 1.5 || h.MeanCPUs() > 2.1 {
				t.Errorf("the two ranks held %.2f CPUs on average: want 1.5-2.1 (2 CPUs, each lent only to the other)", h.MeanCPUs())
			}
		})
	}
}
