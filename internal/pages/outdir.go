package pages

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MarkerName is the file that marks a folder as written by popmon pages;
// it lists the files written, so that a later run replaces exactly those.
const MarkerName = ".popmon-pages"

// markerHeader is the marker's first line.
const markerHeader = "# written by popmon pages; files of this site (a new run replaces them):"

// writeSite writes files (site-relative slash paths → contents) into dir.
// dir may be missing, empty, or a site popmon pages wrote before (it has
// the marker): then the files of the earlier site that the new one lacks
// are removed, and files someone else put there are kept. It refuses to
// write into a non-empty folder without the marker, and to overwrite a
// file that the earlier site did not list.
func writeSite(dir string, files map[string][]byte) error {
	old, err := checkOutput(dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if _, err := os.Lstat(p); err == nil && !old[n] {
			return fmt.Errorf("output %s: %s exists and was not written by popmon pages; not overwriting it", dir, p)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	// The marker first lists old and new files, so an interrupted run
	// leaves a folder that the next run may still replace.
	union := map[string]bool{}
	for n := range old {
		union[n] = true
	}
	for _, n := range names {
		union[n] = true
	}
	if err := writeMarker(dir, union); err != nil {
		return err
	}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("output: %w", err)
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return fmt.Errorf("output: %w", err)
		}
	}
	for n := range old {
		if _, keep := files[n]; keep {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("output: removing a file of the earlier site: %w", err)
		}
		// Remove folders left empty, up to dir.
		for d := filepath.Dir(p); d != filepath.Clean(dir) && strings.HasPrefix(d, filepath.Clean(dir)); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break
			}
		}
	}
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return writeMarker(dir, set)
}

// checkOutput returns the files listed by dir's marker; an empty set for
// a missing or empty folder; an error for a file or a folder with other
// content.
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
	f, err := os.Open(marker)
	if errors.Is(err, fs.ErrNotExist) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		if len(ents) > 0 {
			return nil, fmt.Errorf("output %s is not empty and was not written by popmon pages (no %s file): choose a new or empty folder; popmon never overwrites what it did not write", dir, MarkerName)
		}
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	defer f.Close()
	old := map[string]bool{}
	sc := bufio.NewScanner(f)
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
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("output: reading %s: %w", marker, err)
	}
	return old, nil
}

// localPath reports whether a marker line is a relative path inside the
// site (a hand-edited marker must not make popmon remove other files).
func localPath(p string) bool {
	return fs.ValidPath(p) && p != "." && p != MarkerName
}

func writeMarker(dir string, files map[string]bool) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	data := markerHeader + "\n" + strings.Join(names, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, MarkerName), []byte(data), 0o644); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}
