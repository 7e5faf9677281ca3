// Package outfile writes popmon's output files: never over an existing
// file silently (-o FILE fails before any work when FILE exists, unless
// --force, which replaces it atomically), never anything but a regular
// file (a character device or a pipe is written through, a block device,
// a socket or a directory refused: Kind), names popmon picks itself
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

// What -o may name. Only a regular file is ever replaced (with --force),
// and atomically: a temporary file next to it renamed over it. A
// character device (/dev/null, a terminal) or a named pipe (FIFO) is
// written through, as the shell's > does: opened for writing, neither
// created nor truncated nor renamed over, and without --force, since
// nothing is destroyed; a pipe must have a reader. A block device, a
// socket, a directory (or a symbolic link to one of these) is refused in
// one line. A symbolic link to a regular file, or to nothing, is itself
// replaced with --force (the file it points to is left alone); a link to a
// device or a pipe is written through, like the shell's > (/dev/stdout).

// Kind is how an output path is written.
type Kind int

const (
	Absent  Kind = iota // nothing there: created
	Regular             // a regular file or a symbolic link to one (or to nothing): replaced with --force
	Through             // a character device or a named pipe: written through, never replaced
)

// TargetKind says how target would be written, or why it cannot be (a
// usage error naming target: a directory, a block device, a socket).
func TargetKind(target string) (Kind, error) {
	fi, err := os.Lstat(target)
	if err != nil {
		return Absent, nil // what is wrong shows at the creation
	}
	link := fi.Mode()&fs.ModeSymlink != 0
	if link {
		st, err := os.Stat(target)
		if err != nil {
			return Regular, nil // a link to nothing: the link is replaced
		}
		fi = st
	}
	m := fi.Mode()
	what := ""
	switch {
	case m.IsRegular():
		return Regular, nil
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		return Through, nil
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	default:
		what = "something other than a file, a device or a pipe"
	}
	if link {
		return Regular, fault.Usagef("%s is a symbolic link to %s: choose a file name", target, what)
	}
	return Regular, fault.Usagef("%s is %s: choose a file name", target, what)
}

// IsThrough says whether target is written through (a character device
// or a named pipe, or a link to one): what was written there cannot be
// read back.
func IsThrough(target string) bool {
	k, err := TargetKind(target)
	return err == nil && k == Through
}

// openThrough opens target (a character device or a named pipe) for
// writing without creating or truncating it; a pipe without a reader is
// an error rather than a wait.
func openThrough(target string) (*os.File, error) {
	fd, err := syscall.Open(target, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("no process reads the pipe %s", target)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: target, Err: err}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: target, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || (st.Mode&syscall.S_IFMT != syscall.S_IFCHR && st.Mode&syscall.S_IFMT != syscall.S_IFIFO) {
		// Swapped for something else since TargetKind looked.
		syscall.Close(fd)
		return nil, fmt.Errorf("%s is no longer a device or a pipe", target)
	}
	return os.NewFile(uintptr(fd), target), nil
}

// copyThrough writes the file src into target (a character device or a
// named pipe), then removes src.
func copyThrough(src, target string) (string, error) {
	out, err := openThrough(target)
	if err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		out.Close()
		return "", err
	}
	defer in.Close()
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	os.Remove(src)
	return target, nil
}

// File is an output being written: a temporary file next to target
// that commit publishes, or target itself when it is written through.
type File struct {
	*os.File
	target  string
	force   bool
	through bool
	done    bool
}

// Create checks target before the work that produces it, and
// returns a temporary file next to it to write into (or target itself,
// opened, when it is a character device or a pipe). It fails (a usage
// error) when target exists and force is not set, when target is a
// directory (or a block device, a socket), and when its folder does not
// exist.
func Create(target string, force bool) (*File, error) {
	if err := CheckTarget(target, force); err != nil {
		return nil, err
	}
	if k, _ := TargetKind(target); k == Through {
		f, err := openThrough(target)
		if err != nil {
			return nil, fault.Usagef("cannot write %s: %v", target, ErrText(err))
		}
		return &File{File: f, target: target, through: true}, nil
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
// set (a character device or a pipe, written through, needs no force),
// when target is a directory, a block device or a socket, and when its
// folder does not exist.
func CheckTarget(target string, force bool) error {
	dir := filepath.Dir(target)
	st, err := os.Stat(dir)
	if err != nil {
		return fault.Usagef("cannot write %s: folder %s does not exist", target, dir)
	}
	if !st.IsDir() {
		return fault.Usagef("cannot write %s: %s is not a folder", target, dir)
	}
	k, err := TargetKind(target)
	if err != nil {
		return err
	}
	if k == Regular && !force {
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
// fails when target appeared meanwhile. A target written through is
// closed.
func (o *File) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	if o.through {
		if err := o.Close(); err != nil {
			return fault.Failf("writing %s: %v", o.target, ErrText(err))
		}
		return nil
	}
	tmp := o.Name()
	defer os.Remove(tmp)
	if err := o.Close(); err != nil {
		return fault.Failf("writing %s: %v", o.target, err)
	}
	if o.force {
		// Looked at again: what appeared during the work is never
		// renamed over unless it is a regular file.
		if _, err := Replace(tmp, o.target); err != nil {
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
	if !o.through {
		os.Remove(o.Name())
	}
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
// overwriting anything and returns the name used: src written through
// into target when that is a character device or a pipe; target itself when
// neither it nor a numbered sibling exists, else STEM.N.EXT with N one
// more than the highest number in use (target "out/two.json" gives
// out/two.json, then out/two.1.json, out/two.2.json, …; never
// two.1.1.json). Callers that write several files from one base (the
// outputs of one job) pass the same target for each. src is removed once
// published; on error it is left in place.
func PublishNumbered(src, target string) (string, error) {
	if k, err := TargetKind(target); err != nil || k == Through {
		if err != nil {
			return "", err
		}
		return copyThrough(src, target)
	}
	return publishNumbered(src, target)
}

// publishNumbered is PublishNumbered for a target that popmon names
// itself (a kept file, an import's default name): whatever is there is
// never written into, the name is only numbered.
func publishNumbered(src, target string) (string, error) {
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
// copied next to target first. A character device or a pipe at target is
// written through, never renamed over; a directory, a block device or a
// socket is refused.
func Replace(src, target string) (string, error) {
	if k, err := TargetKind(target); err != nil || k == Through {
		if err != nil {
			return "", err
		}
		return copyThrough(src, target)
	}
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
	return publishNumbered(tmp.Name(), target)
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
// so a reader never sees it half written; a character device or a pipe
// at path is written through (TargetKind), never renamed over.
func WriteAtomic(path string, b []byte) error {
	return WriteAtomicVia(path+".tmp", path, b)
}

// WriteAtomicVia is WriteAtomic through the temporary file tmp (in path's
// folder), for a folder whose reader must not take it for one of its files
// (node_exporter's textfile folder reads every *.prom).
func WriteAtomicVia(tmp, path string, b []byte) error {
	k, err := TargetKind(path)
	if err != nil {
		return err
	}
	if k == Through {
		f, err := openThrough(path)
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	// A new file: a stale one (of a killed run) is removed first, and
	// whatever else has the name (a link) is never written through.
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
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
