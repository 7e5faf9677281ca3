package runs

import (
	"testing"
	"time"
)

// TestNewestLike: popmon check's baseline from a folder is the newest run
// of the new run's configuration, never the new run's own file.
func TestNewestLike(t *testing.T) {
	four := Resources{MPI: true, Processes: 4, Nodes: 1, CPUs: 4}
	eight := Resources{MPI: true, Processes: 8, Nodes: 1, CPUs: 8}
	at := func(h int) time.Time { return time.Date(2026, 11, 1, h, 0, 0, 0, time.UTC) }
	nr := &Run{Source: "new.json", Resources: four, Timestamp: at(9)}
	old := &Run{Source: "old.json", Resources: four, Timestamp: at(1)}
	newer := &Run{Source: "newer.json", Resources: four, Timestamp: at(2)}
	other := &Run{Source: "other.json", Resources: eight, Timestamp: at(3)}
	self := &Run{Source: "new.json", Resources: four, Timestamp: at(9)}
	if got := NewestLike([]*Run{old, newer, other, self}, nr); got != newer {
		t.Errorf("baseline %v, want newer.json", got)
	}
	if got := NewestLike([]*Run{other, self}, nr); got != nil {
		t.Errorf("baseline %v, want none", got.Source)
	}
}

// TestFitReference: popmon model's reference is the smallest run with the
// region whose CPU count is not held out.
func TestFitReference(t *testing.T) {
	run := func(cpus int, region string) *Run {
		return &Run{Regions: []Region{{Name: region, CPUs: cpus}}}
	}
	rs := []*Run{run(8, "Global"), run(2, "Global"), run(4, "Global"), run(1, "solve")}
	for _, c := range []struct {
		name string
		held []int
		want int
	}{
		{"Global", nil, 1},
		{"Global", []int{2}, 2},
		{"Global", []int{2, 4, 8}, -1},
		{"solve", nil, 3},
		{"none", nil, -1},
	} {
		if got := FitReference(rs, c.name, c.held); got != c.want {
			t.Errorf("%s held %v: %d, want %d", c.name, c.held, got, c.want)
		}
	}
}
