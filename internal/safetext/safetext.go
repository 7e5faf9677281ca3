// Package safetext makes text that came from a file safe to show: region
// names, MPI function names, module paths, commands, host names and any
// other string a measurement, trace or DLB/TALP file carries. Every
// renderer of popmon writes such strings through this package, so that a
// hostile or damaged file can neither drive the terminal (escape
// sequences, carriage returns), nor reorder what people read (bidi
// overrides), nor produce invalid UTF-8, nor inject formulas into a
// spreadsheet or HTML into Markdown (docs/report-formats.md, "Names from
// files").
//
// Escapes are Go-like and stay visible: "\t", "\n", "\r" for tab, line
// feed and carriage return, "\x1b" for any other ASCII control character
// and for every byte that is not part of valid UTF-8, "\u202e" for a
// Unicode control or bidi formatting character. A backslash that was in
// the name is shown as it is.
package safetext

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Unsafe reports whether r must not be written raw to a terminal or a
// document: the C0 controls, DEL and the C1 controls (terminal escapes,
// carriage return, 8-bit CSI), the bidi formatting characters (U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, which reorder the text
// around them) and the line and paragraph separators U+2028 and U+2029.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// Text returns s with every unsafe character ([Unsafe]) and every byte
// that is not valid UTF-8 escaped, for one line of text: a name, a cell,
// a header field. The result is valid UTF-8 without control characters.
// s itself is returned when it needs no escape.
func Text(s string) string {
	return escape(s, false)
}

// Lines is [Text] for a whole document of several lines: line feeds and
// tabs are kept, everything else unsafe is escaped as by Text.
func Lines(s string) string {
	return escape(s, true)
}

// escape implements Text and Lines.
func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeByte(&b, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && Unsafe(r):
			writeByte(&b, byte(r))
		case Unsafe(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>uint(shift))&0xf])
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// writeByte writes c as "\xNN".
func writeByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

// clean reports whether s needs no escape.
func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(keepLines && (c == '\n' || c == '\t')) {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || Unsafe(r) {
			return false
		}
		i += n
	}
	return true
}

// CSVCell returns s made safe as a text cell of a CSV file: escaped as by
// [Text], then, when it starts with '=', '+', '-' or '@' (a spreadsheet
// would read it as a formula; OWASP's CSV injection rule, whose tab and
// carriage return Text has already escaped), prefixed with a single
// quote. Use it for text columns only: a numeric column keeps its value
// ("-0.5" stays a number).
func CSVCell(s string) string {
	s = Text(s)
	if s != "" && strings.IndexByte("=+-@", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// markdownEscaper escapes what Markdown (CommonMark and GitHub's tables)
// would read as markup: HTML as entities, emphasis, code, links, table
// pipes, headings and math with a backslash.
var markdownEscaper = strings.NewReplacer(
	`&`, "&amp;", `<`, "&lt;", `>`, "&gt;",
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `~`, `\~`,
	`[`, `\[`, `]`, `\]`, `|`, `\|`, `#`, `\#`, `$`, `\$`,
)

// Markdown returns s made safe as inline Markdown text (a heading, a
// paragraph or a table cell; not inside a code span): escaped as by
// [Text], then '&', '<' and '>' as HTML entities and the Markdown
// punctuation ` * _ ~ [ ] | # $ and the backslash with a backslash, so a
// name can neither inject HTML nor break a table.
func Markdown(s string) string {
	return markdownEscaper.Replace(Text(s))
}
