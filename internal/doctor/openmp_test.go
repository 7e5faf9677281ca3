package doctor

import (
	"strings"
	"testing"
)

// TestOpenMPCheck: doctor says which runtime is measured how, and never
// fails for a missing one.
func TestOpenMPCheck(t *testing.T) {
	cases := []struct {
		name, libomp, libgomp string
		want, not             []string
		fix                   bool
	}{
		{"both", "/l/libomp.so.5", "/l/libgomp.so.1",
			[]string{"GNU libgomp /l/libgomp.so.1: GCC programs measured on it in place (GOMP interposition)", "LLVM libomp /l/libomp.so.5: clang programs measured through OMPT"},
			[]string{"needs"}, false},
		{"libgomp only", "", "/l/libgomp.so.1",
			[]string{"in place (GOMP interposition)", "--openmp=libomp needs LLVM's libomp"}, []string{"OMPT"}, true},
		{"libomp only", "/l/libomp.so.5", "", []string{"through OMPT"}, []string{"libgomp"}, false},
		{"none", "", "", []string{"no OpenMP runtime found", "GOMP interposition on libgomp"}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := openmpCheck(c.libomp, c.libgomp)
			if !got.ok || got.warn {
				t.Errorf("ok %v warn %v, want ok without warning", got.ok, got.warn)
			}
			for _, w := range c.want {
				if !strings.Contains(got.detail, w) {
					t.Errorf("detail %q lacks %q", got.detail, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(got.detail, w) {
					t.Errorf("detail %q has %q", got.detail, w)
				}
			}
			if (got.fix != "") != c.fix {
				t.Errorf("fix %q, want one: %v", got.fix, c.fix)
			}
		})
	}
}
