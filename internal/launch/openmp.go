package launch

import (
	"os"

	"github.com/popmon/popmon/internal/binscan"
	"github.com/popmon/popmon/internal/fault"
)

// OpenMP modes of --openmp.
const (
	OpenMPAuto   = "auto"   // measure the program's own runtime: OMPT on libomp, GOMP interposition on libgomp
	openmpLibomp = "libomp" // always preload LLVM's libomp (GCC's programs then run on it, measured through OMPT)
	openmpNative = "native" // the same as auto (before GOMP interposition it kept libgomp unmeasured)
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

// OpenMPFor returns what to add to the preload list and the environment for
// the --openmp mode, and a note for the user to print once (or "", always
// today). The program's own OpenMP runtime is measured where it is (auto,
// native): LLVM's libomp through OMPT, GNU libgomp through its entry points
// (the library's GOMP interposition); only --openmp=libomp swaps libgomp
// for LLVM's libomp. res, what binscan read of the command line, is not
// needed for that any more (nil is fine). The environment always has
// POPMON_OPENMP_MODE, and POPMON_LIBOMP when LLVM's libomp was found.
func OpenMPFor(mode string, res *binscan.Result) (preload []string, env map[string]string, note string, err error) {
	_ = res
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
	if mode == openmpLibomp {
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
	case openmpLibomp:
		if lib == "" {
			return nil, nil, "", fault.Envf("--openmp=libomp: LLVM's libomp not found: apt-get install libomp-dev, or set POPMON_LIBOMP")
		}
		return []string{lib}, env, "", nil
	}
	return nil, env, "", nil
}
