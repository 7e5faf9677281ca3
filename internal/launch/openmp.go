package launch

import (
	"fmt"
	"os"
	"strings"

	"github.com/popmon/popmon/internal/binscan"
	"github.com/popmon/popmon/internal/fault"
)

// OpenMP modes of --openmp.
const (
	OpenMPAuto   = "auto"   // preload libomp for programs linked with GNU libgomp
	openmpLibomp = "libomp" // always preload LLVM's libomp
	openmpNative = "native" // use the program's own runtime (no OMPT with libgomp)
	openmpOff    = "off"    // do not measure OpenMP
)

// Variables popmon sets in the measured job's environment for the library.
const (
	envOpenMPMode = "POPMON_OPENMP_MODE" // the --openmp mode: auto, libomp, native or off
	envLibomp     = "POPMON_LIBOMP"      // LLVM's libomp, when popmon found it
)

// libompCandidates are where Debian and Ubuntu install LLVM's OpenMP runtime.
var libompCandidates = []string{
	"/usr/lib/x86_64-linux-gnu/libomp.so.5",
	"/usr/lib/aarch64-linux-gnu/libomp.so.5",
	"/usr/lib/llvm-19/lib/libomp.so.5", "/usr/lib/llvm-18/lib/libomp.so.5",
	"/usr/lib/llvm-17/lib/libomp.so.5", "/usr/lib/llvm-16/lib/libomp.so.5",
	"/usr/lib/llvm-15/lib/libomp.so.5", "/usr/lib/llvm-14/lib/libomp.so.5",
	"/usr/lib64/libomp.so", "/usr/local/lib/libomp.so",
}

// FindLibomp returns LLVM's libomp ($POPMON_LIBOMP first), or "".
func FindLibomp() string {
	p, _ := locateLibomp(os.Getenv(envLibomp), libompCandidates)
	return p
}

// locateLibomp returns LLVM's libomp: the user's choice (the value of
// POPMON_LIBOMP), which must be a file, or else the first candidate that
// exists; "" when there is none.
func locateLibomp(user string, candidates []string) (string, error) {
	if user != "" {
		st, err := os.Stat(user)
		if err != nil || !st.Mode().IsRegular() {
			return "", fault.Envf("POPMON_LIBOMP=%s is not a file: point it at LLVM's libomp (libomp.so.5) or unset it", user)
		}
		return user, nil
	}
	for _, p := range candidates {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", nil
}

// gompPrograms returns, for each application program of a scanned command
// line whose shared-library closure contains GNU libgomp, its name and how
// libgomp enters it ("lmp (lmp → liblammps.so.0 → libgomp.so.1)"). Fully
// static programs are left out: nothing can be preloaded into them.
func gompPrograms(res *binscan.Result) []string {
	if res == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range res.Programs {
		if p.Kind != binscan.KindELF || p.Static || p.Gomp == nil || seen[p.Path] {
			continue
		}
		seen[p.Path] = true
		out = append(out, fmt.Sprintf("%s (%s)", p.Arg, p.Gomp))
	}
	return out
}

// openmpEnv returns what to add to the preload list and the environment for
// the --openmp mode and command line, and a note for the user to print once
// (or ""). With --openmp=auto it reads the command line's programs with
// binscan (cmdline as popmon will start it, in popmon's own environment:
// the application behind a launcher is found through PATH, libgomp through
// the programs' shared libraries). The environment always has
// POPMON_OPENMP_MODE, and POPMON_LIBOMP when LLVM's libomp was found.
func openmpEnv(mode string, cmdline []string) (preload []string, env map[string]string, note string, err error) {
	var res *binscan.Result
	if (mode == OpenMPAuto || mode == "") && len(cmdline) > 0 {
		res, _ = binscan.Scan(cmdline, os.Environ()) // an empty command line is the only error
	}
	return OpenMPFor(mode, res)
}

// OpenMPFor is openmpEnv for a command line binscan has already read (nil:
// none); callers that scan the command line for other reasons pass their
// result instead of scanning twice.
func OpenMPFor(mode string, res *binscan.Result) (preload []string, env map[string]string, note string, err error) {
	switch mode {
	case OpenMPAuto, "", openmpLibomp, openmpNative, openmpOff:
	default:
		return nil, nil, "", fault.Usagef("unknown --openmp mode %q: use auto, libomp, native or off", mode)
	}
	if mode == "" {
		mode = OpenMPAuto
	}
	env = map[string]string{envOpenMPMode: mode}
	var lib string
	if mode == OpenMPAuto || mode == openmpLibomp {
		if lib, err = locateLibomp(os.Getenv(envLibomp), libompCandidates); err != nil {
			return nil, nil, "", err
		}
	} else {
		lib, _ = locateLibomp(os.Getenv(envLibomp), libompCandidates)
	}
	if lib != "" {
		env[envLibomp] = lib
	}
	switch mode {
	case openmpOff:
		env["POPMON_NO_OMPT"] = "1"
		return nil, env, "", nil
	case openmpNative:
		return nil, env, "", nil
	case openmpLibomp:
		if lib == "" {
			return nil, nil, "", fault.Envf("--openmp=libomp: LLVM's libomp not found: apt-get install libomp-dev, or set POPMON_LIBOMP")
		}
		return []string{lib}, env, "", nil
	}
	gomp := gompPrograms(res)
	if len(gomp) == 0 {
		return nil, env, "", nil
	}
	if lib == "" {
		return nil, env, fmt.Sprintf("popmon: %s uses GNU libgomp, which has no OMPT: OpenMP metrics will be missing (apt-get install libomp-dev, or set POPMON_LIBOMP, to measure them)",
			strings.Join(gomp, "; ")), nil
	}
	return []string{lib}, env, "", nil
}
