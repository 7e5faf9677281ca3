package paraver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

func importText(t *testing.T, text string, opt Options) *measure.Measurement {
	t.Helper()
	m, err := Import(strings.NewReader(text), opt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestImportMPIAccounts: two single-threaded ranks; every account follows
// from the records by hand.
func TestImportMPIAccounts(t *testing.T) {
	trace := `#Paraver (21/11/2026 at 10:00):1000_ns:1(2):1:2(1:1,1:1),0
1:1:1:1:1:0:600:1
1:2:1:2:1:0:300:1
2:2:1:2:1:300:50000002:10:42000050:400:42000059:200
1:2:1:2:1:300:900:13
1:1:1:1:1:600:900:13
2:1:1:1:1:600:50000002:10:42000050:1000:42000059:500
2:1:1:1:1:900:50000002:0:42000050:77:42000059:66
1:1:1:1:1:900:950:1
2:2:1:2:1:900:50000002:0:42000050:5:42000059:5
1:2:1:2:1:900:1000:1
1:1:1:1:1:950:1000:12
2:1:1:1:1:950:42000050:100:42000059:50
2:2:1:2:1:1000:42000050:300:42000059:150
3:1:1:1:1:600:600:2:1:2:1:900:900:64:1
`
	pcf := &PCF{Values: map[int64]map[uint64]string{50000002: {10: "MPI_Allreduce"}}}
	m := importText(t, trace, Options{PCF: pcf, Row: &Row{Nodes: []string{"n1"}}, Path: "x.prv"})
	if m.MPI == nil || m.OpenMP != nil || !m.Resources.HardwareCounters || m.Resources.Processes != 2 || m.Resources.CPUs != 2 {
		t.Fatalf("features: mpi %v openmp %v counters %v resources %+v", m.MPI, m.OpenMP, m.Resources.HardwareCounters, m.Resources)
	}
	if m.Processes[1].Hostname != "n1" || m.Clock.Source != measure.ClockTrace || m.Source.Kind != measure.SourceParaver || m.Source.Path != "x.prv" {
		t.Errorf("process %+v clock %q source %+v", m.Processes[1], m.Clock.Source, m.Source)
	}
	if m.Timestamp != "2026-11-21T10:00:00Z" {
		t.Errorf("timestamp %q", m.Timestamp)
	}
	g := m.Regions[0]
	want := []measure.ProcessAccounts{
		{Rank: 0, CPUs: 1, Visits: 1, ElapsedNS: 1000, UsefulNS: 650, MPINS: 300, OtherNS: 50, MPICalls: 1,
			Instructions: 1100, Cycles: 550, PrimaryUsefulNS: 650, PrimaryMPINS: 300, PrimaryOtherNS: 50,
			PrimarySerialUsefulNS: 650, ThreadUsefulMaxNS: 650},
		{Rank: 1, CPUs: 1, Visits: 1, ElapsedNS: 1000, UsefulNS: 400, MPINS: 600, MPICalls: 1,
			Instructions: 700, Cycles: 350, PrimaryUsefulNS: 400, PrimaryMPINS: 600,
			PrimarySerialUsefulNS: 400, ThreadUsefulMaxNS: 400},
	}
	for i, w := range want {
		if !reflect.DeepEqual(g.Processes[i], w) {
			t.Errorf("rank %d:\n got  %+v\n want %+v", i, g.Processes[i], w)
		}
	}
	if len(m.MPICalls) != 1 || !reflect.DeepEqual(m.MPICalls[0], measure.MPICall{Name: "MPI_Allreduce", Calls: 2, TimeNS: 900, MinTimeNS: 300, MaxTimeNS: 600, MaxRank: 1}) {
		t.Errorf("mpi calls = %+v", m.MPICalls)
	}
}

// TestImportOpenMPAccounts: one process, three threads, one parallel
// region instance from 100 to 500 in which thread 3 never works; the
// primary calls MPI from 900 to 950 (its workers are then MPI worker idle)
// and is in I/O from 950 to 1000 (other).
func TestImportOpenMPAccounts(t *testing.T) {
	trace := `#Paraver (d):1000_ns:1(3):1:1(3:1),0
1:1:1:1:1:0:100:1
1:2:1:1:2:0:100:2
1:3:1:1:3:0:1000:2
1:1:1:1:1:100:110:7
2:1:1:1:1:100:60000001:3
1:2:1:1:2:100:120:7
1:1:1:1:1:110:400:1
2:1:1:1:1:110:60000018:5
1:2:1:1:2:120:450:1
2:2:1:1:2:120:60000018:5
1:1:1:1:1:400:500:5
2:1:1:1:1:400:60000018:0
1:2:1:1:2:450:500:5
2:2:1:1:2:450:60000018:0
2:1:1:1:1:500:60000001:0
1:1:1:1:1:500:900:1
1:2:1:1:2:500:1000:0
1:1:1:1:1:900:950:13
2:1:1:1:1:900:50000002:10
1:1:1:1:1:950:1000:12
2:1:1:1:1:950:50000002:0
`
	m := importText(t, trace, Options{})
	if m.OpenMP == nil || !m.OpenMP.OMPT || m.OpenMP.MaxThreads != 3 || m.Resources.HardwareCounters || m.Counters == nil || m.Counters.Reason == "" {
		t.Fatalf("openmp %+v counters %v %+v", m.OpenMP, m.Resources.HardwareCounters, m.Counters)
	}
	got := m.Regions[0].Processes[0]
	want := measure.ProcessAccounts{
		Rank: 0, CPUs: 3, Visits: 1, ElapsedNS: 1000,
		UsefulNS:           790 + 330,
		MPINS:              50,
		OtherNS:            50,
		MPIWorkerIdleNS:    2 * 50,
		OMPSerializationNS: 2*(100+450) + 400, // before and after the region, thread 3 outside the team
		OMPLoadImbalanceNS: 110 - 70,          // primary idle 110 (fork 10, barrier 100), thread 2 idle 70
		OMPSchedulingNS:    2 * 70,
		MPICalls:           1, OMPParallels: 1,
		PrimaryUsefulNS: 790, PrimaryMPINS: 50, PrimaryOtherNS: 50, PrimaryParallelNS: 400,
		PrimarySerialUsefulNS: 500, ParallelUsefulNS: 290 + 330, ThreadUsefulMaxNS: 790,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("accounts:\n got  %+v\n want %+v", got, want)
	}
	sum := got.UsefulNS + got.MPINS + got.OtherNS + got.MPIWorkerIdleNS + got.OMPSerializationNS + got.OMPLoadImbalanceNS + got.OMPSchedulingNS
	if sum != 3*1000 {
		t.Errorf("accounts sum to %d, want cpus × elapsed = 3000", sum)
	}
}

func TestImportUnitsAndGaps(t *testing.T) {
	// Microseconds (no unit), a gap without a state record (idle → other),
	// a state running past the trace's end (cut), and an unknown thread.
	m := importText(t, "#Paraver (d):10:1(1):1:1(1:1)\n1:1:1:1:1:0:4:1\n1:1:1:1:1:6:99:1\n", Options{})
	a := m.Regions[0].Processes[0]
	if a.ElapsedNS != 10_000 || a.UsefulNS != 8_000 || a.OtherNS != 2_000 || m.MPI != nil {
		t.Errorf("accounts %+v mpi %v", a, m.MPI)
	}
	_, err := Import(strings.NewReader("#Paraver (d):10:1(1):1:1(1:1)\n1:1:1:1:2:0:4:1\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "line 2: thread 2 of task 1 does not exist") || !strings.Contains(err.Error(), "--skip-bad") {
		t.Errorf("unknown thread: %v", err)
	}
}

func TestImportSkipBad(t *testing.T) {
	trace := "#Paraver (d):10_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:4:1\ngarbage\n1:1:1:1:7:4:5:1\n1:1:1:1:1:4:10:1\n"
	if _, err := Import(strings.NewReader(trace), Options{}); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("without SkipBad: %v", err)
	}
	m := importText(t, trace, Options{SkipBad: true})
	if a := m.Regions[0].Processes[0]; a.UsefulNS != 10 {
		t.Errorf("useful %d, want 10", a.UsefulNS)
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "skipped 2 malformed line(s)") || !strings.Contains(m.Warnings[0], "line 3") {
		t.Errorf("warnings %q", m.Warnings)
	}
	many := "#Paraver (d):10_ns:1(1):1:1(1:1)\n" + strings.Repeat("x\n", maxBadLines+1)
	if _, err := Import(strings.NewReader(many), Options{SkipBad: true}); err == nil || !strings.Contains(err.Error(), "not a Paraver trace") {
		t.Errorf("all garbage: %v", err)
	}
}

func TestImportSecondApplication(t *testing.T) {
	trace := "#Paraver (d):10_ns:0:2:1(1:0):1(2:0)\n1:1:1:1:1:0:10:1\n1:1:2:1:1:0:10:1\n1:1:2:1:2:0:10:2\n"
	m := importText(t, trace, Options{App: 2})
	if a := m.Regions[0].Processes[0]; a.CPUs != 2 || a.UsefulNS != 10 || m.Resources.Nodes != 1 {
		t.Errorf("app 2: %+v", a)
	}
	if _, err := Import(strings.NewReader(trace), Options{App: 3}); err == nil || !strings.Contains(err.Error(), "no application 3") {
		t.Errorf("app 3: %v", err)
	}
}
