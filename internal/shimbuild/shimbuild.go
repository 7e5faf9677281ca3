// Package shimbuild compiles libpopmon, the measurement library, from the
// sources embedded in the popmon binary with the user's own MPI compiler
// wrapper, into a private per-user cache keyed by the sources and the MPI
// identity, so that a second run reuses the library and a different MPI gets
// its own. The cache is refused when other users could write it, and a
// cached library is reused only when it matches the manifest written when it
// was built (see LocateCache and Build).
package shimbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	popmon "github.com/popmon/popmon"
	"github.com/popmon/popmon/internal/subprocess"
)

// Options choose how the library is built.
type Options struct {
	// MPICC is the MPI C compiler wrapper; empty means $POPMON_MPICC, then
	// mpicc on PATH.
	MPICC string
	// NoMPI builds the library without MPI support (serial and OpenMP
	// programs), with CC (default $CC, then cc).
	NoMPI bool
	// CC is the C compiler for NoMPI builds.
	CC string
	// CacheDir overrides the cache folder (default: $POPMON_CACHE_DIR,
	// then $XDG_CACHE_HOME/popmon/lib, then $HOME/.cache/popmon/lib, then
	// a per-user folder in the temporary folder; see LocateCache).
	CacheDir string
	// Werror adds -Werror (used by the project's own tests).
	Werror bool
	// MPIFamily, when not empty, is the start of the MPI description
	// ("Open MPI", "MPICH") a library found without a compiler must have
	// (see FindBuilt).
	MPIFamily string
	// Log receives compiler output on failure and progress notes; may be nil.
	Log io.Writer
}

// Library is a built measurement library.
type Library struct {
	// Path is the shared object to preload.
	Path string
	// Compiler is the compiler wrapper used.
	Compiler string
	// MPI is a short description of the MPI the library was built against
	// ("" for a NoMPI build).
	MPI string
	// Cached reports whether an existing build was reused.
	Cached bool
	// SHA256 is the library's hash (hex), checked against its manifest.
	SHA256 string
	// Cache is the cache folder the library is in.
	Cache CacheLocation
}

// Build returns the library for opts, compiling it if the cache has none.
// The cache must be private (see LocateCache); a cached library is reused
// only if it matches the manifest written when it was built (size and
// sha256), and is rebuilt, with a note on opts.Log, when it does not. A new
// build is load-tested before it is installed.
func Build(ctx context.Context, opts Options) (*Library, error) {
	compiler, err := chooseCompiler(opts)
	if err != nil {
		// No compiler here (a compute node): a library built earlier from
		// the same sources, e.g. by `popmon build` on a login node, serves.
		lib, ferr := FindBuilt(opts)
		if ferr == nil {
			return lib, nil
		}
		if errors.Is(ferr, errNoneBuilt) {
			ferr = fmt.Errorf("%w (run 'popmon build' where the compiler is, with this cache)", ferr)
		}
		return nil, fmt.Errorf("%w; %w", err, ferr)
	}
	loc, err := LocateCache(opts)
	if err != nil {
		return nil, err
	}
	key, mpiDesc, sources, err := buildKey(ctx, compiler, opts, loc.Dir)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(loc.Dir, key)
	if err := ensurePrivateDir(dir); err != nil {
		return nil, err
	}
	lib := filepath.Join(dir, libName)
	out := &Library{Path: lib, Compiler: compiler, MPI: mpiDesc, Cache: loc}
	st, err := checkCached(dir, key)
	if err != nil {
		return nil, err
	}
	if st.ok {
		out.Cached, out.SHA256 = true, st.sha256
		return out, nil
	}
	// Several ranks of `mpirun popmon exec` may build at once: one builds,
	// the others wait on the lock and then find the library.
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if st, err = checkCached(dir, key); err != nil {
		return nil, err
	}
	if st.ok {
		out.Cached, out.SHA256 = true, st.sha256
		return out, nil
	}
	if st.damage != "" && opts.Log != nil {
		fmt.Fprintf(opts.Log, "popmon: the cached library %s %s: rebuilding it\n", lib, st.damage)
	}
	m := manifest{Format: manifestFormat, Key: key, Library: libName, Compiler: compiler, MPI: mpiDesc, Sources: sourcesID(opts, sources)}
	if out.SHA256, err = compile(ctx, compiler, opts, sources, dir, m); err != nil {
		return nil, err
	}
	return out, nil
}

// chooseCompiler returns the compiler for opts: the MPI wrapper, or the C
// compiler of a NoMPI build.
func chooseCompiler(opts Options) (string, error) {
	if !opts.NoMPI {
		return FindMPICC(opts.MPICC)
	}
	compiler := opts.CC
	if compiler == "" {
		compiler = os.Getenv("CC")
	}
	if compiler == "" {
		compiler = "cc"
	}
	p, err := exec.LookPath(compiler)
	if err != nil {
		return "", fmt.Errorf("no C compiler found (%v): install gcc or set CC", err)
	}
	return p, nil
}

// buildKey returns the cache key of a build (sources and compiler
// identity), the MPI's description and the sources. memoDir, when not
// empty, is the private cache folder where the compiler's identity is
// remembered between runs (see compilerIdentity).
func buildKey(ctx context.Context, compiler string, opts Options, memoDir string) (string, string, map[string][]byte, error) {
	identity, mpiDesc, err := compilerIdentity(ctx, compiler, opts.NoMPI, memoDir)
	if err != nil {
		return "", "", nil, err
	}
	sources, err := sourceFiles()
	if err != nil {
		return "", "", nil, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "popmon-shim v1\nnompi=%v werror=%v\n", opts.NoMPI, opts.Werror || werrorEnv())
	fmt.Fprintf(h, "%s\n", versionDefine())
	h.Write(identity)
	hashSources(h, sources)
	return hex.EncodeToString(h.Sum(nil))[:24], mpiDesc, sources, nil
}

// versionDefine is the compiler flag that gives the library its version,
// popmon.Version (shim/output.c writes it into measurement files; no C file
// defines it). It is part of the cache key: a new version rebuilds the
// library even when no source changed.
func versionDefine() string {
	return `-DPOPMON_VERSION="` + libVersion + `"`
}

// libVersion is popmon.Version (a variable so that a test can show that
// another version makes another cache key).
var libVersion = popmon.Version

// hashSources writes the sources into h by name, each with its length.
func hashSources(h io.Writer, sources map[string][]byte) {
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(sources[n]))
		h.Write(sources[n])
	}
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot lock the library cache: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot lock the library cache: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// sourceFiles returns the embedded C sources and headers by name.
func sourceFiles() (map[string][]byte, error) {
	out, err := readTree(popmon.ShimSources())
	if err != nil {
		return nil, fmt.Errorf("reading embedded library sources: %w", err)
	}
	return out, nil
}

// readTree returns every file of src by slash-separated path.
func readTree(src fs.FS) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		out[p] = b
		return nil
	})
	return out, err
}

// mpiDir is the folder of the library's sources that only build with MPI
// (the MPI_Init/MPI_Finalize path, the generated wrappers, bytes, the
// trace): a NoMPI build leaves it out.
const mpiDir = "mpi/"

// mpiOnly reports whether the source at path (slash-separated, relative to
// shim/) only builds with MPI.
func mpiOnly(path string) bool {
	return strings.HasPrefix(path, mpiDir)
}

// writeTree writes sources (by slash-separated path) under dir, creating
// their folders; the build compiles them there with -I. so that every
// file names the headers of other folders by their path (base/clock.h).
func writeTree(dir string, sources map[string][]byte) error {
	for name, b := range sources {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// compile builds the library in a temporary folder of build folder dir,
// load-tests it, and installs it with its manifest m (completed with the
// library's size and hash), which it returns the hash of.
func compile(ctx context.Context, compiler string, opts Options, sources map[string][]byte, dir string, m manifest) (string, error) {
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("cannot create a build folder in %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	var cfiles []string
	if err := writeTree(tmp, sources); err != nil {
		return "", err
	}
	for name := range sources {
		if !strings.HasSuffix(name, ".c") {
			continue
		}
		if opts.NoMPI && mpiOnly(name) {
			continue
		}
		cfiles = append(cfiles, name)
	}
	sort.Strings(cfiles)
	args := []string{"-std=c11", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra",
		"-fvisibility=default", "-D_GNU_SOURCE", versionDefine(), "-I."}
	if opts.Werror || werrorEnv() {
		args = append(args, "-Werror")
	}
	if opts.NoMPI {
		args = append(args, "-DPOPMON_NO_MPI")
	}
	args = append(args, "-o", libName)
	args = append(args, cfiles...)
	args = append(args, "-ldl", "-lpthread", "-Wl,--version-script=exports.map")
	cmd := subprocess.Command(ctx, compiler, args...)
	cmd.Dir = tmp
	outb, err := cmd.CombinedOutput()
	if err != nil {
		if opts.Log != nil {
			opts.Log.Write(outb)
		}
		return "", fmt.Errorf("building the measurement library with %s failed: %v\n%s", compiler, err, strings.TrimSpace(string(outb)))
	}
	built := filepath.Join(tmp, libName)
	// The compiler's output follows the umask; the cache's files are
	// never writable by others.
	if err := os.Chmod(built, 0o755); err != nil {
		return "", fmt.Errorf("installing the measurement library: %w", err)
	}
	probe, err := buildProbe(ctx, compiler, tmp)
	if err != nil {
		return "", err
	}
	if err := loadTest(ctx, probe, built); err != nil {
		return "", err
	}
	if m.Size, m.SHA256, err = hashFile(built); err != nil {
		return "", err
	}
	// The manifest goes first and comes back last: a library without its
	// manifest is never reused, whatever interrupts the installation.
	lib := filepath.Join(dir, libName)
	if err := os.Remove(filepath.Join(dir, manifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("replacing the library manifest: %w", err)
	}
	if err := os.Rename(built, lib); err != nil {
		return "", fmt.Errorf("installing the measurement library: %w", err)
	}
	if err := writeManifest(dir, m); err != nil {
		return "", err
	}
	return m.SHA256, nil
}

// errNoneBuilt: the cache holds no library FindBuilt could use.
var errNoneBuilt = errors.New("no library built from these sources in the cache")

// sourcesID identifies a build's sources and options without its compiler:
// the part of the cache key a node without a compiler can compute.
func sourcesID(opts Options, sources map[string][]byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "popmon-shim sources v1\nnompi=%v werror=%v\n", opts.NoMPI, opts.Werror || werrorEnv())
	fmt.Fprintf(h, "%s\n", versionDefine())
	hashSources(h, sources)
	return hex.EncodeToString(h.Sum(nil))
}

// FindBuilt returns a library of the cache built from this popmon's
// sources with opts's options (NoMPI, Werror) and, when opts.MPIFamily is
// set, for that MPI, checked against its manifest: what a compute node
// without a compiler uses after `popmon build` on a login node filled a
// shared cache. It fails when there is none, or when libraries for several
// MPIs qualify (the compiler would have told them apart).
func FindBuilt(opts Options) (*Library, error) {
	loc, err := LocateCache(opts)
	if err != nil {
		return nil, err
	}
	sources, err := sourceFiles()
	if err != nil {
		return nil, err
	}
	want := sourcesID(opts, sources)
	entries, err := os.ReadDir(loc.Dir)
	if err != nil {
		return nil, fmt.Errorf("reading the library cache %s: %w", loc.Dir, err)
	}
	var found []*Library
	var newest []time.Time
	mpis := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == identityDir {
			continue
		}
		dir := filepath.Join(loc.Dir, e.Name())
		m, damage, err := readManifest(dir)
		if err != nil || damage != "" || m.Sources != want || m.Key != e.Name() {
			continue
		}
		if opts.MPIFamily != "" && !strings.HasPrefix(m.MPI, opts.MPIFamily) {
			continue
		}
		st, err := checkCached(dir, m.Key)
		if err != nil || !st.ok {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, libName))
		if err != nil {
			continue
		}
		found = append(found, &Library{Path: filepath.Join(dir, libName), Compiler: m.Compiler, MPI: m.MPI, Cached: true, SHA256: st.sha256, Cache: loc})
		newest = append(newest, fi.ModTime())
		mpis[m.MPI] = true
	}
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("%w %s", errNoneBuilt, loc.Dir)
	case len(mpis) > 1 && !opts.NoMPI:
		names := make([]string, 0, len(mpis))
		for n := range mpis {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("the library cache %s holds libraries for %s and no compiler here tells which the program needs: pass --mpicc with the wrapper of its MPI where one is installed, or keep one MPI's libraries in this cache", loc.Dir, strings.Join(names, " and "))
	}
	best := 0
	for i := range found {
		if newest[i].After(newest[best]) {
			best = i
		}
	}
	return found[best], nil
}

// werrorWarned makes werrorEnv's line one per process.
var werrorWarned sync.Once

// werrorEnv reads POPMON_WERROR (the tests' and CI's switch: warnings are
// errors when building the library): 1, on, yes, true; 0, off, no, false
// or unset. Another value is off, with one line, as libpopmon says of its
// own variables (shim/base/env.c); empty is unset.
func werrorEnv() bool {
	v, set := os.LookupEnv("POPMON_WERROR")
	switch v {
	case "1", "on", "yes", "true":
		return true
	case "", "0", "off", "no", "false":
		return false
	}
	if set {
		werrorWarned.Do(func() {
			fmt.Fprintf(os.Stderr, "popmon: POPMON_WERROR=%q: not one of 1, 0, on, off, yes, no, true, false; using 0\n", v)
		})
	}
	return false
}
