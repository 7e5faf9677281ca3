package paraver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/popmon/popmon/internal/trace"
)

// epochDir holds the EPOCH Extrae traces (a copy of shared/data/pypop).
const epochDir = "testdata"

// epochTrace returns the path of the EPOCH trace of p processes, skipping
// the test when the shared data is not there.
func epochTrace(t testing.TB, p int) string {
	t.Helper()
	path := filepath.Join(epochDir, fmt.Sprintf("epoch_%dproc.prv.gz", p))
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		t.Skipf("EPOCH traces not present at %s", epochDir)
	}
	return path
}

// TestReadTraceEPOCH checks the trace of the EPOCH runs against the
// counts of the research note (§2.1): calls per kind, messages, and that
// every communication record found its calls.
func TestReadTraceEPOCH(t *testing.T) {
	for _, tc := range []struct {
		p, comms, msgs int
	}{
		{1, 1, 576}, {2, 3, 1156}, {4, 5, 2556}, {8, 9, 5100}, {16, 17, 10556},
	} {
		t.Run(fmt.Sprint(tc.p), func(t *testing.T) {
			tr, err := ReadTrace(epochTrace(t, tc.p), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Ranks) != tc.p || len(tr.Comms) != tc.comms || len(tr.Messages) != tc.msgs {
				t.Fatalf("ranks %d comms %d messages %d, want %d %d %d (notes %q)", len(tr.Ranks), len(tr.Comms), len(tr.Messages), tc.p, tc.comms, tc.msgs, tr.Notes)
			}
			if len(tr.Notes) != 0 {
				t.Errorf("notes %q, want none", tr.Notes)
			}
			if len(tr.Comms[0].Members) != tc.p {
				t.Errorf("world has %d members", len(tr.Comms[0].Members))
			}
			kinds := map[string]int{}
			for _, r := range tr.Ranks {
				for i, c := range r.Calls {
					kinds[c.Name]++
					if c.Leave < c.Enter || i > 0 && c.Enter < r.Calls[i-1].Leave {
						t.Fatalf("call %d %+v out of order", i, c)
					}
					if c.Kind == trace.KindCollective && c.Comm != 0 {
						t.Fatalf("collective %+v not on the world", c)
					}
				}
				if r.End < r.Calls[len(r.Calls)-1].Leave {
					t.Errorf("rank end %d before its last call", r.End)
				}
			}
			if kinds["MPI_Init"] != tc.p || kinds["MPI_Finalize"] != tc.p {
				t.Errorf("calls %v: want one MPI_Init and MPI_Finalize per rank", kinds)
			}
			for _, m := range tr.Messages {
				s := tr.Ranks[m.Src].Calls[m.SendCall]
				r := tr.Ranks[m.Dst].Calls[m.RecvPost]
				if s.Enter != m.LogSend || r.Enter != m.LogRecv || tr.Ranks[m.Dst].Calls[m.RecvDone].Leave != m.PhysRecv {
					t.Fatalf("message %+v attached to %+v and %+v", m, s, r)
				}
			}
		})
	}
}
