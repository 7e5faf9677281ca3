package pages

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		lo, hi   float64
		n        int
		want     []float64
		min, max float64
	}{
		{0, 1, 6, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, 0, 1},
		{0, 24.003, 6, []float64{0, 5, 10, 15, 20, 25}, 0, 25},
		{0.3, 0.7, 5, []float64{0.3, 0.4, 0.5, 0.6, 0.7}, 0.3, 0.7},
		{5, 5, 6, []float64{4.4, 4.6, 4.8, 5, 5.2, 5.4, 5.6}, 4.4, 5.6},
		{0, 0, 6, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, 0, 1},
		{0, 1234, 6, []float64{0, 500, 1000, 1500}, 0, 1500},
	}
	for _, c := range cases {
		got, lo, hi := NiceTicks(c.lo, c.hi, c.n)
		if len(got) != len(c.want) || lo != c.min || hi != c.max {
			t.Errorf("NiceTicks(%v, %v, %d) = %v [%v, %v], want %v [%v, %v]", c.lo, c.hi, c.n, got, lo, hi, c.want, c.min, c.max)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("NiceTicks(%v, %v, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
				break
			}
		}
	}
	// Bad input never panics and gives a usable axis.
	for _, v := range [][2]float64{{math.NaN(), 1}, {0, math.Inf(1)}, {3, -3}} {
		ticks, lo, hi := NiceTicks(v[0], v[1], 6)
		if len(ticks) < 2 || !(lo < hi) {
			t.Errorf("NiceTicks(%v) = %v [%v, %v]", v, ticks, lo, hi)
		}
	}
	if got := formatTick(0.30000000000000004, 0.1); got != "0.3" {
		t.Errorf("formatTick = %q", got)
	}
}

func TestEvenIndices(t *testing.T) {
	if got := evenIndices(3, 8); len(got) != 3 {
		t.Errorf("evenIndices(3, 8) = %v", got)
	}
	got := evenIndices(1000, 8)
	if len(got) != 8 || got[0] != 0 || got[7] != 999 {
		t.Errorf("evenIndices(1000, 8) = %v", got)
	}
	if evenIndices(0, 8) != nil {
		t.Error("evenIndices(0) not empty")
	}
}

func TestColourScale(t *testing.T) {
	cases := []struct {
		v    float64
		hue  float64
		cell string
	}{
		{0, 0, "#eea0a0"},    // red
		{0.5, 60, "#eeeea0"}, // yellow
		{1, 120, "#a0eea0"},  // green
		{1.4, 120, "#a0eea0"},
		{-0.2, 0, "#eea0a0"},
	}
	for _, c := range cases {
		if h := Hue(c.v); h != c.hue {
			t.Errorf("Hue(%v) = %v, want %v", c.v, h, c.hue)
		}
		if got := CellColour(c.v); got != c.cell {
			t.Errorf("CellColour(%v) = %s, want %s", c.v, got, c.cell)
		}
	}
	if got := CellColour(math.NaN()); got != "#eeeeee" {
		t.Errorf("CellColour(NaN) = %s", got)
	}
	if got := BadgeColour(1); got != "#22a022" {
		t.Errorf("BadgeColour(1) = %s", got)
	}
	if got := BadgeColour(math.NaN()); got != NoValueColour {
		t.Errorf("BadgeColour(NaN) = %s", got)
	}
	// Monotone: the green channel grows and the red falls from 0.5 to 1.
	for v := 0.0; v < 1; v += 0.05 {
		a, b := CellColour(v), CellColour(v+0.05)
		if v >= 0.5 && a[1:3] < b[1:3] {
			t.Errorf("red rises from %v (%s) to %v (%s)", v, a, v+0.05, b)
		}
		if v < 0.5 && a[3:5] > b[3:5] {
			t.Errorf("green falls from %v (%s) to %v (%s)", v, a, v+0.05, b)
		}
	}
}

func TestBadge(t *testing.T) {
	s := Badge("parallel efficiency", 0.834)
	checkXML(t, "badge", s)
	for _, want := range []string{">parallel efficiency<", ">0.83<", BadgeColour(0.834), `xmlns="` + svgNS + `"`} {
		if !strings.Contains(s, want) {
			t.Errorf("badge lacks %q:\n%s", want, s)
		}
	}
	if refs := externalRefs(s); len(refs) > 0 {
		t.Errorf("badge refers to %v", refs)
	}
	na := Badge("a<b & \"c\"", math.NaN())
	checkXML(t, "badge n/a", na)
	if !strings.Contains(na, ">n/a<") || !strings.Contains(na, NoValueColour) {
		t.Errorf("NaN badge: %s", na)
	}
}

func TestLineChartSVG(t *testing.T) {
	c := LineChart{Title: "T <&>", XLabel: "x", YLabel: "y", YFixed: true, YMin: 0, YMax: 1,
		Series: []Series{
			{Name: "a", Points: []Point{{0, 0.5}, {1, 0.7}, {2, math.NaN()}, {3, 1.2}}},
			{Name: "b & c", Points: []Point{{0, 0.1}}},
		}}
	s := c.SVG()
	checkXML(t, "line chart", s)
	for _, want := range []string{"<polyline", "T &lt;&amp;&gt;", ">b &amp; c<", ">1.2<", ">0<"} {
		if !strings.Contains(s, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	// The y axis grows past 1 to show 1.2: ticks 0 … 1.2 in steps of 0.2.
	if strings.Contains(s, ">1.4<") {
		t.Error("y axis goes past the nice tick above the data")
	}
	empty := (&LineChart{Title: "none"}).SVG()
	checkXML(t, "empty chart", empty)
	if !strings.Contains(empty, "no data") {
		t.Error("empty chart does not say so")
	}
	// Many points: no markers, still well-formed.
	var pts []Point
	for i := 0; i < 1000; i++ {
		pts = append(pts, Point{float64(i), float64(i % 7)})
	}
	big := (&LineChart{Title: "big", Series: []Series{{Name: "s", Points: pts}}}).SVG()
	checkXML(t, "big chart", big)
	if n := strings.Count(big, "<circle"); n > 1 { // the legend's one
		t.Errorf("%d markers drawn for 1000 points", n)
	}
}

func TestProcessChartSVG(t *testing.T) {
	s := ProcessChart("per process", []ProcessTimes{{Rank: 0, Useful: 5, MPI: 1}, {Rank: 1, Useful: 4, MPI: 2}})
	checkXML(t, "process chart", s)
	for _, want := range []string{"rank 0: useful 5.000 s", "rank 1: MPI 2.000 s", usefulColour, mpiColour} {
		if !strings.Contains(s, want) {
			t.Errorf("process chart lacks %q", want)
		}
	}
	checkXML(t, "empty process chart", ProcessChart("x", nil))
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"jsons/run-folder/strong-scaling": "jsons-run-folder-strong-scaling",
		"My Exp (v2)":                     "my-exp-v2",
		"../..":                           "experiment",
		"ünï":                             "n",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	used := map[string]bool{"a": true}
	if got := uniqueSlug("a", used); got != "a-2" {
		t.Errorf("uniqueSlug = %q", got)
	}
}

// TestDistributionChart checks that the distribution chart draws one bar
// per bin with its count and names the extreme ranks.
func TestDistributionChart(t *testing.T) {
	d := measure.Distribution{Min: 1e9, MinRank: 7, Max: 3e9, MaxRank: 12, Histogram: make([]int64, measure.HistogramBins)}
	d.Histogram[0], d.Histogram[19] = 5, 3
	svg := DistributionChart("Global", d, d)
	for _, want := range []string{"1.000 s (rank 7)", "3.000 s (rank 12)", ": 5 processes", ": 3 processes", ": 0 processes"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if n := strings.Count(svg, "processes</title>"); n != 2*measure.HistogramBins {
		t.Errorf("%d bars, want %d", n, 2*measure.HistogramBins)
	}
}

func TestLogAxesAndLabels(t *testing.T) {
	c := LineChart{Title: "speedup", LogX: true, LogY: true, Series: []Series{
		{Name: "measured", ID: "speedup", Labels: true, Points: []Point{{1, 1}, {2, 1.9}, {16, 9.36}}},
		{Name: "ideal", Points: []Point{{1, 1}, {16, 16}}},
		{Name: "bad", Points: []Point{{0, 1}, {-2, 3}}}, // not drawable on log axes
	}}
	s := c.SVG()
	checkXML(t, "log chart", s)
	// Ticks at the powers of 2 of both axes: 1 … 16.
	for _, w := range []string{">1<", ">2<", ">4<", ">8<", ">16<", `data-metric="speedup">9.36<`, `data-metric="speedup">1.90<`, `stroke-dasharray="6 3"`} {
		if !strings.Contains(s, w) {
			t.Errorf("chart lacks %q", w)
		}
	}
	if strings.Contains(s, ">32<") || strings.Contains(s, ">0.5<") {
		t.Error("log axis beyond the data's powers of 2")
	}
}

func TestPlaceLabels(t *testing.T) {
	// Three labels at one x, two at the same height: pushed 11 px apart
	// in their order; one alone elsewhere stays.
	ls := []valueLabel{{x: 10, y: 50, text: "a"}, {x: 10, y: 50, text: "b"}, {x: 10, y: 55, text: "c"}, {x: 90, y: 50, text: "d"}}
	placeLabels(ls, 0, 300)
	want := []float64{50, 61, 72, 50}
	for i, l := range ls {
		if l.y != want[i] {
			t.Errorf("label %s at y %v, want %v", l.text, l.y, want[i])
		}
	}
	// At the bottom they are pushed up instead.
	ls = []valueLabel{{x: 10, y: 98, text: "a"}, {x: 10, y: 99, text: "b"}}
	placeLabels(ls, 0, 100)
	if ls[0].y != 89 || ls[1].y != 100 {
		t.Errorf("bottom labels at %v, %v, want 89, 100", ls[0].y, ls[1].y)
	}
}

func TestModeSentence(t *testing.T) {
	run := func(cpus int, instr float64) pop.ScalingRun {
		return pop.ScalingRun{CPUs: cpus, Instructions: instr, HasCounters: instr > 0}
	}
	tests := []struct {
		name      string
		mode      pop.ScalingMode
		runs      []pop.ScalingRun
		head, why string
	}{
		{"one run", pop.ScalingStrong, []pop.ScalingRun{run(1, 100)}, "One configuration so far", "at least two resource configurations"},
		{"strong", pop.ScalingStrong, []pop.ScalingRun{run(1, 1600), run(16, 1760)}, "Strong scaling: the same problem on more CPUs", "down to 0.07 times"},
		{"weak", pop.ScalingWeak, []pop.ScalingRun{run(2, 200), run(4, 468)}, "Weak scaling: a problem that grows with the CPUs", "at least 1.17 times"},
		{"no counters", pop.ScalingStrong, []pop.ScalingRun{run(1, 100), run(2, 0)}, "Strong scaling", "not every run has hardware counters"},
	}
	for _, tc := range tests {
		sc := &pop.Scaling{Mode: tc.mode, ModeReason: "auto: …", Regions: []pop.ScalingRegion{{Runs: tc.runs}}}
		head, why := modeSentence(sc)
		if !strings.HasPrefix(head, tc.head) || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %q / %q, want %q / …%q…", tc.name, head, why, tc.head, tc.why)
		}
	}
}

func TestSizeBuckets(t *testing.T) {
	for k, w := range map[int]string{0: "0", 1: "1", 2: "2–3", 3: "4–7", 11: "1Ki–2Ki", 21: "1Mi–2Mi"} {
		if got := sizeBucket(k); got != w {
			t.Errorf("bucket %d = %q, want %q", k, got, w)
		}
	}
}

// TestGPUTablesAMDNote checks that the GPU tree table of an AMD run notes
// that AMD measurement is not validated, and that of an NVIDIA run does
// not.
func TestGPUTablesAMDNote(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string
	}{{"gpu_amd.json", report.GPUNotValidated(&measure.Measurement{GPUDevices: []measure.GPUDevice{{Vendor: "amd"}}})}, {"gpu_devices.json", ""}} {
		r, err := runs.Load(filepath.Join("..", "..", "measure", "testdata", tc.file), pop.ModelTALP)
		if err != nil {
			t.Fatal(err)
		}
		ts := gpuTables(r, "Global")
		if len(ts) == 0 || !strings.HasPrefix(ts[0].Title, "GPU: host and device") {
			t.Fatalf("%s: tables %+v", tc.file, ts)
		}
		if ts[0].Note != tc.want {
			t.Errorf("%s: note %q, want %q", tc.file, ts[0].Note, tc.want)
		}
	}
	if !report.AMDValidated && report.GPUNotValidated(&measure.Measurement{GPUDevices: []measure.GPUDevice{{Vendor: "amd"}}}) == "" {
		t.Error("no sentence for an AMD run while AMD is not validated")
	}
}
