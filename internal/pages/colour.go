package pages

import (
	"fmt"
	"math"
)

// The colour scale of efficiencies (docs/pages.md): a value v is clamped to
// [0, 1] and mapped to the HSL hue 120·v degrees, so 0 is red, 0.5 yellow
// and 1 (or more: super-linear scaling stays green) green. Table cells use
// a light shade (dark text on it), badges a dark one (white text on it).
// An absent or non-finite value is grey.
const (
	cellSaturation  = 0.70
	cellLightness   = 0.78
	badgeSaturation = 0.65
	badgeLightness  = 0.38
	// NoValueColour is the colour of an absent value.
	NoValueColour = "#9e9e9e"
)

// Hue returns the hue in degrees (0 red … 120 green) of efficiency v.
func Hue(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return 120 * math.Max(0, math.Min(1, v))
}

// CellColour returns the background colour ("#rrggbb") of a table cell
// showing efficiency v.
func CellColour(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "#eeeeee"
	}
	return hsl(Hue(v), cellSaturation, cellLightness)
}

// BadgeColour returns the colour ("#rrggbb") of a badge showing
// efficiency v.
func BadgeColour(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return NoValueColour
	}
	return hsl(Hue(v), badgeSaturation, badgeLightness)
}

// hsl converts a colour from HSL (h in degrees, s and l in [0, 1]) to
// "#rrggbb".
func hsl(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	hp := math.Mod(h, 360) / 60
	x := c * (1 - math.Abs(math.Mod(hp, 2)-1))
	var r, g, b float64
	switch {
	case hp < 1:
		r, g = c, x
	case hp < 2:
		r, g = x, c
	case hp < 3:
		g, b = c, x
	case hp < 4:
		g, b = x, c
	case hp < 5:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	to := func(v float64) int { return int(math.Round(255 * math.Max(0, math.Min(1, v+m)))) }
	return fmt.Sprintf("#%02x%02x%02x", to(r), to(g), to(b))
}

// palette holds distinguishable line colours for chart series.
var palette = []string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
}

// seriesColour returns the colour of the i-th series of a chart.
func seriesColour(i int) string { return palette[((i%len(palette))+len(palette))%len(palette)] }
