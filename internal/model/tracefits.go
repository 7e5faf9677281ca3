package model

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/popmon/popmon/internal/trace"
)

// TraceSamples are the communication samples of one run's event trace:
// every matched point-to-point message with its transfer time, and every
// collective operation with its completion time.
type TraceSamples struct {
	// P2P has one sample per message: Bytes its size, TimeS its transfer
	// part PhysRecv − max(LogSend, LogRecv) (the time the data travelled
	// once both sides were there: waiting excluded), X the ranks.
	P2P []Sample
	// Coll has one sample per collective operation (all members'
	// calls of one instance on one communicator): Call its name, X the
	// communicator's size, Bytes the largest bytes one member sends or
	// receives, TimeS the completion part: the last member's leave − the
	// last member's entry.
	Coll []Sample
}

// SamplesFromTrace extracts the communication samples of tr. Collective
// instances are the k-th blocking collective of each member on a
// communicator (MPI orders collectives per communicator); an instance
// whose members disagree on the operation is left out.
func SamplesFromTrace(tr *trace.Trace) TraceSamples {
	var s TraceSamples
	if tr == nil {
		return s
	}
	x := float64(len(tr.Ranks))
	for _, m := range tr.Messages {
		if m.PhysRecv <= 0 || m.Bytes < 0 {
			continue
		}
		t := m.PhysRecv - max(m.LogSend, m.LogRecv)
		if t < 0 {
			continue
		}
		s.P2P = append(s.P2P, Sample{X: x, Bytes: float64(m.Bytes), TimeS: float64(t) / 1e9, Weight: 1})
	}
	// Per communicator and member, the blocking collectives in order.
	type key struct {
		comm int32
		rank int
	}
	seq := map[key][]trace.Call{}
	for r := range tr.Ranks {
		for _, c := range tr.Ranks[r].Calls {
			if c.Kind == trace.KindCollective && c.Comm >= 0 && int(c.Comm) < len(tr.Comms) {
				k := key{c.Comm, r}
				seq[k] = append(seq[k], c)
			}
		}
	}
	for ci, comm := range tr.Comms {
		if len(comm.Members) < 2 {
			continue
		}
		n := math.MaxInt
		for _, m := range comm.Members {
			n = min(n, len(seq[key{int32(ci), int(m)}]))
		}
		for k := 0; k < n; k++ {
			var lastIn, lastOut, bytes int64
			name := ""
			same := true
			for j, m := range comm.Members {
				c := seq[key{int32(ci), int(m)}][k]
				if j == 0 {
					name = c.Name
				} else if c.Name != name {
					same = false
				}
				lastIn, lastOut = max(lastIn, c.Enter), max(lastOut, c.Leave)
				bytes = max(bytes, c.SendBytes, c.RecvBytes)
			}
			if !same || lastOut < lastIn {
				continue
			}
			s.Coll = append(s.Coll, Sample{Call: name, X: float64(len(comm.Members)), Bytes: float64(bytes),
				TimeS: float64(lastOut-lastIn) / 1e9, Weight: 1})
		}
	}
	return s
}

// medianBySize reduces samples to one per message size: the median time,
// weighted by the number of messages of that size.
func medianBySize(samples []Sample) []Sample {
	by := map[float64][]float64{}
	for _, s := range samples {
		by[s.Bytes] = append(by[s.Bytes], s.TimeS)
	}
	sizes := make([]float64, 0, len(by))
	for b := range by {
		sizes = append(sizes, b)
	}
	sort.Float64s(sizes)
	out := make([]Sample, 0, len(sizes))
	for _, b := range sizes {
		ts := by[b]
		sort.Float64s(ts)
		med := ts[len(ts)/2]
		if len(ts)%2 == 0 {
			med = (ts[len(ts)/2-1] + ts[len(ts)/2]) / 2
		}
		out = append(out, Sample{Bytes: b, TimeS: med, Weight: 1})
	}
	return out
}

// fitTraceComm fits the communication models to the fitted runs' trace
// samples: the point-to-point regimes on the per-size medians of all
// messages (each size one sample, as the research note's EPOCH fit), and
// one collective fit per operation over its instances.
func fitTraceComm(fit []Point) (CommFits, bool) {
	var eager, rdv []Sample
	coll := map[string][]Sample{}
	var names []string
	any := false
	for _, p := range fit {
		if p.Trace == nil {
			continue
		}
		any = true
		for _, s := range p.Trace.P2P {
			if s.Bytes < EagerLimit {
				eager = append(eager, s)
			} else {
				rdv = append(rdv, s)
			}
		}
		for _, s := range p.Trace.Coll {
			if _, ok := coll[s.Call]; !ok {
				names = append(names, s.Call)
			}
			coll[s.Call] = append(coll[s.Call], s)
		}
	}
	if !any {
		return CommFits{}, false
	}
	var out CommFits
	var missing []string
	for _, g := range []struct {
		id string
		s  []Sample
	}{{"p2p-eager", eager}, {"p2p-rendezvous", rdv}} {
		med := medianBySize(g.s)
		if f, ok := FitP2P(med); ok {
			f.ID = g.id
			f.Formula += " (per-size medians of the trace's messages)"
			out.Fits = append(out.Fits, f)
		} else if len(g.s) > 0 {
			missing = append(missing, fmt.Sprintf("%s: %d message sizes, too few for 3 parameters", g.id, len(med)))
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if f, ok := FitColl(coll[name]); ok {
			f.ID = "collective:" + name
			out.Fits = append(out.Fits, f)
		} else {
			missing = append(missing, fmt.Sprintf("%s: %d instances at too few communicator sizes or message sizes", name, len(coll[name])))
		}
	}
	out.Missing = strings.Join(missing, "; ")
	return out, true
}
