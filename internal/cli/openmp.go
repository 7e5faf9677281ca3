package cli

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// OpenMP modes of --openmp.
const (
	openmpAuto   = "auto"   // preload libomp for programs linked with GNU libgomp
	openmpLibomp = "libomp" // always preload LLVM's libomp
	openmpNative = "native" // use the program's own runtime (no OMPT with libgomp)
	openmpOff    = "off"    // do not measure OpenMP
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

// findLibomp returns LLVM's libomp ($POPMON_LIBOMP first), or "".
func findLibomp() string {
	if p := os.Getenv("POPMON_LIBOMP"); p != "" {
		return p
	}
	for _, p := range libompCandidates {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// usesLibgomp reports whether the ELF file at path is linked with GNU
// libgomp.
func usesLibgomp(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return false
	}
	for _, l := range libs {
		if strings.HasPrefix(l, "libgomp.so") {
			return true
		}
	}
	return false
}

// gompPrograms returns the programs of a command line (the command and any
// argument naming an executable file, e.g. the application behind mpirun)
// that are linked with libgomp.
func gompPrograms(cmdline []string) []string {
	var out []string
	for i, a := range cmdline {
		p := a
		if i == 0 {
			if lp, err := exec.LookPath(a); err == nil {
				p = lp
			}
		}
		if strings.HasPrefix(p, "-") {
			continue
		}
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		if usesLibgomp(p) {
			out = append(out, filepath.Base(p))
		}
	}
	return out
}

// openmpEnv returns what to add to the preload list and the environment for
// the --openmp mode and command line, and a note for the user (or "").
func openmpEnv(mode string, cmdline []string) (preload []string, env map[string]string, note string, err error) {
	env = map[string]string{}
	switch mode {
	case openmpOff:
		env["POPMON_NO_OMPT"] = "1"
		return nil, env, "", nil
	case openmpNative:
		return nil, env, "", nil
	case openmpLibomp:
		lib := findLibomp()
		if lib == "" {
			return nil, nil, "", fail(ExitEnv, "--openmp=libomp: LLVM's libomp not found: apt-get install libomp-dev, or set POPMON_LIBOMP")
		}
		return []string{lib}, env, "", nil
	case openmpAuto, "":
		gomp := gompPrograms(cmdline)
		if len(gomp) == 0 {
			return nil, env, "", nil
		}
		lib := findLibomp()
		if lib == "" {
			return nil, env, fmt.Sprintf("popmon: %s uses GNU libgomp, which has no OMPT: OpenMP metrics will be missing (apt-get install libomp-dev to measure them)", strings.Join(gomp, ", ")), nil
		}
		return []string{lib}, env, "", nil
	default:
		return nil, nil, "", fail(ExitUsage, "unknown --openmp mode %q: use auto, libomp, native or off", mode)
	}
}
