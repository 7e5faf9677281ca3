// Package binscan finds out, before a command line is launched, what it will
// run: the application programs behind launchers (mpirun, mpiexec, srun),
// wrappers (env, time, numactl, ...) and popmon exec, each program's
// shared-library closure resolved as ld.so resolves it, and from that
// whether GNU libgomp or LLVM's OpenMP runtime is loaded, which MPI the
// program is linked with, whether MPI is linked statically or wrapped by
// the program itself, and whether the program is fully static.
//
// binscan only reads files: it never runs the program, a launcher or ldd.
// Every file is treated as hostile: reads are bounded, malformed ELF files
// give errors, never panics.
package binscan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MPI names an MPI implementation family.
type MPI string

// MPI families.
const (
	NoMPI   MPI = ""         // no MPI
	OpenMPI MPI = "Open MPI" // Open MPI (and IBM Spectrum MPI)
	// MPICH is MPICH and the MPIs built on its ABI (Intel MPI, MVAPICH,
	// Cray MPICH).
	MPICH      MPI = "MPICH"
	UnknownMPI MPI = "unknown MPI" // an MPI binscan cannot name, or two that conflict
)

// Kind says how much binscan could see of a program.
type Kind string

// Program kinds.
const (
	KindELF        Kind = "elf"        // an ELF program: the facts are known
	KindScript     Kind = "script"     // a script or a shell: cannot see what it runs
	KindOpaque     Kind = "opaque"     // an appfile, --multi-prog, or nothing after the launcher
	KindNotFound   Kind = "not found"  // the program was not found
	KindUnreadable Kind = "unreadable" // not an ELF file, or a malformed one
)

// Chain is a path through the closure, from the program to a library:
// "lmp → liblammps.so.0 → libgomp.so.1".
type Chain []string

// String joins the chain with arrows.
func (c Chain) String() string { return strings.Join(c, " → ") }

// Wrapper is an object that defines MPI functions of its own in front of the
// MPI library: the program's own PMPI wrappers, or a PMPI tool's library.
type Wrapper struct {
	Object    string   // the program or library name
	Path      string   // its file
	Funcs     []string // up to 5 of its MPI_ functions, sorted
	Count     int      // how many MPI_ functions it defines
	Preloaded bool     // it comes from LD_PRELOAD
}

// Program is one application program the command line starts, and what
// binscan found in it.
type Program struct {
	Arg      string    // the word naming it on the command line
	Path     string    // the file, "" when not found
	Launcher *Launcher // the launcher it runs behind, nil when started directly
	// ExecOutput is the file a `popmon exec -o FILE` in front of it writes
	// its measurement to (absolute, from the program's working directory),
	// "" when none does.
	ExecOutput string
	Kind       Kind
	// Note says why binscan cannot see into the program (Kind other than
	// KindELF): "a script: cannot see what it runs", "not found on PATH".
	Note string

	// Static is true for a fully static executable (no PT_INTERP): ld.so
	// never runs, so LD_PRELOAD cannot load anything into it.
	Static  bool
	Libs    []Lib     // its shared-library closure in load order (itself excluded)
	Missing []Missing // libraries ld.so would not find

	Gomp Chain // how GNU libgomp enters the closure, nil if it does not
	// LLVMOpenMP is how LLVM's OpenMP runtime (libomp, libiomp5) enters
	// the closure, nil if it does not.
	LLVMOpenMP Chain

	MPI      MPI    // the MPI it is linked with
	MPIChain Chain  // how the MPI library enters the closure
	MPIHow   string // the evidence for MPI
	// StaticMPI is the object into which MPI is linked statically (it
	// defines PMPI_Init while no MPI library is in the closure): its MPI
	// calls cannot reach a preloaded library. The program is named by Arg,
	// a library by its file name; so are MPIStubs and Wrapper.Object.
	StaticMPI string
	// MPIStubs is the object that defines MPI_Init without PMPI_Init while
	// no MPI library is in the closure: MPI stubs of a serial build, or an
	// MPI without a profiling interface.
	MPIStubs string
	// Wrappers are objects other than the MPI library that define MPI_
	// functions while an MPI library is in the closure.
	Wrappers []Wrapper

	// Incomplete says why some facts may be missing (a read limit, an
	// unreadable symbol table), "" when complete.
	Incomplete string
}

// Result is what binscan found in a command line.
type Result struct {
	Launchers []*Launcher // the launchers on the command line, in order
	Programs  []*Program  // the application programs, in order
}

// Scan finds the programs that argv will run when started with the
// environment env ("NAME=value" entries; PATH, LD_LIBRARY_PATH and
// LD_PRELOAD are used, the last entry of a name counts) from the current
// directory, and reads each. Pass the environment as the user has it,
// before popmon adds its own library to LD_PRELOAD (entries named
// libpopmon* are ignored anyway). Facts binscan cannot establish are
// reported in the Program, not as an error; the error is for an empty
// argv or an unusable working directory.
func Scan(argv []string, env []string) (*Result, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("binscan: cannot read the working directory: %w", err)
	}
	return scan(hostSystem, cwd, argv, env)
}

// scan is Scan with the ld.so configuration and working directory given.
func scan(sys system, cwd string, argv []string, environ []string) (*Result, error) {
	if len(argv) == 0 {
		return nil, errors.New("binscan: empty command line")
	}
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	ld := newLoader(sys, cwd)
	p := &parser{
		cwd: cwd,
		launcher: func(word string, env map[string]string, dir string) *Launcher {
			l := &Launcher{Arg: word}
			if path, ok := lookPath(word, env["PATH"], dir, false); ok {
				l.Path = path
				_ = l.identify(ld.budget) // errors are in l.How
			} else {
				l.MPI, l.How = UnknownMPI, "not found"
				if n, slurm := launcherNameFamily(filepath.Base(word)); n != NoMPI || slurm {
					l.MPI, l.Slurm = n, slurm
				}
			}
			return l
		},
		exists: func(word string, env map[string]string, dir string) bool {
			_, ok := lookPath(word, env["PATH"], dir, false)
			return ok
		},
	}
	p.command(argv, env, cwd, nil, 0)
	res := &Result{Launchers: p.launchers}
	for _, t := range p.targets {
		res.Programs = append(res.Programs, ld.program(t))
	}
	return res, nil
}

// lookPath finds a program as execvp does: a word with a slash is a path
// (relative to dir), others are searched in PATH (an empty entry is dir);
// cwdToo also tries dir, as Open MPI's mpirun does.
func lookPath(word, path, dir string, cwdToo bool) (string, bool) {
	if word == "" {
		return "", false
	}
	isExec := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
	}
	if strings.Contains(word, "/") {
		p := joinDir(dir, word)
		return p, isExec(p)
	}
	for _, d := range strings.Split(path, ":") {
		if path == "" {
			break
		}
		p := filepath.Join(joinDir(dir, d), word)
		if d == "" {
			p = filepath.Join(dir, word)
		}
		if isExec(p) {
			return p, true
		}
	}
	if cwdToo {
		p := filepath.Join(dir, word)
		if isExec(p) {
			return p, true
		}
	}
	return "", false
}

// program reads one target.
func (ld *loader) program(t target) *Program {
	pr := &Program{Arg: t.arg, Launcher: t.launcher, ExecOutput: t.output}
	if t.opaque != "" {
		pr.Kind, pr.Note = KindOpaque, t.opaque
		if isShellName(filepath.Base(t.arg)) {
			pr.Kind = KindScript
		}
		return pr
	}
	path, ok := lookPath(t.arg, t.env["PATH"], t.dir, t.cwdToo)
	if !ok {
		pr.Kind = KindNotFound
		if strings.Contains(t.arg, "/") {
			pr.Note = "no executable file " + path
		} else {
			pr.Note = "not found on PATH"
		}
		return pr
	}
	pr.Path = path
	kind, interp, err := fileKind(path)
	switch {
	case err != nil:
		pr.Kind, pr.Note = KindUnreadable, err.Error()
		return pr
	case kind == "script":
		pr.Kind, pr.Note = KindScript, "a script (#!"+interp+"): cannot see what it runs"
		return pr
	case kind != "elf":
		pr.Kind, pr.Note = KindUnreadable, "not an ELF program"
		return pr
	}
	obj, err := ld.read(path)
	if err != nil {
		pr.Kind, pr.Note = KindUnreadable, err.Error()
		return pr
	}
	pr.Kind = KindELF
	pr.Static = !obj.interp
	var preload []string
	for _, p := range strings.FieldsFunc(t.env["LD_PRELOAD"], func(r rune) bool { return r == ':' || r == ' ' }) {
		if !strings.HasPrefix(filepath.Base(p), "libpopmon") {
			preload = append(preload, p)
		}
	}
	var c *closure
	if pr.Static {
		c = &closure{root: &Lib{Name: filepath.Base(t.arg), Path: path, obj: obj}}
		c.libs = []*Lib{c.root}
	} else {
		c = ld.load(t.arg, path, obj, t.env["LD_LIBRARY_PATH"], strings.Join(preload, ":"))
	}
	pr.Missing = c.missing
	pr.Incomplete = c.truncated
	for _, l := range c.libs {
		if l.obj.incomplete != "" && pr.Incomplete == "" {
			pr.Incomplete = l.Name + ": " + l.obj.incomplete
		}
	}
	for _, l := range c.libs[1:] {
		pr.Libs = append(pr.Libs, *l)
	}
	analyze(pr, c)
	return pr
}

// chainTo is the chain from the program to lib.
func chainTo(lib *Lib) Chain {
	var rev Chain
	for x := lib; x != nil; x = x.parent {
		rev = append(rev, filepath.Base(x.Name))
	}
	out := make(Chain, len(rev))
	for i, n := range rev {
		out[len(rev)-1-i] = n
	}
	return out
}

// libIs reports whether lib's name or soname starts with one of prefixes.
func libIs(lib *Lib, prefixes ...string) bool {
	for _, n := range []string{filepath.Base(lib.Name), lib.Soname} {
		for _, p := range prefixes {
			if n != "" && strings.HasPrefix(n, p) {
				return true
			}
		}
	}
	return false
}

// mpiStack reports whether lib belongs to an MPI implementation itself
// (libmpi*, libpmpi*, Open MPI's runtime libraries).
func mpiStack(lib *Lib) bool {
	return libIs(lib, "libmpi", "libpmpi", "libopen-rte.so", "libopen-pal.so", "libprrte.so")
}

// mpiCore reports whether lib is an MPI library proper: part of the MPI
// stack and defining PMPI_Init, or one of the known MPI library names.
func mpiCore(lib *Lib) bool {
	if !mpiStack(lib) {
		return false
	}
	return lib.obj.syms.pmpiInit || libIs(lib, "libmpi.so", "libmpich.so", "libmpi_cray.so", "libmpi_ibm.so")
}

// mpiFlavor tells which MPI an MPI library (or an object with MPI linked
// statically) is, from its characteristic symbols, then its name, then its
// own dependencies.
func mpiFlavor(lib *Lib) (MPI, string) {
	s := &lib.obj.syms
	name := filepath.Base(lib.Name)
	if lib.Soname != "" {
		name = lib.Soname
	}
	switch {
	case s.ompiSyms > 0 && s.mpichSyms == 0:
		return OpenMPI, fmt.Sprintf("%s defines Open MPI's ompi_/opal_ symbols", name)
	case s.mpichSyms > 0 && s.ompiSyms == 0:
		return MPICH, fmt.Sprintf("%s defines MPICH's MPIR_/MPID_ symbols", name)
	}
	switch {
	case libIs(lib, "libmpich", "libmpi_cray"):
		return MPICH, name + " is MPICH's"
	case libIs(lib, "libmpi.so.40", "libmpi.so.20", "libmpi_ibm"):
		return OpenMPI, name + " is Open MPI's"
	}
	for _, n := range lib.obj.needed {
		if m := launcherLibFamily(n); m != NoMPI {
			return m, fmt.Sprintf("%s links %s", name, n)
		}
	}
	return UnknownMPI, "cannot tell which MPI " + name + " is"
}

// analyze derives the OpenMP and MPI facts of a program from its closure.
func analyze(pr *Program, c *closure) {
	var cores []*Lib
	for _, l := range c.libs[1:] {
		switch {
		case pr.Gomp == nil && libIs(l, "libgomp.so"):
			pr.Gomp = chainTo(l)
		case pr.LLVMOpenMP == nil && libIs(l, "libomp.so", "libomp5.so", "libiomp5.so"):
			pr.LLVMOpenMP = chainTo(l)
		}
		if mpiCore(l) {
			cores = append(cores, l)
		}
	}
	if len(cores) > 0 {
		pr.MPIChain = chainTo(cores[0])
		pr.MPI, pr.MPIHow = mpiFlavor(cores[0])
		for _, other := range cores[1:] {
			if m, how := mpiFlavor(other); m != pr.MPI && m != UnknownMPI && pr.MPI != UnknownMPI {
				pr.MPI, pr.MPIHow = UnknownMPI, fmt.Sprintf("two MPIs in the closure: %s (%s) and %s (%s)",
					pr.MPIChain, pr.MPIHow, chainTo(other), how)
				break
			}
		}
	}
	for _, l := range c.libs {
		if mpiStack(l) {
			continue
		}
		s := &l.obj.syms
		name := filepath.Base(l.Name)
		if l == c.root {
			name = pr.Arg
		}
		if len(cores) == 0 {
			switch {
			case s.pmpiInit && pr.StaticMPI == "" && !l.Preloaded:
				pr.StaticMPI = name
				m, how := mpiFlavor(l)
				pr.MPI, pr.MPIHow = m, "MPI is linked statically into "+pr.StaticMPI
				if m != UnknownMPI {
					pr.MPIHow += " (" + how + ")"
				}
			case s.mpiInit && !s.pmpiInit && pr.MPIStubs == "" && !l.Preloaded:
				pr.MPIStubs = name
			}
			continue
		}
		funcs, n := s.mpiNames(5)
		if n > 0 {
			pr.Wrappers = append(pr.Wrappers, Wrapper{Object: name, Path: l.Path,
				Funcs: funcs, Count: n, Preloaded: l.Preloaded})
		}
	}
}

// Warnings returns one sentence for each thing that keeps popmon from
// measuring the program fully: a fully static executable, MPI linked
// statically, its own MPI wrappers, a PMPI tool in LD_PRELOAD. Scripts and
// programs binscan could not read give their Note.
func (p *Program) Warnings() []string {
	name := p.Arg
	var out []string
	if p.Kind != KindELF {
		return []string{name + ": " + p.Note}
	}
	if p.Static {
		out = append(out, name+" is a fully static executable: LD_PRELOAD cannot load popmon into it, so nothing is measured; link it dynamically")
	}
	if p.StaticMPI != "" {
		out = append(out, "MPI is linked statically into "+p.StaticMPI+": its MPI calls cannot reach popmon; relink with the shared MPI library")
	}
	for _, w := range p.Wrappers {
		funcs := strings.Join(w.Funcs, ", ")
		if w.Count > len(w.Funcs) {
			funcs += fmt.Sprintf(" and %d more", w.Count-len(w.Funcs))
		}
		if w.Preloaded {
			out = append(out, fmt.Sprintf("%s, preloaded through LD_PRELOAD, defines MPI functions (%s): another MPI tool", w.Object, funcs))
		} else {
			out = append(out, fmt.Sprintf("%s defines its own MPI functions (%s): its calls to them do not reach popmon", w.Object, funcs))
		}
	}
	if p.MPI == UnknownMPI && p.MPIHow != "" {
		out = append(out, name+": "+p.MPIHow)
	}
	return out
}

// MPI returns the MPI the job will load, with the evidence: the launcher's
// MPI when it has one, else the programs'. Programs linked with another
// MPI than the launcher's, or programs linked with different MPIs, give
// UnknownMPI with the reason.
func (r *Result) MPI() (MPI, string) {
	var launcher *Launcher
	for _, l := range r.Launchers {
		if l.MPI != NoMPI {
			launcher = l
			break
		}
	}
	prog, progHow := NoMPI, ""
	for _, p := range r.Programs {
		if p.MPI == NoMPI {
			continue
		}
		if prog == NoMPI {
			prog, progHow = p.MPI, p.Arg+": "+p.MPIHow
			continue
		}
		if p.MPI != prog {
			return UnknownMPI, fmt.Sprintf("the programs are linked with different MPIs: %s; %s: %s", progHow, p.Arg, p.MPIHow)
		}
	}
	switch {
	case launcher == nil:
		return prog, progHow
	case launcher.MPI == UnknownMPI:
		if prog != NoMPI && prog != UnknownMPI {
			return prog, launcher.Arg + ": " + launcher.How + "; " + progHow
		}
		return UnknownMPI, launcher.Arg + ": " + launcher.How
	case prog != NoMPI && prog != launcher.MPI:
		return UnknownMPI, fmt.Sprintf("%s belongs to %s (%s) but %s", launcher.Arg, launcher.MPI, launcher.How, progHow)
	}
	return launcher.MPI, launcher.Arg + ": " + launcher.How
}
