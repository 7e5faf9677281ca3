package pages

import (
	"fmt"
	"math"
)

// Badge returns a shields-style SVG badge "label | value" with the value
// part coloured by v on the efficiency scale ([BadgeColour]); NaN shows
// "n/a" in grey. Text widths are estimated (about 6.5 px per character of
// an 11 px sans-serif font), so no font needs to be loaded.
func Badge(label string, v float64) string {
	value := "n/a"
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		value = fmt.Sprintf("%.2f", v)
	}
	col := BadgeColour(v)
	lw := textWidth(label) + 12
	vw := textWidth(value) + 12
	w := lw + vw
	var b svgBuf
	b.open(w, 20, label+": "+value)
	fmt.Fprintf(&b, `<linearGradient id="s" x2="0" y2="100%%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	fmt.Fprintf(&b, `<clipPath id="r"><rect width="%s" height="20" rx="3" fill="#fff"/></clipPath>`, f(w))
	fmt.Fprintf(&b, `<g clip-path="url(#r)"><rect width="%s" height="20" fill="#555"/><rect x="%s" width="%s" height="20" fill="%s"/><rect width="%s" height="20" fill="url(#s)"/></g>`,
		f(lw), f(lw), f(vw), col, f(w))
	fmt.Fprintf(&b, `<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">`)
	fmt.Fprintf(&b, `<text x="%s" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%s" y="14">%s</text>`, f(lw/2), esc(label), f(lw/2), esc(label))
	fmt.Fprintf(&b, `<text x="%s" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%s" y="14">%s</text>`, f(lw+vw/2), esc(value), f(lw+vw/2), esc(value))
	b.WriteString("</g>")
	b.close()
	return b.String()
}

// textWidth estimates the width in pixels of s in an 11 px sans-serif
// font.
func textWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r == ' ' || r == '.' || r == ',' || r == '|' || r == 'i' || r == 'l' || r == 'j':
			w += 3.5
		case r >= 'A' && r <= 'Z' || r == 'm' || r == 'w':
			w += 8
		default:
			w += 6.5
		}
	}
	return w
}
