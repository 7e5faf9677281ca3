package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/popmon/popmon/internal/patterns"
	"github.com/popmon/popmon/pop"
)

// The designed wait-state programs of examples/ (late_sender.c,
// wait_barrier.c, late_bcast.c, early_reduce.c, wrong_order.c,
// critical_path.c) run under `popmon run --trace`; `popmon report
// --patterns --format json` must report their analytic values within
// ±2 % or ±1 ms (issue 14). The pipeline (pipeline.c) checks the traced
// run's ideal-network replay: its loss is pure serialisation.

var (
	patternsTraceOnce sync.Once
	patternsTraceOK   bool
)

// patternsNeedTrace skips the test when this popmon has no `run --trace`
// (detected from `popmon run --help`, not assumed).
func patternsNeedTrace(t *testing.T) {
	t.Helper()
	patternsTraceOnce.Do(func() {
		so, se, _ := popmon(t, nil, "run", "--help")
		patternsTraceOK = strings.Contains(so+se, "\n  -trace")
	})
	if !patternsTraceOK {
		t.Skip("popmon run --trace is not supported yet (popmon run --help lists no --trace option): the designed wait-state programs need a traced run")
	}
}

// patternsRun runs prog under `popmon run --trace` and returns the
// measurement and its `report --patterns` JSON.
func patternsRun(t *testing.T, impl mpiImpl, np int, prog string, args ...string) (*result, *patterns.Result) {
	t.Helper()
	r := measureRunWith(t, impl, runOpts{flags: []string{"--trace"}}, np, prog, args...)
	if r.m.Trace == nil {
		t.Fatalf("popmon run --trace wrote no \"trace\" field into %s\nstderr:\n%s", r.file, r.stderr)
	}
	so, se, code := popmon(t, nil, "report", "--patterns", "--format", "json", r.file)
	if code != 0 {
		t.Fatalf("popmon report --patterns %s: exit %d\n%s", r.file, code, se)
	}
	var res patterns.Result
	if err := json.Unmarshal([]byte(so), &res); err != nil {
		t.Fatalf("report --patterns JSON: %v\n%s", err, so)
	}
	if len(res.Patterns) != len(patterns.IDs()) || res.Ranks != np {
		t.Fatalf("report --patterns: %d patterns over %d ranks, want %d over %d", len(res.Patterns), res.Ranks, len(patterns.IDs()), np)
	}
	return r, &res
}

// patternsNear asserts got (ns) within ±2 % or ±1 ms of want (ns).
func patternsNear(t *testing.T, what string, got, want int64) {
	t.Helper()
	d := math.Abs(float64(got - want))
	if d > 1e6 && d > 0.02*float64(want) {
		t.Errorf("%s = %.4f s, want %.4f s (±2 %% or ±1 ms)", what, float64(got)/1e9, float64(want)/1e9)
	}
}

// patternsNS returns pattern id's total and its time on rank r.
func patternsNS(t *testing.T, res *patterns.Result, id string, r int) (int64, int64) {
	t.Helper()
	p := res.Pattern(id)
	if p == nil || r >= len(p.RankNS) {
		t.Fatalf("pattern %s missing from the report", id)
	}
	return p.NS, p.RankNS[r]
}

const patternsMS = int64(1_000_000)

// patternsDesign returns K (ms) and N for a collective design: k and n,
// or longK and longN with more ranks than cores (or as many, with a
// busy-waiting MPI): there the last rank's wake-up from its work waits
// for a core held by polling ranks — up to a scheduler time slice, ~5 ms,
// per operation — and that delay lands in every other rank's wait, so the
// phases must be long enough for it to stay within the tolerance.
func patternsDesign(impl mpiImpl, np int, k, n, longK, longN int64) (int64, int64) {
	if np > runtime.NumCPU() || busyWaitOversubscribed(impl, np) {
		return longK, longN
	}
	return k, n
}

func TestPatternLateSender(t *testing.T) {
	patternsNeedTrace(t)
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			r, res := patternsRun(t, impl, 2, "late_sender", "50", "10")
			total, r1 := patternsNS(t, res, patterns.LateSender, 1)
			patternsNear(t, "Late Sender", total, 500*patternsMS)
			patternsNear(t, "Late Sender on rank 1", r1, 500*patternsMS)
			lr, _ := patternsNS(t, res, patterns.LateReceiver, 0)
			patternsNear(t, "Late Receiver", lr, 0)
			patternsExports(t, r.file, 10, total)
		})
	}
}

// patternsExports exports the traced run of file to Perfetto (one flow
// arrow per message: want messages) and to Paraver, whose re-read gives
// the same Late Sender (lateSender ns, ±1 µs).
func patternsExports(t *testing.T, file string, messages int, lateSender int64) {
	t.Helper()
	dir := t.TempDir()
	pf := filepath.Join(dir, "run.perfetto.json")
	if _, se, code := popmon(t, nil, "trace", "export", "--format", "perfetto", "-o", pf, file); code != 0 {
		t.Fatalf("trace export perfetto: exit %d\n%s", code, se)
	}
	data, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct{ Ph string } `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("perfetto export: %v", err)
	}
	flows := map[string]int{}
	for _, e := range doc.TraceEvents {
		flows[e.Ph]++
	}
	if flows["s"] != messages || flows["f"] != messages || flows["M"] == 0 {
		t.Errorf("perfetto export: %d flow starts, %d ends, %d M records; want %d messages", flows["s"], flows["f"], flows["M"], messages)
	}
	prefix := filepath.Join(dir, "again")
	if _, se, code := popmon(t, nil, "trace", "export", "--format", "prv", "-o", prefix, file); code != 0 {
		t.Fatalf("trace export prv: exit %d\n%s", code, se)
	}
	so, se, code := popmon(t, nil, "report", "--patterns", "--format", "json", prefix+".prv")
	if code != 0 {
		t.Fatalf("report --patterns of the Paraver export: exit %d\n%s", code, se)
	}
	var res patterns.Result
	if err := json.Unmarshal([]byte(so), &res); err != nil {
		t.Fatal(err)
	}
	if got := res.Pattern(patterns.LateSender).NS; got < lateSender-1000 || got > lateSender+1000 {
		t.Errorf("Late Sender of the Paraver export %d ns, of the trace %d ns", got, lateSender)
	}
}

func TestPatternWrongOrder(t *testing.T) {
	patternsNeedTrace(t)
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			_, res := patternsRun(t, impl, 2, "wrong_order", "50")
			ls, _ := patternsNS(t, res, patterns.LateSender, 1)
			same, r1 := patternsNS(t, res, patterns.WrongOrderSameSource, 1)
			patternsNear(t, "Late Sender", ls, 50*patternsMS)
			patternsNear(t, "Late Sender, wrong order (same source)", same, 50*patternsMS)
			patternsNear(t, "… on rank 1", r1, 50*patternsMS)
		})
	}
}

// TestPatternCollectives: Wait at Barrier, Late Broadcast and Early
// Reduce on 4 ranks.
func TestPatternCollectives(t *testing.T) {
	patternsNeedTrace(t)
	const np = 4
	for _, impl := range impls(t) {
		t.Run(impl.name+"/wait_barrier", func(t *testing.T) {
			k, n := patternsDesign(impl, np, 10, 10, 600, 2)
			_, res := patternsRun(t, impl, np, "wait_barrier", fmt.Sprint(k), fmt.Sprint(n))
			// Per barrier rank r waits (P-1-r)·K: 6K in all, 3K on rank 0.
			total, r0 := patternsNS(t, res, patterns.WaitBarrier, 0)
			patternsNear(t, "Wait at Barrier", total, 6*k*n*patternsMS)
			patternsNear(t, "Wait at Barrier on rank 0", r0, 3*k*n*patternsMS)
		})
		t.Run(impl.name+"/late_bcast", func(t *testing.T) {
			k, n := patternsDesign(impl, np, 20, 10, 300, 2)
			_, res := patternsRun(t, impl, np, "late_bcast", fmt.Sprint(k), fmt.Sprint(n))
			total, r0 := patternsNS(t, res, patterns.LateBroadcast, 0)
			patternsNear(t, "Late Broadcast", total, (np-1)*k*n*patternsMS)
			patternsNear(t, "Late Broadcast on the root", r0, 0)
		})
		t.Run(impl.name+"/early_reduce", func(t *testing.T) {
			k, n := patternsDesign(impl, np, 20, 10, 300, 2)
			_, res := patternsRun(t, impl, np, "early_reduce", fmt.Sprint(k), fmt.Sprint(n))
			total, r0 := patternsNS(t, res, patterns.EarlyReduce, 0)
			patternsNear(t, "Early Reduce", total, k*n*patternsMS)
			patternsNear(t, "Early Reduce on the root", r0, k*n*patternsMS)
		})
	}
}

// TestPatternCriticalPath: after a barrier, rank 0 works 100 ms and
// sends; rank 1 works 10 ms, receives, works 100 ms: the path runs
// through rank 0's 100 ms of work, then rank 1's 100 ms. (Before the
// barrier the path holds whatever the ranks did between MPI_Init and the
// barrier, outside the design: it is not counted.)
func TestPatternCriticalPath(t *testing.T) {
	patternsNeedTrace(t)
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			_, res := patternsRun(t, impl, 2, "critical_path", "100", "10")
			segs := res.CriticalPath.Segments
			// The design starts with rank 0's longest useful segment.
			first := -1
			for i, s := range segs {
				if s.Rank == 0 && s.Name == patterns.Useful && (first < 0 || s.End-s.Start > segs[first].End-segs[first].Start) {
					first = i
				}
			}
			if first < 0 {
				t.Fatalf("no useful time of rank 0 on the critical path: %+v", segs)
			}
			useful := make([]int64, 2)
			for _, s := range segs[first:] {
				if s.Name == patterns.Useful {
					useful[s.Rank] += s.End - s.Start
				}
			}
			patternsNear(t, "useful time on the critical path from rank 0's work on, rank 0", useful[0], 100*patternsMS)
			patternsNear(t, "… then rank 1", useful[1], 100*patternsMS)
			if t.Failed() {
				t.Logf("segments: %+v", segs)
			}
		})
	}
}

// TestPipelineIdealNetwork: the token ring loses all its communication
// time to serialisation: under the ideal network it runs as long, so
// serialisation efficiency = communication efficiency (1/P) and transfer
// efficiency = 1.
func TestPipelineIdealNetwork(t *testing.T) {
	patternsNeedTrace(t)
	const np = 4
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			// With more ranks than cores each hand-off waits for the
			// receiver's wake-up (a real cost the ideal network removes:
			// transfer); long steps keep it within the tolerance.
			// A busy-waiting MPI's receiver may wait a time slice (~10
			// ms) for a core: 1 s steps.
			args := []string{"100", "3"}
			// The receiver's wake-up is transfer time the ideal network
			// removes; a busy-waiting MPI oversubscribed (3 spinning ranks
			// on 2 cores) waits a time slice or two for it: CI read
			// transfer 0.979 with MPICH (4 hand-offs of 1 s steps), so
			// there transfer may be 0.04 below 1.
			traTol := effTol
			switch {
			case busyWaitOversubscribed(impl, np):
				args = []string{"1000", "1"}
				traTol = 0.04
			case np > runtime.NumCPU():
				args = []string{"400", "2"}
			}
			r := measureRunWith(t, impl, runOpts{flags: []string{"--trace"}}, np, "pipeline", args...)
			if r.m.IdealNetwork == nil {
				t.Skipf("the traced run's measurement has no ideal_network: popmon run --trace does not replay the trace yet (%s)", r.file)
			}
			rep, err := pop.Compute(r.m, pop.ModelPOPAdditive)
			if err != nil {
				t.Fatal(err)
			}
			g := rep.Regions[0]
			comm, ok1 := g.Value("mpi_communication_efficiency")
			ser, ok2 := g.Value(pop.IDSerialisationEfficiency)
			tra, ok3 := g.Value(pop.IDTransferEfficiency)
			if !ok1 || !ok2 || !ok3 {
				t.Fatalf("pop-additive lacks communication (%v), serialisation (%v) or transfer (%v) efficiency", ok1, ok2, ok3)
			}
			if math.Abs(ser-comm) > effTol || tra > 1+effTol || tra < 1-traTol {
				t.Errorf("serialisation %.4f, transfer %.4f, communication %.4f: want serialisation = communication (±%.2f), transfer 1 (+%.2f −%.2f)", ser, tra, comm, effTol, effTol, traTol)
			}
			if math.Abs(comm-1/float64(np)) > effTol {
				t.Errorf("communication efficiency %.4f, want %.4f", comm, 1/float64(np))
			}
		})
	}
}
