package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// GCC's OpenMP measured in place (issue 31, docs/openmp-regions.md): a
// program built with gcc -fopenmp runs on its own GNU libgomp, measured by
// interposing libgomp's entry points (shim/gomp.c), and gives the metrics
// it gives on LLVM's libomp (--openmp=libomp, measured through OMPT) within
// gompTol, every efficiency of every model.

const gompTol = 0.02

// gompBuilt returns the gcc build of an example, or skips.
func gompBuilt(t *testing.T, dir, prog string) string {
	t.Helper()
	p := filepath.Join(dir, prog+".gcc")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s.gcc was not built (gcc -fopenmp)", prog)
	}
	return p
}

// needLibomp skips when LLVM's libomp, the runtime compared against, is
// missing.
func needLibomp(t *testing.T) {
	t.Helper()
	if findFile("/usr/lib/x86_64-linux-gnu/libomp.so.5") == "" && findFile("/usr/lib/llvm-*/lib/libomp.so.5") == "" {
		t.Skip("LLVM libomp not installed (apt-get install libomp-dev): nothing to compare libgomp with")
	}
}

// gompPair measures argv on libgomp in place (the default) and on libomp,
// checks how each was measured, and returns both measurements and reports.
func gompPair(t *testing.T, env, flags []string, argv ...string) (gm, lm *measure.Measurement, g, l map[pop.Model]*pop.Report) {
	t.Helper()
	gm, g, _ = ompRun(t, env, flags, argv...)
	if gm.OpenMP.Runtime != "GNU libgomp" || gm.OpenMP.Method != "GOMP interposition" {
		t.Errorf("default run: openmp %+v, want GNU libgomp measured by GOMP interposition", gm.OpenMP)
	}
	lm, l, _ = ompRun(t, env, append([]string{"--openmp", "libomp"}, flags...), argv...)
	if !strings.Contains(lm.OpenMP.Runtime, "LLVM") || lm.OpenMP.Method != "OMPT" {
		t.Errorf("--openmp=libomp: openmp %+v, want LLVM's libomp measured by OMPT", lm.OpenMP)
	}
	return gm, lm, g, l
}

// sameMetrics asserts that every efficiency both runs measured in region
// agrees within gompTol, in every model, and that there are some.
func sameMetrics(t *testing.T, g, l map[pop.Model]*pop.Report, regions ...string) {
	t.Helper()
	for _, model := range []pop.Model{pop.ModelTALP, pop.ModelPOPHybrid, pop.ModelPOPAdditive} {
		for _, region := range regions {
			rg, ok1 := g[model].Region(region)
			rl, ok2 := l[model].Region(region)
			if !ok1 || !ok2 {
				t.Errorf("%s: region %s: libgomp %v, libomp %v", model, region, ok1, ok2)
				continue
			}
			n := 0
			for _, m := range rg.Metrics {
				if !m.Measured() || m.Kind != pop.KindEfficiency {
					continue
				}
				o, ok := rl.Metric(m.ID)
				if !ok || !o.Measured() {
					t.Errorf("%s %s: %s measured on libgomp (%.3f), not on libomp", model, region, m.ID, m.Value)
					continue
				}
				n++
				if d := m.Value - o.Value; d > gompTol || d < -gompTol {
					t.Errorf("%s %s: %s = %.4f on libgomp, %.4f on libomp (± %.2f)", model, region, m.ID, m.Value, o.Value, gompTol)
				}
			}
			if n < 3 {
				t.Errorf("%s %s: only %d efficiencies compared", model, region, n)
			}
		}
	}
}

// TestGompOpenMPOnly: the OpenMP-only designed programs (load imbalance,
// serialization) on libgomp in place and on libomp, and their designed
// values on libgomp.
func TestGompOpenMPOnly(t *testing.T) {
	needLibomp(t)
	impl := impls(t)[0]
	dir := examples(t, impl)
	cases := []struct {
		prog string
		args []string
		want []want // on libgomp
	}{
		{"omp_imbalance", nil, []want{
			{pop.ModelTALP, "Global", "parallel_efficiency", 0.625},
			{pop.ModelTALP, "Global", "omp_load_balance", 0.625},
			{pop.ModelTALP, "Global", "omp_serialization_efficiency", 1},
			{pop.ModelTALP, "Global", "omp_scheduling_efficiency", 1},
		}},
		{"omp_serial", []string{"100", "100", "2"}, []want{
			{pop.ModelTALP, "Global", "parallel_efficiency", 0.625},
			{pop.ModelTALP, "Global", "omp_serialization_efficiency", 0.625},
			{pop.ModelTALP, "Global", "omp_load_balance", 1},
		}},
	}
	for _, c := range cases {
		t.Run(c.prog, func(t *testing.T) {
			prog := gompBuilt(t, dir, c.prog)
			gm, lm, g, l := gompPair(t, []string{"OMP_NUM_THREADS=4"}, []string{"--no-mpi"}, append([]string{prog}, c.args...)...)
			checkAll(t, g, "libgomp", c.want)
			sameMetrics(t, g, l, "Global")
			if gm.OpenMP.MaxThreads != 4 || lm.OpenMP.MaxThreads != 4 {
				t.Errorf("max_threads: libgomp %d, libomp %d, want 4", gm.OpenMP.MaxThreads, lm.OpenMP.MaxThreads)
			}
			gg, _ := gm.Global()
			lg, _ := lm.Global()
			if gg.Processes[0].OMPParallels != 2 || lg.Processes[0].OMPParallels != 2 {
				t.Errorf("parallel regions: libgomp %d, libomp %d, want 2", gg.Processes[0].OMPParallels, lg.Processes[0].OMPParallels)
			}
			if len(gm.OMPRegions) != 1 || gm.OMPRegions[0].Executions != 2 || gm.OMPRegions[0].Threads != 4 {
				t.Errorf("libgomp's parallel constructs %+v, want one of 2 executions, 4 threads", gm.OMPRegions)
			}
		})
	}
}

// TestGompHybrid: hybrid programs (the primary waits in MPI while its
// workers idle; a num_threads clause larger than OMP_NUM_THREADS) with
// both MPIs, on libgomp in place and on libomp. (Their designed values on
// libgomp are TestHybridMPIWorkerIdle's and TestNumThreadsOverride's gcc
// cases, which run in place now.)
func TestGompHybrid(t *testing.T) {
	needLibomp(t)
	for _, impl := range impls(t) {
		dir := examples(t, impl)
		impl := impl
		t.Run(impl.name+"/hybrid_mpi_idle", func(t *testing.T) {
			prog := gompBuilt(t, dir, "hybrid_mpi_idle")
			args := []string{"100", "2"}
			if busyWaitOversubscribed(impl, 4) {
				args = []string{"300", "1"}
			}
			argv := append(append(launch(impl, 2), prog), args...)
			_, _, g, l := gompPair(t, []string{"OMP_NUM_THREADS=2"}, []string{"--mpicc", impl.mpicc}, argv...)
			sameMetrics(t, g, l, "Global")
		})
		t.Run(impl.name+"/team_override", func(t *testing.T) {
			prog := gompBuilt(t, dir, "team_override")
			// 2 ranks of 4 threads on the cores: long units, so that the
			// scheduler's time slices (and MPICH's busy waiting) weigh
			// under 1 % (CI read Open MPI's communication efficiency
			// 0.975 on libomp with 200 ms units).
			argv := append(append(launch(impl, 2), prog), "500", "500")
			gm, _, g, l := gompPair(t, []string{"OMP_NUM_THREADS=2"}, []string{"--mpicc", impl.mpicc}, argv...)
			for _, p := range gm.Processes {
				if p.CPUs != 4 {
					t.Errorf("libgomp: rank %d: %d CPUs, want 4 (the largest team)", p.Rank, p.CPUs)
				}
			}
			sameMetrics(t, g, l, "Global")
		})
	}
}

// gompConstructs is an OpenMP program with the constructs beyond a plain
// parallel region (T = 2 threads, W = 50 ms of sleep), after an empty
// region that starts the runtime's threads (on both runtimes):
//
//	A: one thread creates 4 explicit tasks of W; both run them at the
//	   region's barrier: wall 2W, useful 4W.
//	B: nested: each of the 2 threads opens a team of 2 whose threads work
//	   W; nested teams are the encountering thread's work: wall W, useful 2W.
//	C: critical: each thread works W inside it; one waits W first: wall 2W,
//	   useful 2W (the wait is scheduling in model talp).
//	D: a dynamic loop of 4 iterations of W: wall 2W, useful 4W.
//
// Whole run (no serial code to speak of): useful 12W of 2 CPUs x 7W, parallel
// efficiency 6/7 ≈ 0.857; 4 tasks; 7 parallel regions (nested ones count).
const gompConstructs = `#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <time.h>
static void work(void) { struct timespec r = {0, 50000000}; nanosleep(&r, NULL); }
int main(void) {
	int n = 0;
	omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
	{ n += 0; }
#pragma omp parallel num_threads(2)
	{
#pragma omp single
		for (int i = 0; i < 4; i++) {
#pragma omp task
			work();
		}
	}
#pragma omp parallel num_threads(2)
	{
#pragma omp parallel num_threads(2)
		work();
	}
#pragma omp parallel num_threads(2)
	{
#pragma omp critical
		{ work(); n++; }
	}
#pragma omp parallel for schedule(dynamic) num_threads(2)
	for (int i = 0; i < 4; i++)
		work();
	printf("ok %d\n", n);
	return n == 2 ? 0 : 1;
}
`

// TestGompConstructs: tasks run inside barriers, nested teams, critical and
// a dynamic loop give the same metrics on libgomp in place as on libomp,
// the designed parallel efficiency, and the program's own output.
func TestGompConstructs(t *testing.T) {
	needLibomp(t)
	impls(t) // skips in -short mode
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "constructs.c")
	prog := filepath.Join(dir, "constructs")
	if err := os.WriteFile(src, []byte(gompConstructs), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-fopenmp", "-O2", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	gm, lm, g, l := gompPair(t, []string{"OMP_NUM_THREADS=2"}, []string{"--no-mpi"}, prog)
	// Nested teams are CPUs (issue 32, as DLB counts them): 2 + 2 CPUs over
	// 350 ms, useful 200 (tasks) + 200 (nested) + 100 (critical) + 200 (loop).
	checkAll(t, g, "libgomp", []want{{pop.ModelTALP, "Global", "parallel_efficiency", 0.5}})
	sameMetrics(t, g, l, "Global")
	for _, m := range []*measure.Measurement{gm, lm} {
		gl, _ := m.Global()
		p := gl.Processes[0]
		if p.OMPTasks != 4 || p.OMPParallels != 7 {
			t.Errorf("%s: %d tasks, %d parallel regions, want 4 and 7", m.OpenMP.Method, p.OMPTasks, p.OMPParallels)
		}
		if len(m.OMPRegions) != 5 || p.CPUs != 4 {
			t.Errorf("%s: %d parallel constructs, %d CPUs, want 5 (outermost ones) and 4 (the nested teams' threads)", m.OpenMP.Method, len(m.OMPRegions), p.CPUs)
		}
	}
	so, se, code := popmon(t, []string{"OMP_NUM_THREADS=2"}, "run", "--no-mpi", "--format", "none", "-o", filepath.Join(t.TempDir(), "o.json"), "--", prog)
	if code != 0 || so != "ok 2\n" {
		t.Errorf("output %q, exit %d, want the program's own \"ok 2\"\n%s", so, code, se)
	}
}

// TestGompPassThrough: with --openmp=off the GOMP wrappers pass straight
// through: the program runs, its output is its own, OpenMP is not measured
// and the report says why.
func TestGompPassThrough(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	prog := gompBuilt(t, dir, "omp_imbalance")
	out := filepath.Join(t.TempDir(), "off.json")
	so, se, code := popmon(t, append([]string{"OMP_NUM_THREADS=2"}, ompEnv...), "run", "--no-mpi", "--openmp", "off", "--format", "none", "-o", out, "--", prog, "20", "1")
	if code != 0 || so != "ok 3\n" {
		t.Fatalf("exit %d, output %q\n%s", code, so, se)
	}
	m, err := measure.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.OpenMP == nil || m.OpenMP.OMPT || m.OpenMP.Method != "" || !strings.Contains(m.OpenMP.Reason, "--openmp=off") {
		t.Errorf("openmp %+v, want GNU libgomp not measured (off)", m.OpenMP)
	}
	if len(m.OMPRegions) != 0 {
		t.Errorf("%d parallel constructs measured with --openmp=off", len(m.OMPRegions))
	}
}

// TestGompLoadedByLibrary: GNU libgomp that a library opened at run time
// (the PyTorch case, gomp_once_test.go's program), globally (RTLD_GLOBAL) or
// privately (RTLD_LOCAL, as Python opens its modules, where RTLD_NEXT does
// not find the runtime), is measured in place: the regions around its
// parallel regions get OpenMP metrics.
func TestGompLoadedByLibrary(t *testing.T) {
	impl := impls(t)[0]
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	bin := t.TempDir()
	build := func(args ...string) {
		t.Helper()
		if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	write := func(name, text string) string {
		p := filepath.Join(bin, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lib := filepath.Join(bin, "libwork.so")
	build("gcc", "-O2", "-fopenmp", "-fPIC", "-shared", "-o", lib, write("work.c", gompWork))
	for _, mode := range []string{"RTLD_GLOBAL", "RTLD_LOCAL"} {
		t.Run(mode, func(t *testing.T) {
			app := filepath.Join(bin, "app_"+mode)
			src := strings.Replace(gompApp, "RTLD_NOW | RTLD_GLOBAL", "RTLD_NOW | "+mode, 1)
			build(impl.mpicc, "-O2", "-I"+filepath.Join(repoRoot, "shim"), "-o", app, write(mode+".c", src), "-ldl")
			file, so, se, code := runPopmon(t, append([]string{"OMP_NUM_THREADS=2"}, ompEnv...), []string{"--mpicc", impl.mpicc}, append(launch(impl, 2), app, lib)...)
			if code != 0 || strings.Count(so, "ok\n") != 2 {
				t.Fatalf("exit %d, output %q\n%s", code, so, se)
			}
			m := readChecked(t, file)
			if m.OpenMP == nil || !m.OpenMP.OMPT || m.OpenMP.Method != "GOMP interposition" {
				t.Fatalf("openmp %+v, want GNU libgomp measured in place\n%s", m.OpenMP, se)
			}
			rep := compute(t, m, pop.ModelTALP)
			for _, region := range []string{"load", "train"} {
				g, ok := rep.Region(region)
				if !ok {
					t.Errorf("no region %s", region)
					continue
				}
				if v, ok := g.Value("omp_load_balance"); !ok || v < 0.9 {
					t.Errorf("%s: omp_load_balance %.3f (measured %v), want ≈ 1 (2 threads sleeping alike)", region, v, ok)
				}
			}
			for _, p := range m.Processes {
				if p.CPUs != 2 {
					t.Errorf("rank %d: %d CPUs, want 2", p.Rank, p.CPUs)
				}
			}
		})
	}
}

// gompFork runs OpenMP constructs in a forked child (which does not exec):
// the child is inert, its copy of the library's thread records not even
// mapped, so the GOMP wrappers must pass straight through there.
const gompFork = `#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	int n = 0;
#pragma omp parallel num_threads(2)
	{
#pragma omp critical
		n++;
	}
	pid_t p = fork();
	if (p == 0) {
#pragma omp critical
		n++;
#pragma omp barrier
		_exit(n == 3 ? 0 : 1);
	}
	int st = 0;
	waitpid(p, &st, 0);
	printf("ok %d %d\n", n, WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	return 0;
}
`

// TestGompForkedChild: a forked child's critical section and barrier do
// not crash it (they did, SIGSEGV, before the wrappers checked for an
// inert process), and the parent is measured.
func TestGompForkedChild(t *testing.T) {
	impls(t) // skips in -short mode
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "fork")
	src := filepath.Join(dir, "fork.c")
	if err := os.WriteFile(src, []byte(gompFork), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-fopenmp", "-O2", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out := filepath.Join(t.TempDir(), "f.json")
	so, se, code := popmon(t, ompEnv, "run", "--no-mpi", "--format", "none", "-o", out, "--", prog)
	if code != 0 || so != "ok 2 0\n" {
		t.Fatalf("exit %d, output %q (want \"ok 2 0\": the child's exit status 0)\n%s", code, so, se)
	}
	m := readChecked(t, out)
	if m.OpenMP == nil || m.OpenMP.Method != "GOMP interposition" {
		t.Errorf("openmp %+v, want the parent measured by GOMP interposition", m.OpenMP)
	}
}

// gompNoRegion uses the OpenMP runtime but never enters a parallel region
// (as LAMMPS without its OPENMP package): 100 ms of serial work.
const gompNoRegion = `#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <time.h>
int main(void)
{
	struct timespec r = {0, 100000000};
	nanosleep(&r, NULL);
	printf("ok %d\n", omp_get_max_threads());
	return 0;
}
`

// TestGompNoParallelRegion: the process holds the runtime's CPUs
// (OMP_NUM_THREADS = 2) on libgomp from the start, as on libomp from the
// runtime's first use: its second CPU idles the whole run, serialization
// 0.5 on both (on libgomp it was 1 CPU and 1.0 before the start-up probe).
func TestGompNoParallelRegion(t *testing.T) {
	needLibomp(t)
	impls(t) // skips in -short mode
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "noregion.c")
	prog := filepath.Join(dir, "noregion")
	if err := os.WriteFile(src, []byte(gompNoRegion), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-fopenmp", "-O2", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	gm, lm, g, l := gompPair(t, []string{"OMP_NUM_THREADS=2"}, []string{"--no-mpi"}, prog)
	checkAll(t, g, "libgomp", []want{
		{pop.ModelTALP, "Global", "parallel_efficiency", 0.5},
		{pop.ModelTALP, "Global", "omp_serialization_efficiency", 0.5},
	})
	sameMetrics(t, g, l, "Global")
	for _, m := range []*measure.Measurement{gm, lm} {
		if m.Processes[0].CPUs != 2 {
			t.Errorf("%s: %d CPUs, want 2", m.OpenMP.Method, m.Processes[0].CPUs)
		}
	}
}
