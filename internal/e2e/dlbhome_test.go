package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 32: the DLB-compatible prefix (`popmon dlb-home DIR`) and DLB_ARGS
// honoured without popmon run (docs/coming-from-dlb.md). The validation
// programs (examples/dlbhome) carry the behaviour of DLB's functional TALP
// tests; DLB's own pytest files are run by hand (docs/coming-from-dlb.md).

var (
	dlbHomeMu sync.Mutex
	dlbHomes  = map[string]string{} // impl name -> prefix
)

// dlbHome lays out a prefix for impl once (popmon dlb-home --mpicc).
func dlbHome(t *testing.T, impl mpiImpl) string {
	t.Helper()
	dlbHomeMu.Lock()
	defer dlbHomeMu.Unlock()
	if d, ok := dlbHomes[impl.name]; ok {
		return d
	}
	dir := filepath.Join(filepath.Dir(popmonBin), "dlbhome-"+impl.name)
	so, se, code := popmon(t, nil, "dlb-home", "--mpicc", impl.mpicc, dir)
	if code != 0 || strings.TrimSpace(so) != dir {
		t.Fatalf("popmon dlb-home: exit %d, stdout %q\nstderr:\n%s", code, so, se)
	}
	dlbHomes[impl.name] = dir
	return dir
}

// buildAgainst compiles src (examples/dlbhome) with compiler against the
// prefix, as a DLB user does: -I$DLB_HOME/include -L$DLB_HOME/lib -ldlb.
func buildAgainst(t *testing.T, home, compiler, src string, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(src, filepath.Ext(src)))
	args := append([]string{"-O1", "-o", out, filepath.Join(repoRoot, "examples", "dlbhome", src),
		"-I" + filepath.Join(home, "include"), "-L" + filepath.Join(home, "lib"), "-ldlb",
		"-Wl,-rpath," + filepath.Join(home, "lib")}, extra...)
	if b, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, b)
	}
	return out
}

// talpFile reads a TALP JSON file into its regions' keys.
type talpFile struct {
	Resources   map[string]float64            `json:"resources"`
	Application map[string]map[string]float64 `json:"Application"`
}

func readTALP(t *testing.T, path string) *talpFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f talpFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return &f
}

func (f *talpFile) region(t *testing.T, name string) map[string]float64 {
	t.Helper()
	r, ok := f.Application[name]
	if !ok {
		t.Fatalf("no region %q in the file (have %v)", name, f.Application)
	}
	return r
}

// talpNear checks got against want: rel relative (times) or abs absolute.
func talpNear(t *testing.T, what string, got, want, rel, abs float64) {
	t.Helper()
	tol := abs + rel*math.Abs(want)
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4g, want %.4g ± %.3g", what, got, want, tol)
	}
}

// withDLBArgs is the launcher of a job that preloads lib with DLB_ARGS by
// hand: Open MPI's -x, MPICH's -genv.
func withDLBArgs(impl mpiImpl, np int, lib, args string) []string {
	flag := "-x"
	if impl.name == "mpich" {
		flag = "-genv"
	}
	l := launch(impl, np)
	if flag == "-x" {
		return append(l, "-x", "LD_PRELOAD="+lib, "-x", "DLB_ARGS="+args)
	}
	return append(l, "-genv", "LD_PRELOAD", lib, "-genv", "DLB_ARGS", args)
}

// checkSendrecv checks the values DLB's tests/functional/talp/mpi expects
// (scaled by K) in the file of dlb_sendrecv or dlb_sendrecv_f, R = 1.
func checkSendrecv(t *testing.T, f *talpFile, k float64) {
	t.Helper()
	g := f.region(t, "Global")
	if f.Resources["numMpiRanks"] != 2 || g["numMpiRanks"] != 2 || g["numCpus"] != 2 || g["numOmpThreads"] != 2 {
		t.Errorf("resources %v, Global ranks %v CPUs %v threads %v", f.Resources, g["numMpiRanks"], g["numCpus"], g["numOmpThreads"])
	}
	// DLB counts MPI_Init and MPI_Finalize: (3 + 2R) * 2.
	if g["numMpiCalls"] != 10 {
		t.Errorf("Global numMpiCalls %v, want 10 (DLB's count: MPI_Init, MPI_Comm_rank, MPI_Finalize and 2 per rank)", g["numMpiCalls"])
	}
	ns := 1e9
	talpNear(t, "Global elapsed", g["elapsedTime"]/ns, 4*k, 0.10, 0.03)
	talpNear(t, "Global useful", g["usefulTime"]/ns, 5*k, 0.10, 0.03)
	talpNear(t, "Global MPI", g["mpiTime"]/ns, 3*k, 0.10, 0.03)
	talpNear(t, "parallel efficiency", g["parallelEfficiency"], 0.625, 0, 0.04)
	talpNear(t, "communication efficiency", g["mpiCommunicationEfficiency"], 0.75, 0, 0.04)
	talpNear(t, "load balance", g["mpiLoadBalance"], 5.0/6, 0, 0.04)
	a := f.region(t, "After")
	if a["numMeasurements"] != 2 || a["numMpiCalls"] != 4 || a["numOmpThreads"] != 2 || a["numMpiRanks"] != 2 {
		t.Errorf("After: measurements %v, MPI calls %v, threads %v, ranks %v; want 2, 4, 2, 2", a["numMeasurements"], a["numMpiCalls"], a["numOmpThreads"], a["numMpiRanks"])
	}
}

// TestDLBHomeLayout: the prefix has DLB's files; bin/dlb answers; the
// headers compile as C, C++ and Fortran.
func TestDLBHomeLayout(t *testing.T) {
	impl := impls(t)[0]
	home := dlbHome(t, impl)
	for _, f := range []string{"lib/libdlb.so", "lib/libdlb_mpi.so", "lib/libdlb_mpic.so", "lib/libdlb_mpif.so",
		"include/dlb.h", "include/dlb_talp.h", "include/dlb_drom.h", "include/dlb_errors.h", "include/dlb_types.h",
		"include/dlbf.h", "include/dlbf_talp.h", "include/dlbf_drom.h", "include/dlbf-errors.h", "bin/dlb", "libexec/popmon"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Error(err)
		}
	}
	if py, _ := filepath.Glob(filepath.Join(home, "lib", "python3.*", "site-packages", "dlb.py")); len(py) != 1 {
		t.Errorf("dlb.py: %v", py)
	}
	dlb := filepath.Join(home, "bin", "dlb")
	so, se, code := runCommand(t, 30*time.Second, nil, dlb, "--version")
	if code != 0 || !strings.HasPrefix(so, "DLB 3.7.0") {
		t.Errorf("dlb --version: exit %d %q %q", code, so, se)
	}
	so, se, code = runCommand(t, 30*time.Second, []string{"DLB_ARGS=--talp --talp-output-file=x.json"}, dlb, "-h")
	// Level 1 lists the options popmon acts on: LeWI's, DROM's and the
	// node barrier's among them, --mngo not.
	if code != 0 || !strings.Contains(so, "--talp-output-file           x.json") || !strings.Contains(so, "--lewi ") ||
		!strings.Contains(so, "--drom ") || !strings.Contains(so, "--barrier ") || strings.Contains(so, "--mngo") {
		t.Errorf("dlb -h: exit %d\n%s%s", code, so, se)
	}
	so, _, _ = runCommand(t, 30*time.Second, nil, dlb, "-hh")
	if !strings.Contains(so, "--lewi ") || !strings.Contains(so, "[not acted on]") {
		t.Errorf("dlb -hh:\n%s", so)
	}
	so, _, code = runCommand(t, 30*time.Second, nil, dlb, "-l")
	if code != 0 || !strings.Contains(so, "Process affinity: [") {
		t.Errorf("dlb -l: %q", so)
	}
	inc := "-I" + filepath.Join(home, "include")
	src := filepath.Join(t.TempDir(), "h.c")
	os.WriteFile(src, []byte("#ifdef __cplusplus\n#define _Static_assert static_assert\n#endif\n#include <dlb.h>\n#include <dlb_talp.h>\n#include <dlb_drom.h>\n_Static_assert(sizeof(dlb_pop_metrics_t) == 384, \"layout\");\n_Static_assert(DLB_ERR_NOLEWI == -17 && DLB_ERR_NOTALP == -16, \"codes\");\nint main(void) { return DLB_MonitoringRegionStart(DLB_GLOBAL_REGION) == 99; }\n"), 0o644)
	for _, cc := range [][]string{{"cc", "-std=c11", "-Wall", "-Wextra", "-Werror"}, {"c++", "-x", "c++", "-Wall", "-Werror"}} {
		if b, err := exec.Command(cc[0], append(cc[1:], inc, "-fsyntax-only", src)...).CombinedOutput(); err != nil {
			t.Errorf("%v: %v\n%s", cc, err, b)
		}
	}
}

// TestDLBHomeMPI: dlb_sendrecv (C) and dlb_sendrecv_f (Fortran), built
// against the prefix, run under plain mpirun with LD_PRELOAD and DLB_ARGS:
// rank 0 writes DLB's JSON at MPI_Finalize with DLB's values; it reads back
// with popmon report; the same program under popmon run gives the same
// counts and times; LeWI answers DLB's "not enabled" code, DLB_DROM_Attach
// DLB_SUCCESS.
func TestDLBHomeMPI(t *testing.T) {
	const k = 0.2
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			home := dlbHome(t, impl)
			lib := filepath.Join(home, "lib", "libdlb_mpi.so")
			fc := strings.Replace(impl.mpicc, "mpicc", "mpif90", 1)
			progs := []struct{ name, bin, want string }{
				{"C", buildAgainst(t, home, impl.mpicc, "dlb_sendrecv.c"), "ok lend -17 drom 0 version 3.7"},
			}
			if _, err := exec.LookPath(fc); err == nil {
				progs = append(progs, struct{ name, bin, want string }{"Fortran", buildAgainst(t, home, fc, "dlb_sendrecv_f.f90"), "ok lend -17"})
			}
			for _, p := range progs {
				t.Run(p.name, func(t *testing.T) {
					out := filepath.Join(t.TempDir(), "talp.json")
					argv := append(withDLBArgs(impl, 2, lib, "--talp --talp-output-file="+out), p.bin, fmt.Sprint(k*1000))
					so, se, code := runCommand(t, 2*time.Minute, nil, argv...)
					if code != 0 || strings.TrimSpace(so) != p.want {
						t.Fatalf("exit %d, stdout %q, want %q\nstderr:\n%s", code, so, p.want, se)
					}
					if strings.Contains(se, "popmon:") {
						t.Errorf("noise on stderr:\n%s", se)
					}
					f := readTALP(t, out)
					checkSendrecv(t, f, k)
					// popmon report reads it back (DLB's convention of
					// MPI_Init/MPI_Finalize taken out, put back on writing).
					so, se, code = popmon(t, nil, "report", "--format", "talp-json", out)
					if code != 0 {
						t.Fatalf("popmon report: exit %d\n%s", code, se)
					}
					back := filepath.Join(t.TempDir(), "back.json")
					os.WriteFile(back, []byte(so), 0o644)
					if b := readTALP(t, back); b.region(t, "Global")["numMpiCalls"] != 10 {
						t.Errorf("read back: numMpiCalls %v", b.region(t, "Global")["numMpiCalls"])
					}
					// The same run under popmon run.
					m, rso, rse, code := runPopmon(t, nil, []string{"--mpicc", impl.mpicc}, append(launch(impl, 2), p.bin, fmt.Sprint(k*1000))...)
					if code != 0 {
						t.Fatalf("popmon run: exit %d\n%s%s", code, rso, rse)
					}
					so, se, code = popmon(t, nil, "report", "--format", "talp-json", m)
					if code != 0 {
						t.Fatalf("popmon report: exit %d\n%s", code, se)
					}
					run := filepath.Join(t.TempDir(), "run.json")
					os.WriteFile(run, []byte(so), 0o644)
					r := readTALP(t, run)
					checkSendrecv(t, r, k)
					if p.name == "C" {
						// popmon run around the job script that preloads the
						// prefix: measured once (2 processes, not 4), and
						// DLB's file written as asked.
						out2 := filepath.Join(t.TempDir(), "talp2.json")
						argv := append(withDLBArgs(impl, 2, lib, "--talp --talp-output-file="+out2), p.bin, fmt.Sprint(k*1000))
						m2, rso, rse, code := runPopmon(t, nil, []string{"--mpicc", impl.mpicc}, argv...)
						if code != 0 {
							t.Fatalf("popmon run around the preloaded job: exit %d\n%s%s", code, rso, rse)
						}
						mm := readChecked(t, m2)
						if g, ok := mm.Global(); !ok || len(mm.Processes) != 2 || len(g.Processes) != 2 || g.Processes[0].Visits != 1 {
							t.Errorf("popmon run around the job: %d processes", len(mm.Processes))
						}
						checkSendrecv(t, readTALP(t, out2), k)
					}
					for _, key := range []string{"numMpiCalls", "numMeasurements", "numCpus", "numMpiRanks", "numOmpThreads"} {
						for _, reg := range []string{"Global", "After"} {
							if a, b := f.region(t, reg)[key], r.region(t, reg)[key]; a != b {
								t.Errorf("%s %s: %v preloaded by hand, %v under popmon run", reg, key, a, b)
							}
						}
					}
				})
			}
		})
	}
}

// TestDLBHomePython: a script written for DLB's Python module (import dlb:
// examples/python/talp.py), from the prefix's site-packages, under plain
// mpirun with the library preloaded: the TALP file has its region.
func TestDLBHomePython(t *testing.T) {
	py := pythonBin(t)
	impl := impls(t)[0]
	if impl.name != "openmpi" {
		t.Skip("Debian's mpi4py is built for Open MPI")
	}
	if err := exec.Command(py, "-c", "import mpi4py").Run(); err != nil {
		t.Skip("no mpi4py (apt-get install python3-mpi4py)")
	}
	home := dlbHome(t, impl)
	site, _ := filepath.Glob(filepath.Join(home, "lib", "python3.*", "site-packages"))
	if len(site) != 1 {
		t.Fatalf("site-packages: %v", site)
	}
	out := filepath.Join(t.TempDir(), "talp.json")
	argv := append(withDLBArgs(impl, 2, filepath.Join(home, "lib", "libdlb_mpi.so"), "--talp --talp-output-file="+out),
		"-x", "PYTHONPATH="+site[0]+":"+filepath.Join(repoRoot, "examples", "python"), "-x", "PYTHONDONTWRITEBYTECODE=1",
		py, pyScript("talp.py"), "mpi4py", "100", "2")
	so, se, code := runCommand(t, 2*time.Minute, nil, argv...)
	if code != 0 || !strings.Contains(so, "\nok") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
	f := readTALP(t, out)
	s := f.region(t, "solve")
	// 2 visits per rank; load balance (P+1)/(2P) = 0.75 (talp.py).
	if s["numMeasurements"] != 4 || s["numMpiRanks"] != 2 {
		t.Errorf("solve: %v measurements, %v ranks; want 4, 2", s["numMeasurements"], s["numMpiRanks"])
	}
	talpNear(t, "solve load balance", s["mpiLoadBalance"], 0.75, 0, 0.05)
	if _, se, code := popmon(t, nil, "report", out); code != 0 {
		t.Errorf("popmon report: exit %d\n%s", code, se)
	}
}

// TestDLBArgs: DLB_ARGS without popmon run in a program without MPI, the
// library preloaded (libdlb.so) as DLB's is: the output at exit in the
// format of the file's extension, the summary on stderr with --talp alone,
// --talp-region-select, the forms --opt, --opt=yes|no, --no-opt, and every
// option of DLB 3.7's table popmon does not act on named in one line.
func TestDLBArgs(t *testing.T) {
	impl := impls(t)[0]
	home := dlbHome(t, impl)
	lib := filepath.Join(home, "lib", "libdlb.so")
	bin := buildAgainst(t, home, "cc", "dlb_serial.c")
	dir := t.TempDir()
	run := func(t *testing.T, args string) (string, string) {
		t.Helper()
		so, se, code := runCommand(t, time.Minute, []string{"LD_PRELOAD=" + lib, "DLB_ARGS=" + args}, bin, "100")
		if code != 0 || strings.TrimSpace(so) != "ok" {
			t.Fatalf("DLB_ARGS=%q: exit %d, stdout %q\n%s", args, code, so, se)
		}
		return so, se
	}
	t.Run("json", func(t *testing.T) {
		out := filepath.Join(dir, "a.json")
		_, se := run(t, "--talp --talp-output-file="+out)
		f := readTALP(t, out)
		if f.Resources["numMpiRanks"] != 0 || f.region(t, "work")["numMeasurements"] != 2 || f.region(t, "skip")["numMeasurements"] != 1 {
			t.Errorf("file %+v", f)
		}
		talpNear(t, "work elapsed", f.region(t, "work")["elapsedTime"]/1e9, 0.2, 0.1, 0.02)
		talpNear(t, "Global elapsed", f.region(t, "Global")["elapsedTime"]/1e9, 0.3, 0.1, 0.03)
		if se != "" {
			t.Errorf("stderr: %q", se)
		}
		if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "popmon-dlb-*.json")); len(left) > 0 {
			t.Logf("temporary measurements left (other runs may be running): %v", left)
		}
	})
	t.Run("csv appends", func(t *testing.T) {
		out := filepath.Join(dir, "a.csv")
		run(t, "--talp --talp-output-file="+out)
		run(t, "--talp=mpi,openmp --talp-output-file="+out)
		b, _ := os.ReadFile(out)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		// One header, then Global, work, skip per run.
		if len(lines) != 7 || !strings.HasPrefix(lines[0], "name,numCpus,numOmpThreads,") || !strings.HasPrefix(lines[4], `"Global",`) {
			t.Errorf("csv:\n%s", b)
		}
	})
	t.Run("text", func(t *testing.T) {
		out := filepath.Join(dir, "a.txt")
		run(t, "--talp --talp-output-file="+out)
		b, _ := os.ReadFile(out)
		if !strings.Contains(string(b), "### Name:                                       work") || !strings.Contains(string(b), "### Number of measurements:                     2") {
			t.Errorf("text:\n%s", b)
		}
	})
	t.Run("summary", func(t *testing.T) {
		_, se := run(t, "--talp")
		if strings.Count(se, "Monitoring Region POP Metrics") != 3 || !strings.Contains(se, "Global") {
			t.Errorf("stderr:\n%s", se)
		}
	})
	t.Run("region select", func(t *testing.T) {
		out := filepath.Join(dir, "sel.json")
		_, se := run(t, "--talp --talp-region-select=exclude:skip --talp-output-file="+out)
		f := readTALP(t, out)
		if _, ok := f.Application["skip"]; ok || f.Application["work"] == nil || se != "" {
			t.Errorf("regions %v, stderr %q", f.Application, se)
		}
	})
	t.Run("no talp", func(t *testing.T) {
		for _, args := range []string{"--talp=none", "--no-talp", "--talp=no", "--lewi=no"} {
			wd := t.TempDir()
			so, se, code := runCommand(t, time.Minute, []string{"LD_PRELOAD=" + lib, "DLB_ARGS=" + args}, "sh", "-c", "cd "+wd+" && exec "+bin+" 50")
			ents, _ := os.ReadDir(wd)
			if code != 0 || strings.TrimSpace(so) != "ok" || se != "" || len(ents) != 0 {
				t.Errorf("DLB_ARGS=%q: exit %d, stdout %q, stderr %q, files %v", args, code, so, se, ents)
			}
		}
	})
	t.Run("not acted on", func(t *testing.T) {
		// Every option of DLB 3.7's table popmon does not act on, in the
		// forms --opt, --opt=yes, --no-opt, --opt=VALUE: one line names them.
		// (LeWI's --lewi, --lewi-keep-one-cpu and --lewi-mpi-calls, --drom,
		// --lewi-respect-cpuset (and its old name --lewi-respect-mask),
		// --lewi-max-parallelism, --lewi-affinity (but for its values none
		// and spread-ifempty), the
		// barrier's --barrier, --lewi-barrier and --lewi-barrier-select,
		// and --shm-key are acted on: docs/lewi.md, docs/drom.md,
		// docs/coming-from-dlb.md.)
		opts := []string{"--mngo", "--mode=async", "--instrument=none",
			"--instrument-counters", "--instrument-extrae-nthreads=4", "--lewi-mpi",
			"--lewi-affinity=spread-ifempty", "--lewi-ompt=lend", "--lewi-greedy=yes", "--lewi-warmup",
			"--lewi-color=1", "--mngo-mode=x", "--barrier-id=1", "--preinit-pid=1", "--ompt-thread-manager=omp4", "--plugin=p",
			"--debug-opts=x", "--shm-size-multiplier=2", "--talp-partial-output", "--talp-regions-per-proc=10",
			"--talp-gpu-backend=cupti", "--verbose-format=node", "--talp-model=hybrid-v1", "--talp-summary=process", "--no-ompt"}
		out := filepath.Join(dir, "n.json")
		acted := "--talp --talp-output-file=" + out + " --talp-openmp --talp-papi=yes --talp-external-profiler --quiet=no" +
			" --no-barrier --lewi-barrier=no --lewi-barrier-select=b --no-lewi-respect-cpuset --lewi-respect-mask=no --lewi-max-parallelism=2 --lewi-affinity=nearby-only --shm-key=k"
		_, se := run(t, acted+" "+strings.Join(opts, " ")+" --bogus")
		lines := strings.Split(strings.TrimSpace(se), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "popmon: DLB_ARGS: popmon does not act on ") {
			t.Fatalf("stderr:\n%s", se)
		}
		for _, o := range opts {
			if name := strings.TrimPrefix(strings.TrimPrefix(strings.SplitN(o, "=", 2)[0], "--"), "no-"); !strings.Contains(lines[0], name) {
				t.Errorf("%s not named in %q", o, lines[0])
			}
		}
		for _, o := range []string{"--no-barrier", "--lewi-barrier=", "--no-lewi-barrier", "--lewi-barrier-select", "respect-cpuset", "respect-mask", "max-parallelism", "nearby-only", "--shm-key"} {
			if strings.Contains(lines[0], o) {
				t.Errorf("%s (acted on) named in %q", o, lines[0])
			}
		}
		if !strings.Contains(lines[0], "not understood: --bogus (unknown)") {
			t.Errorf("--bogus not named: %q", lines[0])
		}
		for _, o := range []string{"--talp-openmp", "--talp-papi", "--talp-external-profiler", "--quiet"} {
			if strings.Contains(lines[0], o+" ") || strings.Contains(lines[0], o+",") {
				t.Errorf("honoured %s named: %q", o, lines[0])
			}
		}
		if f := readTALP(t, out); f.Application["work"] == nil {
			t.Errorf("no file with the options: %+v", f)
		}
		// --verbose: one more line, what popmon does.
		if _, se := run(t, "--talp --talp-output-file="+out+" --verbose=talp"); !strings.Contains(se, "popmon: DLB_ARGS: TALP on, output "+out) || strings.Count(se, "\n") != 1 {
			t.Errorf("--verbose: %q", se)
		}
		// --silent: not even that line.
		if _, se := run(t, "--talp --talp-output-file="+out+" --lewi --silent"); se != "" {
			t.Errorf("--silent: %q", se)
		}
	})
}
