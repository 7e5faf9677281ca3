// Command gen writes libpopmon's MPI interception layer from the call list
// mpi_calls.txt: shim/mpi_calls.h (enum popmon_fn, the function ids, and
// enum popmon_kind) and shim/mpi_wrappers.c (the name and kind tables and
// the C and Fortran PMPI wrappers); the CUPTI callback-id table
// cupti_cbids.txt as shim/gpu_cbids.h (cbids.go); and, for the Go side, the event trace's
// classification of the same calls (internal/trace/mpicalls_gen.go), which
// the native trace and the Paraver reader use.
//
// Regenerate after editing mpi_calls.txt:
//
//	go generate ./shim/gen
//
// go test ./shim/gen fails when the committed files are not what the
// generator writes. The generator reads only the call list, never mpi.h: the
// generated C is the same for every MPI and picks the functions that the
// installed mpi.h declares with preprocessor guards on MPI_VERSION.
package main

//go:generate go run . -out ..

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// The generated C files, relative to the output folder (shim/), and the
// pass-through list read next to the call list (the Go file: goKindsFile).
const (
	headerFile      = "mpi_calls.h"
	wrappersFile    = "mpi/mpi_wrappers.c"
	passthroughFile = "mpi_passthrough.txt"
)

// Generate parses the call list at in and the pass-through list next to it
// (mpi_passthrough.txt) and returns the generated files by path relative to
// shim/.
func Generate(in string) (map[string][]byte, error) {
	f, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	calls, err := ParseCalls(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	if err := checkLewi(calls); err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	passPath := filepath.Join(filepath.Dir(in), passthroughFile)
	pf, err := os.Open(passPath)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	pass, err := ParsePassthrough(pf, calls)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", passPath, err)
	}
	cbids, err := generateCbids(filepath.Join(filepath.Dir(in), cbidsData))
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		cbidsFile:    cbids,
		headerFile:   GenerateHeader(calls, pass),
		wrappersFile: GenerateWrappers(calls, pass),
		goKindsFile:  GenerateGoKinds(calls),
	}, nil
}

func main() {
	in := flag.String("in", "mpi_calls.txt", "the call list")
	out := flag.String("out", "..", "folder (shim/) to write "+headerFile+", "+wrappersFile+" and "+goKindsFile+" to")
	flag.Parse()
	files, err := Generate(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for _, name := range []string{headerFile, wrappersFile, goKindsFile, cbidsFile} {
		path := filepath.Join(*out, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, files[name]) {
			continue // unchanged: keep the timestamp
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
