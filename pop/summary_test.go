package pop_test

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestSummaryFormSameMetrics checks, for every measurement in
// measure/testdata, that every model gives exactly the same metrics and
// totals from the summary form (computed in Go and written to a file and
// read back, as libpopmon writes it) as from the full form.
func TestSummaryFormSameMetrics(t *testing.T) {
	files, err := filepath.Glob("../measure/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			full, err := measure.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sum := measure.Summarize(full, 2)
			var buf bytes.Buffer
			if err := measure.Write(&buf, sum); err != nil {
				t.Fatalf("write summary form: %v", err)
			}
			if err := measure.ValidateSchema(buf.Bytes()); err != nil {
				t.Fatalf("summary form against the schema: %v", err)
			}
			back, err := measure.Read(&buf)
			if err != nil {
				t.Fatalf("read summary form: %v", err)
			}
			if back.Version != measure.SummaryVersion || len(back.Processes) != 0 || back.Summarized == nil ||
				back.Summarized.Processes != len(full.Processes) {
				t.Fatalf("summary form: version %d, %d processes, summary %+v", back.Version, len(back.Processes), back.Summarized)
			}
			for _, model := range pop.Models() {
				a, errA := pop.Compute(full, model)
				b, errB := pop.Compute(back, model)
				if (errA == nil) != (errB == nil) {
					t.Fatalf("%s: errors %v and %v", model, errA, errB)
				}
				if errA != nil {
					continue
				}
				if len(a.Regions) != len(b.Regions) {
					t.Fatalf("%s: %d and %d regions", model, len(a.Regions), len(b.Regions))
				}
				metrics := 0
				for i := range a.Regions {
					ra, rb := a.Regions[i], b.Regions[i]
					metrics += len(ra.Metrics)
					if !reflect.DeepEqual(ra, rb) {
						t.Errorf("%s region %q differs:\nfull    %+v\nsummary %+v", model, ra.Name, ra, rb)
					}
				}
				if metrics == 0 {
					t.Errorf("%s: no metrics at all", model)
				}
			}
		})
	}
}

// TestDistribution checks the extremes, ranks, bins and quantiles of a
// summary's distributions.
func TestDistribution(t *testing.T) {
	full, err := measure.ReadFile("../measure/testdata/mpi_imbalance.json")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := full.Global()
	// Make the useful times 0, 10, …, 10·(n−1) s, rank k having 10·k.
	n := len(g.Processes)
	for k := range g.Processes {
		g.Processes[k].UsefulNS = int64(k) * 10e9
	}
	a := g.Aggregates(full.NodeOf())
	d := a.Useful
	if d.Min != 0 || d.MinRank != g.Processes[0].Rank || d.Max != int64(n-1)*10e9 || d.MaxRank != g.Processes[n-1].Rank {
		t.Fatalf("useful distribution %+v", d)
	}
	var total int64
	for _, c := range d.Histogram {
		total += c
	}
	if total != int64(n) || d.Histogram[0] != 1 || d.Histogram[measure.HistogramBins-1] != 1 {
		t.Errorf("histogram %v of %d processes", d.Histogram, n)
	}
	for _, tt := range []struct {
		q    float64
		want float64
	}{{0, 0}, {1, float64(n-1) * 10e9}} {
		if got := d.Quantile(tt.q); got != tt.want {
			t.Errorf("Quantile(%g) = %g, want %g", tt.q, got, tt.want)
		}
	}
	if med := d.Quantile(0.5); med < 0 || med > float64(n-1)*10e9 {
		t.Errorf("median %g outside the range", med)
	}
}

// TestSummaryValidate checks that a summary form that contradicts itself
// is refused.
func TestSummaryValidate(t *testing.T) {
	full, err := measure.ReadFile("../measure/testdata/mpi_imbalance.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		edit func(m *measure.Measurement)
	}{
		{"processes listed", func(m *measure.Measurement) { m.Processes = full.Processes }},
		{"region without summary", func(m *measure.Measurement) { m.Regions[0].Summary = nil }},
		{"wrong count", func(m *measure.Measurement) { m.Summarized.Processes++ }},
		{"short histogram", func(m *measure.Measurement) { m.Regions[0].Summary.MPI.Histogram = []int64{1} }},
		{"old version", func(m *measure.Measurement) { m.Version = 3 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := measure.Summarize(full, 2)
			regions := make([]measure.Region, len(m.Regions))
			for i, g := range m.Regions {
				s := *g.Summary
				regions[i] = measure.Region{Name: g.Name, Summary: &s}
			}
			m.Regions = regions
			s := *m.Summarized
			m.Summarized = &s
			if err := m.Validate(); err != nil {
				t.Fatalf("unedited: %v", err)
			}
			tt.edit(m)
			if err := m.Validate(); err == nil {
				t.Error("accepted")
			}
		})
	}
}
