// Package launch builds what a measured job is launched with: the
// measurement library for its MPI (Build), and its environment
// (Environment): LD_PRELOAD, LLVM's libomp where the program's OpenMP
// runtime has no OMPT, the Python modules, CUDA's injection, the POPMON_*
// options of --openmp, --counters, --gpu, --max-process-records and the
// version-control state, forwarded by Open MPI's launcher to every node.
package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/popmon/popmon/internal/binscan"
	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/shimbuild"
)

// Options are the options of popmon run, exec and build that shape the
// launch (their flags: --mpicc, --no-mpi, --openmp, --counters, --gpu,
// --git-*, --max-process-records).
type Options struct {
	MPICC    string
	NoMPI    bool
	OpenMP   string
	Counters string
	GPU      string
	// GPUCounters is --gpu-counters: auto, on, off ("" leaves the
	// library's default: $POPMON_GPU_COUNTERS, else auto).
	GPUCounters string
	GitCommit   string
	GitBranch   string
	GitTime     string
	Records     string
	// DROM is --drom: the job's processes register their CPUs for popmon
	// taskset and DLB's DROM calls (POPMON_DROM=1, docs/drom.md).
	DROM bool
	// Lewi is --lewi and its options.
	Lewi Lewi
}

// gitEnv returns the POPMON_GIT_* variables through which the library
// records the version-control state: the flags, else the CI environment.
func (m *Options) gitEnv(getenv func(string) string) map[string]string {
	g := runs.GitFromEnv(getenv)
	if m.GitCommit != "" {
		g = runs.Git{Commit: m.GitCommit, Branch: m.GitBranch, Timestamp: m.GitTime}
	}
	if m.GitBranch != "" {
		g.Branch = m.GitBranch
	}
	if m.GitTime != "" {
		g.Timestamp = m.GitTime
	}
	if g.Commit == "" {
		return nil
	}
	out := map[string]string{"POPMON_GIT_COMMIT": g.Commit}
	if g.Branch != "" {
		out["POPMON_GIT_BRANCH"] = g.Branch
	}
	if g.Timestamp != "" {
		out["POPMON_GIT_TIMESTAMP"] = g.Timestamp
	}
	if g.DefaultBranch != "" {
		out["POPMON_GIT_DEFAULT_BRANCH"] = g.DefaultBranch
	}
	if g.IsMergeRequest {
		out["POPMON_GIT_MERGE_REQUEST"] = "1"
	}
	return out
}

// Environment returns the measured command's environment: the library (and
// LLVM's libomp where needed) preloaded first, popmon's Python modules
// first on PYTHONPATH, set added, drop removed, and the variables popmon
// sets forwarded to every node by an Open MPI launcher. note says something
// worth printing once ("" when nothing): about OpenMP, or that the Python
// modules could not be placed.
func (m *Options) Environment(built *shimbuild.Library, scan *binscan.Result, set map[string]string, drop []string) (environ []string, note string, err error) {
	lib := built.Path
	extra, env, note, err := OpenMPFor(m.OpenMP, scan)
	if err != nil {
		return nil, "", err
	}
	// `import popmon` and `import dlb` in every Python program of the job
	// (docs/python.md): the modules travel in the binary like the
	// library's sources and are kept next to the library.
	if py, err := shimbuild.PythonDir(built.Cache); err == nil {
		set["PYTHONPATH"] = shimbuild.PythonPath(py, os.Getenv("PYTHONPATH"))
	} else {
		msg := fmt.Sprintf("popmon: cannot place popmon's Python modules: %v: `import popmon` and `import dlb` fail in this job", err)
		if note != "" {
			note += "\n"
		}
		note += msg
	}
	for k, v := range env {
		set[k] = v
	}
	if m.Records != "" {
		if err := CheckProcessRecords(m.Records); err != nil {
			return nil, "", err
		}
		set["POPMON_MAX_PROCESS_RECORDS"] = m.Records
	}
	if m.DROM {
		set["POPMON_DROM"] = "1"
	}
	if err := m.Lewi.lewiEnv(set, os.Getenv); err != nil {
		return nil, "", err
	}
	if err := countersEnv(m.Counters, set); err != nil {
		return nil, "", err
	}
	if err := gpuEnv(m.GPU, lib, set, os.Getenv); err != nil {
		return nil, "", err
	}
	if err := gpuCountersEnv(m.GPUCounters, set); err != nil {
		return nil, "", err
	}
	for k, v := range m.gitEnv(os.Getenv) {
		set[k] = v
	}
	if JobMPI(scan) == binscan.OpenMPI {
		forwardOpenMPI(os.Getenv("OMPI_MCA_mca_base_env_list"), set)
	}
	return measuredEnv(os.Environ(), strings.Join(append([]string{lib}, extra...), ":"), set, drop), note, nil
}

// forwardOpenMPI makes Open MPI's launcher pass LD_PRELOAD and popmon's
// variables on to the ranks it starts on other nodes (what `mpirun -x VAR`
// does; Open MPI passes only the OMPI_* variables by default). MPICH's
// Hydra and Slurm's srun pass the whole environment on by default.
func forwardOpenMPI(current string, set map[string]string) {
	names := []string{"LD_PRELOAD"}
	for k := range set {
		if k != "OMPI_MCA_mca_base_env_list" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	have := map[string]bool{}
	var list []string
	if current != "" {
		for _, e := range strings.Split(current, ";") {
			if e == "" {
				continue
			}
			name, _, _ := strings.Cut(e, "=")
			have[name] = true
			list = append(list, e)
		}
	}
	for _, n := range names {
		if !have[n] {
			list = append(list, n)
		}
	}
	set["OMPI_MCA_mca_base_env_list"] = strings.Join(list, ";")
}

// OpenMPIExportArgs adapts an Open MPI launch whose command line exports
// variables with -x: Open MPI refuses -x together with
// OMPI_MCA_mca_base_env_list (forwardOpenMPI), so popmon's variables are
// then given as -x NAME words right after the launcher instead, and the
// list leaves the environment. Other command lines, and a list the user
// had set already (whose mix with -x Open MPI refuses anyway), are kept.
func OpenMPIExportArgs(argv []string, scan *binscan.Result, environ []string, userList string) ([]string, []string) {
	if scan == nil || len(scan.Launchers) == 0 || scan.Launchers[0].MPI != binscan.OpenMPI || userList != "" {
		return argv, environ
	}
	at := -1
	for i, w := range argv {
		if w == scan.Launchers[0].Arg {
			at = i
			break
		}
	}
	if at < 0 || !slices.Contains(argv[at+1:], "-x") {
		return argv, environ
	}
	const key = "OMPI_MCA_mca_base_env_list="
	var list string
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		if strings.HasPrefix(kv, key) {
			list = strings.TrimPrefix(kv, key)
			continue
		}
		env = append(env, kv)
	}
	if list == "" {
		return argv, environ
	}
	out := append([]string{}, argv[:at+1]...)
	for _, name := range strings.Split(list, ";") {
		if name != "" {
			out = append(out, "-x", name)
		}
	}
	return append(out, argv[at+1:]...), env
}

// measuredEnv returns environ with lib (a colon-separated list, popmon's
// library first) first in LD_PRELOAD, set added and the keys in drop
// removed. Libraries already in LD_PRELOAD stay after popmon's, in their
// order: a PMPI tool there then sees every MPI call too (the library
// chains to it), where before popmon it would hide them from popmon.
func measuredEnv(environ []string, lib string, set map[string]string, drop []string) []string {
	out := make([]string, 0, len(environ)+len(set)+1)
	ours := strings.Split(lib, ":")
	preload := append([]string{}, ours...)
	isOurs := map[string]bool{}
	for _, l := range ours {
		isOurs[l] = true
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if k == "LD_PRELOAD" {
			// ld.so splits LD_PRELOAD at colons and blanks.
			for _, l := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' || r == '\t' }) {
				if !isOurs[l] {
					preload = append(preload, l)
				}
			}
			continue
		}
		if _, ok := set[k]; ok {
			continue
		}
		skip := false
		for _, d := range drop {
			skip = skip || k == d
		}
		if !skip {
			out = append(out, kv)
		}
	}
	out = append(out, "LD_PRELOAD="+strings.Join(preload, ":"))
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+set[k])
	}
	return out
}

// JobMPI is the MPI the scanned command line runs (binscan.NoMPI when it
// cannot tell or runs none).
func JobMPI(scan *binscan.Result) binscan.MPI {
	if scan == nil {
		return binscan.NoMPI
	}
	m, _ := scan.MPI()
	return m
}

// Build returns the measurement library for the job: built with the MPI
// compiler wrapper the user names (--mpicc, $POPMON_MPICC), else with the
// wrapper of the MPI the job runs (the launcher's, or the one the program
// is linked with), else with mpicc. A library built for another MPI than
// the job's would crash it: that is refused before the launch (and the
// library itself stays inert if it happens anyway).
func (m *Options) Build(ctx context.Context, stderr io.Writer, scan *binscan.Result) (*shimbuild.Library, error) {
	job := JobMPI(scan)
	family := mpiFamily(job)
	choice := shimbuild.ChooseMPICC(m.MPICC, family, m.NoMPI)
	if len(choice.Try) == 0 {
		// A compute node without compilers: the library that
		// `popmon build` put into the (shared) cache serves.
		if lib, err := shimbuild.FindBuilt(shimbuild.Options{MPIFamily: family}); err == nil {
			return lib, nil
		}
		return nil, fault.Envf("the job runs %s (%s) but no MPI compiler wrapper of it is installed (%s) and the library cache holds no library built for it by this popmon: install its development package, pass --mpicc, or run 'popmon build --mpicc WRAPPER' where one is installed, with the same cache (POPMON_CACHE_DIR)",
			job, jobMPIHow(scan), strings.Join(choice.Family, ", "))
	}
	var lastErr error
	for _, mpicc := range choice.Try {
		lib, err := shimbuild.Build(ctx, shimbuild.Options{MPICC: mpicc, NoMPI: m.NoMPI, Log: stderr, MPIFamily: family})
		if err != nil {
			if errors.Is(err, shimbuild.ErrNoMPICC) {
				return nil, fault.Envf("%v (or --no-mpi for a program without MPI)", err)
			}
			return nil, &fault.Error{Kind: fault.Env, Err: err}
		}
		built := shimbuild.LibraryFamily(lib.MPI)
		if m.NoMPI || family == "" || built == "" || built == family {
			return lib, nil
		}
		lastErr = fault.Envf("the job runs %s (%s), but %s builds the measurement library for %s: pass --mpicc with the compiler wrapper of %s (e.g. %s)",
			job, jobMPIHow(scan), lib.Compiler, built, job, strings.Join(choice.Family, " or "))
		if choice.Explicit {
			return nil, lastErr
		}
	}
	return nil, lastErr
}

// mpiFamily is how the descriptions of libraries built for job's MPI
// start (shimbuild.Options.MPIFamily, shimbuild.LibraryFamily): the
// family's name; empty when the job's MPI is not known.
func mpiFamily(job binscan.MPI) string {
	if job == binscan.OpenMPI || job == binscan.MPICH {
		return string(job)
	}
	return ""
}

func jobMPIHow(scan *binscan.Result) string {
	_, how := scan.MPI()
	return how
}

// ScanCommand reads what a command line will run (binscan), nil when it
// cannot.
func ScanCommand(argv []string) *binscan.Result {
	if len(argv) == 0 {
		return nil
	}
	res, err := binscan.Scan(argv, os.Environ())
	if err != nil {
		return nil
	}
	return res
}

// Refusals are the reasons binscan found why the programs of a command line
// cannot be measured at all (fully static, MPI linked statically), one
// sentence each.
func Refusals(scan *binscan.Result) []string {
	if scan == nil {
		return nil
	}
	var out []string
	for _, p := range scan.Programs {
		if p.Kind != binscan.KindELF {
			continue
		}
		if p.Static {
			out = append(out, fmt.Sprintf("%s is a fully static executable: LD_PRELOAD cannot load popmon into it, so nothing is measured; link it dynamically", p.Arg))
		} else if p.StaticMPI != "" {
			out = append(out, fmt.Sprintf("the program's MPI calls cannot reach popmon: MPI is linked statically into %s; relink it with the shared MPI library (mpicc without -static)", p.StaticMPI))
		}
	}
	return out
}
