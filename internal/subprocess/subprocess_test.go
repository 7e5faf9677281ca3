package subprocess

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	lib := "/home/u/.cache/popmon/lib-0123/libpopmon.so"
	for _, c := range []struct {
		name string
		in   []string
		want []string
	}{
		{"nothing of popmon's", []string{"PATH=/bin", "LD_PRELOAD=/opt/tool.so", "POPMON_COUNTERS=off"},
			[]string{"PATH=/bin", "LD_PRELOAD=/opt/tool.so", "POPMON_COUNTERS=off"}},
		{"popmon run's job", []string{"PATH=/bin", "LD_PRELOAD=" + lib, "POPMON_SESSION=/w/.popmon-session-1",
			"POPMON_LIVE_DIR=/dev/shm/popmon-0/run-1", "POPMON_BIN=/usr/bin/popmon", "CUDA_INJECTION64_PATH=" + lib,
			"POPMON_CACHE_DIR=/c", "PYTHONPATH=/p"},
			[]string{"PATH=/bin", "POPMON_CACHE_DIR=/c", "PYTHONPATH=/p"}},
		{"the user's preloads stay, in order", []string{"LD_PRELOAD=" + lib + ":/opt/libomp.so /opt/tool.so"},
			[]string{"LD_PRELOAD=/opt/libomp.so:/opt/tool.so"}},
		{"exec's output and trace", []string{"POPMON_OUTPUT=/w/m.json", "POPMON_OUTPUT_FORCE=1", "POPMON_PID=7",
			"POPMON_TRACE=1", "POPMON_TRACE_DIR=/t", "POPMON_TRACE_BUFFER=64m", "HOME=/h"},
			[]string{"HOME=/h"}},
		{"another injection stays", []string{"CUDA_INJECTION64_PATH=/opt/nsys/libinj.so"},
			[]string{"CUDA_INJECTION64_PATH=/opt/nsys/libinj.so"}},
		{"a name alone", []string{"LD_PRELOAD=libpopmon.so"}, []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Clean(c.in); !slices.Equal(got, c.want) {
				t.Errorf("Clean(%q)\n = %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	t.Setenv("LD_PRELOAD", "/c/libpopmon.so")
	t.Setenv("POPMON_SESSION", "/w/s")
	cmd := Command(context.Background(), "true")
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "LD_PRELOAD=") || strings.HasPrefix(kv, "POPMON_SESSION=") {
			t.Errorf("a helper's environment has %s", kv)
		}
	}
}

// starters are the functions that start a program, by package; a
// composite exec.Cmd{...} starts one too.
var starters = map[string][]string{
	"os/exec": {"Command", "CommandContext"},
	"os":      {"StartProcess"},
	"syscall": {"Exec", "ForkExec", "StartProcess"},
}

// userJob are the places that start the user's program, with the library
// on purpose: file (from the module's root) and the starter it uses.
var userJob = map[string]string{
	"internal/session/run.go": "exec.Cmd",     // popmon run's COMMAND
	"internal/cli/exec.go":    "syscall.Exec", // popmon exec's APP
	"internal/cli/taskset.go": "syscall.Exec", // popmon taskset -c LIST's COMMAND (registered for DROM)
}

// TestOnlyHere: no package of popmon starts a program but through Command,
// except where it starts the user's job. An mpicc started otherwise, from
// popmon exec inside popmon run's job, was measured and published.
func TestOnlyHere(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	top, _ := filepath.Glob(filepath.Join(root, "*.go"))
	files = append(files, top...)
	for _, dir := range []string{"cmd", "internal", "measure", "pop"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || p == filepath.Join(root, "internal", "subprocess")) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 50 {
		t.Fatalf("found %d Go files under %s: not the module's root", len(files), root)
	}
	for _, p := range files {
		rel, _ := filepath.Rel(root, p)
		for _, u := range startsIn(t, p) {
			if userJob[filepath.ToSlash(rel)] != u.what {
				t.Errorf("%s:%d: %s starts a program: use subprocess.Command (a program popmon runs for itself must not carry its library)", rel, u.line, u.what)
			}
		}
	}
}

type use struct {
	what string
	line int
}

// startsIn lists where file p starts a program.
func startsIn(t *testing.T, p string) []use {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	pkgs := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(path)
		if im.Name != nil {
			name = im.Name.Name
		}
		pkgs[name] = path
	}
	// ref says whether e is pkg.name, and how it is written.
	ref := func(e ast.Expr, match func(path, name string) bool) (string, bool) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		path, ok := pkgs[x.Name]
		return x.Name + "." + sel.Sel.Name, ok && match(path, sel.Sel.Name)
	}
	var out []use
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if what, ok := ref(n.Fun, func(path, name string) bool { return slices.Contains(starters[path], name) }); ok {
				out = append(out, use{what, fset.Position(n.Pos()).Line})
			}
		case *ast.CompositeLit:
			if what, ok := ref(n.Type, func(path, name string) bool { return path == "os/exec" && name == "Cmd" }); ok {
				out = append(out, use{what, fset.Position(n.Pos()).Line})
			}
		}
		return true
	})
	return out
}
