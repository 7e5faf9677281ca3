// Package popmon holds what the popmon binary carries with it: the C sources
// of libpopmon, the measurement library that popmon compiles on demand
// against the user's own MPI and preloads into measured programs. (Go does not
// allow a package directory with C files but no cgo, so the embedding lives
// here rather than in shim/.)
package popmon

import (
	"embed"
	"io/fs"
)

// Version is popmon's version: `popmon version` reports it, and the library
// writes it into measurement files (internal/shimbuild compiles libpopmon
// with -DPOPMON_VERSION set from it; the C sources do not define it).
const Version = "0.1.0"

// The library's folders: shim/ itself (start-up, the subsystems, the
// output), shim/base (the bottom layer) and shim/mpi (what only builds with
// MPI); shim/test and shim/gen are not part of it.
//
//go:embed shim/*.c shim/*.h shim/*.f90 shim/*.map shim/base/*.c shim/base/*.h shim/mpi/*.c shim/mpi/*.h
var shimFiles embed.FS

// ShimSources returns the library's C sources and public headers, by
// slash-separated path (core.c, popmon.h, base/clock.c, mpi/mpi.c, ...).
func ShimSources() fs.FS {
	sub, err := fs.Sub(shimFiles, "shim")
	if err != nil {
		panic(err) // unreachable: the directory is embedded above
	}
	return sub
}
