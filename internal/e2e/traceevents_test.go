package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/trace"
)

// TestTraceRegionAndOpenMPSpans: the region and OpenMP events reach the
// trace through the observers mpi/trace.c registers with regions.c and
// ompt.c (no call from the event sources into the trace). examples/
// hybrid_phases (2 ranks, 2 threads, one repetition) opens region phase1
// around one parallel region and phase2 around another: each rank's trace
// holds exactly the two region spans, by name, and two OpenMP spans on the
// primary thread, each inside its region and named by its construct.
func TestTraceRegionAndOpenMPSpans(t *testing.T) {
	for _, impl := range impls(t) {
		dir := examples(t, impl)
		cc := compilers(t, dir, "hybrid_phases")[0]
		t.Run(impl.name+"/"+cc, func(t *testing.T) {
			r := measureRunWith(t, impl, runOpts{env: []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive"},
				flags: []string{"--trace"}}, 2, "hybrid_phases."+cc, "20", "1")
			if r.m.Trace == nil {
				t.Fatalf("no trace object\nstderr:\n%s", r.stderr)
			}
			tr, err := trace.ReadDir(filepath.Join(filepath.Dir(r.file), r.m.Trace.Dir))
			if err != nil {
				t.Fatalf("reading the trace: %v", err)
			}
			if len(tr.Ranks) != 2 {
				t.Fatalf("%d ranks, want 2", len(tr.Ranks))
			}
			for rank, rk := range tr.Ranks {
				regions := map[string]trace.Span{}
				var omp []trace.Span
				for _, s := range rk.Spans {
					switch s.Kind {
					case "region":
						if _, dup := regions[s.Name]; dup {
							t.Errorf("rank %d: region %q twice", rank, s.Name)
						}
						regions[s.Name] = s
					case "omp":
						omp = append(omp, s)
					}
				}
				if len(regions) != 2 || regions["phase1"].Name == "" || regions["phase2"].Name == "" {
					t.Fatalf("rank %d: region spans %v, want phase1 and phase2", rank, regions)
				}
				if len(omp) != 2 {
					t.Fatalf("rank %d: %d OpenMP spans (%v), want 2", rank, len(omp), omp)
				}
				for i, name := range []string{"phase1", "phase2"} {
					reg, o := regions[name], omp[i]
					if o.Enter < reg.Enter || o.Leave > reg.Leave || o.Leave <= o.Enter {
						t.Errorf("rank %d: OpenMP span %+v not inside region %+v", rank, o, reg)
					}
					if o.Thread != 0 || !strings.Contains(o.Name, "+0x") {
						t.Errorf("rank %d: OpenMP span %+v: want the primary thread and a construct module+0xaddress", rank, o)
					}
				}
			}
		})
	}
}
