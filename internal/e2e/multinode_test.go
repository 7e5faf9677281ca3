package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/pop"
)

// Multi-node behaviour of issue 10, on the namespace cluster
// (cluster_test.go): popmon run makes the library reach the ranks of every
// node (Open MPI passes only what it is told to), the Global region is
// aligned across nodes, and a library that does not reach some ranks never
// hangs the job.

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

// TestMultiNodeLoadBalanceOut: 2 nodes × 2 ranks whose load balance, In and
// Out all differ (examples/weighted.c, W = 0.5, 1.5, 8, 10): LB 0.5, In 0.9,
// Out 0.556, in a 1-s run, with the library reaching node1's ranks through
// popmon's forwarding (Open MPI) or the launcher's (MPICH).
func TestMultiNodeLoadBalanceOut(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			c := needCluster(t, 2)
			dir := examples(t, impl)
			out := filepath.Join(t.TempDir(), "m.json")
			job := c.Launch(impl, 4, c.Hosts(2, 2), filepath.Join(dir, "weighted"), "100", "0.5,1.5,8,10")
			argv := c.OnEnv(0, clusterEnv(), append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, job...)...)
			so, se, code := c.run(t, 3*time.Minute, argv)
			if code != 0 || !strings.Contains(so, "ok 20") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			m := readChecked(t, out)
			if m.Resources.Processes != 4 || m.Resources.Nodes != 2 || m.Incomplete != nil {
				t.Fatalf("resources %+v, incomplete %+v:\n%s", m.Resources, m.Incomplete, se)
			}
			for _, p := range m.Processes {
				if want := fmt.Sprintf("node%d", p.Rank/2); p.Hostname != want || p.Node != p.Rank/2 {
					t.Errorf("rank %d on %s (node %d), want %s", p.Rank, p.Hostname, p.Node, want)
				}
			}
			rep := compute(t, m, pop.ModelTALP)
			near(t, "load balance", value(t, rep, "Global", "mpi_load_balance"), 0.5, effTol)
			near(t, "load balance in", value(t, rep, "Global", "mpi_load_balance_in"), 0.9, effTol)
			near(t, "load balance out", value(t, rep, "Global", "mpi_load_balance_out"), 5.0/9, effTol)
			near(t, "communication efficiency", value(t, rep, "Global", "mpi_communication_efficiency"), 1, effTol)
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
