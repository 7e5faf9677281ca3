package cli

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/liveapi"
	"github.com/popmon/popmon/internal/outfile"
	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/session"
	"github.com/popmon/popmon/internal/units"
)

// DefaultServeAddr is where popmon serve listens by default (loopback: the
// metrics name the job's command and hosts).
const DefaultServeAddr = "127.0.0.1:9464"

// liveOutput is what a job's live view is published to: an HTTP address,
// a node_exporter textfile folder (popmon run and popmon serve).
type liveOutput struct {
	addr, addrFile, textfile string
	perRank                  bool
	window                   time.Duration
}

// register adds the options; run names the address option --serve (off
// by default), serve --addr.
func (o *liveOutput) register(fs *flag.FlagSet, run bool) {
	if run {
		fs.StringVar(&o.addr, "serve", "", "serve the job's live metrics over HTTP on `ADDR` (host:port; 127.0.0.1:0 picks a port): /metrics and /api/v1/")
		fs.StringVar(&o.addrFile, "serve-addr-file", "", "write the address --serve bound to `FILE`")
	} else {
		fs.StringVar(&o.addr, "addr", DefaultServeAddr, "listen on `ADDR` (host:port; port 0 picks one)")
		fs.StringVar(&o.addrFile, "addr-file", "", "write the address bound to `FILE`")
	}
	fs.StringVar(&o.textfile, "prom-textfile", "", "write the metrics every interval to `DIR`/popmon_SESSION.prom (node_exporter textfile collector)")
	fs.BoolVar(&o.perRank, "metrics-per-rank", false, "export the time accounts per rank instead of per node (many series on large jobs)")
	fs.DurationVar(&o.window, "metrics-window", 60*time.Second, "the window of the _ratio gauges besides the run (at most 10m)")
}

func (o *liveOutput) active() bool { return o.addr != "" || o.textfile != "" }

// check validates the options before the job starts.
func (o *liveOutput) check() error {
	if o.window <= 0 || o.window > 10*time.Minute {
		return fault.Usagef("--metrics-window %v: between 1s and 10m", o.window)
	}
	if o.textfile != "" {
		if fi, err := os.Stat(o.textfile); err != nil || !fi.IsDir() {
			return fault.Usagef("--prom-textfile %s: not a folder", o.textfile)
		}
	}
	if o.addrFile != "" && o.addr == "" {
		return fault.Usagef("--serve-addr-file needs --serve ADDR")
	}
	return nil
}

// start starts the live view of the job of info, read by src every
// interval: the HTTP server and the textfile.
func (o *liveOutput) start(env *Env, src func() []*live.Snapshot, every time.Duration, info session.Info) (*liveapi.Service, error) {
	svc := liveapi.NewService(liveapi.Config{
		Source: src, Every: every,
		Job:     live.Job{Command: info.Command, Launcher: info.Launcher, MPILibrary: info.MPILibrary},
		Info:    liveapi.Info{Session: live.SessionName(info.LiveDir), SlurmJobID: os.Getenv("SLURM_JOB_ID"), Command: info.Command, MPILibrary: info.MPILibrary, Version: Version},
		Windows: []time.Duration{o.window}, PerRank: o.perRank, Textfile: o.textfile,
	})
	if o.addr != "" {
		a, err := svc.Listen(o.addr)
		if err != nil {
			return nil, fault.Envf("%v", err)
		}
		if host, _, err := net.SplitHostPort(a.String()); err == nil {
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				fmt.Fprintf(env.Stderr, "popmon: serving on %s: whoever reaches this address reads the job's metrics, command line and host names (bind 127.0.0.1 unless that is meant)\n", a)
			}
		}
		if o.addrFile != "" {
			if err := outfile.WriteAtomic(o.addrFile, []byte(a.String()+"\n")); err != nil {
				svc.Close()
				return nil, fault.Envf("--serve-addr-file: %v", err)
			}
		}
	}
	svc.Start(func(err error) { fmt.Fprintf(env.Stderr, "popmon: %v\n", err) })
	return svc, nil
}

const serveHelp = `Serves the efficiencies of a job that popmon run is measuring, from the
processes' live files on this node: Prometheus metrics on /metrics and a JSON
API on /api/v1/job, /api/v1/regions?window=run|10s|60s,
/api/v1/ranks?region=R&window=W and /api/v1/series?region=R
(docs/live-metrics.md). SESSION is as for popmon top. It listens on
127.0.0.1 unless --addr names another address, and ends on Ctrl-C, or --linger
after every process of the job ended (one last scrape of the final values).
popmon run --serve ADDR does the same from within popmon run.`

// serveCmd is popmon serve [--addr A] [SESSION].
func serveCmd(env *Env, args []string) error {
	fs := newFlags("serve", "[--addr 127.0.0.1:9464] [--interval 1s] [--prom-textfile DIR] [SESSION_FOLDER]", serveHelp, env.Stderr)
	var o liveOutput
	o.register(fs, false)
	every := fs.Duration("interval", time.Second, "time between reads of the live files (the shortest window)")
	linger := fs.Duration("linger", 15*time.Second, "keep serving this long after every process ended")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return fault.Usagef("serve takes at most one session folder")
	}
	if err := o.check(); err != nil {
		return err
	}
	if *every < 100*time.Millisecond {
		return fault.Usagef("--interval %v is too short: at least 100ms (a reader must not slow the job)", *every)
	}
	dir, info, err := session.FindLive(fs.Arg(0))
	if err != nil {
		return fault.Inputf("%v", err)
	}
	info.LiveDir = dir
	s := live.NewSampler(dir, *every)
	defer s.Close()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	svc, err := o.start(env, s.SampleLatest, *every, info)
	if err != nil {
		return err
	}
	defer svc.Close()
	var endedAt time.Time
	t := time.NewTicker(*every)
	defer t.Stop()
	for {
		select {
		case <-sigs:
			return nil
		case <-t.C:
		}
		v, err := svc.View()
		switch {
		case err == nil && len(v.Procs) > 0 && v.Count(live.ProcRunning) == 0:
			if endedAt.IsZero() {
				endedAt = time.Now()
			}
			if time.Since(endedAt) >= *linger {
				return nil
			}
		case err != nil:
			if _, serr := os.Stat(dir); serr != nil {
				return fault.Inputf("the live folder %s is gone: the job ended", dir)
			}
		}
	}
}

const queryHelp = `Prints the efficiencies of a job that popmon run is measuring, once: the
run so far (--window run, the default) or the last D (--window 60s: popmon
query then reads the live files now and D later, so it takes D). --format json
writes what /api/v1/regions of popmon serve answers: the keys of popmon
report --format json, with the window. SESSION is as for popmon top.`

// queryCmd is popmon query [SESSION] [--region R] [--window W] [--format F].
func queryCmd(env *Env, args []string) error {
	fs := newFlags("query", "[--region R] [--window run|60s] [--format text|json] [SESSION_FOLDER]", queryHelp, env.Stderr)
	region := fs.String("region", "", "only this region")
	window := fs.String("window", "run", "run (since MPI_Init) or a duration: the last D")
	format := fs.String("format", "text", "text or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return fault.Usagef("query takes at most one session folder")
	}
	if *format != "text" && *format != "json" {
		return fault.Usagef("--format %q: use text or json", *format)
	}
	d, err := live.ParseWindow(*window)
	if err != nil {
		return fault.Usagef("--window: %v", err)
	}
	dir, info, err := session.FindLive(fs.Arg(0))
	if err != nil {
		return fault.Inputf("%v", err)
	}
	s := live.NewSampler(dir, time.Second)
	defer s.Close()
	var windows []time.Duration
	if d > 0 {
		windows = []time.Duration{d}
	}
	svc := liveapi.NewService(liveapi.Config{Source: s.SampleLatest, Every: max(d, time.Second), Windows: windows,
		Job: live.Job{Command: info.Command, Launcher: info.Launcher, MPILibrary: info.MPILibrary}})
	v, err := svc.Tick()
	if err == nil && d > 0 {
		time.Sleep(d)
		v, err = svc.Tick()
	}
	if err != nil {
		return fault.Inputf("%s: %v", dir, err)
	}
	w, _ := v.Window(live.WindowName(d))
	if *region != "" {
		rr, ok := v.Run.Report.Region(*region)
		if !ok {
			return fault.Inputf("no region %q in the job: its regions are %q", *region, v.Run.Report.RegionNames())
		}
		*region = rr.Name
	}
	if *format == "json" {
		if err := liveapi.WriteRegions(env.Stdout, w, *region); err != nil {
			return fault.Failf("%v", err)
		}
		return nil
	}
	if w.Report == nil {
		fmt.Fprintf(env.Stdout, "No activity in the window %s yet.\n", w.Name)
		return nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Window: %s (%s) · %d running, %d finalized, %d ended\n", w.Name, units.FixedSeconds(w.SpanNS, 1),
		v.Count(live.ProcRunning), v.Count(live.ProcFinalized), v.Count(live.ProcEnded))
	if err := report.Render(&b, report.FormatText, w.Report, report.Options{Region: *region}); err != nil {
		return fault.Failf("%v", err)
	}
	_, err = env.Stdout.Write(b.Bytes())
	return err
}
