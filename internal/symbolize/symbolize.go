// Package symbolize turns code addresses of ELF executables and shared
// libraries into source locations: the enclosing function and the file and
// line, from the DWARF debug information of the file (compile with -g), or
// only the function, from the ELF symbol table, when the file has no DWARF.
//
// Addresses are ELF virtual addresses of the file, as the measurement
// format records them (docs/measurement-format.md, "omp_regions"): the
// run-time address minus the module's load bias. For a non-PIE executable
// the two are the same; for a PIE executable or a shared library the
// measuring side has already subtracted the load bias, so Lookup never
// relocates anything.
//
// Separate debug files (.gnu_debuglink, build-id directories,
// debuginfod) and split DWARF (.dwo) are not searched: only the sections of
// the named file itself are read.
package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
)

// Location is a source location.
type Location struct {
	// Function is the name of the function that contains the address: the
	// innermost inlined function where code was inlined, else the
	// subprogram (DW_AT_name, so unqualified for C++); from the symbol
	// table, possibly mangled, without DWARF. Empty when unknown.
	Function string
	// File is the source file of the line table row, made absolute with
	// the compilation directory when the compiler recorded a relative
	// path. Empty when unknown.
	File string
	// Line is the 1-based line in File; 0 when unknown.
	Line int
}

// String formats l as "function (file:line)", leaving out what is
// unknown: "function", "file:line", "" when nothing is known. The file is
// shown by its base name.
func (l Location) String() string {
	src := ""
	if l.File != "" {
		src = filepath.Base(l.File)
		if l.Line > 0 {
			src += ":" + strconv.Itoa(l.Line)
		}
	}
	switch {
	case l.Function == "":
		return src
	case src == "":
		return l.Function
	}
	return l.Function + " (" + src + ")"
}

// Errors that Lookup wraps; test them with errors.Is.
var (
	// ErrNoLineInfo means that the function was found, from DWARF or the
	// ELF symbol table, but not the file and line: the module has no DWARF
	// line table for the address (stripped, or built without -g). Lookup
	// returns the partial Location along with it.
	ErrNoLineInfo = errors.New("no line information (module stripped or built without -g)")
	// ErrNotFound means that neither DWARF nor the symbol table know the
	// address.
	ErrNotFound = errors.New("address not found in the module's debug information or symbol table")
)

// Symbolizer looks up addresses of ELF files. It reads each file once, on
// its first lookup, and keeps what it needs (DWARF and symbols) in memory,
// with the results of earlier lookups; the files themselves are closed
// again at once. A Symbolizer is safe for concurrent use. The zero value
// is ready to use.
type Symbolizer struct {
	mu      sync.Mutex
	modules map[string]*module
}

// New returns an empty Symbolizer.
func New() *Symbolizer { return &Symbolizer{} }

// module is what a Symbolizer keeps of one file.
type module struct {
	err      error          // why the file could not be read; then nothing else is set
	exec     [][2]uint64    // executable PT_LOAD segments: [start, end)
	dwarf    *dwarf.Data    // nil without DWARF
	dwarfErr error          // why dwarf is nil, when the file has debug sections
	units    []unit         // compilation units with code, from dwarf
	syms     []symbol       // function symbols by address
	results  map[uint64]res // earlier lookups by pc
}

// unit is a compilation unit and its code ranges.
type unit struct {
	off    dwarf.Offset
	ranges [][2]uint64
}

// symbol is a function symbol of .symtab or .dynsym.
type symbol struct {
	name       string
	addr, size uint64
}

// res is the result of one lookup.
type res struct {
	loc Location
	err error
}

// Lookup returns the source location of address in the ELF file module
// (an executable or a shared library; PIE or not).
//
// address is a return address, as OMPT and backtraces give it: the address
// of the instruction after a call. Lookup subtracts 1 from it to land
// inside the call instruction itself, so that the location is the line of
// the call (for an OpenMP parallel construct, the line of the directive in
// the function that contains it) and not the line of whatever follows. To
// look up an instruction's own address, pass address + 1.
//
// When the module has DWARF, the function is the DWARF subprogram whose
// code ranges contain the address or, in code inlined into it, the
// innermost inlined function (as addr2line -f reports it, so that function
// and line agree), and the file and line come from the line table.
// Without DWARF, or for code that the DWARF does not describe, the
// function comes from the ELF symbol table (.symtab, else .dynsym) and the
// error wraps ErrNoLineInfo; the returned Location then holds the
// function. Other errors (the file is missing, not a regular file or not
// an executable ELF file, the address lies outside the module's code,
// ErrNotFound) come with an empty Location. Every error names the module,
// and the address when it is about the address.
func (s *Symbolizer) Lookup(module string, address uint64) (Location, error) {
	if address == 0 {
		return Location{}, fmt.Errorf("symbolize %s: address 0 is not a return address", module)
	}
	pc := address - 1
	s.mu.Lock()
	defer s.mu.Unlock()
	mod := s.module(module)
	if mod.err != nil {
		return Location{}, fmt.Errorf("symbolize %s: %w", module, mod.err)
	}
	r, ok := mod.results[pc]
	if !ok {
		r.loc, r.err = mod.lookup(pc)
		mod.results[pc] = r
	}
	if r.err != nil {
		return r.loc, fmt.Errorf("symbolize %s+%#x: %w", module, address, r.err)
	}
	return r.loc, nil
}

// module returns the module of path, reading it on first use. s.mu is
// held.
func (s *Symbolizer) module(path string) *module {
	if m, ok := s.modules[path]; ok {
		return m
	}
	m := load(path)
	if s.modules == nil {
		s.modules = map[string]*module{}
	}
	s.modules[path] = m
	return m
}

// load reads path. Malformed files give an error, never a panic.
func load(path string) (m *module) {
	m = &module{results: map[uint64]res{}}
	defer func() {
		if v := recover(); v != nil {
			*m = module{err: fmt.Errorf("malformed ELF file: %v", v)}
		}
	}()
	// Only regular files: opening a FIFO or a device named by a damaged
	// measurement could block or read forever.
	fi, err := os.Stat(path)
	if err != nil {
		m.err = err
		return m
	}
	if !fi.Mode().IsRegular() {
		m.err = fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
		return m
	}
	f, err := elf.Open(path)
	if err != nil {
		m.err = err
		return m
	}
	defer f.Close()
	switch f.Type {
	case elf.ET_EXEC, elf.ET_DYN:
	default:
		m.err = fmt.Errorf("ELF type %v: not an executable or shared library", f.Type)
		return m
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Memsz > 0 {
			m.exec = append(m.exec, [2]uint64{p.Vaddr, p.Vaddr + p.Memsz})
		}
	}
	m.syms = functionSymbols(f)
	if f.Section(".debug_info") == nil && f.Section(".zdebug_info") == nil {
		return m
	}
	d, err := f.DWARF()
	if err != nil {
		m.dwarfErr = fmt.Errorf("read DWARF: %w", err)
		return m
	}
	m.dwarf = d
	m.units = compilationUnits(d)
	return m
}

// functionSymbols returns the defined function symbols of .symtab and
// .dynsym, sorted by address, longest first at equal addresses.
func functionSymbols(f *elf.File) []symbol {
	var out []symbol
	seen := map[symbol]bool{}
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		list, err := read()
		if err != nil {
			continue // no such table, or a broken one: use the other
		}
		for _, y := range list {
			t := elf.ST_TYPE(y.Info)
			if (t != elf.STT_FUNC && t != sttGNUIFunc) || y.Section == elf.SHN_UNDEF || y.Value == 0 || y.Name == "" {
				continue
			}
			s := symbol{name: y.Name, addr: y.Value, size: y.Size}
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].addr != out[j].addr {
			return out[i].addr < out[j].addr
		}
		if out[i].size != out[j].size {
			return out[i].size > out[j].size
		}
		return out[i].name < out[j].name
	})
	return out
}

// compilationUnits lists the compilation units of d that have code.
// Units whose ranges cannot be read are left out.
func compilationUnits(d *dwarf.Data) []unit {
	var out []unit
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return out
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			if ranges, err := d.Ranges(e); err == nil && len(ranges) > 0 {
				out = append(out, unit{off: e.Offset, ranges: ranges})
			}
		}
		r.SkipChildren()
	}
}

// lookup finds pc in m. Malformed DWARF gives an error, never a panic.
func (m *module) lookup(pc uint64) (loc Location, err error) {
	defer func() {
		if v := recover(); v != nil {
			loc, err = Location{}, fmt.Errorf("malformed debug information: %v", v)
		}
	}()
	if !m.inCode(pc) {
		return Location{}, errors.New("address outside the module's code segments (was the file rebuilt or replaced since the measurement?)")
	}
	if m.dwarf != nil {
		loc, err := m.lookupDWARF(pc)
		if err != nil {
			return Location{}, err
		}
		if loc.Function == "" {
			loc.Function = m.symbolAt(pc)
		}
		switch {
		case loc.File != "":
			return loc, nil
		case loc.Function != "":
			return loc, fmt.Errorf("%w: the DWARF line table does not cover the address", ErrNoLineInfo)
		}
	}
	if name := m.symbolAt(pc); name != "" {
		if m.dwarfErr != nil {
			return Location{Function: name}, fmt.Errorf("%w: %v", ErrNoLineInfo, m.dwarfErr)
		}
		return Location{Function: name}, ErrNoLineInfo
	}
	return Location{}, ErrNotFound
}

// inCode reports whether pc lies in an executable segment. Files without
// program headers pass.
func (m *module) inCode(pc uint64) bool {
	if len(m.exec) == 0 {
		return true
	}
	for _, s := range m.exec {
		if s[0] <= pc && pc < s[1] {
			return true
		}
	}
	return false
}

// symbolAt returns the function symbol containing pc, or "". A symbol of
// size 0 contains the addresses up to the next symbol.
func (m *module) symbolAt(pc uint64) string {
	i := sort.Search(len(m.syms), func(i int) bool { return m.syms[i].addr > pc })
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		y := m.syms[j]
		if pc < y.addr+y.size || (y.size == 0 && j == i-1) {
			return y.name
		}
	}
	return ""
}

// lookupDWARF returns what the DWARF of m says about pc: an empty Location
// when no unit covers it.
func (m *module) lookupDWARF(pc uint64) (Location, error) {
	var loc Location
	for _, u := range m.units {
		if !inRanges(u.ranges, pc) {
			continue
		}
		r := m.dwarf.Reader()
		r.Seek(u.off)
		cu, err := r.Next()
		if err != nil {
			return Location{}, fmt.Errorf("read compilation unit at %#x: %w", u.off, err)
		}
		if cu == nil {
			continue
		}
		loc.Function = m.function(r, cu, pc)
		if lr, err := m.dwarf.LineReader(cu); err == nil && lr != nil {
			if le, ok := seekPC(lr, pc); ok && le.File != nil && le.File.Name != "" {
				loc.File, loc.Line = fileName(le.File.Name, cu), le.Line
			}
		}
		if loc.Function != "" || loc.File != "" {
			return loc, nil
		}
	}
	return loc, nil
}

// seekPC returns the line table row that covers pc. Unlike
// dwarf.LineReader.SeekPC it does not assume that the sequences of the
// table are sorted by address: GCC emits the sequence of .text.startup
// (main, at -O2) and other sections after those of higher addresses.
func seekPC(lr *dwarf.LineReader, pc uint64) (dwarf.LineEntry, bool) {
	var prev, e dwarf.LineEntry
	have := false // prev is a row of the current sequence
	for lr.Next(&e) == nil {
		if have && prev.Address <= pc && pc < e.Address {
			return prev, true
		}
		prev, have = e, !e.EndSequence
	}
	return dwarf.LineEntry{}, false
}

// fileName repairs two mistakes of debug/dwarf (Go 1.22 to at least
// 1.26) in DWARF 5 line tables, where directory 0 is the compilation
// directory:
//   - it leaves a file relative when its directory is relative (Clang
//     names the directories of files below the compilation directory
//     relative to it: "testdata" + "prog.c"): relative names are joined
//     to the unit's DW_AT_comp_dir, as DWARF says;
//   - it joins a file's directory to the file's name even when the name
//     is absolute (Clang names the primary source file as it was given to
//     the compiler, often an absolute path, with directory 0): the
//     primary file's name is also the unit's DW_AT_name, so
//     comp_dir + DW_AT_name is recognised and undone. Other absolute
//     names in other directories stay wrong.
func fileName(name string, cu *dwarf.Entry) string {
	cuName, _ := cu.Val(dwarf.AttrName).(string)
	compDir, _ := cu.Val(dwarf.AttrCompDir).(string)
	switch {
	case compDir == "":
	case !path.IsAbs(name):
		return path.Join(compDir, name)
	case path.IsAbs(cuName) && name == path.Join(compDir, cuName):
		return cuName
	}
	return name
}

// inRanges reports whether pc lies in one of ranges.
func inRanges(ranges [][2]uint64, pc uint64) bool {
	for _, r := range ranges {
		if r[0] <= pc && pc < r[1] {
			return true
		}
	}
	return false
}

// function returns the name of the function of the unit cu (r is
// positioned after it) at pc: the outermost subprogram whose ranges contain
// pc, or, when pc lies in code inlined into it, the innermost inlined
// function, which is the one the line table's line belongs to. It returns
// "" when no subprogram contains pc. All entries are visited, also below
// subprograms that do not contain pc: GCC nests the outlined bodies of
// OpenMP constructs (main._omp_fn.0) and nested functions inside the DIE
// of their parent, with their own code ranges.
func (m *module) function(r *dwarf.Reader, cu *dwarf.Entry, pc uint64) string {
	if !cu.Children {
		return ""
	}
	name := ""
	found := 0 // depth of the subprogram containing pc; 0 before it is found
	depth := 1
	for depth > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == 0 {
			depth--
			if depth <= found {
				break // end of the subprogram's subtree
			}
			continue
		}
		switch {
		case found == 0 && e.Tag == dwarf.TagSubprogram:
			if ranges, err := m.dwarf.Ranges(e); err == nil && inRanges(ranges, pc) {
				name = m.name(e, 0)
				if !e.Children {
					return name
				}
				found = depth
			}
		case found > 0 && e.Tag == dwarf.TagInlinedSubroutine:
			if ranges, err := m.dwarf.Ranges(e); err == nil && inRanges(ranges, pc) {
				if n := m.name(e, 0); n != "" {
					name = n
				}
			}
		}
		if e.Children {
			depth++
		}
	}
	return name
}

// name returns the name of the subprogram e, following
// DW_AT_specification and DW_AT_abstract_origin (C++ member functions
// defined out of line, concrete instances of inline functions).
func (m *module) name(e *dwarf.Entry, hops int) string {
	if n, ok := e.Val(dwarf.AttrName).(string); ok && n != "" {
		return n
	}
	if n, ok := e.Val(dwarf.AttrLinkageName).(string); ok && n != "" {
		return n
	}
	if hops >= 4 {
		return ""
	}
	for _, a := range []dwarf.Attr{dwarf.AttrSpecification, dwarf.AttrAbstractOrigin} {
		off, ok := e.Val(a).(dwarf.Offset)
		if !ok {
			continue
		}
		r := m.dwarf.Reader()
		r.Seek(off)
		if o, err := r.Next(); err == nil && o != nil {
			if n := m.name(o, hops+1); n != "" {
				return n
			}
		}
	}
	return ""
}

// sttGNUIFunc is STT_GNU_IFUNC (elf.STT_GNU_IFUNC needs Go 1.23):
// indirect functions, such as the string functions of glibc.
const sttGNUIFunc = elf.SymType(10)
