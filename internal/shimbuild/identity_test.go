package shimbuild

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeWrapper writes an MPI compiler wrapper script into dir: -show prints
// the contents of dir/show, -E appends a line to dir/runs, prints the
// header dir/inc/mpi.h and writes its dependency rule where -MF says.
func fakeWrapper(t *testing.T, dir string) string {
	t.Helper()
	script := `#!/bin/sh
d=` + dir + `
case "$1" in
--version) echo "fakecc 1.0"; exit 0;;
-show) cat "$d/show"; exit 0;;
-E) ;;
*) exit 1;;
esac
echo run >> "$d/runs"
mf=""
while [ $# -gt 0 ]; do
	if [ "$1" = -MF ]; then mf="$2"; fi
	shift
done
cat > /dev/null
cat "$d/inc/mpi.h"
if [ -n "$mf" ]; then printf -- '-: %s \\\n %s\n' "$d/inc/mpi.h" "$d/inc/my\\ ext.h" > "$mf"; fi
`
	p := filepath.Join(dir, "mpicc")
	writeFile(t, p, []byte(script), 0o755)
	writeFile(t, filepath.Join(dir, "show"), []byte("gcc -I"+dir+"/inc\n"), 0o644)
	if err := os.MkdirAll(filepath.Join(dir, "inc"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "inc", "mpi.h"), []byte("int MPICH_foo;\n4 0\n"), 0o644)
	writeFile(t, filepath.Join(dir, "inc", "my ext.h"), []byte("\n"), 0o644)
	return p
}

func runsOf(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "runs"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "run\n")
}

// TestCompilerIdentityMemo checks that mpi.h is preprocessed once and the
// remembered identity reused until the wrapper, a header or the
// environment changes, and that every change gives the right identity.
func TestCompilerIdentityMemo(t *testing.T) {
	dir := realTempDir(t)
	memo := realTempDir(t)
	if err := os.Chmod(memo, 0o700); err != nil {
		t.Fatal(err)
	}
	cc := fakeWrapper(t, dir)
	ctx := context.Background()
	ident := func(wantRuns int, memoDir string) ([]byte, string) {
		t.Helper()
		id, desc, err := compilerIdentity(ctx, cc, false, memoDir)
		if err != nil {
			t.Fatal(err)
		}
		if got := runsOf(t, dir); got != wantRuns {
			t.Fatalf("mpi.h preprocessed %d times, want %d", got, wantRuns)
		}
		return id, desc
	}
	id1, desc := ident(1, memo)
	if desc != "MPICH (MPI 4.0)" {
		t.Errorf("desc = %q", desc)
	}
	id2, _ := ident(1, memo) // remembered
	if string(id1) != string(id2) {
		t.Errorf("remembered identity differs:\n%s\n%s", id1, id2)
	}
	idNoMemo, _ := ident(2, "") // without a memo folder: always asked
	if string(idNoMemo) != string(id1) {
		t.Errorf("identity without memo differs")
	}

	// A header changes (same size, new time): asked again, new identity.
	h := filepath.Join(dir, "inc", "mpi.h")
	writeFile(t, h, []byte("int MPICH_foo;\n4 1\n"), 0o644)
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(h, future, future); err != nil {
		t.Fatal(err)
	}
	id3, desc3 := ident(3, memo)
	if desc3 != "MPICH (MPI 4.1)" || string(id3) == string(id1) {
		t.Errorf("after the header changed: desc %q, identity unchanged %v", desc3, string(id3) == string(id1))
	}
	ident(3, memo)
	// The other header (a name with a space) grows: asked again.
	writeFile(t, filepath.Join(dir, "inc", "my ext.h"), []byte("\n\n"), 0o644)
	ident(4, memo)
	ident(4, memo)
	// The wrapper prints another command line: another memo.
	writeFile(t, filepath.Join(dir, "show"), []byte("gcc -I"+dir+"/inc -DX\n"), 0o644)
	id5, _ := ident(5, memo)
	if string(id5) == string(id3) {
		t.Error("identity does not follow the wrapper's -show")
	}
	ident(5, memo)
	// The header search path changes: another memo.
	t.Setenv("CPATH", dir)
	ident(6, memo)

	// A damaged or foreign memo is not trusted.
	files, _ := filepath.Glob(filepath.Join(memo, identityDir, "*.json"))
	if len(files) != 3 {
		t.Fatalf("memos: %v, want 3", files)
	}
	for _, f := range files {
		writeFile(t, f, []byte(`{"format":"popmon-compiler-identity 1","mpi_h_sha256":"`+strings.Repeat("0", 64)+`","mpi":"x","files":[]}`), 0o644)
	}
	ident(7, memo)
	// A memo others could write is refused like any file of the cache.
	files, _ = filepath.Glob(filepath.Join(memo, identityDir, "*.json"))
	for _, f := range files {
		if err := os.Chmod(f, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := compilerIdentity(ctx, cc, false, memo); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Errorf("memo writable by others: err = %v", err)
	}
}

func TestReadDeps(t *testing.T) {
	tests := []struct {
		name, rule string
		want       []string
	}{
		{"gcc", "-: /usr/include/stdc-predef.h /usr/include/mpi.h \\\n /usr/lib/gcc/stddef.h\n", []string{"/usr/include/stdc-predef.h", "/usr/include/mpi.h", "/usr/lib/gcc/stddef.h"}},
		{"clang target and escaped space", "-.o: /a/b\\ c.h \\\n  /d.h\n", []string{"/a/b c.h", "/d.h"}},
		{"phony rules ignored", "-: /a.h\n/a.h:\n", []string{"/a.h"}},
		{"relative path", "-: mpi.h\n", nil},
		{"make variable", "-: /a/$(X).h\n", nil},
		{"no rule", "garbage", nil},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "d")
			writeFile(t, p, []byte(tc.rule), 0o644)
			if got := readDeps(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readDeps = %q, want %q", got, tc.want)
			}
		})
	}
}
