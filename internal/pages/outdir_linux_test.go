package pages

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// These tests call siteDir directly, as if a link had been planted after
// writeSite's checks (a race): the operations themselves must not follow
// it.

func openTestSiteDir(t *testing.T) (*siteDir, string, string) {
	t.Helper()
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "precious.txt"), []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := openSiteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir, outside
}

func TestSiteDirWriteThroughFolderLink(t *testing.T) {
	s, dir, outside := openTestSiteDir(t)
	if err := os.Symlink(outside, filepath.Join(dir, "exp")); err != nil {
		t.Fatal(err)
	}
	err := s.writeFile("exp/index.html", []byte("site"))
	var le *LinkError
	if !errors.As(err, &le) || le.Path != filepath.Join(dir, "exp") || le.Target != outside {
		t.Fatalf("err = %v, want a LinkError for exp", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "index.html")); err == nil {
		t.Error("a file was written through the link")
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 1 {
		t.Errorf("outside folder holds %d entries, want 1", len(ents))
	}
}

func TestSiteDirWriteReplacesFileLink(t *testing.T) {
	s, dir, outside := openTestSiteDir(t)
	p := filepath.Join(dir, "index.html")
	if err := os.Symlink(filepath.Join(outside, "precious.txt"), p); err != nil {
		t.Fatal(err)
	}
	if err := s.writeFile("index.html", []byte("site")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("index.html is %v (%v), want a regular file", st.Mode(), err)
	}
	if got := readFile(t, p); got != "site" {
		t.Errorf("index.html = %q", got)
	}
	if got := readFile(t, filepath.Join(outside, "precious.txt")); got != "precious" {
		t.Errorf("link target changed to %q", got)
	}
}

func TestSiteDirRemoveAndRmdirLinks(t *testing.T) {
	s, dir, outside := openTestSiteDir(t)
	// removeFile of a link removes the link, never its target.
	p := filepath.Join(dir, "old.html")
	if err := os.Symlink(filepath.Join(outside, "precious.txt"), p); err != nil {
		t.Fatal(err)
	}
	if err := s.removeFile("old.html"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); err == nil {
		t.Error("link kept")
	}
	// removeFile through a linked folder fails.
	if err := os.Symlink(outside, filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	var le *LinkError
	if err := s.removeFile("b/precious.txt"); !errors.As(err, &le) {
		t.Errorf("removeFile through a link: err = %v", err)
	}
	// removeDir of a link to an empty folder fails.
	empty := filepath.Join(outside, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(empty, filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if err := s.removeDir("c"); err == nil {
		t.Error("removeDir removed a link")
	}
	if _, err := os.Stat(empty); err != nil {
		t.Errorf("empty folder outside removed: %v", err)
	}
	if got := readFile(t, filepath.Join(outside, "precious.txt")); got != "precious" {
		t.Errorf("precious.txt = %q", got)
	}
	// removeDir removes an empty folder of the site, not a full one.
	if err := os.MkdirAll(filepath.Join(dir, "d", "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.removeDir("d"); err == nil {
		t.Error("removeDir removed a folder that is not empty")
	}
	if err := s.removeDir("d/e"); err != nil {
		t.Errorf("removeDir of an empty folder: %v", err)
	}
}

func TestSiteDirReadFileRefusesPipeAndLink(t *testing.T) {
	s, dir, outside := openTestSiteDir(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.readFile("fifo", 100); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("pipe: err = %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "precious.txt"), filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	var le *LinkError
	if _, err := s.readFile("l", 100); !errors.As(err, &le) {
		t.Errorf("link: err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, 101), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.readFile("big", 100); err == nil {
		t.Error("a file over the limit was read")
	}
}

func TestPagesMarkerPipe(t *testing.T) {
	// A pipe planted as the marker is refused at once (no read that
	// waits for a writer).
	in, out, _ := plantedSite(t)
	marker := filepath.Join(out, MarkerName)
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(marker, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Input: in, Output: out}); err == nil || !strings.Contains(err.Error(), "not a popmon pages marker") {
		t.Errorf("pipe as marker: err = %v", err)
	}
}
