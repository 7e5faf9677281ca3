package trace

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRanks(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int32
		err  string
	}{
		{"0", []int32{0}, ""},
		{"3,0-2,2", []int32{0, 1, 2, 3}, ""},
		{" 8 , 10-11", []int32{8, 10, 11}, ""},
		{"", nil, "not a rank"},
		{"a", nil, "not a rank"},
		{"-1", nil, "not a rank"},
		{"3-1", nil, "A ≤ B"},
		{"0-2000000", nil, "too long"},
	} {
		got, err := ParseRanks(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseWindow(t *testing.T) {
	for _, c := range []struct {
		in       string
		from, to int64
		err      string
	}{
		{"1.5:2", 1_500_000_000, 2_000_000_000, ""},
		{"0.25:", 250_000_000, 0, ""},
		{":3", 0, 3_000_000_000, ""},
		{"2", 0, 0, "T0:T1"},
		{"2:1", 0, 0, "after the start"},
		{"x:1", 0, 0, "not a time"},
		{"-1:1", 0, 0, "not a time"},
	} {
		from, to, err := ParseWindow(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || from != c.from || to != c.to {
			t.Errorf("%q = %d, %d, %v; want %d, %d", c.in, from, to, err, c.from, c.to)
		}
	}
}

func TestFilter(t *testing.T) {
	// Rank 0 sends at 10 and 30 ns; rank 1 receives over [5, 12] and [25, 31].
	tr := &Trace{Ranks: []Rank{
		{Calls: []Call{{Name: "MPI_Send", Enter: 10, Leave: 11}, {Name: "MPI_Send", Enter: 30, Leave: 31}}, End: 40},
		{Calls: []Call{{Name: "MPI_Recv", Enter: 5, Leave: 12}, {Name: "MPI_Recv", Enter: 25, Leave: 31}},
			Spans: []Span{{Kind: "region", Enter: 0, Leave: 40}}, End: 40},
	}, End: 40}
	tr.Messages = []Message{
		{Src: 0, Dst: 1, SendCall: 0, SendDone: 0, RecvPost: 0, RecvDone: 0},
		{Src: 0, Dst: 1, SendCall: 1, SendDone: 1, RecvPost: 1, RecvDone: 1},
	}
	if same, err := tr.Filter(Selection{}); err != nil || same != tr {
		t.Errorf("an empty selection must return the trace itself")
	}
	w, err := tr.Filter(Selection{From: 20, To: 35})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Ranks[0].Calls) != 1 || w.Ranks[0].Calls[0].Enter != 30 || len(w.Messages) != 1 ||
		w.Messages[0].SendCall != 0 || w.Messages[0].RecvDone != 0 || w.Ranks[0].End != 35 || w.End != 40 || len(w.Ranks[1].Spans) != 1 {
		t.Errorf("window 20-35: %+v", w)
	}
	if len(tr.Ranks[0].Calls) != 2 || tr.Messages[1].SendCall != 1 {
		t.Errorf("Filter changed its input")
	}
	r, err := tr.Filter(Selection{Ranks: []int32{1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Ranks) != 2 || len(r.Ranks[0].Calls) != 0 || len(r.Ranks[1].Calls) != 2 || len(r.Messages) != 0 {
		t.Errorf("rank 1: %+v", r)
	}
	if !strings.Contains(r.Notes[len(r.Notes)-1], "ranks 1") {
		t.Errorf("notes %v lack the selection", r.Notes)
	}
	for _, bad := range []Selection{{Ranks: []int32{2}}, {From: 30, To: 20}, {From: -1}} {
		if _, err := tr.Filter(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
