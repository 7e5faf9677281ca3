package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Multi-node behaviour of issue 10, on the namespace cluster
// (cluster_test.go): popmon run makes the library reach the ranks of every
// node (Open MPI passes only what it is told to), the Global region is
// aligned across nodes, and a library that does not reach some ranks never
// hangs the job; and of issue 13: designed load balance In/Out and OpenMP
// metrics across nodes, node counts, CPUs per node and rank placement, in
// both forms (popmon run -- mpirun …, mpirun … popmon exec -- …).

// clusterEnv is the environment popmon needs on a node, whose shell starts
// from a fresh environment as sshd's would.
func clusterEnv(extra ...string) []string {
	env := []string{
		"POPMON_CACHE_DIR=" + cacheDir, "POPMON_WERROR=1",
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_rmaps_base_oversubscribe=1",
		"OMPI_MCA_mpi_yield_when_idle=1",
	}
	return append(env, extra...)
}

// The two ways popmon reaches the ranks of a multi-node job: popmon run
// around the launcher (it forwards its variables to the other nodes), and
// popmon exec started by the launcher on every rank (each finds the library
// in the cache on its own node).
const (
	formRun  = "run"
	formExec = "exec"
)

// nodeJob is a job of nodes × perNode ranks of an example program on the
// cluster, launched from node0.
type nodeJob struct {
	nodes, perNode int
	// threads is the CPUs each rank is designed to use (OMP_NUM_THREADS).
	threads int
	prog    string
	args    []string
	// env is added to mpirun's environment; Open MPI is also told to pass
	// it on to the other nodes (-x), as a user must (MPICH passes it all).
	env []string
	// stdout, when set, receives the job's standard output.
	stdout *string
}

// runNodeJob runs job under popmon in form (formRun or formExec) with impl
// and returns the checked measurement, its file and popmon's stderr. The
// ranks' popmon exec gets POPMON_CACHE_DIR (and POPMON_WERROR) from
// mpirun's environment: Open MPI through -x, MPICH by default. An Open MPI
// job with env under popmon run has -x on its command line: popmon then
// passes its own variables with -x too (Open MPI refuses -x together with
// the OMPI_MCA_mca_base_env_list it uses otherwise).
func runNodeJob(t *testing.T, c *cluster, impl mpiImpl, form string, job nodeJob) (*measure.Measurement, string, string) {
	t.Helper()
	dir := examples(t, impl)
	out := filepath.Join(t.TempDir(), "m.json")
	np := job.nodes * job.perNode
	var opts []string
	forward := job.env
	if form == formExec {
		forward = append(append([]string{}, job.env...), "POPMON_CACHE_DIR=", "POPMON_WERROR=")
	}
	if impl.name == "openmpi" {
		for _, kv := range forward {
			name, _, _ := strings.Cut(kv, "=")
			opts = append(opts, "-x", name)
		}
	}
	prog := append([]string{filepath.Join(dir, job.prog)}, job.args...)
	measured := []string{"--mpicc", impl.mpicc, "-o", out, "--"}
	var argv []string
	if form == formExec {
		launch := c.Launch(impl, np, c.Hosts(job.nodes, job.perNode), append(append(append(opts, popmonBin, "exec"), measured...), prog...)...)
		argv = c.OnEnv(0, clusterEnv(job.env...), launch...)
	} else {
		launch := c.Launch(impl, np, c.Hosts(job.nodes, job.perNode), append(opts, prog...)...)
		argv = c.OnEnv(0, clusterEnv(job.env...), append(append([]string{popmonBin, "run", "--format", "none"}, measured...), launch...)...)
	}
	start := time.Now()
	so, se, code := c.run(t, 3*time.Minute, argv)
	if code != 0 || !strings.Contains(so, "ok ") {
		t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
	}
	t.Logf("%s form: %v", form, time.Since(start).Round(10*time.Millisecond))
	if job.stdout != nil {
		*job.stdout = so
	}
	if form == formExec && !strings.Contains(se, "popmon: measurement written to "+out) {
		t.Errorf("rank 0 did not announce the file:\n%s", se)
	}
	m := readChecked(t, out)
	checkPlacement(t, m, job)
	// One file, the complete one; nothing left on the nodes.
	if files, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*")); len(files) != 1 {
		t.Errorf("files next to the measurement: %v, want only %s", files, out)
	}
	noLeftovers(t, c)
	return m, out, se
}

// checkPlacement checks the resources of a complete measurement of job: the
// number of processes and nodes, each rank on its host and node (placed by
// slot: ranks 0 .. perNode−1 on node0), and the CPUs of each node.
func checkPlacement(t *testing.T, m *measure.Measurement, job nodeJob) {
	t.Helper()
	np := job.nodes * job.perNode
	if m.Resources.Processes != np || m.Resources.Nodes != job.nodes || m.Resources.CPUs != np*job.threads || m.Incomplete != nil || len(m.Processes) != np {
		t.Fatalf("resources %+v (%d processes listed), incomplete %+v: want %d processes, %d nodes, %d CPUs",
			m.Resources, len(m.Processes), m.Incomplete, np, job.nodes, np*job.threads)
	}
	perNode := make([]int, job.nodes)
	for _, p := range m.Processes {
		node := p.Rank / job.perNode
		if want := fmt.Sprintf("node%d", node); p.Hostname != want || p.Node != node {
			t.Errorf("rank %d on %s (node %d), want %s (node %d)", p.Rank, p.Hostname, p.Node, want, node)
		}
		if p.Node >= 0 && p.Node < job.nodes {
			perNode[p.Node] += p.CPUs
		}
	}
	for k, n := range perNode {
		if want := job.perNode * job.threads; n != want {
			t.Errorf("node%d: %d CPUs, want %d", k, n, want)
		}
	}
}

// forms runs fn for every MPI installed and both launch forms.
func forms(t *testing.T, fn func(t *testing.T, impl mpiImpl, form string)) {
	for _, impl := range impls(t) {
		for _, form := range []string{formRun, formExec} {
			impl, form := impl, form
			t.Run(impl.name+"/"+form, func(t *testing.T) { fn(t, impl, form) })
		}
	}
}

// TestMultiNodeLoadBalanceOut: 2 nodes × 2 ranks whose load balance, In and
// Out all differ (examples/weighted.c, W = 0.5, 1.5, 8, 10): LB 0.5, In 0.9,
// Out 0.556, in a 2-s run (the first synchronization across nodes opens the
// connections: 10 to 20 ms of MPI time the design leaves out), with both
// MPIs and both forms (popmon run: the library reaches node1's ranks through
// popmon's forwarding with Open MPI, the launcher's with MPICH; popmon exec:
// each rank preloads it itself).
func TestMultiNodeLoadBalanceOut(t *testing.T) {
	forms(t, func(t *testing.T, impl mpiImpl, form string) {
		c := needCluster(t, 2)
		m, _, _ := runNodeJob(t, c, impl, form, nodeJob{nodes: 2, perNode: 2, threads: 1, prog: "weighted", args: []string{"200", "0.5,1.5,8,10"}})
		rep := compute(t, m, pop.ModelTALP)
		near(t, "load balance", value(t, rep, "Global", "mpi_load_balance"), 0.5, effTol)
		near(t, "load balance in", value(t, rep, "Global", "mpi_load_balance_in"), 0.9, effTol)
		near(t, "load balance out", value(t, rep, "Global", "mpi_load_balance_out"), 5.0/9, effTol)
		near(t, "communication efficiency", value(t, rep, "Global", "mpi_communication_efficiency"), 1, effTol)
	})
}

// TestMultiNodeOpenMP: the hybrid design of examples/hybrid_phases.c on 2
// nodes × 1 rank × 2 threads, with both MPIs and both forms: the OpenMP
// metrics are those of one node (each process's own), the MPI imbalance of
// phase2 is all across nodes (In 1, Out = LB). Derivation: examples/README.md,
// "Several nodes".
func TestMultiNodeOpenMP(t *testing.T) {
	forms(t, func(t *testing.T, impl mpiImpl, form string) {
		c := needCluster(t, 2)
		cc := compilers(t, examples(t, impl), "hybrid_phases")[0]
		// Twice TestHybridTwoPhases's phases: the first synchronization
		// across nodes opens the TCP connections (about 10 ms of MPI time
		// that the design leaves out).
		args := []string{"200", "2"}
		if busyWaitOversubscribed(impl, 4) {
			args = []string{"300", "2"}
		}
		m, file, se := runNodeJob(t, c, impl, form, nodeJob{nodes: 2, perNode: 1, threads: 2, prog: "hybrid_phases." + cc, args: args,
			env: append([]string{"OMP_NUM_THREADS=2"}, ompEnv...)})
		if m.OpenMP == nil || !m.OpenMP.OMPT {
			t.Fatalf("OpenMP not measured: %+v\n%s", m.OpenMP, se)
		}
		// The one-node design, and In/Out of one rank per node.
		checkAll(t, computeAll(t, m), file, append([]want{
			{pop.ModelTALP, "phase2", "mpi_load_balance_in", 1},
			{pop.ModelTALP, "phase2", "mpi_load_balance_out", 0.75},
			{pop.ModelTALP, "Global", "mpi_load_balance_in", 1},
			{pop.ModelTALP, "Global", "mpi_load_balance_out", 0.875},
		}, hybridPhasesWants...))
	})
}

// agents returns the node agents (popmon agent) running on the machine.
func agents() []int {
	var out []int
	for _, pid := range processes() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		if a := strings.Split(string(b), "\x00"); len(a) > 2 && a[0] == popmonBin && a[1] == "agent" {
			out = append(out, pid)
		}
	}
	return out
}

// waitAgents waits up to 10 s for the node agents to write their last
// copies and end; it returns those still running.
func waitAgents() []int {
	deadline := time.Now().Add(10 * time.Second)
	for len(agents()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return agents()
}

// noLeftovers checks that no node agent runs (after waiting up to 10 s for
// them to finish their last copies) and that no node keeps a live folder.
func noLeftovers(t *testing.T, c *cluster) {
	t.Helper()
	if a := waitAgents(); len(a) > 0 {
		t.Errorf("node agents still running: %v", a)
	}
	for k := 0; k < c.nodes; k++ {
		so, se, _ := c.run(t, time.Minute, c.On(k, "sh", "-c", "ls -A /dev/shm/popmon-$(id -u) 2>/dev/null; true"))
		if strings.TrimSpace(so) != "" {
			t.Errorf("%s keeps live folders in /dev/shm: %s%s", c.Node(k), so, se)
		}
	}
}

// midRunNodes starts the imbalance demo (200 iterations) under popmon run
// on node0, its ranks on two nodes (Open MPI 2 × 2; MPICH, which
// busy-waits, 2 × 1), and returns when it has run 2.5 s: the job size, the
// ranks per node, the run, and how long its ranks have been running.
func midRunNodes(t *testing.T, c *cluster, impl mpiImpl) (int, int, *started, time.Duration) {
	t.Helper()
	dir := examples(t, impl)
	np := partialRanks(impl)
	per := np / 2
	s := &started{out: filepath.Join(t.TempDir(), "p.json")}
	job := c.Launch(impl, np, c.Hosts(2, per), filepath.Join(dir, "imbalance"), fmt.Sprint(partialK), "200")
	s.start(t, c.OnEnv(0, clusterEnv(), append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", s.out, "--"}, job...)...), nil, np, "imbalance")
	time.Sleep(2500 * time.Millisecond)
	return np, per, s, time.Since(s.seen)
}

// checkNodes checks that the partial measurement m has every rank on its
// node.
func checkNodes(t *testing.T, m *measure.Measurement, per int) {
	t.Helper()
	if m.Resources.Nodes != 2 {
		t.Errorf("%d nodes, want 2", m.Resources.Nodes)
	}
	for _, p := range m.Processes {
		if want := fmt.Sprintf("node%d", p.Rank/per); p.Hostname != want {
			t.Errorf("rank %d on %s, want %s", p.Rank, p.Hostname, want)
		}
	}
}

// TestMultiNodePartialKilled: SIGKILL of every rank of a job on two nodes:
// popmon run on node0 reads node1's ranks from the copies node1's agent
// writes into the session folder, and the partial measurement has them
// all, with the designed load balance.
func TestMultiNodePartialKilled(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			c := needCluster(t, 2)
			np, per, s, at := midRunNodes(t, c, impl)
			for _, pid := range s.ranks {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			if ws := s.wait(t); ws.ExitStatus() == 0 && !ws.Signaled() {
				t.Errorf("popmon run exited 0 for a killed job")
			}
			m := checkPartial(t, s.out, np, measure.PartialKilled, at, s.se.String())
			checkNodes(t, m, per)
			for _, e := range m.Partial.Ends {
				if e.End != "killed" {
					t.Errorf("rank %d ended %q, want killed", e.Rank, e.End)
				}
			}
			noLeftovers(t, c)
		})
	}
}

// TestMultiNodeRecover: SIGKILL of popmon run and of the job on two nodes,
// then popmon recover on node0: node1's ranks come from its agent's copies.
func TestMultiNodeRecover(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			c := needCluster(t, 2)
			np, per, s, at := midRunNodes(t, c, impl)
			session := s.killAll(t)
			if copies, _ := filepath.Glob(filepath.Join(session, "nodes", "node1", "*.live")); len(copies) != per {
				t.Errorf("node1's copies %v, want %d", copies, per)
			}
			if a := waitAgents(); len(a) > 0 {
				t.Errorf("node agents still running after the job: %v", a)
			}
			so, se, code := c.run(t, time.Minute, c.OnEnv(0, clusterEnv(), popmonBin, "recover", "--format", "none", session))
			if code != 0 {
				t.Fatalf("recover exit %d\n%s%s", code, so, se)
			}
			m := checkPartial(t, s.out, np, measure.PartialKilled, at, se)
			checkNodes(t, m, per)
			if m.Partial.AssembledBy != "recover" {
				t.Errorf("assembled_by %q", m.Partial.AssembledBy)
			}
			if _, err := os.Stat(session); err == nil {
				t.Errorf("recover left the session folder %s", session)
			}
			noLeftovers(t, c)
		})
	}
}

// TestMultiNodeLibraryMissing: the library's cache is visible on node0 only
// (a node-local folder): node1's ranks run without it. The job finishes, and
// the measurement of node0's ranks names the missing ones and shows no tree.
func TestMultiNodeLibraryMissing(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			if impl.name == "mpich" {
				// MPICH before 4.2 (Debian's is 4.0.2) hangs in its own
				// MPI_Finalize across nodes when the ranks of one node
				// (here: those without the library) close their
				// connections and park in the final barrier before the
				// others enter MPI_Finalize; fixed upstream (commit
				// 08d8105b). popmon's side of this case runs for MPICH in
				// TestPartialPreload, on one node.
				t.Skip("MPICH < 4.2 hangs in MPI_Finalize across nodes when some ranks finalize long before the others (fixed in MPICH 4.2)")
			}
			c := needCluster(t, 2)
			dir := examples(t, impl)
			cache := filepath.Join(nodeLocal, "cache-"+impl.name)
			defer c.run(t, time.Minute, c.On(0, "rm", "-rf", cache))
			out := filepath.Join(t.TempDir(), "m.json")
			job := c.Launch(impl, 4, c.Hosts(2, 2), filepath.Join(dir, "imbalance"), "50", "2")
			env := clusterEnv()
			env[0] = "POPMON_CACHE_DIR=" + cache // node-local: node1 does not see it
			argv := c.OnEnv(0, env, append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, job...)...)
			so, se, code := c.run(t, 3*time.Minute, argv)
			if code != 0 || !strings.Contains(so, "ok ") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			if _, err := os.Stat(out); err != nil {
				t.Fatalf("no measurement: %v\n%s", err, se)
			}
			m := readChecked(t, out)
			if m.Incomplete == nil || m.Incomplete.MissingRanks != "2-3" || m.Version != 2 {
				t.Fatalf("incomplete %+v (version %d), want ranks 2-3 missing", m.Incomplete, m.Version)
			}
			if rep := compute(t, m, pop.ModelTALP); rep.Refused == "" {
				t.Error("metrics for a job the library reached only in part")
			}
		})
	}
}

// TestMultiNodeWiped: the worst case of docs/live-format.md, "Node copies":
// node1's agent is SIGKILLed with the ranks and node1's /dev/shm is wiped
// (Slurm's job_container/tmpfs). node1's ranks come from the agent's last
// periodic copy: they are in the partial measurement, with at most one copy
// interval (1 s, plus the agent's 100-ms poll) less than node0's.
func TestMultiNodeWiped(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			c := needCluster(t, 2)
			np, per, s, _ := midRunNodes(t, c, impl)
			for _, a := range agents() {
				syscall.Kill(a, syscall.SIGKILL)
			}
			for _, pid := range s.ranks {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			c.run(t, time.Minute, c.On(1, "sh", "-c", "rm -rf /dev/shm/popmon-$(id -u)"))
			s.wait(t)
			m := readChecked(t, s.out)
			p := m.Partial
			if p == nil || p.Included != np || p.Reason != measure.PartialKilled {
				t.Fatalf("partial %+v, want %d ranks killed\n%s", p, np, s.se.String())
			}
			checkNodes(t, m, per)
			var node0 int64
			for _, e := range p.Ends {
				if e.Rank < per {
					node0 = max(node0, e.ValidUntilNS)
				}
			}
			for _, e := range p.Ends {
				if e.End != "killed" {
					t.Errorf("rank %d ended %q, want killed", e.Rank, e.End)
				}
				if loss := time.Duration(node0 - e.ValidUntilNS); e.Rank >= per && (loss < 0 || loss > 1300*time.Millisecond) {
					t.Errorf("rank %d (node1) measured until %v, %v before node0's ranks: want 0 to 1.3 s", e.Rank, time.Duration(e.ValidUntilNS), loss)
				}
			}
			noLeftovers(t, c)
		})
	}
}

// TestMultiNodeTerminated: the batch system's ending (Slurm: SIGTERM to
// every process of the job, the agent included, then SIGKILL and the
// node's memory wiped): node1's agent survives the SIGTERM and copies its
// ranks as they end, so nothing of them is lost.
func TestMultiNodeTerminated(t *testing.T) {
	impl := impls(t)[0]
	c := needCluster(t, 2)
	np, per, s, _ := midRunNodes(t, c, impl)
	for _, pid := range append(agents(), s.ranks...) {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	time.Sleep(500 * time.Millisecond) // KillWait (30 s by default, at least 5)
	for _, a := range agents() {
		syscall.Kill(a, syscall.SIGKILL)
	}
	c.run(t, time.Minute, c.On(1, "sh", "-c", "rm -rf /dev/shm/popmon-$(id -u)"))
	s.wait(t)
	m := checkPartial(t, s.out, np, measure.PartialTerminated, 0, s.se.String())
	checkNodes(t, m, per)
	for _, e := range m.Partial.Ends {
		if e.End != "signal 15 (SIGTERM)" {
			t.Errorf("rank %d ended %q, want signal 15 (SIGTERM)", e.Rank, e.End)
		}
	}
	noLeftovers(t, c)
}
