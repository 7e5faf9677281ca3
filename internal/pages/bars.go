package pages

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
)

// ProcessTimes is the useful and MPI time of one process in one region,
// in seconds summed over the process's CPUs.
type ProcessTimes struct {
	// Rank is the MPI rank; CPUs the process's CPUs in the region.
	Rank, CPUs int
	// Useful and MPI are the times in seconds.
	Useful, MPI float64
}

// Colours of the per-process bar chart.
const (
	usefulColour = "#4c78a8"
	mpiColour    = "#f58518"
)

// start opens a chart of w × h with its style, white background and title.
func (b *svgBuf) start(w, h float64, title string) {
	b.open(w, h, title)
	b.WriteString(chartStyle)
	fmt.Fprintf(b, `<rect width="%s" height="%s" fill="#fff"/>`, f(w), f(h))
	b.text(w/2, 16, "middle", "t", title)
}

// ProcessChart returns an SVG stacked bar chart of useful (bottom) and MPI
// (top) time per process.
func ProcessChart(title string, procs []ProcessTimes) string {
	const w, h = 760.0, 300.0
	var b svgBuf
	b.start(w, h+legendRow, title)
	if len(procs) == 0 {
		b.text(w/2, h/2, "middle", "", "no per-process data")
		b.close()
		return b.String()
	}
	top := 0.0
	for _, p := range procs {
		top = max(top, p.Useful+p.MPI)
	}
	yt, ylo, yhi := NiceTicks(0, top, 6)
	ystep := 1.0
	if len(yt) > 1 {
		ystep = yt[1] - yt[0]
	}
	x0, x1 := chartLeft, w-chartRight
	y0, y1 := h-chartBottom, chartTop
	sy := func(y float64) float64 { return y0 - (y-ylo)/(yhi-ylo)*(y0-y1) }
	for _, t := range yt {
		y := sy(t)
		b.line(x0, y, x1, y, "#e0e0e0", 1)
		b.text(x0-6, y+4, "end", "", formatTick(t, ystep))
	}
	slot := (x1 - x0) / float64(len(procs))
	bw := slot * 0.8
	labels := map[int]bool{}
	for _, i := range evenIndices(len(procs), 16) {
		labels[i] = true
	}
	for i, p := range procs {
		x := x0 + float64(i)*slot + (slot-bw)/2
		u, m := sy(p.Useful), sy(p.Useful+p.MPI)
		b.rect(x, u, bw, y0-u, usefulColour, fmt.Sprintf("rank %d: useful %.3f s", p.Rank, p.Useful))
		b.rect(x, m, bw, u-m, mpiColour, fmt.Sprintf("rank %d: MPI %.3f s", p.Rank, p.MPI))
		if labels[i] {
			b.text(x+bw/2, y0+16, "middle", "s", strconv.Itoa(p.Rank))
		}
	}
	b.line(x0, y0, x1, y0, "#333", 1)
	b.line(x0, y0, x0, y1, "#333", 1)
	b.text((x0+x1)/2, h-8, "middle", "", "MPI rank")
	fmt.Fprintf(&b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">time (s, Σ over CPUs)</text>`, f((y0+y1)/2), f((y0+y1)/2))
	b.rect(x0, h+4, 12, 8, usefulColour, "")
	b.text(x0+16, h+12, "start", "s", "useful")
	b.rect(x0+90, h+4, 12, 8, mpiColour, "")
	b.text(x0+106, h+12, "start", "s", "MPI")
	b.close()
	return b.String()
}

// maxProcessBars is the most processes drawn as one bar each; above it (and
// for a measurement in summary form) the chart is a distribution.
const maxProcessBars = 256

// DistributionChart returns an SVG chart of the distributions of useful
// (left) and MPI (right) time per process: a histogram of processes per
// time bin, with the extremes and their ranks below each.
func DistributionChart(title string, useful, mpi measure.Distribution) string {
	const w, h = 760.0, 300.0
	var b svgBuf
	b.start(w, h+legendRow, title)
	panel := func(x0, x1 float64, d measure.Distribution, name, colour string) {
		y0, y1 := h-chartBottom, chartTop
		top := int64(1)
		for _, c := range d.Histogram {
			top = max(top, c)
		}
		yt, ylo, yhi := NiceTicks(0, float64(top), 5)
		sy := func(y float64) float64 { return y0 - (y-ylo)/(yhi-ylo)*(y0-y1) }
		for _, t := range yt {
			y := sy(t)
			b.line(x0, y, x1, y, "#e0e0e0", 1)
			b.text(x0-6, y+4, "end", "", formatTick(t, 1))
		}
		n := max(len(d.Histogram), 1)
		slot := (x1 - x0) / float64(n)
		width := (float64(d.Max) - float64(d.Min) + 1) / float64(n)
		for i, c := range d.Histogram {
			lo := (float64(d.Min) + float64(i)*width) / 1e9
			y := sy(float64(c))
			b.rect(x0+float64(i)*slot+1, y, slot-2, y0-y, colour,
				fmt.Sprintf("%s %.3f–%.3f s: %d processes", name, lo, lo+width/1e9, c))
		}
		b.line(x0, y0, x1, y0, "#333", 1)
		b.line(x0, y0, x0, y1, "#333", 1)
		b.text(x0, y0+16, "start", "s", fmt.Sprintf("%s (rank %d)", units.FixedSeconds(d.Min, 3), d.MinRank))
		b.text(x1, y0+16, "end", "s", fmt.Sprintf("%s (rank %d)", units.FixedSeconds(d.Max, 3), d.MaxRank))
		b.text((x0+x1)/2, h-8, "middle", "", name+" time per process")
	}
	mid := w / 2
	panel(chartLeft, mid-20, useful, "useful", usefulColour)
	panel(mid+chartLeft-20, w-chartRight, mpi, "MPI", mpiColour)
	fmt.Fprintf(&b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">processes</text>`, f(h/2), f(h/2))
	b.close()
	return b.String()
}

// BarChart returns an SVG bar chart of values with one labelled bar per
// category, each bar's value written above it.
func BarChart(title, xlabel, ylabel string, labels []string, values []float64) string {
	const w, h = 760.0, 300.0
	var b svgBuf
	b.start(w, h, title)
	top := 0.0
	for _, v := range values {
		top = max(top, v)
	}
	yt, ylo, yhi := NiceTicks(0, top, 5)
	ystep := 1.0
	if len(yt) > 1 {
		ystep = yt[1] - yt[0]
	}
	x0, x1 := chartLeft, w-chartRight
	y0, y1 := h-chartBottom-10, chartTop+8
	sy := func(y float64) float64 { return y0 - (y-ylo)/(yhi-ylo)*(y0-y1) }
	for _, t := range yt {
		y := sy(t)
		b.line(x0, y, x1, y, "#e0e0e0", 1)
		b.text(x0-6, y+4, "end", "", formatTick(t, ystep))
	}
	n := max(len(values), 1)
	slot := (x1 - x0) / float64(n)
	for i, v := range values {
		x := x0 + float64(i)*slot
		y := sy(v)
		b.rect(x+slot*0.1, y, slot*0.8, y0-y, usefulColour, "")
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" class="v">%s</text>`, f(x+slot/2), f(y-3), esc(strconv.FormatFloat(v, 'f', -1, 64)))
		if i < len(labels) {
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" class="s" transform="rotate(-35 %s %s)">%s</text>`,
				f(x+slot/2), f(y0+12), f(x+slot/2), f(y0+12), esc(labels[i]))
		}
	}
	b.line(x0, y0, x1, y0, "#333", 1)
	b.line(x0, y0, x0, y1, "#333", 1)
	b.text((x0+x1)/2, h-4, "middle", "", xlabel)
	fmt.Fprintf(&b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s</text>`, f((y0+y1)/2), f((y0+y1)/2), esc(ylabel))
	b.close()
	return b.String()
}

// Sparkline returns a small SVG line of values (efficiencies, oldest
// first) on a fixed 0–1 scale, the last value written after it; NaN values
// are left out.
func Sparkline(label string, values []float64) string {
	const w, h, pw = 150.0, 26.0, 112.0
	var b svgBuf
	b.open(w, h, label)
	b.WriteString(chartStyle)
	var pts []string
	var last float64
	n := len(values)
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		x := 2 + pw*float64(i)/float64(max(n-1, 1))
		if n == 1 {
			x = pw / 2
		}
		y := h - 3 - (h-6)*math.Max(0, math.Min(1, v))
		pts = append(pts, f(x)+","+f(y))
		last = v
	}
	b.line(2, h-3, pw+2, h-3, "#ccc", 1)
	if len(pts) > 1 {
		fmt.Fprintf(&b, `<polyline fill="none" stroke="#333" stroke-width="1.3" points="%s"/>`, strings.Join(pts, " "))
	}
	if len(pts) > 0 {
		xy := strings.SplitN(pts[len(pts)-1], ",", 2)
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s" stroke="#333"/>`, xy[0], xy[1], CellColour(last))
		fmt.Fprintf(&b, `<text x="%s" y="17" class="v">%.2f</text>`, f(pw+8), last)
	}
	b.close()
	return b.String()
}
