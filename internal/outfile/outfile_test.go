package outfile

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPublishNumbered: the Nth repeated output of base "two" is
// two.N.json, whatever else lies in the folder.
func TestPublishNumbered(t *testing.T) {
	dir := t.TempDir()
	publish := func(content string) string {
		t.Helper()
		src := filepath.Join(dir, ".src")
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		name, err := PublishNumbered(src, filepath.Join(dir, "two.json"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(src); err == nil {
			t.Error("source left behind")
		}
		if b, _ := os.ReadFile(name); string(b) != content {
			t.Errorf("%s holds %q, want %q", name, b, content)
		}
		return filepath.Base(name)
	}
	// Names that are not of the family do not count.
	for _, n := range []string{"two.1.1.json", "two.01.json", "two.x.json", "two.json.1", "twox.3.json", "two.-4.json"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	for i, want := range []string{"two.json", "two.1.json", "two.2.json", "two.3.json"} {
		if got := publish(want); got != want {
			t.Errorf("output %d: %s, want %s", i, got, want)
		}
	}
	// The next number follows the highest in use, even when earlier
	// ones were deleted: names keep the order of the runs.
	os.Remove(filepath.Join(dir, "two.json"))
	os.Remove(filepath.Join(dir, "two.1.json"))
	os.WriteFile(filepath.Join(dir, "two.9.json"), nil, 0o644)
	if got := publish("after nine"); got != "two.10.json" {
		t.Errorf("after two.9.json: %s", got)
	}
	// No extension.
	src := filepath.Join(dir, ".src")
	os.WriteFile(src, []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644)
	if name, err := PublishNumbered(src, filepath.Join(dir, "plain")); err != nil || filepath.Base(name) != "plain.1" {
		t.Errorf("plain: %s %v", name, err)
	}
}

func TestDefaultOutputName(t *testing.T) {
	got := DefaultName([]string{"/path/to/my app"})
	if !strings.HasPrefix(got, "popmon-my_app-") || !strings.HasSuffix(got, ".json") {
		t.Errorf("defaultOutputName = %q", got)
	}
}

// TestReplaceFileAcrossFileSystems: --force moves a measurement kept on
// another file system (/dev/shm) over the output: a rename cannot.
func TestReplaceFileAcrossFileSystems(t *testing.T) {
	src := filepath.Join("/dev/shm", fmt.Sprintf("popmon-kept-test-%d.json", os.Getpid()))
	if err := os.WriteFile(src, []byte("{}\n"), 0o600); err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.Remove(src)
	dir := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(src, &a) != nil || syscall.Stat(dir, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the same file system as the test's folder")
	}
	target := filepath.Join(dir, "m.json")
	os.WriteFile(target, []byte("old"), 0o644)
	if got, err := Replace(src, target); err != nil || got != target {
		t.Fatalf("replaceFile: %q, %v", got, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "{}\n" {
		t.Errorf("target holds %q", b)
	}
	if _, err := os.Stat(src); err == nil {
		t.Error("the kept file is still there")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".popmon-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// fifo makes a named pipe in dir and opens it for reading (the writer's
// bytes wait in the pipe: they are fewer than its buffer); read returns
// what was written once the writers closed it.
func fifo(t *testing.T, dir string) (string, func() string) {
	t.Helper()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return p, func() string {
		var out []byte
		buf := make([]byte, 4096)
		for {
			n, err := syscall.Read(fd, buf)
			if n <= 0 || err != nil {
				return string(out)
			}
			out = append(out, buf[:n]...)
		}
	}
}

// TestTargetKinds: what -o may name, and what each outputs function does
// with it: a regular file is replaced (with force), a named pipe and a
// character device are written through (no force needed; never renamed
// over, so they stay what they are), a directory, a symbolic link to one
// and a socket are refused with one line; a symbolic link to a regular
// file is itself replaced, its target left alone.
func TestTargetKinds(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("old"), 0o644)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	linkDir := filepath.Join(dir, "linkdir")
	os.Symlink(sub, linkDir)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nothing"), dangling)
	sock := filepath.Join(dir, "sock")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
	}
	cases := []struct {
		path string
		kind Kind
		err  string
	}{
		{filepath.Join(dir, "new"), Absent, ""},
		{file, Regular, ""},
		{dangling, Regular, ""},
		{"/dev/null", Through, ""},
		{sub, Regular, sub + " is a directory: choose a file name"},
		{linkDir, Regular, linkDir + " is a symbolic link to a directory: choose a file name"},
		{sock, Regular, sock + " is a socket: choose a file name"},
	}
	for _, c := range cases {
		k, err := TargetKind(c.path)
		if k != c.kind || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%s: kind %d, %v; want %d, %q", c.path, k, err, c.kind, c.err)
		}
	}
	// A character device needs no --force: nothing is destroyed.
	if err := CheckTarget("/dev/null", false); err != nil {
		t.Errorf("/dev/null without force: %v", err)
	}
	if err := CheckTarget(file, false); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a regular file without force: %v", err)
	}
}

// TestWritesThroughAPipe: every way an output is written (Create and
// Commit, Replace, PublishNumbered, WriteAtomic) sends the bytes to a
// named pipe's reader and leaves the pipe a pipe, with no other file
// made next to it.
func TestWritesThroughAPipe(t *testing.T) {
	ways := map[string]func(t *testing.T, src, target string){
		"Create": func(t *testing.T, _, target string) {
			f, err := Create(target, false)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("through")
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
		},
		"Create force": func(t *testing.T, _, target string) {
			f, err := Create(target, true)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("through")
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
		},
		"Replace": func(t *testing.T, src, target string) {
			if got, err := Replace(src, target); err != nil || got != target {
				t.Fatalf("%q, %v", got, err)
			}
		},
		"PublishNumbered": func(t *testing.T, src, target string) {
			if got, err := PublishNumbered(src, target); err != nil || got != target {
				t.Fatalf("%q, %v", got, err)
			}
		},
		"WriteAtomic": func(t *testing.T, _, target string) {
			if err := WriteAtomic(target, []byte("through")); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, write := range ways {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p, read := fifo(t, dir)
			src := filepath.Join(t.TempDir(), "src")
			os.WriteFile(src, []byte("through"), 0o644)
			write(t, src, p)
			if got := read(); got != "through" {
				t.Errorf("the pipe's reader got %q", got)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%s is no longer a pipe: %v %v", p, fi.Mode(), err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("files left next to the pipe: %v", entries)
			}
		})
	}
}

// TestPipeWithoutReader: a pipe nobody reads is an error in one line,
// not a wait, and stays a pipe.
func TestPipeWithoutReader(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	_, err := Create(p, true)
	if err == nil || err.Error() != "cannot write "+p+": no process reads the pipe "+p {
		t.Errorf("Create: %v", err)
	}
	src := filepath.Join(t.TempDir(), "src")
	os.WriteFile(src, []byte("x"), 0o644)
	if _, err := Replace(src, p); err == nil {
		t.Error("Replace into a pipe without a reader succeeded")
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a pipe", p)
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("the measurement was lost: %v", err)
	}
}

// TestLinks: --force replaces a symbolic link to a regular file (or to
// nothing) by the new file and leaves its target alone; a link to a
// device or a pipe is written through (like the shell's >: /dev/stdout),
// the link and what it points to left as they were.
func TestLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	for _, to := range []string{victim, filepath.Join(dir, "nothing")} {
		link := filepath.Join(dir, "link")
		os.Remove(link)
		os.Symlink(to, link)
		src := filepath.Join(dir, "src")
		os.WriteFile(src, []byte("new"), 0o644)
		if _, err := Replace(src, link); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("link to %s: not replaced by a file (%v)", to, err)
		}
		if b, _ := os.ReadFile(link); string(b) != "new" {
			t.Errorf("link to %s: holds %q", to, b)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	p, read := fifo(t, dir)
	link := filepath.Join(dir, "to-pipe")
	os.Symlink(p, link)
	if err := CheckTarget(link, false); err != nil {
		t.Errorf("a link to a pipe needs no force: %v", err)
	}
	f, err := Create(link, false)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("via link")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "via link" {
		t.Errorf("the pipe got %q through the link", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to the pipe was replaced")
	}
}

// TestRefusedTargets: a directory (and a link to one) is never written
// or renamed over by any of the output functions; the source stays.
func TestRefusedTargets(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	linkDir := filepath.Join(dir, "linkdir")
	os.Symlink(sub, linkDir)
	for _, target := range []string{sub, linkDir} {
		if _, err := Create(target, true); err == nil {
			t.Errorf("Create(%s) succeeded", target)
		}
		src := filepath.Join(dir, "src")
		os.WriteFile(src, []byte("x"), 0o644)
		if _, err := Replace(src, target); err == nil {
			t.Errorf("Replace(%s) succeeded", target)
		}
		if err := WriteAtomic(target, []byte("x")); err == nil {
			t.Errorf("WriteAtomic(%s) succeeded", target)
		}
		if _, err := os.Stat(src); err != nil {
			t.Errorf("the source was lost: %v", err)
		}
	}
	if fi, err := os.Lstat(sub); err != nil || !fi.IsDir() {
		t.Error("the directory went")
	}
	if fi, err := os.Lstat(linkDir); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link to the directory went")
	}
}

// TestCharDeviceStays: as root, a null device made in a temporary folder
// (mknod c 1 3: the real /dev/null is never at risk) is written through by
// every output function, with and without force, and stays a character
// device.
func TestCharDeviceStays(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("making a device node needs root: %v", err)
	}
	check := func(way string) {
		t.Helper()
		fi, err := os.Lstat(null)
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s: %s is no longer a character device (%v)", way, null, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%s: files left next to the device: %v", way, entries)
		}
	}
	for _, force := range []bool{false, true} {
		f, err := Create(null, force)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("x")
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("Create(force %v)", force))
	}
	src := filepath.Join(t.TempDir(), "src")
	os.WriteFile(src, []byte("x"), 0o644)
	if _, err := Replace(src, null); err != nil {
		t.Fatal(err)
	}
	check("Replace")
	os.WriteFile(src, []byte("x"), 0o644)
	if _, err := PublishNumbered(src, null); err != nil {
		t.Fatal(err)
	}
	check("PublishNumbered")
	if err := WriteAtomic(null, []byte("x")); err != nil {
		t.Fatal(err)
	}
	check("WriteAtomic")
}
