package live

import (
	"cmp"
	"slices"
	"sort"

	"github.com/popmon/popmon/measure"
)

// DefaultSeriesInterval is the interval of a run's time series.
const DefaultSeriesInterval = int64(1e9)

// The time series' memory budget. The series keeps, per process and
// interval end, the accounts of the regions that changed since the previous
// one: whatever the job's length, at most maxBoundaries intervals (past it
// the interval doubles: cumulative accounts merge exactly) and at most
// maxSeriesEntries accounts and interval ends over all processes. Past the
// latter the regions with the least elapsed time so far leave the series
// (never Global; a region that left does not come back) until
// minSeriesRegions remain, then the interval doubles. An account takes
// 168 bytes here and about 290 in the measurement file: the series holds
// at most about 45 MB here and adds at most about 80 MB to the file.
// docs/measurement-format.md says the same.
const (
	maxBoundaries    = 3600
	maxSeriesEntries = 1 << 18
	minSeriesRegions = 16
)

// The accounts of a region that the series keeps, in the process's ticks
// (counts for calls and counters): what accountsOf converts. The states
// are Accounts.T's but idle, in their order.
const (
	aElapsed = iota
	aUseful
	aMPI
	aMPIWorkerIdle
	aOMPSerialization
	aOMPLoadImbalance
	aOMPScheduling
	aGPURuntime
	aMPICalls
	aOMPParallels
	aOMPTasks
	aGPUCalls
	aParWall
	aParUseful
	aParSelfUseful
	aPrimUseful
	aPrimMPI
	aThrUsefulMax
	aCycles
	aInstructions
	nAcc
)

// The states keep their order (a compile-time check).
var _ = [1]int{}[aGPURuntime-aUseful-stGPURuntime]

type regAcc [nAcc]uint64

// accOf returns the accounts of closed region r.
func accOf(r *Region) regAcc {
	var a regAcc
	t := &r.Tot
	a[aElapsed] = r.Elapsed
	copy(a[aUseful:aGPURuntime+1], t.T[:stGPURuntime+1])
	a[aMPICalls], a[aOMPParallels], a[aOMPTasks], a[aGPUCalls] = t.MPICalls, t.OMPParallels, t.OMPTasks, t.GPUCalls
	a[aParWall], a[aParUseful], a[aParSelfUseful] = t.X[xParWall], t.X[xParUseful], t.X[xParSelfUseful]
	a[aPrimUseful], a[aPrimMPI], a[aThrUsefulMax] = t.PrimUseful, t.PrimMPI, t.ThrUsefulMax
	if len(t.Ctr) >= 2 {
		a[aCycles], a[aInstructions] = t.Ctr[ctrCycles], t.Ctr[ctrInstructions]
	}
	return a
}

// bound is one process's interval end: what changed since its previous
// one, and what converts its ticks to a region's accounts there.
type bound struct {
	k          int64   // the sampling instant
	ns         int64   // CLOCK_MONOTONIC when read
	perTick    float64 // the snapshot's nanoseconds per tick
	rank, cpus int
	ctr        bool // counters available
	changes    []change
}

// change is a region's accounts at an interval end, where they differ
// from the previous one's. A bound's changes are sorted by region id.
type change struct {
	id int32
	a  regAcc
}

// accounts converts a to a region's accounts at b, as accountsOf does.
func (b *bound) accounts(a *regAcc) measure.ProcessAccounts {
	ns := func(t uint64) int64 { return int64(float64(t)*b.perTick + 0.5) }
	serial := max(ns(a[aPrimUseful])-ns(a[aParSelfUseful]), 0)
	pa := measure.ProcessAccounts{
		Rank: b.rank, CPUs: b.cpus, ElapsedNS: ns(a[aElapsed]),
		UsefulNS: ns(a[aUseful]), MPINS: ns(a[aMPI]), MPIWorkerIdleNS: ns(a[aMPIWorkerIdle]),
		OMPSerializationNS: ns(a[aOMPSerialization]), OMPLoadImbalanceNS: ns(a[aOMPLoadImbalance]),
		OMPSchedulingNS: ns(a[aOMPScheduling]), GPURuntimeNS: ns(a[aGPURuntime]),
		MPICalls: int64(a[aMPICalls]), OMPParallels: int64(a[aOMPParallels]), OMPTasks: int64(a[aOMPTasks]),
		GPURuntimeCalls: int64(a[aGPUCalls]),
		PrimaryUsefulNS: ns(a[aPrimUseful]), PrimaryMPINS: ns(a[aPrimMPI]), PrimarySerialUsefulNS: serial,
		PrimaryParallelNS: ns(a[aParWall]), ParallelUsefulNS: ns(a[aParUseful]),
		ThreadUsefulMaxNS: ns(a[aThrUsefulMax]),
	}
	if b.ctr {
		pa.Cycles, pa.Instructions = int64(a[aCycles]), int64(a[aInstructions])
	}
	return pa
}

// procSeries is one process's part of the series.
type procSeries struct {
	bounds []bound
	// pending holds the changes of interval ends dropped by a doubling
	// after the last one kept: they go to the next one.
	pending []change
	// pos gives, by region id, 1 + the index in vals of the region's
	// accounts as of the latest interval end (0: none yet).
	pos  []int32
	vals []regAcc
}

// set notes a, region id's accounts at an interval end, and reports
// whether they changed.
func (ps *procSeries) set(id int32, a *regAcc, ids int) bool {
	if len(ps.pos) < ids {
		ps.pos = append(ps.pos, make([]int32, ids-len(ps.pos))...)
	}
	i := ps.pos[id]
	if i == 0 {
		if *a == (regAcc{}) {
			return false // as if absent
		}
		ps.vals = append(ps.vals, *a)
		ps.pos[id] = int32(len(ps.vals))
		return true
	}
	if ps.vals[i-1] == *a {
		return false
	}
	ps.vals[i-1] = *a
	return true
}

// seriesStore is the sampler's side of the series: the region names by
// id, those that left it, and the entries kept.
type seriesStore struct {
	ids     map[string]int32
	names   []string
	dropped []bool
	entries int // changes and interval ends kept, all processes
	scratch []change
}

func (st *seriesStore) id(name string) int32 {
	if st.ids == nil {
		st.ids = map[string]int32{}
	}
	id, ok := st.ids[name]
	if !ok {
		id = int32(len(st.names))
		st.ids[name] = id
		st.names = append(st.names, name)
		st.dropped = append(st.dropped, false)
	}
	return id
}

// mergeChanges returns the changes of a then b (sorted by id), b's where
// both have a region.
func mergeChanges(a, b []change) []change {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]change, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].id < b[j].id):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].id < a[i].id:
			out = append(out, b[j])
			j++
		default:
			out = append(out, b[j])
			i++
			j++
		}
	}
	return slices.Clip(out)
}

// cumulative returns the process's accounts per region at the snapshot's
// moment (an open region's visit counted up to it), in nanoseconds.
func cumulative(s *Snapshot) map[string]measure.ProcessAccounts {
	out := make(map[string]measure.ProcessAccounts, len(s.Regions))
	for i, r := range s.Regions {
		if r.Visits == 0 && !r.Open {
			continue
		}
		out[r.Name] = accountsOf(s, s.RegionAt(i, s.Tick))
	}
	return out
}

// diff returns b − a field by field (0 where negative: the final accounts
// of a complete run are aligned across ranks by libpopmon and can end a
// hair below the last sample), with b's rank and CPUs and one visit when
// the process spent time in the region.
func diff(a, b measure.ProcessAccounts) measure.ProcessAccounts {
	d := func(x, y int64) int64 { return max(y-x, 0) }
	out := measure.ProcessAccounts{
		Rank: b.Rank, CPUs: b.CPUs,
		ElapsedNS: d(a.ElapsedNS, b.ElapsedNS), UsefulNS: d(a.UsefulNS, b.UsefulNS), MPINS: d(a.MPINS, b.MPINS),
		MPIWorkerIdleNS: d(a.MPIWorkerIdleNS, b.MPIWorkerIdleNS), OMPSerializationNS: d(a.OMPSerializationNS, b.OMPSerializationNS),
		OMPLoadImbalanceNS: d(a.OMPLoadImbalanceNS, b.OMPLoadImbalanceNS), OMPSchedulingNS: d(a.OMPSchedulingNS, b.OMPSchedulingNS),
		GPURuntimeNS: d(a.GPURuntimeNS, b.GPURuntimeNS), OtherNS: d(a.OtherNS, b.OtherNS),
		MPICalls: d(a.MPICalls, b.MPICalls), OMPParallels: d(a.OMPParallels, b.OMPParallels), OMPTasks: d(a.OMPTasks, b.OMPTasks),
		GPURuntimeCalls: d(a.GPURuntimeCalls, b.GPURuntimeCalls), Cycles: d(a.Cycles, b.Cycles), Instructions: d(a.Instructions, b.Instructions),
		PrimaryUsefulNS: d(a.PrimaryUsefulNS, b.PrimaryUsefulNS), PrimaryMPINS: d(a.PrimaryMPINS, b.PrimaryMPINS),
		PrimaryOtherNS: d(a.PrimaryOtherNS, b.PrimaryOtherNS), PrimaryParallelNS: d(a.PrimaryParallelNS, b.PrimaryParallelNS),
		PrimarySerialUsefulNS: d(a.PrimarySerialUsefulNS, b.PrimarySerialUsefulNS), ParallelUsefulNS: d(a.ParallelUsefulNS, b.ParallelUsefulNS),
		ThreadUsefulMaxNS: d(a.ThreadUsefulMaxNS, b.ThreadUsefulMaxNS),
	}
	if out.ElapsedNS > 0 {
		out.Visits = 1
	}
	return out
}

// noteBoundary records p's accounts per region at instant k when k ends an
// interval. Under s.mu.
func (s *Sampler) noteBoundary(p *tracked, k int64, snap *Snapshot) {
	if k%(s.perInterval*s.stride) != 0 {
		return
	}
	st, ps := &s.ser, &p.ser
	ch := st.scratch[:0]
	for i := range snap.Regions {
		r := &snap.Regions[i]
		if r.Visits == 0 && !r.Open {
			continue
		}
		id := st.id(r.Name)
		if st.dropped[id] {
			continue
		}
		var a regAcc
		if r.Open {
			at := snap.RegionAt(i, snap.Tick)
			a = accOf(&at)
		} else {
			a = accOf(r)
		}
		if ps.set(id, &a, len(st.names)) {
			ch = append(ch, change{id, a})
		}
	}
	st.scratch = ch[:0]
	// Sorted by id, the last of a name that appears twice kept (as a map
	// by name would).
	if !slices.IsSortedFunc(ch, func(x, y change) int { return cmp.Compare(x.id, y.id) }) {
		slices.SortStableFunc(ch, func(x, y change) int { return cmp.Compare(x.id, y.id) })
	}
	kept := ch[:0]
	for i := range ch {
		if i+1 < len(ch) && ch[i+1].id == ch[i].id {
			continue
		}
		kept = append(kept, ch[i])
	}
	own := slices.Clone(kept)
	if len(ps.pending) > 0 {
		st.entries -= len(ps.pending)
		own = mergeChanges(ps.pending, own)
		ps.pending = nil
	}
	ps.bounds = append(ps.bounds, bound{k: k, ns: snap.NS, perTick: snap.NSPerTick(), rank: snap.Rank, cpus: snap.AccountCPUs,
		ctr: snap.Counters.Available, changes: own})
	st.entries += 1 + len(own)
	if len(ps.bounds) > maxBoundaries {
		s.coarsen()
	}
	for st.entries > maxSeriesEntries {
		if !s.dropRegions(maxSeriesEntries*3/4) && !s.coarsen() {
			break // one interval end per process and minSeriesRegions: nothing left to merge
		}
	}
}

// coarsen doubles the interval: every process keeps the interval ends
// that fall on the new one, the changes of those dropped go to the next
// kept. Reports whether anything was dropped.
func (s *Sampler) coarsen() bool {
	s.stride *= 2
	step := s.perInterval * s.stride
	st := &s.ser
	before := st.entries
	st.entries = 0
	for _, q := range s.procs {
		qs := &q.ser
		kept := qs.bounds[:0]
		var carry []change
		for _, b := range qs.bounds {
			if b.k%step != 0 {
				carry = mergeChanges(carry, b.changes)
				continue
			}
			b.changes = mergeChanges(carry, b.changes)
			carry = nil
			kept = append(kept, b)
		}
		clear(qs.bounds[len(kept):])
		qs.bounds = kept
		qs.pending = mergeChanges(qs.pending, carry)
		st.entries += len(qs.pending)
		for _, b := range kept {
			st.entries += 1 + len(b.changes)
		}
	}
	return st.entries < before
}

// dropRegions takes the regions with the least elapsed time so far (all
// processes, Global never) out of the series until at most target entries
// remain or minSeriesRegions regions do. Reports whether it dropped any.
func (s *Sampler) dropRegions(target int) bool {
	st := &s.ser
	n := len(st.names)
	weight := make([]float64, n)
	count := make([]int, n)
	for _, q := range s.procs {
		qs := &q.ser
		per := 1.0
		if len(qs.bounds) > 0 {
			per = qs.bounds[len(qs.bounds)-1].perTick
		}
		for id, i := range qs.pos {
			if i != 0 {
				weight[id] += float64(qs.vals[i-1][aElapsed]) * per
			}
		}
		for _, c := range qs.pending {
			count[c.id]++
		}
		for _, b := range qs.bounds {
			for _, c := range b.changes {
				count[c.id]++
			}
		}
	}
	var cand []int32
	live := 0
	for id := range n {
		if st.dropped[id] {
			continue
		}
		live++
		if st.names[id] != measure.GlobalRegion {
			cand = append(cand, int32(id))
		}
	}
	// The lightest first; of equal ones, the latest registered.
	slices.SortFunc(cand, func(a, b int32) int {
		if c := cmp.Compare(weight[a], weight[b]); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})
	dropped := 0
	for _, id := range cand {
		if st.entries <= target || live <= minSeriesRegions {
			break
		}
		st.dropped[id] = true
		st.entries -= count[id]
		live--
		dropped++
	}
	if dropped == 0 {
		return false
	}
	keep := func(cs []change) []change {
		n := 0
		for _, c := range cs {
			if !st.dropped[c.id] {
				n++
			}
		}
		if n == len(cs) {
			return cs
		}
		out := make([]change, 0, n)
		for _, c := range cs {
			if !st.dropped[c.id] {
				out = append(out, c)
			}
		}
		return out
	}
	for _, q := range s.procs {
		qs := &q.ser
		qs.pending = keep(qs.pending)
		for i := range qs.bounds {
			qs.bounds[i].changes = keep(qs.bounds[i].changes)
		}
	}
	return true
}

// Series builds the time series of the processes of final (by rank: each
// one's accounts per region at the end of its measurement), at the
// interval ends every one of them was sampled at, with interval starts
// relative to t0 (CLOCK_MONOTONIC ns of the earliest MPI_Init). The last
// interval ends with final, so that the intervals of a process add up to
// its totals. order lists the regions (Global first); those that left the
// series (the budget above) are not in it. Nil when some process was never
// sampled.
func (s *Sampler) Series(final map[int]map[string]measure.ProcessAccounts, t0 int64, order []string) *measure.Series {
	s.mu.Lock()
	defer s.mu.Unlock()
	byRank := map[int]*tracked{}
	for _, p := range s.procs {
		if p.final != nil && p.final.InitTick != 0 {
			if byRank[p.final.Rank] != nil {
				return nil // two jobs in one command: whose rank 0?
			}
			byRank[p.final.Rank] = p
		}
	}
	ranks := make([]int, 0, len(final))
	for r := range final {
		if byRank[r] == nil {
			return nil
		}
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	if len(ranks) == 0 {
		return nil
	}
	// The interval ends every process has.
	count := map[int64]int{}
	for _, r := range ranks {
		for _, b := range byRank[r].ser.bounds {
			count[b.k]++
		}
	}
	var ks []int64
	for k, c := range count {
		if c == len(ranks) {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return nil // never sampled together: one interval is the run itself
	}
	slices.Sort(ks)
	// The regions of the series, and where each one's accounts are.
	st := &s.ser
	type reg struct {
		name string
		id   int32 // -1: never sampled (the last interval only)
	}
	var regs []reg
	slot := make([]int32, len(st.names)) // by id: 1 + index in regs
	for _, name := range order {
		id, ok := st.ids[name]
		switch {
		case !ok:
			regs = append(regs, reg{name, -1})
		case st.dropped[id] || slot[id] != 0:
		default:
			regs = append(regs, reg{name, id})
			slot[id] = int32(len(regs))
		}
	}
	// Each process's accounts per region, as of the latest interval end
	// walked, and as of the previous one in ks.
	type walker struct {
		bounds []bound
		i      int
		b      *bound
		vals   []regAcc // by index in regs
		prev   []measure.ProcessAccounts
	}
	ws := make([]walker, len(ranks))
	for i, r := range ranks {
		ws[i] = walker{bounds: byRank[r].ser.bounds, vals: make([]regAcc, len(regs)), prev: make([]measure.ProcessAccounts, len(regs))}
	}
	out := make([]measure.SeriesRegion, len(regs))
	for j := range regs {
		out[j].Name = regs[j].name
	}
	start := int64(0)
	emit := func(cur func(w *walker, r, j int) measure.ProcessAccounts) {
		for j := range regs {
			iv := measure.SeriesInterval{StartNS: start}
			for i := range ws {
				c := cur(&ws[i], ranks[i], j)
				if d := diff(ws[i].prev[j], c); d.ElapsedNS > 0 {
					iv.Processes = append(iv.Processes, d)
				}
				ws[i].prev[j] = c
			}
			if len(iv.Processes) > 0 {
				out[j].Intervals = append(out[j].Intervals, iv)
			}
		}
	}
	for _, k := range ks {
		next := int64(-1)
		for i := range ws {
			w := &ws[i]
			for ; w.i < len(w.bounds) && w.bounds[w.i].k <= k; w.i++ {
				w.b = &w.bounds[w.i]
				for _, c := range w.b.changes {
					if j := slot[c.id]; j != 0 {
						w.vals[j-1] = c.a
					}
				}
			}
			if ns := w.b.ns - t0; next < 0 || ns < next {
				next = ns
			}
		}
		emit(func(w *walker, _, j int) measure.ProcessAccounts {
			if regs[j].id < 0 {
				return measure.ProcessAccounts{}
			}
			return w.b.accounts(&w.vals[j])
		})
		start = max(next, 0)
	}
	emit(func(_ *walker, r, j int) measure.ProcessAccounts { return final[r][regs[j].name] })
	series := &measure.Series{IntervalNS: int64(s.every) * s.perInterval * s.stride}
	for _, g := range out {
		if len(g.Intervals) > 0 {
			series.Regions = append(series.Regions, g)
		}
	}
	if len(series.Regions) == 0 {
		return nil
	}
	return series
}

// FinalOf returns a measurement's per-rank accounts per region, the input
// of Series.
func FinalOf(m *measure.Measurement) (map[int]map[string]measure.ProcessAccounts, []string) {
	final := map[int]map[string]measure.ProcessAccounts{}
	var order []string
	for _, p := range m.Processes {
		final[p.Rank] = map[string]measure.ProcessAccounts{}
	}
	for _, g := range m.Regions {
		order = append(order, g.Name)
		for _, pa := range g.Processes {
			if final[pa.Rank] != nil {
				final[pa.Rank][g.Name] = pa
			}
		}
	}
	return final, order
}

// T0 returns the CLOCK_MONOTONIC time of the earliest MPI_Init among the
// processes sampled (0 when none).
func (s *Sampler) T0() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t0 int64
	for _, p := range s.procs {
		if f := p.final; f != nil && f.InitTick != 0 {
			if ns := f.NSAt(f.InitTick); t0 == 0 || ns < t0 {
				t0 = ns
			}
		}
	}
	return t0
}

// Latest returns the latest snapshot of every process, in rank order.
func (s *Sampler) Latest() []*Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Snapshot
	for _, p := range s.procs {
		if p.final != nil {
			out = append(out, p.final)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rank < out[j].Rank })
	return out
}

// SampleLatest reads every live file now and returns the latest snapshot
// of every process (Sample, then Latest): the source of a live view that
// reads on its own ticks (popmon serve, top and query).
func (s *Sampler) SampleLatest() []*Snapshot {
	s.Sample()
	return s.Latest()
}

// Window returns the regions' accounts between two snapshots of the same
// processes (matched by pid): what happened in that interval. Nil when no
// process is in both.
func Window(prev, cur []*Snapshot) []measure.Region {
	before := map[int]*Snapshot{}
	for _, s := range prev {
		before[s.PID] = s
	}
	var order []string
	byName := map[string]*measure.Region{}
	for _, c := range cur {
		p := before[c.PID]
		if p == nil || c.InitTick == 0 || p.InitTick != c.InitTick {
			continue
		}
		a, b := cumulative(p), cumulative(c)
		for _, r := range c.Regions {
			d := diff(a[r.Name], b[r.Name])
			if d.ElapsedNS <= 0 {
				continue
			}
			g := byName[r.Name]
			if g == nil {
				g = &measure.Region{Name: r.Name}
				byName[r.Name] = g
				order = append(order, r.Name)
			}
			g.Processes = append(g.Processes, d)
		}
	}
	var out []measure.Region
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out
}
