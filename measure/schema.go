package measure

import (
	"bytes"
	_ "embed" // for the embedded schema
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed measurement.schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of the measurement file,
// the same text as docs/measurement.schema.json.
func Schema() []byte {
	return bytes.Clone(schemaJSON)
}

var parsedSchema = sync.OnceValues(func() (*schema, error) {
	return parseSchema(schemaJSON)
})

// ValidateSchema checks the JSON document data against the measurement
// file's JSON Schema ([Schema]). It checks what a writer must produce
// (every documented key, types, enums, minimums), which is stricter than
// what [Read] accepts. Errors name each offending place by its JSON path,
// e.g. `$.regions[0].processes[1].useful_ns: is a string, want integer`;
// up to twenty are joined into one error.
func ValidateSchema(data []byte) error {
	s, err := parsedSchema()
	if err != nil {
		return fmt.Errorf("embedded measurement schema: %w", err)
	}
	return s.validate(data)
}

// schema is a parsed JSON Schema supporting the subset of draft 2020-12
// that the measurement schema uses: type (a name or a list of names),
// required, properties, items, enum, const, minimum, minItems, and $ref to
// a JSON pointer inside the same document ("#/$defs/x"). Every other
// keyword (additionalProperties, format, description, ...) is ignored.
//
// One deliberate strictness: "integer" accepts only numbers written without
// a fraction or exponent (1, not 1.0 or 1e3), because that is what
// encoding/json can decode into Go integers and what the C writer emits.
type schema struct {
	root any
}

func parseSchema(data []byte) (*schema, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("schema is not a JSON object")
	}
	return &schema{root: v}, nil
}

// decodeJSON decodes one JSON value with numbers kept as json.Number and
// rejects trailing data.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	return v, nil
}

// maxSchemaErrors bounds the errors one validation reports.
const maxSchemaErrors = 20

type schemaRun struct {
	s     *schema
	errs  []error
	extra int
	depth int
}

func (s *schema) validate(data []byte) error {
	v, err := decodeJSON(data)
	if err != nil {
		return err
	}
	r := &schemaRun{s: s}
	r.check(s.root, v, "$")
	if len(r.errs) == 0 {
		return nil
	}
	if r.extra > 0 {
		r.errs = append(r.errs, fmt.Errorf("and %d more schema violations", r.extra))
	}
	return errors.Join(r.errs...)
}

func (r *schemaRun) fail(path, format string, args ...any) {
	if len(r.errs) >= maxSchemaErrors {
		r.extra++
		return
	}
	r.errs = append(r.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

// resolve follows a local $ref ("#/$defs/name", a JSON pointer).
func (r *schemaRun) resolve(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("unsupported $ref %q: only local references", ref)
	}
	cur := r.s.root
	ptr := strings.TrimPrefix(ref, "#")
	if ptr == "" {
		return cur, nil
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q: no %q", ref, tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("$ref %q: bad index %q", ref, tok)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("$ref %q: cannot descend into %q", ref, tok)
		}
	}
	return cur, nil
}

func (r *schemaRun) check(sch any, v any, path string) {
	s, ok := sch.(map[string]any)
	if !ok {
		if b, isBool := sch.(bool); isBool && !b {
			r.fail(path, "is not allowed")
		}
		return // true or an unusable schema accepts everything
	}
	if ref, ok := s["$ref"].(string); ok {
		r.depth++
		if r.depth > 64 {
			r.fail(path, "schema $ref nesting too deep")
		} else if target, err := r.resolve(ref); err != nil {
			r.fail(path, "%v", err)
		} else {
			r.check(target, v, path)
		}
		r.depth--
	}
	if t, ok := s["type"]; ok && !r.checkType(t, v, path) {
		return // other keywords would only repeat the type error
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, allowed := range e {
			if jsonEqual(allowed, v) {
				found = true
				break
			}
		}
		if !found {
			r.fail(path, "is %s, want one of %s", show(v), showList(e))
		}
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, v) {
		r.fail(path, "is %s, want %s", show(v), show(c))
	}
	if minimum, ok := s["minimum"].(json.Number); ok {
		if n, isNum := v.(json.Number); isNum {
			mv, err1 := minimum.Float64()
			nv, err2 := n.Float64()
			if err1 == nil && err2 == nil && nv < mv {
				r.fail(path, "is %s, below the minimum %s", n, minimum)
			}
		}
	}
	if maximum, ok := s["maximum"].(json.Number); ok {
		if n, isNum := v.(json.Number); isNum {
			mv, err1 := maximum.Float64()
			nv, err2 := n.Float64()
			if err1 == nil && err2 == nil && nv > mv {
				r.fail(path, "is %s, above the maximum %s", n, maximum)
			}
		}
	}
	switch val := v.(type) {
	case map[string]any:
		if req, ok := s["required"].([]any); ok {
			for _, k := range req {
				if name, ok := k.(string); ok {
					if _, present := val[name]; !present {
						r.fail(path, "misses required key %q", name)
					}
				}
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			sort.Strings(keys) // deterministic error order
			for _, k := range keys {
				if pv, present := val[k]; present {
					r.check(props[k], pv, path+"."+k)
				}
			}
		}
	case []any:
		if minItems, ok := s["minItems"].(json.Number); ok {
			if n, err := minItems.Int64(); err == nil && int64(len(val)) < n {
				r.fail(path, "has %d items, want at least %d", len(val), n)
			}
		}
		if items, ok := s["items"]; ok {
			for i, item := range val {
				r.check(items, item, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
}

// checkType reports whether v has one of the types t names.
func (r *schemaRun) checkType(t any, v any, path string) bool {
	var names []string
	switch tt := t.(type) {
	case string:
		names = []string{tt}
	case []any:
		for _, n := range tt {
			if s, ok := n.(string); ok {
				names = append(names, s)
			}
		}
	default:
		return true
	}
	for _, n := range names {
		if hasType(n, v) {
			return true
		}
	}
	r.fail(path, "is %s, want %s", typeOf(v), strings.Join(names, " or "))
	return false
}

func hasType(name string, v any) bool {
	switch name {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		return ok && isIntegerLiteral(string(n))
	}
	return false
}

func isIntegerLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// typeOf names the JSON type of v for messages ("a string", "the number 1.5").
func typeOf(v any) string {
	switch val := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case json.Number:
		return "the number " + string(val)
	}
	return fmt.Sprintf("%T", v)
}

func jsonEqual(a, b any) bool {
	switch av := a.(type) {
	case json.Number:
		bv, ok := b.(json.Number)
		if !ok {
			return false
		}
		if av == bv {
			return true
		}
		af, err1 := av.Float64()
		bf, err2 := bv.Float64()
		return err1 == nil && err2 == nil && af == bf
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, present := bv[k]
			if !present || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !jsonEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b), 60)
}

func showList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = show(v)
	}
	return strings.Join(parts, ", ")
}
