package pop

import (
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

func ptr(v int64) *int64 { return &v }

// TestHeld: a process's accounts against the CPUs it held under LeWI, from
// the designed example's shape (1 own CPU; lent after its unit, borrowed in
// the other rank's regions) and the cases that cannot be set against them.
func TestHeld(t *testing.T) {
	const ms = int64(1e6)
	// Rank 0 of examples/lewi: 1 own CPU, a team of 2 in regions that
	// borrowed rank 1's CPU for 400 ms of its 1 500 (600 useful, 150
	// imbalance, 50 scheduling); its second thread idle outside them for
	// 1 100 ms: 100 while the primary was in MPI (Mw), 1 000 while it
	// worked (serialization); the primary 1 000 ms useful between regions.
	borrower := measure.ProcessAccounts{CPUs: 2, ElapsedNS: 1500 * ms, UsefulNS: 1600 * ms, MPINS: 100 * ms,
		MPIWorkerIdleNS: 100 * ms, OMPSerializationNS: 1000 * ms, OMPLoadImbalanceNS: 150 * ms, OMPSchedulingNS: 50 * ms}
	// Rank 1: 1 own CPU, no team beyond it, waits 500 ms in MPI of which
	// 450 lent.
	lender := measure.ProcessAccounts{CPUs: 1, ElapsedNS: 1500 * ms, UsefulNS: 1000 * ms, MPINS: 480 * ms, InstrumentationNS: 20 * ms}
	for _, c := range []struct {
		name string
		a    measure.ProcessAccounts
		own  int
		l    measure.ProcessLewi
		want HeldAccounts
		err  string
	}{
		{name: "borrower", a: borrower, own: 1, l: measure.ProcessLewi{LentCallerNS: ptr(0), BorrowedCPUNS: 400 * ms},
			// 1 500 own + 400 borrowed; its second thread's 1 500 − 400 =
			// 1 100 ms without a CPU leave the serialization time and
			// then the idle time in MPI (stop 40's CI refused this when
			// only the serialization was counted).
			want: HeldAccounts{ElapsedNS: 1500 * ms, CPUNS: 1900 * ms, UsefulNS: 1600 * ms, MPINS: 100 * ms, OpenMPNS: (150 + 50) * ms}},
		{name: "lender", a: lender, own: 1, l: measure.ProcessLewi{LentCPUNS: 450 * ms, LentCallerNS: ptr(450 * ms)},
			want: HeldAccounts{ElapsedNS: 1500 * ms, CPUNS: 1030 * ms, UsefulNS: 1000 * ms, MPINS: 30 * ms}},
		{name: "two CPUs lent, the workers' from their idle time in MPI",
			// In MPI 400 ms, 300 of them lent with the worker's CPU.
			a:   measure.ProcessAccounts{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 1200 * ms, MPINS: 400 * ms, MPIWorkerIdleNS: 400 * ms},
			own: 2, l: measure.ProcessLewi{LentCPUNS: 600 * ms, LentCallerNS: ptr(300 * ms)},
			want: HeldAccounts{ElapsedNS: 1000 * ms, CPUNS: 1400 * ms, UsefulNS: 1200 * ms, MPINS: 200 * ms}},
		{name: "the workers' lent CPUs beyond their idle time in MPI",
			// The worker's idle time counted 100 ms in MPI (it was
			// created later) and 200 outside it, its CPU lent 250 ms:
			// 100 from the first, 150 from the second.
			a:   measure.ProcessAccounts{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 1400 * ms, MPINS: 300 * ms, MPIWorkerIdleNS: 100 * ms, OMPSerializationNS: 200 * ms},
			own: 2, l: measure.ProcessLewi{LentCPUNS: 500 * ms, LentCallerNS: ptr(250 * ms)},
			want: HeldAccounts{ElapsedNS: 1000 * ms, CPUNS: 1500 * ms, UsefulNS: 1400 * ms, MPINS: 50 * ms, OpenMPNS: 50 * ms}},
		{name: "DROM took one of its 2 CPUs halfway",
			// Its second thread idle (serialization) for the 500 ms it
			// had no CPU and 100 ms before: only those 100 are held.
			a:   measure.ProcessAccounts{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 1400 * ms, OMPSerializationNS: 600 * ms},
			own: 2, l: measure.ProcessLewi{LentCallerNS: ptr(0), OwnChangeCPUNS: -500 * ms},
			want: HeldAccounts{ElapsedNS: 1000 * ms, CPUNS: 1500 * ms, UsefulNS: 1400 * ms, OpenMPNS: 100 * ms}},
		{name: "DROM gave it a second CPU for 300 ms", a: lender, own: 1, l: measure.ProcessLewi{LentCallerNS: ptr(0), OwnChangeCPUNS: 300 * ms},
			err: "it had 1.20 CPUs of its own on average, more than the 1 threads it ran"},
		{name: "no own CPUs", a: lender, own: 0, l: measure.ProcessLewi{LentCallerNS: ptr(0)}, err: "own CPUs were not recorded"},
		{name: "older file", a: lender, own: 1, l: measure.ProcessLewi{LentCPUNS: 450 * ms}, err: "older library"},
		{name: "caller beyond lent", a: lender, own: 1, l: measure.ProcessLewi{LentCPUNS: 10, LentCallerNS: ptr(20)}, err: "out of range"},
		{name: "fewer threads than CPUs", a: lender, own: 2, l: measure.ProcessLewi{LentCallerNS: ptr(0)}, err: "it had 2.00 CPUs of its own on average, more than the 1 threads it ran"},
		{name: "lent longer than in MPI", a: lender, own: 1, l: measure.ProcessLewi{LentCPUNS: 600 * ms, LentCallerNS: ptr(600 * ms)}, err: "longer than its"},
		{name: "borrowed beyond its threads", a: borrower, own: 1, l: measure.ProcessLewi{LentCallerNS: ptr(0), BorrowedCPUNS: 1600 * ms}, err: "more than its threads beyond its own 1 CPUs"},
		{name: "threads beyond CPUs that worked", a: measure.ProcessAccounts{CPUs: 4, ElapsedNS: 1000 * ms, UsefulNS: 3900 * ms, OMPSerializationNS: 100 * ms},
			own: 1, l: measure.ProcessLewi{LentCallerNS: ptr(0)}, err: "more threads than CPUs"},
		{name: "accounts that do not add up", a: measure.ProcessAccounts{CPUs: 1, ElapsedNS: 1000 * ms, UsefulNS: 500 * ms},
			own: 1, l: measure.ProcessLewi{LentCallerNS: ptr(0)}, err: "add up to 500000000 ns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Held(c.a, c.own, c.l)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q (got %+v)", err, c.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			if sum := got.UsefulNS + got.MPINS + got.OpenMPNS + got.GPUNS; sum != got.CPUNS {
				t.Errorf("parts add up to %d, CPU time held %d", sum, got.CPUNS)
			}
		})
	}
}

// TestLewiOfHeld: the run's held accounts are its processes' sums, and one
// process that cannot be set against its CPUs leaves the run without them,
// saying which and why.
func TestLewiOfHeld(t *testing.T) {
	const ms = int64(1e6)
	m := &measure.Measurement{
		Lewi: &measure.Lewi{Processes: 2},
		Processes: []measure.Process{
			{Rank: 0, CPUs: 1, AffinityCPUs: 1, Lewi: &measure.ProcessLewi{LentCallerNS: ptr(0), BorrowedCPUNS: 0}},
			{Rank: 1, CPUs: 1, AffinityCPUs: 1, Lewi: &measure.ProcessLewi{LentCPUNS: 200 * ms, LentCallerNS: ptr(200 * ms)}},
		},
		Regions: []measure.Region{{Name: measure.GlobalRegion, Processes: []measure.ProcessAccounts{
			{Rank: 0, CPUs: 1, ElapsedNS: 1000 * ms, UsefulNS: 1000 * ms},
			{Rank: 1, CPUs: 1, ElapsedNS: 900 * ms, UsefulNS: 500 * ms, MPINS: 400 * ms},
		}}},
	}
	_, ps, held, note := lewiOf(m)
	want := HeldAccounts{ElapsedNS: 1000 * ms, CPUNS: 1700 * ms, UsefulNS: 1500 * ms, MPINS: 200 * ms}
	if held == nil || *held != want || note != "" || len(ps) != 2 || ps[1].Held.CPUNS != 700*ms {
		t.Fatalf("held %+v (want %+v), note %q, processes %+v", held, want, note, ps)
	}
	if got := held.MeanCPUs(); got != 1.7 {
		t.Errorf("mean CPUs %v, want 1.7", got)
	}
	// The own CPUs LeWI registered come before the affinity.
	m.Processes[1].AffinityCPUs = 0
	if _, _, held, note = lewiOf(m); held != nil || note != "rank 1: its own CPUs were not recorded" {
		t.Errorf("held %+v, note %q", held, note)
	}
	m.Processes[1].Lewi.OwnCPUs = 1
	if _, _, held, note = lewiOf(m); held == nil || held.CPUNS != 1700*ms {
		t.Errorf("with own_cpus: held %+v, note %q", held, note)
	}
}

// TestDromOfHeld: a run where DROM took one of a process's 2 CPUs for half
// its run (LeWI off) has its accounts against the CPUs held; a process
// that never registered is left out of the sums; nothing when no CPUs
// changed or when LeWI was on (its line has them).
func TestDromOfHeld(t *testing.T) {
	const ms = int64(1e6)
	m := &measure.Measurement{
		Processes: []measure.Process{
			{Rank: 0, CPUs: 2, AffinityCPUs: 2, Drom: &measure.ProcessDrom{OwnCPUs: 2, OwnChangeCPUNS: -500 * ms}},
			{Rank: 1, CPUs: 1, AffinityCPUs: 1},
		},
		Regions: []measure.Region{{Name: measure.GlobalRegion, Processes: []measure.ProcessAccounts{
			{Rank: 0, CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 1400 * ms, OMPSerializationNS: 600 * ms},
			{Rank: 1, CPUs: 1, ElapsedNS: 1000 * ms, UsefulNS: 1000 * ms},
		}}},
	}
	ps, held, note := dromOf(m)
	want := HeldAccounts{ElapsedNS: 1000 * ms, CPUNS: 1500 * ms, UsefulNS: 1400 * ms, OpenMPNS: 100 * ms}
	if held == nil || *held != want || note != "" || len(ps) != 1 || ps[0].Rank != 0 || *ps[0].Held != want {
		t.Fatalf("held %+v (want %+v), note %q, processes %+v", held, want, note, ps)
	}
	m.Processes[0].Drom.OwnChangeCPUNS = 0
	if ps, held, _ := dromOf(m); ps != nil || held != nil {
		t.Errorf("CPUs unchanged: %+v %+v", ps, held)
	}
	m.Processes[0].Drom.OwnChangeCPUNS = -500 * ms
	m.Lewi = &measure.Lewi{Processes: 1}
	if ps, held, _ := dromOf(m); ps != nil || held != nil {
		t.Errorf("LeWI on: %+v %+v", ps, held)
	}
}
