package e2e

import (
	"bufio"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
)

// TestPollingCalls runs testdata/poll.c (2 ranks): rank 0 polls with
// MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall, MPI_Request_get_status,
// MPI_Iprobe and MPI_Improbe in tight loops on receives that complete after
// a known delay (MPI_REQUEST_NULL entries, MPI_STATUS(ES)_IGNORE, a status
// array filled in completion order, a persistent receive, a matched probe,
// arrays longer than the wrapper keeps itself and than the request table).
// The wrappers save the handles before the call and look up only the
// requests that completed (shim/mpi/mpidata.h), so this checks, for both
// MPIs: every polling function's call count is the program's own count; the
// receives' bytes and sizes are credited to the calls that posted them, as
// designed (the polling calls carry none); and each polling function's MPI
// time lies within the wall time of the loops that call it, and with
// popmon's own cost in its calls (instrumentation_ns per call, which the
// call profile leaves out) covers at least half of it (the loops do nothing
// else).
func TestPollingCalls(t *testing.T) {
	hist := func(sizes ...int64) []int64 {
		var h []int64
		for _, s := range sizes {
			b := 0
			for v := s; v > 0; v >>= 1 {
				b++
			}
			for len(h) <= b {
				h = append(h, 0)
			}
			h[b]++
		}
		return h
	}
	irecv := []int64{100, 200, 300, 40, 50, 60, 70, 80, 90, 130, 140, 150, 160}
	sum := func(v []int64) (s int64) {
		for _, x := range v {
			s += x
		}
		return s
	}
	sent := append(append([]int64{}, irecv...), 64, 64, 64, 110, 120)
	want := map[string]measure.MPICall{
		"MPI_Irecv":     {Calls: 13, BytesRecv: sum(irecv), SizeHist: hist(irecv...)},
		"MPI_Recv_init": {Calls: 1, BytesRecv: 192, SizeHist: hist(64, 64, 64)},
		"MPI_Recv":      {Calls: 1, BytesRecv: 110, SizeHist: hist(110)},
		"MPI_Imrecv":    {Calls: 1, BytesRecv: 120, SizeHist: hist(120)},
		"MPI_Send":      {Calls: 18, BytesSent: sum(sent), SizeHist: hist(sent...)},
		"MPI_Start":     {Calls: 3},
		"MPI_Wait":      {Calls: 1},
	}
	polls := []string{"MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Request_get_status",
		"MPI_Iprobe", "MPI_Improbe"}
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := buildMPI(t, impl, "poll")
			out, so, se, code := runPopmonWithin(t, 90*time.Second, append(launch(impl, 2), prog, "50")...)
			if code != 0 || !strings.HasSuffix(strings.TrimSpace(so), "ok") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			calls, loops := pollCounts(t, so)
			m := readChecked(t, out)
			got := map[string]measure.MPICall{}
			for _, c := range m.MPICalls {
				got[c.Name] = c
			}
			for name, w := range want {
				g := got[name]
				if g.Calls != w.Calls || g.BytesSent != w.BytesSent || g.BytesRecv != w.BytesRecv ||
					!reflect.DeepEqual(g.SizeHist, w.SizeHist) {
					t.Errorf("%s: %d calls, sent %d, received %d, sizes %v; want %d, %d, %d, %v", name,
						g.Calls, g.BytesSent, g.BytesRecv, g.SizeHist, w.Calls, w.BytesSent, w.BytesRecv, w.SizeHist)
				}
			}
			// popmon's own cost per call (rank 0's, the same for every
			// call): the call profile's times are without the part of it
			// inside the calls' clock readings (docs/metrics.md).
			var ownPerCall float64
			for _, r := range m.Regions {
				for _, p := range r.Processes {
					if r.Name == measure.GlobalRegion && p.Rank == 0 && p.MPICalls > 0 {
						ownPerCall = float64(p.InstrumentationNS) / float64(p.MPICalls)
					}
				}
			}
			var pollNS int64
			for _, name := range polls {
				g := got[name]
				if g.Calls != calls[name] || calls[name] == 0 {
					t.Errorf("%s: %d calls in the measurement, the program made %d", name, g.Calls, calls[name])
				}
				if g.BytesSent != 0 || g.BytesRecv != 0 || len(g.SizeHist) != 0 {
					t.Errorf("%s: sent %d, received %d, sizes %v; a polling call carries no bytes of its own",
						name, g.BytesSent, g.BytesRecv, g.SizeHist)
				}
				// The loops' wall time, from the program's clock; popmon's
				// ticks may differ from it by its calibration (< 1 %).
				loop := loops[name]
				own := int64(ownPerCall * float64(g.Calls))
				if g.TimeNS > loop+loop/50+int64(time.Millisecond) || g.TimeNS+own < loop/2 {
					t.Errorf("%s: %v in the call, %v of popmon's own cost; its loops took %v (the call's time must lie within, and cover half of it with the own cost)",
						name, time.Duration(g.TimeNS), time.Duration(own), time.Duration(loop))
				}
				if g.MaxRank != 0 || g.MinTimeNS != 0 {
					t.Errorf("%s: max rank %d, min time %v; only rank 0 polls", name, g.MaxRank, time.Duration(g.MinTimeNS))
				}
				pollNS += g.TimeNS
			}
			// Rank 0's MPI time holds its polls' time.
			for _, r := range m.Regions {
				if r.Name != measure.GlobalRegion {
					continue
				}
				for _, p := range r.Processes {
					if p.Rank == 0 && (p.MPINS < pollNS || p.MPINS > p.ElapsedNS) {
						t.Errorf("rank 0: MPI time %v, its polling calls' %v, elapsed %v", time.Duration(p.MPINS),
							time.Duration(pollNS), time.Duration(p.ElapsedNS))
					}
				}
			}
		})
	}
}

// runPopmonWithin is runPopmon with a deadline: `popmon run --format none -o
// OUT -- argv`; a hang fails the test.
func runPopmonWithin(t *testing.T, d time.Duration, argv ...string) (string, string, string, int) {
	t.Helper()
	out := t.TempDir() + "/m.json"
	args := append([]string{popmonBin, "run", "--format", "none", "-o", out, "--"}, argv...)
	so, se, code := runCommand(t, d, nil, args...)
	if code == -1 {
		t.Fatalf("popmon run did not end within %v\nstdout:\n%s\nstderr:\n%s", d, so, se)
	}
	return out, so, se, code
}

// pollCounts reads the program's "calls NAME N" and "loop_ns NAME T" lines.
func pollCounts(t *testing.T, stdout string) (calls, loops map[string]int64) {
	t.Helper()
	calls, loops = map[string]int64{}, map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || (f[0] != "calls" && f[0] != "loop_ns") {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatalf("program output %q: %v", sc.Text(), err)
		}
		if f[0] == "calls" {
			calls[f[1]] = int64(v)
		} else {
			loops[f[1]] = int64(v)
		}
	}
	return calls, loops
}
