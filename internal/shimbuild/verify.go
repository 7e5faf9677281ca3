package shimbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/subprocess"
)

const (
	// libName is the built library's file name in its build folder.
	libName = "libpopmon.so"
	// manifestName is the manifest's file name, next to the library.
	manifestName = "manifest.json"
	// manifestFormat names the manifest's layout.
	manifestFormat = "popmon-library-manifest 1"
	// maxManifest bounds what is read of a (possibly hostile) manifest.
	maxManifest = 64 << 10
	// loadTestTimeout bounds the load test of a new build.
	loadTestTimeout = 30 * time.Second
)

// manifest records what was built, so that a reused library can be checked
// byte for byte before it is preloaded.
type manifest struct {
	Format   string `json:"format"`
	Key      string `json:"key"`
	Library  string `json:"library"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	Compiler string `json:"compiler"`
	MPI      string `json:"mpi"`
	// Sources identifies the sources and build options (not the
	// compiler): a library found without a compiler (FindBuilt) must
	// have been built from this popmon's sources.
	Sources string `json:"sources,omitempty"`
}

// cacheState is what checkCached found in a build folder.
type cacheState struct {
	ok     bool   // the library is there and matches its manifest
	sha256 string // its hash when ok
	damage string // why an existing library cannot be used ("" when missing or ok)
}

// checkCached checks the library in build folder dir against its manifest.
// A library that is missing gives the zero state; one that does not match
// its manifest (changed, truncated, no or a foreign manifest) gives a state
// whose damage says why, to be rebuilt; one that others could have written
// gives an *UnsafeCacheError.
func checkCached(dir, key string) (cacheState, error) {
	lib := filepath.Join(dir, libName)
	fi, err := os.Lstat(lib)
	if errors.Is(err, fs.ErrNotExist) {
		return cacheState{}, nil
	}
	if err != nil {
		return cacheState{}, fmt.Errorf("cannot check the cached library %s: %w (remove it or set POPMON_CACHE_DIR to a private folder)", lib, err)
	}
	if err := checkPrivate(lib, fi, false); err != nil {
		return cacheState{}, err
	}
	m, damage, err := readManifest(dir)
	if err != nil || damage != "" {
		return cacheState{damage: damage}, err
	}
	if m.Key != key || m.Library != libName {
		return cacheState{damage: "has a manifest of another build"}, nil
	}
	size, sum, err := hashFile(lib)
	if err != nil {
		return cacheState{}, err
	}
	switch {
	case size != m.Size:
		return cacheState{damage: fmt.Sprintf("is %d bytes where its manifest says %d", size, m.Size)}, nil
	case sum != m.SHA256:
		return cacheState{damage: "does not match the sha256 of its manifest"}, nil
	}
	return cacheState{ok: true, sha256: sum}, nil
}

// readManifest reads the manifest in dir. A missing or malformed manifest
// is damage; one that others could have written is an error.
func readManifest(dir string) (manifest, string, error) {
	b, found, err := readPrivateFile(filepath.Join(dir, manifestName), maxManifest)
	switch {
	case err != nil:
		return manifest{}, "", err
	case !found:
		return manifest{}, "has no manifest", nil
	case b == nil:
		return manifest{}, "has a manifest larger than any popmon writes", nil
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return manifest{}, "has an unreadable manifest", nil
	}
	if m.Format != manifestFormat || m.Size <= 0 || len(m.SHA256) != 64 {
		return manifest{}, "has a manifest of an unknown format", nil
	}
	return m, "", nil
}

// readPrivateFile reads a small file popmon wrote in the cache: found is
// false when there is none, the content nil when it is larger than max,
// and the error an *UnsafeCacheError when others could have written it.
func readPrivateFile(p string, max int) (b []byte, found bool, err error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot check %s: %w (remove it or set POPMON_CACHE_DIR to a private folder)", p, err)
	}
	if err := checkPrivate(p, fi, false); err != nil {
		return nil, true, err
	}
	f, err := openChecked(p)
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, true, fmt.Errorf("cannot read %s: %w (remove it or set POPMON_CACHE_DIR to a private folder)", p, err)
	}
	if len(b) > max {
		return nil, true, nil
	}
	return b, true, nil
}

// openChecked opens a file of the cache for reading without following a
// symbolic link or blocking on a FIFO, and checks what it opened.
func openChecked(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &UnsafeCacheError{Path: p, Problem: "a symbolic link where popmon keeps a file", Fix: fixRemove}
		}
		return nil, fmt.Errorf("cannot open %s: %w (remove it or set POPMON_CACHE_DIR to a private folder)", p, err)
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkPrivate(p, fi, false)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// hashFile returns the size and sha256 (hex) of the file at p.
func hashFile(p string) (int64, string, error) {
	f, err := openChecked(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("cannot read %s: %w (remove it or set POPMON_CACHE_DIR to a private folder)", p, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// writeManifest writes m into dir atomically (a temporary file renamed).
func writeManifest(dir string, m manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(dir, manifestName, append(b, '\n')); err != nil {
		return fmt.Errorf("cannot write the library manifest: %w", err)
	}
	return nil
}

// writeAtomic writes b as file name of dir (mode 0644): a temporary file,
// synced, renamed over the old one.
func writeAtomic(dir, name string, b []byte) error {
	f, err := os.CreateTemp(dir, "."+name+"-")
	if err != nil {
		return fmt.Errorf("%w (set POPMON_CACHE_DIR to a writable folder)", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w (set POPMON_CACHE_DIR to a writable folder)", err)
	}
	return nil
}

// probeSource is the program the load test runs with the new library
// preloaded: it exits 0 only if the library's symbols are in the process.
const probeSource = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	if (!dlsym(RTLD_DEFAULT, "popmon_api_region_start")) {
		fputs("popmon load probe: libpopmon is not in the process\n", stderr);
		return 3;
	}
	return 0;
}
`

// buildProbe compiles the load-test program in folder tmp with compiler
// (the one that built the library, so that an MPI build's probe links the
// same MPI) and returns its path.
func buildProbe(ctx context.Context, compiler, tmp string) (string, error) {
	src := filepath.Join(tmp, "load_probe.c")
	if err := os.WriteFile(src, []byte(probeSource), 0o644); err != nil {
		return "", fmt.Errorf("writing the load probe: %w", err)
	}
	bin := filepath.Join(tmp, "load_probe")
	cmd := subprocess.Command(ctx, compiler, "-o", bin, src, "-ldl")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the load-test program with %s failed: %v: %s", compiler, err, firstLine(string(out)))
	}
	return bin, nil
}

// loadTest runs program probe with lib preloaded and POPMON_DISABLE=1 (the
// library's constructor stays inert) through the system's dynamic loader,
// and fails unless the library loaded: the probe finds its symbols, and the
// loader printed no error.
func loadTest(ctx context.Context, probe, lib string) error {
	ctx, cancel := context.WithTimeout(ctx, loadTestTimeout)
	defer cancel()
	cmd := subprocess.Command(ctx, probe)
	cmd.Env = loadTestEnv(cmd.Env, lib)
	cmd.Dir = filepath.Dir(probe)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the built library %s did not load within %v: it was not installed (run popmon doctor)", lib, loadTestTimeout)
	case err != nil:
		return fmt.Errorf("the built library %s does not load (%v: %s): it was not installed; check that the MPI's libraries are loadable (LD_LIBRARY_PATH, module load) and run popmon doctor",
			lib, err, firstLine(text))
	case strings.Contains(text, "cannot be preloaded") || strings.Contains(text, "ERROR: ld.so"):
		return fmt.Errorf("the built library %s does not load (%s): it was not installed; run popmon doctor", lib, firstLine(text))
	}
	return nil
}

// loadTestEnv is env with lib as the only preloaded library, the library
// disabled, and no loader debugging or popmon setting of the caller's.
func loadTestEnv(env []string, lib string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "LD_PRELOAD", name == "LD_AUDIT", strings.HasPrefix(name, "LD_DEBUG"),
			strings.HasPrefix(name, "POPMON_"):
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LD_PRELOAD="+lib, "POPMON_DISABLE=1")
}
