// Package dlbhome lays out a DLB-compatible prefix (`popmon dlb-home DIR`):
// DIR such that DLB_HOME=DIR works unchanged for programs, job scripts and
// tests written for DLB 3.7's TALP. lib/ holds the measurement library under
// DLB's names (libdlb.so without MPI; libdlb_mpi.so, libdlb_mpic.so and
// libdlb_mpif.so for the user's MPI), include/ DLB's C and Fortran headers
// (written for popmon from DLB's documented interface: files/include),
// bin/dlb DLB's utility command, bin/dlb_taskset DLB's DROM command (popmon
// taskset), lib/pythonX.Y/site-packages DLB's Python
// module (popmon's `dlb`), and libexec/popmon the popmon binary, which the
// library runs at the end of a run to write DLB's output files (the TALP
// layouts have one owner, internal/talpjson: ARCHITECTURE.md).
package dlbhome

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	popmon "github.com/popmon/popmon"
	"github.com/popmon/popmon/internal/shimbuild"
	"github.com/popmon/popmon/internal/subprocess"
)

//go:embed files/include/*.h
var files embed.FS

// Marker is the file that says a folder is a prefix popmon laid out (and may
// lay out again).
const Marker = ".popmon-dlb-home"

// MPILibs are DLB's names of its library with MPI interception: C and
// Fortran, C only, Fortran only. popmon's library intercepts both bindings
// in each. DLB builds them without versioned names (libtool -avoid-version):
// a program linked with -ldlb needs libdlb.so itself.
var MPILibs = []string{"libdlb_mpi.so", "libdlb_mpic.so", "libdlb_mpif.so"}

// ErrTarget is the error of a DIR that cannot be a prefix (not a folder,
// or a folder that holds something else).
var ErrTarget = errors.New("not a place for a prefix")

// Options choose how the prefix is built.
type Options struct {
	// MPICC is the MPI compiler wrapper for the MPI libraries ("": as
	// shimbuild finds it). NoMPI lays out libdlb.so only.
	MPICC string
	NoMPI bool
	// Popmon is the popmon binary copied into libexec/ (default: the
	// running executable).
	Popmon string
	// Log receives progress notes and compiler output.
	Log io.Writer
}

// Result says what was laid out.
type Result struct {
	Dir    string
	MPI    string // the MPI the MPI libraries were built for ("": none)
	Python string // the Python module's folder ("": no python3)
}

// Layout lays out dir. A folder that exists must be empty or a prefix laid
// out before (its Marker), whose files are replaced.
func Layout(ctx context.Context, dir string, opts Options) (*Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := checkTarget(abs); err != nil {
		return nil, err
	}
	for _, d := range []string{"lib", "include", "bin", "libexec"} {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o755); err != nil {
			return nil, err
		}
	}
	res := &Result{Dir: abs}
	serial, err := shimbuild.Build(ctx, shimbuild.Options{NoMPI: true, Log: opts.Log})
	if err != nil {
		return nil, fmt.Errorf("building libdlb.so: %w", err)
	}
	if err := copyFile(serial.Path, filepath.Join(abs, "lib", "libdlb.so"), 0o755); err != nil {
		return nil, err
	}
	if !opts.NoMPI {
		lib, err := shimbuild.Build(ctx, shimbuild.Options{MPICC: opts.MPICC, Log: opts.Log})
		if err != nil {
			return nil, fmt.Errorf("building libdlb_mpi.so (--no-mpi lays out libdlb.so only): %w", err)
		}
		for _, name := range MPILibs {
			if err := copyFile(lib.Path, filepath.Join(abs, "lib", name), 0o755); err != nil {
				return nil, err
			}
		}
		res.MPI = lib.MPI
	}
	if err := writeHeaders(filepath.Join(abs, "include")); err != nil {
		return nil, err
	}
	bin := opts.Popmon
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the popmon binary: %w", err)
		}
	}
	if err := copyFile(bin, filepath.Join(abs, "libexec", "popmon"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(abs, "bin", "dlb"), []byte(dlbScript()), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(abs, "bin", "dlb_taskset"), []byte(tasksetScript()), 0o755); err != nil {
		return nil, err
	}
	if res.Python, err = writePython(ctx, abs); err != nil {
		return nil, err
	}
	marker := fmt.Sprintf("popmon %s dlb-home: DLB 3.7 interface\n", popmon.Version)
	if err := os.WriteFile(filepath.Join(abs, Marker), []byte(marker), 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// checkTarget refuses a folder that holds something else than a prefix of
// popmon's, and anything that is not a folder.
func checkTarget(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: %s exists and is not a folder", ErrTarget, dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, Marker)); err == nil {
		return nil
	}
	return fmt.Errorf("%w: %s is not empty and not a prefix popmon dlb-home laid out (no %s): give an empty or new folder", ErrTarget, dir, Marker)
}

// writeHeaders writes DLB's headers (files/include) into dir.
func writeHeaders(dir string) error {
	ents, err := fs.ReadDir(files, "files/include")
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := files.ReadFile("files/include/" + e.Name())
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writePython installs DLB's Python module (popmon's dlb and dlb_mpi) where
// DLB installs it, lib/pythonX.Y/site-packages of the python3 on PATH; ""
// without python3.
func writePython(ctx context.Context, prefix string) (string, error) {
	out, err := subprocess.Command(ctx, "python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		return "", nil
	}
	ver := strings.TrimSpace(string(out))
	dir := filepath.Join(prefix, "lib", "python"+ver, "site-packages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	mods := popmon.PythonModules()
	for _, name := range []string{"dlb.py", "dlb_mpi.py"} {
		b, err := fs.ReadFile(mods, name)
		if err != nil {
			return "", fmt.Errorf("the embedded Python module %s: %w", name, err)
		}
		if err := writeFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// dlbScript is bin/dlb: DLB's utility command. Its option table and values
// come from the library itself (shim/base/dlbargs.c), the one parser of
// DLB_ARGS, through a probe of libdlb.so.
func dlbScript() string {
	return `#!/bin/sh
# dlb: DLB's utility command in a prefix laid out by popmon dlb-home
# (popmon ` + popmon.Version + `, DLB 3.7 interface): docs/coming-from-dlb.md.
prefix=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
probe() { env "$1=$2" LD_PRELOAD="$prefix/lib/libdlb.so" /bin/true; }
usage() {
	cat <<EOF
DLB - Dynamic Load Balancing, version 3.7.0 (popmon ` + popmon.Version + `).
usage:
	dlb --affinity
	dlb --help
	dlb --version

Options:
  -a, -l, --affinity       print process affinity
  -i, --test-init          test DLB initialization
  -h, --help               print DLB variables and current value
                           (twice -hh for extended)
  -v, --version            print version info
EOF
}
help=0
[ $# -eq 0 ] && { usage; exit 0; }
for a in "$@"; do
	case "$a" in
	-v|--version) echo "DLB 3.7.0 (popmon ` + popmon.Version + `)"; echo "Configured with: popmon dlb-home"; exit 0 ;;
	-hh) help=2 ;;
	-h|--help) help=$((help + 1)) ;;
	-x|--help-extra) help=2 ;;
	-a|-l|--affinity) probe POPMON_DLB_AFFINITY 1; exit $? ;;
	-i|--test-init) echo "DLB initialization test: popmon's TALP is always available"; exit 0 ;;
	*) echo "dlb: unknown option $a" >&2; usage >&2; exit 1 ;;
	esac
done
[ $help -gt 2 ] && help=2
probe POPMON_DLB_HELP $help
`
}

// tasksetScript is bin/dlb_taskset: DLB's DROM command, popmon taskset
// (the same options) through the prefix's popmon.
func tasksetScript() string {
	return `#!/bin/sh
# dlb_taskset: DLB's DROM command in a prefix laid out by popmon dlb-home
# (popmon ` + popmon.Version + `): popmon taskset, docs/drom.md.
prefix=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
exec "$prefix/libexec/popmon" taskset "$@"
`
}

// copyFile copies src to dst (replaced atomically) with mode perm.
func copyFile(src, dst string, perm fs.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFile(dst, b, perm)
}

// writeFile writes b to path through a temporary file renamed into place, so
// that a running program that has the old file mapped keeps it.
func writeFile(path string, b []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), perm)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}
