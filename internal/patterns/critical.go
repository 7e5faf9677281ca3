package patterns

import (
	"sort"

	"github.com/popmon/popmon/internal/trace"
)

// Useful is the call-path name of the time outside MPI calls.
const Useful = "(useful)"

// CriticalPath is the longest chain of dependent activities that ends
// where the last rank ends: found by a backward replay that starts on the
// rank that finishes last and, at every wait state, moves to the rank that
// caused it (the sender of a late message, the receiver of a late
// receive, the last rank to enter a collective, the root of a late
// broadcast). It runs from the end of MPI_Init (the trace's start when it
// has none) to the last rank's end.
type CriticalPath struct {
	// Start and End are the path's ends (ns from the trace start); NS is
	// End − Start, the time every rank's path segments add up to.
	Start int64 `json:"start_ns"`
	End   int64 `json:"end_ns"`
	NS    int64 `json:"ns"`
	// RankNS is the path's time on each rank (ns).
	RankNS []int64 `json:"rank_ns"`
	// Profile is the path's time per call path (an MPI call's name, or
	// Useful for computation), largest first, with its imbalance.
	Profile []PathEntry `json:"profile"`
	// ImbalanceNS is the critical-path imbalance summed over call paths.
	ImbalanceNS int64 `json:"imbalance_ns"`
	// Segments are the path's pieces in time order.
	Segments []Segment `json:"segments"`
}

// PathEntry is one call path's share of the critical path.
type PathEntry struct {
	Name string `json:"name"`
	// NS is the time this call path spends on the critical path.
	NS int64 `json:"ns"`
	// MeanNS is the call path's average time per rank (over the path's
	// time span).
	MeanNS int64 `json:"mean_ns"`
	// ImbalanceNS = max(0, NS − MeanNS): the time the path would lose if
	// every rank spent the average in this call path.
	ImbalanceNS int64 `json:"imbalance_ns"`
}

// Segment is a piece of the critical path on one rank.
type Segment struct {
	Rank  int32  `json:"rank"`
	Name  string `json:"name"`
	Start int64  `json:"start_ns"`
	End   int64  `json:"end_ns"`
}

// criticalPath runs the backward replay with the waiting calls' causes.
func criticalPath(tr *trace.Trace, causes map[callRef]cause) CriticalPath {
	cp := CriticalPath{RankNS: make([]int64, len(tr.Ranks)), Profile: []PathEntry{}, Segments: []Segment{}}
	// Start: the end of the last MPI_Init; end: the last rank's end.
	last, end := int32(0), int64(-1)
	for r := range tr.Ranks {
		e := rankEnd(&tr.Ranks[r])
		if e > end {
			last, end = int32(r), e
		}
		for _, c := range tr.Ranks[r].Calls {
			if c.Kind == trace.KindInit {
				cp.Start = max(cp.Start, c.Leave)
			}
		}
	}
	if end < cp.Start {
		end = cp.Start
	}
	cp.End, cp.NS = end, end-cp.Start
	onPath := map[string]int64{}
	var segs []Segment
	add := func(r int32, name string, from, to int64) {
		from = max(from, cp.Start)
		if to <= from {
			return
		}
		cp.RankNS[r] += to - from
		onPath[name] += to - from
		if n := len(segs); n > 0 && segs[n-1].Rank == r && segs[n-1].Name == name && segs[n-1].Start == to {
			segs[n-1].Start = from
			return
		}
		segs = append(segs, Segment{r, name, from, to})
	}
	r, t := last, end
	// visited[r] is the last time the path left rank r by a jump.
	visited := make([]int64, len(tr.Ranks))
	for k := range visited {
		visited[k] = -1
	}
	calls := tr.Ranks[r].Calls
	i := sort.Search(len(calls), func(k int) bool { return calls[k].Enter >= t }) - 1
	// Every step moves t back or leaves a call behind; the bound only
	// guards against cycles of zero-length waits in a damaged trace.
	limit := 16
	for r := range tr.Ranks {
		limit += 4 * len(tr.Ranks[r].Calls)
	}
	for steps := 0; t > cp.Start && steps < limit; steps++ {
		if i < 0 {
			add(r, Useful, 0, t)
			break
		}
		c := &calls[i]
		if c.Leave < t {
			add(r, Useful, c.Leave, t)
			t = c.Leave
		}
		if c.Kind == trace.KindInit {
			break
		}
		if cs, ok := causes[callRef{r, int32(i)}]; ok && cs.at > c.Enter && cs.rank != r && !(cs.at >= t && visited[cs.rank] == t) {
			// A cause later than t breaks the clock condition (the ranks'
			// clocks disagree: a message received before it was sent): the
			// path still moves to the cause, at t, unless it was there at t
			// already (a cycle of such waits).
			at := min(cs.at, t)
			add(r, c.Name, at, t)
			visited[r] = t
			r, t = cs.rank, at
			calls = tr.Ranks[r].Calls
			i = sort.Search(len(calls), func(k int) bool { return calls[k].Enter >= t }) - 1
			continue
		}
		add(r, c.Name, c.Enter, t)
		t = c.Enter
		i--
	}
	for k, j := 0, len(segs)-1; k < j; k, j = k+1, j-1 {
		segs[k], segs[j] = segs[j], segs[k]
	}
	cp.Segments = segs
	// Each call path's mean time per rank within [Start, End].
	total := map[string]int64{}
	for r := range tr.Ranks {
		var mpi int64
		for _, c := range tr.Ranks[r].Calls {
			d := min(c.Leave, cp.End) - max(c.Enter, cp.Start)
			if d > 0 {
				total[c.Name] += d
				mpi += d
			}
		}
		total[Useful] += max(0, min(rankEnd(&tr.Ranks[r]), cp.End)-cp.Start-mpi)
	}
	for name, ns := range onPath {
		mean := total[name] / int64(len(tr.Ranks))
		e := PathEntry{Name: name, NS: ns, MeanNS: mean, ImbalanceNS: max(0, ns-mean)}
		cp.ImbalanceNS += e.ImbalanceNS
		cp.Profile = append(cp.Profile, e)
	}
	sort.Slice(cp.Profile, func(a, b int) bool {
		if cp.Profile[a].NS != cp.Profile[b].NS {
			return cp.Profile[a].NS > cp.Profile[b].NS
		}
		return cp.Profile[a].Name < cp.Profile[b].Name
	})
	return cp
}

// rankEnd is a rank's end: its End, or its last call's leave when later.
func rankEnd(r *trace.Rank) int64 {
	e := r.End
	if n := len(r.Calls); n > 0 {
		e = max(e, r.Calls[n-1].Leave)
	}
	return e
}
