package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"

	"github.com/popmon/popmon/internal/outfile"
)

const importHelp = `
Converts an Extrae/Paraver trace (.prv or .prv.gz, with its .pcf and .row
next to it) into a popmon measurement, in one streaming pass:

  popmon import app.prv.gz                  writes app.json here (app.1.json, app.2.json, … if taken)
  popmon import -o run.json app.prv         refused if run.json exists (--force replaces it)
  popmon report run.json                    then every command works on it

'popmon report', 'scaling', 'pages' and 'check' also read traces directly
('popmon report app.prv.gz', 'popmon scaling traces/*.prv.gz'); import once
when you will read a large trace more than once.

Useful time is the Running state; MPI time is inside MPI call events; OpenMP
idle time is split into serialization, load imbalance and scheduling per
parallel region instance; instructions and cycles come from PAPI events.
The mapping is documented in docs/import.md.`

func importCmd(env *Env, args []string) error {
	fs := newFlags("import", "[-o OUT.json [--force]] [--skip-bad] [--app N] TRACE.prv[.gz]", importHelp, env.Stderr)
	output := fs.String("o", "", "write the measurement here (refused when it exists, unless --force); default: the trace's name with .json, in the current folder (numbered when taken)")
	force := fs.Bool("force", false, "with -o: replace an existing file (atomically)")
	skipBad := fs.Bool("skip-bad", false, "skip malformed lines, and import what a cut-short trace holds, instead of stopping (both recorded in the measurement's warnings)")
	app := fs.Int("app", 1, "the application (Paraver ptask) to import, for traces of several")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fault.Usagef("expected exactly one trace, got %d", fs.NArg())
	}
	path := fs.Arg(0)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && !paraver.IsTraceFile(path) {
		return fault.Inputf("%s is not a Paraver trace: give a .prv or .prv.gz file starting with #Paraver", path)
	}
	if *app < 1 {
		return fault.Usagef("--app %d: applications are numbered from 1", *app)
	}
	if *force && *output == "" {
		return fault.Usagef("--force needs -o FILE: without -o, import picks a new numbered name and never replaces a file")
	}
	// Check the output before the (long) import.
	var out *outfile.File
	target := *output
	if target != "" {
		var err error
		if out, err = outfile.Create(target, *force); err != nil {
			return err
		}
		defer out.Abort()
	} else {
		target = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".prv") + ".json"
		if err := outfile.CheckTarget(target, true); err != nil {
			return err
		}
	}
	start := time.Now()
	f, err := openRun(env, path, inputOptions{skipBad: *skipBad, app: *app})
	if err != nil {
		return err
	}
	if f.Kind != runs.KindParaver {
		return fault.Inputf("%s is not a Paraver trace: give a .prv or .prv.gz file starting with #Paraver", path)
	}
	m := f.Measurement
	var name string
	if out != nil {
		if err := measure.Write(out, m); err != nil {
			return fault.Failf("writing %s: %v", target, err)
		}
		if err := out.Commit(); err != nil {
			return err
		}
		name = target
	} else if name, err = writeNumbered(m, target); err != nil {
		return fault.Failf("writing the measurement: %v", err)
	}
	threads := 0
	for _, p := range m.Processes {
		threads += p.CPUs
	}
	fmt.Fprintf(env.Stderr, "popmon: imported %s (%d processes, %d CPUs, %s of run time) in %.1f s → %s\n",
		path, len(m.Processes), threads, fmtSeconds(m.Regions[0]), time.Since(start).Seconds(), name)
	if in := m.IdealNetwork; in != nil {
		fmt.Fprintf(env.Stderr, "popmon: ideal-network replay: %.2f s (useful max %.2f s): serialisation and transfer in popmon report --model pop-additive\n",
			float64(in.RuntimeNS)/1e9, float64(in.UsefulMaxNS)/1e9)
	}
	fmt.Fprintf(env.Stderr, "popmon: next: popmon report %s\n", name)
	return nil
}

// fmtSeconds returns the Global region's elapsed time in seconds.
func fmtSeconds(g measure.Region) string {
	var e int64
	for _, a := range g.Processes {
		e = max(e, a.ElapsedNS)
	}
	return units.FixedSeconds(e, 2)
}

// writeNumbered writes m to a temporary file next to target, then
// publishes it under target or its next numbered name (outfile.PublishNumbered).
func writeNumbered(m *measure.Measurement, target string) (string, error) {
	return outfile.WriteNumbered(m, target, 0o644, ".popmon-import-*.json")
}
