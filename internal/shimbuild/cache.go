package shimbuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The library is preloaded into every process of the user's jobs, so the
// cache it lives in must be writable by nobody but the user (and root): a
// library another user can place or change there is code run as the user.
//
// The cache folder is chosen in this order:
//
//   - Options.CacheDir, then $POPMON_CACHE_DIR: the folder itself (created
//     0700 when missing);
//   - $XDG_CACHE_HOME/popmon/lib (an absolute $XDG_CACHE_HOME only, as the
//     XDG specification says);
//   - $HOME/.cache/popmon/lib (an absolute $HOME only);
//   - else a per-user folder in the temporary folder, popmon-<uid>/lib,
//     created 0700 by popmon and refused when it exists but is not the
//     user's, is a symbolic link or is writable by others. There is no
//     shared fallback such as /tmp/popmon/lib.
//
// The rules checked, every time the cache is used (building or reusing):
//
//   - every folder from / down to the base folder (the one named by the
//     variable, or the temporary folder) is not writable by group or others,
//     unless it is a sticky folder owned by root or the user (like /tmp);
//     symbolic links on that way are followed (a home reached through a
//     link is common) but must be owned by the user or root, and the folders
//     they lead to are checked the same way;
//   - the base folder itself is owned by the user or root;
//   - the folders popmon creates below it (popmon/, lib/, popmon-<uid>/, one
//     per build key) are created 0700 and must be real folders (no symbolic
//     link), owned by the user or root and not writable by group or others,
//     sticky or not;
//   - libpopmon.so and its manifest are regular files (no symbolic link)
//     owned by the user or root and not writable by group or others.
//
// A violation is an *UnsafeCacheError: the library is never preloaded from
// such a place, and nothing there is removed or rebuilt either.

// CacheLocation is the folder where built libraries are kept.
type CacheLocation struct {
	// Dir is the cache folder, symbolic links resolved; every build has a
	// folder of its own below it.
	Dir string
	// From says how Dir was chosen, for messages: "$POPMON_CACHE_DIR",
	// "$XDG_CACHE_HOME", "$HOME/.cache" or the per-user temporary folder.
	From string
}

// UnsafeCacheError reports a file or folder of the library cache that
// another user could write (or has written): popmon refuses to build into it
// or to preload a library from it.
type UnsafeCacheError struct {
	// Path is the offending file or folder.
	Path string
	// Problem says what is wrong with it ("writable by other users (mode 0777)").
	Problem string
	// Fix says what the user can do.
	Fix string
}

func (e *UnsafeCacheError) Error() string {
	return fmt.Sprintf("refusing %s: %s; %s", e.Path, e.Problem, e.Fix)
}

const (
	fixRemove  = "remove it or set POPMON_CACHE_DIR to a private folder"
	fixChmod   = "make it private (chmod go-w) or set POPMON_CACHE_DIR to a private folder"
	fixOutside = "set POPMON_CACHE_DIR to a private folder outside it"
)

// cacheSpec is the cache location before it is created and checked.
type cacheSpec struct {
	base       string   // the user's folder (or the temporary folder)
	createBase bool     // create base (0700) when it is missing
	parts      []string // popmon's own folders below base
	from       string
}

// chooseCache picks the cache location for opts from the environment.
func chooseCache(opts Options) (cacheSpec, error) {
	for _, c := range []struct{ dir, from string }{
		{opts.CacheDir, "the cache folder option"},
		{os.Getenv("POPMON_CACHE_DIR"), "$POPMON_CACHE_DIR"},
	} {
		if c.dir == "" {
			continue
		}
		abs, err := filepath.Abs(c.dir)
		if err != nil {
			return cacheSpec{}, fmt.Errorf("cannot use the library cache %s: %w (set POPMON_CACHE_DIR to an absolute path)", c.dir, err)
		}
		return cacheSpec{base: abs, createBase: true, from: c.from}, nil
	}
	if x := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return cacheSpec{base: filepath.Clean(x), createBase: true, parts: []string{"popmon", "lib"}, from: "$XDG_CACHE_HOME"}, nil
	}
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		return cacheSpec{base: filepath.Join(h, ".cache"), createBase: true, parts: []string{"popmon", "lib"}, from: "$HOME/.cache"}, nil
	}
	tmp, err := filepath.Abs(os.TempDir())
	if err != nil {
		return cacheSpec{}, fmt.Errorf("no folder for the library cache (HOME is not set and %v): set POPMON_CACHE_DIR to a private folder", err)
	}
	return cacheSpec{base: tmp, parts: []string{"popmon-" + strconv.Itoa(os.Geteuid()), "lib"},
		from: "the per-user folder in " + tmp + ", as neither XDG_CACHE_HOME nor HOME is set"}, nil
}

// LocateCache returns the library cache folder for opts after checking that
// only the user (or root) can write it and every folder above it, creating
// popmon's own folders (0700) when they are missing. It returns an
// *UnsafeCacheError when the location is not private.
func LocateCache(opts Options) (CacheLocation, error) {
	spec, err := chooseCache(opts)
	if err != nil {
		return CacheLocation{}, err
	}
	if spec.createBase {
		if err := os.MkdirAll(spec.base, 0o700); err != nil {
			return CacheLocation{}, fmt.Errorf("cannot create the library cache %s: %w (set POPMON_CACHE_DIR to a writable folder)", spec.base, err)
		}
	}
	if err := checkLiteralPath(spec.base); err != nil {
		return CacheLocation{}, err
	}
	real, err := filepath.EvalSymlinks(spec.base)
	if err != nil {
		return CacheLocation{}, fmt.Errorf("cannot use the library cache %s: %w (set POPMON_CACHE_DIR to a private folder)", spec.base, err)
	}
	if err := checkBase(real); err != nil {
		return CacheLocation{}, err
	}
	dir := real
	for _, p := range spec.parts {
		dir = filepath.Join(dir, p)
		if err := ensurePrivateDir(dir); err != nil {
			return CacheLocation{}, err
		}
	}
	return CacheLocation{Dir: dir, From: spec.from}, nil
}

// prefixes returns the absolute, clean path p and every folder above it,
// from / down to p.
func prefixes(p string) []string {
	p = filepath.Clean(p)
	var out []string
	for {
		out = append(out, p)
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// checkLiteralPath checks the path as written: every symbolic link on it is
// owned by the user or root, and every folder is not writable by others
// (sticky folders of root or the user excepted).
func checkLiteralPath(p string) error {
	for _, q := range prefixes(p) {
		fi, err := os.Lstat(q)
		if err != nil {
			return fmt.Errorf("cannot check the library cache path %s: %w (set POPMON_CACHE_DIR to a private folder)", q, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if uid := ownerOf(fi); !trustedOwner(uid) {
				return &UnsafeCacheError{Path: q, Problem: "a symbolic link " + ownedBy(uid), Fix: fixOutside}
			}
			continue
		}
		if err := checkNotShared(q, fi, q == filepath.Clean(p)); err != nil {
			return err
		}
	}
	return nil
}

// checkBase checks the resolved base folder and every folder above it.
func checkBase(real string) error {
	all := prefixes(real)
	for i, q := range all {
		fi, err := os.Lstat(q)
		if err != nil {
			return fmt.Errorf("cannot check the library cache path %s: %w (set POPMON_CACHE_DIR to a private folder)", q, err)
		}
		last := i == len(all)-1
		if !fi.IsDir() {
			return &UnsafeCacheError{Path: q, Problem: "not a folder", Fix: fixOutside}
		}
		if err := checkNotShared(q, fi, last); err != nil {
			return err
		}
		if last {
			if uid := ownerOf(fi); !trustedOwner(uid) {
				return &UnsafeCacheError{Path: q, Problem: ownedBy(uid), Fix: "set POPMON_CACHE_DIR to a folder of your own"}
			}
		}
	}
	return nil
}

// checkNotShared refuses a folder that others can write, unless it is
// sticky and owned by root or the user (then others cannot rename or remove
// what the user puts there).
func checkNotShared(p string, fi fs.FileInfo, isBase bool) error {
	if !writableByOthers(fi) {
		return nil
	}
	uid := ownerOf(fi)
	if fi.Mode()&fs.ModeSticky != 0 && trustedOwner(uid) {
		return nil
	}
	problem := writableProblem(fi)
	if fi.Mode()&fs.ModeSticky != 0 {
		problem = "writable by other users and sticky but " + ownedBy(uid)
	}
	fix := fixOutside
	if isBase {
		fix = fixChmod
	}
	return &UnsafeCacheError{Path: p, Problem: problem, Fix: fix}
}

// ensurePrivateDir creates folder p (0700) when it is missing and checks
// that it is a private folder of the user: no symbolic link, owned by the
// user or root, not writable by group or others.
func ensurePrivateDir(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create the library cache folder %s: %w (set POPMON_CACHE_DIR to a writable folder)", p, err)
		}
		fi, err = os.Lstat(p)
	}
	if err != nil {
		return fmt.Errorf("cannot check the library cache folder %s: %w (set POPMON_CACHE_DIR to a private folder)", p, err)
	}
	return checkPrivate(p, fi, true)
}

// checkPrivate checks a file or folder popmon made: the right type (no
// symbolic link), owned by the user or root, not writable by others.
func checkPrivate(p string, fi fs.FileInfo, wantDir bool) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &UnsafeCacheError{Path: p, Problem: "a symbolic link where popmon keeps a " + kindName(wantDir), Fix: fixRemove}
	case wantDir && !fi.IsDir():
		return &UnsafeCacheError{Path: p, Problem: "not a folder", Fix: fixRemove}
	case !wantDir && !fi.Mode().IsRegular():
		return &UnsafeCacheError{Path: p, Problem: "not a regular file", Fix: fixRemove}
	}
	if uid := ownerOf(fi); !trustedOwner(uid) {
		return &UnsafeCacheError{Path: p, Problem: ownedBy(uid), Fix: fixRemove}
	}
	if writableByOthers(fi) {
		return &UnsafeCacheError{Path: p, Problem: writableProblem(fi), Fix: fixRemove}
	}
	return nil
}

func kindName(dir bool) string {
	if dir {
		return "folder"
	}
	return "file"
}

// ownerOf returns the owner's uid, or -1 when the file system does not say.
func ownerOf(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

func trustedOwner(uid int) bool {
	return uid == 0 || uid == os.Geteuid()
}

func ownedBy(uid int) string {
	if uid < 0 {
		return "of unknown owner"
	}
	return fmt.Sprintf("owned by uid %d, neither you (uid %d) nor root", uid, os.Geteuid())
}

func modeString(fi fs.FileInfo) string {
	m := uint32(fi.Mode().Perm())
	if fi.Mode()&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return "mode " + strings.TrimPrefix(fmt.Sprintf("%#o", m), "0o")
}

// writableByOthers reports whether someone other than the owner may write
// fi: it is writable by all, or by a group other than the user's private
// group (the group of the same name that only the user belongs to, as with
// the umask 002 of Debian and Fedora).
func writableByOthers(fi fs.FileInfo) bool {
	perm := fi.Mode().Perm()
	if perm&0o002 != 0 {
		return true
	}
	if perm&0o020 == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || !isPrivateGroup(int(st.Gid))
}

func writableProblem(fi fs.FileInfo) string {
	if fi.Mode().Perm()&0o002 == 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return fmt.Sprintf("writable by other users of group %d (%s)", st.Gid, modeString(fi))
		}
	}
	return "writable by other users (" + modeString(fi) + ")"
}

// Account files read to recognise a user's private group; variables so that
// tests can use their own.
var (
	passwdFile = "/etc/passwd"
	groupFile  = "/etc/group"
)

// isPrivateGroup reports whether gid is the current user's private group:
// the user's primary group in /etc/passwd, the primary group of no other
// account, and listing no other member in /etc/group. Groups these files do
// not describe (LDAP, SSSD) are not private.
func isPrivateGroup(gid int) bool {
	uid := os.Geteuid()
	passwd, err := os.ReadFile(passwdFile)
	if err != nil {
		return false
	}
	me := ""
	for _, line := range strings.Split(string(passwd), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 {
			continue
		}
		u, err1 := strconv.Atoi(f[2])
		g, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			continue
		}
		switch {
		case u == uid && g == gid:
			me = f[0]
		case u == uid:
			return false // the user's primary group is another one
		case g == gid:
			return false // another account's primary group
		}
	}
	if me == "" {
		return false
	}
	group, err := os.ReadFile(groupFile)
	if err != nil {
		return false
	}
	found := false
	for _, line := range strings.Split(string(group), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err != nil || g != gid {
			continue
		}
		if f[0] != me {
			return false
		}
		for _, m := range strings.Split(f[3], ",") {
			if m = strings.TrimSpace(m); m != "" && m != me {
				return false
			}
		}
		found = true
	}
	return found
}
