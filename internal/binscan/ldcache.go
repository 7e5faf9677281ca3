package binscan

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Limits on the ld.so configuration binscan reads.
const (
	maxCacheSize    = 64 << 20 // bytes of /etc/ld.so.cache
	maxCacheEntries = 1 << 20  // entries of /etc/ld.so.cache
	maxConfFiles    = 256      // files included from /etc/ld.so.conf
	maxConfDirs     = 1024     // directories listed by them
	maxConfSize     = 1 << 20  // bytes read from one configuration file
)

// ldCache is the contents of /etc/ld.so.cache: for each library name, the
// paths the cache lists for it, in the cache's order.
type ldCache map[string][]string

const (
	cacheMagicNew = "glibc-ld.so.cache1.1"
	cacheMagicOld = "ld.so-1.7.0"
)

// readLDCache reads and parses the ld.so cache at path.
func readLDCache(path string) (ldCache, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCacheSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxCacheSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxCacheSize)
	}
	c, err := parseLDCache(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// parseLDCache parses the new-format ld.so cache ("glibc-ld.so.cache1.1"),
// alone or after an old-format ("ld.so-1.7.0") table, as glibc writes it.
// Every offset is checked against the data; nothing is allocated from a
// header field before it is.
func parseLDCache(data []byte) (ldCache, error) {
	start := 0
	if bytes.HasPrefix(data, []byte(cacheMagicOld)) {
		// struct cache_file { char magic[11]; uint32 nlibs; struct
		// file_entry { int32 flags; uint32 key, value; } libs[]; }, then the
		// new table aligned to 8 bytes.
		if len(data) < 16 {
			return nil, errors.New("truncated old-format header")
		}
		n := uint64(binary.LittleEndian.Uint32(data[12:]))
		end := 16 + n*12
		if end > uint64(len(data)) {
			return nil, errors.New("old-format table runs past the end of the file")
		}
		start = int((end + 7) &^ 7)
	}
	d := data[start:]
	if !bytes.HasPrefix(d, []byte(cacheMagicNew)) {
		return nil, errors.New("not a glibc-ld.so.cache1.1 file")
	}
	const header, entry = 48, 24
	if len(d) < header {
		return nil, errors.New("truncated header")
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch d[28] & 3 {
	case 1:
		return nil, errors.New("invalid byte order flag")
	case 3:
		order = binary.BigEndian
	}
	nlibs := uint64(order.Uint32(d[20:]))
	if nlibs > maxCacheEntries || header+nlibs*entry > uint64(len(d)) {
		return nil, fmt.Errorf("header declares %d entries, more than the file holds", nlibs)
	}
	str := func(off uint32) (string, bool) {
		if uint64(off) >= uint64(len(d)) {
			return "", false
		}
		s := cstring(d[off:])
		if len(s) == len(d)-int(off) || len(s) == 0 || len(s) > maxDynString {
			return "", false // unterminated, empty or absurd
		}
		return string(s), true
	}
	c := ldCache{}
	for i := uint64(0); i < nlibs; i++ {
		e := d[header+i*entry:]
		key, ok1 := str(order.Uint32(e[4:]))
		value, ok2 := str(order.Uint32(e[8:]))
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("entry %d points outside the string table", i)
		}
		c[key] = append(c[key], value)
	}
	return c, nil
}

// readLDConf returns the directories listed by the ld.so configuration file
// at path and the files it includes, in order.
func readLDConf(path string) []string {
	var dirs []string
	files := 0
	seen := map[string]bool{}
	var read func(string, int)
	read = func(p string, depth int) {
		if depth > 8 || files >= maxConfFiles || seen[p] {
			return
		}
		seen[p] = true
		files++
		f, err := openRegular(p)
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(io.LimitReader(f, maxConfSize))
		for sc.Scan() {
			line := sc.Text()
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			if fields[0] == "include" {
				for _, pat := range fields[1:] {
					if !filepath.IsAbs(pat) {
						pat = filepath.Join(filepath.Dir(p), pat)
					}
					matches, _ := filepath.Glob(pat)
					for _, m := range matches {
						read(m, depth+1)
					}
				}
				continue
			}
			if fields[0] == "hwcap" {
				continue
			}
			for _, d := range strings.FieldsFunc(line, func(r rune) bool { return r == ':' || r == ',' || r == ' ' || r == '\t' }) {
				if strings.HasPrefix(d, "/") && len(dirs) < maxConfDirs {
					dirs = append(dirs, filepath.Clean(d))
				}
			}
		}
	}
	read(path, 0)
	return dirs
}

// systemDirs are ld.so's built-in directories for an object of the given
// class and multiarch triplet ("" when unknown), Debian's first.
func systemDirs(is64 bool, triplet string) []string {
	var out []string
	if triplet != "" {
		out = append(out, "/lib/"+triplet, "/usr/lib/"+triplet)
	}
	if is64 {
		out = append(out, "/lib64", "/usr/lib64")
	}
	return append(out, "/lib", "/usr/lib")
}
