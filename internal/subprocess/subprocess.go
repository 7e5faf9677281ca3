// Package subprocess starts the programs popmon runs for its own purposes:
// the MPI compiler wrapper and the compiler behind it (the library's build
// and its identity), the library's load test and probes. Each gets the
// user's environment without what popmon adds to a measured job's: no
// libpopmon in LD_PRELOAD or CUDA_INJECTION64_PATH, and none of the
// variables that tie a process to a measured run (SessionVars).
//
// Why here, and not in the library: `popmon exec` runs inside the job of
// `popmon run -- mpirun ... popmon exec -- APP`, whose environment carries
// the library and the session folder; an mpicc --version it ran to find its
// library was measured as a serial program and published as the run's
// measurement (popmon-mpicc-DATE.json). Only popmon knows which processes
// are its own: the library sees an mpicc, a gcc or a probe exactly as it
// sees a user's job script compiling its program, and any rule it could
// apply (names, the parent process) would either miss popmon's helpers or
// hide the user's programs. So every program popmon starts for itself goes
// through Command, and TestOnlyHere keeps it that way: the one process
// popmon starts with its library on purpose is the user's (cli's run and
// exec).
package subprocess

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// SessionVars are the variables that tie a process to a measured run:
// where its measurement, live file and trace go, and which popmon
// supervises it. A process that carries them writes into that run.
var SessionVars = []string{
	"POPMON_SESSION", "POPMON_OUTPUT", "POPMON_OUTPUT_FORCE", "POPMON_PID", "POPMON_LIVE_DIR",
	"POPMON_BIN", "POPMON_TRACE", "POPMON_TRACE_DIR", "POPMON_TRACE_BUFFER",
}

// Command is exec.CommandContext with the environment Clean(os.Environ()):
// a program popmon runs for itself. A caller that needs more (a probe that
// preloads the library on purpose) appends to cmd.Env.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = Clean(os.Environ())
	return cmd
}

// Clean returns env ("NAME=value" entries) without popmon's library in
// LD_PRELOAD (entries named libpopmon*; the others stay, in their order;
// an LD_PRELOAD left empty goes), without CUDA_INJECTION64_PATH when it
// names popmon's library, and without SessionVars. The user's own POPMON_*
// settings (POPMON_COUNTERS, POPMON_CACHE_DIR, ...) stay: the library's
// probes report what they find with them.
func Clean(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "LD_PRELOAD":
			if rest, changed := withoutLibrary(value); !changed {
				out = append(out, kv)
			} else if rest != "" {
				out = append(out, "LD_PRELOAD="+rest)
			}
		case name == "CUDA_INJECTION64_PATH" && isLibrary(value):
		case slices.Contains(SessionVars, name):
		default:
			out = append(out, kv)
		}
	}
	return out
}

// withoutLibrary is an LD_PRELOAD value without popmon's library, and
// whether it had it. ld.so splits LD_PRELOAD at colons and blanks.
func withoutLibrary(preload string) (string, bool) {
	var keep []string
	changed := false
	for _, l := range strings.FieldsFunc(preload, func(r rune) bool { return r == ':' || r == ' ' || r == '\t' }) {
		if isLibrary(l) {
			changed = true
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, ":"), changed
}

// isLibrary says whether path names popmon's measurement library (as
// binscan recognises it: a file named libpopmon*).
func isLibrary(path string) bool {
	return strings.HasPrefix(filepath.Base(strings.TrimSpace(path)), "libpopmon")
}
