package live

import "testing"

// TestOwnCPUsChange: the own CPUs' change up to a process's cut, from the
// live words (folded up to the last change, then Now − Registered CPUs).
func TestOwnCPUsChange(t *testing.T) {
	for _, c := range []struct {
		name string
		o    OwnCPUs
		end  uint64
		want int64
	}{
		{"never changed", OwnCPUs{Registered: 2, Now: 2, Since: 100}, 1000, 0},
		{"one CPU fewer since 100, killed at 1000", OwnCPUs{Registered: 2, Now: 1, Since: 100}, 1000, -900},
		{"one fewer 100-600, two again since", OwnCPUs{Registered: 2, Now: 2, DeltaTicks: -500, Since: 600}, 1000, -500},
		{"two more since 400", OwnCPUs{Registered: 1, Now: 3, DeltaTicks: -50, Since: 400}, 1000, -50 + 1200},
		{"cut before the last change", OwnCPUs{Registered: 2, Now: 1, DeltaTicks: -10, Since: 900}, 800, -10},
		{"no tick of the last change", OwnCPUs{Registered: 2, Now: 1, DeltaTicks: -10}, 800, -10},
	} {
		if got := c.o.ChangeTicks(c.end); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
		if !c.o.plausible() {
			t.Errorf("%s: not plausible", c.name)
		}
	}
	for _, o := range []OwnCPUs{
		{Registered: 1 << 20, Now: 1, Since: 100},
		{Registered: 2, Now: -1, Since: 100},
		{Registered: 2, Now: 2, DeltaTicks: -(1 << 40), Since: 100},
		{Registered: 2, Now: 2, DeltaTicks: 1 << 40, Since: 100},
		{Registered: 2, Now: 2, Since: 1 << 63},
	} {
		if o.plausible() {
			t.Errorf("%+v: plausible, want a hostile file's", o)
		}
	}
}
