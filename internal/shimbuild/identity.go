package shimbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/popmon/popmon/internal/subprocess"
)

const (
	// identityFormat names the layout of a remembered compiler identity.
	identityFormat = "popmon-compiler-identity 1"
	// identityDir is the cache subfolder of remembered identities.
	identityDir = "compilers"
	// maxIdentityMemo bounds what is read of a (possibly damaged) memo.
	maxIdentityMemo = 256 << 10
	// maxIdentityFiles bounds the headers a memo may list.
	maxIdentityFiles = 2000
)

// mpiProbe is what the compiler preprocesses to identify the MPI: mpi.h
// and the version it declares, on the last line.
const mpiProbe = "#include <mpi.h>\nMPI_VERSION MPI_SUBVERSION\n"

// identityEnv lists the variables that change what the compiler wrapper
// or the preprocessor does beyond what `-show` prints: the header search
// path and the compiler's own search for its programs.
var identityEnv = []string{"CPATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH"}

// compilerIdentity describes the compiler and the MPI behind it: the
// wrapper's underlying command line (`-show`), the compiler's version and
// the preprocessed mpi.h (by its sha256), so that a different MPI (or
// version) gets a different cache entry; and a description of the MPI
// ("MPICH (MPI 4.0)").
//
// Preprocessing mpi.h costs most of the time of a popmon run's start
// (a tenth of a second with MPICH), so with memoDir set its result is
// remembered there together with the size, modification and change times
// and inode of every header it read (the compiler's dependency list): it is
// reused while the wrapper prints the same, the compiler reports the same
// version, and every one of those headers is unchanged.
func compilerIdentity(ctx context.Context, compiler string, noMPI bool, memoDir string) ([]byte, string, error) {
	var id bytes.Buffer
	fmt.Fprintf(&id, "compiler=%s\n", compiler)
	// The questions are independent, and an MPI wrapper script is slow to
	// start (MPICH's runs expr in a loop): asked at once, they cost the
	// time of the slowest.
	var version, show []byte
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if v, err := subprocess.Command(ctx, compiler, "--version").CombinedOutput(); err == nil {
			version = v
		}
	}()
	if !noMPI {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, flag := range []string{"-show", "--showme"} {
				if v, err := subprocess.Command(ctx, compiler, flag).CombinedOutput(); err == nil {
					show = v
					break
				}
			}
		}()
	}
	wg.Wait()
	id.Write(version)
	if noMPI {
		return id.Bytes(), "", nil
	}
	id.Write(show)
	var memo *identityMemo
	memoPath := ""
	if memoDir != "" {
		memoPath = filepath.Join(memoDir, identityDir, memoName(compiler, version, show))
		var err error
		if memo, err = readIdentityMemo(memoPath); err != nil {
			return nil, "", err
		}
	}
	if memo == nil {
		var deps []string
		pre, deps, err := preprocessMPI(ctx, compiler, memoDir)
		if err != nil {
			return nil, "", err
		}
		sum := sha256.Sum256(pre)
		memo = &identityMemo{Format: identityFormat, MPIHeader: hex.EncodeToString(sum[:]), MPI: describeMPI(pre)}
		if memoPath != "" && deps != nil {
			if memo.Files, err = stampFiles(deps); err == nil {
				// A memo that cannot be written costs the next run a tenth of
				// a second, nothing more.
				_ = writeIdentityMemo(memoPath, memo)
			}
		}
	}
	fmt.Fprintf(&id, "mpi.h sha256=%s\n", memo.MPIHeader)
	return id.Bytes(), memo.MPI, nil
}

// preprocessMPI runs the compiler on mpiProbe and returns the output and,
// when depDir is set and the compiler can write one (-MD -MF), the absolute
// paths of the files it read (nil otherwise).
func preprocessMPI(ctx context.Context, compiler, depDir string) ([]byte, []string, error) {
	run := func(extra ...string) ([]byte, string, error) {
		var stderr bytes.Buffer
		cmd := subprocess.Command(ctx, compiler, append([]string{"-E", "-P", "-x", "c", "-"}, extra...)...)
		cmd.Stdin = strings.NewReader(mpiProbe)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return out, stderr.String(), err
	}
	if depDir != "" {
		if deps, err := depFile(depDir); err == nil {
			defer os.Remove(deps)
			if out, _, err := run("-MD", "-MF", deps); err == nil {
				return out, readDeps(deps), nil
			}
		}
	}
	out, stderr, err := run()
	if err != nil {
		return nil, nil, fmt.Errorf("%s cannot compile against mpi.h: %v: %s (is it an MPI compiler wrapper? install libopenmpi-dev or mpich, or pass --mpicc)",
			compiler, err, firstLine(stderr))
	}
	return out, nil, nil
}

// depFile creates an empty private file in the identity folder of dir for
// the compiler's dependency list.
func depFile(dir string) (string, error) {
	d := filepath.Join(dir, identityDir)
	if err := ensurePrivateDir(d); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(d, ".deps-")
	if err != nil {
		return "", err
	}
	f.Close()
	return f.Name(), nil
}

// readDeps parses a make rule written by -MD -MF: the prerequisites, which
// must all be absolute paths; nil when the file is missing, malformed or
// names anything make would have to interpret ($, #, relative paths).
func readDeps(p string) []string {
	b, err := os.ReadFile(p)
	if err != nil || len(b) > maxIdentityMemo {
		return nil
	}
	s := strings.ReplaceAll(string(b), "\\\n", " ")
	if strings.ContainsAny(s, "$#") {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) == 0 {
		return nil
	}
	// Only the first rule: -MP would add empty ones for each header.
	rule := lines[0]
	i := strings.Index(rule, ": ")
	if i < 0 {
		return nil
	}
	var deps []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			deps = append(deps, cur.String())
			cur.Reset()
		}
	}
	rest := rule[i+2:]
	for j := 0; j < len(rest); j++ {
		c := rest[j]
		switch {
		case c == '\\' && j+1 < len(rest) && rest[j+1] == ' ':
			cur.WriteByte(' ')
			j++
		case c == ' ' || c == '\t':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	if len(deps) == 0 || len(deps) > maxIdentityFiles {
		return nil
	}
	for _, d := range deps {
		if !filepath.IsAbs(d) {
			return nil
		}
	}
	return deps
}

// describeMPI names the MPI whose preprocessed mpi.h is pre.
func describeMPI(pre []byte) string {
	lines := strings.Split(strings.TrimSpace(string(pre)), "\n")
	desc := ""
	if len(lines) > 0 {
		f := strings.Fields(lines[len(lines)-1])
		if len(f) == 2 {
			desc = "MPI " + f[0] + "." + f[1]
		}
	}
	switch {
	case bytes.Contains(pre, []byte("OMPI_MAJOR_VERSION")) || bytes.Contains(pre, []byte("ompi_")):
		desc = "Open MPI (" + desc + ")"
	case bytes.Contains(pre, []byte("MPICH")) || bytes.Contains(pre, []byte("MPIX_")):
		desc = "MPICH (" + desc + ")"
	}
	return desc
}

// identityMemo is a remembered compiler identity.
type identityMemo struct {
	Format string `json:"format"`
	// MPIHeader is the sha256 (hex) of the preprocessed mpiProbe.
	MPIHeader string `json:"mpi_h_sha256"`
	// MPI describes the MPI (describeMPI).
	MPI string `json:"mpi"`
	// Files are the files the preprocessor read, as they were.
	Files []fileStamp `json:"files"`
}

// fileStamp is what identifies a file's version without reading it.
type fileStamp struct {
	Path  string `json:"path"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
	Ino   uint64 `json:"ino"`
	Dev   uint64 `json:"dev"`
}

// stamp returns the stamp of the file at p (following links, as the
// compiler did).
func stamp(p string) (fileStamp, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return fileStamp{}, err
	}
	return fileStamp{Path: p, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
		Ino: st.Ino, Dev: st.Dev}, nil
}

// stampFiles stamps every file of paths.
func stampFiles(paths []string) ([]fileStamp, error) {
	out := make([]fileStamp, 0, len(paths))
	for _, p := range paths {
		s, err := stamp(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// memoName is the memo's file name for a compiler that answered version
// and show: a hash of those and of the variables in identityEnv.
func memoName(compiler string, version, show []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%d\n", compiler, len(version))
	h.Write(version)
	fmt.Fprintf(h, "%d\n", len(show))
	h.Write(show)
	names := append([]string(nil), identityEnv...)
	sort.Strings(names)
	for _, n := range names {
		v, ok := os.LookupEnv(n)
		fmt.Fprintf(h, "%s %v %q\n", n, ok, v)
	}
	return hex.EncodeToString(h.Sum(nil))[:32] + ".json"
}

// readIdentityMemo returns the memo at p if it is well formed and every
// file it lists is unchanged; nil (and no error) otherwise. A memo that
// others could have written is an error, like any such file of the cache.
func readIdentityMemo(p string) (*identityMemo, error) {
	b, found, err := readPrivateFile(p, maxIdentityMemo)
	if err != nil || !found || b == nil {
		return nil, err
	}
	var m identityMemo
	if json.Unmarshal(b, &m) != nil || m.Format != identityFormat || len(m.MPIHeader) != 64 ||
		len(m.Files) == 0 || len(m.Files) > maxIdentityFiles {
		return nil, nil
	}
	for _, f := range m.Files {
		if !filepath.IsAbs(f.Path) {
			return nil, nil
		}
		if now, err := stamp(f.Path); err != nil || now != f {
			return nil, nil
		}
	}
	return &m, nil
}

// writeIdentityMemo writes m at p, in a private folder, atomically.
func writeIdentityMemo(p string, m *identityMemo) error {
	if err := ensurePrivateDir(filepath.Dir(p)); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Dir(p), filepath.Base(p), append(b, '\n'))
}
