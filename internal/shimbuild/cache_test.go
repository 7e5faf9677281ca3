package shimbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nobody is the uid (and gid) files are given to, to play another user.
const nobody = 65534

// cacheEnv sets the variables that choose the cache: POPMON_CACHE_DIR,
// XDG_CACHE_HOME, HOME and TMPDIR ("" unsets in effect).
func cacheEnv(t *testing.T, cacheDir, xdg, home, tmp string) {
	t.Helper()
	t.Setenv("POPMON_CACHE_DIR", cacheDir)
	t.Setenv("XDG_CACHE_HOME", xdg)
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
}

// realTempDir is t.TempDir with symbolic links resolved.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mkdir(t *testing.T, p string, mode fs.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, p string, b []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// chown gives p to uid:gid, skipping the test where that needs root.
func chown(t *testing.T, p string, uid, gid int, link bool) {
	t.Helper()
	f := os.Chown
	if link {
		f = os.Lchown
	}
	if err := f(p, uid, gid); err != nil {
		t.Skipf("cannot give %s to uid %d (playing another user needs root): %v", p, uid, err)
	}
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func TestLocateCache(t *testing.T) {
	uid := strconv.Itoa(os.Geteuid())
	tests := []struct {
		name             string
		cache, xdg, home string // relative to the test folder; "" unset
		tmpMode          fs.FileMode
		want, wantFrom   string
		wantPrivate      []string // folders popmon created: 0700
		wantAbsent       []string
		relativeXDG      bool
	}{
		{name: "POPMON_CACHE_DIR", cache: "mine/cache", xdg: "xdg", home: "home",
			want: "mine/cache", wantFrom: "$POPMON_CACHE_DIR", wantPrivate: []string{"mine", "mine/cache"}},
		{name: "XDG_CACHE_HOME", xdg: "xdg", home: "home",
			want: "xdg/popmon/lib", wantFrom: "$XDG_CACHE_HOME", wantPrivate: []string{"xdg", "xdg/popmon", "xdg/popmon/lib"}},
		{name: "HOME", home: "home",
			want: "home/.cache/popmon/lib", wantFrom: "$HOME/.cache", wantPrivate: []string{"home/.cache", "home/.cache/popmon", "home/.cache/popmon/lib"}},
		{name: "relative XDG_CACHE_HOME is ignored", xdg: "xdg", relativeXDG: true, home: "home",
			want: "home/.cache/popmon/lib", wantFrom: "$HOME/.cache"},
		{name: "no HOME nor XDG: private per-user folder in a sticky TMPDIR", tmpMode: fs.ModeSticky | 0o777,
			want: "tmp/popmon-" + uid + "/lib", wantFrom: "the per-user folder in",
			wantPrivate: []string{"tmp/popmon-" + uid, "tmp/popmon-" + uid + "/lib"}, wantAbsent: []string{"tmp/popmon"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := realTempDir(t)
			abs := func(p string) string {
				if p == "" {
					return ""
				}
				return filepath.Join(d, p)
			}
			tmp := mkdir(t, filepath.Join(d, "tmp"), 0o755)
			if tc.tmpMode != 0 {
				mkdir(t, tmp, tc.tmpMode)
			}
			xdg := abs(tc.xdg)
			if tc.relativeXDG {
				xdg = tc.xdg
			}
			if tc.home != "" {
				mkdir(t, abs(tc.home), 0o755)
			}
			cacheEnv(t, abs(tc.cache), xdg, abs(tc.home), tmp)
			loc, err := LocateCache(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if loc.Dir != abs(tc.want) {
				t.Errorf("Dir = %s, want %s", loc.Dir, abs(tc.want))
			}
			if !strings.HasPrefix(loc.From, tc.wantFrom) {
				t.Errorf("From = %q, want it to start with %q", loc.From, tc.wantFrom)
			}
			for _, p := range tc.wantPrivate {
				if m := mode(t, abs(p)); m != fs.ModeDir|0o700 {
					t.Errorf("%s: mode %v, want drwx------", p, m)
				}
			}
			for _, p := range tc.wantAbsent {
				if _, err := os.Lstat(abs(p)); err == nil {
					t.Errorf("%s was created", p)
				}
			}
			if strings.Contains(loc.Dir, filepath.Join("popmon", "lib")) && strings.HasPrefix(loc.Dir, tmp) {
				t.Errorf("Dir %s is the shared fallback", loc.Dir)
			}
		})
	}
}

// TestLocateCacheSymlinkedRoot: the user's own folder may be reached
// through the user's symbolic link; the library path is the real one.
func TestLocateCacheSymlinkedRoot(t *testing.T) {
	d := realTempDir(t)
	target := mkdir(t, filepath.Join(d, "scratch", "cache"), 0o700)
	link := filepath.Join(d, "cache")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	cacheEnv(t, link, "", "", d)
	loc, err := LocateCache(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if loc.Dir != target {
		t.Errorf("Dir = %s, want the link's target %s", loc.Dir, target)
	}
}

// plant describes a cache prepared by another user or by accident.
type plant struct {
	name string
	// setup prepares folder d (the test's TMPDIR) and returns
	// POPMON_CACHE_DIR and XDG_CACHE_HOME ("" unset) and the build
	// folder where the library for key would go.
	setup     func(t *testing.T, d, key string) (cacheDir, xdg, buildDir string)
	wantPath  string // relative to d
	wantError string
}

// TestBuildRefusesUnsafeCache plants libraries and folders that other
// users could have written and checks that Build refuses them with a
// message naming the path and the problem, and leaves them alone.
func TestBuildRefusesUnsafeCache(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (apt-get install gcc)")
	}
	uid := strconv.Itoa(os.Geteuid())
	private := func(t *testing.T, d, key string) (string, string, string) {
		root := mkdir(t, filepath.Join(d, "cache"), 0o700)
		return root, "", mkdir(t, filepath.Join(root, key), 0o700)
	}
	tests := []plant{
		{name: "library planted in the per-user fallback of another user",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				// The attacker creates popmon-<uid> before the user does.
				top := mkdir(t, filepath.Join(d, "popmon-"+uid), 0o777)
				b := mkdir(t, filepath.Join(top, "lib", key), 0o777)
				chown(t, top, nobody, nobody, false)
				return "", "", b
			},
			wantPath: "popmon-" + uid, wantError: "owned by uid 65534, neither you (uid " + uid + ") nor root; remove it or set POPMON_CACHE_DIR to a private folder"},
		{name: "library planted in a world-writable per-user fallback",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				top := mkdir(t, filepath.Join(d, "popmon-"+uid), 0o777)
				return "", "", mkdir(t, filepath.Join(top, "lib", key), 0o700)
			},
			wantPath: "popmon-" + uid, wantError: "writable by other users (mode 0777); remove it or set POPMON_CACHE_DIR to a private folder"},
		{name: "library planted in a world-writable POPMON_CACHE_DIR",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				root := mkdir(t, filepath.Join(d, "shared"), 0o777)
				return root, "", mkdir(t, filepath.Join(root, key), 0o700)
			},
			wantPath: "shared", wantError: "writable by other users (mode 0777); make it private (chmod go-w) or set POPMON_CACHE_DIR to a private folder"},
		{name: "folder above the cache writable by others",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				mkdir(t, filepath.Join(d, "open"), 0o777)
				root := mkdir(t, filepath.Join(d, "open", "cache"), 0o700)
				return root, "", mkdir(t, filepath.Join(root, key), 0o700)
			},
			wantPath: "open", wantError: "writable by other users (mode 0777); set POPMON_CACHE_DIR to a private folder outside it"},
		{name: "sticky folder above the cache owned by another user",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				st := mkdir(t, filepath.Join(d, "sticky"), fs.ModeSticky|0o777)
				root := mkdir(t, filepath.Join(st, "cache"), 0o700)
				chown(t, st, nobody, nobody, false)
				return root, "", mkdir(t, filepath.Join(root, key), 0o700)
			},
			wantPath: "sticky", wantError: "writable by other users and sticky but owned by uid 65534"},
		{name: "build folder writable by a shared group",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				root, _, b := private(t, d, key)
				mkdir(t, b, 0o770)
				chown(t, b, os.Geteuid(), nobody, false)
				return root, "", b
			},
			wantPath: "cache/KEY", wantError: "writable by other users of group 65534 (mode 0770)"},
		{name: "library writable by others",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				return private(t, d, key)
			},
			wantPath: "cache/KEY/libpopmon.so", wantError: "writable by other users (mode 0666); remove it or set POPMON_CACHE_DIR to a private folder"},
		{name: "library owned by another user",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				return private(t, d, key)
			},
			wantPath: "cache/KEY/libpopmon.so", wantError: "owned by uid 65534"},
		{name: "manifest writable by others",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				return private(t, d, key)
			},
			wantPath: "cache/KEY/manifest.json", wantError: "writable by other users (mode 0646)"},
		{name: "symbolic link as build folder",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				root := mkdir(t, filepath.Join(d, "cache"), 0o700)
				elsewhere := mkdir(t, filepath.Join(d, "elsewhere"), 0o700)
				if err := os.Symlink(elsewhere, filepath.Join(root, key)); err != nil {
					t.Fatal(err)
				}
				return root, "", elsewhere
			},
			wantPath: "cache/KEY", wantError: "a symbolic link where popmon keeps a folder; remove it"},
		{name: "symbolic link as popmon's folder in XDG_CACHE_HOME",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				xdg := mkdir(t, filepath.Join(d, "xdg"), 0o700)
				other := mkdir(t, filepath.Join(d, "other"), 0o700)
				if err := os.Symlink(other, filepath.Join(xdg, "popmon")); err != nil {
					t.Fatal(err)
				}
				return "", xdg, mkdir(t, filepath.Join(other, "lib", key), 0o700)
			},
			wantPath: "xdg/popmon", wantError: "a symbolic link where popmon keeps a folder"},
		{name: "another user's symbolic link as POPMON_CACHE_DIR",
			setup: func(t *testing.T, d, key string) (string, string, string) {
				target := mkdir(t, filepath.Join(d, "mine"), 0o700)
				link := filepath.Join(d, "link")
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				chown(t, link, nobody, nobody, true)
				return link, "", mkdir(t, filepath.Join(target, key), 0o700)
			},
			wantPath: "link", wantError: "a symbolic link owned by uid 65534"},
	}
	evil := []byte("\x7fELF planted by another user")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := realTempDir(t)
			mkdir(t, d, fs.ModeSticky|0o777) // like /tmp
			cacheEnv(t, "", "", "", d)
			opts := Options{NoMPI: true, CC: cc}
			key, _, _, err := buildKey(context.Background(), cc, opts, "")
			if err != nil {
				t.Fatal(err)
			}
			cacheDir, xdg, buildDir := tc.setup(t, d, key)
			lib := filepath.Join(buildDir, libName)
			writeFile(t, lib, evil, 0o755)
			writeFile(t, filepath.Join(buildDir, manifestName), []byte("{}"), 0o644)
			switch tc.name {
			case "library writable by others":
				writeFile(t, lib, evil, 0o666)
			case "library owned by another user":
				chown(t, lib, nobody, nobody, false)
			case "manifest writable by others":
				writeFile(t, filepath.Join(buildDir, manifestName), []byte("{}"), 0o646)
			}
			// The old shared fallback holds a library too: it must never
			// be what Build returns.
			legacy := mkdir(t, filepath.Join(d, "popmon", "lib", key), 0o777)
			writeFile(t, filepath.Join(legacy, libName), evil, 0o777)
			cacheEnv(t, cacheDir, xdg, "", d)

			var log bytes.Buffer
			opts.Log = &log
			got, err := Build(context.Background(), opts)
			if err == nil {
				t.Fatalf("Build returned %s, want a refusal", got.Path)
			}
			var unsafe *UnsafeCacheError
			if !errors.As(err, &unsafe) {
				t.Fatalf("err = %v (%T), want an *UnsafeCacheError", err, err)
			}
			wantPath := filepath.Join(d, strings.ReplaceAll(tc.wantPath, "KEY", key))
			if unsafe.Path != wantPath {
				t.Errorf("refused path %s, want %s", unsafe.Path, wantPath)
			}
			want := "refusing " + wantPath + ": " + tc.wantError
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error:\n  %v\nwant it to start with\n  %s", err, want)
			}
			if b, err := os.ReadFile(lib); err != nil || !bytes.Equal(b, evil) {
				t.Errorf("the refused library was changed or removed (%v)", err)
			}
			if log.Len() != 0 {
				t.Errorf("a refusal wrote to the log: %q", log.String())
			}
		})
	}
}

// TestBuildRebuildsDamagedLibrary damages a cached library and its
// manifest in every way and checks that the next Build rebuilds it, says so
// on the log, and returns a library that matches its manifest.
func TestBuildRebuildsDamagedLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (apt-get install gcc)")
	}
	d := realTempDir(t)
	cacheEnv(t, filepath.Join(d, "cache"), "", "", d)
	opts := Options{NoMPI: true, CC: cc, Werror: true}
	first, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	assertVerified(t, first)
	if m := mode(t, filepath.Dir(first.Path)); m != fs.ModeDir|0o700 {
		t.Errorf("build folder mode %v, want drwx------", m)
	}
	if m := mode(t, first.Path); m != 0o755 {
		t.Errorf("library mode %v, want -rwxr-xr-x", m)
	}
	manifestPath := filepath.Join(filepath.Dir(first.Path), manifestName)
	tests := []struct {
		name    string
		damage  func(t *testing.T)
		wantLog string
	}{
		{"one byte changed", func(t *testing.T) {
			b, err := os.ReadFile(first.Path)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0xff
			writeFile(t, first.Path, b, 0o755)
		}, "does not match the sha256 of its manifest"},
		{"truncated", func(t *testing.T) {
			if err := os.Truncate(first.Path, 1000); err != nil {
				t.Fatal(err)
			}
		}, "is 1000 bytes where its manifest says"},
		{"manifest missing", func(t *testing.T) {
			if err := os.Remove(manifestPath); err != nil {
				t.Fatal(err)
			}
		}, "has no manifest"},
		{"manifest garbled", func(t *testing.T) {
			writeFile(t, manifestPath, []byte(`{"format": `), 0o644)
		}, "has an unreadable manifest"},
		{"manifest of another build", func(t *testing.T) {
			b, err := os.ReadFile(manifestPath)
			if err != nil {
				t.Fatal(err)
			}
			var m manifest
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m.Key = "000000000000000000000000"
			if err := writeManifest(filepath.Dir(manifestPath), m); err != nil {
				t.Fatal(err)
			}
		}, "has a manifest of another build"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.damage(t)
			var log bytes.Buffer
			opts.Log = &log
			lib, err := Build(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if lib.Cached {
				t.Error("the damaged library was reused")
			}
			if lib.Path != first.Path {
				t.Errorf("rebuilt at %s, want %s", lib.Path, first.Path)
			}
			wantLog := "popmon: the cached library " + first.Path + " " + tc.wantLog
			if !strings.HasPrefix(log.String(), wantLog) || !strings.HasSuffix(log.String(), ": rebuilding it\n") ||
				strings.Count(log.String(), "\n") != 1 {
				t.Errorf("log %q, want one line starting with %q", log.String(), wantLog)
			}
			assertVerified(t, lib)
			again, err := Build(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if !again.Cached || again.SHA256 != lib.SHA256 {
				t.Errorf("the rebuilt library is not reused: cached=%v sha256 %s, want %s", again.Cached, again.SHA256, lib.SHA256)
			}
		})
	}
}

// assertVerified checks lib against the bytes on disk and its manifest.
func assertVerified(t *testing.T, lib *Library) {
	t.Helper()
	b, err := os.ReadFile(lib.Path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != lib.SHA256 {
		t.Errorf("Library.SHA256 %s, the file's is %s", lib.SHA256, got)
	}
	mb, err := os.ReadFile(filepath.Join(filepath.Dir(lib.Path), manifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	if m.SHA256 != lib.SHA256 || m.Size != int64(len(b)) || m.Key != filepath.Base(filepath.Dir(lib.Path)) ||
		m.Format != manifestFormat || m.Library != libName || m.Compiler != lib.Compiler {
		t.Errorf("manifest %+v does not describe %s (%d bytes, sha256 %s)", m, lib.Path, len(b), lib.SHA256)
	}
	st, err := checkCached(filepath.Dir(lib.Path), m.Key)
	if err != nil || !st.ok {
		t.Errorf("checkCached: %+v, %v; want ok", st, err)
	}
}

// TestLoadTest runs the load test on libraries that load and on ones that
// do not.
func TestLoadTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (apt-get install gcc)")
	}
	d := t.TempDir()
	probe, err := buildProbe(context.Background(), cc, d)
	if err != nil {
		t.Fatal(err)
	}
	shared := func(name, src string) string {
		c := filepath.Join(d, name+".c")
		writeFile(t, c, []byte(src), 0o644)
		so := filepath.Join(d, name+".so")
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return so
	}
	good := shared("good", "int popmon_api_region_start(void *h) { (void)h; return 0; }\n")
	other := shared("other", "int something_else(void) { return 0; }\n")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(d, "truncated.so")
	writeFile(t, truncated, b[:200], 0o755)
	t.Setenv("LD_PRELOAD", other) // the caller's own preload is not used
	t.Setenv("POPMON_DISABLE", "0")
	tests := []struct {
		name, lib, wantError string
	}{
		{"loads", good, ""},
		{"does not define the library's symbols", other, "libpopmon is not in the process"},
		{"truncated", truncated, "does not load"},
		{"missing", filepath.Join(d, "missing.so"), "does not load"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := loadTest(context.Background(), probe, tc.lib)
			if tc.wantError == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantError) || !strings.Contains(err.Error(), tc.lib) {
				t.Errorf("err = %v, want one naming %s and saying %q", err, tc.lib, tc.wantError)
			}
		})
	}
}

func TestLoadTestEnv(t *testing.T) {
	got := loadTestEnv([]string{"PATH=/bin", "LD_PRELOAD=/x.so", "LD_DEBUG=all", "LD_DEBUG_OUTPUT=/tmp/f",
		"POPMON_OUTPUT=o.json", "POPMON_DISABLE=0", "LD_LIBRARY_PATH=/opt/mpi/lib", "LD_AUDIT=/a.so"}, "/c/libpopmon.so")
	want := []string{"PATH=/bin", "LD_LIBRARY_PATH=/opt/mpi/lib", "LD_PRELOAD=/c/libpopmon.so", "POPMON_DISABLE=1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("loadTestEnv = %q, want %q", got, want)
	}
}

// TestPrivateGroup: a folder writable by the user's private group is as
// private as one writable by the user alone; any other group is not.
func TestPrivateGroup(t *testing.T) {
	uid := os.Geteuid()
	me := func(gid int) string {
		return "me:x:" + strconv.Itoa(uid) + ":" + strconv.Itoa(gid) + "::/home/me:/bin/sh\n"
	}
	other := func(u, gid int) string {
		return "other:x:" + strconv.Itoa(u) + ":" + strconv.Itoa(gid) + "::/home/other:/bin/sh\n"
	}
	tests := []struct {
		name          string
		passwd, group string
		gid           int
		want          bool
	}{
		{"user private group", me(4242) + other(uid+1, 4243), "me:x:4242:\nother:x:4243:\n", 4242, true},
		{"private group listing the user", me(4242), "me:x:4242:me\n", 4242, true},
		{"another account's primary group too", me(4242) + other(uid+1, 4242), "me:x:4242:\n", 4242, false},
		{"group with another member", me(4242), "me:x:4242:me,other\n", 4242, false},
		{"group named otherwise", me(4242), "users:x:4242:\n", 4242, false},
		{"not the user's primary group", me(4242), "me:x:4242:\nstaff:x:50:\n", 50, false},
		{"user not in passwd (LDAP)", other(uid+1, 4243), "me:x:4242:\n", 4242, false},
		{"group not in group file", me(4242), "", 4242, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			oldP, oldG := passwdFile, groupFile
			t.Cleanup(func() { passwdFile, groupFile = oldP, oldG })
			passwdFile, groupFile = filepath.Join(d, "passwd"), filepath.Join(d, "group")
			writeFile(t, passwdFile, []byte(tc.passwd), 0o644)
			writeFile(t, groupFile, []byte(tc.group), 0o644)
			if got := isPrivateGroup(tc.gid); got != tc.want {
				t.Errorf("isPrivateGroup(%d) = %v, want %v", tc.gid, got, tc.want)
			}
		})
	}
}
