package main

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

// fortranLookup is the NULL-terminated preference list of PMPI symbols for
// the wrapper symbol with decoration dec: the same decoration first.
func fortranLookup(base, dec string) []string {
	out := []string{"p" + base + dec}
	for _, d := range fortranDecorations {
		if d != dec {
			out = append(out, "p"+base+d)
		}
	}
	return out
}
