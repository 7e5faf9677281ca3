package measure_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// Issue 33, item 2: the accounts invariant is derived once per
// measurement (Violations), by its reader, and a copy with another region
// list (a live window, an interval) is checked again.
func TestViolationsDerivedOnce(t *testing.T) {
	m, err := measure.ReadFile(filepath.Join("testdata", "mpi_imbalance.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Violations()) != 0 {
		t.Fatalf("testdata breaks the invariant: %v", m.Violations())
	}
	// Read recorded its result: accounts changed in place are not
	// derived again.
	g := &m.Regions[0]
	g.Processes[1].UsefulNS += g.Processes[1].ElapsedNS
	if vs := m.Violations(); len(vs) != 0 {
		t.Errorf("derived again: %v", vs)
	}
	// A copy with another region list is checked on its first use.
	c := *m
	c.Regions = append([]measure.Region(nil), m.Regions...)
	if vs := c.Violations(); len(vs) != 1 || vs[0].Region != measure.GlobalRegion || vs[0].Rank != 1 {
		t.Errorf("copy: %v, want rank 1 of Global", vs)
	}
	// A measurement built by hand is checked on its first use.
	h := &measure.Measurement{Regions: []measure.Region{{Name: "Global", Processes: []measure.ProcessAccounts{{Rank: 0, CPUs: 1, ElapsedNS: 1e9, UsefulNS: 2e9}}}}}
	if vs := h.Violations(); len(vs) != 1 {
		t.Errorf("by hand: %v", vs)
	}
	if (*measure.Measurement)(nil).Violations() != nil {
		t.Error("nil measurement has violations")
	}
}

func TestReadOpenMPOnly(t *testing.T) {
	for _, c := range []struct {
		doc, want string
		err       bool
	}{
		{`{"format": "popmon-measurement", "openmp": {"runtime": "GNU libgomp", "ompt": false, "reason": "no OMPT"}, "regions": [{"x": [1, 2]}]}`, "no OMPT", false},
		{`{"openmp": {"runtime": "LLVM OMP", "ompt": true}}`, "", false},
		{`{"format": "popmon-measurement"}`, "", false},
		{`{`, "", true},
	} {
		o, err := measure.ReadOpenMP(strings.NewReader(c.doc))
		if (err != nil) != c.err || o.NotMeasured() != c.want {
			t.Errorf("%s: %q, %v; want %q, error %v", c.doc, o.NotMeasured(), err, c.want, c.err)
		}
	}
}
