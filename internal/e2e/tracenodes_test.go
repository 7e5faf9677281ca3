package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/patterns"
	"github.com/popmon/popmon/internal/trace"
)

// TestMultiNodeTrace: `popmon run --trace` of a job on 2 nodes of the
// namespace cluster (1 rank each, examples/late_sender: rank 0 works 50 ms
// before each of 10 MPI_Send of 8 bytes that rank 1 has been waiting for):
// both ranks' files land in the trace folder, the merged trace names both
// nodes and all 10 messages, and the wait states across the nodes are the
// design's (Late Sender 0.50 s on rank 1 within ±2 %, no Late Receiver).
// No message may be received before it was sent on the merged time line.
// The nodes share one kernel clock here, so this checks the cross-node
// alignment path (offsets measured by ping-pong between the node leaders at
// MPI_Init and MPI_Finalize), not a real clock skew; it failed with the
// earlier estimate from the barriers' exits (5 ms apart at MPI_Init on the
// busy 2 cores).
func TestMultiNodeTrace(t *testing.T) {
	patternsNeedTrace(t)
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			c := needCluster(t, 2)
			dir := examples(t, impl)
			out := filepath.Join(t.TempDir(), "m.json")
			launch := c.Launch(impl, 2, c.Hosts(2, 1), filepath.Join(dir, "late_sender"), "50", "10")
			argv := c.OnEnv(0, clusterEnv(), append([]string{popmonBin, "run", "--trace", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, launch...)...)
			start := time.Now()
			so, se, code := c.run(t, 3*time.Minute, argv)
			if code != 0 || !strings.Contains(so, "ok") {
				t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
			}
			t.Logf("traced 2-node run: %v", time.Since(start).Round(10*time.Millisecond))
			m := readChecked(t, out)
			if m.Trace == nil || m.Resources.Nodes != 2 {
				t.Fatalf("trace %+v on %d nodes: want a traced run on 2 nodes\nstderr:\n%s", m.Trace, m.Resources.Nodes, se)
			}
			tr, err := trace.ReadDir(filepath.Join(filepath.Dir(out), m.Trace.Dir))
			if err != nil {
				t.Fatalf("reading the trace: %v", err)
			}
			if len(tr.Ranks) != 2 || tr.Ranks[0].Node == tr.Ranks[1].Node || tr.Ranks[0].Node == "" {
				t.Errorf("trace ranks on nodes %q and %q: want two different nodes", tr.Ranks[0].Node, tr.Ranks[len(tr.Ranks)-1].Node)
			}
			if len(tr.Messages) != 10 {
				t.Errorf("%d messages, want 10 (notes %v)", len(tr.Messages), tr.Notes)
			}
			for _, msg := range tr.Messages {
				if msg.PhysRecv < msg.LogSend {
					t.Errorf("message %+v received before it was sent: the nodes' clocks are not aligned", msg)
				}
			}
			js, se2, code := popmon(t, nil, "report", "--patterns", "--format", "json", out)
			if code != 0 {
				t.Fatalf("report --patterns: exit %d\n%s", code, se2)
			}
			var res patterns.Result
			if err := json.Unmarshal([]byte(js), &res); err != nil {
				t.Fatal(err)
			}
			total, r1 := patternsNS(t, &res, patterns.LateSender, 1)
			patternsNear(t, "Late Sender", total, 500*patternsMS)
			patternsNear(t, "Late Sender on rank 1", r1, 500*patternsMS)
			lr, _ := patternsNS(t, &res, patterns.LateReceiver, 0)
			patternsNear(t, "Late Receiver", lr, 0)
			noLeftovers(t, c)
		})
	}
}
