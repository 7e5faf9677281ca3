package shimbuild

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestPythonDir: the modules are written once into the cache, byte for
// byte what the binary carries, reused afterwards (with what Python adds),
// rewritten when changed or incomplete, written once by racing callers,
// and refused when others could have written them.
func TestPythonDir(t *testing.T) {
	root := mkdir(t, filepath.Join(realTempDir(t), "cache"), 0o700)
	loc := CacheLocation{Dir: root}
	files, _, err := pythonModules()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"popmon/__init__.py", "dlb.py", "dlb_mpi.py"} {
		if len(files[want]) == 0 {
			t.Errorf("module %s not embedded (have %d files)", want, len(files))
		}
	}

	// Ranks of `mpirun popmon exec` start together.
	var wg sync.WaitGroup
	dirs := make([]string, 8)
	errs := make([]error, 8)
	for i := range dirs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			dirs[i], errs[i] = PythonDir(loc)
		}(i)
	}
	wg.Wait()
	dir := dirs[0]
	for i := range dirs {
		if errs[i] != nil || dirs[i] != dir {
			t.Fatalf("call %d: %q, %v; want %q", i, dirs[i], errs[i], dir)
		}
	}
	if filepath.Dir(dir) != root || !strings.HasPrefix(filepath.Base(dir), pythonPrefix) {
		t.Errorf("modules folder %s: want %s%s… in the cache", dir, root+"/", pythonPrefix)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 2 { // the folder and its lock
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("cache holds %v: want the modules folder and its lock, no leftovers", names)
	}
	for n, b := range files {
		got, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || string(got) != string(b) {
			t.Errorf("%s: not the embedded module (%v)", n, err)
		}
		fi, _ := os.Stat(filepath.Join(dir, n))
		if fi != nil && fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s: mode %v is writable by others", n, fi.Mode())
		}
	}

	// What Python writes there stays; the folder is reused.
	pyc := filepath.Join(dir, "popmon", "__pycache__", "__init__.cpython-311.pyc")
	if err := os.MkdirAll(filepath.Dir(pyc), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pyc, []byte("bytecode"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := PythonDir(loc); err != nil || d != dir {
		t.Fatalf("second call: %q, %v", d, err)
	}
	if _, err := os.Stat(pyc); err != nil {
		t.Errorf("Python's bytecode cache was removed: %v", err)
	}

	// A changed module and a missing one are rewritten.
	mod := filepath.Join(dir, "dlb.py")
	if err := os.WriteFile(mod, []byte("raise SystemExit('planted')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "popmon", "__init__.py")); err != nil {
		t.Fatal(err)
	}
	if d, err := PythonDir(loc); err != nil || d != dir {
		t.Fatalf("after a change: %q, %v", d, err)
	}
	for _, n := range []string{"dlb.py", "popmon/__init__.py"} {
		if got, _ := os.ReadFile(filepath.Join(dir, n)); string(got) != string(files[n]) {
			t.Errorf("%s was not rewritten", n)
		}
	}

	// Others could write it: refused, left alone.
	if err := os.Chmod(mod, 0o666); err != nil {
		t.Fatal(err)
	}
	_, err = PythonDir(loc)
	var unsafe *UnsafeCacheError
	if !errors.As(err, &unsafe) || unsafe.Path != mod {
		t.Errorf("a module writable by others: got %v, want an UnsafeCacheError naming %s", err, mod)
	}
	if err := os.Chmod(mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err = PythonDir(loc); !errors.As(err, &unsafe) || unsafe.Path != dir {
		t.Errorf("a folder writable by others: got %v, want an UnsafeCacheError naming %s", err, dir)
	}
	os.Chmod(dir, 0o700)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err = PythonDir(loc); !errors.As(err, &unsafe) {
		t.Errorf("a symbolic link for the folder: got %v, want an UnsafeCacheError", err)
	}
}

func TestPythonPath(t *testing.T) {
	for _, c := range []struct{ dir, cur, want string }{
		{"/c/python-1", "", "/c/python-1"},
		{"/c/python-1", "/mine:/other", "/c/python-1:/mine:/other"},
		{"/c/python-1", "/c/python-1:/mine", "/c/python-1:/mine"}, // popmon exec inside popmon run
		{"/c/python-1", "/mine::", "/c/python-1:/mine::"},         // empty entries (the current folder) kept
	} {
		if got := PythonPath(c.dir, c.cur); got != c.want {
			t.Errorf("PythonPath(%q, %q) = %q, want %q", c.dir, c.cur, got, c.want)
		}
	}
}
