package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/popmon/popmon/internal/binscan"
)

// execOutputs prints the report of each measurement a `popmon exec -o
// FILE` in popmon run's job wrote during the run (exec's explicit file
// wins over run's session folder, so run has none of its own; the
// library said where it wrote it), and returns how many there were.
// Without it, run said that no measurement was written.
func execOutputs(env *Env, scan *binscan.Result, since time.Time, format, model string) int {
	if scan == nil {
		return 0
	}
	seen := map[string]bool{}
	n := 0
	for _, p := range scan.Programs {
		f := p.ExecOutput
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		// File systems with whole-second times: a file of this second counts.
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() || st.ModTime().Before(since.Truncate(time.Second)) {
			continue
		}
		n++
		if format == "none" {
			continue
		}
		if err := renderFile(env, env.Stderr, f, format, reportOptions{model: model}); err != nil {
			fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
		}
	}
	return n
}
