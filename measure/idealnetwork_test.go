package measure

import (
	"strings"
	"testing"
)

// TestValidateIdealNetwork checks the checks of the "ideal_network"
// object.
func TestValidateIdealNetwork(t *testing.T) {
	base := func() *Measurement {
		return &Measurement{Format: Format, Version: 1, Resources: Resources{Processes: 1, Nodes: 1, CPUs: 1},
			Processes: []Process{{Rank: 0, CPUs: 1}},
			Regions:   []Region{{Name: GlobalRegion, Processes: []ProcessAccounts{{Rank: 0, CPUs: 1, Visits: 1, ElapsedNS: 10, UsefulNS: 10}}}}}
	}
	for _, tc := range []struct {
		name string
		in   IdealNetwork
		want string // "" = valid
	}{
		{"valid", IdealNetwork{RuntimeNS: 10, UsefulMaxNS: 9, EagerLimit: 32768, Method: "x"}, ""},
		{"zero runtime", IdealNetwork{RuntimeNS: 0}, "ideal_network has runtime_ns 0"},
		{"useful above runtime", IdealNetwork{RuntimeNS: 10, UsefulMaxNS: 11}, "useful_max_ns 11"},
		{"negative eager limit", IdealNetwork{RuntimeNS: 10, EagerLimit: -1}, "eager_limit -1"},
	} {
		m := base()
		in := tc.in
		m.IdealNetwork = &in
		err := m.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestWriteIdealNetwork: Write writes "ideal_network" and Read reads it
// back.
func TestWriteIdealNetwork(t *testing.T) {
	m := &Measurement{Format: Format, Version: 1, Resources: Resources{Processes: 1, Nodes: 1, CPUs: 1},
		Processes:    []Process{{Rank: 0, CPUs: 1}},
		Regions:      []Region{{Name: GlobalRegion, Processes: []ProcessAccounts{{Rank: 0, CPUs: 1, Visits: 1, ElapsedNS: 10, UsefulNS: 10}}}},
		IdealNetwork: &IdealNetwork{RuntimeNS: 9, UsefulMaxNS: 8, EagerLimit: 32768, Method: "popmon replay of a Paraver trace"}}
	var b strings.Builder
	if err := Write(&b, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"ideal_network": {"runtime_ns": 9, "useful_max_ns": 8, "eager_limit": 32768, "method": "popmon replay of a Paraver trace"}`) {
		t.Errorf("written:\n%s", b.String())
	}
	back, err := Read(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if back.IdealNetwork == nil || *back.IdealNetwork != *m.IdealNetwork {
		t.Errorf("read back %+v", back.IdealNetwork)
	}
}
