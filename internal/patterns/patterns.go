// Package patterns finds Scalasca's wait-state patterns and the critical
// path in an MPI event trace (the shared model of internal/trace): Late
// Sender (and its wrong-order children), Late Receiver, Wait at Barrier
// and Barrier Completion, Wait at N x N and N x N Completion, Late
// Broadcast, Early Reduce and Early Scan, each with its time per rank and
// per call site, and the critical path with its per-call-path profile and
// imbalance. The definitions are Scalasca 2.6's (MPI.pattern,
// CriticalPath.pattern); docs/patterns.md states them as popmon applies
// them.
//
// The analysis is pure: a trace in, a Result out. Times compared across
// ranks come from one aligned time line (the trace producer's job).
package patterns

import (
	"fmt"
	"sort"
	"strings"

	"github.com/popmon/popmon/internal/replay"
	"github.com/popmon/popmon/internal/trace"
)

// The pattern ids, stable in JSON output (docs/report-formats.md).
const (
	LateSender              = "late_sender"
	WrongOrderSameSource    = "late_sender_wrong_order_same_source"
	WrongOrderDiffSource    = "late_sender_wrong_order_different_source"
	LateReceiver            = "late_receiver"
	WaitBarrier             = "wait_barrier"
	BarrierCompletion       = "barrier_completion"
	WaitNxN                 = "wait_nxn"
	NxNCompletion           = "nxn_completion"
	LateBroadcast           = "late_broadcast"
	EarlyReduce             = "early_reduce"
	EarlyScan               = "early_scan"
	wrongOrderBufferEntries = 100 // Scalasca keeps the last 100 Late Sender instances per receiver
)

// patternInfo is a pattern's id, display name and parent id ("" for a
// top-level pattern; a child's time is part of its parent's).
type patternInfo struct {
	id, name, parent string
}

// patternList is the patterns in report order.
var patternList = []patternInfo{
	{LateSender, "Late Sender", ""},
	{WrongOrderSameSource, "Late Sender, wrong order (same source)", LateSender},
	{WrongOrderDiffSource, "Late Sender, wrong order (different source)", LateSender},
	{LateReceiver, "Late Receiver", ""},
	{WaitBarrier, "Wait at Barrier", ""},
	{BarrierCompletion, "Barrier Completion", ""},
	{WaitNxN, "Wait at N x N", ""},
	{NxNCompletion, "N x N Completion", ""},
	{LateBroadcast, "Late Broadcast", ""},
	{EarlyReduce, "Early Reduce", ""},
	{EarlyScan, "Early Scan", ""},
}

// IDs returns the pattern ids in report order.
func IDs() []string {
	ids := make([]string, len(patternList))
	for i, p := range patternList {
		ids[i] = p.id
	}
	return ids
}

// Result is the wait-state analysis of one trace.
type Result struct {
	// Ranks is the number of ranks analysed.
	Ranks int `json:"ranks"`
	// MPINS is the time inside MPI calls over all ranks (ns), the base of
	// every pattern's share.
	MPINS int64 `json:"mpi_ns"`
	// MPIRankNS is each rank's time inside MPI calls (ns).
	MPIRankNS []int64 `json:"mpi_rank_ns"`
	// Patterns holds every pattern, in report order, also those with zero
	// time.
	Patterns []Pattern `json:"patterns"`
	// CriticalPath is the program's critical path.
	CriticalPath CriticalPath `json:"critical_path"`
	// Notes are plain sentences about what was skipped or assumed.
	Notes []string `json:"notes,omitempty"`
}

// Pattern is one wait-state pattern's time.
type Pattern struct {
	// ID is the stable id (LateSender, ...); Name the display name.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Parent is the id of the pattern this one is part of ("" for none):
	// the wrong-order patterns are parts of Late Sender.
	Parent string `json:"parent,omitempty"`
	// NS is the total time over ranks (ns); Instances the number of calls
	// that waited.
	NS        int64 `json:"ns"`
	Instances int64 `json:"instances"`
	// RankNS is the time per rank (ns), indexed by world rank.
	RankNS []int64 `json:"rank_ns"`
	// Sites is the time per call site (the MPI call's name), largest first.
	Sites []Site `json:"sites"`
}

// Site is a pattern's or a path's time at one call site.
type Site struct {
	Name string `json:"name"`
	NS   int64  `json:"ns"`
}

// Pattern returns the pattern with id, or nil.
func (r *Result) Pattern(id string) *Pattern {
	for i := range r.Patterns {
		if r.Patterns[i].ID == id {
			return &r.Patterns[i]
		}
	}
	return nil
}

// acc accumulates the patterns' times while the analysis runs.
type acc struct {
	ranks int
	ns    map[string][]int64          // id → per rank
	n     map[string]int64            // id → instances
	sites map[string]map[string]int64 // id → call name → ns
}

func (a *acc) add(id string, rank int32, name string, ns int64) {
	if ns <= 0 {
		return
	}
	if a.ns[id] == nil {
		a.ns[id] = make([]int64, a.ranks)
		a.sites[id] = map[string]int64{}
	}
	a.ns[id][rank] += ns
	a.n[id]++
	a.sites[id][name] += ns
}

// Options tune the analysis.
type Options struct {
	// EagerLimit is the message size (bytes) from which a send uses the
	// rendezvous protocol and so can wait for its receiver (Late
	// Receiver); smaller messages count only when sent synchronously
	// (MPI_Ssend, MPI_Issend). 0 means replay.DefaultEagerLimit, the limit
	// of the ideal-network replay.
	EagerLimit int64
}

// Analyze finds the wait states and the critical path of tr.
func Analyze(tr *trace.Trace, opt Options) (*Result, error) {
	if opt.EagerLimit <= 0 {
		opt.EagerLimit = replay.DefaultEagerLimit
	}
	if tr == nil || len(tr.Ranks) == 0 {
		return nil, fmt.Errorf("the trace has no ranks")
	}
	for r := range tr.Ranks {
		calls := tr.Ranks[r].Calls
		for i := range calls {
			if calls[i].Leave < calls[i].Enter {
				return nil, fmt.Errorf("rank %d call %d (%s) leaves before it enters (%d < %d ns)", r, i, calls[i].Name, calls[i].Leave, calls[i].Enter)
			}
			if i > 0 && calls[i].Enter < calls[i-1].Enter {
				return nil, fmt.Errorf("rank %d call %d (%s) enters before the call before it: calls must be in entry order", r, i, calls[i].Name)
			}
		}
	}
	a := &acc{ranks: len(tr.Ranks), ns: map[string][]int64{}, n: map[string]int64{}, sites: map[string]map[string]int64{}}
	res := &Result{Ranks: len(tr.Ranks), MPIRankNS: make([]int64, len(tr.Ranks))}
	for r := range tr.Ranks {
		for _, c := range tr.Ranks[r].Calls {
			res.MPIRankNS[r] += c.Leave - c.Enter
		}
		res.MPINS += res.MPIRankNS[r]
	}
	causes := map[callRef]cause{}
	notes := pointToPoint(tr, a, causes, opt.EagerLimit)
	res.Notes = append(res.Notes, notes...)
	res.Notes = append(res.Notes, collectives(tr, a, causes)...)
	for _, p := range patternList {
		pat := Pattern{ID: p.id, Name: p.name, Parent: p.parent, RankNS: make([]int64, len(tr.Ranks)), Sites: []Site{}}
		if ns := a.ns[p.id]; ns != nil {
			copy(pat.RankNS, ns)
			for _, v := range ns {
				pat.NS += v
			}
			pat.Instances = a.n[p.id]
			pat.Sites = sortedSites(a.sites[p.id])
		}
		res.Patterns = append(res.Patterns, pat)
	}
	res.CriticalPath = criticalPath(tr, causes)
	return res, nil
}

// sortedSites returns m as sites, largest first, then by name.
func sortedSites(m map[string]int64) []Site {
	s := make([]Site, 0, len(m))
	for name, ns := range m {
		s = append(s, Site{name, ns})
	}
	sort.Slice(s, func(i, j int) bool {
		if s[i].NS != s[j].NS {
			return s[i].NS > s[j].NS
		}
		return s[i].Name < s[j].Name
	})
	return s
}

// callRef names one call: rank and index in its Calls.
type callRef struct{ rank, call int32 }

// cause is what a waiting call waited for: the rank whose call entered
// at time at, ending the wait.
type cause struct {
	rank int32
	at   int64
}

// isTest reports whether a completion call is a Test (excluded from the
// point-to-point patterns: it does not block).
func isTest(name string) bool { return strings.HasPrefix(name, "MPI_Test") }

// blocking reports whether c can wait: a call of kind k (KindRecv for
// a receive, KindSend for a send), a Sendrecv, or a Wait (not a Test).
func blocking(c *trace.Call, k trace.Kind) bool {
	switch c.Kind {
	case k, trace.KindSendrecv:
		return true
	case trace.KindWait:
		return !isTest(c.Name)
	}
	return false
}

func validCall(tr *trace.Trace, rank, call int32) bool {
	return rank >= 0 && int(rank) < len(tr.Ranks) && call >= 0 && int(call) < len(tr.Ranks[rank].Calls)
}

// pointToPoint computes Late Sender (with wrong order) and Late Receiver,
// and records each waiting call's cause.
func pointToPoint(tr *trace.Trace, a *acc, causes map[callRef]cause, eagerLimit int64) []string {
	var notes []string
	bad := 0
	// Late Sender: per receive-completing call, the latest sender's entry.
	type recvGroup struct {
		ref      callRef
		sendAt   int64
		src      int32
		messages []int // indexes in tr.Messages, in send-entry order
	}
	groups := map[callRef]*recvGroup{}
	type sendGroup struct {
		ref    callRef
		postAt int64
		dst    int32
	}
	sgroups := map[callRef]*sendGroup{}
	for mi := range tr.Messages {
		m := &tr.Messages[mi]
		if !validCall(tr, m.Src, m.SendCall) || !validCall(tr, m.Dst, m.RecvDone) || !validCall(tr, m.Dst, m.RecvPost) {
			bad++
			continue
		}
		sendEnter := tr.Ranks[m.Src].Calls[m.SendCall].Enter
		rd := &tr.Ranks[m.Dst].Calls[m.RecvDone]
		if blocking(rd, trace.KindRecv) {
			ref := callRef{m.Dst, m.RecvDone}
			g := groups[ref]
			if g == nil {
				g = &recvGroup{ref: ref, sendAt: sendEnter, src: m.Src}
				groups[ref] = g
			} else if sendEnter > g.sendAt {
				g.sendAt, g.src = sendEnter, m.Src
			}
			g.messages = append(g.messages, mi)
		}
		sc := &tr.Ranks[m.Src].Calls[m.SendCall]
		rendezvous := m.Bytes >= eagerLimit || strings.HasPrefix(sc.Name, "MPI_Ssend") || strings.HasPrefix(sc.Name, "MPI_Issend")
		if rendezvous && m.SendDone >= 0 && validCall(tr, m.Src, m.SendDone) {
			sd := &tr.Ranks[m.Src].Calls[m.SendDone]
			postAt := tr.Ranks[m.Dst].Calls[m.RecvPost].Enter
			if blocking(sd, trace.KindSend) && sd.Leave > postAt {
				ref := callRef{m.Src, m.SendDone}
				g := sgroups[ref]
				if g == nil {
					sgroups[ref] = &sendGroup{ref: ref, postAt: postAt, dst: m.Dst}
				} else if postAt > g.postAt {
					g.postAt, g.dst = postAt, m.Dst
				}
			}
		}
	}
	if bad > 0 {
		notes = append(notes, fmt.Sprintf("%d messages name calls the trace does not have; they were left out", bad))
	}
	// Receives in each receiver's completion order, for the wrong-order
	// reclassification.
	order := make([]*recvGroup, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g.messages, func(i, j int) bool {
			mi, mj := &tr.Messages[g.messages[i]], &tr.Messages[g.messages[j]]
			return tr.Ranks[mi.Src].Calls[mi.SendCall].Enter < tr.Ranks[mj.Src].Calls[mj.SendCall].Enter
		})
		order = append(order, g)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].ref.rank != order[j].ref.rank {
			return order[i].ref.rank < order[j].ref.rank
		}
		return order[i].ref.call < order[j].ref.call
	})
	// instance is a buffered Late Sender instance of one receiver.
	type instance struct {
		sendAt int64
		src    int32
		wait   int64
		name   string
	}
	var buf []instance
	receiver := int32(-1)
	for _, g := range order {
		if g.ref.rank != receiver {
			receiver, buf = g.ref.rank, buf[:0]
		}
		c := &tr.Ranks[g.ref.rank].Calls[g.ref.call]
		// Messages sent earlier than a buffered instance's message but
		// received after it: that instance waited because of the order.
		for _, mi := range g.messages {
			m := &tr.Messages[mi]
			sendAt := tr.Ranks[m.Src].Calls[m.SendCall].Enter
			kept := buf[:0]
			for _, in := range buf {
				if in.sendAt > sendAt {
					id := WrongOrderDiffSource
					if in.src == m.Src {
						id = WrongOrderSameSource
					}
					a.add(id, g.ref.rank, in.name, in.wait)
					continue
				}
				kept = append(kept, in)
			}
			buf = kept
		}
		wait := min(g.sendAt, c.Leave) - c.Enter
		if wait <= 0 {
			continue
		}
		a.add(LateSender, g.ref.rank, c.Name, wait)
		causes[g.ref] = cause{g.src, g.sendAt}
		if len(buf) == wrongOrderBufferEntries {
			buf = append(buf[:0], buf[1:]...)
		}
		buf = append(buf, instance{g.sendAt, g.src, wait, c.Name})
	}
	for ref, g := range sgroups {
		c := &tr.Ranks[ref.rank].Calls[ref.call]
		wait := min(g.postAt, c.Leave) - c.Enter
		if wait <= 0 {
			continue
		}
		a.add(LateReceiver, ref.rank, c.Name, wait)
		if old, ok := causes[ref]; !ok || g.postAt > old.at {
			causes[ref] = cause{g.dst, g.postAt}
		}
	}
	return notes
}

// collKey identifies one collective instance: the seq-th blocking
// collective on communicator comm.
type collKey struct {
	comm int32
	seq  int
}

// member is one rank's call of a collective instance.
type member struct {
	rank  int32
	call  int32
	enter int64
	leave int64
}

// collectives computes the collective patterns, and records the causes
// of every blocking collective (and of MPI_Init and MPI_Finalize, which
// synchronise all ranks) for the critical path.
func collectives(tr *trace.Trace, a *acc, causes map[callRef]cause) []string {
	var notes []string
	inst := map[collKey][]member{}
	var keys []collKey
	anyBytes, anyColl := false, false
	seq := map[int32]int{}
	for r := range tr.Ranks {
		clear(seq)
		for i := range tr.Ranks[r].Calls {
			c := &tr.Ranks[r].Calls[i]
			comm := c.Comm
			switch c.Kind {
			case trace.KindCollective:
				anyColl = true
				if c.SendBytes+c.RecvBytes > 0 {
					anyBytes = true
				}
			case trace.KindInit:
				comm = -2
			case trace.KindFinalize:
				comm = -3
			default:
				continue
			}
			if comm == -1 {
				continue
			}
			k := collKey{comm, seq[comm]}
			seq[comm]++
			if inst[k] == nil {
				keys = append(keys, k)
			}
			inst[k] = append(inst[k], member{int32(r), int32(i), c.Enter, c.Leave})
		}
	}
	if anyColl && !anyBytes {
		notes = append(notes, "the trace has no collective payload sizes, so the payload rule (no pattern for collectives that move no data) was not applied")
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].comm != keys[j].comm {
			return keys[i].comm < keys[j].comm
		}
		return keys[i].seq < keys[j].seq
	})
	incomplete := 0
	for _, k := range keys {
		ms := inst[k]
		size := len(tr.Ranks)
		if k.comm >= 0 && int(k.comm) < len(tr.Comms) && len(tr.Comms[k.comm].Members) > 0 {
			size = len(tr.Comms[k.comm].Members)
		}
		if len(ms) != size {
			incomplete++
			continue
		}
		if size < 2 {
			continue
		}
		first := &tr.Ranks[ms[0].rank].Calls[ms[0].call]
		latest, firstLeave := ms[0], ms[0].leave
		var payload int64
		for _, m := range ms {
			if m.enter > latest.enter {
				latest = m
			}
			firstLeave = min(firstLeave, m.leave)
			c := &tr.Ranks[m.rank].Calls[m.call]
			payload += c.SendBytes + c.RecvBytes
		}
		hasPayload := payload > 0 || !anyBytes
		switch {
		case k.comm < 0: // MPI_Init, MPI_Finalize: the critical path only
			syncCauses(ms, latest, causes)
		case first.Coll == trace.CollBarrier:
			syncCauses(ms, latest, causes)
			waitAndCompletion(tr, a, ms, latest.enter, firstLeave, WaitBarrier, BarrierCompletion)
		case first.Coll == trace.CollAllreduce || first.Coll == trace.CollAllgather ||
			first.Coll == trace.CollAlltoall || first.Coll == trace.CollReduceScatter:
			syncCauses(ms, latest, causes)
			if hasPayload {
				waitAndCompletion(tr, a, ms, latest.enter, firstLeave, WaitNxN, NxNCompletion)
			}
		case first.Coll == trace.CollBcast || first.Coll == trace.CollScatter:
			root, ok := rootMember(ms, first.Root)
			if !ok {
				incomplete++
				continue
			}
			for _, m := range ms {
				if m.rank == root.rank {
					continue
				}
				waitFor(tr, a, causes, m, root, LateBroadcast, hasPayload)
			}
		case first.Coll == trace.CollReduce || first.Coll == trace.CollGather:
			root, ok := rootMember(ms, first.Root)
			if !ok {
				incomplete++
				continue
			}
			var last member
			last.enter = -1 << 62
			for _, m := range ms {
				if m.rank != root.rank && m.enter > last.enter {
					last = m
				}
			}
			waitFor(tr, a, causes, root, last, EarlyReduce, hasPayload)
		case first.Coll == trace.CollScan:
			// Rank n in communicator order waits for ranks 0..n-1.
			ordered := commOrder(tr, k.comm, ms)
			var prev member
			prev.enter = -1 << 62
			for n, m := range ordered {
				if n > 0 {
					waitFor(tr, a, causes, m, prev, EarlyScan, hasPayload)
				}
				if m.enter > prev.enter {
					prev = m
				}
			}
		default: // Alltoallv/w and other synchronising collectives: the path only
			syncCauses(ms, latest, causes)
		}
	}
	if incomplete > 0 {
		notes = append(notes, fmt.Sprintf("%d collective operations lack some of their ranks' calls (or their root) and were left out", incomplete))
	}
	return notes
}

// waitFor handles member m waiting for member by to enter: the wait,
// min(by's enter, m's leave) − m's enter, is recorded as m's cause and,
// when count is set, added to pattern id.
func waitFor(tr *trace.Trace, a *acc, causes map[callRef]cause, m, by member, id string, count bool) {
	wait := min(by.enter, m.leave) - m.enter
	if wait <= 0 {
		return
	}
	causes[callRef{m.rank, m.call}] = cause{by.rank, by.enter}
	if count {
		a.add(id, m.rank, tr.Ranks[m.rank].Calls[m.call].Name, wait)
	}
}

// syncCauses records, for every member that entered before the latest,
// that it waited for the latest.
func syncCauses(ms []member, latest member, causes map[callRef]cause) {
	for _, m := range ms {
		if m.enter < latest.enter && m.leave > m.enter {
			causes[callRef{m.rank, m.call}] = cause{latest.rank, latest.enter}
		}
	}
}

// waitAndCompletion adds each member's wait until the latest entry (to
// wait) and its time after the first leave (to completion).
func waitAndCompletion(tr *trace.Trace, a *acc, ms []member, latestEnter, firstLeave int64, wait, completion string) {
	for _, m := range ms {
		c := &tr.Ranks[m.rank].Calls[m.call]
		w := max(0, min(latestEnter, m.leave)-m.enter)
		a.add(wait, m.rank, c.Name, w)
		a.add(completion, m.rank, c.Name, m.leave-max(firstLeave, m.enter+w))
	}
}

// rootMember finds the root's call among ms.
func rootMember(ms []member, root int32) (member, bool) {
	for _, m := range ms {
		if m.rank == root {
			return m, true
		}
	}
	return member{}, false
}

// commOrder returns ms in communicator rank order (world rank order when
// the communicator's members are unknown).
func commOrder(tr *trace.Trace, comm int32, ms []member) []member {
	pos := map[int32]int{}
	if comm >= 0 && int(comm) < len(tr.Comms) {
		for i, w := range tr.Comms[comm].Members {
			pos[w] = i
		}
	}
	out := append([]member(nil), ms...)
	sort.SliceStable(out, func(i, j int) bool {
		pi, iok := pos[out[i].rank]
		pj, jok := pos[out[j].rank]
		if iok && jok {
			return pi < pj
		}
		return out[i].rank < out[j].rank
	})
	return out
}
