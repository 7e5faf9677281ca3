// Package doctor checks what popmon can measure on this machine (popmon
// doctor): MPI compilers and launchers, building the measurement library,
// the library cache, the clock, the live files' place, hardware counters and
// GPUs (asked of the built library's probes), OpenMP (which runtime is measured how) and Fortran; each
// check says how to fix what is missing.
package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/popmon/popmon/internal/launch"
	"github.com/popmon/popmon/internal/session"
	"github.com/popmon/popmon/internal/shimbuild"
	"github.com/popmon/popmon/internal/units"
)

type check struct {
	ok     bool
	warn   bool // not fatal: fewer metrics
	what   string
	detail string
	fix    string
}

// Report is what the checks found, in order.
type Report struct{ checks []check }

// Run makes the checks, with the MPI compiler wrapper mpicc ("" for
// $POPMON_MPICC, then mpicc).
func Run(ctx context.Context, mpicc string) *Report {
	var checks []check
	add := func(c check) { checks = append(checks, c) }
	libPath := "" // the built library, which probes hardware counters and GPUs

	add(check{ok: runtime.GOOS == "linux", what: "operating system", detail: runtime.GOOS + "/" + runtime.GOARCH,
		fix: "popmon measures programs on Linux only"})

	add(cacheCheck())
	cc, err := shimbuild.FindMPICC(mpicc)
	if err != nil {
		add(check{what: "MPI compiler wrapper", detail: err.Error(),
			fix: "apt-get install libopenmpi-dev openmpi-bin (or mpich libmpich-dev), or pass --mpicc"})
	} else {
		add(check{ok: true, what: "MPI compiler wrapper", detail: cc})
		lib, err := shimbuild.Build(ctx, shimbuild.Options{MPICC: cc})
		var unsafe *shimbuild.UnsafeCacheError
		switch {
		case errors.As(err, &unsafe): // the message says the fix
			add(check{what: "measurement library", detail: firstLineOf(err.Error())})
		case err != nil:
			add(check{what: "measurement library", detail: firstLineOf(err.Error()),
				fix: "check that " + cc + " can build shared libraries (apt-get install build-essential)"})
		default:
			state := "built and load-tested"
			if lib.Cached {
				state = "cached, matches its manifest"
			}
			add(check{ok: true, what: "measurement library", detail: fmt.Sprintf("%s (%s, %s)", lib.Path, lib.MPI, state)})
			libPath = lib.Path
			probe := probeGPU(ctx, lib.Path)
			add(gpuCheck(probe))
			if c, ok := gpuCountersCheck(probe); ok {
				add(c)
			}
			if c, ok := rocmCheck(probe); ok {
				add(c)
			}
		}
	}
	for _, w := range shimbuild.MPIWrappers {
		if p, err := exec.LookPath(w.MPICC); err == nil {
			add(check{ok: true, what: w.Family, detail: p + " (use --mpicc " + w.MPICC + " with " + w.Launcher + ")"})
		}
	}
	if p, err := exec.LookPath("mpirun"); err == nil {
		add(check{ok: true, what: "MPI launcher", detail: p})
	} else if p, err := exec.LookPath("mpiexec"); err == nil {
		add(check{ok: true, what: "MPI launcher", detail: p})
	} else {
		add(check{warn: true, what: "MPI launcher", detail: "no mpirun or mpiexec on PATH", fix: "apt-get install openmpi-bin (or mpich)"})
	}
	if p, err := exec.LookPath("gfortran"); err == nil {
		add(check{ok: true, what: "Fortran compiler", detail: p + " (Fortran programs are measured like C ones)"})
	} else {
		add(check{ok: true, what: "Fortran compiler", detail: "none (only needed to build Fortran programs)"})
	}
	add(clockCheck())
	add(liveCheck())
	add(countersCheck(ctx, libPath))
	add(omptCheck())
	if os.Geteuid() == 0 {
		add(check{ok: true, warn: true, what: "running as root",
			detail: "Open MPI refuses root unless OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set"})
	}

	return &Report{checks: checks}
}

// Print writes the checks, one a line with the fix of each that failed or
// notes something, and returns how many failed.
func (r *Report) Print(w io.Writer) int {
	checks := r.checks
	bad := 0
	for _, c := range checks {
		mark := "ok  "
		switch {
		case !c.ok && !c.warn:
			mark = "FAIL"
			bad++
		case c.warn:
			mark = "note"
		}
		fmt.Fprintf(w, "[%s] %-22s %s\n", mark, c.what, c.detail)
		if c.fix != "" && (!c.ok || c.warn) {
			fmt.Fprintf(w, "       %-22s fix: %s\n", "", c.fix)
		}
	}
	return bad
}

// cacheCheck reports where the library cache is and whether it is private.
func cacheCheck() check {
	loc, err := shimbuild.LocateCache(shimbuild.Options{})
	var unsafe *shimbuild.UnsafeCacheError
	if errors.As(err, &unsafe) { // the message says the fix
		return check{what: "library cache", detail: firstLineOf(err.Error())}
	}
	if err != nil {
		return check{what: "library cache", detail: firstLineOf(err.Error()),
			fix: "set POPMON_CACHE_DIR to a folder only you can write"}
	}
	return check{ok: true, what: "library cache",
		detail: loc.Dir + " (private: only you and root can write it and the folders above it; from " + loc.From + ")"}
}

// liveCheck reports where popmon run keeps the live files (each process's
// accounts while it runs, what a killed job's measurement is assembled
// from) and whether that place suits them.
func liveCheck() check {
	const what = "live files"
	kind, free, err := session.FSInfo(session.LiveBase)
	switch {
	case err != nil:
		return check{ok: true, warn: true, what: what, detail: fmt.Sprintf("%s is missing (%v): popmon run keeps them in its session folder, next to the output", session.LiveBase, err),
			fix: "put the output (-o) on a node-local disk; on a network file system a killed job's measurement is lost"}
	case kind != "tmpfs" && kind != "ramfs":
		if kind == "" {
			kind = "an unknown file system"
		}
		return check{ok: true, warn: true, what: what, detail: fmt.Sprintf("%s is %s, not node-local memory", session.LiveBase, kind)}
	case free < 64<<20:
		return check{ok: true, warn: true, what: what, detail: fmt.Sprintf("%s has %s free: each measured process needs about 40 KiB plus 10 KiB per thread; a process that finds no room is measured without a live file (and lost if killed)", session.LiveBase, humanBytes(free)),
			fix: "free space in " + session.LiveBase + " (containers: --shm-size)"}
	}
	return check{ok: true, what: what, detail: fmt.Sprintf("%s (%s, %s free): a job killed before MPI_Finalize keeps its measurement", session.LiveBase, kind, humanBytes(free))}
}

// humanBytes writes n bytes in binary units: "12.0 GiB".
func humanBytes(n uint64) string { return units.Bytes(n) }

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func clockCheck() check {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return check{ok: true, warn: true, what: "clock", detail: "cannot read /proc/cpuinfo; CLOCK_MONOTONIC will be used"}
	}
	if bytes.Contains(b, []byte(" constant_tsc")) && bytes.Contains(b, []byte(" nonstop_tsc")) {
		return check{ok: true, what: "clock", detail: "invariant TSC (cheapest timestamps: ~9 ns)"}
	}
	return check{ok: true, warn: true, what: "clock", detail: "no invariant TSC: CLOCK_MONOTONIC (~22 ns per read) is used"}
}

// libgompCandidates are where Debian, Ubuntu and RPM systems install GNU
// libgomp.
var libgompCandidates = []string{
	"/usr/lib/x86_64-linux-gnu/libgomp.so.1", "/usr/lib/aarch64-linux-gnu/libgomp.so.1",
	"/usr/lib64/libgomp.so.1", "/usr/lib/libgomp.so.1",
}

func firstFile(paths []string) string {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func omptCheck() check {
	return openmpCheck(launch.FindLibomp(), firstFile(libgompCandidates))
}

// openmpCheck says which OpenMP runtimes of the machine (their paths, ""
// when absent) are measured how: LLVM's libomp through OMPT, GNU libgomp
// in place by GOMP interposition (docs/cli.md, "OpenMP"). Neither missing
// runtime is a fault: a program brings its own.
func openmpCheck(libomp, libgomp string) check {
	var parts []string
	if libgomp != "" {
		parts = append(parts, "GNU libgomp "+libgomp+": GCC programs measured on it in place (GOMP interposition)")
	}
	if libomp != "" {
		parts = append(parts, "LLVM libomp "+libomp+": clang programs measured through OMPT; --openmp=libomp runs GCC programs on it")
	}
	if len(parts) == 0 {
		return check{ok: true, what: "OpenMP", detail: "no OpenMP runtime found in the usual places: programs that bring one are measured (OMPT on libomp, GOMP interposition on libgomp)"}
	}
	c := check{ok: true, what: "OpenMP", detail: strings.Join(parts, "; ")}
	if libomp == "" {
		c.detail += "; --openmp=libomp needs LLVM's libomp"
		c.fix = "apt-get install libomp-dev (only for --openmp=libomp)"
	}
	return c
}

var _ io.Writer = (*bytes.Buffer)(nil)
