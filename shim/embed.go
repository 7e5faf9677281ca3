// Package shim holds the C sources of libpopmon, the measurement library
// that popmon preloads into measured programs, embedded so that the popmon
// binary can compile the library on demand against the user's own MPI.
package shim

import "embed"

// Sources are the library's C sources and public headers.
//
//go:embed *.c *.h *.f90
var Sources embed.FS
