package liveapi

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/measure"
)

// popmon top's frames of the running job's view (internal/cli's top.go
// samples and reads the keys).

// topWindows are the windows w cycles through: 0 stands for the interval.
var topWindows = []time.Duration{0, 60 * time.Second, -1}

// Top is popmon top's screen: what its keys change, and its frames.
type Top = topState

// NewTop is the screen of popmon top sampling every every; colour draws
// the bars in colour, interactive says the keys in the frame.
func NewTop(every time.Duration, colour, interactive bool) *Top {
	return &topState{every: every, colour: colour, interactive: interactive}
}

// Record adds the run's parallel efficiency in v's window of the sampling
// interval to the history drawn as a sparkline (the last 60).
func (st *topState) Record(v *live.View) {
	if w, ok := v.Window(live.WindowName(st.every)); ok && w.Report != nil {
		if g, ok := w.Report.Region("Global"); ok {
			pe, _ := g.Value("parallel_efficiency")
			st.history = append(st.history, pe)
			if len(st.history) > 60 {
				st.history = st.history[1:]
			}
		}
	}
}

// topState is what the keys of popmon top change.
type topState struct {
	every       time.Duration
	win         int  // index of topWindows
	panel       byte // 'c' calls, 'r' ranks, 'n' nodes
	colour      bool
	interactive bool
	history     []float64
}

// Key applies key k; true to quit.
func (st *topState) Key(k byte) bool {
	switch k {
	case 'q', 'Q':
		return true
	case 'r', 'n', 'c':
		st.panel = k
	case 'w':
		st.win = (st.win + 1) % len(topWindows)
	}
	return false
}

// window returns the selected window of v and its title.
func (st *topState) window(v *live.View) (*live.WindowView, string) {
	d := topWindows[st.win]
	switch {
	case d < 0:
		return &v.Run, "run so far"
	case d == 0:
		d = st.every
	}
	w, ok := v.Window(live.WindowName(d))
	if !ok {
		return &live.WindowView{Name: live.WindowName(d)}, "last " + live.WindowName(d)
	}
	return w, "last " + w.Name
}

var topMetrics = []struct{ id, head string }{
	{"parallel_efficiency", "PE"},
	{"mpi_communication_efficiency", "CommE"},
	{"mpi_load_balance", "LB"},
	{"omp_parallel_efficiency", "OMP PE"},
}

// Render writes one frame of v.
func (st *topState) Render(w *strings.Builder, v *live.View) {
	b := bufio.NewWriter(w)
	defer b.Flush()
	run := &v.Run
	win, title := st.window(v)
	cmd := strings.Join(run.M.Command, " ")
	fmt.Fprintf(b, "popmon top — %s\n", safetext.Text(cmd))
	fmt.Fprintf(b, "%d ranks on %d node(s) · %.1f s since MPI_Init · %d running, %d ended · window: %s\n",
		run.M.Resources.Processes, run.M.Resources.Nodes, float64(run.SpanNS)/1e9, v.Count(live.ProcRunning),
		v.Count(live.ProcFinalized)+v.Count(live.ProcEnded), title)
	if st.interactive {
		fmt.Fprintln(b, "keys: r ranks · n nodes · c MPI calls · w window · q quit")
	}
	fmt.Fprintln(b)
	fmt.Fprintf(b, "%-26s", "Region (run so far | "+strings.TrimPrefix(title, "last ")+")")
	for i := range 2 {
		if i == 1 {
			fmt.Fprint(b, " |")
		}
		for _, mt := range topMetrics {
			fmt.Fprintf(b, " %6s", mt.head)
		}
	}
	fmt.Fprintln(b)
	cell := func(rep *live.WindowView, region, id string) {
		if rep.Report != nil {
			if rr, ok := rep.Report.Region(region); ok {
				if x, ok := rr.Value(id); ok {
					if st.colour {
						fmt.Fprintf(b, " %s%6.2f%s", report.Colour(x), x, report.ColourReset)
					} else {
						fmt.Fprintf(b, " %6.2f", x)
					}
					return
				}
			}
		}
		fmt.Fprintf(b, " %6s", "-")
	}
	for _, rr := range run.Report.Regions {
		name := []rune(safetext.Text(rr.Name))
		if len(name) > 26 {
			name = append(name[:25], '…')
		}
		fmt.Fprintf(b, "%-26s", string(name))
		for _, mt := range topMetrics {
			cell(run, rr.Name, mt.id)
		}
		fmt.Fprint(b, " |")
		for _, mt := range topMetrics {
			cell(win, rr.Name, mt.id)
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintf(b, "\nGlobal PE, last %d intervals: %s\n\n", len(st.history), sparkline(st.history))
	switch st.panel {
	case 'r':
		st.ranksPanel(b, win, title)
	case 'n':
		st.nodesPanel(b, win, title)
	default:
		calls := run.M.MPICalls
		if win.M != nil {
			calls = win.M.MPICalls
		} else {
			title = "run so far"
		}
		if len(calls) > 0 {
			fmt.Fprintf(b, "Top MPI calls (%s, all processes)\n", title)
			for _, c := range live.TopCalls(calls, 5) {
				fmt.Fprintf(b, "  %-24s %10d calls %10.2f s\n", c.Name, c.Calls, float64(c.TimeNS)/1e9)
			}
		}
	}
}

// shares returns the useful, MPI and OpenMP (idle, imbalance, scheduling)
// shares of a's CPU time (elapsed × CPUs).
func shares(a measure.ProcessAccounts) (useful, mpi, omp float64) {
	return shareOf(a, float64(a.ElapsedNS)*float64(max(a.CPUs, 1)))
}

// shareOf returns a's useful, MPI and OpenMP times over den.
func shareOf(a measure.ProcessAccounts, den float64) (useful, mpi, omp float64) {
	if den <= 0 {
		return 0, 0, 0
	}
	o := a.OMPSerializationNS + a.OMPLoadImbalanceNS + a.OMPSchedulingNS + a.MPIWorkerIdleNS
	return float64(a.UsefulNS) / den, float64(a.MPINS) / den, float64(o) / den
}

// bar draws the three shares in width cells: useful █, MPI ▒, OpenMP ░.
func bar(useful, mpi, omp float64, width int) string {
	cells := func(x float64) int { return int(math.Round(min(max(x, 0), 1) * float64(width))) }
	u, m := cells(useful), cells(mpi)
	o := min(cells(omp), max(width-u-m, 0))
	m = min(m, max(width-u, 0))
	return strings.Repeat("█", u) + strings.Repeat("▒", m) + strings.Repeat("░", o) + strings.Repeat(" ", max(width-u-m-o, 0))
}

// shareRow writes one line of a rank or node panel: a's shares of den
// (CPU time).
func shareRow(b io.Writer, label string, a measure.ProcessAccounts, den float64) {
	u, m, o := shareOf(a, den)
	fmt.Fprintf(b, "  %-22s %6.1f%% %6.1f%% %6.1f%%  %s\n", label, 100*u, 100*m, 100*o, bar(u, m, o, 30))
}

// ranksPanel lists the ranks of the window's Global region: all of them
// up to 12, else the 5 slowest (most useful time) and 5 fastest with the
// quantiles of the useful share.
func (st *topState) ranksPanel(b io.Writer, win *live.WindowView, title string) {
	ranks := win.Ranks("Global")
	fmt.Fprintf(b, "Ranks (Global, %s): share of CPU time; █ useful ▒ MPI ░ OpenMP\n", title)
	if len(ranks) == 0 {
		fmt.Fprintln(b, "  no activity in the window yet")
		return
	}
	fmt.Fprintf(b, "  %-22s %7s %7s %7s\n", "rank", "useful", "MPI", "OpenMP")
	host := map[int]string{}
	for _, p := range win.M.Processes {
		host[p.Rank] = p.Hostname
	}
	label := func(a measure.ProcessAccounts) string {
		return fmt.Sprintf("%d %s", a.Rank, safetext.Text(host[a.Rank]))
	}
	if len(ranks) <= 12 {
		for _, a := range ranks {
			shareRow(b, label(a), a, cpuTime(a))
		}
		return
	}
	byUseful := append([]measure.ProcessAccounts(nil), ranks...)
	sort.SliceStable(byUseful, func(i, j int) bool { u, _, _ := shares(byUseful[i]); v, _, _ := shares(byUseful[j]); return u > v })
	fmt.Fprintln(b, "  slowest (most useful time):")
	for _, a := range byUseful[:5] {
		shareRow(b, label(a), a, cpuTime(a))
	}
	fmt.Fprintln(b, "  fastest:")
	for _, a := range byUseful[len(byUseful)-5:] {
		shareRow(b, label(a), a, cpuTime(a))
	}
	us := make([]float64, len(ranks))
	for i, a := range ranks {
		us[i], _, _ = shares(a)
	}
	sort.Float64s(us)
	q := func(p float64) float64 { return us[int(math.Round(p*float64(len(us)-1)))] }
	fmt.Fprintf(b, "  useful share of %d ranks: min %.1f%% · p25 %.1f%% · median %.1f%% · p75 %.1f%% · max %.1f%%\n",
		len(us), 100*q(0), 100*q(0.25), 100*q(0.5), 100*q(0.75), 100*q(1))
	hist := make([]float64, 10)
	most := 0.0
	for _, u := range us {
		i := min(int(u*10), 9)
		hist[i]++
		most = max(most, hist[i])
	}
	for i := range hist {
		hist[i] /= most
	}
	fmt.Fprintf(b, "  histogram 0%%…100%%: %s\n", sparkline(hist))
}

// cpuTime is a's elapsed time × CPUs.
func cpuTime(a measure.ProcessAccounts) float64 {
	return float64(a.ElapsedNS) * float64(max(a.CPUs, 1))
}

// nodesPanel lists the nodes of the window's Global region: the sums of
// their ranks' accounts over the sum of their CPU times.
func (st *topState) nodesPanel(b io.Writer, win *live.WindowView, title string) {
	fmt.Fprintf(b, "Nodes (Global, %s): share of CPU time; █ useful ▒ MPI ░ OpenMP\n", title)
	nodes := win.Nodes("Global")
	if len(nodes) == 0 {
		fmt.Fprintln(b, "  no activity in the window yet")
		return
	}
	cpu := map[string]float64{}
	host := map[int]string{}
	for _, p := range win.M.Processes {
		host[p.Rank] = p.Hostname
	}
	for _, a := range win.Ranks("Global") {
		cpu[host[a.Rank]] += cpuTime(a)
	}
	fmt.Fprintf(b, "  %-22s %7s %7s %7s\n", "node (ranks)", "useful", "MPI", "OpenMP")
	for _, n := range nodes {
		shareRow(b, fmt.Sprintf("%s (%d)", safetext.Text(n.Host), len(n.Ranks)), n.ProcessAccounts, cpu[n.Host])
	}
}

// sparkline draws values in 0…1 with block characters.
func sparkline(v []float64) string {
	const blocks = "▁▂▃▄▅▆▇█"
	r := []rune(blocks)
	var b strings.Builder
	for _, x := range v {
		i := int(x*float64(len(r)-1) + 0.5)
		b.WriteRune(r[min(max(i, 0), len(r)-1)])
	}
	return b.String()
}
