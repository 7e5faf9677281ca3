package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// cut127 is a name that the C library cut at its 127-byte limit in the
// middle of a 3-byte character ("€" is e2 82 ac): 126 bytes of "a", then
// the first byte of "€".
var cut127 = strings.Repeat("a", 126) + "€"[:1]

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Global", "Global"},
		{"", ""},
		{"solver ü € 日本", "solver ü € 日本"},
		{"\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"a\rb", `a\rb`},
		{"a\nb\tc", `a\nb\tc`},
		{"nul\x00", `nul\x00`},
		{"del\x7f", `del\x7f`},
		{"c1 csi \u009b2J", `c1 csi \u009b2J`},
		{"evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"\u2066isolate\u2069", `\u2066isolate\u2069`},
		{"rlm\u200f alm\u061c", `rlm\u200f alm\u061c`},
		{"line\u2028sep", `line\u2028sep`},
		{"latin1 caf\xe9", `latin1 caf\xe9`},
		{"\xff\xfe", `\xff\xfe`},
		{cut127, strings.Repeat("a", 126) + `\xe2`},
		{"back\\slash", "back\\slash"},
		{"real \ufffd stays", "real \ufffd stays"},
	}
	for _, tt := range tests {
		got := Text(tt.in)
		if got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Text(%q) = %q is not valid UTF-8", tt.in, got)
		}
		if strings.ContainsFunc(got, Unsafe) {
			t.Errorf("Text(%q) = %q keeps an unsafe character", tt.in, got)
		}
		if Text(got) != got {
			t.Errorf("Text is not idempotent on %q", got)
		}
	}
}

func TestLines(t *testing.T) {
	in := "line 1\n\tline 2 \x1b[31mred\r\n\u202e"
	want := "line 1\n\tline 2 \\x1b[31mred\\r\n\\u202e"
	if got := Lines(in); got != want {
		t.Errorf("Lines(%q) = %q, want %q", in, got, want)
	}
	if got := Lines("plain\n"); got != "plain\n" {
		t.Errorf("Lines changed a clean document: %q", got)
	}
}

func TestCSVCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Global", "Global"},
		{"=cmd|' /C calc'!A0", `'=cmd|' /C calc'!A0`},
		{"+1+1", "'+1+1"},
		{"-2+3", "'-2+3"},
		{"-0.5", "'-0.5"}, // a text cell that looks like a number is still text
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", `\t=1`}, // escaped: starts with a backslash, harmless
		{"\r=1", `\r=1`}, // idem
		{"a=b", "a=b"},   // only the first character matters
		{"\x1b[2J", `\x1b[2J`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := CSVCell(tt.in); got != tt.want {
			t.Errorf("CSVCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Global", "Global"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{`<img src=x onerror="alert(1)">`, `&lt;img src=x onerror="alert(1)"&gt;`},
		{"|a|b|", `\|a\|b\|`},
		{"`code` *em* _u_ ~s~", "\\`code\\` \\*em\\* \\_u\\_ \\~s\\~"},
		{"[link](http://x)", `\[link\](http://x)`},
		{"a & b # $x$", `a &amp; b \# \$x\$`},
		{`back\slash`, `back\\slash`},
		{"esc\x1b[2J", `esc\\x1b\[2J`}, // renders as esc\x1b[2J, like the text report
		{"&lt;", "&amp;lt;"},
	}
	for _, tt := range tests {
		if got := Markdown(tt.in); got != tt.want {
			t.Errorf("Markdown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUnsafe(t *testing.T) {
	for _, r := range []rune{0, '\t', '\n', '\r', 0x1b, 0x7f, 0x80, 0x9b, 0x9f, 0x202e, 0x2067, 0x2028} {
		if !Unsafe(r) {
			t.Errorf("Unsafe(%U) = false", r)
		}
	}
	for _, r := range []rune{' ', 'a', '~', 0xa0, 'é', '€', 0x200d, 0xfffd} {
		if Unsafe(r) {
			t.Errorf("Unsafe(%U) = true", r)
		}
	}
}

// FuzzText checks that Text always gives valid UTF-8 without an unsafe
// character, whatever the input.
func FuzzText(f *testing.F) {
	for _, s := range []string{"Global", "\x1b[2J", "caf\xe9", cut127, "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, got := range []string{Text(s), CSVCell(s), Markdown(s)} {
			if !utf8.ValidString(got) || strings.ContainsFunc(got, Unsafe) {
				t.Fatalf("unsafe output %q for %q", got, s)
			}
		}
		if got := Lines(s); !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool { return Unsafe(r) && r != '\n' && r != '\t' }) {
			t.Fatalf("Lines: unsafe output %q for %q", got, s)
		}
	})
}
