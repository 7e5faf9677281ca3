package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Kind is the call class of an MPI function (call profile, RAT model).
type Kind int

// The call classes, in the order of C's enum popmon_kind.
const (
	KindP2P Kind = iota
	KindCollective
	KindOneSided
	KindIO
	KindOther
	numKinds
)

var kindWords = [numKinds]string{"p2p", "collective", "onesided", "io", "other"}

// CName is the kind's C enumerator, e.g. POPMON_KIND_P2P.
func (k Kind) CName() string {
	return "POPMON_KIND_" + strings.ToUpper(kindWords[k])
}

func (k Kind) String() string { return kindWords[k] }

func parseKind(s string) (Kind, error) {
	for k, w := range kindWords {
		if s == w {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown kind %q (want one of %s)", s, strings.Join(kindWords[:], ", "))
}

// Version is an MPI standard version.
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	return v.Major < w.Major || (v.Major == w.Major && v.Minor < w.Minor)
}

var versionRE = regexp.MustCompile(`^([1-9][0-9]*)\.([0-9]+)$`)

func parseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("bad MPI version %q (want MAJOR.MINOR)", s)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return Version{major, minor}, nil
}

// Guard is the preprocessor condition under which mpi.h declares functions
// of version v, or "" for MPI-1.0 (always).
func (v Version) Guard() string {
	switch {
	case !(Version{1, 0}).Less(v):
		return ""
	case v.Minor == 0:
		return fmt.Sprintf("MPI_VERSION >= %d", v.Major)
	default:
		return fmt.Sprintf("MPI_VERSION > %d || (MPI_VERSION == %d && MPI_SUBVERSION >= %d)",
			v.Major, v.Major, v.Minor)
	}
}

// Param is one parameter of a C prototype.
type Param struct {
	Decl string // as written: "const int dims[]"
	Type string // the declaration without the name: "const int []"
	Name string // "dims"
}

// IsChar reports whether the parameter is a C string or an array of them,
// which the Fortran binding passes as CHARACTER.
func (p Param) IsChar() bool { return charRE.MatchString(p.Type) }

var charRE = regexp.MustCompile(`\bchar\b`)

// Hook says which start-up or shut-down hook a wrapper calls.
type Hook string

// The hooks.
const (
	HookNone     Hook = ""
	HookInit     Hook = "init"     // MPI_Init*: PMPI first, then popmon_mpi_init_hook()
	HookFinalize Hook = "finalize" // MPI_Finalize: popmon_mpi_finalize_hook(), then PMPI
	HookAbort    Hook = "abort"    // MPI_Abort: popmon_mpi_abort_hook(errorcode), then measured as usual
)

// Call is one line of the call list: an MPI function to intercept.
type Call struct {
	Line     int // line number in the call list
	Version  Version
	Kind     Kind
	Return   string  // C return type
	Name     string  // "MPI_Send"
	Params   []Param // fixed parameters
	Variadic bool    // the prototype ends with ", ..."

	NoFortran bool     // fortran=none
	FChar     []string // fchar=: C parameters that are CHARACTER in Fortran
	FArgs     []string // fargs=: the Fortran binding's parameters, when they differ
	HasFArgs  bool     // fargs= was given (FArgs may then be empty)
	Hook      Hook
	Cond      string // cond=: extra preprocessor condition
	Data      string // data=: the byte accounting's role (data.go), "" for none
}

// PMPIName is the C profiling entry point, e.g. PMPI_Send.
func (c *Call) PMPIName() string { return "P" + c.Name }

// ID is the C enumerator of the function, e.g. POPMON_FN_MPI_Send.
func (c *Call) ID() string { return "POPMON_FN_" + c.Name }

// FortranName is the undecorated Fortran symbol, e.g. mpi_send.
func (c *Call) FortranName() string { return strings.ToLower(c.Name) }

// Guard is the full preprocessor condition of the wrappers, or "".
func (c *Call) Guard() string {
	g := c.Version.Guard()
	switch {
	case c.Cond == "":
		return g
	case g == "":
		return c.Cond
	default:
		return "(" + g + ") && (" + c.Cond + ")"
	}
}

// Names the generated code uses next to the parameters.
var reservedNames = map[string]bool{"popmon_r": true, "f": true, "fp": true, "names": true}

const ierrorName = "ierror"

var (
	protoRE = regexp.MustCompile(`^(.*?)\b(MPI_[A-Z][A-Za-z0-9_]*)\s*\((.*)\)$`)
	paramRE = regexp.MustCompile(`^(.*?)\b([A-Za-z_][A-Za-z0-9_]*)\s*((?:\[\s*[0-9]*\s*\]\s*)*)$`)
	typeRE  = regexp.MustCompile(`^(const\s+)?[A-Za-z_][A-Za-z0-9_]*(\s+[A-Za-z_][A-Za-z0-9_]*)*[\s*]*(\[\s*[0-9]*\s*\]\s*)*$`)
)

var typeKeywords = map[string]bool{"const": true, "void": true, "int": true, "char": true,
	"unsigned": true, "signed": true, "long": true, "short": true, "double": true, "float": true}

// parsePrototype parses "int MPI_Send(const void *buf, ...)".
func parsePrototype(s string) (ret, name string, params []Param, variadic bool, err error) {
	s = strings.Join(strings.Fields(s), " ")
	m := protoRE.FindStringSubmatch(s)
	if m == nil {
		return "", "", nil, false, fmt.Errorf("not a C prototype of an MPI_ function: %q", s)
	}
	ret, name = strings.TrimSpace(m[1]), m[2]
	if ret == "" || !typeRE.MatchString(ret) {
		return "", "", nil, false, fmt.Errorf("%s: bad return type %q", name, ret)
	}
	list := strings.TrimSpace(m[3])
	if strings.ContainsAny(list, "()") {
		return "", "", nil, false, fmt.Errorf("%s: function pointer declarators are not supported (use the MPI typedefs)", name)
	}
	if list == "void" {
		return ret, name, nil, false, nil
	}
	if list == "" {
		return "", "", nil, false, fmt.Errorf("%s: empty parameter list: write (void)", name)
	}
	seen := map[string]bool{}
	parts := strings.Split(list, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "..." {
			if i != len(parts)-1 || i == 0 {
				return "", "", nil, false, fmt.Errorf("%s: '...' must follow at least one parameter and come last", name)
			}
			variadic = true
			continue
		}
		pm := paramRE.FindStringSubmatch(p)
		if pm == nil {
			return "", "", nil, false, fmt.Errorf("%s: cannot parse parameter %q", name, p)
		}
		typ := strings.TrimSpace(pm[1])
		pname := pm[2]
		if typ == "" || strings.Trim(typ, "* ") == "const" || typeKeywords[pname] {
			return "", "", nil, false, fmt.Errorf("%s: parameter %q has no name", name, p)
		}
		if brackets := strings.ReplaceAll(pm[3], " ", ""); brackets != "" {
			typ += " " + brackets
		}
		if !typeRE.MatchString(typ) {
			return "", "", nil, false, fmt.Errorf("%s: bad type in parameter %q", name, p)
		}
		if seen[pname] {
			return "", "", nil, false, fmt.Errorf("%s: duplicate parameter name %q", name, pname)
		}
		if reservedNames[pname] || pname == ierrorName || strings.HasPrefix(pname, "popmon_") {
			return "", "", nil, false, fmt.Errorf("%s: parameter name %q is reserved by the generator", name, pname)
		}
		seen[pname] = true
		params = append(params, Param{Decl: p, Type: typ, Name: pname})
	}
	return ret, name, params, variadic, nil
}

func splitNames(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseOptions applies the OPTIONS field to c.
func (c *Call) parseOptions(field string) error {
	seen := map[string]bool{}
	for _, opt := range strings.Split(field, ";") {
		opt = strings.TrimSpace(opt)
		if opt == "" {
			continue
		}
		key, val, ok := strings.Cut(opt, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok {
			return fmt.Errorf("option %q: want key=value", opt)
		}
		if seen[key] {
			return fmt.Errorf("option %s given twice", key)
		}
		seen[key] = true
		switch key {
		case "fortran":
			if val != "none" {
				return fmt.Errorf("fortran=%s: only fortran=none is known", val)
			}
			c.NoFortran = true
		case "fchar":
			c.FChar = splitNames(val)
			if len(c.FChar) == 0 {
				return fmt.Errorf("fchar= names no parameter")
			}
		case "fargs":
			c.FArgs, c.HasFArgs = splitNames(val), true
		case "hook":
			switch Hook(val) {
			case HookInit, HookFinalize, HookAbort:
				c.Hook = Hook(val)
			default:
				return fmt.Errorf("hook=%s: want init, finalize or abort", val)
			}
		case "data":
			c.Data = val
		case "cond":
			if val == "" {
				return fmt.Errorf("cond= is empty")
			}
			c.Cond = val
		default:
			return fmt.Errorf("unknown option %q", key)
		}
	}
	return nil
}

// check validates the Fortran description against the C prototype.
func (c *Call) check() error {
	byName := map[string]Param{}
	for _, p := range c.Params {
		byName[p.Name] = p
	}
	if c.NoFortran {
		if len(c.FChar) > 0 || c.HasFArgs {
			return fmt.Errorf("%s: fortran=none with fchar/fargs", c.Name)
		}
		return nil
	}
	if c.Variadic {
		return fmt.Errorf("%s: a variadic function needs fortran=none", c.Name)
	}
	seen := map[string]bool{}
	for _, a := range c.FArgs {
		if _, ok := byName[a]; !ok {
			return fmt.Errorf("%s: fargs names %q, which is not a parameter", c.Name, a)
		}
		if seen[a] {
			return fmt.Errorf("%s: fargs names %q twice", c.Name, a)
		}
		seen[a] = true
	}
	fargs := c.fortranParams()
	inF := map[string]bool{}
	for _, p := range fargs {
		inF[p.Name] = true
	}
	isChar := map[string]bool{}
	for _, a := range c.FChar {
		if !inF[a] {
			return fmt.Errorf("%s: fchar names %q, which is not a Fortran argument", c.Name, a)
		}
		if isChar[a] {
			return fmt.Errorf("%s: fchar names %q twice", c.Name, a)
		}
		if !byName[a].IsChar() {
			return fmt.Errorf("%s: fchar names %q, which is not a char parameter in C", c.Name, a)
		}
		isChar[a] = true
	}
	for _, p := range fargs {
		if p.IsChar() && !isChar[p.Name] {
			return fmt.Errorf("%s: parameter %q is a C string: list it in fchar (or leave it out with fargs)", c.Name, p.Name)
		}
	}
	// Hidden lengths are named NAME_len: they must not shadow an argument.
	for _, a := range c.FChar {
		if _, clash := byName[a+"_len"]; clash && inF[a+"_len"] {
			return fmt.Errorf("%s: hidden length %s_len clashes with a parameter", c.Name, a)
		}
	}
	return nil
}

// fortranParams are the C parameters that the Fortran binding takes, in
// order, without IERROR.
func (c *Call) fortranParams() []Param {
	if !c.HasFArgs {
		return c.Params
	}
	var out []Param
	for _, a := range c.FArgs {
		for _, p := range c.Params {
			if p.Name == a {
				out = append(out, p)
			}
		}
	}
	return out
}

// ParseCalls reads a call list (see mpi_calls.txt for the format).
func ParseCalls(r io.Reader) ([]*Call, error) {
	var calls []*Call
	seen := map[string]int{}
	err := eachListLine(r, func(lineNo int, line string) error {
		c, err := parseLine(line)
		if err != nil {
			return err
		}
		c.Line = lineNo
		if prev, dup := seen[c.Name]; dup {
			return fmt.Errorf("%s already listed on line %d", c.Name, prev)
		}
		seen[c.Name] = lineNo
		calls = append(calls, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("the call list is empty")
	}
	return calls, nil
}

// eachListLine calls fn with the number and the trimmed text of every line
// of r that is neither blank nor a '#' comment; fn's error is returned
// with the line number.
func eachListLine(r io.Reader, fn func(lineNo int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := fn(lineNo, line); err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
	return sc.Err()
}

func parseLine(line string) (*Call, error) {
	// The options may contain '|' (cond=A || B): split at the first three.
	fields := strings.SplitN(line, "|", 4)
	if len(fields) < 3 {
		return nil, fmt.Errorf("want VERSION | KIND | PROTOTYPE [| OPTIONS], got %d fields", len(fields))
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	v, err := parseVersion(fields[0])
	if err != nil {
		return nil, err
	}
	k, err := parseKind(fields[1])
	if err != nil {
		return nil, err
	}
	ret, name, params, variadic, err := parsePrototype(fields[2])
	if err != nil {
		return nil, err
	}
	c := &Call{Version: v, Kind: k, Return: ret, Name: name, Params: params, Variadic: variadic}
	if len(fields) == 4 {
		if err := c.parseOptions(fields[3]); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if c.Hook != HookNone && c.Return != "int" {
		return nil, fmt.Errorf("%s: hooks need an int return", name)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := c.checkData(); err != nil {
		return nil, err
	}
	return c, nil
}

// ParsePassthrough reads the pass-through list (mpi_passthrough.txt): one
// MPI function name per line, '#' comments; a name of the call list, a
// repeated name or one that is not an MPI_/MPIX_ identifier is an error.
func ParsePassthrough(r io.Reader, calls []*Call) ([]string, error) {
	measured := map[string]bool{}
	for _, c := range calls {
		measured[c.Name] = true
	}
	seen := map[string]bool{}
	var out []string
	err := eachListLine(r, func(_ int, line string) error {
		switch {
		case !passRE.MatchString(line):
			return fmt.Errorf("%q is not an MPI_ or MPIX_ function name", line)
		case measured[line]:
			return fmt.Errorf("%s is in the call list (measured), not a pass-through", line)
		case seen[line]:
			return fmt.Errorf("%s repeated", line)
		}
		seen[line] = true
		out = append(out, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var passRE = regexp.MustCompile(`^MPIX?_[A-Za-z0-9_]+$`)
