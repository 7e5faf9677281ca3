package main

import "strings"

// FortranSig is the C view of a Fortran (mpif.h / "use mpi") binding: every
// Fortran argument is passed by reference, so the wrapper declares one
// void * per argument, IERROR last, then one size_t hidden length per
// CHARACTER argument, in argument order (the gfortran, Intel and NVHPC
// convention; size_t since gfortran 8). The wrapper forwards them unchanged,
// so MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE and friends keep their
// Fortran meaning.
type FortranSig struct {
	Args []string // argument names, the last one is "ierror"
	Lens []string // hidden length names ("name_len"), in argument order
}

// Arity is the shape of the C function type: pointer and length counts.
func (s FortranSig) Arity() (ptrs, lens int) { return len(s.Args), len(s.Lens) }

// FortranSignature derives the Fortran binding of c; ok is false when c has
// no Fortran wrapper (fortran=none).
func (c *Call) FortranSignature() (sig FortranSig, ok bool) {
	if c.NoFortran {
		return FortranSig{}, false
	}
	isChar := map[string]bool{}
	for _, a := range c.FChar {
		isChar[a] = true
	}
	for _, p := range c.fortranParams() {
		sig.Args = append(sig.Args, p.Name)
		if isChar[p.Name] {
			sig.Lens = append(sig.Lens, p.Name+"_len")
		}
	}
	sig.Args = append(sig.Args, ierrorName)
	return sig, true
}

// fortranDecorations are the three symbol spellings of an mpif.h binding
// that compilers use: lower case with one underscore (gfortran, ifort,
// nvfortran), with two (g77 and -fsecond-underscore for names that contain
// one), and without (xlf, -fno-underscoring).
var fortranDecorations = []string{"_", "__", ""}

// fortranLookup is the preference list of the symbols a Fortran wrapper
// forwards to, looked up after libpopmon (dlsym RTLD_NEXT): its own name
// first — the MPI library's mpi_x_ is an alias of its pmpi_x_, and another
// PMPI tool loaded after libpopmon defines it too, so both tools see the
// call —, then the PMPI symbols, the same decoration first.
func fortranLookup(base, dec string) []string {
	out := []string{base + dec, "p" + base + dec}
	for _, d := range fortranDecorations {
		if d != dec {
			out = append(out, "p"+base+d)
		}
	}
	return out
}

// F08Wrapper is one symbol of the Fortran 2008 bindings ("use mpi_f08")
// that libpopmon defines: each MPI library names them its own way.
type F08Wrapper struct {
	Symbol string     // e.g. mpi_send_f08ts_
	Lookup []string   // what it forwards to (dlsym RTLD_NEXT), in order
	Sig    FortranSig // arguments as in the mpif.h binding
}

// f08Suffixes are the symbol suffixes of the mpi_f08 procedures: Open MPI
// and MPICH name a procedure mpi_x_f08_; MPICH names those with a choice
// buffer (TYPE(*), DIMENSION(..)) mpi_x_f08ts_, and the large-count
// (MPI_Count) versions, the _c functions of C, add "large_".
func (c *Call) f08Suffixes(large bool) []string {
	tail := "_"
	if large {
		tail = "_large_"
	}
	out := []string{"_f08" + tail}
	for _, p := range c.Params {
		if strings.Contains(p.Type, "void") && strings.Contains(p.Type, "*") {
			out = append(out, "_f08ts"+tail)
			break
		}
	}
	return out
}

// F08Wrappers returns the mpi_f08 symbols to wrap for c, whose mpif.h
// binding (or, for a large-count _c function, that of its base function
// base, nil otherwise) gives the argument list: in mpi_f08 every argument
// is passed by reference too (or by value in a register of the same
// width), IERROR last and optional (NULL when absent), hidden CHARACTER
// lengths after it.
func (c *Call) F08Wrappers(base *Call) []F08Wrapper {
	var sig FortranSig
	var name string
	large := false
	if s, ok := c.FortranSignature(); ok {
		sig, name = s, c.FortranName()
	} else if base != nil && strings.HasSuffix(c.Name, "_c") {
		s, ok := base.FortranSignature()
		if !ok {
			return nil
		}
		sig, name, large = s, base.FortranName(), true
	} else {
		return nil
	}
	var out []F08Wrapper
	for _, suf := range c.f08Suffixes(large) {
		pmpiOMPI := "p" + name + suf                                       // Open MPI: pmpi_x_f08_
		pmpiMPICH := "p" + strings.Replace(name, "mpi_", "mpir_", 1) + suf // MPICH: pmpir_x_f08ts_
		out = append(out, F08Wrapper{Symbol: name + suf, Lookup: []string{name + suf, pmpiOMPI, pmpiMPICH}, Sig: sig})
	}
	return out
}
