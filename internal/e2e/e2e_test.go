// Package e2e runs the validation programs of examples/ under popmon with
// every MPI installed here (Open MPI and MPICH), on 2 and 4 ranks, and checks
// the reported metrics against their analytic values (POP-METRICS.md §8:
// ±0.02 absolute for efficiencies, ±10 % for times).
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// effTol is the validation rule's tolerance for efficiencies.
const effTol = 0.02

// mpiImpl is one MPI installation.
type mpiImpl struct {
	name   string // openmpi | mpich
	mpicc  string
	mpirun string
	extra  []string // launcher flags
}

var (
	popmonBin string
	repoRoot  string
	cacheDir  string
	builtMu   sync.Mutex
	built     = map[string]string{} // impl name -> examples dir
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, _ := os.Getwd()
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	tmp, err := os.MkdirTemp("", "popmon-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	popmonBin = filepath.Join(tmp, "popmon")
	build := exec.Command("go", "build", "-o", popmonBin, "./cmd/popmon")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building popmon: %v\n%s", err, out)
		return 1
	}
	cacheDir = filepath.Join(tmp, "cache")
	os.Setenv("POPMON_CACHE_DIR", cacheDir)
	os.Setenv("POPMON_WERROR", "1")
	os.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
	os.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	// Keep Open MPI's shared-memory transport quiet in containers.
	os.Setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
	os.Setenv("OMPI_MCA_rmaps_base_oversubscribe", "1")
	return m.Run()
}

// impls lists the MPIs installed here; the test is skipped when none is.
func impls(t *testing.T) []mpiImpl {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: runs MPI jobs")
	}
	var out []mpiImpl
	for _, c := range []mpiImpl{
		{name: "openmpi", mpicc: "mpicc.openmpi", mpirun: "mpirun.openmpi", extra: []string{"--oversubscribe"}},
		{name: "mpich", mpicc: "mpicc.mpich", mpirun: "mpirun.mpich"},
	} {
		_, e1 := exec.LookPath(c.mpicc)
		_, e2 := exec.LookPath(c.mpirun)
		if e1 == nil && e2 == nil {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Skip("no MPI installed (need mpicc.openmpi/mpirun.openmpi or mpicc.mpich/mpirun.mpich: run scripts/install-deps.sh)")
	}
	return out
}

// examples builds examples/ for impl once and returns the folder.
func examples(t *testing.T, impl mpiImpl) string {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if dir, ok := built[impl.name]; ok {
		return dir
	}
	dir := filepath.Join(filepath.Dir(popmonBin), "examples-"+impl.name)
	cmd := exec.Command("sh", filepath.Join(repoRoot, "examples", "build.sh"), dir, impl.name)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building examples with %s: %v\n%s", impl.name, err, out)
	}
	built[impl.name] = dir
	return dir
}

// result is one measured run.
type result struct {
	file   string
	m      *measure.Measurement
	rep    *pop.Report
	stdout string
	stderr string
}

// measureRun runs `popmon run -- mpirun -np np prog args...` and reads the
// measurement.
func measureRun(t *testing.T, impl mpiImpl, np int, prog string, args ...string) *result {
	t.Helper()
	dir := examples(t, impl)
	out := filepath.Join(t.TempDir(), "m.json")
	argv := []string{"run", "--mpicc", impl.mpicc, "-o", out, "--", impl.mpirun}
	argv = append(argv, impl.extra...)
	argv = append(argv, "-np", fmt.Sprint(np), filepath.Join(dir, prog))
	argv = append(argv, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, popmonBin, argv...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("popmon %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, so.String(), se.String())
	}
	m, err := measure.ReadFile(out)
	if err != nil {
		t.Fatalf("reading %s: %v\nstderr:\n%s", out, err, se.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := measure.ValidateSchema(raw); err != nil {
		t.Errorf("measurement file does not match docs/measurement.schema.json: %v", err)
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	return &result{file: out, m: m, rep: rep, stdout: so.String(), stderr: se.String()}
}

func (r *result) region(t *testing.T, name string) *pop.RegionReport {
	t.Helper()
	for i := range r.rep.Regions {
		if strings.EqualFold(r.rep.Regions[i].Name, name) {
			return &r.rep.Regions[i]
		}
	}
	var names []string
	for _, g := range r.rep.Regions {
		names = append(names, g.Name)
	}
	t.Fatalf("region %q not in report (have %v)\nstderr:\n%s", name, names, r.stderr)
	return nil
}

// expect asserts metric id of region within tol of want.
func (r *result) expect(t *testing.T, region, id string, want, tol float64) {
	t.Helper()
	g := r.region(t, region)
	got, ok := g.Value(id)
	if !ok {
		t.Errorf("%s: %s absent", region, id)
		return
	}
	if got < want-tol || got > want+tol {
		t.Errorf("%s: %s = %.4f, want %.4f ± %.2f (file %s)", region, id, got, want, tol, r.file)
	}
}

func (r *result) calls(name string) int64 {
	for _, c := range r.m.MPICalls {
		if c.Name == name {
			return c.Calls
		}
	}
	return 0
}

func forEach(t *testing.T, fn func(t *testing.T, impl mpiImpl, np int)) {
	for _, impl := range impls(t) {
		for _, np := range []int{2, 4} {
			impl, np := impl, np
			t.Run(fmt.Sprintf("%s/np%d", impl.name, np), func(t *testing.T) { fn(t, impl, np) })
		}
	}
}

func TestBalanced(t *testing.T) {
	forEach(t, func(t *testing.T, impl mpiImpl, np int) {
		r := measureRun(t, impl, np, "balanced")
		r.expect(t, "Global", "mpi_load_balance", 1, effTol)
		r.expect(t, "Global", "mpi_communication_efficiency", 1, effTol)
		r.expect(t, "Global", "parallel_efficiency", 1, effTol)
	})
}

func TestImbalance(t *testing.T) {
	forEach(t, func(t *testing.T, impl mpiImpl, np int) {
		const iters = 5
		r := measureRun(t, impl, np, "imbalance", "50", fmt.Sprint(iters))
		lb := float64(np+1) / float64(2*np)
		r.expect(t, "Global", "mpi_load_balance", lb, effTol)
		r.expect(t, "Global", "mpi_load_balance_in", lb, effTol)
		r.expect(t, "Global", "mpi_load_balance_out", 1, effTol)
		r.expect(t, "Global", "mpi_communication_efficiency", 1, effTol)
		r.expect(t, "Global", "parallel_efficiency", lb, effTol)
		if got, want := r.calls("MPI_Allreduce"), int64(iters*np); got != want {
			t.Errorf("MPI_Allreduce calls = %d, want %d", got, want)
		}
		if got, want := r.calls("MPI_Barrier"), int64(np); got != want {
			t.Errorf("MPI_Barrier calls = %d, want %d", got, want)
		}
		// Times: the slowest rank works iters*np*50 ms.
		g := r.region(t, "Global")
		wantT := float64(iters*np) * 50e6
		if got := float64(g.ElapsedNS); got < wantT*0.9 || got > wantT*1.1+50e6 {
			t.Errorf("Global elapsed = %.0f ns, want %.0f ± 10%%", got, wantT)
		}
		if !strings.Contains(r.stdout, "ok ") {
			t.Errorf("program output changed: %q", r.stdout)
		}
	})
}

func TestPipeline(t *testing.T) {
	forEach(t, func(t *testing.T, impl mpiImpl, np int) {
		r := measureRun(t, impl, np, "pipeline")
		r.expect(t, "Global", "mpi_load_balance", 1, effTol)
		r.expect(t, "Global", "mpi_communication_efficiency", 1/float64(np), effTol)
		r.expect(t, "Global", "parallel_efficiency", 1/float64(np), effTol)
	})
}
