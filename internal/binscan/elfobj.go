package binscan

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Limits on what one object may cost. Every file is possibly hostile: these
// bound the memory and the reading a crafted header can ask for.
const (
	maxFileRead    = 256 << 20 // bytes read from one file
	maxScanRead    = 1 << 30   // bytes read over a whole Scan
	maxNeeded      = 1024      // DT_NEEDED entries kept per object
	maxPathEntries = 64        // RPATH/RUNPATH entries kept per object
	maxDynString   = 4096      // bytes of one DT_NEEDED/RPATH string kept
	maxMPINames    = 4096      // distinct MPI_* names remembered per object
	symChunk       = 4096      // symbols read at a time
)

// errBudget is returned when a read limit is reached.
var errBudget = errors.New("read limit reached")

// budget counts the bytes a Scan reads.
type budget struct{ left int64 }

func newBudget() *budget { return &budget{left: maxScanRead} }

// limitedReaderAt charges every read to a per-file and a per-scan budget.
type limitedReaderAt struct {
	r    io.ReaderAt
	file int64
	scan *budget
}

func (l *limitedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n := int64(len(p))
	if n > l.file || n > l.scan.left {
		return 0, errBudget
	}
	l.file -= n
	l.scan.left -= n
	return l.r.ReadAt(p, off)
}

// object is what binscan knows of one ELF file.
type object struct {
	class      elf.Class
	machine    elf.Machine
	typ        elf.Type
	interp     bool     // has PT_INTERP: started through ld.so
	dynamic    bool     // has PT_DYNAMIC
	soname     string   // DT_SONAME
	needed     []string // DT_NEEDED, in order
	rpath      []string // DT_RPATH entries, unexpanded
	runpath    []string // DT_RUNPATH entries, unexpanded
	hasRunpath bool     // DT_RUNPATH present (then DT_RPATH is ignored)
	noDefLib   bool     // DF_1_NODEFLIB: no ld.so.cache, no default dirs
	syms       symFacts
	incomplete string // why some facts are missing ("" when complete)
}

// symFacts are the facts binscan takes from an object's symbol tables.
type symFacts struct {
	mpiFuncs  map[string]bool // defined MPI_*/PMPI_* functions (capped)
	pmpiInit  bool            // defines PMPI_Init or PMPI_Init_thread
	mpiInit   bool            // defines MPI_Init or MPI_Init_thread
	ompiSyms  int             // defined ompi_*, opal_*, mca_* symbols
	mpichSyms int             // defined MPIR_*, MPII_*, MPID_*, MPICH_*, QMPI_* symbols
}

// mpiNames returns up to n of the defined MPI_ functions (PMPI_ excluded),
// sorted, and how many there are.
func (s *symFacts) mpiNames(n int) ([]string, int) {
	var all []string
	for name := range s.mpiFuncs {
		if strings.HasPrefix(name, "MPI_") {
			all = append(all, name)
		}
	}
	sort.Strings(all)
	total := len(all)
	if len(all) > n {
		all = all[:n]
	}
	return all, total
}

// magicELF is the start of every ELF file.
var magicELF = []byte("\x7fELF")

// fileKind tells ELF files, scripts and other files apart from their first
// bytes, and returns a script's interpreter line.
func fileKind(path string) (kind string, interp string, err error) {
	f, err := openRegular(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	head := make([]byte, 256)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", "", fmt.Errorf("%s: cannot read it: %w", path, err)
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, magicELF):
		return "elf", "", nil
	case bytes.HasPrefix(head, []byte("#!")):
		line := head[2:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		return "script", strings.TrimSpace(string(line)), nil
	default:
		return "other", "", nil
	}
}

// readObject reads the ELF facts of the file at path. It never panics: a
// malformed file gives an error.
func readObject(path string, b *budget) (*object, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	obj, err := parseObject(f, st.Size(), b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// openRegular opens path for reading if it is a regular file, without
// blocking on FIFOs or devices.
func openRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return f, nil
}

// parseObject reads the ELF facts from r, of size bytes. It is the entry
// point for every ELF file binscan reads: the header tables are checked
// against the file's size before debug/elf allocates anything from them,
// and a panic of debug/elf on crafted input is recovered and reported as an
// error.
func parseObject(r io.ReaderAt, size int64, b *budget) (obj *object, err error) {
	defer func() {
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("malformed ELF file (%v)", p)
		}
	}()
	lr := &limitedReaderAt{r: r, file: maxFileRead, scan: b}
	if err := checkTables(lr, size); err != nil {
		if errors.Is(err, errBudget) {
			return nil, fmt.Errorf("not read: %w", err)
		}
		return nil, fmt.Errorf("not a readable ELF file: %w", err)
	}
	f, err := elf.NewFile(lr)
	if err != nil {
		if errors.Is(err, errBudget) {
			return nil, fmt.Errorf("not read: %w", err)
		}
		return nil, fmt.Errorf("not a readable ELF file: %w", err)
	}
	obj = &object{class: f.Class, machine: f.Machine, typ: f.Type}
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			obj.interp = true
		case elf.PT_DYNAMIC:
			obj.dynamic = true
		}
	}
	if f.SectionByType(elf.SHT_DYNAMIC) != nil {
		if err := readDynamic(f, obj); err != nil {
			return nil, err
		}
	}
	for _, typ := range []elf.SectionType{elf.SHT_DYNSYM, elf.SHT_SYMTAB} {
		for _, s := range f.Sections {
			if s.Type != typ {
				continue
			}
			if err := scanSymbols(f, s, &obj.syms); err != nil {
				if errors.Is(err, errBudget) {
					obj.incomplete = "symbols not all read: " + err.Error()
				} else {
					obj.incomplete = "symbols unreadable: " + err.Error()
				}
			}
		}
	}
	return obj, nil
}

// checkTables checks, from the raw ELF header, that the program and section
// header tables and every section's contents lie inside the file, and that
// the sections binscan reads are not compressed: debug/elf would otherwise
// allocate from header fields (up to 10 MiB at a time) before finding out.
func checkTables(r io.ReaderAt, size int64) error {
	var h [64]byte
	n, err := r.ReadAt(h[:], 0)
	if errors.Is(err, errBudget) {
		return err
	}
	if n < 52 {
		return errors.New("too short for an ELF header")
	}
	if !bytes.HasPrefix(h[:], magicELF) {
		return errors.New("no ELF magic number")
	}
	var bo binary.ByteOrder
	switch h[5] {
	case 1:
		bo = binary.LittleEndian
	case 2:
		bo = binary.BigEndian
	default:
		return fmt.Errorf("unknown ELF data encoding %d", h[5])
	}
	var phoff, shoff uint64
	var phentsize, phnum, shentsize, shnum, shstrndx uint64
	var is64 bool
	switch h[4] {
	case 1:
		phoff, shoff = uint64(bo.Uint32(h[28:])), uint64(bo.Uint32(h[32:]))
		phentsize, phnum = uint64(bo.Uint16(h[42:])), uint64(bo.Uint16(h[44:]))
		shentsize, shnum, shstrndx = uint64(bo.Uint16(h[46:])), uint64(bo.Uint16(h[48:])), uint64(bo.Uint16(h[50:]))
	case 2:
		if n < 64 {
			return errors.New("too short for an ELF header")
		}
		is64 = true
		phoff, shoff = bo.Uint64(h[32:]), bo.Uint64(h[40:])
		phentsize, phnum = uint64(bo.Uint16(h[54:])), uint64(bo.Uint16(h[56:]))
		shentsize, shnum, shstrndx = uint64(bo.Uint16(h[58:])), uint64(bo.Uint16(h[60:])), uint64(bo.Uint16(h[62:]))
	default:
		return fmt.Errorf("unknown ELF class %d", h[4])
	}
	fsize := uint64(size)
	inside := func(off, n uint64) bool { return off <= fsize && n <= fsize-off }
	if phnum > 0 && !inside(phoff, phnum*phentsize) {
		return errors.New("program headers lie outside the file")
	}
	if shoff == 0 {
		return nil
	}
	want := uint64(40)
	if is64 {
		want = 64
	}
	if shentsize < want {
		return fmt.Errorf("section header size %d, want %d", shentsize, want)
	}
	if !inside(shoff, shentsize) {
		return errors.New("section headers lie outside the file")
	}
	sh := make([]byte, want)
	field := func(i uint64) (typ, flags, off, sz, link uint64, err error) {
		if _, err := r.ReadAt(sh, int64(shoff+i*shentsize)); err != nil {
			return 0, 0, 0, 0, 0, err
		}
		if is64 {
			return uint64(bo.Uint32(sh[4:])), bo.Uint64(sh[8:]), bo.Uint64(sh[24:]), bo.Uint64(sh[32:]), uint64(bo.Uint32(sh[40:])), nil
		}
		return uint64(bo.Uint32(sh[4:])), uint64(bo.Uint32(sh[8:])), uint64(bo.Uint32(sh[16:])), uint64(bo.Uint32(sh[20:])), uint64(bo.Uint32(sh[24:])), nil
	}
	_, _, _, sz0, link0, err := field(0)
	if err != nil {
		return err
	}
	if shnum == 0 { // extended numbering: the count is in section 0
		shnum = sz0
	}
	if shstrndx == uint64(elf.SHN_XINDEX) {
		shstrndx = link0
	}
	if shnum > fsize/shentsize || !inside(shoff, shnum*shentsize) {
		return errors.New("section headers lie outside the file")
	}
	for i := uint64(1); i < shnum; i++ {
		typ, flags, off, sz, _, err := field(i)
		if err != nil {
			return err
		}
		if elf.SectionType(typ) == elf.SHT_NOBITS {
			continue
		}
		if !inside(off, sz) {
			return fmt.Errorf("section %d lies outside the file", i)
		}
		read := i == shstrndx
		switch elf.SectionType(typ) {
		case elf.SHT_DYNAMIC, elf.SHT_DYNSYM, elf.SHT_SYMTAB, elf.SHT_STRTAB:
			read = true
		}
		if read && elf.SectionFlag(flags)&elf.SHF_COMPRESSED != 0 {
			return fmt.Errorf("section %d is compressed", i)
		}
	}
	return nil
}

// readDynamic fills the dynamic-section facts of obj.
func readDynamic(f *elf.File, obj *object) error {
	needed, err := f.DynString(elf.DT_NEEDED)
	if err != nil {
		return fmt.Errorf("unreadable dynamic section: %w", err)
	}
	for _, n := range needed {
		if len(obj.needed) == maxNeeded {
			obj.incomplete = fmt.Sprintf("more than %d DT_NEEDED entries", maxNeeded)
			break
		}
		if n != "" && len(n) <= maxDynString {
			obj.needed = append(obj.needed, n)
		}
	}
	if s, err := f.DynString(elf.DT_SONAME); err == nil && len(s) > 0 && len(s[0]) <= maxDynString {
		obj.soname = s[0]
	}
	if s, err := f.DynString(elf.DT_RPATH); err == nil {
		obj.rpath = splitPathList(s)
	}
	if s, err := f.DynString(elf.DT_RUNPATH); err == nil && len(s) > 0 {
		obj.hasRunpath = true
		obj.runpath = splitPathList(s)
	}
	if v, err := f.DynValue(elf.DT_FLAGS_1); err == nil {
		for _, x := range v {
			if elf.DynFlag1(x)&elf.DF_1_NODEFLIB != 0 {
				obj.noDefLib = true
			}
		}
	}
	return nil
}

// splitPathList splits RPATH/RUNPATH strings into their colon-separated
// entries (an empty entry is the current directory, as for ld.so).
func splitPathList(vals []string) []string {
	var out []string
	for _, v := range vals {
		if len(v) > maxDynString {
			continue
		}
		for _, d := range strings.Split(v, ":") {
			if len(out) == maxPathEntries {
				return out
			}
			out = append(out, d)
		}
	}
	return out
}

// Symbol table constants of the ELF specification.
const (
	sttFunc  = 2
	sttIFunc = 10
	shnUndef = 0
)

// scanSymbols reads the symbol table s in chunks and records the facts
// binscan needs, without building the whole table in memory.
func scanSymbols(f *elf.File, s *elf.Section, facts *symFacts) error {
	if s.Type == elf.SHT_NOBITS || s.Size == 0 {
		return nil
	}
	if int(s.Link) <= 0 || int(s.Link) >= len(f.Sections) {
		return fmt.Errorf("symbol table %s links to no string table", s.Name)
	}
	strs := f.Sections[s.Link]
	if strs.Type != elf.SHT_STRTAB {
		return fmt.Errorf("symbol table %s links to section %s, not a string table", s.Name, strs.Name)
	}
	if strs.Size > maxFileRead || s.Size > maxFileRead {
		return fmt.Errorf("symbol table %s: %w", s.Name, errBudget)
	}
	strdata, err := strs.Data()
	if err != nil {
		return fmt.Errorf("string table %s: %w", strs.Name, err)
	}
	entsize := 24
	if f.Class == elf.ELFCLASS32 {
		entsize = 16
	}
	order := f.ByteOrder
	rd := s.Open()
	buf := make([]byte, entsize*symChunk)
	for first := true; ; first = false {
		n, err := io.ReadFull(rd, buf)
		n -= n % entsize
		for off := 0; off < n; off += entsize {
			if first && off == 0 {
				continue // the null symbol
			}
			e := buf[off : off+entsize]
			var name uint32
			var info byte
			var shndx uint16
			if entsize == 24 {
				name, info, shndx = order.Uint32(e[0:]), e[4], order.Uint16(e[6:])
			} else {
				name, info, shndx = order.Uint32(e[0:]), e[12], order.Uint16(e[14:])
			}
			if shndx == shnUndef || uint64(name) >= uint64(len(strdata)) {
				continue
			}
			facts.note(cstring(strdata[name:]), info&0xf)
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
	}
}

// cstring returns b up to its first NUL.
func cstring(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

var (
	ompiPrefixes  = [][]byte{[]byte("ompi_"), []byte("opal_"), []byte("mca_")}
	mpichPrefixes = [][]byte{[]byte("MPIR_"), []byte("MPII_"), []byte("MPID_"), []byte("MPICH_"), []byte("QMPI_")}
)

// note records one defined symbol.
func (s *symFacts) note(name []byte, typ byte) {
	for _, p := range ompiPrefixes {
		if bytes.HasPrefix(name, p) {
			s.ompiSyms++
			return
		}
	}
	for _, p := range mpichPrefixes {
		if bytes.HasPrefix(name, p) {
			s.mpichSyms++
			return
		}
	}
	if typ != sttFunc && typ != sttIFunc {
		return
	}
	if !bytes.HasPrefix(name, []byte("MPI_")) && !bytes.HasPrefix(name, []byte("PMPI_")) {
		return
	}
	str := string(name)
	switch str {
	case "PMPI_Init", "PMPI_Init_thread":
		s.pmpiInit = true
	case "MPI_Init", "MPI_Init_thread":
		s.mpiInit = true
	}
	if s.mpiFuncs == nil {
		s.mpiFuncs = map[string]bool{}
	}
	if len(s.mpiFuncs) < maxMPINames {
		s.mpiFuncs[str] = true
	}
}
