package pages

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/popmon/popmon/internal/safetext"
)

// MarkerName is the file that marks a folder as written by popmon pages;
// it lists the files written, so that a later run replaces exactly those.
const MarkerName = ".popmon-pages"

// markerHeader is the marker's first line.
const markerHeader = "# written by popmon pages; files of this site (a new run replaces them):"

// maxMarkerSize is the largest marker popmon reads: a site of 100,000
// experiments lists a few MB.
const maxMarkerSize = 16 << 20

// tempPrefix starts the names of the temporary files a site is written
// through (a file is written under a new name, then renamed over its
// final name).
const tempPrefix = ".popmon-pages-tmp-"

// Kinds of entries of the output folder.
type entryKind int

const (
	entryNone  entryKind = iota // nothing there
	entryFile                   // a regular file
	entryDir                    // a folder
	entryOther                  // a device, a socket, a pipe
)

// LinkError says that a path popmon pages would read, write, remove or go
// through inside its output folder is a symbolic link: popmon refuses the
// folder rather than follow the link out of it.
type LinkError struct {
	// Path is the link, Target what it points to ("" when unreadable).
	Path, Target string
}

// Error names the link and the fix (names escaped with safetext.Text:
// the link's target is anyone's text).
func (e *LinkError) Error() string {
	target := ""
	if e.Target != "" {
		target = fmt.Sprintf(" (to %s)", safetext.Text(e.Target))
	}
	p := safetext.Text(e.Path)
	return fmt.Sprintf("output: %s is a symbolic link%s; popmon pages never reads, writes or removes through a link in its output folder: remove the link (rm %s) or choose another output folder",
		p, target, p)
}

// linkError returns the LinkError of the link at p.
func linkError(p string) error {
	target, _ := os.Readlink(p)
	return &LinkError{Path: p, Target: target}
}

// writeSite writes files (site-relative slash paths → contents) into dir.
// dir may be missing, empty, or a site popmon pages wrote before (it has
// the marker): then the files of the earlier site that the new one lacks
// are removed, and files someone else put there are kept. It refuses,
// before it changes anything, to write into a non-empty folder without
// the marker, to overwrite a file that the earlier site did not list, and
// any folder where a path of the old or new site (or the marker) is a
// symbolic link (LinkError). Files are written to a new temporary file
// and renamed over their name, and on Linux every folder below dir is
// opened without following links, so that a link planted while popmon
// runs cannot redirect a write either; only regular files listed by the
// marker and folders left empty are removed, never through a link.
func writeSite(dir string, files map[string][]byte) error {
	old, err := checkOutput(dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if !localPath(n) {
			return fmt.Errorf("output: site file %q is not a path inside the site", n) // a bug, not user input
		}
		names = append(names, n)
	}
	sort.Strings(names)
	// Check every path the run touches before it changes anything.
	for _, n := range names {
		k, err := entryAt(dir, n)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(n))
		switch {
		case k == entryNone:
		case k == entryFile && old[n]:
		case k == entryFile || k == entryOther:
			return fmt.Errorf("output %s: %s exists and was not written by popmon pages; not overwriting it", dir, p)
		default:
			return fmt.Errorf("output %s: %s is a folder where popmon pages writes a file; not overwriting it: remove it or choose another output folder", dir, p)
		}
	}
	var stale []string
	for n := range old {
		if _, keep := files[n]; keep {
			continue
		}
		k, err := entryAt(dir, n)
		if err != nil {
			return err
		}
		if k == entryFile { // anything else is not what popmon wrote: kept
			stale = append(stale, n)
		}
	}
	sort.Strings(stale)

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	root, err := openSiteDir(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	// The marker first lists old and new files, so an interrupted run
	// leaves a folder that the next run may still replace.
	union := map[string]bool{}
	for n := range old {
		union[n] = true
	}
	for _, n := range names {
		union[n] = true
	}
	if err := root.writeFile(MarkerName, markerData(union)); err != nil {
		return err
	}
	for _, n := range names {
		if err := root.writeFile(n, files[n]); err != nil {
			return err
		}
	}
	for _, n := range stale {
		if err := root.removeFile(n); err != nil {
			return fmt.Errorf("output: removing a file of the earlier site: %w", err)
		}
		// Remove folders left empty, up to dir.
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			if root.removeDir(d) != nil {
				break
			}
		}
	}
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return root.writeFile(MarkerName, markerData(set))
}

// checkOutput returns the files listed by dir's marker; an empty set for
// a missing or empty folder; an error for a file, a folder with other
// content, or a marker that is a link or not a regular file. dir itself
// may be a link to a folder (the user named it); nothing below it may.
func checkOutput(dir string) (map[string]bool, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("output %s is a file, not a folder", dir)
	}
	marker := filepath.Join(dir, MarkerName)
	k, err := entryAt(dir, MarkerName)
	if err != nil {
		return nil, err
	}
	switch k {
	case entryNone:
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		if len(ents) > 0 {
			return nil, fmt.Errorf("output %s is not empty and was not written by popmon pages (no %s file): choose a new or empty folder; popmon never overwrites what it did not write", dir, MarkerName)
		}
		return map[string]bool{}, nil
	case entryFile:
	default:
		return nil, fmt.Errorf("output %s: %s is not a popmon pages marker (not a regular file); not overwriting the folder", dir, marker)
	}
	root, err := openSiteDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := root.readFile(MarkerName, maxMarkerSize)
	if err != nil {
		return nil, fmt.Errorf("output: reading %s: %w", marker, err)
	}
	old := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxMarkerSize)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if line != markerHeader {
				return nil, fmt.Errorf("output %s: %s is not a popmon pages marker; not overwriting the folder", dir, marker)
			}
			continue
		}
		if line == "" || !localPath(line) {
			continue
		}
		old[line] = true
	}
	if first {
		return nil, fmt.Errorf("output %s: %s is empty, not a popmon pages marker; not overwriting the folder", dir, marker)
	}
	return old, nil
}

// entryAt returns the kind of the entry at the site path name below dir,
// looking at every folder on the way without following links: a
// LinkError when one of them, or the entry itself, is a symbolic link;
// entryNone when a folder on the way is missing or not a folder.
func entryAt(dir, name string) (entryKind, error) {
	p := dir
	parts := strings.Split(name, "/")
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return entryNone, nil
		}
		if err != nil {
			return entryNone, fmt.Errorf("output: %w", err)
		}
		mode := st.Mode()
		if mode&fs.ModeSymlink != 0 {
			return entryNone, linkError(p)
		}
		if i < len(parts)-1 {
			if !mode.IsDir() {
				return entryNone, nil
			}
			continue
		}
		switch {
		case mode.IsRegular():
			return entryFile, nil
		case mode.IsDir():
			return entryDir, nil
		}
		return entryOther, nil
	}
	return entryNone, nil
}

// localPath reports whether a marker line is a relative path inside the
// site (a hand-edited marker must not make popmon remove other files).
func localPath(p string) bool {
	return fs.ValidPath(p) && p != "." && p != MarkerName && !strings.HasPrefix(path.Base(p), tempPrefix)
}

// markerData is the marker listing files.
func markerData(files map[string]bool) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return []byte(markerHeader + "\n" + strings.Join(names, "\n") + "\n")
}
