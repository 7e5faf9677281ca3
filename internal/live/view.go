package live

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/popmon/popmon/internal/symbolize"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// The job view: what popmon top, popmon serve and popmon query show of a
// running job, computed from a short history of the sampler's snapshots.

// Process states of a view.
const (
	ProcRunning   = "running"   // alive and measuring
	ProcFinalized = "finalized" // passed MPI_Finalize
	ProcEnded     = "ended"     // gone without MPI_Finalize (killed, crashed, aborted)
)

// Sample is one read of every live file of a job.
type Sample struct {
	// At is CLOCK_MONOTONIC (ns) of the newest snapshot (when the data
	// is from), Taken when the sample was added.
	At, Taken int64
	// Snaps are the processes' snapshots, in rank order.
	Snaps []*Snapshot
	// Alive says, per snapshot, whether its process still existed.
	Alive []bool
}

// History keeps the samples of the last Keep (and one before, so that a
// window of Keep has a start), for windows longer than one interval.
type History struct {
	// cmu serializes the computations: they fill the snapshots' memo.
	cmu   sync.Mutex
	mu    sync.Mutex
	keep  int64
	s     []Sample
	alive map[int]uint64 // pid: the last tick it was seen alive at
}

// NewHistory returns a history that keeps samples for windows up to keep.
func NewHistory(keep time.Duration) *History {
	return &History{keep: int64(keep), alive: map[int]uint64{}}
}

// Keep is the longest window the history can give.
func (h *History) Keep() time.Duration { return time.Duration(h.keep) }

// Add records the snapshots read now (the sampler's Latest).
func (h *History) Add(snaps []*Snapshot) {
	now := MonotonicNS()
	s := Sample{At: now, Taken: now, Snaps: snaps, Alive: make([]bool, len(snaps))}
	if len(snaps) > 0 {
		s.At = 0
	}
	for i, sn := range snaps {
		s.Alive[i] = sn.State < Finalized && Alive(sn.PID, sn.StartTime)
		s.At = max(s.At, sn.NS)
	}
	h.AddSample(s)
}

// AddSample records s (its At after every earlier sample's).
func (h *History) AddSample(s Sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, sn := range s.Snaps {
		if i < len(s.Alive) && s.Alive[i] {
			h.alive[sn.PID] = sn.Tick
		}
	}
	h.s = append(h.s, s)
	for len(h.s) > 1 && h.s[1].At <= s.At-h.keep {
		h.s[0] = Sample{}
		h.s = h.s[1:]
	}
}

// Samples returns the kept samples, oldest first.
func (h *History) Samples() []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Sample(nil), h.s...)
}

// WindowView is a job's metrics over one window.
type WindowView struct {
	// Name is "run" (since MPI_Init) or the window's length ("10s").
	Name string
	// StartNS is CLOCK_MONOTONIC (ns) where the window starts (0 for the
	// run).
	StartNS int64
	// SpanNS is how long the window actually covers: shorter than its
	// name while the history is young; 0 without two samples.
	SpanNS int64
	// M holds the window's accounts (the run's processes and resources;
	// the regions' and MPI calls' accounts of the window).
	M *measure.Measurement
	// Report is M's metrics in model talp; nil when the window is empty.
	Report *pop.Report
}

// ProcStatus is one process of a view.
type ProcStatus struct {
	Rank  int
	Host  string
	PID   int
	State string // ProcRunning, ProcFinalized or ProcEnded
	// CPUs is the CPUs it holds now ([Snapshot.CPUs]).
	CPUs int
	// AgeNS is how old its snapshot is.
	AgeNS int64
}

// View is a running job's metrics at one moment.
type View struct {
	// At is CLOCK_MONOTONIC (ns) of the newest sample; T0 the job's
	// earliest MPI_Init.
	At, T0 int64
	// Procs lists the MPI processes, in rank order.
	Procs []ProcStatus
	// Run is the run so far; Windows the other windows asked for.
	Run     WindowView
	Windows []WindowView
	// NodeCalls is the MPI call profile of the run so far per node.
	NodeCalls map[string][]measure.MPICall
}

// Count returns how many processes are in state st.
func (v *View) Count(st string) int {
	n := 0
	for _, p := range v.Procs {
		if p.State == st {
			n++
		}
	}
	return n
}

// CPUs returns the CPUs the processes hold now (DROM may have changed
// them; the accounts are set against their largest teams, M's).
func (v *View) CPUs() int {
	n := 0
	for _, p := range v.Procs {
		n += p.CPUs
	}
	return n
}

// Window returns the window called name ("run" or one of Windows).
func (v *View) Window(name string) (*WindowView, bool) {
	if name == "run" || name == "" {
		return &v.Run, true
	}
	for i := range v.Windows {
		if v.Windows[i].Name == name {
			return &v.Windows[i], true
		}
	}
	return nil, false
}

// ParseWindow reads a window: "run" (0) or a duration ("10s", "1m", or
// plain seconds "60").
func ParseWindow(s string) (time.Duration, error) {
	if s == "" || s == "run" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		n, err2 := strconv.ParseFloat(s, 64)
		if err2 != nil {
			return 0, fmt.Errorf("window %q: use run or a duration such as 10s or 60s", s)
		}
		d = time.Duration(n * float64(time.Second))
	}
	if d <= 0 {
		return 0, fmt.Errorf("window %q: must be positive", s)
	}
	return d, nil
}

// WindowName names a window: "run" for 0, else its seconds ("60s", "0.5s").
func WindowName(d time.Duration) string {
	if d <= 0 {
		return "run"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// View computes the job's metrics from the newest sample: the run so far
// and each window (the accounts between the newest sample and the one
// closest to that much older; see windowOf). A process gone
// without MPI_Finalize is cut at the last moment it was seen alive.
func (h *History) View(job Job, windows ...time.Duration) (*View, error) {
	h.cmu.Lock()
	defer h.cmu.Unlock()
	return h.view(job, windows)
}

func (h *History) view(job Job, windows []time.Duration) (*View, error) {
	h.mu.Lock()
	samples := append([]Sample(nil), h.s...)
	lastAlive := make(map[int]uint64, len(h.alive))
	for k, v := range h.alive {
		lastAlive[k] = v
	}
	h.mu.Unlock()
	if len(samples) == 0 {
		return nil, fmt.Errorf("no sample of the job's live files yet")
	}
	cur := samples[len(samples)-1]
	v := &View{At: cur.At, NodeCalls: map[string][]measure.MPICall{}}
	var procs []Proc
	byHost := map[string][]*Snapshot{}
	newest := newestJob(cur.Snaps)
	for i, sn := range cur.Snaps {
		if !newest[sn] {
			continue // not an MPI process (yet), or of an earlier job
		}
		ps := ProcStatus{Rank: sn.Rank, Host: sn.Host, PID: sn.PID, CPUs: sn.CPUs, AgeNS: max(cur.Taken-sn.NS, 0), State: ProcEnded}
		cut := sn.Tick
		switch {
		case sn.State == Finalized:
			ps.State = ProcFinalized
		case i < len(cur.Alive) && cur.Alive[i]:
			ps.State = ProcRunning
		default:
			cut = sn.LastTransition()
			if t, ok := lastAlive[sn.PID]; ok && delta(cut, t) > 0 {
				cut = t
			}
		}
		v.Procs = append(v.Procs, ps)
		procs = append(procs, Proc{Snap: sn, Final: sn, Cut: cut, ValidUntil: cut})
		if ns := sn.NSAt(sn.InitTick); v.T0 == 0 || ns < v.T0 {
			v.T0 = ns
		}
		byHost[sn.Host] = append(byHost[sn.Host], sn)
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("no process of the job has passed MPI_Init yet")
	}
	m, err := Assemble(procs, job, nil)
	if err != nil {
		return nil, err
	}
	// Once per view, in the process's one cached symbolizer: the windows
	// share these regions, and every request renders them as they are.
	symbolize.OMPRegions(m)
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		return nil, err
	}
	v.Run = WindowView{Name: "run", SpanNS: runSpan(m), M: m, Report: rep}
	for host, ss := range byHost {
		v.NodeCalls[host] = CallProfile(ss)
	}
	for _, d := range windows {
		v.Windows = append(v.Windows, windowOf(m, rep, samples, d))
	}
	return v, nil
}

// newestJob returns the MPI processes of the newest job among snaps (a
// job script runs several one after the other, in one live folder): of
// the size of the process that passed MPI_Init last, per rank the one
// that passed it last.
func newestJob(snaps []*Snapshot) map[*Snapshot]bool {
	var last *Snapshot
	byRank := map[int]*Snapshot{}
	for _, sn := range snaps {
		if sn.InitTick == 0 {
			continue
		}
		init := sn.NSAt(sn.InitTick)
		if last == nil || init > last.NSAt(last.InitTick) {
			last = sn
		}
		if b := byRank[sn.Rank]; b == nil || init > b.NSAt(b.InitTick) {
			byRank[sn.Rank] = sn
		}
	}
	out := map[*Snapshot]bool{}
	for _, sn := range byRank {
		if sn.Size == last.Size {
			out[sn] = true
		}
	}
	return out
}

// runSpan is the longest elapsed time of the run's Global region.
func runSpan(m *measure.Measurement) int64 {
	var t int64
	if g, ok := m.Global(); ok {
		for _, p := range g.Processes {
			t = max(t, p.ElapsedNS)
		}
	}
	return t
}

// windowOf computes window d of run m (report runRep) from the samples
// (the newest last): the run itself when it is not longer than d, else
// since the sample whose distance to the newest is closest to d, among
// those that hold every process of the newest.
func windowOf(m *measure.Measurement, runRep *pop.Report, samples []Sample, d time.Duration) WindowView {
	newest := samples[len(samples)-1]
	if runSpan(m) <= int64(d) {
		return WindowView{Name: WindowName(d), SpanNS: runSpan(m), M: m, Report: runRep}
	}
	start, off := -1, int64(math.MaxInt64)
	for i := len(samples) - 2; i >= 0 && covers(samples[i], newest); i-- {
		age := newest.At - samples[i].At
		if o := abs(age - int64(d)); o < off {
			start, off = i, o
		}
		if age >= int64(d) {
			break // older ones are further from d
		}
	}
	w := WindowView{Name: WindowName(d)}
	if start >= 0 {
		w = windowBetween(m, samples[start], newest)
		w.Name = WindowName(d)
	}
	return w
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// covers reports whether sample a holds every MPI process of b (the same
// pid and MPI_Init).
func covers(a, b Sample) bool {
	have := map[int]uint64{}
	for _, s := range a.Snaps {
		have[s.PID] = s.InitTick
	}
	for _, s := range b.Snaps {
		if s.InitTick != 0 && have[s.PID] != s.InitTick {
			return false
		}
	}
	return true
}

// windowBetween computes the accounts and metrics of run m between two
// samples.
func windowBetween(m *measure.Measurement, prev, cur Sample) WindowView {
	w := WindowView{StartNS: prev.At}
	c := *m
	c.Partial, c.Warnings, c.Series = nil, nil, nil
	c.Regions = Window(prev.Snaps, cur.Snaps)
	if len(c.Regions) == 0 {
		return w
	}
	c.MPICalls = diffCalls(CallProfile(mpiOnly(prev.Snaps)), CallProfile(mpiOnly(cur.Snaps)))
	rep, err := pop.Compute(&c, pop.ModelTALP)
	if err != nil {
		return w
	}
	w.SpanNS, w.M, w.Report = cur.At-prev.At, &c, rep
	return w
}

// mpiOnly returns the snapshots of processes that passed MPI_Init.
func mpiOnly(snaps []*Snapshot) []*Snapshot {
	var out []*Snapshot
	for _, s := range snaps {
		if s.InitTick != 0 {
			out = append(out, s)
		}
	}
	return out
}

// Series returns the view of the newest sample and the metrics of every
// interval between consecutive kept samples, oldest first.
func (h *History) Series(job Job) (*View, []WindowView, error) {
	h.cmu.Lock()
	defer h.cmu.Unlock()
	v, err := h.view(job, nil)
	if err != nil {
		return nil, nil, err
	}
	samples := h.Samples()
	var out []WindowView
	for i := 1; i < len(samples); i++ {
		w := windowBetween(v.Run.M, samples[i-1], samples[i])
		if w.Report != nil {
			out = append(out, w)
		}
	}
	return v, out, nil
}

// diffCalls returns the calls and time of b minus a, per function (the
// least and most time of a process are those of b: not differences).
func diffCalls(a, b []measure.MPICall) []measure.MPICall {
	before := map[string]measure.MPICall{}
	for _, c := range a {
		before[c.Name] = c
	}
	var out []measure.MPICall
	for _, c := range b {
		p := before[c.Name]
		c.Calls, c.TimeNS = max(c.Calls-p.Calls, 0), max(c.TimeNS-p.TimeNS, 0)
		if c.Calls > 0 {
			out = append(out, c)
		}
	}
	return out
}

// TopCalls returns the n MPI functions of calls that took the most time.
func TopCalls(calls []measure.MPICall, n int) []measure.MPICall {
	out := append([]measure.MPICall(nil), calls...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].TimeNS > out[j].TimeNS })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// NodeAccounts is the sum of the accounts of one node's processes in a
// region.
type NodeAccounts struct {
	Host  string
	Ranks []int
	measure.ProcessAccounts
}

// Nodes returns region's accounts per node of w (hosts in first-rank
// order); the sums' Rank is the node's first rank.
func (w *WindowView) Nodes(region string) []NodeAccounts {
	if w.M == nil {
		return nil
	}
	host := map[int]string{}
	for _, p := range w.M.Processes {
		host[p.Rank] = p.Hostname
	}
	var out []NodeAccounts
	at := map[string]int{}
	for _, pa := range w.Ranks(region) {
		h := host[pa.Rank]
		i, ok := at[h]
		if !ok {
			i = len(out)
			at[h] = i
			out = append(out, NodeAccounts{Host: h, ProcessAccounts: measure.ProcessAccounts{Rank: pa.Rank}})
		}
		n := &out[i]
		n.Ranks = append(n.Ranks, pa.Rank)
		addAccounts(&n.ProcessAccounts, pa)
	}
	return out
}

// Ranks returns region's per-process accounts of w, in rank order (nil for
// an unknown region or an empty window).
func (w *WindowView) Ranks(region string) []measure.ProcessAccounts {
	if w.M == nil {
		return nil
	}
	i := measure.NameIndex(len(w.M.Regions), func(i int) string { return w.M.Regions[i].Name }, region)
	if i < 0 {
		return nil
	}
	out := append([]measure.ProcessAccounts(nil), w.M.Regions[i].Processes...)
	sort.Slice(out, func(a, b int) bool { return out[a].Rank < out[b].Rank })
	return out
}

// addAccounts adds b's times and counts to a.
func addAccounts(a *measure.ProcessAccounts, b measure.ProcessAccounts) {
	a.CPUs += b.CPUs
	a.Visits += b.Visits
	a.ElapsedNS += b.ElapsedNS
	a.UsefulNS += b.UsefulNS
	a.MPINS += b.MPINS
	a.MPIWorkerIdleNS += b.MPIWorkerIdleNS
	a.OMPSerializationNS += b.OMPSerializationNS
	a.OMPLoadImbalanceNS += b.OMPLoadImbalanceNS
	a.OMPSchedulingNS += b.OMPSchedulingNS
	a.GPURuntimeNS += b.GPURuntimeNS
	a.OtherNS += b.OtherNS
	a.MPICalls += b.MPICalls
	a.OMPParallels += b.OMPParallels
	a.OMPTasks += b.OMPTasks
	a.GPURuntimeCalls += b.GPURuntimeCalls
	a.Cycles += b.Cycles
	a.Instructions += b.Instructions
}

// SessionName is a short id of the job whose live files are in dir (the
// folder's name), for labels and file names: letters, digits, '-', '_'
// and '.' only.
func SessionName(dir string) string {
	base := dir
	if i := strings.LastIndexByte(strings.TrimRight(dir, "/"), '/'); i >= 0 {
		base = strings.TrimRight(dir, "/")[i+1:]
	}
	b := []byte(base)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "job"
	}
	return string(b)
}
