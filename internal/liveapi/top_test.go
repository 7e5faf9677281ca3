package liveapi

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// topView is a view of measure/testdata/mpi_imbalance.json (rank r useful
// (r+1) s of 4 s) with its Global region copied to ranks up to n−1 (rank
// r useful (r mod 4 + 1) s); run and windows hold the same accounts.
func topView(t *testing.T, n int) *live.View {
	t.Helper()
	m, err := measure.ReadFile(filepath.Join("..", "..", "measure", "testdata", "mpi_imbalance.json"))
	if err != nil {
		t.Fatal(err)
	}
	g := &m.Regions[0]
	for r := 4; r < n; r++ {
		p := m.Processes[r%4]
		p.Rank, p.PID = r, 5000+r
		m.Processes = append(m.Processes, p)
		a := g.Processes[r%4]
		a.Rank = r
		g.Processes = append(g.Processes, a)
	}
	m.Resources.Processes, m.Resources.CPUs = n, n
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	v := &live.View{Run: live.WindowView{Name: "run", SpanNS: 4e9, M: m, Report: rep}}
	for _, name := range []string{"1s", "60s"} {
		v.Windows = append(v.Windows, live.WindowView{Name: name, SpanNS: 1e9, M: m, Report: rep})
	}
	for _, p := range m.Processes {
		v.Procs = append(v.Procs, live.ProcStatus{Rank: p.Rank, Host: p.Hostname, PID: p.PID, State: live.ProcRunning})
	}
	return v
}

func renderTop(st *topState, v *live.View) string {
	var b strings.Builder
	st.Render(&b, v)
	return b.String()
}

// TestTopPanels: the keys of popmon top and what each panel shows.
func TestTopPanels(t *testing.T) {
	v := topView(t, 4)
	st := &topState{every: time.Second}
	for _, c := range []struct {
		keys  string
		quit  bool
		wants []string
		not   []string
	}{
		{"", false, []string{"window: last 1s", "Region (run so far | 1s)", "Top MPI calls (last 1s", "MPI_Allreduce"}, []string{"Ranks (", "keys:"}},
		{"r", false, []string{
			"Ranks (Global, last 1s)",
			"  0 laptop                 25.0%   75.0%    0.0%  " + strings.Repeat("█", 8) + strings.Repeat("▒", 22) + "\n",
			"  3 laptop                100.0%    0.0%    0.0%  " + strings.Repeat("█", 30) + "\n",
		}, []string{"Top MPI calls"}},
		{"n", false, []string{"Nodes (Global, last 1s)", "  laptop (4)               62.5%   37.5%    0.0%  " + strings.Repeat("█", 19) + strings.Repeat("▒", 11) + "\n"}, nil},
		{"w", false, []string{"window: last 60s", "Nodes (Global, last 60s)"}, nil},
		{"w", false, []string{"window: run so far", "Nodes (Global, run so far)"}, nil},
		{"wc", false, []string{"window: last 1s", "Top MPI calls (last 1s"}, nil},
		{"x", false, []string{"window: last 1s"}, nil}, // other keys change nothing
		{"q", true, nil, nil},
	} {
		quit := false
		for _, k := range []byte(c.keys) {
			quit = st.Key(k)
		}
		if quit != c.quit {
			t.Errorf("keys %q: quit %v", c.keys, quit)
		}
		if quit {
			continue
		}
		out := renderTop(st, v)
		for _, w := range c.wants {
			if !strings.Contains(out, w) {
				t.Errorf("after %q, no %q in:\n%s", c.keys, w, out)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("after %q, %q in:\n%s", c.keys, w, out)
			}
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("colour without colour:\n%s", out)
		}
	}
}

// TestTopColourAndGlobalRow: the Global row's columns (what scripts and
// TestTop read) and colours by POP's bands.
func TestTopColourAndGlobalRow(t *testing.T) {
	v := topView(t, 4)
	out := renderTop(&topState{every: time.Second}, v)
	var global []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "Global" && global == nil {
			global = f
		}
	}
	// Global PE CommE LB OMP-PE | PE CommE LB OMP-PE: LB 0.625 both.
	if len(global) != 10 || global[3] != "0.62" || global[8] != "0.62" || global[4] != "-" {
		t.Errorf("Global row %q", global)
	}
	col := renderTop(&topState{every: time.Second, colour: true, interactive: true}, v)
	if !strings.Contains(col, "\x1b[33m  0.62\x1b[0m") || !strings.Contains(col, "\x1b[32m  1.00\x1b[0m") || !strings.Contains(col, "keys: r ranks") {
		t.Errorf("colours (0.62 yellow, 1.00 green) or keys line missing:\n%q", col)
	}
}

// TestTopManyRanks: beyond 12 ranks the panel shows the slowest and
// fastest five and the quantiles of the useful share.
func TestTopManyRanks(t *testing.T) {
	st := &topState{every: time.Second, panel: 'r'}
	out := renderTop(st, topView(t, 20))
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " laptop ") && strings.Contains(line, "%") {
			rows++
		}
	}
	// 20 ranks with useful shares 25, 50, 75, 100 % five times each.
	want := "useful share of 20 ranks: min 25.0% · p25 50.0% · median 75.0% · p75 75.0% · max 100.0%"
	if rows != 10 || !strings.Contains(out, "slowest") || !strings.Contains(out, "fastest") || !strings.Contains(out, want) {
		t.Errorf("%d rank rows, want 10 and %q:\n%s", rows, want, out)
	}
	// Five ranks in each of the histogram's bins 2, 5, 7 and 9 (of 10).
	if !strings.Contains(out, fmt.Sprintf("histogram 0%%…100%%: %s", "▁▁█▁▁█▁█▁█")) {
		t.Errorf("histogram:\n%s", out)
	}
}
