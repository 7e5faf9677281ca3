package pages

import (
	"fmt"
	"strconv"
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

// ProcessChart returns an SVG stacked bar chart of useful (bottom) and MPI
// (top) time per process.
func ProcessChart(title string, procs []ProcessTimes) string {
	const w, h = 760.0, 300.0
	var b svgBuf
	b.open(w, h+legendRow, title)
	b.WriteString(chartStyle)
	fmt.Fprintf(&b, `<rect width="%s" height="%s" fill="#fff"/>`, f(w), f(h+legendRow))
	b.text(w/2, 16, "middle", "t", title)
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
