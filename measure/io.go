package measure

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
)

// Read reads and validates one measurement file from r. It accepts every
// version up to [Version], ignores unknown keys and reads missing times and
// counts as 0. Errors name the problem: a [*FormatError] for input that is
// not a measurement file, a [*VersionError] for a file newer than this
// package, and errors wrapping [ErrInvalid] for bad content. A file whose
// accounts break the invariant of POP-METRICS.md §1 is read all the same,
// with the violations in [Measurement.AccountViolations].
func Read(r io.Reader) (*Measurement, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read measurement: %w", err)
	}
	return decode(data)
}

// ReadFile reads and validates the measurement file at path, like [Read];
// its errors name the file.
func ReadFile(path string) (*Measurement, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read measurement file: %w", err)
	}
	m, err := decode(data)
	if err != nil {
		return nil, nameFile(err, path)
	}
	return m, nil
}

// nameFile puts the file name into err.
func nameFile(err error, path string) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		c := *fe
		c.File = path
		return &c
	}
	var ve *VersionError
	if errors.As(err, &ve) {
		c := *ve
		c.File = path
		return &c
	}
	return fmt.Errorf("%s: %w", path, err)
}

// decode parses and validates a measurement. It checks format and version
// before decoding the rest, so that a file of another kind or a newer
// version gets that message rather than a type error.
func decode(data []byte) (*Measurement, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FormatError{Reason: "empty input"}
	}
	var head struct {
		Format  json.RawMessage `json:"format"`
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, &FormatError{Reason: fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)}
		case errors.As(err, &te):
			return nil, &FormatError{Reason: "the top level is a JSON " + te.Value + ", not an object"}
		default:
			return nil, &FormatError{Reason: "invalid JSON: " + err.Error()}
		}
	}
	if len(head.Format) == 0 {
		return nil, &FormatError{Reason: `no "format" key`}
	}
	var format string
	if err := json.Unmarshal(head.Format, &format); err != nil {
		return nil, &FormatError{Reason: "format " + truncate(string(head.Format), 40) + " is not a string"}
	}
	if format != Format {
		return nil, &FormatError{Format: format}
	}
	if len(head.Version) == 0 {
		return nil, &ValidationError{Path: "version", Problem: "is missing"}
	}
	var version int
	if err := json.Unmarshal(head.Version, &version); err != nil {
		return nil, &ValidationError{Path: "version", Problem: truncate(string(head.Version), 40) + " is not an integer"}
	}
	if version > Version {
		return nil, &VersionError{Version: version, Supported: Version}
	}
	m := new(Measurement)
	if err := json.Unmarshal(data, m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, &ValidationError{Path: te.Field, Problem: fmt.Sprintf("is a JSON %s, want %s", te.Value, kindName(te.Type))}
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	m.Violations()
	return m, nil
}

// kindName names a Go type the way a JSON user thinks of it.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in the range of " + t.Kind().String()
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	}
	return t.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Write writes m to w as a measurement file (version 1, 2 when it has
// [Incomplete], 3 when it is [Partial]), one
// process or account per line. An empty Format or a zero Version are filled
// in; m itself is not modified. Write refuses a measurement that does not
// pass [Measurement.Validate]. Keys that may be omitted are: "timestamp"
// when empty (readers accept that; the schema, which describes libpopmon's
// output, requires it), "mpi", "openmp", "git", "counters", "gpu" and
// "source" and "ideal_network" when nil, "omp_regions" and the GPU arrays when empty, and zero counts of an account.
func Write(w io.Writer, m *Measurement) error {
	if m == nil {
		return fmt.Errorf("write measurement: %w: no measurement", ErrInvalid)
	}
	c := *m
	if c.Format == "" {
		c.Format = Format
	}
	if c.Version == 0 {
		c.Version = 1
		if c.Incomplete != nil {
			c.Version = 2
		}
		if c.Partial != nil {
			c.Version = 3
		}
		if c.Summarized != nil {
			c.Version = SummaryVersion
		}
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("write measurement: %w", err)
	}
	bw := bufio.NewWriter(w)
	e := &encoder{w: bw}
	e.raw("{\n")
	e.key("format", c.Format, true)
	e.key("version", c.Version, true)
	e.key("tool", c.Tool, true)
	if c.Timestamp != "" {
		e.key("timestamp", c.Timestamp, true)
	}
	e.key("command", nonNil(c.Command), true)
	e.key("cwd", c.Cwd, true)
	e.key("launcher", c.Launcher, true)
	if c.MPI != nil {
		e.key("mpi", c.MPI, true)
	}
	e.key("clock", c.Clock, true)
	e.key("resources", c.Resources, true)
	e.list("processes", len(c.Processes), "  ", func(i int) { e.value(c.Processes[i]) })
	e.raw(",\n")
	e.list("regions", len(c.Regions), "  ", func(i int) {
		g := &c.Regions[i]
		e.raw(`{"name": `)
		e.value(g.Name)
		e.raw(", ")
		e.list("processes", len(g.Processes), "    ", func(k int) { e.value(g.Processes[k]) })
		if g.Summary != nil {
			e.raw(`, "summary": `)
			e.value(g.Summary)
		}
		e.raw("}")
	})
	e.raw(",\n")
	e.list("mpi_calls", len(c.MPICalls), "  ", func(i int) { e.value(c.MPICalls[i]) })
	e.raw(",\n")
	if c.OpenMP != nil {
		e.key("openmp", c.OpenMP, true)
	}
	if len(c.OMPRegions) > 0 {
		e.list("omp_regions", len(c.OMPRegions), "  ", func(i int) { e.value(c.OMPRegions[i]) })
		e.raw(",\n")
	}
	if c.Git != nil {
		e.key("git", c.Git, true)
	}
	if c.Counters != nil {
		e.key("counters", c.Counters, true)
	}
	if c.GPU != nil {
		e.key("gpu", c.GPU, true)
	}
	for _, l := range []struct {
		name string
		n    int
		elem func(i int) any
	}{
		{"gpu_devices", len(c.GPUDevices), func(i int) any { return c.GPUDevices[i] }},
		{"gpu_kernels", len(c.GPUKernels), func(i int) any { return c.GPUKernels[i] }},
		{"gpu_copies", len(c.GPUCopies), func(i int) any { return c.GPUCopies[i] }},
		{"gpu_idle", len(c.GPUIdle), func(i int) any { return c.GPUIdle[i] }},
	} {
		if l.n > 0 {
			e.list(l.name, l.n, "  ", func(i int) { e.value(l.elem(i)) })
			e.raw(",\n")
		}
	}
	if c.Source != nil {
		e.key("source", c.Source, true)
	}
	if c.IdealNetwork != nil {
		e.key("ideal_network", c.IdealNetwork, true)
	}
	if c.Incomplete != nil {
		e.key("incomplete", c.Incomplete, true)
	}
	if c.Partial != nil {
		e.key("partial", c.Partial, true)
	}
	if c.Series != nil {
		e.raw(`  "series": `)
		e.series(c.Series)
		e.raw(",\n")
	}
	if c.Interception != nil {
		e.key("interception", c.Interception, true)
	}
	if c.GlobalAlignment != nil {
		e.key("global_alignment", c.GlobalAlignment, true)
	}
	if c.Lewi != nil {
		e.key("lewi", c.Lewi, true)
	}
	if c.Summarized != nil {
		e.key("summary", c.Summarized, true)
	}
	if c.Trace != nil {
		e.key("trace", c.Trace, true)
	}
	e.key("warnings", nonNil(c.Warnings), false)
	e.raw("}\n")
	if e.err != nil {
		return fmt.Errorf("write measurement: %w", e.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write measurement: %w", err)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// encoder writes the measurement layout of Write and keeps the first error.
type encoder struct {
	w   *bufio.Writer
	err error
	buf bytes.Buffer
}

func (e *encoder) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// value writes v as compact JSON without HTML escaping.
func (e *encoder) value(v any) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		e.err = err
		return
	}
	b := bytes.TrimRight(e.buf.Bytes(), "\n")
	// Add a space after each ',' and ':' outside strings, for readability.
	inString, escaped := false, false
	for _, c := range b {
		if e.err = e.w.WriteByte(c); e.err != nil {
			return
		}
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == ':'):
			e.err = e.w.WriteByte(' ')
		}
	}
}

// series writes s as value does, an interval at a time: a long run's
// series is tens of MB of JSON, which value would hold in memory whole.
func (e *encoder) series(s *Series) {
	e.raw(`{"interval_ns": `)
	e.value(s.IntervalNS)
	e.raw(`, "regions": `)
	if s.Regions == nil {
		e.raw("null}")
		return
	}
	e.raw("[")
	for i := range s.Regions {
		g := &s.Regions[i]
		if i > 0 {
			e.raw(", ")
		}
		e.raw(`{"name": `)
		e.value(g.Name)
		e.raw(`, "intervals": `)
		if g.Intervals == nil {
			e.raw("null}")
			continue
		}
		e.raw("[")
		for k := range g.Intervals {
			if k > 0 {
				e.raw(", ")
			}
			e.value(&g.Intervals[k])
		}
		e.raw("]}")
	}
	e.raw("]}")
}

// key writes one top-level key.
func (e *encoder) key(name string, v any, more bool) {
	e.raw(`  "` + name + `": `)
	e.value(v)
	if more {
		e.raw(",\n")
	} else {
		e.raw("\n")
	}
}

// list writes "name": [ ... ] with one element per line, indented by ind;
// a top-level list (ind "  ") gets its own key indentation.
func (e *encoder) list(name string, n int, ind string, elem func(i int)) {
	if ind == "  " {
		e.raw("  ")
	}
	e.raw(`"` + name + `": [`)
	if n == 0 {
		e.raw("]")
		return
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			e.raw(",")
		}
		e.raw("\n" + ind + "  ")
		elem(i)
	}
	e.raw("\n" + ind + "]")
}
