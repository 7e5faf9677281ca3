package e2e

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestOwnCostOutOfAccounts runs testdata/owncost.c (2 ranks; rank 0 polls
// MPI_Test 10^6 times, a compute chunk before each test, in three
// interleaved loops: through PMPI (the program without popmon), the chunk
// alone, and through popmon's wrapper inside the region "polls"; rank 1
// sleeps). By the program's own clocks, popmon added (polls − bare) to the
// polls loop, and without popmon the loop's useful time would be the
// compute loop's and its communication efficiency compute / bare. Checked,
// for both MPIs, in the region "polls":
//   - popmon's own cost is an account of its own (instrumentation_ns), of
//     a plausible size per call, no more than what popmon added to a call
//     by the program's clocks (polls − bare per iteration in each loop's
//     least disturbed round; +25 % and 10 ns for noise: the calibration
//     runs once, at MPI_Init, where both ranks start at once, and with the
//     inlined hot path (37–56 ns added per poll) a busy moment there read
//     52 ns) and at least a
//     sixth of it (the polls loop is the longest of the three, so on a
//     loaded machine even its least disturbed round holds more of other
//     processes' time: there "added" was 48 to 140 ns per call against a
//     calibrated 41 to 49 ns);
//   - the accounts add up with it (the invariant, measure.CheckAccounts);
//   - MPI time is not overcorrected: at least half the MPI library's own
//     time in the loop (bare − compute per iteration, least disturbed
//     rounds, × the polls);
//   - useful time is not lost: at least half the compute chunks' time
//     (compute per iteration, least disturbed round, × the polls). With a
//     plain rdtsc opening the call, the chunk still in flight was booked as
//     MPI time and the correction then took the rest: CI read useful 0.0 ms
//     of 10.6 (Open MPI), this machine 0.6 and 4.2 ms of 11; ordered, 0.62
//     to 1.09 of it in 8 runs. The job runs up to 3 times while this reads
//     low (a busy moment in the calibration); the other checks take the
//     last run;
//   - the region's elapsed time is the wall time the program's clock gives
//     the loop (±1 % and 2 ms), and the communication efficiency popmon
//     reports is useful / (elapsed − instrumentation), above the uncorrected
//     useful / elapsed. The program's own compute / bare (least disturbed
//     rounds) is logged beside it, not asserted: on a loaded machine the
//     loops' clocks scatter by more than popmon's cost (the bare loop's sum
//     57 to 156 ms from run to run), and the polls loop, the longest, holds
//     the most of other processes' time (docs/metrics.md).
//
// On 5dfd947 (the own cost inside MPI time) the file has no
// instrumentation_ns: the first check fails.
func TestOwnCostOutOfAccounts(t *testing.T) {
	const polls = 1000000
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := buildMPI(t, impl, "owncost")
			var (
				timers map[string]float64
				m      *measure.Measurement
				p      *measure.ProcessAccounts
			)
			// Up to 3 runs while useful time reads below half the
			// program's work: the calibration (once, at MPI_Init) can
			// catch a busy moment; the fault this guards against (the
			// work in flight booked as MPI time) shows in every run.
			for attempt := 1; attempt <= 3; attempt++ {
				timers, m, p = runOwnCost(t, impl, prog, polls)
				if float64(p.UsefulNS) >= 0.5*timers["min_compute_ns"]*polls || attempt == 3 {
					break
				}
				t.Logf("run %d: useful %.1f ms of the program's %.1f ms of work between the polls: run again", attempt,
					float64(p.UsefulNS)/1e6, timers["min_compute_ns"]*polls/1e6)
			}
			bare, compute, loop := timers["bare_ns"], timers["compute_ns"], timers["polls_ns"]
			if v := measure.CheckAccounts(m); len(v) > 0 {
				t.Errorf("accounts do not add up: %v", v)
			}
			// Per iteration, in each loop's least disturbed round: what
			// popmon added to a call, and the MPI library's own time.
			added := timers["min_polls_ns"] - timers["min_bare_ns"]
			lib := timers["min_bare_ns"] - timers["min_compute_ns"]
			x := float64(p.InstrumentationNS)
			t.Logf("program: bare %.1f ms, compute %.1f ms, polls %.1f ms; per call at best: bare %.1f ns, compute %.1f ns, polls %.1f ns (popmon added %.1f ns, MPI's own %.1f ns); popmon: elapsed %.1f ms, useful %.1f ms, MPI %.1f ms, own cost %.1f ms (%.1f ns/call)",
				bare/1e6, compute/1e6, loop/1e6, timers["min_bare_ns"], timers["min_compute_ns"], timers["min_polls_ns"], added, lib,
				float64(p.ElapsedNS)/1e6, float64(p.UsefulNS)/1e6, float64(p.MPINS)/1e6, x/1e6, x/polls)
			if x/polls < 2 || x/polls > 2000 {
				t.Fatalf("own cost %.1f ns per call (instrumentation_ns %d); want an account of 2 ns to 2 µs per call", x/polls, p.InstrumentationNS)
			}
			if x/polls > 1.25*added+10 || x/polls < added/6 {
				t.Errorf("own cost %.1f ns per call; popmon added %.1f ns to a call by the program's clocks (want a sixth to 1.25 times that, +10 ns)", x/polls, added)
			}
			if u := float64(p.UsefulNS); u < 0.5*timers["min_compute_ns"]*polls {
				t.Errorf("useful %.1f ms; the program's own work between the polls, by its clocks, is %.1f ms (want at least half of it: the work in flight when a call starts is not MPI time, and popmon's cost outside the call's clock reads is not taken out twice)",
					u/1e6, timers["min_compute_ns"]*polls/1e6)
			}
			if mpi := float64(p.MPINS); mpi < 0.5*lib*polls {
				t.Errorf("MPI time %.1f ms; the MPI library's own time in the loop, by the program's clocks, is %.1f ms (want at least half of it: not more than popmon's cost taken out)",
					mpi/1e6, lib*polls/1e6)
			}
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			var comm float64
			found := false
			for i := range rep.Regions {
				if rep.Regions[i].Name == "polls" {
					comm, found = rep.Regions[i].Value(pop.IDMPICommunicationEfficiency)
					if rep.Regions[i].ElapsedNS != p.ElapsedNS || rep.Regions[i].Totals.InstrumentationNS != p.InstrumentationNS {
						t.Errorf("report: elapsed %d, instrumentation %d; want the wall time %d and %d", rep.Regions[i].ElapsedNS,
							rep.Regions[i].Totals.InstrumentationNS, p.ElapsedNS, p.InstrumentationNS)
					}
				}
			}
			u, e := float64(p.UsefulNS), float64(p.ElapsedNS)
			want := u / (e - float64(p.InstrumentationNS))
			truth := timers["min_compute_ns"] / timers["min_bare_ns"]
			t.Logf("communication efficiency: popmon %.3f, uncorrected %.3f, the program's least disturbed rounds %.3f", comm, u/e, truth)
			if !found || math.Abs(comm-want) > 1e-3 {
				t.Errorf("communication efficiency %.4f (found %v); want useful / (elapsed − instrumentation) = %.4f", comm, found, want)
			}
			if comm <= u/e {
				t.Errorf("communication efficiency %.3f; want above the uncorrected %.3f", comm, u/e)
			}
			if d := float64(p.ElapsedNS) - loop; math.Abs(d) > 0.01*loop+2e6 {
				t.Errorf("region polls: elapsed %.1f ms; the program's clock says %.1f ms", float64(p.ElapsedNS)/1e6, loop/1e6)
			}
		})
	}
}

// runOwnCost runs testdata/owncost.c under popmon (2 ranks, polls polls)
// and returns its timers, the measurement and rank 0's record of the
// region "polls".
func runOwnCost(t *testing.T, impl mpiImpl, prog string, polls int) (map[string]float64, *measure.Measurement, *measure.ProcessAccounts) {
	t.Helper()
	out, so, se, code := runPopmon(t, []string{"OMPI_MCA_mpi_yield_when_idle=0"}, nil,
		append(launch(impl, 2), prog, strconv.Itoa(polls))...)
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(so), "ok") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
	timers := ownCostTimers(t, so)
	if timers["polls"] != float64(polls) || timers["bare_ns"] <= 0 || timers["compute_ns"] <= 0 || timers["polls_ns"] <= 0 {
		t.Fatalf("program output: %v", timers)
	}
	m := readChecked(t, out)
	var p *measure.ProcessAccounts
	for i := range m.Regions {
		if m.Regions[i].Name == "polls" && len(m.Regions[i].Processes) == 1 {
			p = &m.Regions[i].Processes[0]
		}
	}
	if p == nil || p.Rank != 0 || p.MPICalls != int64(polls) {
		t.Fatalf("region polls: %+v; want rank 0 alone, %d MPI calls", p, polls)
	}
	return timers, m, p
}

// ownCostTimers reads owncost.c's line "bare_ns B compute_ns C polls_ns P
// polls N min_bare_ns b min_compute_ns c min_polls_ns p".
func ownCostTimers(t *testing.T, stdout string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) != 14 || f[0] != "bare_ns" {
			continue
		}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				t.Fatalf("program output %q: %v", line, err)
			}
			out[f[i]] = v
		}
	}
	return out
}
