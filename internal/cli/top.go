package cli

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/liveapi"
	"github.com/popmon/popmon/internal/session"
	"github.com/popmon/popmon/internal/term"
)

const topHelp = `Shows the efficiencies of a job that popmon run is measuring, from the
processes' live files on this node: for every region, the POP metrics of the
run so far and of a window (the last interval by default), a sparkline of the
parallel efficiency, and the MPI calls that take the most time. SESSION is
the .popmon-session-* folder popmon run made next to its output (or the live
folder it names); without one, the newest live folder of yours in /dev/shm.
--once prints one frame (after one interval) as plain text and exits, for
scripts; otherwise a frame every interval until q, Ctrl-C or the job's end.
On a terminal, keys switch the panel below the regions: r the ranks (useful,
MPI and OpenMP shares of the slowest and fastest ranks, quantiles when there
are many), n the nodes, c the top MPI calls; w cycles the window of the right
columns and panels (last interval, 60 s, run); q quits. Colours follow POP's
bands (green from 0.8, yellow from 0.6, red below) unless NO_COLOR is set.`

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
		return fault.Usagef("top takes at most one session folder")
	}
	if *every < 100*time.Millisecond {
		return fault.Usagef("--interval %v is too short: at least 100ms (a reader must not slow the job)", *every)
	}
	dir, info, err := session.FindLive(fs.Arg(0))
	if err != nil {
		return fault.Inputf("%v", err)
	}
	s := live.NewSampler(dir, *every)
	defer s.Close()
	svc := liveapi.NewService(liveapi.Config{Source: s.SampleLatest, Every: *every, Windows: []time.Duration{*every, 60 * time.Second},
		Job: live.Job{Command: info.Command, Launcher: info.Launcher, MPILibrary: info.MPILibrary}})
	tty := term.IsTerminal(env.Stdout)
	keys := make(chan byte, 8)
	interactive := false
	if tty && !*once {
		if in, ok := env.Stdin.(*os.File); ok && term.IsTerminal(in) {
			if restore, err := term.RawMode(int(in.Fd())); err == nil {
				defer restore()
				interactive = true
				go term.ReadKeys(in, keys)
			}
		}
	}
	st := liveapi.NewTop(*every, tty && !*once && os.Getenv("NO_COLOR") == "", interactive)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// The first sample starts the history (an error then is one of the
	// next ticks too, reported there).
	svc.Tick()
	tick := time.NewTicker(*every)
	defer tick.Stop()
	var v *live.View
	for {
		redraw := false
		select {
		case sig := <-sigs:
			ss, _ := sig.(syscall.Signal)
			return fault.JobEnded(0, ss)
		case k := <-keys:
			if quit := st.Key(k); quit {
				return nil
			}
			redraw = v != nil
		case <-tick.C:
			nv, err := svc.Tick()
			if err != nil {
				return fault.Inputf("%v", err)
			}
			v = nv
			st.Record(v)
			redraw = true
		}
		if !redraw {
			continue
		}
		var b strings.Builder
		st.Render(&b, v)
		if tty && !*once {
			fmt.Fprint(env.Stdout, "\x1b[H\x1b[2J")
		}
		fmt.Fprint(env.Stdout, b.String())
		if *once || v.Count(live.ProcRunning) == 0 {
			return nil
		}
	}
}
