//go:build !linux

package pages

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// siteDir writes, reads and removes files below one folder without
// following a symbolic link below it. Outside Linux it checks every
// folder on the way with Lstat just before it uses it, creates files with
// O_EXCL under a temporary name and renames them (rename replaces a link
// itself, never its target); a link swapped in between the check and the
// use is not detected (Linux's implementation has no such window).
type siteDir struct {
	dir string
}

// openSiteDir opens dir (which may itself be a link to a folder: the user
// named it).
func openSiteDir(dir string) (*siteDir, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("output %s is a file, not a folder", dir)
	}
	return &siteDir{dir: dir}, nil
}

// Close does nothing.
func (s *siteDir) Close() error { return nil }

// parent returns the path of the folder that holds the site path name,
// after checking that no folder on the way is a link (creating missing
// ones when create is set), and name's last element.
func (s *siteDir) parent(name string, create bool) (string, string, error) {
	parts := strings.Split(name, "/")
	p := s.dir
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = os.Mkdir(p, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				st, err = os.Lstat(p)
			}
		}
		if err != nil {
			return "", "", fmt.Errorf("output: %w", err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return "", "", linkError(p)
		}
		if !st.IsDir() {
			return "", "", fmt.Errorf("output: %s is not a folder", p)
		}
	}
	return p, parts[len(parts)-1], nil
}

// writeFile writes data to the site path name: to a new temporary file
// in name's folder, then renamed over name.
func (s *siteDir) writeFile(name string, data []byte) error {
	dir, base, err := s.parent(name, true)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644&^umask())
	}
	if werr == nil {
		werr = os.Rename(f.Name(), filepath.Join(dir, base))
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("output: %w", werr)
	}
	return nil
}

// umask returns the process's umask.
func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

// readFile reads the site path name, at most limit bytes; it fails for a
// link and for anything but a regular file (a pipe does not block it).
func (s *siteDir) readFile(name string, limit int64) ([]byte, error) {
	dir, base, err := s.parent(name, false)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, base)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if st, lerr := os.Lstat(p); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, linkError(p)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d MB", p, limit>>20)
	}
	return data, nil
}

// removeFile removes the site path name if it is a regular file; a
// missing file is no error.
func (s *siteDir) removeFile(name string) error {
	dir, base, err := s.parent(name, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	p := filepath.Join(dir, base)
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file; not removing it", p)
	}
	return os.Remove(p)
}

// removeDir removes the site folder name if it is empty (it fails
// otherwise, and for a link).
func (s *siteDir) removeDir(name string) error {
	dir, base, err := s.parent(name, false)
	if err != nil {
		return err
	}
	return syscall.Rmdir(filepath.Join(dir, base))
}
