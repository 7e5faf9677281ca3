// Package ojson writes JSON whose objects keep their keys' order (TALP
// tooling and people read the order; Go maps would sort them), whose
// floats always read as floats at full precision, and whose strings never
// carry a character that could act on a terminal. internal/report's JSON
// outputs and internal/talpjson's writer use it.
package ojson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/popmon/popmon/internal/safetext"
)

// Object is a JSON object whose keys keep their order (maps would sort
// them; TALP tooling and people read the order).
type Object []Member

// Member is one key of an object. It is an unnamed struct type, so
// that other packages write members as {"key", value} like their own.
type Member = struct {
	Key   string
	Value any
}

// MarshalJSON writes the members in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(m.Value)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", m.Key, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Float is a float64 that always reads as a JSON float ("1.0", not "1"),
// at full precision (the shortest text that parses back to the same
// value).
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("cannot write %v in JSON", v)
	}
	format := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, v, format, -1, 64)
	if format == 'f' && bytes.IndexByte(b, '.') < 0 {
		b = append(b, '.', '0')
	}
	return b, nil
}

// marshal encodes v compactly without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// WriteIndented writes v as JSON indented by two spaces, with a final
// newline. Strings keep their exact value, but no character that could act
// on a terminal is written raw (jsonSafe); invalid UTF-8 in a string
// becomes U+FFFD (encoding/json), so the file is always valid UTF-8.
func WriteIndented(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonSafe(b.Bytes()))
	return err
}

// jsonSafe returns the JSON text b with the unsafe characters that
// encoding/json leaves raw (DEL, the C1 controls, bidi formatting
// characters; safetext.Unsafe) written as \u escapes, which JSON readers
// decode to the same string. Such characters can only be inside strings:
// the structure of JSON is printable ASCII, spaces and line feeds, and
// encoding/json already escapes the C0 controls of strings.
func jsonSafe(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if safetext.Unsafe(r) {
			out = append(out, b[last:i]...)
			out = fmt.Appendf(out, `\u%04x`, r)
			last = i + n
		}
		i += n
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
