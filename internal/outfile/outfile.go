// Package outfile writes popmon's output files: never over an existing
// file silently (-o FILE fails before any work when FILE exists, unless
// --force, which replaces it atomically), names popmon picks itself
// numbered (PublishNumbered), a finished file moved over another
// (Replace), the default name of a measurement (DefaultName), a
// measurement or a small file replaced atomically (WriteMeasurement,
// WriteAtomic), and what went wrong in a write without its path (ErrText).
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/measure"
)

// Output files. popmon never overwrites a file silently: -o FILE fails
// before any work when FILE exists ("FILE exists: choose another name or
// pass --force"); with --force the new content replaces it atomically
// (written to a temporary file next to it, then renamed). Names popmon
// picks itself are numbered: the Nth repeated output of base "two" is
// two.N.json (PublishNumbered).

// File is an output being written: a temporary file next to target
// that commit publishes.
type File struct {
	*os.File
	target string
	force  bool
	done   bool
}

// Create checks target before the work that produces it, and
// returns a temporary file next to it to write into. It fails (a usage error)
// when target exists and force is not set, when target is a directory,
// and when its folder does not exist.
func Create(target string, force bool) (*File, error) {
	if err := CheckTarget(target, force); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".popmon-"+filepath.Base(target)+".*.tmp")
	if err != nil {
		return nil, fault.Usagef("cannot write %s: %v", target, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fault.Failf("cannot write %s: %v", target, err)
	}
	return &File{File: tmp, target: target, force: force}, nil
}

// CheckTarget fails (a usage error) when target exists and force is not
// set, when target is a directory, and when its folder does not exist
// (a usage error).
func CheckTarget(target string, force bool) error {
	dir := filepath.Dir(target)
	st, err := os.Stat(dir)
	if err != nil {
		return fault.Usagef("cannot write %s: folder %s does not exist", target, dir)
	}
	if !st.IsDir() {
		return fault.Usagef("cannot write %s: %s is not a folder", target, dir)
	}
	st, err = os.Lstat(target)
	if err != nil {
		return nil
	}
	if st.IsDir() {
		return fault.Usagef("%s is a directory: choose a file name", target)
	}
	if !force {
		return existsError(target)
	}
	return nil
}

func existsError(target string) error {
	return fault.Usagef("%s exists: choose another name or pass --force", target)
}

// Commit closes the temporary file and publishes it as target: with force
// by rename (atomic; an existing target is replaced, a symbolic link
// itself rather than what it points to), otherwise by a hard link that
// fails when target appeared meanwhile.
func (o *File) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	tmp := o.Name()
	defer os.Remove(tmp)
	if err := o.Close(); err != nil {
		return fault.Failf("writing %s: %v", o.target, err)
	}
	if o.force {
		if err := os.Rename(tmp, o.target); err != nil {
			return fault.Failf("cannot write %s: %v", o.target, err)
		}
		return nil
	}
	if err := linkExclusive(tmp, o.target); err != nil {
		if errors.Is(err, os.ErrExist) {
			return existsError(o.target)
		}
		return fault.Failf("cannot write %s: %v", o.target, err)
	}
	return nil
}

// Abort removes the temporary file (after Commit, it does nothing).
func (o *File) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.Close()
	os.Remove(o.Name())
}

// linkExclusive makes dst a copy of src without ever replacing dst: a
// hard link, or, where the file system has none, an exclusive create and
// a copy. It fails with an error matching os.ErrExist when dst exists.
func linkExclusive(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil || errors.Is(err, os.ErrExist) {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	defer in.Close()
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return err
	}
	return nil
}

// maxNumbered bounds the numbers PublishNumbered tries.
const maxNumbered = 100000

// PublishNumbered moves the finished file src to target without
// overwriting anything and returns the name used: target itself when
// neither it nor a numbered sibling exists, else STEM.N.EXT with N one
// more than the highest number in use (target "out/two.json" gives
// out/two.json, then out/two.1.json, out/two.2.json, …; never
// two.1.1.json). Callers that write several files from one base (the
// outputs of one job) pass the same target for each. src is removed once
// published; on error it is left in place.
func PublishNumbered(src, target string) (string, error) {
	dir, base := filepath.Split(target)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	n, family, err := highestNumber(dir, stem, ext)
	if err != nil {
		return "", err
	}
	for tries := 0; tries < 1000; tries++ {
		name := target
		if family {
			n++
			if n > maxNumbered {
				break
			}
			name = filepath.Join(dir, fmt.Sprintf("%s.%d%s", stem, n, ext))
		}
		err := linkExclusive(src, name)
		if err == nil {
			os.Remove(src)
			return name, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		family = true // target (or the number) was taken meanwhile
	}
	return "", fmt.Errorf("%s and its numbered variants up to %s.%d%s are taken: choose another name", target, stem, n, ext)
}

// highestNumber returns the highest N of the files STEM.N.EXT in dir (0
// when none) and whether any file of the family (STEM.EXT or STEM.N.EXT)
// exists.
func highestNumber(dir, stem, ext string) (int, bool, error) {
	d := dir
	if d == "" {
		d = "."
	}
	entries, err := os.ReadDir(d)
	if err != nil {
		return 0, false, err
	}
	high, family := 0, false
	for _, e := range entries {
		name := e.Name()
		if name == stem+ext {
			family = true
			continue
		}
		mid, ok := strings.CutPrefix(name, stem+".")
		if !ok {
			continue
		}
		if mid, ok = strings.CutSuffix(mid, ext); !ok || mid == "" || mid[0] == '0' {
			continue
		}
		k, err := strconv.Atoi(mid)
		if err != nil || k < 1 || strconv.Itoa(k) != mid {
			continue
		}
		family = true
		high = max(high, k)
	}
	return high, family, nil
}

func DefaultName(command []string) string {
	app := "app"
	if len(command) > 0 {
		app = filepath.Base(command[0])
	}
	app = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r < 32 || r == 0x7f {
			return '_'
		}
		return r
	}, app)
	return fmt.Sprintf("popmon-%s-%s.json", app, time.Now().Format("20060102-150405"))
}

// Replace moves src over target (popmon run -o FILE --force): a
// rename, atomic; a symbolic link at target is replaced, not followed. A
// src on another file system (a measurement kept elsewhere, internal/cli/kept.go) is
// copied next to target first.
func Replace(src, target string) (string, error) {
	err := os.Rename(src, target)
	if errors.Is(err, syscall.EXDEV) {
		var tmp *os.File
		if tmp, err = os.CreateTemp(filepath.Dir(target), ".popmon-"+filepath.Base(target)+".*.tmp"); err != nil {
			return "", err
		}
		defer os.Remove(tmp.Name())
		err = copyInto(tmp, src)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), target)
		}
		if err == nil {
			os.Remove(src)
		}
	}
	if err != nil {
		return "", err
	}
	return target, nil
}

func copyInto(dst *os.File, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := dst.Chmod(0o644); err != nil {
		return err
	}
	_, err = io.Copy(dst, in)
	return err
}

// WriteNumbered writes m to a temporary file next to target (of mode
// mode, its name of pattern), then publishes it under target or its next
// numbered name (PublishNumbered).
func WriteNumbered(m *measure.Measurement, target string, mode os.FileMode, pattern string) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(target), pattern)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return "", err
	}
	if err := measure.Write(tmp, m); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return PublishNumbered(tmp.Name(), target)
}

// WriteMeasurement writes m as path, replacing it atomically (a file of
// popmon's own session folder).
func WriteMeasurement(path string, m *measure.Measurement) error {
	out, err := Create(path, true)
	if err != nil {
		return err
	}
	defer out.Abort()
	if err := measure.Write(out, m); err != nil {
		return err
	}
	return out.Commit()
}

// WriteAtomic writes b as path through a temporary file and a rename,
// so a reader never sees it half written.
func WriteAtomic(path string, b []byte) error {
	return WriteAtomicVia(path+".tmp", path, b)
}

// WriteAtomicVia is WriteAtomic through the temporary file tmp (in path's
// folder), for a folder whose reader must not take it for one of its files
// (node_exporter's textfile folder reads every *.prom).
func WriteAtomicVia(tmp, path string, b []byte) error {
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ErrText is what went wrong, without the path the message names anyway:
// "no space left on device".
func ErrText(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	}
	return err.Error()
}
