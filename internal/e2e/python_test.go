package e2e

import (
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Issue 22, item 5: `import popmon` and `import dlb` in Python programs
// that popmon run measures, with nothing installed (docs/python.md).

// pythonBin is Debian's interpreter, whose packages (python3-mpi4py) the
// tests use; another python3 first on PATH (pyenv) would not see them.
func pythonBin(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("no python3 (apt-get install python3)")
	return ""
}

// pyEnv keeps Python from writing bytecode into examples/python.
var pyEnv = []string{"PYTHONDONTWRITEBYTECODE=1"}

// timeoutPython bounds a script run without popmon.
const timeoutPython = time.Minute

func pyScript(name string) string {
	return filepath.Join(repoRoot, "examples", "python", name)
}

// pyRun is one measured Python run.
type pyRun struct {
	file, stdout, stderr string
	m                    *measure.Measurement
	rep                  *pop.Report
}

// measurePython runs `popmon run --mpicc MPICC -o OUT -- [launcher...]
// python3 SCRIPT ARGS` and reads the checked measurement.
func measurePython(t *testing.T, mpicc string, launcher []string, script string, args ...string) *pyRun {
	t.Helper()
	argv := append(append(append([]string{}, launcher...), pythonBin(t), pyScript(script)), args...)
	out, so, se, code := runPopmon(t, pyEnv, []string{"--mpicc", mpicc}, argv...)
	if code != 0 {
		t.Fatalf("popmon run -- %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
	}
	m := readChecked(t, out)
	return &pyRun{file: out, stdout: so, stderr: se, m: m, rep: compute(t, m, pop.ModelTALP)}
}

func (r *pyRun) region(t *testing.T, name string) *pop.RegionReport {
	t.Helper()
	g, ok := r.rep.Region(name)
	if !ok {
		t.Fatalf("region %q not in the measurement (have %v)\nstdout:\n%s\nstderr:\n%s", name, r.rep.RegionNames(), r.stdout, r.stderr)
	}
	return g
}

// value returns metric id of region name.
func (r *pyRun) value(t *testing.T, name, id string) float64 {
	t.Helper()
	return value(t, r.rep, name, id)
}

// line returns the "key value key value ..." pairs of the first stdout
// line that starts with prefix (the prefix's own words excluded).
func (r *pyRun) line(t *testing.T, prefix string) map[string]string {
	t.Helper()
	return outputLine(t, r.stdout, prefix)
}

func outputLine(t *testing.T, stdout, prefix string) map[string]string {
	t.Helper()
	for _, l := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(l, prefix+" ") && l != prefix {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(l, prefix))
		out := map[string]string{}
		for i := 0; i+1 < len(f); i += 2 {
			out[f[i]] = f[i+1]
		}
		return out
	}
	t.Fatalf("no line %q in the program's output:\n%s", prefix, stdout)
	return nil
}

func num(t *testing.T, kv map[string]string, key string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(kv[key], 64)
	if err != nil {
		t.Fatalf("%s in %v: %v", key, kv, err)
	}
	return v
}

// nearTime checks a measured time against a designed sleep: never shorter
// (less 1 ms for the clocks), at most 10 % + 15 ms longer (a loaded
// machine wakes sleepers late).
func nearTime(t *testing.T, what string, gotNS int64, wantMS float64) {
	t.Helper()
	got := float64(gotNS) / 1e6
	if got < wantMS-1 || got > wantMS*1.1+15 {
		t.Errorf("%s: %.2f ms, want %.0f ms (−1 ms, +10 %% + 15 ms)", what, got, wantMS)
	}
}

// sameNS checks a value a query returned against the report's: the same
// accounts, within 1 %.
func sameNS(t *testing.T, what string, got float64, want int64) {
	t.Helper()
	if math.Abs(got-float64(want)) > 0.01*float64(want)+1e5 {
		t.Errorf("%s: query %.0f ns, report %d ns", what, got, want)
	}
}

// TestPythonRegions: examples/python/regions.py under `popmon run --
// python3` (no MPI, no install step): the regions of the context manager,
// the decorator (named and bare), nesting, re-entry (recursion), an
// exception inside a region, and two threads in one region all have their
// designed visits and elapsed times; the runtime query gives the report's
// values; no misuse warning. The same script without popmon imports the
// module from the folder `popmon build --python` prints, measures nothing,
// prints the not-measured answers and says nothing on stderr.
func TestPythonRegions(t *testing.T) {
	impl := impls(t)[0]
	const k = 50.0
	r := measurePython(t, impl.mpicc, nil, "regions.py", "50")
	for _, c := range []struct {
		name   string
		visits int64
		ms     float64
	}{
		{"setup", 1, 2 * k}, {"solve", 1, 6 * k}, {"inner", 3, 3 * k}, {"recurse", 1, 1.5 * k},
		{"fails", 2, 2 * k}, {"threads", 1, 3 * k}, {"helper", 1, k / 2},
	} {
		g := r.region(t, c.name)
		if g.Totals.Visits != c.visits || g.Processes != 1 {
			t.Errorf("region %s: %d visits by %d processes, want %d by 1", c.name, g.Totals.Visits, g.Processes, c.visits)
		}
		nearTime(t, "region "+c.name, g.ElapsedNS, c.ms)
		if pe := r.value(t, c.name, pop.IDParallelEfficiency); math.Abs(pe-1) > effTol {
			t.Errorf("region %s: parallel efficiency %.3f, want 1", c.name, pe)
		}
	}
	if !strings.HasPrefix(r.stdout, "measured 1\n") {
		t.Errorf("popmon.measured() under popmon run: want 1\n%s", r.stdout)
	}
	q := r.line(t, "query solve")
	solve := r.region(t, "solve")
	if num(t, q, "visits") != 1 || num(t, q, "processes") != 1 || math.Abs(num(t, q, "pe")-1) > effTol {
		t.Errorf("popmon.metrics(\"solve\"): %v, want 1 visit, 1 process, PE 1", q)
	}
	sameNS(t, "metrics(solve) elapsed", num(t, q, "elapsed_ms")*1e6, solve.ElapsedNS)
	l := r.line(t, "local inner")
	if num(t, l, "visits") != 3 {
		t.Errorf("popmon.metrics_local(\"inner\"): %v, want 3 visits", l)
	}
	sameNS(t, "metrics_local(inner) elapsed", num(t, l, "elapsed_ms")*1e6, r.region(t, "inner").ElapsedNS)
	if !strings.Contains(r.stdout, "missing none\nok\n") {
		t.Errorf("a region nobody visited: want None, then ok:\n%s", r.stdout)
	}
	for _, w := range []string{"already open", "not open", "stopped"} {
		if strings.Contains(r.stderr, w) {
			t.Errorf("the library saw a misused region (%q):\n%s", w, r.stderr)
		}
	}

	// Without popmon: the modules where `popmon build --python` says
	// (the folder popmon run used), every call a no-op.
	dir, se, code := popmon(t, nil, "build", "--python", "--mpicc", impl.mpicc)
	dir = strings.TrimSpace(dir)
	if code != 0 || !strings.HasPrefix(filepath.Base(dir), "python-") {
		t.Fatalf("popmon build --python: exit %d, %q\n%s", code, dir, se)
	}
	so, se, code := runCommand(t, timeoutPython, append([]string{"PYTHONPATH=" + dir}, pyEnv...),
		pythonBin(t), pyScript("regions.py"), "5")
	want := "measured 0\nquery solve none\nlocal inner none\nmissing none\nok\n"
	if code != 0 || so != want || se != "" {
		t.Errorf("without popmon: exit %d, stdout %q (want %q), stderr %q", code, so, want, se)
	}
}

// TestPythonTALP: examples/python/talp.py, a script written for DLB's
// Python bindings, runs unchanged under `popmon run -- python3` without
// MPI: region "solve" has its 3 visits of K, DLB_TALP_CollectPOPMetrics
// returns the report's values (one process, load balance 1), the handle's
// dlb_monitor_t its visits and time, starting the open Global region warns
// with DLBWarning. Without popmon the module imports, and the query raises
// DLBError after one `popmon: dlb:` line saying nothing measures (the
// script asked for --talp).
func TestPythonTALP(t *testing.T) {
	impl := impls(t)[0]
	const k, n = 100.0, 3
	r := measurePython(t, impl.mpicc, nil, "talp.py", "none", "100", "3")
	g := r.region(t, "solve")
	if g.Totals.Visits != n || g.Processes != 1 {
		t.Errorf("region solve: %d visits by %d processes, want %d by 1", g.Totals.Visits, g.Processes, n)
	}
	nearTime(t, "region solve", g.ElapsedNS, n*k)
	checkCollect(t, r, "solve", 1, n)
	if !strings.Contains(r.stdout, "\nwarned 1\n") {
		t.Errorf("DLB_MonitoringRegionStart of the open Global: want one DLBWarning\n%s", r.stdout)
	}

	so, se, code := runCommand(t, timeoutPython, append([]string{"PYTHONPATH=" + filepath.Join(repoRoot, "python"), "DLB_ARGS="}, pyEnv...),
		pythonBin(t), pyScript("talp.py"), "none", "5", "1")
	if code == 0 || strings.Count(se, "popmon: dlb: TALP was asked for (--talp) but nothing measures this program") != 1 ||
		!strings.Contains(se, "DLBError: DLB_ERR_NOTALP (-16)") || strings.Contains(so, "collect") {
		t.Errorf("without popmon: exit %d, want non-zero with one popmon: dlb: line and DLBError NOTALP\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
}

// checkCollect compares talp.py's lines (DLB_TALP_CollectPOPMetrics,
// CollectPOPNodeMetrics, the handle's fields, Global) with the report.
func checkCollect(t *testing.T, r *pyRun, region string, ranks int, n int64) {
	t.Helper()
	g := r.region(t, region)
	c := r.line(t, "collect")
	if c["name"] != region || num(t, c, "ranks") != float64(ranks) || num(t, c, "measurements") != float64(n) {
		t.Errorf("DLB_TALP_CollectPOPMetrics: %v, want name %s, %d ranks, %d measurements", c, region, ranks, n)
	}
	for _, m := range []struct{ key, id string }{
		{"lb", pop.IDMPILoadBalance}, {"pe", pop.IDParallelEfficiency}, {"comm", pop.IDMPICommunicationEfficiency},
	} {
		want := 1.0
		if _, ok := g.Value(m.id); ok {
			want = r.value(t, region, m.id)
		}
		if got := num(t, c, m.key); math.Abs(got-want) > 0.005 {
			t.Errorf("DLB_TALP_CollectPOPMetrics %s = %.4f, report %.4f", m.key, got, want)
		}
	}
	sameNS(t, "CollectPOPMetrics elapsed_time", num(t, c, "elapsed_ns"), g.ElapsedNS)
	sameNS(t, "CollectPOPMetrics useful_time", num(t, c, "useful_ns"), g.Totals.UsefulNS)
	if g.Totals.MPINS > 0 {
		sameNS(t, "CollectPOPMetrics mpi_time", num(t, c, "mpi_ns"), g.Totals.MPINS)
	}
	nd := r.line(t, "node")
	if num(t, nd, "ppn") != float64(ranks) || math.Abs(num(t, nd, "lb")-num(t, c, "lb")) > 0.005 {
		t.Errorf("DLB_TALP_CollectPOPNodeMetrics: %v, want %d processes and the load balance %s (one node)", nd, ranks, c["lb"])
	}
	mon := r.line(t, "monitor")
	if mon["name"] != region || num(t, mon, "num_measurements") != float64(n) {
		t.Errorf("the handle's dlb_monitor_t: %v, want name %s and %d measurements", mon, region, n)
	}
	if e := num(t, mon, "elapsed_ns"); e <= 0 || e > float64(g.ElapsedNS)*1.01 {
		t.Errorf("the handle's elapsed_time %.0f ns, want rank 0's (0, %d]", e, g.ElapsedNS)
	}
	if gl := r.line(t, "global"); num(t, gl, "ranks") != float64(ranks) {
		t.Errorf("DLB_TALP_CollectPOPMetrics(DLB_GLOBAL_REGION): %v, want %d ranks", gl, ranks)
	}
	if !strings.Contains(r.stdout, "\nok\n") {
		t.Errorf("the script did not finish:\n%s", r.stdout)
	}
}

// TestPythonMPI: the designed imbalance in Python on 2 ranks, with both
// MPIs: mpi4py on Open MPI (Debian's python3-mpi4py), and on MPICH, for
// which Debian has no mpi4py, the MPI calls through ctypes
// (examples/python/ctmpi.py). examples/python/imbalance.py: region "solve"
// has load balance (P+1)/(2P) = 0.75 and communication efficiency 1, its
// compute part (no MPI inside) load balance 1 in model talp, "setup" (a
// decorator) K on each rank; popmon.metrics("solve") answers the report's
// values on rank 0. examples/python/talp.py (DLB's bindings): the same
// design in region "solve", and the collective DLB queries answer the
// report's values.
func TestPythonMPI(t *testing.T) {
	py := pythonBin(t)
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			kind := "ctypes"
			if impl.name == "openmpi" {
				kind = "mpi4py"
				if out, err := exec.Command(py, "-c", "import mpi4py").CombinedOutput(); err != nil {
					t.Skipf("%s has no mpi4py (apt-get install python3-mpi4py): %s", py, out)
				}
			}
			const np = 2
			// 200 ms units: CI read Open MPI's communication
			// efficiency 0.972 with 100 ms on a loaded 2-core machine.
			k, n := 200.0, int64(3)
			if busyWaitOversubscribed(impl, np) {
				k, n = 200, 2 // every synchronization may cost a time slice
			}
			args := []string{kind, strconv.FormatFloat(k, 'f', -1, 64), strconv.FormatInt(n, 10)}
			lb := float64(np+1) / float64(2*np)
			launcher := launch(impl, np)

			r := measurePython(t, impl.mpicc, launcher, "imbalance.py", args...)
			solve := r.region(t, "solve")
			if solve.Processes != np || solve.Totals.Visits != np {
				t.Errorf("region solve: %d processes, %d visits; want %d and %d", solve.Processes, solve.Totals.Visits, np, np)
			}
			near(t, "solve load balance", r.value(t, "solve", pop.IDMPILoadBalance), lb, effTol)
			near(t, "solve communication efficiency", r.value(t, "solve", pop.IDMPICommunicationEfficiency), 1, effTol)
			nearTime(t, "region solve", solve.ElapsedNS, float64(n)*np*k)
			compute := r.region(t, "compute")
			if compute.Totals.Visits != n*np {
				t.Errorf("region compute: %d visits, want %d", compute.Totals.Visits, n*np)
			}
			near(t, "compute load balance (no MPI inside: talp)", r.value(t, "compute", pop.IDMPILoadBalance), 1, effTol)
			nearTime(t, "region compute (rank 1)", compute.ElapsedNS, float64(n)*np*k)
			setup := r.region(t, "setup")
			if setup.Totals.Visits != np {
				t.Errorf("region setup: %d visits, want %d", setup.Totals.Visits, np)
			}
			nearTime(t, "region setup", setup.ElapsedNS, k)
			q := r.line(t, "query solve")
			if num(t, q, "ranks") != np || num(t, q, "visits") != np {
				t.Errorf("popmon.metrics(\"solve\"): %v, want %d ranks and visits", q, np)
			}
			for _, m := range []struct{ key, id string }{
				{"lb", pop.IDMPILoadBalance}, {"pe", pop.IDParallelEfficiency}, {"comm", pop.IDMPICommunicationEfficiency},
			} {
				if got, want := num(t, q, m.key), r.value(t, "solve", m.id); math.Abs(got-want) > 0.005 {
					t.Errorf("popmon.metrics(\"solve\") %s = %.4f, report %.4f", m.key, got, want)
				}
			}
			sameNS(t, "metrics(solve) elapsed", num(t, q, "elapsed_ns"), solve.ElapsedNS)
			sameNS(t, "metrics(solve) useful", num(t, q, "useful_ns"), solve.Totals.UsefulNS)
			if want := "sum " + strconv.FormatInt(n*np*(np+1)/2, 10) + "\n"; !strings.Contains(r.stdout, want) {
				t.Errorf("allreduce: want %q in\n%s", want, r.stdout)
			}

			r = measurePython(t, impl.mpicc, launcher, "talp.py", args...)
			g := r.region(t, "solve")
			if g.Processes != np || g.Totals.Visits != n*np {
				t.Errorf("region solve: %d processes, %d visits; want %d and %d", g.Processes, g.Totals.Visits, np, n*np)
			}
			near(t, "talp.py solve load balance", r.value(t, "solve", pop.IDMPILoadBalance), lb, effTol)
			near(t, "talp.py solve communication efficiency", r.value(t, "solve", pop.IDMPICommunicationEfficiency), 1, effTol)
			nearTime(t, "talp.py region solve", g.ElapsedNS, float64(n)*np*k)
			checkCollect(t, r, "solve", np, n)
		})
	}
}

// TestPythonExec: the per-rank form, `mpirun -np 2 popmon exec -- python3
// talp.py`, puts the modules on every rank's PYTHONPATH too (a PYTHONPATH
// of the user's is kept: TestPythonPath): region "solve" of DLB's bindings
// is measured with its designed load balance, and the queries answer the
// report's values.
func TestPythonExec(t *testing.T) {
	py := pythonBin(t)
	impl := impls(t)[0]
	kind := "ctypes"
	if impl.name == "openmpi" && exec.Command(py, "-c", "import mpi4py").Run() == nil {
		kind = "mpi4py"
	}
	out := filepath.Join(t.TempDir(), "exec.json")
	argv := append(launch(impl, 2), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--",
		py, pyScript("talp.py"), kind, "100", "2")
	so, se, code := runCommand(t, 2*timeoutPython, append([]string{"PYTHONPATH=/nonexistent/mine"}, pyEnv...), argv...)
	if code != 0 || !strings.Contains(so, "\nok\n") {
		t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
	}
	m := readChecked(t, out)
	r := &pyRun{file: out, stdout: so, stderr: se, m: m, rep: compute(t, m, pop.ModelTALP)}
	g := r.region(t, "solve")
	if g.Processes != 2 || g.Totals.Visits != 4 {
		t.Errorf("region solve: %d processes, %d visits; want 2 and 4", g.Processes, g.Totals.Visits)
	}
	near(t, "solve load balance", r.value(t, "solve", pop.IDMPILoadBalance), 0.75, effTol)
	checkCollect(t, r, "solve", 2, 2)
}
