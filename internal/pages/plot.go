package pages

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Point is one point of a series.
type Point struct{ X, Y float64 }

// Series is one line of a chart.
type Series struct {
	// Name is shown in the legend.
	Name string
	// ID, when set, is written as data-metric on the series' value
	// labels (tests and readers find a metric's labels by it).
	ID string
	// Points are drawn in order; NaN values are skipped.
	Points []Point
	// Dash is the SVG stroke-dasharray of the line ("" : the series'
	// default style, "none": solid). Each series gets a line style and a
	// marker shape of its own, so that a chart printed in grey stays
	// readable.
	Dash string
	// NoLine draws the markers only; NoMarkers the line only.
	NoLine, NoMarkers bool
	// Open draws hollow markers (predictions).
	Open bool
	// Labels writes each point's value next to it, formatted by Format
	// (nil: 2 decimals): the values are visible without hovering.
	Labels bool
	Format func(float64) string
	// Colour overrides the palette colour.
	Colour string
	// Marks are points drawn with a red ✕ and their text (a regression
	// the check gate would fail on).
	Marks []Mark
}

// Mark is a marked point of a series.
type Mark struct {
	Point
	// Text is written next to the mark.
	Text string
}

// LineChart describes an SVG line chart.
type LineChart struct {
	// Title is drawn above the chart; YLabel along the y axis and XLabel
	// below the x axis.
	Title, XLabel, YLabel string
	// Series are the lines.
	Series []Series
	// XTick formats an x tick value (nil: the number). XTicks, when not
	// empty, are the x positions to label (otherwise about 6 evenly spaced
	// positions; the powers of 2 on a log-2 axis).
	XTick  func(x float64) string
	XTicks []float64
	// LogX and LogY make the axis logarithmic in base 2 (values ≤ 0 are
	// not drawn).
	LogX, LogY bool
	// YMin and YMax, when YFixed, fix the y range (it still grows to fit
	// the data, so that values above 1 stay visible).
	YFixed     bool
	YMin, YMax float64
	// Width and Height of the whole SVG (0: 760 × 300, plus the legend).
	Width, Height float64
}

// Layout of a line chart.
const (
	chartLeft   = 64.0
	chartRight  = 40.0
	chartTop    = 28.0
	chartBottom = 44.0
	legendRow   = 16.0
	legendCol   = 190.0
	markerLimit = 150 // draw point markers only for shorter series
	labelHeight = 11.0
	// maxMarkTexts is the most marks of a series whose text is written
	// (beyond, the ✕ alone).
	maxMarkTexts = 20
)

// dashes are the line styles of series 0, 1, … (solid, dashed, dotted, …).
var dashes = []string{"none", "6 3", "2 2", "8 3 2 3", "4 4", "1 3", "10 4", "3 3 1 3"}

// markers is the number of marker shapes (see marker).
const markers = 6

// axisT returns the transform of an axis: log2 or identity.
func axisT(log bool) func(float64) float64 {
	if log {
		return func(v float64) float64 {
			if v <= 0 {
				return math.NaN()
			}
			return math.Log2(v)
		}
	}
	return func(v float64) float64 { return v }
}

// SVG returns the chart as a standalone SVG element.
func (c *LineChart) SVG() string {
	w, h := c.Width, c.Height
	if w <= 0 {
		w = 760
	}
	if h <= 0 {
		h = 300
	}
	legendItems := len(c.Series)
	perRow := max(1, int((w-chartLeft)/legendCol))
	legendH := float64((legendItems+perRow-1)/perRow) * legendRow
	total := h + legendH
	var b svgBuf
	b.start(w, total, c.Title)

	fr, any := c.frame(w, h)
	if !any {
		b.text(w/2, h/2, "middle", "", "no data")
		b.close()
		return b.String()
	}
	c.drawAxes(&b, fr)
	labels := c.drawSeries(&b, fr)
	drawLabels(&b, labels, fr)
	c.drawLegend(&b, h, perRow)
	b.close()
	return b.String()
}

// chartFrame is where a chart's data goes: the plot area (x0 … x1, y0 at
// the bottom … y1), the data ranges after the axes' transforms (tx, ty:
// log2 or none), the y ticks, and the scales from data to the area.
type chartFrame struct {
	h                    float64
	x0, x1, y0, y1       float64
	xmin, xmax, ylo, yhi float64
	ystep                float64
	yt                   []float64
	tx, ty, sx, sy       func(float64) float64
}

// frame returns the frame of the chart in a w × h area; false when no
// series has a point to draw.
func (c *LineChart) frame(w, h float64) (chartFrame, bool) {
	tx, ty := axisT(c.LogX), axisT(c.LogY)
	x0, x1 := chartLeft, w-chartRight
	y0, y1 := h-chartBottom, chartTop // y0 is the bottom
	xmin, xmax, ymin, ymax, any := c.bounds(tx, ty)
	if !any {
		return chartFrame{}, false
	}
	if c.YFixed {
		ymin, ymax = math.Min(ymin, ty(c.YMin)), math.Max(ymax, ty(c.YMax))
	}
	var yt []float64
	var ylo, yhi, ystep float64
	if c.LogY {
		ylo, yhi = math.Floor(ymin), math.Ceil(ymax)
		if yhi == ylo {
			yhi++
		}
		for e := ylo; e <= yhi; e++ {
			yt = append(yt, e)
		}
	} else {
		yt, ylo, yhi = NiceTicks(ymin, ymax, 6)
		ystep = 1.0
		if len(yt) > 1 {
			ystep = yt[1] - yt[0]
		}
	}
	if c.LogX {
		xmin, xmax = math.Floor(xmin), math.Ceil(xmax)
	}
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	// Room on the right for the labels of the last points.
	pad := 0.0
	if c.hasLabels() {
		pad = 34
	}
	sx := func(x float64) float64 { return x0 + (tx(x)-xmin)/(xmax-xmin)*(x1-pad-x0) }
	sy := func(y float64) float64 { return y0 - (ty(y)-ylo)/(yhi-ylo)*(y0-y1) }
	return chartFrame{h: h, x0: x0, x1: x1, y0: y0, y1: y1, xmin: xmin, xmax: xmax, ylo: ylo, yhi: yhi,
		ystep: ystep, yt: yt, tx: tx, ty: ty, sx: sx, sy: sy}, true
}

// drawAxes draws the grid, the ticks and their labels, the axes and their
// titles.
func (c *LineChart) drawAxes(b *svgBuf, fr chartFrame) {
	h, x0, x1, y0, y1 := fr.h, fr.x0, fr.x1, fr.y0, fr.y1
	xmin, xmax, ystep, yt := fr.xmin, fr.xmax, fr.ystep, fr.yt
	tx, sx, sy := fr.tx, fr.sx, fr.sy
	// Grid and y ticks.
	for _, t := range yt {
		v := t
		label := ""
		if c.LogY {
			v = math.Exp2(t)
			label = formatPow2(v)
		} else {
			label = formatTick(t, ystep)
		}
		y := sy(v)
		b.line(x0, y, x1, y, "#e0e0e0", 1)
		b.text(x0-6, y+4, "end", "", label)
	}
	// x ticks.
	xt := c.XTicks
	if len(xt) == 0 {
		if c.LogX {
			for e := xmin; e <= xmax; e++ {
				xt = append(xt, math.Exp2(e))
			}
		} else {
			for i := 0; i < 6; i++ {
				xt = append(xt, xmin+float64(i)*(xmax-xmin)/5)
			}
		}
	}
	prev := ""
	for _, t := range xt {
		if v := tx(t); math.IsNaN(v) || v < xmin-1e-9 || v > xmax+1e-9 {
			continue
		}
		x := sx(t)
		b.line(x, y0, x, y0+4, "#333", 1)
		label := f(t)
		switch {
		case c.XTick != nil:
			label = c.XTick(t)
		case c.LogX:
			label = formatPow2(t)
		}
		if label != prev { // a short range repeats labels
			b.text(x, y0+16, "middle", "s", label)
		}
		prev = label
	}
	// Axes.
	b.line(x0, y0, x1, y0, "#333", 1)
	b.line(x0, y0, x0, y1, "#333", 1)
	b.text((x0+x1)/2, h-8, "middle", "", c.XLabel)
	fmt.Fprintf(b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s</text>`, f((y0+y1)/2), f((y0+y1)/2), esc(c.YLabel))

}

// drawSeries draws each series' line, markers and regression marks, and
// returns the value labels of the series that have them, to be placed
// together.
func (c *LineChart) drawSeries(b *svgBuf, fr chartFrame) []valueLabel {
	tx, ty, sx, sy := fr.tx, fr.ty, fr.sx, fr.sy
	var labels []valueLabel
	for i, s := range c.Series {
		col := c.colour(i)
		type xy struct{ x, y, v float64 }
		var pts []xy
		for _, p := range s.Points {
			if math.IsNaN(tx(p.X)) || math.IsNaN(ty(p.Y)) || math.IsInf(p.Y, 0) {
				continue
			}
			pts = append(pts, xy{sx(p.X), sy(p.Y), p.Y})
		}
		if len(pts) > 1 && !s.NoLine {
			var ps []string
			for _, p := range pts {
				ps = append(ps, f(p.x)+","+f(p.y))
			}
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>`, col, dashAttr(s.dash(i)), strings.Join(ps, " "))
		}
		if len(pts) <= markerLimit && !s.NoMarkers {
			for _, p := range pts {
				marker(b, p.x, p.y, i, col, s.Open)
			}
		}
		if s.Labels {
			for _, p := range pts {
				labels = append(labels, valueLabel{x: p.x + 6, y: p.y + 4, text: s.format(p.v), id: s.ID, colour: col})
			}
		}
		var d strings.Builder
		for _, m := range s.Marks {
			if math.IsNaN(tx(m.X)) || math.IsNaN(ty(m.Y)) {
				continue
			}
			x, y := sx(m.X), sy(m.Y)
			fmt.Fprintf(&d, "M%s %sl8 8m0-8l-8 8", f(x-4), f(y-4))
			if len(s.Marks) <= maxMarkTexts {
				b.text(x, y-8, "middle", "s reg", m.Text)
			}
		}
		if d.Len() > 0 {
			fmt.Fprintf(b, `<path d="%s" stroke="#c0392b" stroke-width="2.5" class="regression"/>`, d.String())
		}
	}
	return labels
}

// drawLabels places the value labels apart and draws them.
func drawLabels(b *svgBuf, labels []valueLabel, fr chartFrame) {
	y0, y1 := fr.y0, fr.y1
	placeLabels(labels, y1, y0+labelHeight)
	for _, l := range labels {
		attr := ""
		if l.id != "" {
			attr = fmt.Sprintf(` data-metric="%s"`, esc(l.id))
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="start" class="v" style="fill:%s"%s>%s</text>`, f(l.x), f(l.y), l.colour, attr, esc(l.text))
	}
}

// drawLegend draws the legend below the h-high chart, perRow items a row:
// colour, line style and marker of each series.
func (c *LineChart) drawLegend(b *svgBuf, h float64, perRow int) {
	for i, s := range c.Series {
		lx := chartLeft + float64(i%perRow)*legendCol
		ly := h + float64(i/perRow)*legendRow + 6
		col := c.colour(i)
		if !s.NoLine {
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"%s/>`, f(lx), f(ly), f(lx+22), f(ly), col, dashAttr(s.dash(i)))
		}
		if !s.NoMarkers {
			marker(b, lx+11, ly, i, col, s.Open)
		}
		b.text(lx+26, ly+4, "start", "s", truncate(s.Name, 30))
	}
}

// valueLabel is a value written next to its point.
type valueLabel struct {
	x, y     float64
	text, id string
	colour   string
}

// placeLabels moves labels that share a column apart vertically so that
// none overlaps another (labels keep their order by height), within
// [top, bottom].
func placeLabels(ls []valueLabel, top, bottom float64) {
	cols := map[int][]int{}
	for i := range ls {
		k := int(math.Round(ls[i].x))
		cols[k] = append(cols[k], i)
	}
	for _, idx := range cols {
		sort.SliceStable(idx, func(a, b int) bool { return ls[idx[a]].y < ls[idx[b]].y })
		// Push down from the top, then up from the bottom.
		for k := 1; k < len(idx); k++ {
			if p, c := ls[idx[k-1]].y, &ls[idx[k]].y; *c < p+labelHeight {
				*c = p + labelHeight
			}
		}
		if n := len(idx); n > 0 && ls[idx[n-1]].y > bottom {
			ls[idx[n-1]].y = bottom
			for k := n - 2; k >= 0; k-- {
				if nx, c := ls[idx[k+1]].y, &ls[idx[k]].y; *c > nx-labelHeight {
					*c = nx - labelHeight
				}
			}
		}
		for _, i := range idx {
			ls[i].y = math.Max(ls[i].y, top)
		}
	}
}

// hasLabels reports whether any series writes its values.
func (c *LineChart) hasLabels() bool {
	for _, s := range c.Series {
		if s.Labels {
			return true
		}
	}
	return false
}

func (c *LineChart) colour(i int) string {
	if c.Series[i].Colour != "" {
		return c.Series[i].Colour
	}
	return seriesColour(i)
}

func (s *Series) dash(i int) string {
	if s.Dash != "" {
		return s.Dash
	}
	return dashes[i%len(dashes)]
}

func (s *Series) format(v float64) string {
	if s.Format != nil {
		return s.Format(v)
	}
	return fmt.Sprintf("%.2f", v)
}

func dashAttr(d string) string {
	if d == "" || d == "none" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, d)
}

// marker draws marker shape i%markers at (x, y): circle, square, triangle,
// diamond, down triangle, plus; hollow when open.
func marker(b *svgBuf, x, y float64, i int, col string, open bool) {
	fill := col
	if open {
		fill = "#fff"
	}
	const r = 3.2
	switch i % markers {
	case 0:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="%s" stroke="%s"/>`, f(x), f(y), f(r), fill, col)
	case 1:
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="%s"/>`, f(x-r), f(y-r), f(2*r), f(2*r), fill, col)
	case 2:
		fmt.Fprintf(b, `<path d="M%s %sl%s %sh%sz" fill="%s" stroke="%s"/>`, f(x), f(y-r-0.6), f(r+0.6), f(2*r+0.6), f(-2*r-1.2), fill, col)
	case 3:
		fmt.Fprintf(b, `<path d="M%s %sl%s %sl%s %sl%s %sz" fill="%s" stroke="%s"/>`, f(x), f(y-r-1), f(r+1), f(r+1), f(-r-1), f(r+1), f(-r-1), f(-r-1), fill, col)
	case 4:
		fmt.Fprintf(b, `<path d="M%s %sl%s %sh%sz" fill="%s" stroke="%s"/>`, f(x), f(y+r+0.6), f(r+0.6), f(-2*r-0.6), f(-2*r-1.2), fill, col)
	default:
		fmt.Fprintf(b, `<path d="M%s %sh%sM%s %sv%s" stroke="%s" stroke-width="2"/>`, f(x-r-1), f(y), f(2*r+2), f(x), f(y-r-1), f(2*r+2), col)
	}
}

// formatPow2 writes a tick of a log-2 axis: the number, without needless
// decimals (1, 2, 16, 1024, 0.5).
func formatPow2(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// bounds returns the range of the finite points after the axis
// transforms.
func (c *LineChart) bounds(tx, ty func(float64) float64) (xmin, xmax, ymin, ymax float64, any bool) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			x, y := tx(p.X), ty(p.Y)
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				continue
			}
			any = true
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
		}
	}
	return
}

// truncate shortens s to n runes with an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
