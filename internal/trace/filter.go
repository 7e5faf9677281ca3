package trace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/units"
)

// Selection picks part of a trace for an export: some ranks, a time
// window, or both.
type Selection struct {
	// Ranks are the world ranks to keep; nil keeps every rank.
	Ranks []int32
	// From and To bound the window (ns from the trace start); To == 0
	// means the trace's end. A call or span is kept when it overlaps the
	// window, with its own times (not clipped).
	From, To int64
}

// Empty reports whether s keeps everything.
func (s Selection) Empty() bool { return s.Ranks == nil && s.From == 0 && s.To == 0 }

// Filter returns the part of tr that s selects. The result keeps every
// rank's slot (world ranks keep their numbers): an unselected rank has no
// calls and no spans. A message is kept when its sending and receiving
// calls are both kept. tr itself is not changed.
func (tr *Trace) Filter(s Selection) (*Trace, error) {
	if s.Empty() {
		return tr, nil
	}
	to := s.To
	if to == 0 {
		to = tr.End
	}
	if s.From < 0 || to < s.From {
		return nil, fmt.Errorf("window %d:%d ns is empty or negative", s.From, s.To)
	}
	keep := make([]bool, len(tr.Ranks))
	if s.Ranks == nil {
		for r := range keep {
			keep[r] = true
		}
	}
	for _, r := range s.Ranks {
		if r < 0 || int(r) >= len(tr.Ranks) {
			return nil, fmt.Errorf("rank %d is not in the trace (ranks 0-%d)", r, len(tr.Ranks)-1)
		}
		keep[r] = true
	}
	in := func(enter, leave int64) bool { return leave >= s.From && enter <= to }
	out := &Trace{Ranks: make([]Rank, len(tr.Ranks)), Comms: tr.Comms, Source: tr.Source,
		Notes: append(append([]string(nil), tr.Notes...), "filtered: "+s.String())}
	// newIndex[r][i] is call i's index in the result, -1 when dropped.
	newIndex := make([][]int32, len(tr.Ranks))
	for r := range tr.Ranks {
		src := &tr.Ranks[r]
		dst := &out.Ranks[r]
		dst.Threads, dst.Node = src.Threads, src.Node
		newIndex[r] = make([]int32, len(src.Calls))
		for i := range src.Calls {
			newIndex[r][i] = -1
			c := &src.Calls[i]
			if keep[r] && in(c.Enter, c.Leave) {
				newIndex[r][i] = int32(len(dst.Calls))
				dst.Calls = append(dst.Calls, *c)
				dst.End = max(dst.End, c.Leave)
			}
		}
		if !keep[r] {
			continue
		}
		for _, sp := range src.Spans {
			if in(sp.Enter, sp.Leave) {
				dst.Spans = append(dst.Spans, sp)
				dst.End = max(dst.End, sp.Leave)
			}
		}
		if src.End >= s.From {
			dst.End = max(dst.End, min(src.End, to))
		}
		out.End = max(out.End, dst.End)
	}
	remap := func(r, i int32) int32 {
		if i < 0 || r < 0 || int(r) >= len(newIndex) || int(i) >= len(newIndex[r]) {
			return -1
		}
		return newIndex[r][i]
	}
	for _, m := range tr.Messages {
		n := m
		n.SendCall, n.SendDone = remap(m.Src, m.SendCall), remap(m.Src, m.SendDone)
		n.RecvPost, n.RecvDone = remap(m.Dst, m.RecvPost), remap(m.Dst, m.RecvDone)
		if n.SendCall < 0 || n.RecvDone < 0 {
			continue
		}
		if n.RecvPost < 0 { // posted before the window: the completion stands in
			n.RecvPost = n.RecvDone
		}
		out.Messages = append(out.Messages, n)
	}
	return out, nil
}

// String describes s as the command-line options that give it.
func (s Selection) String() string {
	var parts []string
	if s.Ranks != nil {
		rs := make([]string, len(s.Ranks))
		for i, r := range s.Ranks {
			rs[i] = strconv.Itoa(int(r))
		}
		parts = append(parts, "ranks "+strings.Join(rs, ","))
	}
	if s.From != 0 || s.To != 0 {
		to := "end"
		if s.To != 0 {
			to = strconv.FormatFloat(float64(s.To)/1e9, 'g', -1, 64) + " s"
		}
		parts = append(parts, fmt.Sprintf("window %s s to %s", strconv.FormatFloat(float64(s.From)/1e9, 'g', -1, 64), to))
	}
	if parts == nil {
		return "everything"
	}
	return strings.Join(parts, ", ")
}

// ParseRanks parses a rank list such as "0-3,8,10-11" (sorted, without
// duplicates in the result).
func ParseRanks(list string) ([]int32, error) {
	seen := map[int32]bool{}
	var out []int32
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 31)
		if err != nil {
			return nil, fmt.Errorf("rank list %q: %q is not a rank or a range A-B", list, part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 31); err != nil || b < a {
				return nil, fmt.Errorf("rank list %q: %q is not a range A-B with A ≤ B", list, part)
			}
		}
		if b-a > 1<<20 {
			return nil, fmt.Errorf("rank list %q: range %q is too long", list, part)
		}
		for r := a; r <= b; r++ {
			if !seen[int32(r)] {
				seen[int32(r)] = true
				out = append(out, int32(r))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// ParseWindow parses a window "T0:T1" in seconds from the trace start
// (either side may be empty: "2.5:" is from 2.5 s to the end) into ns.
func ParseWindow(w string) (from, to int64, err error) {
	a, b, ok := strings.Cut(w, ":")
	if !ok {
		return 0, 0, fmt.Errorf("window %q: give T0:T1 in seconds from the trace start (T0: or :T1 for open ends)", w)
	}
	parse := func(s string) (int64, error) {
		if s == "" {
			return 0, nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || v > 1e9 {
			return 0, fmt.Errorf("window %q: %q is not a time in seconds ≥ 0", w, s)
		}
		return int64(v*1e9 + 0.5), nil
	}
	if from, err = parse(a); err != nil {
		return 0, 0, err
	}
	if to, err = parse(b); err != nil {
		return 0, 0, err
	}
	if b != "" && to <= from {
		return 0, 0, fmt.Errorf("window %q: the end must be after the start", w)
	}
	return from, to, nil
}

// Summary is the one-line summary of a trace: "4 ranks, 1200 MPI calls,
// 300 messages, 1.234 s" (popmon trace export's line).
func (tr *Trace) Summary() string {
	calls := 0
	for _, r := range tr.Ranks {
		calls += len(r.Calls)
	}
	return fmt.Sprintf("%d ranks, %d MPI calls, %d messages, %s", len(tr.Ranks), calls, len(tr.Messages), units.FixedSeconds(tr.End, 3))
}
