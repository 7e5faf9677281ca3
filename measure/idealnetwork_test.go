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
