package e2e

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/trace"
)

// tracedRun runs prog under popmon run --trace (plus flags) and reads the
// trace the measurement names.
func tracedRun(t *testing.T, impl mpiImpl, flags []string, np int, prog string, args ...string) (*result, *trace.Trace) {
	t.Helper()
	r := measureRunWith(t, impl, runOpts{flags: append([]string{"--trace"}, flags...)}, np, prog, args...)
	if r.m.Trace == nil {
		t.Fatalf("the measurement has no trace object\nstderr:\n%s", r.stderr)
	}
	if r.m.Trace.Records <= 0 || r.m.Trace.Bytes <= 0 {
		t.Errorf("trace object %+v: want records and bytes", *r.m.Trace)
	}
	tr, err := trace.ReadDir(filepath.Join(filepath.Dir(r.file), r.m.Trace.Dir))
	if err != nil {
		t.Fatalf("reading the trace: %v", err)
	}
	return r, tr
}

// TestTracePingPong traces examples/bytes (2 ranks): its messages (3N+7
// for N round trips: 2N blocking, 4 Isend/Irecv with MPI_Waitall, one
// Ssend/Irecv with MPI_Wait, N persistent, 2 in MPI_Sendrecv) and their
// bytes are exact, and the trace's calls carry the collectives' bytes.
func TestTracePingPong(t *testing.T) {
	const n = 6
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			r, tr := tracedRun(t, impl, nil, 2, "bytes", fmt.Sprint(n))
			if got, want := len(tr.Messages), 3*n+7; got != want {
				t.Errorf("%d messages, want %d (notes %v)", got, want, tr.Notes)
			}
			var bytes int64
			for _, m := range tr.Messages {
				bytes += m.Bytes
				if m.Src == m.Dst || m.Src < 0 || m.Src > 1 || m.Comm != 0 {
					t.Errorf("message %+v: want one between ranks 0 and 1 on MPI_COMM_WORLD", m)
				}
				if m.RecvDone < m.RecvPost || m.LogSend > m.PhysRecv {
					t.Errorf("message %+v: receive done before posted, or received before sent", m)
				}
			}
			if want := int64(1164*n + 96); bytes != want {
				t.Errorf("messages carry %d bytes, want %d", bytes, want)
			}
			if len(tr.Ranks) != 2 {
				t.Fatalf("%d ranks", len(tr.Ranks))
			}
			var bcast, finalize int
			for _, c := range tr.Ranks[1].Calls {
				switch c.Name {
				case "MPI_Bcast":
					bcast++
					if c.Kind != trace.KindCollective || c.Coll != trace.CollBcast || c.Root != 0 || c.RecvBytes != 1024 || c.Comm != 0 {
						t.Errorf("rank 1's MPI_Bcast %+v: want a broadcast from root 0 receiving 1024 bytes", c)
					}
				case "MPI_Finalize":
					finalize++
				}
			}
			if bcast != 1 || finalize != 1 {
				t.Errorf("rank 1: %d MPI_Bcast and %d MPI_Finalize calls, want 1 each", bcast, finalize)
			}
			// The warning of the replay (not implemented yet) or none.
			for _, w := range r.m.Warnings {
				if strings.Contains(w, "could not be read") {
					t.Errorf("warning %q", w)
				}
			}
		})
	}
}

// TestTraceWildcard: every message received with MPI_ANY_SOURCE is
// matched to its actual sender (examples/wildcard: 100*source bytes with
// tag source).
func TestTraceWildcard(t *testing.T) {
	const np, rounds = 3, 3
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			_, tr := tracedRun(t, impl, nil, np, "wildcard", fmt.Sprint(rounds))
			if got, want := len(tr.Messages), 2*(np-1)*rounds; got != want {
				t.Errorf("%d messages, want %d (notes %v)", got, want, tr.Notes)
			}
			for _, m := range tr.Messages {
				if m.Dst != 0 || m.Src < 1 || m.Bytes != int64(100*m.Src) || m.Tag != m.Src {
					t.Errorf("message %+v: want one to rank 0 of 100*source bytes with tag source", m)
				}
			}
		})
	}
}

// TestTraceComms: communicators created and freed in a loop
// (examples/comms: pairs {0,1},{2,3} on even rounds, {0,2},{1,3} on odd
// ones) keep their own members in the trace although MPI reuses freed
// handles: every message goes between the round's partners with the
// round's tag and size, every collective is on a two-member communicator
// holding its rank.
func TestTraceComms(t *testing.T) {
	const np, rounds = 4, 4
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			_, tr := tracedRun(t, impl, nil, np, "comms", fmt.Sprint(rounds))
			if got, want := len(tr.Messages), np*rounds; got != want {
				t.Errorf("%d messages, want %d (notes %v)", got, want, tr.Notes)
			}
			partner := func(r, round int32) int32 {
				if round%2 == 0 {
					return r ^ 1 // {0,1}, {2,3}
				}
				return r ^ 2 // {0,2}, {1,3}
			}
			for _, m := range tr.Messages {
				if m.Tag < 0 || m.Tag >= rounds || m.Dst != partner(m.Src, m.Tag) || m.Bytes != int64(8*(m.Tag+1)) {
					t.Errorf("message %+v: want one to the partner of round tag, of 8*(tag+1) bytes", m)
					continue
				}
				if m.Comm < 0 || int(m.Comm) >= len(tr.Comms) {
					t.Errorf("message %+v: no communicator", m)
					continue
				}
				members := tr.Comms[m.Comm].Members
				if len(members) != 2 || !((members[0] == m.Src && members[1] == m.Dst) || (members[0] == m.Dst && members[1] == m.Src)) {
					t.Errorf("message %+v on a communicator of members %v", m, members)
				}
			}
			for r := range tr.Ranks {
				n := 0
				for _, c := range tr.Ranks[r].Calls {
					if c.Name != "MPI_Allreduce" {
						continue
					}
					n++
					if c.Comm < 0 || int(c.Comm) >= len(tr.Comms) {
						t.Errorf("rank %d: MPI_Allreduce without a communicator", r)
						continue
					}
					members := tr.Comms[c.Comm].Members
					if len(members) != 2 || (members[0] != int32(r) && members[1] != int32(r)) {
						t.Errorf("rank %d: MPI_Allreduce on members %v", r, members)
					}
				}
				if n != rounds {
					t.Errorf("rank %d: %d MPI_Allreduce calls, want %d", r, n, rounds)
				}
			}
		})
	}
}

// TestTraceSmallBuffer: a 4 KiB trace buffer fills many times; the flushes
// are recorded and said once, the trace still holds every call, and the
// metrics stay within 2 % of an untraced run (and those of a trace with
// the default buffer).
func TestTraceSmallBuffer(t *testing.T) {
	const np = 2
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			// 150 iterations: more records per rank than a 4 KiB buffer
			// holds (102); K = 10 ms keeps the design's times well above
			// the scheduler's noise on a loaded machine.
			const k, iters = 10, 150
			args := []string{fmt.Sprint(k), fmt.Sprint(iters)}
			plain := measureRun(t, impl, np, "imbalance", args...)
			full, ftr := tracedRun(t, impl, nil, np, "imbalance", args...)
			small, str := tracedRun(t, impl, []string{"--trace-buffer", "4k"}, np, "imbalance", args...)
			if small.m.Trace.Flushes == 0 {
				t.Errorf("no flushes with a 4 KiB buffer: %+v", *small.m.Trace)
			}
			if full.m.Trace.Flushes != 0 {
				t.Errorf("%d flushes with the default buffer", full.m.Trace.Flushes)
			}
			warned := false
			for _, w := range small.m.Warnings {
				warned = warned || strings.Contains(w, "trace buffer")
			}
			if !warned {
				t.Errorf("no warning about the flushes: %q", small.m.Warnings)
			}
			for _, tr := range []*trace.Trace{ftr, str} {
				for rk, rank := range tr.Ranks {
					n := 0
					for _, c := range rank.Calls {
						if c.Name == "MPI_Allreduce" {
							n++
						}
					}
					if n != iters {
						t.Errorf("rank %d: %d MPI_Allreduce calls in the trace, want %d", rk, n, iters)
					}
				}
			}
			for _, id := range []string{"parallel_efficiency", "mpi_load_balance", "mpi_communication_efficiency"} {
				want, _ := plain.region(t, "Global").Value(id)
				for name, r := range map[string]*result{"traced": full, "traced, 4k buffer": small} {
					got, _ := r.region(t, "Global").Value(id)
					if math.Abs(got-want) > 0.02*want {
						t.Errorf("%s: %s = %.4f, untraced %.4f: more than 2 %% apart", name, id, got, want)
					}
				}
			}
			if got := full.calls("MPI_Allreduce"); got != int64(np*iters) {
				t.Errorf("traced run: %d MPI_Allreduce calls, want %d", got, np*iters)
			}
		})
	}
}
