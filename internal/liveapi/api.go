package liveapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// JSON shapes of the API (docs/live-metrics.md); /api/v1/regions answers
// report.JSONFormat, the shape of popmon report --format json.
const (
	JobFormat    = "popmon-job"
	RanksFormat  = "popmon-ranks"
	SeriesFormat = "popmon-series"
	APIVersion   = 1
)

// Handler serves /metrics and the JSON API /api/v1/{job,regions,ranks,series}.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", s.metrics)
	mux.HandleFunc("/api/v1/job", s.job)
	mux.HandleFunc("/api/v1/regions", s.regions)
	mux.HandleFunc("/api/v1/ranks", s.ranks)
	mux.HandleFunc("/api/v1/series", s.series)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.Error(w, fmt.Sprintf("no such page %q: popmon serves /metrics and /api/v1/{job,regions,ranks,series}", r.URL.Path), http.StatusNotFound)
			return
		}
		fmt.Fprint(w, "popmon: /metrics (Prometheus), /api/v1/job, /api/v1/regions?window=run|10s|60s, /api/v1/ranks?region=R&window=W, /api/v1/series?region=R\n")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "popmon serves GET requests only", http.StatusMethodNotAllowed)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// latest returns the latest view, or writes 503.
func (s *Service) latest(w http.ResponseWriter) *live.View {
	v, err := s.View()
	if err != nil {
		http.Error(w, "popmon: no view of the job yet: "+err.Error(), http.StatusServiceUnavailable)
		return nil
	}
	return v
}

func (s *Service) metrics(w http.ResponseWriter, r *http.Request) {
	v := s.latest(w)
	if v == nil {
		return
	}
	var b bytes.Buffer
	if err := WriteMetrics(&b, v, s.cfg.Info, s.cfg.PerRank); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.Write(b.Bytes())
}

// Window returns the window named by a query parameter ("" or "run", or a
// duration up to the history kept) of the latest view: the HTTP status and
// a sentence when it cannot.
func (s *Service) Window(v *live.View, name string) (*live.WindowView, int, error) {
	d, err := live.ParseWindow(name)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	if w, ok := v.Window(live.WindowName(d)); ok {
		return w, 0, nil
	}
	if keep := s.hist.Keep(); d > keep {
		return nil, http.StatusBadRequest, fmt.Errorf("window %s is longer than the %s of history popmon keeps: ask for run or a window up to %s", live.WindowName(d), keep, live.WindowName(keep))
	}
	v2, err := s.hist.View(s.cfg.Job, d)
	if err != nil {
		return nil, http.StatusServiceUnavailable, err
	}
	return &v2.Windows[0], 0, nil
}

// checkRegion answers 404 for a region the run does not have; returns the
// region's name as the run spells it.
func checkRegion(w http.ResponseWriter, v *live.View, region string) (string, bool) {
	rr, ok := v.Run.Report.Region(region)
	if !ok {
		http.Error(w, fmt.Sprintf("no region %q in the job: its regions are %q", region, v.Run.Report.RegionNames()), http.StatusNotFound)
		return "", false
	}
	return rr.Name, true
}

// WriteRegions writes window w as popmon report --format json does, with
// the window's name and span; only region when not empty (no region at
// all when the window has no activity in it).
func WriteRegions(out io.Writer, w *live.WindowView, region string) error {
	rep := w.Report
	if rep == nil {
		rep = &pop.Report{Model: pop.ModelTALP, Run: pop.NewRun(w.M)}
	}
	if region != "" {
		one := &pop.Report{Model: rep.Model, Refused: rep.Refused, Run: rep.Run}
		if rr, ok := rep.Region(region); ok {
			one.Regions = []pop.RegionReport{*rr}
		}
		rep = one
	}
	return report.JSON(out, rep, report.Options{Window: w.Name, WindowNS: w.SpanNS})
}

// target resolves a request's view, region (checked against the run's;
// def when the request names none) and window; it answers the error
// itself when it cannot.
func (s *Service) target(w http.ResponseWriter, r *http.Request, def string) (*live.View, string, *live.WindowView, bool) {
	v := s.latest(w)
	if v == nil {
		return nil, "", nil, false
	}
	q := r.URL.Query()
	region := q.Get("region")
	if region == "" {
		region = def
	}
	if region != "" {
		var ok bool
		if region, ok = checkRegion(w, v, region); !ok {
			return nil, "", nil, false
		}
	}
	win, code, err := s.Window(v, q.Get("window"))
	if err != nil {
		http.Error(w, err.Error(), code)
		return nil, "", nil, false
	}
	return v, region, win, true
}

func (s *Service) regions(w http.ResponseWriter, r *http.Request) {
	_, region, win, ok := s.target(w, r, "")
	if !ok {
		return
	}
	var b bytes.Buffer
	if err := WriteRegions(&b, win, region); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSONBytes(w, b.Bytes())
}

// rankJSON is one process of /api/v1/ranks: the measurement file's keys
// of a region's process accounts (docs/measurement-format.md), with the
// process's host, pid and state.
type rankJSON struct {
	Hostname string `json:"hostname"`
	PID      int    `json:"pid"`
	State    string `json:"state"`
	measure.ProcessAccounts
}

// Ranks returns region's per-rank accounts of window win.
func Ranks(v *live.View, win *live.WindowView, region string) any {
	status := map[int]live.ProcStatus{}
	for _, p := range v.Procs {
		status[p.Rank] = p
	}
	ranks := []rankJSON{}
	for _, pa := range win.Ranks(region) {
		p := status[pa.Rank]
		ranks = append(ranks, rankJSON{Hostname: p.Host, PID: p.PID, State: p.State, ProcessAccounts: pa})
	}
	return struct {
		Format  string     `json:"format"`
		Version int        `json:"version"`
		Region  string     `json:"region"`
		Window  string     `json:"window"`
		WindowS float64    `json:"window_s"`
		Ranks   []rankJSON `json:"ranks"`
	}{RanksFormat, APIVersion, region, win.Name, float64(win.SpanNS) / 1e9, ranks}
}

func (s *Service) ranks(w http.ResponseWriter, r *http.Request) {
	if v, region, win, ok := s.target(w, r, "Global"); ok {
		writeJSON(w, Ranks(v, win, region))
	}
}

// metricsOf returns the measured metrics of region in rep, by id.
func metricsOf(rep *pop.Report, region string) map[string]float64 {
	out := map[string]float64{}
	if rr, ok := rep.Region(region); ok {
		for _, m := range rr.Metrics {
			if m.Measured() {
				out[m.ID] = m.Value
			}
		}
	}
	return out
}

func (s *Service) series(w http.ResponseWriter, r *http.Request) {
	_, region, _, ok := s.target(w, r, "Global")
	if !ok {
		return
	}
	v, ws, err := s.hist.Series(s.cfg.Job)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	type interval struct {
		StartS  float64            `json:"start_s"`
		SpanS   float64            `json:"span_s"`
		Metrics map[string]float64 `json:"metrics"`
	}
	out := struct {
		Format    string     `json:"format"`
		Version   int        `json:"version"`
		Region    string     `json:"region"`
		Model     string     `json:"model"`
		Intervals []interval `json:"intervals"`
	}{SeriesFormat, APIVersion, region, string(pop.ModelTALP), []interval{}}
	for _, x := range ws {
		out.Intervals = append(out.Intervals, interval{float64(x.StartNS-v.T0) / 1e9, float64(x.SpanNS) / 1e9, metricsOf(x.Report, region)})
	}
	writeJSON(w, out)
}

// Job returns the /api/v1/job object of v.
func (s *Service) Job(v *live.View) any {
	type proc struct {
		Rank     int     `json:"rank"`
		Hostname string  `json:"hostname"`
		PID      int     `json:"pid"`
		State    string  `json:"state"`
		AgeS     float64 `json:"snapshot_age_s"`
	}
	var procs []proc
	for _, p := range v.Procs {
		procs = append(procs, proc{p.Rank, p.Host, p.PID, p.State, float64(p.AgeNS) / 1e9})
	}
	windows := []string{"run"}
	for _, x := range v.Windows {
		windows = append(windows, x.Name)
	}
	res := v.Run.M.Resources
	return struct {
		Format     string   `json:"format"`
		Version    int      `json:"version"`
		Session    string   `json:"session"`
		SlurmJobID string   `json:"slurm_job_id,omitempty"`
		Command    []string `json:"command"`
		MPILibrary string   `json:"mpi_library,omitempty"`
		Popmon     string   `json:"popmon_version"`
		Processes  int      `json:"processes"`
		Nodes      int      `json:"nodes"`
		CPUs       int      `json:"cpus"`
		Running    int      `json:"running"`
		Finalized  int      `json:"finalized"`
		Ended      int      `json:"ended"`
		ElapsedS   float64  `json:"elapsed_s"`
		IntervalS  float64  `json:"interval_s"`
		HistoryS   float64  `json:"history_s"`
		Windows    []string `json:"windows"`
		Regions    []string `json:"regions"`
		Procs      []proc   `json:"procs"`
	}{JobFormat, APIVersion, s.cfg.Info.Session, s.cfg.Info.SlurmJobID, v.Run.M.Command, s.cfg.Info.MPILibrary, s.cfg.Info.Version,
		res.Processes, res.Nodes, v.CPUs(), v.Count(live.ProcRunning), v.Count(live.ProcFinalized), v.Count(live.ProcEnded),
		float64(v.Run.SpanNS) / 1e9, s.cfg.Every.Seconds(), s.hist.Keep().Seconds(), windows, v.Run.Report.RegionNames(), procs}
}

func (s *Service) job(w http.ResponseWriter, r *http.Request) {
	if v := s.latest(w); v != nil {
		writeJSON(w, s.Job(v))
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSONBytes(w, append(b, '\n'))
}

func writeJSONBytes(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}
