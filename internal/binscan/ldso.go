package binscan

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Limits on the closure of one program.
const (
	maxObjects  = 512  // objects in one program's closure
	maxAttempts = 8192 // candidate files tried for one program
	maxDirs     = 512  // directories searched for one library
)

// system is where ld.so's configuration lives; tests replace it.
type system struct {
	cachePath string // /etc/ld.so.cache
	confPath  string // /etc/ld.so.conf, used when the cache is unusable
	// defaultDirs replaces ld.so's built-in directories when not nil.
	defaultDirs []string
}

var hostSystem = system{cachePath: "/etc/ld.so.cache", confPath: "/etc/ld.so.conf"}

// loader resolves shared libraries as ld.so does. One loader serves a whole
// Scan, so that objects are read once.
type loader struct {
	sys      system
	cwd      string
	budget   *budget
	cache    ldCache  // nil when unusable
	cacheErr error    // why the cache is unusable
	confDirs []string // from ld.so.conf, when the cache is unusable
	objs     map[string]objOrErr
}

type objOrErr struct {
	obj *object
	err error
}

func newLoader(sys system, cwd string) *loader {
	l := &loader{sys: sys, cwd: cwd, budget: newBudget(), objs: map[string]objOrErr{}}
	l.cache, l.cacheErr = readLDCache(sys.cachePath)
	if l.cacheErr != nil {
		l.confDirs = readLDConf(sys.confPath)
	}
	return l
}

// read returns the facts of the ELF file at path, read once per Scan.
func (l *loader) read(path string) (*object, error) {
	key := realPath(path)
	if r, ok := l.objs[key]; ok {
		return r.obj, r.err
	}
	obj, err := readObject(path, l.budget)
	l.objs[key] = objOrErr{obj, err}
	return obj, err
}

// abs makes p absolute against the scan's working directory.
func (l *loader) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(l.cwd, p)
}

// Lib is one shared library of a program's closure.
type Lib struct {
	Name   string // the name it was asked for (DT_NEEDED or LD_PRELOAD)
	Path   string // where it was found
	Soname string // its DT_SONAME, "" if none
	By     string // the object that needed it (its Name, or the program)
	// Preloaded is true for a library named in LD_PRELOAD.
	Preloaded bool
	obj       *object
	parent    *Lib
}

// Missing is a DT_NEEDED library binscan did not find.
type Missing struct {
	Name string // the name asked for
	By   string // the object that needed it
	Why  string // "not found" or why the candidates were rejected
}

// closure is the shared-library closure of one program.
type closure struct {
	root      *Lib
	libs      []*Lib // in load order, the program first
	missing   []Missing
	truncated string // why the closure may be incomplete
}

// load resolves the closure of the program obj at path, named arg on the
// command line, with the given LD_LIBRARY_PATH and LD_PRELOAD.
func (l *loader) load(arg, path string, obj *object, llp, preload string) *closure {
	root := &Lib{Name: filepath.Base(arg), Path: path, Soname: obj.soname, obj: obj}
	c := &closure{root: root, libs: []*Lib{root}}
	rootOrigin := filepath.Dir(l.abs(realPath(path)))
	var llpDirs []string
	for _, d := range strings.Split(llp, ":") {
		if llp == "" {
			break
		}
		llpDirs = append(llpDirs, l.expand(d, rootOrigin, obj)...)
	}
	byName := map[string]*Lib{}
	byFile := map[string]*Lib{}
	attempts := 0
	add := func(name string, by *Lib, preloaded bool) {
		if _, ok := byName[name]; ok {
			return
		}
		if len(c.libs) >= maxObjects {
			c.truncated = fmt.Sprintf("more than %d libraries", maxObjects)
			return
		}
		p, o, why := l.find(name, by, root, rootOrigin, llpDirs, &attempts)
		if o == nil {
			c.missing = append(c.missing, Missing{Name: name, By: by.Name, Why: why})
			byName[name] = nil
			return
		}
		key := realPath(p)
		if have, ok := byFile[key]; ok {
			byName[name] = have
			return
		}
		lib := &Lib{Name: name, Path: p, Soname: o.soname, By: by.Name, Preloaded: preloaded, obj: o, parent: by}
		c.libs = append(c.libs, lib)
		byName[name] = lib
		byFile[key] = lib
		if o.soname != "" {
			if _, ok := byName[o.soname]; !ok {
				byName[o.soname] = lib
			}
		}
	}
	for _, p := range strings.FieldsFunc(preload, func(r rune) bool { return r == ':' || r == ' ' }) {
		add(p, root, true)
	}
	for i := 0; i < len(c.libs); i++ {
		for _, need := range c.libs[i].obj.needed {
			add(need, c.libs[i], false)
		}
	}
	if attempts >= maxAttempts {
		c.truncated = fmt.Sprintf("more than %d candidate files tried", maxAttempts)
	}
	return c
}

// realPath is path with its symbolic links resolved, or path when they
// cannot be.
func realPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// find looks for the library name needed by the object by, in ld.so's
// order: a name with a slash is a path; otherwise DT_RPATH of by and of the
// objects that loaded it (unless by has DT_RUNPATH), LD_LIBRARY_PATH, by's
// DT_RUNPATH, /etc/ld.so.cache, and the default directories. A candidate
// of the wrong ELF class or machine is skipped, as ld.so does.
func (l *loader) find(name string, by, root *Lib, rootOrigin string, llpDirs []string, attempts *int) (string, *object, string) {
	var rejected []string
	try := func(p string) *object {
		if *attempts >= maxAttempts {
			return nil
		}
		*attempts++
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			return nil
		}
		o, err := l.read(p)
		if err != nil {
			rejected = append(rejected, err.Error())
			return nil
		}
		if o.class != root.obj.class || o.machine != root.obj.machine {
			rejected = append(rejected, fmt.Sprintf("%s: wrong ELF class or machine (%v %v)", p, o.class, o.machine))
			return nil
		}
		return o
	}
	why := func() string {
		if len(rejected) == 0 {
			return "not found"
		}
		return "not usable: " + strings.Join(rejected, "; ")
	}
	if strings.Contains(name, "/") {
		p := l.abs(name)
		if o := try(p); o != nil {
			return p, o, ""
		}
		return "", nil, why()
	}
	var dirs []string
	if !by.obj.hasRunpath {
		for x := by; x != nil; x = x.parent {
			if !x.obj.hasRunpath {
				dirs = append(dirs, l.expandAll(x.obj.rpath, x, rootOrigin)...)
			}
		}
	}
	dirs = append(dirs, llpDirs...)
	if by.obj.hasRunpath {
		dirs = append(dirs, l.expandAll(by.obj.runpath, by, rootOrigin)...)
	}
	if len(dirs) > maxDirs {
		dirs = dirs[:maxDirs]
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if o := try(p); o != nil {
			return p, o, ""
		}
	}
	if by.obj.noDefLib {
		return "", nil, why()
	}
	if l.cache != nil {
		for _, p := range l.cache[name] {
			if o := try(p); o != nil {
				return p, o, ""
			}
		}
	} else {
		for _, d := range l.confDirs {
			p := filepath.Join(d, name)
			if o := try(p); o != nil {
				return p, o, ""
			}
		}
	}
	for _, d := range l.defaultDirs(root.obj) {
		p := filepath.Join(d, name)
		if o := try(p); o != nil {
			return p, o, ""
		}
	}
	return "", nil, why()
}

// defaultDirs are ld.so's built-in directories for objects like obj.
func (l *loader) defaultDirs(obj *object) []string {
	if l.sys.defaultDirs != nil {
		return l.sys.defaultDirs
	}
	return systemDirs(obj.class == elf.ELFCLASS64, triplet(obj.machine))
}

// expandAll expands the RPATH/RUNPATH entries of the object x.
func (l *loader) expandAll(entries []string, x *Lib, rootOrigin string) []string {
	origin := rootOrigin
	if x.parent != nil {
		origin = filepath.Dir(l.abs(x.Path))
	}
	var out []string
	for _, e := range entries {
		out = append(out, l.expand(e, origin, x.obj)...)
	}
	return out
}

// expand expands ld.so's dynamic string tokens ($ORIGIN, $LIB, $PLATFORM,
// also as ${...}) in one search-path entry; an empty entry is the current
// directory. An entry with a token binscan cannot expand is dropped, as
// ld.so drops entries it cannot expand.
func (l *loader) expand(entry, origin string, obj *object) []string {
	if entry == "" {
		return []string{l.cwd}
	}
	lib, platform := libToken(obj), platformToken(obj.machine)
	var b strings.Builder
	for i := 0; i < len(entry); {
		if entry[i] != '$' {
			b.WriteByte(entry[i])
			i++
			continue
		}
		rest := entry[i+1:]
		var tok string
		var n int
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return nil
			}
			tok, n = rest[1:end], end+1
		} else {
			n = 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			tok = rest[:n]
		}
		var val string
		switch tok {
		case "ORIGIN":
			val = origin
		case "LIB":
			val = lib
		case "PLATFORM":
			val = platform
		}
		if val == "" {
			return nil
		}
		b.WriteString(val)
		i += 1 + n
	}
	return []string{l.abs(b.String())}
}

// triplet is Debian's multiarch triplet for an ELF machine, or "".
func triplet(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86_64-linux-gnu"
	case elf.EM_AARCH64:
		return "aarch64-linux-gnu"
	case elf.EM_386:
		return "i386-linux-gnu"
	case elf.EM_PPC64:
		return "powerpc64le-linux-gnu"
	case elf.EM_RISCV:
		return "riscv64-linux-gnu"
	case elf.EM_S390:
		return "s390x-linux-gnu"
	case elf.EM_ARM:
		return "arm-linux-gnueabihf"
	}
	return ""
}

// libToken is what $LIB expands to: Debian's multiarch directory where this
// system has it, else lib64 or lib.
func libToken(obj *object) string {
	if t := triplet(obj.machine); t != "" {
		if st, err := os.Stat("/lib/" + t); err == nil && st.IsDir() {
			return "lib/" + t
		}
	}
	if obj.class == elf.ELFCLASS64 {
		return "lib64"
	}
	return "lib"
}

// platformToken is what $PLATFORM expands to (the kernel's AT_PLATFORM).
func platformToken(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86_64"
	case elf.EM_AARCH64:
		return "aarch64"
	case elf.EM_386:
		return "i686"
	case elf.EM_PPC64:
		return "powerpc64le"
	case elf.EM_RISCV:
		return "riscv64"
	case elf.EM_S390:
		return "s390x"
	}
	return ""
}
