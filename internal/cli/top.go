package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

const topHelp = `Shows the efficiencies of a job that popmon run is measuring, from the
processes' live files on this node: for every region, the POP metrics of the
run so far and of the last interval, a sparkline of the parallel efficiency,
and the MPI calls that take the most time. SESSION is the .popmon-session-*
folder popmon run made next to its output (or the live folder it names);
without one, the newest live folder of yours in /dev/shm. --once prints one
frame (after one interval) and exits, for scripts; otherwise a frame every
interval until Ctrl-C or the job's end.`

// topCmd is popmon top [--once] [--interval D] [SESSION].
func topCmd(env *Env, args []string) error {
	fs := newFlags("top", "[--once] [--interval 1s] [SESSION_FOLDER]", topHelp, env.Stderr)
	once := fs.Bool("once", false, "print one frame and exit")
	every := fs.Duration("interval", time.Second, "time between frames (and the window of the \"now\" columns)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return fail(ExitUsage, "top takes at most one session folder")
	}
	if *every < 100*time.Millisecond {
		return fail(ExitUsage, "--interval %v is too short: at least 100ms (a reader must not slow the job)", *every)
	}
	dir, info, err := findLive(fs.Arg(0))
	if err != nil {
		return fail(ExitInput, "%v", err)
	}
	s := live.NewSampler(dir, *every)
	defer s.Close()
	s.Sample()
	prev := s.Latest()
	var history []float64
	tty := isTerminal(env.Stdout)
	for {
		time.Sleep(*every)
		s.Sample()
		cur := s.Latest()
		f, err := topFrame(cur, prev, info)
		if err != nil {
			return fail(ExitInput, "%v", err)
		}
		history = append(history, f.nowPE)
		if len(history) > 60 {
			history = history[1:]
		}
		var b strings.Builder
		f.render(&b, history)
		if tty && !*once {
			fmt.Fprint(env.Stdout, "\x1b[H\x1b[2J")
		}
		fmt.Fprint(env.Stdout, b.String())
		if *once || f.running == 0 {
			return nil
		}
		prev = cur
	}
}

// findLive returns the live folder of arg (a session folder, or a live
// folder), or the newest live folder of the user's.
func findLive(arg string) (string, liveInfo, error) {
	var info liveInfo
	if arg != "" {
		if b, err := os.ReadFile(filepath.Join(arg, liveInfoName)); err == nil {
			if err := json.Unmarshal(b, &info); err != nil || info.LiveDir == "" {
				return "", info, fmt.Errorf("%s: unreadable %s", arg, liveInfoName)
			}
			return info.LiveDir, info, nil
		}
		if m, _ := filepath.Glob(filepath.Join(arg, "*.live")); len(m) > 0 {
			return arg, info, nil
		}
		return "", info, fmt.Errorf("%s is neither a popmon run session folder nor a live folder", arg)
	}
	dirs, _ := filepath.Glob(filepath.Join(liveBase, "popmon-"+strconv.Itoa(os.Getuid()), "run-*"))
	best, bestT := "", time.Time{}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.ModTime().After(bestT) {
			best, bestT = d, fi.ModTime()
		}
	}
	if best == "" {
		return "", info, fmt.Errorf("no job measured by popmon run on this node (no live folder in %s): pass its session folder", liveBase)
	}
	return best, info, nil
}

// frame is one screen of popmon top.
type frame struct {
	command        string
	ranks, nodes   int
	running, ended int
	elapsedS       float64
	regions        []topRow
	calls          []measure.MPICall
	nowPE          float64
}

type topRow struct {
	name     string
	cum, now map[string]float64
}

var topMetrics = []struct{ id, head string }{
	{"parallel_efficiency", "PE"},
	{"mpi_communication_efficiency", "CommE"},
	{"mpi_load_balance", "LB"},
	{"omp_parallel_efficiency", "OMP PE"},
}

// topFrame computes the frame of the snapshots cur (and prev, one interval
// earlier, for the "now" columns).
func topFrame(cur, prev []*live.Snapshot, info liveInfo) (*frame, error) {
	var procs []live.Proc
	f := &frame{}
	for _, sn := range cur {
		if sn.InitTick == 0 {
			continue
		}
		procs = append(procs, live.Proc{Snap: sn, Final: sn, Cut: sn.Tick, ValidUntil: sn.Tick})
		if sn.State < live.Finalized && live.Alive(sn.PID, sn.StartTime) {
			f.running++
		} else {
			f.ended++
		}
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("no process of the job has passed MPI_Init yet")
	}
	m, err := live.Assemble(procs, live.Job{Command: info.Command, Launcher: info.Launcher, MPILibrary: info.MPILibrary}, nil)
	if err != nil {
		return nil, err
	}
	f.command = strings.Join(m.Command, " ")
	f.ranks, f.nodes = m.Resources.Processes, m.Resources.Nodes
	if g, ok := m.Global(); ok {
		for _, p := range g.Processes {
			f.elapsedS = max(f.elapsedS, float64(p.ElapsedNS)/1e9)
		}
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		return nil, err
	}
	now := live.Window(prev, cur)
	var nowRep *pop.Report
	if now != nil {
		c := *m
		c.Regions = now
		nowRep, _ = pop.Compute(&c, pop.ModelTALP)
	}
	for _, rr := range rep.Regions {
		row := topRow{name: rr.Name, cum: map[string]float64{}, now: map[string]float64{}}
		for _, mt := range topMetrics {
			if v, ok := rr.Value(mt.id); ok {
				row.cum[mt.id] = v
			}
		}
		if nowRep != nil {
			if nr, ok := nowRep.Region(rr.Name); ok {
				for _, mt := range topMetrics {
					if v, ok := nr.Value(mt.id); ok {
						row.now[mt.id] = v
					}
				}
			}
		}
		f.regions = append(f.regions, row)
	}
	if len(f.regions) > 0 {
		f.nowPE = f.regions[0].now["parallel_efficiency"]
	}
	f.calls = append([]measure.MPICall(nil), m.MPICalls...)
	sort.Slice(f.calls, func(i, j int) bool { return f.calls[i].TimeNS > f.calls[j].TimeNS })
	return f, nil
}

func (f *frame) render(w *strings.Builder, history []float64) {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "popmon top — %s\n", safetext.Text(f.command))
	fmt.Fprintf(b, "%d ranks on %d node(s) · %.1f s since MPI_Init · %d running, %d ended\n\n", f.ranks, f.nodes, f.elapsedS, f.running, f.ended)
	fmt.Fprintf(b, "%-24s", "Region (run so far | now)")
	for _, mt := range topMetrics {
		fmt.Fprintf(b, " %6s", mt.head)
	}
	fmt.Fprint(b, " |")
	for _, mt := range topMetrics {
		fmt.Fprintf(b, " %6s", mt.head)
	}
	fmt.Fprintln(b)
	cell := func(vals map[string]float64, id string) {
		if v, ok := vals[id]; ok {
			fmt.Fprintf(b, " %6.2f", v)
		} else {
			fmt.Fprintf(b, " %6s", "-")
		}
	}
	for _, r := range f.regions {
		name := []rune(safetext.Text(r.name))
		if len(name) > 24 {
			name = append(name[:23], '…')
		}
		fmt.Fprintf(b, "%-24s", string(name))
		for _, mt := range topMetrics {
			cell(r.cum, mt.id)
		}
		fmt.Fprint(b, " |")
		for _, mt := range topMetrics {
			cell(r.now, mt.id)
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintf(b, "\nGlobal PE, last %d intervals: %s\n", len(history), sparkline(history))
	if len(f.calls) > 0 {
		fmt.Fprintln(b, "\nTop MPI calls (run so far, all processes)")
		for i, c := range f.calls {
			if i == 5 {
				break
			}
			fmt.Fprintf(b, "  %-24s %10d calls %10.2f s\n", c.Name, c.Calls, float64(c.TimeNS)/1e9)
		}
	}
	b.Flush()
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
