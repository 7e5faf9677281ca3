package pop

import (
	"math"
	"strings"
	"testing"
	"time"
)

// scalingRuns: reference 2 CPUs (U=2e9, T=1.5e9, I=4e9, Cy=2e9: IPC 2,
// f 1 GHz) and 4 CPUs (U=2.5e9, T=1e9, I=5e9, Cy=3.125e9: IPC 1.6,
// f 1.25 GHz). Given in reverse order to test sorting.
func scalingRuns() []ScalingRun {
	return []ScalingRun{
		{ID: 1, Label: "4xMPI 1xOpenMP", CPUs: 4, ElapsedNS: 1e9, UsefulNS: 2.5e9, Instructions: 5e9, Cycles: 3.125e9, HasCounters: true,
			Metrics: map[string]float64{IDParallelEfficiency: 0.625, IDMPIParallelEfficiency: 0.625}},
		{ID: 0, Label: "2xMPI 1xOpenMP", CPUs: 2, ElapsedNS: 1.5e9, UsefulNS: 2e9, Instructions: 4e9, Cycles: 2e9, HasCounters: true,
			Metrics: map[string]float64{IDParallelEfficiency: 0.8, IDMPIParallelEfficiency: 0.8}},
	}
}

var scalingTree = []ScalingNode{{IDParallelEfficiency, "Parallel efficiency", 0}, {IDMPIParallelEfficiency, "MPI Parallel efficiency", 1}}

func TestScaleHandComputed(t *testing.T) {
	cases := []struct {
		mode ScalingMode
		want map[string][2]float64 // id → {reference, 4 CPUs}
	}{
		{ScalingStrong, map[string][2]float64{
			IDParallelEfficiency:     {0.8, 0.625},
			IDMPIParallelEfficiency:  {0.8, 0.625},
			IDComputationScalability: {1, 0.8},   // 2/2.5
			IDGlobalEfficiency:       {0.8, 0.5}, // 0.625 × 0.8
			IDInstructionScaling:     {1, 0.8},   // 4/5
			IDIPCScaling:             {1, 0.8},   // 1.6/2
			IDFrequencyScaling:       {1, 1.25},  // 1.25/1
			IDSpeedup:                {1, 1.5},   // 1.5/1
			IDSpeedupEfficiency:      {1, 0.75},  // 1.5/2
			IDElapsedS:               {1.5, 1},
			IDIPC:                    {2, 1.6},
			IDFrequencyGHz:           {1, 1.25},
		}},
		{ScalingWeak, map[string][2]float64{
			IDComputationScalability: {1, 1.6}, // 0.8 × 4/2
			IDGlobalEfficiency:       {0.8, 1}, // 0.625 × 1.6
			IDInstructionScaling:     {1, 1.6}, // (4/2)/(5/4)
			IDIPCScaling:             {1, 0.8},
			IDFrequencyScaling:       {1, 1.25},
			IDSpeedup:                {1, 1.5},
			IDSpeedupEfficiency:      {1, 0.75},
		}},
	}
	for _, c := range cases {
		s, err := Scale(ScalingInput{Model: ModelTALP, Mode: c.mode, Reference: -1,
			Regions: []ScalingRegionInput{{Name: "Global", Runs: scalingRuns(), Tree: scalingTree}}})
		if err != nil {
			t.Fatal(err)
		}
		g := s.Regions[0]
		if g.Runs[0].CPUs != 2 || g.Runs[1].CPUs != 4 || g.Reference != 0 {
			t.Fatalf("%s: columns %d,%d ref %d", c.mode, g.Runs[0].CPUs, g.Runs[1].CPUs, g.Reference)
		}
		for id, want := range c.want {
			r, ok := g.Row(id)
			if !ok {
				t.Errorf("%s: no row %s", c.mode, id)
				continue
			}
			for i := range 2 {
				v, ok := r.Value(i)
				if !ok || math.Abs(v-want[i]) > 1e-12 {
					t.Errorf("%s: %s[%d] = %v (%v), want %v", c.mode, id, i, v, ok, want[i])
				}
			}
		}
		// Computation scalability = instruction × IPC × frequency scaling.
		cs, _ := g.Row(IDComputationScalability)
		in, _ := g.Row(IDInstructionScaling)
		ip, _ := g.Row(IDIPCScaling)
		fr, _ := g.Row(IDFrequencyScaling)
		if p := in.Values[1] * ip.Values[1] * fr.Values[1]; math.Abs(p-cs.Values[1]) > 1e-12 {
			t.Errorf("%s: product %v != computation scalability %v", c.mode, p, cs.Values[1])
		}
	}
}

func TestScaleRowOrderAndReference(t *testing.T) {
	s, err := Scale(ScalingInput{Mode: ScalingStrong, Reference: 1,
		Regions: []ScalingRegionInput{{Name: "Global", Runs: scalingRuns(), Tree: scalingTree}}})
	if err != nil {
		t.Fatal(err)
	}
	g := s.Regions[0]
	var ids []string
	for _, r := range g.Rows {
		ids = append(ids, r.ID)
	}
	want := []string{IDGlobalEfficiency, IDParallelEfficiency, IDMPIParallelEfficiency, IDComputationScalability,
		IDInstructionScaling, IDIPCScaling, IDFrequencyScaling, IDSpeedup, IDSpeedupEfficiency, IDElapsedS, IDIPC, IDFrequencyGHz}
	if len(ids) != len(want) {
		t.Fatalf("rows %v, want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("rows %v, want %v", ids, want)
		}
	}
	if g.Reference != 1 {
		t.Fatalf("reference index %d, want 1 (ID 1 = 4 CPUs)", g.Reference)
	}
	sp, _ := g.Row(IDSpeedup)
	if v, _ := sp.Value(0); math.Abs(v-1/1.5) > 1e-12 {
		t.Errorf("speedup of the 2-CPU run against the 4-CPU reference = %v, want 0.667", v)
	}
}

func TestScaleWithoutCounters(t *testing.T) {
	runs := scalingRuns()
	for i := range runs {
		runs[i].HasCounters = false
	}
	s, err := Scale(ScalingInput{Reference: -1, Regions: []ScalingRegionInput{{Name: "Global", Runs: runs, Tree: scalingTree}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != ScalingStrong {
		t.Errorf("auto without counters = %s, want strong", s.Mode)
	}
	g := s.Regions[0]
	for _, id := range []string{IDInstructionScaling, IDIPCScaling, IDFrequencyScaling, IDIPC, IDFrequencyGHz} {
		if _, ok := g.Row(id); ok {
			t.Errorf("row %s present without counters", id)
		}
	}
	if _, ok := g.Row(IDComputationScalability); !ok {
		t.Error("computation scalability needs no counters")
	}
}

func TestDetectScalingMode(t *testing.T) {
	base := ScalingRun{CPUs: 2, Instructions: 2e9, HasCounters: true}
	cases := []struct {
		name string
		runs []ScalingRun
		want ScalingMode
	}{
		{"one run", []ScalingRun{base}, ScalingStrong},
		{"strong: same instructions on 2x CPUs", []ScalingRun{base, {CPUs: 4, Instructions: 2e9, HasCounters: true}}, ScalingStrong},
		{"weak: instructions grow with CPUs", []ScalingRun{base, {CPUs: 4, Instructions: 4e9, HasCounters: true}}, ScalingWeak},
		{"weak at the threshold", []ScalingRun{base, {CPUs: 4, Instructions: 3e9, HasCounters: true}}, ScalingWeak},
		{"strong below the threshold", []ScalingRun{base, {CPUs: 4, Instructions: 2.99e9, HasCounters: true}}, ScalingStrong},
		{"every run must be weak", []ScalingRun{base, {CPUs: 4, Instructions: 4e9, HasCounters: true}, {CPUs: 8, Instructions: 4e9, HasCounters: true}}, ScalingStrong},
		{"no counters", []ScalingRun{base, {CPUs: 4, Instructions: 4e9}}, ScalingStrong},
	}
	for _, c := range cases {
		if got, why := DetectScalingMode(c.runs, 0); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, why, c.want)
		}
	}
}

func TestScaleEdgeCases(t *testing.T) {
	if _, err := Scale(ScalingInput{Mode: "sideways"}); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := ParseScalingMode("weak"); err != nil {
		t.Error(err)
	}
	s, err := Scale(ScalingInput{})
	if err != nil || s.Mode != ScalingStrong {
		t.Errorf("no regions: %v %v", s, err)
	}
	// Zero times: metrics absent, no NaN, no panic.
	s, err = Scale(ScalingInput{Regions: []ScalingRegionInput{{Name: "r", Runs: []ScalingRun{{CPUs: 0}, {CPUs: 2, Time: time.Unix(1, 0)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Regions[0].Rows {
		for i := range r.Values {
			if v, ok := r.Value(i); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Errorf("%s[%d] = %v", r.ID, i, v)
			}
		}
	}
}

// A run whose region is refused (its accounts do not add up) has no value
// in that region's table, is not the reference (the next run is), and
// does not take part in the choice of mode; the other runs are scaled
// against the trusted reference. At a9d5b23 the refused run did not exist
// as such and its numbers were scaled like any other.
func TestScaleRefusedRun(t *testing.T) {
	rs := scalingRuns()
	three := rs[0]
	three.ID, three.CPUs, three.Label = 2, 8, "8xMPI 1xOpenMP"
	rs[1].Refused = "the accounts of rank 0 do not add up"
	rs = append(rs, three)
	s, err := Scale(ScalingInput{Model: ModelTALP, Mode: ScalingAuto, Reference: -1,
		Regions: []ScalingRegionInput{{Name: "Global", Runs: rs, Tree: scalingTree}}})
	if err != nil {
		t.Fatal(err)
	}
	g := s.Regions[0]
	if g.Runs[0].CPUs != 2 || g.Runs[0].Refused == "" || g.Reference != 1 {
		t.Fatalf("columns %+v, reference %d: want the refused 2-CPU run first and the 4-CPU run as reference", g.Runs, g.Reference)
	}
	for _, r := range g.Rows {
		if v, ok := r.Value(0); ok {
			t.Errorf("%s of the refused run = %v", r.ID, v)
		}
	}
	if r, ok := g.Row(IDSpeedup); !ok || r.Values[1] != 1 || !r.Has[2] || r.Values[2] != 1 {
		t.Errorf("speedup row %+v: want 1 against the 4-CPU reference", r)
	}
	if !strings.HasSuffix(s.ModeReason, "; 1 of 3 runs without POP metrics in Global") {
		t.Errorf("mode reason %q", s.ModeReason)
	}

	// Every run refused: no value, no reference.
	for i := range rs {
		rs[i].Refused = "off"
	}
	s, err = Scale(ScalingInput{Model: ModelTALP, Reference: 1, Regions: []ScalingRegionInput{{Name: "Global", Runs: rs, Tree: scalingTree}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Regions[0].Rows) != 0 || s.Mode != ScalingStrong {
		t.Errorf("all refused: rows %+v, mode %s", s.Regions[0].Rows, s.Mode)
	}
}
