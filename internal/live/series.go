package live

import (
	"sort"

	"github.com/popmon/popmon/measure"
)

// DefaultSeriesInterval is the interval of a run's time series.
const DefaultSeriesInterval = int64(1e9)

// maxBoundaries bounds the kept interval boundaries per process: past it
// the interval doubles (cumulative accounts merge exactly).
const maxBoundaries = 3600

// boundary is one process's cumulative accounts per region at the end of
// an interval.
type boundary struct {
	k   int64 // the sampling instant
	ns  int64 // CLOCK_MONOTONIC when read
	cum map[string]measure.ProcessAccounts
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

// noteBoundary records p's cumulative accounts at instant k when k ends an
// interval. Under s.mu.
func (s *Sampler) noteBoundary(p *tracked, k int64, snap *Snapshot) {
	step := s.perInterval * s.stride
	if k%step != 0 {
		return
	}
	p.bounds = append(p.bounds, boundary{k: k, ns: snap.NS, cum: cumulative(snap)})
	if len(p.bounds) <= maxBoundaries {
		return
	}
	// Twice the interval: keep every other boundary, for every process.
	s.stride *= 2
	step = s.perInterval * s.stride
	for _, q := range s.procs {
		kept := q.bounds[:0]
		for _, b := range q.bounds {
			if b.k%step == 0 {
				kept = append(kept, b)
			}
		}
		q.bounds = kept
	}
}

// Series builds the time series of the processes of final (by rank: each
// one's accounts per region at the end of its measurement), at the
// boundaries every one of them was sampled at, with interval starts
// relative to t0 (CLOCK_MONOTONIC ns of the earliest MPI_Init). The last
// interval ends with final, so that the intervals of a process add up to
// its totals. order lists the regions (Global first). Nil when some
// process was never sampled.
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
	// The boundaries every process has.
	count := map[int64]int{}
	for _, r := range ranks {
		for _, b := range byRank[r].bounds {
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
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	at := func(r int, k int64) *boundary {
		for i := range byRank[r].bounds {
			if byRank[r].bounds[i].k == k {
				return &byRank[r].bounds[i]
			}
		}
		return nil
	}
	out := &measure.Series{IntervalNS: int64(s.every) * s.perInterval * s.stride}
	for _, name := range order {
		reg := measure.SeriesRegion{Name: name}
		prev := map[int]measure.ProcessAccounts{}
		start := int64(0)
		emit := func(cur map[int]measure.ProcessAccounts, next int64) {
			iv := measure.SeriesInterval{StartNS: start}
			for _, r := range ranks {
				dlt := diff(prev[r], cur[r])
				if dlt.ElapsedNS > 0 {
					iv.Processes = append(iv.Processes, dlt)
				}
			}
			if len(iv.Processes) > 0 {
				reg.Intervals = append(reg.Intervals, iv)
			}
			prev, start = cur, next
		}
		for _, k := range ks {
			cur := map[int]measure.ProcessAccounts{}
			next := int64(-1)
			for _, r := range ranks {
				b := at(r, k)
				cur[r] = b.cum[name]
				if ns := b.ns - t0; next < 0 || ns < next {
					next = ns
				}
			}
			emit(cur, max(next, 0))
		}
		last := map[int]measure.ProcessAccounts{}
		for _, r := range ranks {
			last[r] = final[r][name]
		}
		emit(last, 0)
		if len(reg.Intervals) > 0 {
			out.Regions = append(out.Regions, reg)
		}
	}
	if len(out.Regions) == 0 {
		return nil
	}
	return out
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
