package shimbuild

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, in lines from its first
// to its last (the signature to the closing brace), in the library's C and
// popmon's Go outside tests and generated code: a longer one is cut along
// its own steps.
const maxFuncLines = 150

// cFunctions returns each function definition of C source src: its name
// and its lines, from the line its declaration starts on to its closing
// brace. A scanner, not a parser: comments, strings, character constants
// and preprocessor lines are skipped; a top-level brace after a closing
// parenthesis opens a function's body, any other one (a struct, an enum, an
// initializer) a block that is not a function.
func cFunctions(src []byte) []cFunc {
	var funcs []cFunc
	line, depth := 1, 0
	var fn *cFunc
	// The top-level text since the last ';', '}' or preprocessor line:
	// where a definition's declaration starts and what precedes its brace.
	var decl []byte
	declLine := 0
	bol := true // at the beginning of a line (only blanks before)
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			line++
			bol = true
			if depth == 0 && len(decl) > 0 {
				decl = append(decl, ' ')
			}
			continue
		case c == '#' && bol:
			// A preprocessor line, with its continuations.
			for i < len(src) && (src[i] != '\n' || src[i-1] == '\\') {
				if src[i] == '\n' {
					line++
				}
				i++
			}
			line++
			if depth == 0 {
				decl, declLine = nil, 0
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				end = len(src) - i - 2
			}
			line += bytes.Count(src[i:i+2+end], []byte("\n"))
			i += end + 3
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '"' || c == '\'':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case c == ' ' || c == '\t':
			if depth == 0 && len(decl) > 0 {
				decl = append(decl, ' ')
			}
			continue
		}
		bol = false
		switch c {
		case '{':
			if depth == 0 {
				head := strings.TrimSpace(string(decl))
				if strings.HasSuffix(head, ")") && !strings.Contains(head, "=") {
					fn = &cFunc{name: cFuncName(head), first: declLine}
				}
			}
			depth++
		case '}':
			depth--
			if depth == 0 {
				if fn != nil {
					fn.last = line
					funcs = append(funcs, *fn)
					fn = nil
				}
				decl, declLine = nil, 0
			}
		case ';':
			if depth == 0 {
				decl, declLine = nil, 0
			}
		default:
			if depth == 0 {
				if len(decl) == 0 {
					declLine = line
				}
				decl = append(decl, c)
			}
		}
	}
	return funcs
}

type cFunc struct {
	name        string
	first, last int
}

// cFuncName is the name before the first parenthesis of a declaration.
func cFuncName(head string) string {
	if i := strings.IndexByte(head, '('); i >= 0 {
		head = strings.TrimSpace(head[:i])
	}
	if i := strings.LastIndexAny(head, " *"); i >= 0 {
		head = head[i+1:]
	}
	return head
}

// generatedC reports whether a library file is generated (shim/gen): the
// wrappers, and the files whose opening comment says so.
func generatedC(name string, b []byte) bool {
	head := b
	if len(head) > 400 {
		head = head[:400]
	}
	return name == generatedData || bytes.Contains(bytes.ToUpper(head), []byte("GENERATED"))
}

func TestCFunctionsScanner(t *testing.T) {
	src := []byte(`/* a { comment */
#include "x.h"
#define M(a) { a }
struct s { int a; };
static const char *k = "{";
static int t[] = {1, 2};
static int
add(int a,
    int b)
{
	if (a) { return '}'; } // }
	return a + b;
}
void f(void) { }
`)
	got := fmt.Sprint(cFunctions(src))
	if want := "[{add 7 13} {f 14 14}]"; got != want {
		t.Errorf("cFunctions = %s, want %s", got, want)
	}
}

// TestFunctionLength keeps every function of the library's C (generated
// files aside) and of popmon's Go (tests and generated files aside) within
// maxFuncLines lines.
func TestFunctionLength(t *testing.T) {
	sources, err := sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	var long []string
	for name, b := range sources {
		if !strings.HasSuffix(name, ".c") || generatedC(name, b) {
			continue
		}
		for _, f := range cFunctions(b) {
			if n := f.last - f.first + 1; n > maxFuncLines {
				long = append(long, fmt.Sprintf("shim/%s:%d: %s is %d lines", name, f.first, f.name, n))
			}
		}
	}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, dir := range []string{"internal", "measure", "pop", "cmd", "shim/gen"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f, err := parser.ParseFile(fset, p, b, parser.ParseComments)
			if err != nil {
				return err
			}
			if ast.IsGenerated(f) {
				return nil
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok {
					continue
				}
				first, last := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
				if n := last - first + 1; n > maxFuncLines {
					rel, _ := filepath.Rel(root, p)
					long = append(long, fmt.Sprintf("%s:%d: %s is %d lines", rel, first, fd.Name.Name, n))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(long)
	for _, l := range long {
		t.Errorf("%s (at most %d: cut it along its own steps)", l, maxFuncLines)
	}
}
