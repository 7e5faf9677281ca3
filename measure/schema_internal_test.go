package measure

import (
	"strings"
	"testing"
)

// TestSchemaValidatorKeywords checks each keyword of the validator subset on
// small schemas, independent of the measurement schema.
func TestSchemaValidatorKeywords(t *testing.T) {
	const sch = `{
	  "type": "object",
	  "required": ["a"],
	  "additionalProperties": false,
	  "properties": {
	    "a": {"type": "integer", "minimum": 2, "maximum": 9},
	    "b": {"type": ["string", "null"]},
	    "c": {"type": "array", "items": {"$ref": "#/$defs/small"}, "minItems": 1},
	    "d": {"enum": [1, "x", [1, 2], {"k": true}]},
	    "e": {"const": 2.5},
	    "f": {"type": "number"},
	    "g": {"type": "boolean"}
	  },
	  "$defs": {"small": {"type": "integer", "minimum": 0}}
	}`
	s, err := parseSchema([]byte(sch))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc  string
		want string // "" = valid
	}{
		{`{"a": 2}`, ""},
		{`{"a": 2, "unknown": [1]}`, ""}, // additionalProperties is ignored
		{`{"a": 2, "b": null, "c": [0, 5], "d": 1, "e": 2.50, "f": 1e3, "g": false}`, ""},
		{`{"a": 2, "d": [1, 2]}`, ""},
		{`{"a": 2, "d": {"k": true}}`, ""},
		{`{"a": 2, "d": "x"}`, ""},
		{`{}`, `$: misses required key "a"`},
		{`{"a": 1}`, "$.a: is 1, below the minimum 2"},
		{`{"a": 10}`, "$.a: is 10, above the maximum 9"},
		{`{"a": 2.0}`, "$.a: is the number 2.0, want integer"},
		{`{"a": 2e1}`, "$.a: is the number 2e1, want integer"},
		{`{"a": "2"}`, "$.a: is a string, want integer"},
		{`{"a": 2, "b": 3}`, "$.b: is the number 3, want string or null"},
		{`{"a": 2, "c": []}`, "$.c: has 0 items, want at least 1"},
		{`{"a": 2, "c": [1, -1]}`, "$.c[1]: is -1, below the minimum 0"},
		{`{"a": 2, "d": 2}`, `$.d: is 2, want one of 1, "x", [1,2], {"k":true}`},
		{`{"a": 2, "d": {"k": false}}`, `$.d: is {"k":false}, want one of`},
		{`{"a": 2, "e": 3}`, "$.e: is 3, want 2.5"},
		{`{"a": 2, "f": "1"}`, "$.f: is a string, want number"},
		{`{"a": 2, "g": 0}`, "$.g: is the number 0, want boolean"},
		{`[1]`, "$: is an array, want object"},
		{`{"a": 2`, "invalid JSON"},
	}
	for _, tt := range tests {
		err := s.validate([]byte(tt.doc))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.doc, err)
		case tt.want != "" && err == nil:
			t.Errorf("%s: accepted, want %q", tt.doc, tt.want)
		case tt.want != "" && !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s: error %q, want %q", tt.doc, err, tt.want)
		}
	}
}

func TestSchemaBadRef(t *testing.T) {
	s, err := parseSchema([]byte(`{"properties": {"a": {"$ref": "#/$defs/nope"}, "b": {"$ref": "other.json#/x"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.validate([]byte(`{"a": 1, "b": 2}`))
	if err == nil || !strings.Contains(err.Error(), `$ref "#/$defs/nope": no "$defs"`) || !strings.Contains(err.Error(), "only local references") {
		t.Errorf("err = %v", err)
	}
	if _, err := parseSchema([]byte(`[]`)); err == nil {
		t.Error("a non-object schema parsed")
	}
}

func TestSchemaErrorLimit(t *testing.T) {
	s, err := parseSchema([]byte(`{"items": {"type": "string"}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := "[" + strings.Repeat("1,", 30) + "1]"
	err = s.validate([]byte(doc))
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxSchemaErrors+1 || !strings.Contains(lines[maxSchemaErrors], "and 11 more schema violations") {
		t.Errorf("got %d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
