package dlbhome

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestCheckTarget(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "prefix")
	os.MkdirAll(prefix, 0o755)
	os.WriteFile(filepath.Join(prefix, Marker), nil, 0o644)
	other := filepath.Join(dir, "other")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "data"), nil, 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	for _, c := range []struct {
		path string
		ok   bool
	}{{filepath.Join(dir, "new"), true}, {empty, true}, {prefix, true}, {other, false}, {file, false}} {
		err := checkTarget(c.path)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrTarget) {
			t.Errorf("%s: %v, want ok %v", c.path, err, c.ok)
		}
	}
}

// TestHeaders: the prefix carries DLB 3.7's installed headers, C and
// Fortran, each naming where it comes from.
func TestHeaders(t *testing.T) {
	dir := t.TempDir()
	if err := writeHeaders(dir); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if !strings.Contains(string(b), "popmon") {
			t.Errorf("%s does not say it is popmon's", e.Name())
		}
	}
	sort.Strings(names)
	want := "dlb.h dlb_drom.h dlb_errors.h dlb_talp.h dlb_types.h dlbf-errors.h dlbf.h dlbf_drom.h dlbf_talp.h"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("headers %s, want %s", got, want)
	}
}

// TestScript: bin/dlb answers DLB's options through the library's probes.
func TestScript(t *testing.T) {
	s := dlbScript()
	for _, want := range []string{"POPMON_DLB_HELP", "POPMON_DLB_AFFINITY", "-v|--version", "-a|-l|--affinity", "-hh", `"$prefix/lib/libdlb.so"`} {
		if !strings.Contains(s, want) {
			t.Errorf("bin/dlb lacks %q", want)
		}
	}
}
