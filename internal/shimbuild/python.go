package shimbuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	popmon "github.com/popmon/popmon"
)

// pythonPrefix starts the name of the cache folder that holds the Python
// modules; the rest is a hash of their contents.
const pythonPrefix = "python-"

// pythonModules returns the embedded Python modules by slash-separated
// path (dlb.py, popmon/__init__.py, ...) and a short hash of them all.
func pythonModules() (map[string][]byte, string, error) {
	out, err := readTree(popmon.PythonModules())
	if err != nil {
		return nil, "", fmt.Errorf("reading the embedded Python modules: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "popmon-python v1\n")
	hashSources(h, out)
	return out, hex.EncodeToString(h.Sum(nil))[:20], nil
}

// PythonDir returns the folder of the library cache loc that holds
// popmon's Python modules (the `popmon` package, `dlb`, `dlb_mpi`:
// docs/python.md), for the measured job's PYTHONPATH. The folder is named
// by a hash of the modules and written at the first call (a temporary
// folder renamed into place, so that the ranks of `mpirun popmon exec` may
// race); afterwards it is checked like the library: private to the user,
// every module byte for byte what this popmon carries, rewritten when it is
// not. Files Python adds there (__pycache__) are left alone.
func PythonDir(loc CacheLocation) (string, error) {
	files, sum, err := pythonModules()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(loc.Dir, pythonPrefix+sum)
	damage, err := checkPython(dir, files)
	if err != nil {
		return "", err
	}
	if damage == "" {
		return dir, nil
	}
	unlock, err := lockFile(filepath.Join(loc.Dir, ".python.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if damage, err = checkPython(dir, files); err != nil || damage == "" {
		return dir, err
	}
	if damage != "missing" {
		// Changed since it was written: set aside, then removed.
		old, err := os.MkdirTemp(loc.Dir, ".python-old-")
		if err != nil {
			return "", fmt.Errorf("cannot replace the Python modules in %s: %w", dir, err)
		}
		if err := os.Rename(dir, filepath.Join(old, "x")); err != nil {
			os.RemoveAll(old)
			return "", fmt.Errorf("cannot replace the Python modules in %s (%s): %w", dir, damage, err)
		}
		defer os.RemoveAll(old)
	}
	tmp, err := os.MkdirTemp(loc.Dir, ".python-")
	if err != nil {
		return "", fmt.Errorf("cannot write the Python modules into %s: %w (set POPMON_CACHE_DIR to a writable folder)", loc.Dir, err)
	}
	if err := writePython(tmp, files); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("cannot install the Python modules into %s: %w", dir, err)
	}
	return dir, nil
}

// writePython writes files into folder dir (folders 0700, files 0644).
func writePython(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("cannot write the Python modules: %w", err)
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return fmt.Errorf("cannot write the Python modules: %w", err)
		}
		// WriteFile's mode is subject to the umask; never writable by others.
		if err := os.Chmod(p, 0o644); err != nil {
			return fmt.Errorf("cannot write the Python modules: %w", err)
		}
	}
	return nil
}

// checkPython checks the modules folder dir against files: damage is
// "missing" when there is no folder, "" when every module is there as
// carried, else what is wrong (the folder is then rewritten). A folder or
// module others could have written is an *UnsafeCacheError.
func checkPython(dir string, files map[string][]byte) (damage string, err error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing", nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot check the Python modules folder %s: %w (set POPMON_CACHE_DIR to a private folder)", dir, err)
	}
	if err := checkPrivate(dir, fi, true); err != nil {
		return "", err
	}
	checked := map[string]bool{dir: true}
	for n, want := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		// Every folder on the way is private too.
		for d := filepath.Dir(p); !checked[d] && strings.HasPrefix(d, dir); d = filepath.Dir(d) {
			fi, err := os.Lstat(d)
			if errors.Is(err, fs.ErrNotExist) {
				return "lacks " + n, nil
			}
			if err != nil {
				return "", fmt.Errorf("cannot check %s: %w", d, err)
			}
			if err := checkPrivate(d, fi, true); err != nil {
				return "", err
			}
			checked[d] = true
		}
		got, found, err := readPrivateFile(p, len(want))
		switch {
		case err != nil:
			return "", err
		case !found:
			return "lacks " + n, nil
		case !bytes.Equal(got, want):
			return n + " differs from the module this popmon carries", nil
		}
	}
	return "", nil
}

// PythonPath returns the PYTHONPATH of a measured job: the modules folder
// dir first, then the entries of the current value cur (without dir, which
// an enclosing popmon run may have put there already).
func PythonPath(dir, cur string) string {
	out := []string{dir}
	if cur != "" {
		for _, e := range strings.Split(cur, string(os.PathListSeparator)) {
			if e != dir {
				out = append(out, e)
			}
		}
	}
	return strings.Join(out, string(os.PathListSeparator))
}
