package symbolize

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The test programs in testdata report the return addresses of their
// OpenMP parallel constructs as ELF virtual addresses, as popmon records
// them: with GCC by wrapping GOMP_parallel (libgomp has no OMPT), with
// Clang through an OMPT tool in the executable. Lines that the tests look
// for carry a "MARK name" comment.

// compilerPath returns the path of a C compiler, or skips the test.
func compilerPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	return p
}

// compile runs cc with args. A failure that looks like a missing OpenMP
// installation skips the test; other failures fail it.
func compile(t *testing.T, cc string, args ...string) {
	t.Helper()
	out, err := exec.Command(cc, args...).CombinedOutput()
	if err == nil {
		return
	}
	if bytes.Contains(out, []byte("omp")) && (bytes.Contains(out, []byte("No such file")) || bytes.Contains(out, []byte("cannot find"))) {
		t.Skipf("%s has no usable OpenMP: %s", cc, out)
	}
	t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
}

// marks returns the line numbers of the MARK comments of a source file.
func marks(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for i, l := range strings.Split(string(data), "\n") {
		if _, after, ok := strings.Cut(l, "/* MARK "); ok {
			name, _, _ := strings.Cut(after, " ")
			out[name] = i + 1
		}
	}
	return out
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// probeLine is one line of a test program's output.
type probeLine struct {
	what    string
	address uint64
	module  string
}

// runProbes runs exe and parses its report lines; the executable's own
// module (an empty name) is exe.
func runProbes(t *testing.T, exe string) []probeLine {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=2", "OMP_TOOL=enabled")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, out)
	}
	var lines []probeLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			t.Fatalf("%s: bad output line %q", exe, sc.Text())
		}
		a, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err != nil {
			t.Fatalf("%s: bad output line %q: %v", exe, sc.Text(), err)
		}
		p := probeLine{what: f[0], address: a, module: exe}
		if len(f) > 2 {
			p.module = f[2]
		}
		lines = append(lines, p)
	}
	return lines
}

// variant is one way to build the test programs.
type variant struct {
	name, cc string
	flags    []string // compile flags of both files
	exe      []string // extra flags of the executable
	pie      bool     // whether the executable is PIE
	// optimized: the compiler may move a call to a neighbouring line; the
	// line is then checked against addr2line, not the MARK comment.
	optimized bool
}

func variants() []variant {
	gnu := []string{"-fopenmp", "-DWRAP_GOMP", "-Wl,--wrap=GOMP_parallel"}
	llvm := []string{"-fopenmp"}
	return []variant{
		{"gcc-pie", "gcc", append([]string{"-g", "-O0"}, gnu...), nil, true, false},
		{"gcc-nopie", "gcc", append([]string{"-g", "-O0"}, gnu...), []string{"-no-pie"}, false, false},
		{"gcc-dwarf4-O2", "gcc", append([]string{"-gdwarf-4", "-O2"}, gnu...), nil, true, true},
		{"clang-pie", "clang", append([]string{"-g", "-O0"}, llvm...), []string{"-DUSE_OMPT"}, true, false},
		{"clang-nopie", "clang", append([]string{"-g", "-O0"}, llvm...), []string{"-DUSE_OMPT", "-no-pie"}, false, false},
		{"clang-dwarf4-O2", "clang", append([]string{"-gdwarf-4", "-O2"}, llvm...), []string{"-DUSE_OMPT"}, true, true},
	}
}

// TestOpenMPConstructs builds an executable and a shared library with
// parallel constructs, runs it, and looks up the return addresses it
// reports, as popmon's report does with the addresses of omp_regions.
func TestOpenMPConstructs(t *testing.T) {
	prog, lib := testdata(t, "prog.c"), testdata(t, "lib.c")
	pm, lm := marks(t, prog), marks(t, lib)
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			cc := compilerPath(t, v.cc)
			dir := t.TempDir()
			so := filepath.Join(dir, "libwork.so")
			exe := filepath.Join(dir, "prog")
			compile(t, cc, append(append([]string{"-shared", "-fPIC"}, v.flags...), lib, "-o", so)...)
			compile(t, cc, append(append(append([]string{"-DWITH_LIB"}, v.flags...), v.exe...), prog, so, "-Wl,-rpath,"+dir, "-o", exe)...)

			f, err := elf.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			if pie := f.Type == elf.ET_DYN; pie != v.pie {
				t.Fatalf("executable type %v, want PIE %v", f.Type, v.pie)
			}
			mainSym := findSymbol(t, f, "main")
			f.Close()

			type want struct {
				what, module, function, file string
				line                         int
			}
			wants := []want{
				{"parallel", exe, "work", prog, pm["work-pragma"]},
				{"parallel", exe, "main", prog, pm["main-pragma"]},
				{"probe", exe, "main", prog, pm["main-probe"]},
				{"parallel", so, "lib_work", lib, lm["lib-pragma"]},
			}
			got := runProbes(t, exe)
			if len(got) != len(wants) {
				t.Fatalf("program reported %v, want %d lines", got, len(wants))
			}
			var s Symbolizer
			for i, w := range wants {
				p := got[i]
				if p.what != w.what || p.module != w.module {
					t.Errorf("line %d: %s in %s, want %s in %s", i, p.what, p.module, w.what, w.module)
					continue
				}
				loc, err := s.Lookup(p.module, p.address)
				if err != nil {
					t.Errorf("Lookup(%s, %#x): %v", p.module, p.address, err)
					continue
				}
				if v.optimized {
					w.line = loc.Line // checked below
					if file, line, ok := addr2line(t, p.module, p.address-1); ok && (file != loc.File || line != loc.Line) {
						t.Errorf("Lookup(%s, %#x) = %s:%d, addr2line says %s:%d", filepath.Base(p.module), p.address, loc.File, loc.Line, file, line)
					}
				}
				if loc != (Location{w.function, w.file, w.line}) {
					t.Errorf("Lookup(%s, %#x) = %q %q %d, want %s in %s:%d", filepath.Base(p.module), p.address, loc.Function, loc.File, loc.Line, w.function, w.file, w.line)
				}
			}

			// An instruction's own address is looked up as address + 1:
			// main's first instruction is on the line that opens main.
			loc, err := s.Lookup(exe, mainSym.Value+1)
			if err != nil || loc.Function != "main" || loc.File != prog || loc.Line != pm["main-def"] {
				t.Errorf("Lookup(main+1) = %+v, %v; want main at %s:%d", loc, err, prog, pm["main-def"])
			}
		})
	}
}

// addr2line returns binutils' answer for the address pc of module, if
// addr2line is installed.
func addr2line(t *testing.T, module string, pc uint64) (file string, line int, ok bool) {
	t.Helper()
	out, err := exec.Command("addr2line", "-e", module, strconv.FormatUint(pc, 16)).Output()
	if err != nil {
		t.Logf("addr2line: %v", err)
		return "", 0, false
	}
	file, l, _ := strings.Cut(strings.TrimSpace(string(out)), ":")
	l, _, _ = strings.Cut(l, " ")
	line, err = strconv.Atoi(l)
	return file, line, err == nil
}

func findSymbol(t *testing.T, f *elf.File, name string) elf.Symbol {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, y := range syms {
		if y.Name == name {
			return y
		}
	}
	t.Fatalf("no symbol %s", name)
	return elf.Symbol{}
}

// buildPlain builds prog.c without OpenMP and returns the executable.
func buildPlain(t *testing.T, flags ...string) string {
	t.Helper()
	cc := compilerPath(t, "gcc")
	exe := filepath.Join(t.TempDir(), "prog")
	compile(t, cc, append(flags, testdata(t, "prog.c"), "-o", exe)...)
	return exe
}

func TestWithoutDWARF(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		flags []string
		table string
	}{
		{"symtab", []string{"-g0", "-O0"}, ".symtab"},
		{"dynsym", []string{"-g0", "-O0", "-s", "-rdynamic"}, ".dynsym"},
	} {
		t.Run(c.name, func(t *testing.T) {
			exe := buildPlain(t, c.flags...)
			f, err := elf.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Section(".debug_info") != nil {
				t.Fatal("the executable has DWARF")
			}
			var syms []elf.Symbol
			if c.table == ".symtab" {
				syms, err = f.Symbols()
			} else {
				syms, err = f.DynamicSymbols()
			}
			if err != nil {
				t.Fatal(err)
			}
			var work elf.Symbol
			for _, y := range syms {
				if y.Name == "work" {
					work = y
				}
			}
			if work.Value == 0 {
				t.Fatalf("no symbol work in %s", c.table)
			}
			var s Symbolizer
			for _, a := range []uint64{work.Value + 1, work.Value + work.Size} {
				loc, err := s.Lookup(exe, a)
				if !errors.Is(err, ErrNoLineInfo) || !strings.Contains(err.Error(), exe) {
					t.Errorf("Lookup(work+%d) error = %v, want ErrNoLineInfo naming the file", a-work.Value, err)
				}
				if loc != (Location{Function: "work"}) {
					t.Errorf("Lookup(work+%d) = %+v, want function work only", a-work.Value, loc)
				}
			}
		})
	}
}

func TestFullyStripped(t *testing.T) {
	t.Parallel()
	exe := buildPlain(t, "-O0", "-s")
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	entry := f.Entry
	f.Close()
	var s Symbolizer
	loc, err := s.Lookup(exe, entry+1)
	if !errors.Is(err, ErrNotFound) || loc != (Location{}) {
		t.Errorf("Lookup(entry) = %+v, %v; want ErrNotFound", loc, err)
	}
}

func TestBadModules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-program")
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var s Symbolizer
	loc, err := s.Lookup(missing, 0x1234)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) || loc != (Location{}) {
		t.Errorf("missing file: %+v, %v", loc, err)
	}
	// The failure is remembered, and said again.
	if _, err2 := s.Lookup(missing, 0x5678); err2 == nil || !strings.Contains(err2.Error(), missing) {
		t.Errorf("missing file, second lookup: %v", err2)
	}
	if _, err := s.Lookup(text, 0x1234); err == nil || !strings.Contains(err.Error(), text) {
		t.Errorf("text file: %v", err)
	}
	for _, p := range []string{dir, os.DevNull} {
		if _, err := s.Lookup(p, 0x1234); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := s.Lookup(text, 0); err == nil || !strings.Contains(err.Error(), "address 0") {
		t.Errorf("address 0: %v", err)
	}
}

func TestRelocatableAndOutside(t *testing.T) {
	t.Parallel()
	cc := compilerPath(t, "gcc")
	obj := filepath.Join(t.TempDir(), "prog.o")
	compile(t, cc, "-c", "-g", testdata(t, "prog.c"), "-o", obj)
	var s Symbolizer
	if _, err := s.Lookup(obj, 0x10); err == nil || !strings.Contains(err.Error(), "not an executable or shared library") {
		t.Errorf("object file: %v", err)
	}
	exe := buildPlain(t, "-g", "-O0")
	if _, err := s.Lookup(exe, 0x7fff_0000_0000); err == nil || !strings.Contains(err.Error(), "outside the module's code") {
		t.Errorf("address outside the code: %v", err)
	}
}

// TestCorrupted looks up addresses in damaged copies of a real executable:
// errors are fine, panics and hangs are not.
func TestCorrupted(t *testing.T) {
	t.Parallel()
	exe := buildPlain(t, "-g", "-O0")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	addr := findSymbol(t, f, "work").Value + 4
	f.Close()
	rnd := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	n := 150
	if testing.Short() {
		n = 30
	}
	for i := 0; i < n; i++ {
		bad := append([]byte(nil), data...)
		switch i % 3 {
		case 0: // scattered bytes
			for k := 0; k < 1+rnd.Intn(20); k++ {
				bad[rnd.Intn(len(bad))] = byte(rnd.Intn(256))
			}
		case 1: // a damaged run of bytes
			start := rnd.Intn(len(bad))
			for k := start; k < len(bad) && k < start+rnd.Intn(512); k++ {
				bad[k] = byte(rnd.Intn(256))
			}
		case 2: // truncated
			bad = bad[:rnd.Intn(len(bad))]
		}
		path := filepath.Join(dir, "bad"+strconv.Itoa(i))
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		var s Symbolizer
		for _, a := range []uint64{addr, addr + 100, 1, 0x401000} {
			_, _ = s.Lookup(path, a)
		}
	}
}

func FuzzLookup(f *testing.F) {
	f.Add([]byte("\x7fELF"), uint64(0x1000))
	if cc, err := exec.LookPath("gcc"); err == nil {
		exe := filepath.Join(f.TempDir(), "prog")
		if out, err := exec.Command(cc, "-g", "-O0", filepath.Join("testdata", "prog.c"), "-o", exe).CombinedOutput(); err == nil {
			if data, err := os.ReadFile(exe); err == nil {
				f.Add(data, uint64(0x1140))
			}
		} else {
			f.Logf("gcc: %v\n%s", err, out)
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		path := filepath.Join(dir, "m")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var s Symbolizer
		_, _ = s.Lookup(path, addr)
	})
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	exe := buildPlain(t, "-g", "-O0")
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	work := findSymbol(t, f, "work")
	f.Close()
	s := New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			loc, err := s.Lookup(exe, work.Value+1+uint64(i%4))
			if err != nil || loc.Function != "work" {
				t.Errorf("Lookup = %+v, %v", loc, err)
			}
		}(i)
	}
	wg.Wait()
}

func TestLocationString(t *testing.T) {
	for _, c := range []struct {
		loc  Location
		want string
	}{
		{Location{"main", "/src/prog.c", 12}, "main (prog.c:12)"},
		{Location{"main", "/src/prog.c", 0}, "main (prog.c)"},
		{Location{"", "/src/prog.c", 7}, "prog.c:7"},
		{Location{"work", "", 0}, "work"},
		{Location{}, ""},
	} {
		if got := c.loc.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.loc, got, c.want)
		}
	}
}
