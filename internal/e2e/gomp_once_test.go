package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 22, item 6: a PyTorch program (GNU libgomp, loaded by a library at
// run time) got "OpenMP metrics not measured: … libgomp has no OMPT …" five
// times in one text report: on stderr from the library, in the header, in
// every region's tree, in the OpenMP regions section and among the
// warnings. It is said once: in the report's header, and on popmon run's
// stderr once in all, whatever the format. (Since issue 31 libgomp is
// measured in place, the PyTorch case included (TestGompLoadedByLibrary):
// what is left unmeasured is --openmp=off, which must be said once too.)

// gompWork is a shared library built with gcc -fopenmp (linked with GNU
// libgomp): the stand-in for PyTorch's libtorch_cpu.so.
const gompWork = `#include <omp.h>
#include <time.h>
int ompwork(int ms)
{
	int n = 0;
#pragma omp parallel reduction(+ : n)
	{
		struct timespec t = {0, ms * 1000000L};
		nanosleep(&t, 0);
		n++;
	}
	return n;
}
`

// gompApp opens the library at run time with RTLD_GLOBAL, as `import torch`
// does, and works in it in two popmon regions; it is not linked with
// libgomp itself.
const gompApp = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include "popmon.h"
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int (*work)(int) = (int (*)(int))dlsym(h, "ompwork");
	popmon_region_t load = popmon_region_register("load"), train = popmon_region_register("train");
	popmon_region_start(load);
	work(20);
	popmon_region_stop(load);
	popmon_region_start(train);
	work(20);
	MPI_Barrier(MPI_COMM_WORLD);
	popmon_region_stop(train);
	printf("ok\n");
	MPI_Finalize();
	return 0;
}
`

func TestOpenMPNotMeasuredSaidOnce(t *testing.T) {
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
	shim := filepath.Join(repoRoot, "shim")
	src := func(name, text string) string {
		p := filepath.Join(bin, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lib := filepath.Join(bin, "libwork.so")
	build("gcc", "-O2", "-fopenmp", "-fPIC", "-shared", "-o", lib, src("work.c", gompWork))
	app := filepath.Join(bin, "app")
	build(impl.mpicc, "-O2", "-I"+shim, "-o", app, src("app.c", gompApp), "-ldl")
	// The program's own libgomp: hybrid_phases (regions phase1, phase2)
	// built with the MPI wrapper's gcc.
	hybrid := filepath.Join(bin, "hybrid_phases")
	build(impl.mpicc, "-O2", "-fopenmp", "-I"+shim, "-o", hybrid, filepath.Join(repoRoot, "examples", "hybrid_phases.c"))
	serial := filepath.Join(bin, "omp_serial")
	build("gcc", "-O2", "-fopenmp", "-o", serial, filepath.Join(repoRoot, "examples", "omp_serial.c"))

	env := []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive"}
	for _, c := range []struct {
		name    string
		flags   []string
		argv    []string
		regions int    // regions of the report (Global included)
		reason  string // in the file's reason
	}{
		// The PyTorch case: a runtime loaded by a library.
		{"library", []string{"--openmp", "off"}, append(launch(impl, 2), app, lib), 3, "--openmp=off"},
		{"own", []string{"--openmp", "off"}, append(launch(impl, 2), hybrid, "50", "1"), 3, "--openmp=off"},
		// Without MPI the library also put the sentence among the file's
		// warnings.
		{"no-mpi", []string{"--no-mpi", "--openmp", "off"}, []string{serial, "50", "50", "1"}, 1, "--openmp=off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m.json")
			args := append(append([]string{"run", "-o", out}, c.flags...), "--")
			_, se, code := popmon(t, env, append(args, c.argv...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, se)
			}
			m := readChecked(t, out)
			if m.OpenMP == nil || m.OpenMP.OMPT || !strings.Contains(m.OpenMP.Reason, c.reason) {
				t.Fatalf("openmp = %+v, want not measured, %q\n%s", m.OpenMP, c.reason, se)
			}
			why := m.OpenMP.Reason
			for _, w := range m.Warnings {
				if strings.Contains(w, why) {
					t.Errorf("the file's warnings repeat it: %q", w)
				}
			}
			// popmon run's stderr, the text report included: once, in
			// the header; the trees refer to it.
			if n := strings.Count(se, why); n != 1 {
				t.Errorf("popmon run's stderr says it %d times, want once:\n%s", n, se)
			}
			if !strings.Contains(se, "\nOpenMP:    GNU libgomp · not measured: "+why+"\n") {
				t.Errorf("the header lacks it:\n%s", se)
			}
			if n := strings.Count(se, "OpenMP Parallel efficiency ...... not measured: see OpenMP above\n"); n != c.regions {
				t.Errorf("%d regions refer to the header, want %d:\n%s", n, c.regions, se)
			}
			if strings.Contains(se, "OpenMP regions: not measured") || strings.Contains(se, "OpenMP metrics not measured") {
				t.Errorf("said again:\n%s", se)
			}
			// popmon report, one model and all three.
			for _, models := range []string{"talp", "all"} {
				so, rse, code := popmon(t, nil, "report", "--model", models, out)
				if code != 0 {
					t.Fatalf("report --model %s: exit %d\n%s", models, code, rse)
				}
				if n := strings.Count(so+rse, why); n != 1 {
					t.Errorf("report --model %s says it %d times, want once:\n%s%s", models, n, so, rse)
				}
			}
			// No report printed: popmon run says it in one line.
			_, _, se, code = runPopmon(t, env, c.flags, c.argv...)
			if code != 0 {
				t.Fatalf("--format none: exit %d\n%s", code, se)
			}
			if n := strings.Count(se, "popmon: OpenMP metrics not measured: "+why+"\n"); n != 1 || strings.Count(se, "not measured") != 1 {
				t.Errorf("--format none: said %d times, want once:\n%s", n, se)
			}
		})
	}
}
