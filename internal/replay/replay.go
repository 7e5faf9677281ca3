// Package replay replays a trace on an ideal network (zero latency,
// infinite bandwidth; Dimemas' semantics as BSC's basicanalysis uses them)
// to split communication efficiency into serialisation and transfer.
//
// Each rank becomes a list of operations (docs/metrics.md, "Ideal-network
// replay"): a CPU burst for the time between two MPI calls (kept as
// measured), and for each call the operations of its messages and
// collectives. The simulation is event-driven: a rank runs until it blocks
// on a message or a collective, and the operation that unblocks it puts
// it back on the ready queue, so the work is proportional to the
// operations. A replay that cannot finish is a deadlock, reported with the
// operation each blocked rank waits in; it never hangs.
package replay

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
)

// DefaultEagerLimit is the message size (bytes) from which a send waits
// for its receive, Dimemas' -S 32k as basicanalysis runs it.
const DefaultEagerLimit = 32768

// Options are the replay's semantics.
type Options struct {
	// EagerLimit: messages of at least this many bytes use rendezvous;
	// 0 means DefaultEagerLimit.
	EagerLimit int64
	// NoInitBarrier leaves out the barrier prv2dim adds at the end of
	// MPI_Init.
	NoInitBarrier bool

	// sendFirst puts a call's sends before its receive posts (a wrong
	// MPI_Sendrecv, for the tests: it must deadlock, not hang).
	sendFirst bool
}

// Result is what the replay found.
type Result struct {
	// RuntimeNS is the replayed runtime, T_ideal.
	RuntimeNS int64
	// UsefulMaxNS is the maximum over ranks of the time outside MPI.
	UsefulMaxNS int64
	// EagerLimit is the eager limit the replay used (bytes).
	EagerLimit int64
	// InitBarrier says whether the replay added the barrier at the end of
	// MPI_Init (every rank has one MPI_Init and NoInitBarrier is unset).
	InitBarrier bool
}

// The operations of a rank.
const (
	opBurst    = iota // arg: duration (ns)
	opPost            // arg: message; post the receive
	opSend            // arg: message; a blocking send (rendezvous waits for the post)
	opIsend           // arg: message; a send that never blocks
	opWaitSend        // arg: message; the completion of an Isend
	opWaitRecv        // arg: message; the completion of a receive
	opSync            // comm, arg: sequence number; a collective
)

type op struct {
	kind uint8
	// rootOnly: a collective where only the root waits (MPI_Reduce,
	// Dimemas' GLOBAL_OP_ROOT_SYNC); root: this rank is its root.
	rootOnly, root bool
	// call is the rank's call the operation belongs to (-1: none).
	call int32
	// comm is a collective's communicator (initComm for the Init barrier).
	comm int32
	arg  int64
}

// initComm is the communicator key of the barrier at the end of MPI_Init.
const initComm = -1

type msgState struct {
	post, sent, avail int64 // -1 until known
	rendezvous        bool
	senderWaits       bool // the sender is blocked until avail is known
	receiverWaits     bool // the receiver is blocked until avail is known
}

type instKey struct {
	comm int32
	seq  int64
}

type instance struct {
	arrived []int32 // the ranks that arrived
	waiting []int32 // the ranks blocked in it
	at      int64   // the latest arrival
}

type sim struct {
	tr      *trace.Trace
	ops     [][]op
	pc      []int
	clock   []int64
	blocked []bool
	msgs    []msgState
	insts   map[instKey]*instance
	ready   []int32
	size    func(comm int32) int
}

// Run replays tr. A deadlock is an error naming where each blocked rank is.
func Run(tr *trace.Trace, opt Options) (*Result, error) {
	if tr == nil || len(tr.Ranks) == 0 {
		return nil, errors.New("replay: the trace has no ranks")
	}
	if opt.EagerLimit <= 0 {
		opt.EagerLimit = DefaultEagerLimit
	}
	s := &sim{tr: tr, insts: map[instKey]*instance{}}
	res := &Result{EagerLimit: opt.EagerLimit}
	n := len(tr.Ranks)
	res.InitBarrier = !opt.NoInitBarrier
	for _, r := range tr.Ranks {
		inits := 0
		for _, c := range r.Calls {
			if c.Kind == trace.KindInit {
				inits++
			}
		}
		res.InitBarrier = res.InitBarrier && inits == 1
	}
	s.size = func(comm int32) int {
		if comm == initComm {
			return n
		}
		return len(tr.Comms[comm].Members)
	}
	if err := s.build(opt, res); err != nil {
		return nil, err
	}
	s.pc = make([]int, n)
	s.clock = make([]int64, n)
	s.blocked = make([]bool, n)
	for r := n - 1; r >= 0; r-- {
		s.ready = append(s.ready, int32(r))
	}
	for len(s.ready) > 0 {
		r := s.ready[len(s.ready)-1]
		s.ready = s.ready[:len(s.ready)-1]
		s.run(r)
	}
	if err := s.deadlock(); err != nil {
		return nil, err
	}
	for _, c := range s.clock {
		res.RuntimeNS = max(res.RuntimeNS, c)
	}
	return res, nil
}

// attachment is a message operation of a call, to be ordered.
type attachment struct {
	call  int32
	phase uint8
	t     int64
	msg   int32
}

// build turns each rank's calls and messages into its operations and
// checks the trace's indices (a trace is input: any producer may be wrong).
func (s *sim) build(opt Options, res *Result) error {
	tr := s.tr
	n := len(tr.Ranks)
	if len(tr.Comms) == 0 {
		return errors.New("replay: the trace has no communicators (Comms[0] must be MPI_COMM_WORLD)")
	}
	for ci, c := range tr.Comms {
		for _, m := range c.Members {
			if m < 0 || int(m) >= n {
				return fmt.Errorf("replay: communicator %d names rank %d; the trace has %d", ci, m, n)
			}
		}
	}
	if len(tr.Messages) > math.MaxInt32 {
		return fmt.Errorf("replay: %d messages are more than the replay handles", len(tr.Messages))
	}
	att := make([][]attachment, n)
	s.msgs = make([]msgState, len(tr.Messages))
	postPhase, sendPhase := uint8(0), uint8(1)
	if opt.sendFirst {
		postPhase, sendPhase = 1, 0
	}
	for i, m := range tr.Messages {
		if m.Src < 0 || int(m.Src) >= n || m.Dst < 0 || int(m.Dst) >= n {
			return fmt.Errorf("replay: message %d goes from rank %d to rank %d; the trace has %d ranks", i, m.Src, m.Dst, n)
		}
		sc, rc := int32(len(tr.Ranks[m.Src].Calls)), int32(len(tr.Ranks[m.Dst].Calls))
		if m.SendCall < 0 || m.SendCall >= sc || m.SendDone >= sc || m.SendDone >= 0 && m.SendDone < m.SendCall ||
			m.RecvPost < 0 || m.RecvPost >= rc || m.RecvDone < m.RecvPost || m.RecvDone >= rc {
			return fmt.Errorf("replay: message %d (rank %d to rank %d) is attached to calls that do not exist or complete before they start", i, m.Src, m.Dst)
		}
		s.msgs[i] = msgState{post: -1, sent: -1, avail: -1, rendezvous: m.Bytes >= opt.EagerLimit}
		mi := int32(i)
		att[m.Dst] = append(att[m.Dst], attachment{m.RecvPost, postPhase, m.LogRecv, mi}, attachment{m.RecvDone, 3, m.PhysRecv, mi})
		att[m.Src] = append(att[m.Src], attachment{m.SendCall, sendPhase, m.LogSend, mi})
		if m.SendDone > m.SendCall {
			att[m.Src] = append(att[m.Src], attachment{m.SendDone, 2, m.PhysSend, mi})
		}
	}
	s.ops = make([][]op, n)
	seq := map[int32]int64{}
	// members[c] is communicator c's member set, built on its first use:
	// each check is then O(1), not O(members).
	members := make([]map[int32]bool, len(tr.Comms))
	isMember := func(comm, r int32) bool {
		if members[comm] == nil {
			members[comm] = make(map[int32]bool, len(tr.Comms[comm].Members))
			for _, m := range tr.Comms[comm].Members {
				members[comm][m] = true
			}
		}
		return members[comm][r]
	}
	for r := range tr.Ranks {
		a := att[r]
		sort.Slice(a, func(i, j int) bool {
			x, y := a[i], a[j]
			if x.call != y.call {
				return x.call < y.call
			}
			if x.phase != y.phase {
				return x.phase < y.phase
			}
			if x.t != y.t {
				return x.t < y.t
			}
			return x.msg < y.msg
		})
		calls := tr.Ranks[r].Calls
		ops := make([]op, 0, 2*len(calls)+len(a)+1)
		var prev, useful int64
		burst := func(until int64) {
			if d := until - prev; d > 0 {
				ops = append(ops, op{kind: opBurst, call: -1, arg: d})
				useful += d
			}
			prev = max(prev, until)
		}
		clear(seq)
		for ci, c := range calls {
			burst(c.Enter)
			for len(a) > 0 && a[0].call == int32(ci) {
				x := a[0]
				a = a[1:]
				o := op{call: int32(ci), arg: int64(x.msg)}
				switch x.phase {
				case postPhase:
					o.kind = opPost
				case sendPhase:
					o.kind = opSend
					if c.Kind == trace.KindIsend {
						o.kind = opIsend
					}
				case 2:
					o.kind = opWaitSend
				default:
					o.kind = opWaitRecv
				}
				ops = append(ops, o)
			}
			if c.Kind == trace.KindCollective {
				comm := max(c.Comm, 0)
				if int(comm) >= len(tr.Comms) || !isMember(comm, int32(r)) {
					return fmt.Errorf("replay: rank %d calls %s (call %d) on communicator %d, which it is not a member of", r, c.Name, ci, comm)
				}
				o := op{kind: opSync, call: int32(ci), comm: comm, arg: seq[comm]}
				seq[comm]++
				if c.Coll == trace.CollReduce && c.Root >= 0 {
					o.rootOnly, o.root = true, c.Root == int32(r)
				}
				ops = append(ops, o)
			}
			if c.Kind == trace.KindInit && res.InitBarrier {
				ops = append(ops, op{kind: opSync, call: int32(ci), comm: initComm})
			}
			prev = max(prev, c.Leave)
		}
		burst(tr.Ranks[r].End)
		s.ops[r] = ops
		res.UsefulMaxNS = max(res.UsefulMaxNS, useful)
	}
	return nil
}

// wake unblocks rank r at time t: its blocking operation is done.
func (s *sim) wake(r int32, t int64) {
	s.clock[r] = max(s.clock[r], t)
	s.pc[r]++
	s.blocked[r] = false
	s.ready = append(s.ready, r)
}

// available records that message mi is available at t, and wakes whoever
// waits for that.
func (s *sim) available(mi int64, t int64) {
	m := &s.msgs[mi]
	m.avail = t
	msg := &s.tr.Messages[mi]
	if m.senderWaits {
		m.senderWaits = false
		s.wake(msg.Src, t)
	}
	if m.receiverWaits {
		m.receiverWaits = false
		s.wake(msg.Dst, t)
	}
}

// run advances rank r until it blocks or ends.
func (s *sim) run(r int32) {
	ops := s.ops[r]
	for s.pc[r] < len(ops) {
		o := &ops[s.pc[r]]
		now := s.clock[r]
		switch o.kind {
		case opBurst:
			s.clock[r] += o.arg
		case opPost:
			m := &s.msgs[o.arg]
			m.post = now
			if m.rendezvous && m.sent >= 0 {
				s.available(o.arg, max(m.sent, now))
			}
		case opSend, opIsend:
			m := &s.msgs[o.arg]
			m.sent = now
			switch {
			case !m.rendezvous:
				s.available(o.arg, now)
			case m.post >= 0:
				t := max(now, m.post)
				s.available(o.arg, t)
				if o.kind == opSend {
					s.clock[r] = t
				}
			case o.kind == opSend:
				m.senderWaits = true
				s.blocked[r] = true
				return
			}
		case opWaitSend, opWaitRecv:
			m := &s.msgs[o.arg]
			if m.avail < 0 {
				if o.kind == opWaitSend {
					m.senderWaits = true
				} else {
					m.receiverWaits = true
				}
				s.blocked[r] = true
				return
			}
			s.clock[r] = max(now, m.avail)
		case opSync:
			k := instKey{o.comm, o.arg}
			in := s.insts[k]
			if in == nil {
				in = &instance{}
				s.insts[k] = in
			}
			in.arrived = append(in.arrived, r)
			in.at = max(in.at, now)
			wait := !o.rootOnly || o.root
			if wait {
				in.waiting = append(in.waiting, r)
			}
			if len(in.arrived) < s.size(o.comm) {
				if wait {
					s.blocked[r] = true
					return
				}
				break
			}
			delete(s.insts, k)
			for _, w := range in.waiting {
				if w != r {
					s.wake(w, in.at)
				}
			}
			if wait {
				s.clock[r] = in.at
			}
		}
		s.pc[r]++
	}
}

// maxReported bounds the blocked ranks a deadlock error lists.
const maxReported = 8

// deadlock returns an error naming each blocked rank, or nil when every
// rank finished.
func (s *sim) deadlock() error {
	var lines []string
	blocked := 0
	for r := range s.ops {
		if s.pc[r] >= len(s.ops[r]) {
			continue
		}
		blocked++
		if len(lines) < maxReported {
			lines = append(lines, s.describe(int32(r)))
		}
	}
	if blocked == 0 {
		return nil
	}
	if blocked > len(lines) {
		lines = append(lines, fmt.Sprintf("and %d more rank(s)", blocked-len(lines)))
	}
	return fmt.Errorf("replay: deadlock on the ideal network, %d rank(s) blocked: %s", blocked, strings.Join(lines, "; "))
}

// describe says where blocked rank r waits and for what.
func (s *sim) describe(r int32) string {
	o := s.ops[r][s.pc[r]]
	where := fmt.Sprintf("rank %d", r)
	if o.call >= 0 {
		c := s.tr.Ranks[r].Calls[o.call]
		where = fmt.Sprintf("rank %d in %s (its call %d, at %s of the trace)", r, c.Name, o.call, units.FixedSeconds(c.Enter, 6))
	}
	switch o.kind {
	case opSend:
		m := s.tr.Messages[o.arg]
		return fmt.Sprintf("%s waits for rank %d to post the receive of its %d-byte message (tag %d)", where, m.Dst, m.Bytes, m.Tag)
	case opWaitSend:
		m := s.tr.Messages[o.arg]
		return fmt.Sprintf("%s waits for rank %d to post the receive of its %d-byte message (tag %d) to complete the send", where, m.Dst, m.Bytes, m.Tag)
	case opWaitRecv:
		m := s.tr.Messages[o.arg]
		return fmt.Sprintf("%s waits for the %d-byte message (tag %d) from rank %d, which rank %d has not sent", where, m.Bytes, m.Tag, m.Src, m.Src)
	case opSync:
		in := s.insts[instKey{o.comm, o.arg}]
		var members []int32
		what := "the barrier at the end of MPI_Init"
		if o.comm == initComm {
			for i := range s.tr.Ranks {
				members = append(members, int32(i))
			}
		} else {
			members = s.tr.Comms[o.comm].Members
			what = fmt.Sprintf("collective %d on communicator %d", o.arg+1, o.comm)
		}
		arrived := map[int32]bool{}
		if in != nil {
			for _, a := range in.arrived {
				arrived[a] = true
			}
		}
		var missing []string
		for _, m := range members {
			if !arrived[m] {
				missing = append(missing, strconv.Itoa(int(m)))
				if len(missing) == maxReported {
					missing = append(missing, "…")
					break
				}
			}
		}
		return fmt.Sprintf("%s waits in %s for rank(s) %s", where, what, strings.Join(missing, ", "))
	}
	return where
}

// Apply replays tr and records the result in m.IdealNetwork.
func Apply(m *measure.Measurement, tr *trace.Trace, opt Options) error {
	res, err := Run(tr, opt)
	if err != nil {
		return err
	}
	if res.RuntimeNS < 1 {
		return errors.New("replay: the trace has no duration to replay")
	}
	method := "popmon replay of its own trace"
	if strings.HasPrefix(tr.Source, "paraver") {
		method = "popmon replay of a Paraver trace"
	}
	if !res.InitBarrier {
		method += ", without the MPI_Init barrier"
	}
	m.IdealNetwork = &measure.IdealNetwork{RuntimeNS: res.RuntimeNS, UsefulMaxNS: res.UsefulMaxNS, EagerLimit: res.EagerLimit, Method: method}
	return nil
}
