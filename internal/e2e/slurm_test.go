package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// A real Slurm on the namespace cluster (scripts/cluster/slurm-up.sh):
// slurmctld on node0, one slurmd per node, auth/none, its configuration and
// state in the cluster's folder. Slurm's commands run on node0 (the login
// node) with SLURM_CONF pointing there, since the controller's address
// exists only inside the cluster's network.

// slurm is Slurm running on a cluster.
type slurm struct {
	c    *cluster
	conf string // SLURM_CONF
}

var (
	slurmMu   sync.Mutex
	slurmUp   *slurm
	slurmSkip string
	slurmErr  error
)

// needSlurm returns Slurm on a cluster of 2 nodes, started once per test
// binary; it skips the test where the cluster cannot be created or Slurm
// is not installed, and fails it when slurm-up.sh fails otherwise.
func needSlurm(t *testing.T) *slurm {
	t.Helper()
	c := needCluster(t, 2)
	slurmMu.Lock()
	defer slurmMu.Unlock()
	switch {
	case slurmSkip != "":
		t.Skip(slurmSkip)
	case slurmErr != nil:
		t.Fatal(slurmErr)
	case slurmUp != nil:
		return slurmUp
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("creating Slurm's lifeline pipe: %v", err)
	}
	defer r.Close()
	up := filepath.Join(clusterScripts(), "slurm-up.sh")
	cmd := exec.Command("timeout", "90", up, c.dir)
	cmd.Env = append(os.Environ(), "CLUSTER_LIFELINE=3")
	cmd.ExtraFiles = []*os.File{r} // the watcher's fd 3: Slurm ends with this binary
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.Close()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == exitCannot {
			slurmSkip = "Slurm tests skipped: " + strings.TrimSpace(string(out))
			t.Skip(slurmSkip)
		}
		slurmErr = fmt.Errorf("starting Slurm on the cluster (%s %s): %v\n%s", up, c.dir, err, out)
		t.Fatal(slurmErr)
	}
	c.closeAtTeardown(w)
	slurmUp = &slurm{c: c, conf: filepath.Join(c.dir, "slurm", "slurm.conf")}
	return slurmUp
}

// env is the environment popmon and Slurm's commands need on a node.
func (s *slurm) env(extra ...string) []string {
	return clusterEnv(append([]string{"SLURM_CONF=" + s.conf}, extra...)...)
}

// run runs argv on node0 with s.env(extra...).
func (s *slurm) run(t *testing.T, timeout time.Duration, extra []string, argv ...string) (string, string, int) {
	t.Helper()
	return s.c.run(t, timeout, s.c.OnEnv(0, s.env(extra...), argv...))
}

// mpiFlag is srun's --mpi for impl (Open MPI: PMIx; MPICH: PMI-2); it
// skips the test when this Slurm lacks the plugin.
func (s *slurm) mpiFlag(t *testing.T, impl mpiImpl) string {
	t.Helper()
	plugin := map[string]string{"openmpi": "pmix", "mpich": "pmi2"}[impl.name]
	so, se, _ := s.run(t, time.Minute, nil, "srun", "--mpi=list")
	if !regexp.MustCompile(`(?m)^\s*` + plugin + `\s*$`).MatchString(so + se) {
		t.Skipf("this Slurm has no %s plugin for %s (srun --mpi=list: %s%s)", plugin, impl.name, so, se)
	}
	return "--mpi=" + plugin
}

// srunShape is the allocation of every test job: 2 nodes, 2 tasks each,
// ranks 0 and 1 on node0, a 5-minute limit.
var srunShape = []string{"-N2", "-n4", "--ntasks-per-node=2", "--time=5"}

// weightedJob is the multi-node design (examples/weighted.c): rank r works
// W[r]·100 ms once, W = 0.5, 1.5, 8, 10: LB 0.5, In 0.9, Out 5/9.
func weightedJob(dir string) []string {
	return []string{filepath.Join(dir, "weighted"), "100", "0.5,1.5,8,10"}
}

// checkSlurmRun checks a measurement of weightedJob under Slurm: 4 ranks
// on node0 and node1 (2 each), the designed load balance, and the job, its
// step and node list in the launcher object and on the report's Run: line.
func checkSlurmRun(t *testing.T, file string) {
	t.Helper()
	m := readChecked(t, file)
	if m.Resources.Processes != 4 || m.Resources.Nodes != 2 || m.Incomplete != nil || m.Partial != nil {
		t.Fatalf("resources %+v, incomplete %+v, partial %+v", m.Resources, m.Incomplete, m.Partial)
	}
	hosts := map[string]bool{}
	for _, p := range m.Processes {
		hosts[p.Hostname] = true
		if want := fmt.Sprintf("node%d", p.Rank/2); p.Hostname != want || p.Node != p.Rank/2 {
			t.Errorf("rank %d on %s (node %d), want %s", p.Rank, p.Hostname, p.Node, want)
		}
	}
	if len(hosts) != 2 {
		t.Errorf("hosts %v, want node0 and node1", hosts)
	}
	rep := compute(t, m, pop.ModelTALP)
	near(t, "load balance", value(t, rep, "Global", "mpi_load_balance"), 0.5, effTol)
	near(t, "load balance in", value(t, rep, "Global", "mpi_load_balance_in"), 0.9, effTol)
	near(t, "load balance out", value(t, rep, "Global", "mpi_load_balance_out"), 5.0/9, effTol)
	l := m.Launcher
	if l.Kind != measure.LauncherSlurm || !regexp.MustCompile(`^[0-9]+$`).MatchString(l.JobID) || l.StepID != "0" || l.NodeList != "node[0-1]" {
		t.Errorf("launcher %+v, want slurm, a job id, step 0, node[0-1]", l)
	}
	so, se, code := popmon(t, nil, "report", file)
	if want := fmt.Sprintf(" · Slurm job %s, step 0 on node[0-1] · ", l.JobID); code != 0 || !strings.Contains(so, want) {
		t.Errorf("report (exit %d): no %q on the Run: line\n%s%s", code, want, so, se)
	}
}

// TestSlurmLaunchForms: the multi-node design measured under a real Slurm
// with both MPIs (Open MPI through PMIx, MPICH through PMI-2), in the four
// ways a job runs: srun of popmon exec (per rank), popmon run around srun,
// an sbatch script doing that, and salloc around it.
func TestSlurmLaunchForms(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			s := needSlurm(t)
			mpi := s.mpiFlag(t, impl)
			dir := examples(t, impl)
			srun := append(append([]string{"srun"}, srunShape...), mpi)
			run := func(out string) []string {
				return []string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}
			}

			t.Run("srun-exec", func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "m.json")
				argv := append(append(append([]string{}, srun...), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--"), weightedJob(dir)...)
				so, se, code := s.run(t, 3*time.Minute, nil, argv...)
				if code != 0 || !strings.Contains(so, "ok 20") {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
				}
				checkSlurmRun(t, out)
			})

			t.Run("run-srun", func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "m.json")
				argv := append(append(run(out), srun...), weightedJob(dir)...)
				so, se, code := s.run(t, 3*time.Minute, nil, argv...)
				if code != 0 || !strings.Contains(so, "ok 20") {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
				}
				checkSlurmRun(t, out)
				noLeftovers(t, s.c)
			})

			t.Run("sbatch", func(t *testing.T) {
				tmp := t.TempDir()
				out, log := filepath.Join(tmp, "m.json"), filepath.Join(tmp, "job.log")
				job := s.sbatch(t, log, srunShape, append(append(run(out), "srun", mpi), weightedJob(dir)...))
				state := s.waitJob(t, job, 3*time.Minute)
				b, _ := os.ReadFile(log)
				if state != "COMPLETED" || !strings.Contains(string(b), "ok 20") {
					t.Fatalf("job %s ended %s; its output:\n%s", job, state, b)
				}
				checkSlurmRun(t, out)
				if m := readChecked(t, out); m.Launcher.JobID != job {
					t.Errorf("job id %q in the measurement, want sbatch's %s", m.Launcher.JobID, job)
				}
			})

			t.Run("salloc", func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "m.json")
				argv := append(append(append(append([]string{"salloc"}, srunShape...), run(out)...), "srun", mpi), weightedJob(dir)...)
				so, se, code := s.run(t, 3*time.Minute, nil, argv...)
				if code != 0 || !strings.Contains(so, "ok 20") {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
				}
				checkSlurmRun(t, out)
			})
		})
	}
}

// sbatch submits a batch script of one command line, argv, with the
// sbatch options opts and its output in log (next to the script), and
// returns the job id.
func (s *slurm) sbatch(t *testing.T, log string, opts, argv []string) string {
	t.Helper()
	words := make([]string, len(argv))
	for i, w := range argv {
		words[i] = shellQuote(w)
	}
	script := filepath.Join(filepath.Dir(log), "job.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+strings.Join(words, " ")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"sbatch", "--parsable", "-o", log}, opts...), script)
	so, se, code := s.run(t, time.Minute, nil, args...)
	job := strings.TrimSpace(strings.Split(so, ";")[0])
	if code != 0 || !regexp.MustCompile(`^[0-9]+$`).MatchString(job) {
		t.Fatalf("sbatch: exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
	return job
}

// waitJob polls Slurm for job's state every 0.5 s until it ends or timeout
// passes (then it cancels the job and fails the test); it returns the
// final state (COMPLETED, FAILED...).
func (s *slurm) waitJob(t *testing.T, job string, timeout time.Duration) string {
	t.Helper()
	re := regexp.MustCompile(`JobState=(\S+)`)
	state := ""
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		so, _, _ := s.run(t, time.Minute, nil, "scontrol", "-o", "show", "job", job)
		if m := re.FindStringSubmatch(so); m != nil {
			state = m[1]
		}
		switch state {
		case "", "PENDING", "CONFIGURING", "RUNNING", "COMPLETING":
			continue
		}
		return state
	}
	s.run(t, time.Minute, nil, "scancel", job)
	t.Fatalf("job %s still %s after %v", job, state, timeout)
	return ""
}

// TestSlurmWrongMPI: srun with an --mpi= the program's MPI does not speak.
// MPICH (--mpi=none) then starts every task as a one-process MPI job, and
// popmon says so once, with the --mpi value to use, instead of writing four
// one-process measurements; Open MPI (--mpi=pmi2) aborts in MPI_Init, and
// popmon says first what to use instead of leaving only Open MPI's
// "OMPI was not built with SLURM's PMI support". Both forms.
func TestSlurmWrongMPI(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			s := needSlurm(t)
			dir := examples(t, impl)
			wrong, sentence := "--mpi=none", "srun started each of the step's 4 tasks as its own one-process MPI job (MPI_COMM_WORLD has 1 process): "+
				"its --mpi does not match the program's MPI, MPICH; launch it with srun --mpi=pmi2"
			if impl.name == "openmpi" {
				wrong, sentence = "--mpi=pmi2", "srun started the step's 4 tasks without PMIx, which Open MPI needs to start them as one job: "+
					"its --mpi does not match the program's MPI, Open MPI; launch it with srun --mpi=pmix"
			}
			srun := append(append([]string{"srun"}, srunShape...), wrong)
			for _, form := range []string{"run", "exec"} {
				t.Run(form, func(t *testing.T) {
					tmp := t.TempDir()
					out := filepath.Join(tmp, "m.json")
					var argv []string
					if form == "run" {
						argv = append(append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, srun...), weightedJob(dir)...)
					} else {
						argv = append(append(append([]string{}, srun...), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--"), weightedJob(dir)...)
					}
					so, se, code := s.run(t, 3*time.Minute, nil, argv...)
					if n := strings.Count(so, "ok 0"); impl.name == "mpich" && n != 4 {
						t.Errorf("%d singleton tasks ran, want 4\nstdout:\n%s\nstderr:\n%s", n, so, se)
					}
					if impl.name == "openmpi" && code == 0 {
						t.Errorf("Open MPI without PMIx: exit 0\nstdout:\n%s\nstderr:\n%s", so, se)
					}
					if n := strings.Count(se, sentence); n != 1 {
						t.Errorf("the explanation appears %d times, want once\nstderr:\n%s", n, se)
					}
					if form == "run" && !strings.Contains(se, sentence+" (srun --mpi=list shows the choices); no measurement written (ranks 0-3)") {
						t.Errorf("popmon run does not name the 4 tasks:\n%s", se)
					}
					if strings.Contains(se, "measurement written to") || strings.Contains(se, "partial") {
						t.Errorf("a measurement was written:\n%s", se)
					}
					if files, _ := filepath.Glob(filepath.Join(tmp, "*")); len(files) != 0 {
						t.Errorf("files written: %v, want none", files)
					}
				})
			}
		})
	}
}

// TestSlurmExecWithoutCompiler: popmon build on the login node (node0)
// fills the shared cache; srun popmon exec then runs on nodes whose PATH
// has no compiler and whose POPMON_MPICC names none, and measures the job
// with the library from the cache.
func TestSlurmExecWithoutCompiler(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			s := needSlurm(t)
			mpi := s.mpiFlag(t, impl)
			dir := examples(t, impl)
			so, se, code := s.run(t, 5*time.Minute, nil, popmonBin, "build", "--mpicc", impl.mpicc)
			lib := strings.TrimSpace(so)
			if code != 0 || !strings.HasSuffix(lib, "libpopmon.so") {
				t.Fatalf("popmon build: exit %d\n%s%s", code, so, se)
			}
			out := filepath.Join(t.TempDir(), "m.json")
			empty := t.TempDir()
			argv := append(append([]string{"srun"}, srunShape...), mpi,
				"env", "PATH="+empty, "POPMON_MPICC="+filepath.Join(empty, "mpicc"),
				popmonBin, "exec", "-o", out, "--")
			argv = append(argv, weightedJob(dir)...)
			so, se, code = s.run(t, 3*time.Minute, nil, argv...)
			if code != 0 || !strings.Contains(so, "ok 20") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			checkSlurmRun(t, out)
			// Without the cache's library the same launch says what to do.
			for i, a := range argv {
				if a == out {
					argv[i] = filepath.Join(t.TempDir(), "m.json")
				}
			}
			so, se, code = s.run(t, 3*time.Minute, []string{"POPMON_CACHE_DIR=" + t.TempDir()}, argv...)
			if code == 0 || !strings.Contains(se, "not found: check --mpicc / POPMON_MPICC; no library built from these sources in the cache") {
				t.Errorf("an empty cache and no compiler: exit %d\n%s%s", code, so, se)
			}
		})
	}
}

// TestSlurmCancelPartial: scancel of a batch job whose script runs popmon
// run around srun (the time limit ends a job the same way: SIGTERM, then
// SIGKILL after KillWait): popmon writes a partial measurement of every
// rank on both nodes, with the designed load balance and the job's id.
func TestSlurmCancelPartial(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			s := needSlurm(t)
			mpi := s.mpiFlag(t, impl)
			dir := examples(t, impl)
			np := partialRanks(impl)
			per := np / 2
			// The library first, so that the job measures at once.
			if so, se, code := s.run(t, 5*time.Minute, nil, popmonBin, "build", "--mpicc", impl.mpicc); code != 0 {
				t.Fatalf("popmon build: exit %d\n%s%s", code, so, se)
			}
			tmp := t.TempDir()
			out, log := filepath.Join(tmp, "m.json"), filepath.Join(tmp, "job.log")
			job := s.sbatch(t, log, []string{"-N2", fmt.Sprintf("-n%d", np), fmt.Sprintf("--ntasks-per-node=%d", per), "--time=5"},
				[]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--",
					"srun", mpi, filepath.Join(dir, "imbalance"), fmt.Sprint(partialK), "200"})
			// popmon run creates the session folder before the launch.
			deadline := time.Now().Add(time.Minute)
			for {
				if ss, _ := filepath.Glob(filepath.Join(tmp, ".popmon-session-*")); len(ss) > 0 {
					break
				}
				if time.Now().After(deadline) {
					b, _ := os.ReadFile(log)
					t.Fatalf("no session folder a minute after sbatch; the job's output:\n%s", b)
				}
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(2500 * time.Millisecond)
			if so, se, code := s.run(t, time.Minute, nil, "scancel", job); code != 0 {
				t.Fatalf("scancel: exit %d\n%s%s", code, so, se)
			}
			state := s.waitJob(t, job, 2*time.Minute)
			if state != "CANCELLED" {
				t.Errorf("job %s ended %s, want CANCELLED", job, state)
			}
			// Slurm says CANCELLED at once; popmon run writes the partial
			// measurement when srun has ended (within KillWait, 5 s here).
			var b []byte
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				if b, _ = os.ReadFile(log); strings.Contains(string(b), "popmon: measurement written to") {
					break
				}
			}
			m := checkSlurmPartial(t, out, np, string(b))
			checkNodes(t, m, per)
			if m.Launcher.Kind != measure.LauncherSlurm || m.Launcher.JobID != job {
				t.Errorf("launcher %+v, want Slurm job %s", m.Launcher, job)
			}
		})
	}
}

// checkSlurmPartial checks the partial measurement of the imbalance demo
// that scancel ended: every rank, reason terminated, its load balance. Not
// checkPartial: srun starts the ranks of two nodes up to a few tenths of a
// second apart, which the first MPI_Allreduce absorbs, so a rank's
// iterations are not its elapsed time over the iteration's (they were
// 1.7 iterations fewer once); the ranks' iteration counts agree instead.
func checkSlurmPartial(t *testing.T, file string, np int, stderr string) *measure.Measurement {
	t.Helper()
	m := readChecked(t, file)
	p := m.Partial
	if p == nil {
		t.Fatalf("%s is not partial\n%s", file, stderr)
	}
	if p.Reason != measure.PartialTerminated {
		t.Errorf("reason %q (%s), want %q", p.Reason, p.Detail, measure.PartialTerminated)
	}
	if p.Included != np || p.Ranks != np || p.MissingRanks != "" || len(m.Processes) != np {
		t.Errorf("%d of %d ranks included (missing %q), want all %d", p.Included, p.Ranks, p.MissingRanks, np)
	}
	rep := compute(t, m, pop.ModelTALP)
	near(t, "load balance", value(t, rep, "Global", "mpi_load_balance"), float64(np+1)/float64(2*np), 0.03)
	glob, _ := m.Global()
	lo, hi := int64(-1), int64(0)
	for _, pa := range glob.Processes {
		if lo < 0 || pa.MPICalls < lo {
			lo = pa.MPICalls
		}
		hi = max(hi, pa.MPICalls)
	}
	if lo < 5 || hi-lo > 1 {
		t.Errorf("MPI calls per rank from %d to %d: want the ranks in step, a few iterations in", lo, hi)
	}
	if !strings.Contains(stderr, "measurement written to") {
		t.Errorf("popmon run did not say where the measurement is:\n%s", stderr)
	}
	return m
}
