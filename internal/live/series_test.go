package live

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"sort"
	"testing"
	"unsafe"

	"github.com/popmon/popmon/measure"
)

// refSeries is the time series as popmon built it before its memory was
// bounded (a9d5b23): every process's cumulative accounts of every region
// at every interval end, 3600 interval ends at most (the interval doubles
// past them). The series must not change for runs within the budget.
type refSeries struct {
	s      *Sampler
	stride int64
	bounds map[*tracked][]refBound
	last   map[*tracked]*Snapshot
}

type refBound struct {
	k, ns int64
	cum   map[string]measure.ProcessAccounts
}

func newRefSeries(s *Sampler) *refSeries {
	return &refSeries{s: s, stride: 1, bounds: map[*tracked][]refBound{}, last: map[*tracked]*Snapshot{}}
}

// note records, after the sampler's instant k, the processes read then.
func (ref *refSeries) note(k int64) {
	for _, p := range ref.s.procs {
		snap := p.final
		if snap == ref.last[p] || snap.InitTick == 0 {
			continue // not read at k
		}
		ref.last[p] = snap
		step := ref.s.perInterval * ref.stride
		if k%step != 0 {
			continue
		}
		ref.bounds[p] = append(ref.bounds[p], refBound{k: k, ns: snap.NS, cum: cumulative(snap)})
		if len(ref.bounds[p]) <= maxBoundaries {
			continue
		}
		ref.stride *= 2
		step = ref.s.perInterval * ref.stride
		for q, bs := range ref.bounds {
			kept := bs[:0]
			for _, b := range bs {
				if b.k%step == 0 {
					kept = append(kept, b)
				}
			}
			ref.bounds[q] = kept
		}
	}
}

// series is a9d5b23's Sampler.Series.
func (ref *refSeries) series(final map[int]map[string]measure.ProcessAccounts, t0 int64, order []string) *measure.Series {
	byRank := map[int]*tracked{}
	for _, p := range ref.s.procs {
		if p.final != nil && p.final.InitTick != 0 {
			byRank[p.final.Rank] = p
		}
	}
	var ranks []int
	for r := range final {
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	count := map[int64]int{}
	for _, r := range ranks {
		for _, b := range ref.bounds[byRank[r]] {
			count[b.k]++
		}
	}
	var ks []int64
	for k, c := range count {
		if c == len(ranks) {
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	at := func(r int, k int64) *refBound {
		bs := ref.bounds[byRank[r]]
		for i := range bs {
			if bs[i].k == k {
				return &bs[i]
			}
		}
		return nil
	}
	out := &measure.Series{IntervalNS: int64(ref.s.every) * ref.s.perInterval * ref.stride}
	for _, name := range order {
		reg := measure.SeriesRegion{Name: name}
		prev := map[int]measure.ProcessAccounts{}
		start := int64(0)
		emit := func(cur map[int]measure.ProcessAccounts, next int64) {
			iv := measure.SeriesInterval{StartNS: start}
			for _, r := range ranks {
				if d := diff(prev[r], cur[r]); d.ElapsedNS > 0 {
					iv.Processes = append(iv.Processes, d)
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
	return out
}

// TestSeriesMatchesOldSeries: within the budget the series is the one
// popmon built before it was bounded, value for value: 3 ranks (one on
// the TSC: its ticks converted with every snapshot's own calibration), 6
// regions visited at random (some intervals without any), a rank missed at
// some instants (its file gone for a moment: those interval ends merge),
// 3,700 interval ends (past 3,600 the interval doubles), and accounts after
// the last interval end.
func TestSeriesMatchesOldSeries(t *testing.T) {
	const ranks, regions, n = 3, 6, 3700
	j := newSeriesJob(t, ranks, regions, true)
	ref := newRefSeries(j.s)
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range n {
		for r := range ranks {
			for i := 1; i < regions; i++ {
				if rng.IntN(3) > 0 {
					el := 1 + uint64(rng.IntN(1e6))
					j.add(r, i, el, uint64(rng.IntN(int(el))))
				}
			}
		}
		missed := k%97 == 5
		if missed {
			if err := os.Rename(j.paths[2], j.paths[2]+".away"); err != nil {
				t.Fatal(err)
			}
		}
		j.sample()
		ref.note(int64(k))
		if missed {
			if err := os.Rename(j.paths[2]+".away", j.paths[2]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for r := range ranks {
		j.add(r, 3, 12345, 678)
	}
	j.sample() // the final accounts
	ref.note(n)
	final, order := j.final(t)
	order = append(order, "never sampled")
	for r := range final {
		final[r]["never sampled"] = measure.ProcessAccounts{Rank: r, CPUs: 1, Visits: 1, ElapsedNS: 5, UsefulNS: 5}
	}
	t0 := j.s.T0()
	got := j.s.Series(final, t0, order)
	want := ref.series(final, t0, order)
	if got == nil || got.IntervalNS != 2e9 || len(got.Regions) != regions+1 {
		t.Fatalf("series: %+v", got)
	}
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got.Regions), len(want.Regions)) {
			g, w := got.Regions[i], want.Regions[i]
			if !reflect.DeepEqual(g, w) {
				t.Errorf("region %s: %d intervals, want %s: %d", g.Name, len(g.Intervals), w.Name, len(w.Intervals))
				for k := range min(len(g.Intervals), len(w.Intervals)) {
					if !reflect.DeepEqual(g.Intervals[k], w.Intervals[k]) {
						t.Fatalf("interval %d: %+v\nwant %+v", k, g.Intervals[k], w.Intervals[k])
					}
				}
			}
		}
		t.Fatalf("%d regions, want %d", len(got.Regions), len(want.Regions))
	}
}

// TestSeriesBudget: 8 ranks × 1024 regions, every one visited in every
// interval, for 400 intervals. popmon kept every process's cumulative
// accounts of every region at every interval end (a9d5b23: 3.3 M of them,
// about 1.5 GB, and a live file's 8 last samples with 5 KiB a region,
// 340 MB more); now the series keeps at most maxSeriesEntries accounts:
// the regions with the least time leave it, Global and the heaviest stay,
// every interval of theirs exact.
func TestSeriesBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 8 ranks × 1024 regions × 400 intervals")
	}
	const ranks, regions, n = 8, 1024, 400
	base := heapMiB()
	j := newSeriesJob(t, ranks, regions, false)
	var peak float64
	for k := range n {
		for r := range ranks {
			for i := 1; i < regions; i++ {
				// Region i takes 1000 + i ns: the heavier, the later.
				j.add(r, i, 1000+uint64(i), 400)
			}
		}
		j.sample()
		if k%50 == 49 {
			peak = max(peak, heapMiB()-base)
		}
	}
	if j.s.ser.entries > maxSeriesEntries {
		t.Errorf("%d entries kept, budget %d", j.s.ser.entries, maxSeriesEntries)
	}
	for _, p := range j.s.procs {
		if len(p.samples) != 1 {
			t.Errorf("rank %d keeps %d samples, want 1 (every process read at every instant)", p.final.Rank, len(p.samples))
		}
	}
	final, order := j.final(t)
	s := j.s.Series(final, j.s.T0(), order)
	runtime.KeepAlive(s)
	peak = max(peak, heapMiB()-base)
	// The series' 8 × 400 × kept regions accounts (at most 262,144:
	// 42 MiB here) and the series built of them (58 MiB at most), the
	// processes' last samples and final accounts (8 × 1024 regions):
	// well under 150 MiB.
	t.Logf("live heap peak %.0f MiB; %d regions kept", peak, len(s.Regions))
	if peak > 150 {
		t.Errorf("live heap peaked at %.0f MiB over the job, want < 150", peak)
	}
	if s == nil || s.IntervalNS != 1e9 || s.Regions[0].Name != measure.GlobalRegion {
		t.Fatalf("series %+v", s)
	}
	entries := 0
	for _, g := range s.Regions {
		for _, iv := range g.Intervals {
			entries += len(iv.Processes)
		}
	}
	// The budget, with the regions' last interval (the final accounts).
	if max := maxSeriesEntries + ranks*len(s.Regions); entries > max {
		t.Errorf("%d accounts in the series, want ≤ %d", entries, max)
	}
	// Global and the heaviest regions, in order; enough of them to
	// fill the budget's last quarter at least.
	kept := len(s.Regions) - 1
	if kept < minSeriesRegions || kept*ranks*n < maxSeriesEntries/2 || kept*ranks*n > maxSeriesEntries {
		t.Errorf("%d regions kept besides Global", kept)
	}
	for x, g := range s.Regions[1:] {
		if want := order[regions-kept+x]; g.Name != want {
			t.Fatalf("region %d of the series is %q, want %q (the heaviest)", x+1, g.Name, want)
		}
	}
	// Every interval of theirs: each rank's time of that interval.
	for x, g := range s.Regions {
		i := regions - kept + x - 1
		el := int64(1000 + i)
		if x == 0 {
			el = int64(regions-1)*1000 + int64(regions-1)*int64(regions)/2 // Global: every region
		}
		if len(g.Intervals) != n {
			t.Fatalf("%s: %d intervals, want %d", g.Name, len(g.Intervals), n)
		}
		for _, iv := range g.Intervals {
			if len(iv.Processes) != ranks {
				t.Fatalf("%s at %d ns: %d processes", g.Name, iv.StartNS, len(iv.Processes))
			}
			for _, p := range iv.Processes {
				if p.ElapsedNS != el || p.Visits != 1 {
					t.Fatalf("%s at %d ns, rank %d: %d ns, want %d", g.Name, iv.StartNS, p.Rank, p.ElapsedNS, el)
				}
			}
		}
	}
}

// TestSamplesPruned: while every process is read at every instant each
// keeps one sample (a9d5b23: keepSamples, 8, whatever the processes did);
// once one is no longer read alive, the others keep the instant it was
// last seen at, where a partial measurement is cut.
func TestSamplesPruned(t *testing.T) {
	j := newSeriesJob(t, 3, 2, false)
	for range 20 {
		j.sample()
	}
	for _, p := range j.s.procs {
		if len(p.samples) != 1 || p.samples[19] == nil {
			t.Fatalf("rank %d: samples at %v, want 19 only", p.final.Rank, keys(p.samples))
		}
	}
	// Rank 2 dies: its start time no longer matches the running process.
	binary.LittleEndian.PutUint64(j.maps[2][unsafe.Offsetof(header{}.StartTime):], 12345)
	for range 3 {
		j.sample()
	}
	for _, p := range j.s.procs {
		if p.samples[19] == nil {
			t.Errorf("rank %d: samples at %v, want 19 among them (rank 2's last instant alive)", p.final.Rank, keys(p.samples))
		}
	}
}

func keys(m map[int64]*Snapshot) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TestSeriesAccounts: a region's accounts converted from the series' ticks
// are accountsOf's, whatever the clock's calibration and counters.
func TestSeriesAccounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		s := &Snapshot{Rank: rng.IntN(64), CPUs: 1 + rng.IntN(8), AccountCPUs: 1 + rng.IntN(8), ClockTSC: true,
			T0Tick: 1000, T0NS: 5000, CalTick: 1000 + uint64(rng.IntN(1e9)), CalNS: 5000 + uint64(rng.IntN(1e9)),
			Tick: 1000 + uint64(rng.IntN(1e12)), NS: 5000 + int64(rng.IntN(1e12))}
		s.Counters.Available = rng.IntN(2) == 0
		v := func() uint64 { return uint64(rng.Int64N(1 << 50)) }
		r := Region{Elapsed: v(), Visits: v()}
		for k := range r.Tot.T {
			r.Tot.T[k] = v()
		}
		for k := range r.Tot.X {
			r.Tot.X[k] = v()
		}
		r.Tot.MPICalls, r.Tot.OMPParallels, r.Tot.OMPTasks, r.Tot.GPUCalls = v(), v(), v(), v()
		r.Tot.PrimUseful, r.Tot.PrimMPI, r.Tot.ThrUsefulMax = v(), v(), v()
		if rng.IntN(2) == 0 {
			r.Tot.Ctr = []uint64{v(), v()}
		}
		b := bound{perTick: s.NSPerTick(), rank: s.Rank, cpus: s.AccountCPUs, ctr: s.Counters.Available}
		a := accOf(&r)
		got, want := b.accounts(&a), accountsOf(s, r)
		want.Visits = 0 // not kept: an interval's visits is 1
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v\nwant %+v", got, want)
		}
	}
}
