package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// TestOpenMPNotMeasuredOnce: why OpenMP was not measured is said once per
// report, where the run-wide notes are (issue 22: a PyTorch program, whose
// libgomp the user did not ask about, got the sentence five times in one
// text report: the header, the tree of every region, the OpenMP regions
// section and the warnings). gomp_library.json is such a run: no MPI,
// three regions, and the sentence also among the file's warnings (where
// libpopmon put it for runs without MPI).
func TestOpenMPNotMeasuredOnce(t *testing.T) {
	for _, file := range []string{"gomp_library.json", "hybrid_libgomp.json"} {
		_, m := loadModels(t, file, "talp")
		why := m.OpenMP.NotMeasured()
		if why == "" {
			t.Fatalf("%s: OpenMP measured", file)
		}
		for _, models := range []string{"talp", "all"} {
			text := renderAll(t, FormatText, file, models, Options{})
			if n := strings.Count(text, why); n != 1 {
				t.Errorf("%s %s: text says why OpenMP was not measured %d times, want once:\n%s", file, models, n, text)
			}
			header, _, _ := strings.Cut(text, "\n### Name:")
			if !strings.Contains(header, "\nOpenMP:    not measured: "+why+"\n") {
				t.Errorf("%s %s: the header lacks the OpenMP line:\n%s", file, models, header)
			}
			for _, no := range []string{"OpenMP regions: not measured", "has no OMPT: OpenMP is not measured", "OpenMP metrics not measured"} {
				if strings.Contains(text, no) {
					t.Errorf("%s %s: text has %q:\n%s", file, models, no, text)
				}
			}
			js := renderAll(t, FormatJSON, file, models, Options{})
			if n := strings.Count(js, why); n != 1 {
				t.Errorf("%s %s: json says it %d times, want once:\n%s", file, models, n, js)
			}
			var doc struct {
				OpenMPNotMeasured string `json:"openmp_not_measured"`
			}
			if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.OpenMPNotMeasured != why {
				t.Errorf("%s %s: openmp_not_measured = %q (%v), want %q", file, models, doc.OpenMPNotMeasured, err, why)
			}
			if !strings.Contains(js, `"omp_parallel_efficiency": "`+ompReasonRefJSON+`"`) {
				t.Errorf("%s %s: omp_parallel_efficiency does not refer to openmp_not_measured:\n%s", file, models, js)
			}
			if csv := renderAll(t, FormatCSV, file, models, Options{}); strings.Contains(csv, "OMPT") {
				t.Errorf("%s %s: csv mentions OMPT:\n%s", file, models, csv)
			}
		}
	}
	// Each region's tree still shows the metric, with the reference.
	text := renderAll(t, FormatText, "gomp_library.json", "talp", Options{})
	if n := strings.Count(text, "  OpenMP Parallel efficiency ...... not measured: see OpenMP above\n"); n != 3 {
		t.Errorf("%d regions refer to the header, want 3:\n%s", n, text)
	}
	// Other warnings stay.
	if !strings.Contains(text, "\nWarnings\n  more than 4096 threads at once: the rest are not measured\n") {
		t.Errorf("the other warning is gone:\n%s", text)
	}
}

// TestOMPReferenced: only the OpenMP reason is replaced, in copies; other
// reasons and the report's own regions are left alone.
func TestOMPReferenced(t *testing.T) {
	why := "GNU libgomp has no OMPT: run with popmon run --openmp=libomp"
	m := &measure.Measurement{OpenMP: &measure.OpenMP{Runtime: "GNU libgomp", Reason: why}}
	regs := []pop.RegionReport{
		{Name: "Global", Metrics: []pop.Metric{
			{ID: pop.IDParallelEfficiency, Value: 0.5},
			{ID: pop.IDOMPParallelEfficiency, NotMeasured: why},
			{ID: "serialisation_efficiency", NotMeasured: "needs a trace"},
		}},
		{Name: "io", Metrics: []pop.Metric{{ID: pop.IDParallelEfficiency, Value: 1}}},
	}
	got := ompReferenced(regs, runOf(m), "see above")
	if got[0].Metrics[1].NotMeasured != "see above" || got[0].Metrics[2].NotMeasured != "needs a trace" || got[0].Metrics[0].Value != 0.5 {
		t.Errorf("referenced: %+v", got[0].Metrics)
	}
	if regs[0].Metrics[1].NotMeasured != why {
		t.Errorf("the report's own region was modified: %+v", regs[0].Metrics)
	}
	if len(got) != 2 || got[1].Name != "io" {
		t.Errorf("regions: %+v", got)
	}
	// Measured OpenMP, or none: regs itself.
	for _, m := range []*measure.Measurement{nil, {}, {OpenMP: &measure.OpenMP{OMPT: true}}} {
		if out := ompReferenced(regs, runOf(m), "x"); &out[0] != &regs[0] {
			t.Errorf("%+v: copied", m)
		}
	}
	// The header leads with the runtime when the reason does not.
	off := &measure.OpenMP{Runtime: "LLVM OMP version: 5.0.20140926", Reason: "OpenMP measurement is off (popmon run --openmp=off)"}
	if got, want := textOpenMP(off), "LLVM OMP version: 5.0.20140926 · not measured: OpenMP measurement is off (popmon run --openmp=off)"; got != want {
		t.Errorf("header %q, want %q", got, want)
	}
}
