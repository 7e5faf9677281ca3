package pages

import (
	"fmt"
	"math"
	"strings"
)

// Point is one point of a series.
type Point struct{ X, Y float64 }

// Series is one line of a chart.
type Series struct {
	// Name is shown in the legend.
	Name string
	// Points are drawn in order; NaN values are skipped.
	Points []Point
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
	// positions).
	XTick  func(x float64) string
	XTicks []float64
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
	markerLimit = 150 // draw point markers only for shorter series
)

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
	perRow := max(1, int((w-chartLeft)/180))
	legendH := float64((legendItems+perRow-1)/perRow) * legendRow
	total := h + legendH
	var b svgBuf
	b.start(w, total, c.Title)

	x0, x1 := chartLeft, w-chartRight
	y0, y1 := h-chartBottom, chartTop // y0 is the bottom
	xmin, xmax, ymin, ymax, any := c.bounds()
	if !any {
		b.text(w/2, h/2, "middle", "", "no data")
		b.close()
		return b.String()
	}
	if c.YFixed {
		ymin, ymax = math.Min(ymin, c.YMin), math.Max(ymax, c.YMax)
	}
	yt, ylo, yhi := NiceTicks(ymin, ymax, 6)
	ystep := 1.0
	if len(yt) > 1 {
		ystep = yt[1] - yt[0]
	}
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	sx := func(x float64) float64 { return x0 + (x-xmin)/(xmax-xmin)*(x1-x0) }
	sy := func(y float64) float64 { return y0 - (y-ylo)/(yhi-ylo)*(y0-y1) }

	// Grid and y ticks.
	for _, t := range yt {
		y := sy(t)
		b.line(x0, y, x1, y, "#e0e0e0", 1)
		b.text(x0-6, y+4, "end", "", formatTick(t, ystep))
	}
	// x ticks.
	xt := c.XTicks
	if len(xt) == 0 {
		for i := 0; i < 6; i++ {
			xt = append(xt, xmin+float64(i)*(xmax-xmin)/5)
		}
	}
	prev := ""
	for _, t := range xt {
		if t < xmin || t > xmax {
			continue
		}
		x := sx(t)
		b.line(x, y0, x, y0+4, "#333", 1)
		label := f(t)
		if c.XTick != nil {
			label = c.XTick(t)
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
	fmt.Fprintf(&b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s</text>`, f((y0+y1)/2), f((y0+y1)/2), esc(c.YLabel))

	// Lines.
	for i, s := range c.Series {
		col := seriesColour(i)
		var pts []string
		for _, p := range s.Points {
			if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.Y, 0) {
				continue
			}
			pts = append(pts, f(sx(p.X))+","+f(sy(p.Y)))
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, col, strings.Join(pts, " "))
		}
		if len(pts) <= markerLimit {
			for _, p := range pts {
				xy := strings.SplitN(p, ",", 2)
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`, xy[0], xy[1], col)
			}
		}
	}
	// Legend.
	for i, s := range c.Series {
		lx := chartLeft + float64(i%perRow)*180
		ly := h + float64(i/perRow)*legendRow + 4
		b.rect(lx, ly, 12, 4, seriesColour(i), "")
		b.text(lx+16, ly+6, "start", "s", truncate(s.Name, 28))
	}
	b.close()
	return b.String()
}

// bounds returns the range of the finite points.
func (c *LineChart) bounds() (xmin, xmax, ymin, ymax float64, any bool) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
				continue
			}
			any = true
			xmin, xmax = math.Min(xmin, p.X), math.Max(xmax, p.X)
			ymin, ymax = math.Min(ymin, p.Y), math.Max(ymax, p.Y)
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
