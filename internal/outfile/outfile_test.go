package outfile

import (
	"fmt"
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
