package pop_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Issue 33, item 2: what the renderers say about the run travels in the
// report (pop.Run), derived once from the measurement: the notes, the GPU
// vendors, the accounts invariant's violations the refusals come from.
func TestReportRun(t *testing.T) {
	m, err := measure.ReadFile(filepath.Join("..", "measure", "testdata", "gomp_library.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Run
	if r == nil {
		t.Fatal("no Run")
	}
	if r.OpenMPNotMeasured != m.OpenMP.Reason || r.OpenMPNotMeasured == "" {
		t.Errorf("OpenMPNotMeasured = %q, want the file's reason %q", r.OpenMPNotMeasured, m.OpenMP.Reason)
	}
	if r.CountersNotMeasured != m.CountersNotMeasured() || r.GPUNotMeasured != m.GPUNotMeasured() {
		t.Errorf("notes %q, %q; want %q, %q", r.CountersNotMeasured, r.GPUNotMeasured, m.CountersNotMeasured(), m.GPUNotMeasured())
	}
	if !reflect.DeepEqual(r.Command, m.Command) || r.Timestamp != m.Timestamp || r.Tool != m.Tool || !reflect.DeepEqual(r.Warnings, m.Warnings) {
		t.Errorf("header differs from the measurement's: %+v", r)
	}
	if pop.NewRun(nil) != nil {
		t.Error("NewRun(nil) is not nil")
	}
}

// The violations the report carries are those the reader recorded, and
// the regions it refuses are those: one derivation (measure's), not one
// per package.
func TestReportRunViolations(t *testing.T) {
	m, err := measure.ReadFile(filepath.Join("..", "measure", "testdata", "mpi_imbalance.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The reader's record says rank 1 of Global is off: pop refuses the
	// region by the record, and the report carries it.
	v := measure.AccountViolation{Region: measure.GlobalRegion, Rank: 1, CPUs: 1, ElapsedNS: 4e9, AccountsNS: 8e9}
	m.AccountViolations = []measure.AccountViolation{v}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Run.AccountViolations, m.AccountViolations) {
		t.Errorf("Run.AccountViolations = %v, want the reader's %v", rep.Run.AccountViolations, m.AccountViolations)
	}
	if g, _ := rep.Region(measure.GlobalRegion); g.Refused == "" {
		t.Error("Global not refused by the recorded violation")
	}
	if g, _ := rep.Region("compute"); g.Refused != "" {
		t.Errorf("compute refused: %q", g.Refused)
	}
}

// DLB's numCpus: Σ min(CPUs, affinity CPUs) where every process recorded
// its affinity, the region's CPUs otherwise.
func TestRunHardwareCPUs(t *testing.T) {
	m := &measure.Measurement{
		Processes: []measure.Process{{Rank: 0, CPUs: 8, AffinityCPUs: 4}, {Rank: 1, CPUs: 2, AffinityCPUs: 4}},
		Regions: []measure.Region{
			{Name: measure.GlobalRegion, Processes: []measure.ProcessAccounts{{Rank: 0, CPUs: 8}, {Rank: 1, CPUs: 2}}},
			{Name: "one", Processes: []measure.ProcessAccounts{{Rank: 0, CPUs: 8}}},
			{Name: "summary", Summary: &measure.RegionSummary{}},
		},
	}
	r := pop.NewRun(m)
	for _, c := range []struct {
		region     string
		cpus, want int
	}{{"", 10, 6}, {measure.GlobalRegion, 10, 6}, {"one", 8, 4}, {"summary", 7, 7}, {"absent", 3, 3}} {
		if got := r.HardwareCPUs(c.region, c.cpus); got != c.want {
			t.Errorf("HardwareCPUs(%q, %d) = %d, want %d", c.region, c.cpus, got, c.want)
		}
	}
	m.Processes[1].AffinityCPUs = 0 // one process without its mask: popmon's CPUs
	if got := pop.NewRun(m).HardwareCPUs("", 10); got != 10 {
		t.Errorf("without every mask: %d, want 10", got)
	}
}
