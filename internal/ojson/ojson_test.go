package ojson

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestFloatJSON(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{{1, "1.0"}, {0, "0.0"}, {0.625, "0.625"}, {1.0 / 3, "0.3333333333333333"}, {4e9, "4000000000.0"}, {1e-7, "1e-07"}, {2e21, "2e+21"}}
	for _, tt := range tests {
		b, err := Float(tt.v).MarshalJSON()
		if err != nil || string(b) != tt.want {
			t.Errorf("Float(%v) = %s, %v; want %s", tt.v, b, err, tt.want)
		}
		var back float64
		if err := json.Unmarshal(b, &back); err != nil || back != tt.v {
			t.Errorf("Float(%v) does not round-trip: %v %v", tt.v, back, err)
		}
	}
	if _, err := Float(math.NaN()).MarshalJSON(); err == nil {
		t.Error("NaN marshalled")
	}
}

func TestObjectKeepsOrder(t *testing.T) {
	var b bytes.Buffer
	if err := WriteIndented(&b, Object{{"b", 1}, {"a", Float(2)}, {"<&>", Object{}}}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"b\": 1,\n  \"a\": 2.0,\n  \"<&>\": {}\n}\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestJSONSafe(t *testing.T) {
	if got := string(jsonSafe([]byte(`"a\u202eb"`))); got != `"a\u202eb"` {
		t.Errorf("escaped text changed: %s", got)
	}
	if got := string(jsonSafe([]byte("\"a\u202eb\""))); got != `"a\u202eb"` {
		t.Errorf("raw U+202E: %s", got)
	}
	for _, s := range []string{"del\x7f", "c1\u0085", "iso\u2066"} {
		b, err := marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out := jsonSafe(b)
		var back string
		if err := json.Unmarshal(out, &back); err != nil || back != s {
			t.Errorf("%q: decodes to %q (%v)", s, back, err)
		}
		if bytes.ContainsAny(out, s[len(s)-2:]) && !bytes.Contains(out, []byte(`\u`)) {
			t.Errorf("%q: written raw: %s", s, out)
		}
	}
}
