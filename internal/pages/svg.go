package pages

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/safetext"
)

// svgNS is the SVG namespace: an identifier, never fetched.
const svgNS = "http://www.w3.org/2000/svg"

// svgBuf accumulates an SVG document.
type svgBuf struct{ strings.Builder }

// esc escapes s for XML text and attribute values; control characters,
// bidi overrides and invalid UTF-8 are shown escaped (safetext.Text).
func esc(s string) string {
	var b strings.Builder
	for _, r := range safetext.Text(s) {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// f formats a coordinate with at most 2 decimals.
func f(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

func (b *svgBuf) open(w, h float64, label string) {
	fmt.Fprintf(b, `<svg xmlns="%s" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="%s">`,
		svgNS, f(w), f(h), f(w), f(h), esc(label))
	fmt.Fprintf(b, "<title>%s</title>", esc(label))
}

func (b *svgBuf) close() { b.WriteString("</svg>") }

func (b *svgBuf) text(x, y float64, anchor, class, s string) {
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="%s" class="%s">%s</text>`, f(x), f(y), anchor, class, esc(s))
}

func (b *svgBuf) line(x1, y1, x2, y2 float64, stroke string, width float64) {
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"/>`, f(x1), f(y1), f(x2), f(y2), stroke, f(width))
}

func (b *svgBuf) rect(x, y, w, h float64, fill, title string) {
	if title == "" {
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, f(x), f(y), f(w), f(h), fill)
		return
	}
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`, f(x), f(y), f(w), f(h), fill, esc(title))
}

// chartStyle is the inline style of charts: system fonts only.
const chartStyle = `<style>text{font-family:sans-serif;font-size:11px;fill:#333}.t{font-size:13px;font-weight:bold}.s{font-size:10px}.v{font-size:10px;fill:#111;paint-order:stroke;stroke:#fff;stroke-width:3px}.reg{fill:#c0392b;font-weight:bold}</style>`
