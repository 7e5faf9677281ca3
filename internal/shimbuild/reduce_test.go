package shimbuild

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReduceC runs the C unit tests of the summary form's reduction
// (shim/reduce.c) with gcc and clang, warnings as errors: any reduction
// tree gives exactly the sequential summary, extremes go to the lowest
// rank, histogram bins match measure.Distribution.Bin, and the OpenMP rows'
// merge sorts and merges 10^6 rows.
func TestReduceC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	shim := filepath.Join("..", "..", "shim")
	for _, cc := range cCompilers(t) {
		bin := filepath.Join(t.TempDir(), "reduce_test")
		args := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-I", shim}
		args = append(args, baseSources(t, shim)...)
		args = append(args, filepath.Join(shim, "reduce.c"), filepath.Join(shim, "test", "reduce_test.c"),
			"-lm", "-ldl", "-lpthread", "-o", bin)
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
		}
		for _, s := range []string{"tree", "extremes", "hist", "omp", "owncost"} {
			t.Run(cc+"/"+s, func(t *testing.T) {
				out, err := exec.Command(bin, s).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "ok "+s) {
					t.Fatalf("%s: %v\n%s", s, err, out)
				}
			})
		}
	}
}
