package measure

import (
	"reflect"
	"testing"
)

func TestWithoutInstrumentation(t *testing.T) {
	for _, c := range []struct {
		name string
		in   ProcessAccounts
		want ProcessAccounts
	}{
		{"no account", ProcessAccounts{CPUs: 1, ElapsedNS: 100, UsefulNS: 60, MPINS: 40},
			ProcessAccounts{CPUs: 1, ElapsedNS: 100, UsefulNS: 60, MPINS: 40}},
		{"one CPU", ProcessAccounts{CPUs: 1, ElapsedNS: 100, UsefulNS: 60, MPINS: 30, InstrumentationNS: 10},
			ProcessAccounts{CPUs: 1, ElapsedNS: 90, UsefulNS: 60, MPINS: 30}},
		{"four CPUs: the process's share", ProcessAccounts{CPUs: 4, ElapsedNS: 100, UsefulNS: 300, MPINS: 60, InstrumentationNS: 40},
			ProcessAccounts{CPUs: 4, ElapsedNS: 90, UsefulNS: 300, MPINS: 60}},
		{"rounded", ProcessAccounts{CPUs: 2, ElapsedNS: 100, UsefulNS: 190, InstrumentationNS: 3},
			ProcessAccounts{CPUs: 2, ElapsedNS: 98, UsefulNS: 190}},
		{"never below 0", ProcessAccounts{CPUs: 1, ElapsedNS: 5, InstrumentationNS: 10},
			ProcessAccounts{CPUs: 1}},
	} {
		if got := c.in.WithoutInstrumentation(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The invariant counts popmon's own cost among the accounts: a process whose
// useful and MPI time leave it out adds up with it and not without it, and
// adds up again once WithoutInstrumentation takes it out of its elapsed time.
func TestInvariantWithInstrumentation(t *testing.T) {
	p := ProcessAccounts{Rank: 0, CPUs: 1, Visits: 1, ElapsedNS: 1e9, UsefulNS: 6e8, MPINS: 3e8, InstrumentationNS: 1e8}
	m := &Measurement{Regions: []Region{{Name: GlobalRegion, Processes: []ProcessAccounts{p}}}}
	if v := CheckAccounts(m); len(v) != 0 {
		t.Errorf("with the account: %v", v)
	}
	if !m.HasInstrumentation() {
		t.Error("HasInstrumentation: false")
	}
	w := m.WithoutInstrumentation()
	if v := CheckAccounts(w); len(v) != 0 || w == m || w.Regions[0].Processes[0].ElapsedNS != 9e8 {
		t.Errorf("without it: %v, elapsed %d", v, w.Regions[0].Processes[0].ElapsedNS)
	}
	if m.Regions[0].Processes[0].InstrumentationNS != 1e8 {
		t.Error("WithoutInstrumentation changed its receiver")
	}
	m.Regions[0].Processes[0].InstrumentationNS = 0
	if v := CheckAccounts(m); len(v) != 1 {
		t.Errorf("without the account, elapsed unchanged: %d violations, want 1", len(v))
	}
	if m.WithoutInstrumentation() != m {
		t.Error("a measurement without the account is copied")
	}
}
