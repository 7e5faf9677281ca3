package pages

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// atRemoveDir is AT_REMOVEDIR of unlinkat(2) (the same on every Linux
// architecture; the syscall package does not export it).
const atRemoveDir = 0x200

// tempSeq numbers the temporary files of this process.
var tempSeq atomic.Uint64

// siteDir writes, reads and removes files below one folder without ever
// following a symbolic link below it: every folder on the way is opened
// relative to its parent with O_NOFOLLOW (openat(2)), files are created
// with O_CREAT|O_EXCL|O_NOFOLLOW under a temporary name and renamed
// (renameat(2), which replaces a link itself, never its target), and
// removals use unlinkat(2) (which never follows the last component). A
// link planted while popmon runs therefore cannot redirect a write or a
// removal out of the folder.
type siteDir struct {
	dir string
	fd  int
}

// openSiteDir opens dir (which may itself be a link to a folder: the user
// named it).
func openSiteDir(dir string) (*siteDir, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("output: %w", &os.PathError{Op: "open", Path: dir, Err: err})
	}
	return &siteDir{dir: dir, fd: fd}, nil
}

// Close closes the folder.
func (s *siteDir) Close() error {
	return syscall.Close(s.fd)
}

// path returns the path of the site path name, for messages.
func (s *siteDir) path(name string) string {
	return filepath.Join(s.dir, filepath.FromSlash(name))
}

// fail turns the error of an operation on the site path name into a
// message: a LinkError when the entry is a link, else the path and err.
func (s *siteDir) fail(op, name string, err error) error {
	p := s.path(name)
	if st, lerr := os.Lstat(p); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
		return linkError(p)
	}
	return fmt.Errorf("output: %w", &os.PathError{Op: op, Path: p, Err: err})
}

// parent opens the folder that holds the site path name, one folder at a
// time without following links, creating missing folders when create is
// set. It returns the folder's descriptor (to be closed with
// s.release) and name's last element.
func (s *siteDir) parent(name string, create bool) (int, string, error) {
	parts := strings.Split(name, "/")
	fd := s.fd
	for i, part := range parts[:len(parts)-1] {
		sub := strings.Join(parts[:i+1], "/")
		nfd, err := syscall.Openat(fd, part, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.ENOENT) && create {
			if err = syscall.Mkdirat(fd, part, 0o755); err == nil || errors.Is(err, syscall.EEXIST) {
				nfd, err = syscall.Openat(fd, part, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
			}
		}
		s.release(fd)
		if err != nil {
			return -1, "", s.fail("open", sub, err)
		}
		fd = nfd
	}
	return fd, parts[len(parts)-1], nil
}

// release closes fd unless it is the site folder's own.
func (s *siteDir) release(fd int) {
	if fd != s.fd && fd >= 0 {
		syscall.Close(fd)
	}
}

// writeFile writes data to the site path name: to a new temporary file
// in name's folder, then renamed over name.
func (s *siteDir) writeFile(name string, data []byte) error {
	dfd, base, err := s.parent(name, true)
	if err != nil {
		return err
	}
	defer s.release(dfd)
	var tmp string
	var fd int
	for {
		tmp = tempPrefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tempSeq.Add(1), 10)
		fd, err = syscall.Openat(dfd, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
		if !errors.Is(err, syscall.EEXIST) {
			break
		}
	}
	if err != nil {
		return s.fail("create", name, err)
	}
	f := os.NewFile(uintptr(fd), s.path(tmp))
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		if err := syscall.Renameat(dfd, tmp, dfd, base); err != nil {
			werr = s.fail("rename", name, err)
		}
	} else {
		werr = fmt.Errorf("output: %w", werr)
	}
	if werr != nil {
		_ = syscall.Unlinkat(dfd, tmp)
	}
	return werr
}

// readFile reads the site path name, at most limit bytes; it fails for a
// link and for anything but a regular file (a pipe does not block it).
func (s *siteDir) readFile(name string, limit int64) ([]byte, error) {
	dfd, base, err := s.parent(name, false)
	if err != nil {
		return nil, err
	}
	defer s.release(dfd)
	fd, err := syscall.Openat(dfd, base, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, s.fail("open", name, err)
	}
	f := os.NewFile(uintptr(fd), s.path(name))
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", s.path(name))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d MB", s.path(name), limit>>20)
	}
	return data, nil
}

// removeFile removes the site path name (unlinkat: a link would be
// removed itself, never its target); a missing file is no error.
func (s *siteDir) removeFile(name string) error {
	dfd, base, err := s.parent(name, false)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil
		}
		return err
	}
	defer s.release(dfd)
	if err := syscall.Unlinkat(dfd, base); err != nil && !errors.Is(err, syscall.ENOENT) {
		return s.fail("remove", name, err)
	}
	return nil
}

// removeDir removes the site folder name if it is empty (it fails
// otherwise, and for a link).
func (s *siteDir) removeDir(name string) error {
	dfd, base, err := s.parent(name, false)
	if err != nil {
		return err
	}
	defer s.release(dfd)
	p, err := syscall.BytePtrFromString(base)
	if err != nil {
		return err
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(dfd), uintptr(unsafe.Pointer(p)), atRemoveDir); errno != 0 {
		return s.fail("remove", name, errno)
	}
	return nil
}
