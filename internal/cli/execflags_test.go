package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/binscan"
)

// TestExecFlagsKnownToBinscan: binscan reads `popmon exec [options] --
// APP` inside popmon run's command line to find the application, and must
// know which of exec's options take no value (Go's flag package prints
// those without a type in the usage).
func TestExecFlagsKnownToBinscan(t *testing.T) {
	var errb bytes.Buffer
	Main([]string{"exec", "-h"}, &Env{Stdout: &bytes.Buffer{}, Stderr: &errb})
	var bools, all []string
	for _, line := range strings.Split(errb.String(), "\n") {
		if !strings.HasPrefix(line, "  -") {
			continue
		}
		f := strings.Fields(line)
		all = append(all, f[0])
		if len(f) == 1 {
			bools = append(bools, strings.TrimPrefix(f[0], "-"))
		}
	}
	if len(all) < 5 {
		t.Fatalf("read %d options from popmon exec -h:\n%s", len(all), errb.String())
	}
	for _, b := range bools {
		if !slices.Contains(binscan.PopmonExecBoolFlags, b) {
			t.Errorf("popmon exec's -%s takes no value, but binscan.PopmonExecBoolFlags lacks it: it would take the program for its value", b)
		}
	}
	for _, b := range binscan.PopmonExecBoolFlags {
		if b != "h" && b != "help" && !slices.Contains(bools, b) {
			t.Errorf("binscan.PopmonExecBoolFlags has %s, which popmon exec does not have as an option without value (%v)", b, all)
		}
	}
}
