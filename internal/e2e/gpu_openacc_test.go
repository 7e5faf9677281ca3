package e2e

// OpenACC (issue 35, item 1): the OpenACC Profiling Interface. GCC's
// libgomp, without an offload target, runs every construct on the host
// (host fallback) and still dispatches the profiling events of compute
// constructs, enter/exit data and update to the library ACC_PROFLIB names,
// which `popmon run` sets to libpopmon. examples/openacc/acc_pop.c is
// designed so that the host time in those constructs is a third of the
// rank's time in region "work": device offload efficiency 2/3, on every
// rank, with every MPI.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildOpenACC compiles examples/openacc/acc_pop.c with impl's MPI compiler
// and -fopenacc (host fallback: the construct's body sleeps).
func buildOpenACC(t *testing.T, impl mpiImpl) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(impl.mpicc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-fopenacc", "-DACC_POP_SLEEP",
		"-I"+filepath.Join(repoRoot, "shim"), "-I"+filepath.Join(repoRoot, "examples"),
		"-o", filepath.Join(dir, "acc_pop"), filepath.Join(repoRoot, "examples", "openacc", "acc_pop.c"))
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "fopenacc") {
			t.Skipf("%s has no OpenACC (-fopenacc): %s", impl.mpicc, out)
		}
		t.Fatalf("building acc_pop: %v\n%s", err, out)
	}
	return dir
}

func TestOpenACCOffload(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			needGPUMeasurement(t)
			dir := buildOpenACC(t, impl)
			// GCC's OpenACC runtime is libgomp, which popmon measures in
			// place as an OpenMP runtime from start-up: a process holds
			// the runtime's CPUs (its team size: the affinity's CPUs where
			// OMP_NUM_THREADS is unset, both cores per rank under MPICH,
			// which does not bind), and the idle one would count in the
			// process's time. The design is one CPU per rank.
			r := measureRunWith(t, impl, runOpts{dir: dir, env: []string{"OMP_NUM_THREADS=1"}}, 2, "acc_pop", "3", "100")
			r.expect(t, "work", "device_offload_efficiency", 2.0/3, 0.02)
			w, ok := r.m.Region("work")
			if !ok || len(w.Processes) != 2 {
				t.Fatalf("no region work of two processes: %v", r.m.RegionNames())
			}
			for _, p := range w.Processes {
				// Host time in the constructs: 3 × 50 ms per rank; calls:
				// enter data, compute construct, update, exit data.
				if g := float64(p.GPURuntimeNS) / 1e6; g < 145 || g > 175 {
					t.Errorf("rank %d: GPU runtime %.1f ms, want 150 (-5, +25)", p.Rank, g)
				}
				if p.GPURuntimeCalls != 12 {
					t.Errorf("rank %d: %d GPU runtime calls, want 12 (4 OpenACC directives × 3)", p.Rank, p.GPURuntimeCalls)
				}
			}
			out, code := validateCompare(t, r)
			t.Logf("gpu-validate.sh --compare:\n%s", out)
			if code != 0 || strings.Count(out, "  PASS") != 1 {
				t.Errorf("gpu-validate.sh --compare on the program's own expectation: exit %d\n%s", code, out)
			}
		})
	}
}
