package e2e

// A cluster of simulated nodes on this machine for multi-node tests:
// scripts/cluster/up.sh gives each node its own network, UTS, IPC and mount
// namespaces (hostname nodeK, address 10.77.0.(10+k), a private /dev/shm,
// /etc/hosts listing every node, a node-local directory at nodeLocal) and
// writes DIR/on, the ssh stand-in that runs a command on a node with the
// fresh environment sshd would give. scripts/cluster/README.md has the MPI
// launcher settings these helpers use.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// clusterSubnet holds the nodes' addresses; it exists only inside the
	// cluster's own network namespaces.
	clusterSubnet = "10.77.0.0/24"
	// nodeLocal is the node-local directory, the same path on every node.
	nodeLocal = "/var/tmp/popmon-node"
	// exitCannot is up.sh's exit status when namespaces cannot be created.
	exitCannot = 77
)

// cluster is a running set of simulated nodes, node0 .. node(nodes-1).
type cluster struct {
	dir   string // up.sh's state folder
	nodes int
	agent string // dir/on: the ssh stand-in
	// lifeline is the write end of the pipe the node holders read: the
	// namespaces end when it is closed, or when the test binary exits.
	lifeline *os.File
	// closers are further lifelines (Slurm's) closed at teardown.
	closers []*os.File
}

// closeAtTeardown closes f when the cluster is torn down.
func (c *cluster) closeAtTeardown(f *os.File) { c.closers = append(c.closers, f) }

var (
	clustersMu sync.Mutex
	clusters   []*cluster
	// clusterSkip and clusterErr remember why no cluster can be started, so
	// that every test that needs one says the same at once.
	clusterSkip string
	clusterErr  error
)

// needCluster returns a running cluster of at least nodes nodes, started
// once per test binary and shared by the tests. It skips the test in -short
// mode, when not root, or when this machine cannot create namespaces; it
// fails it when up.sh fails for another reason. TestMain must call
// teardownClusters after the tests; should it not, the nodes still end with
// the test binary (their holders read a pipe that closes when it exits).
func needCluster(t *testing.T, nodes int) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-node: starts a cluster of namespaces and runs MPI jobs")
	}
	if os.Geteuid() != 0 {
		t.Skip("multi-node tests need root: scripts/cluster/up.sh creates network, UTS, IPC and mount namespaces")
	}
	clustersMu.Lock()
	defer clustersMu.Unlock()
	if clusterSkip != "" {
		t.Skip(clusterSkip)
	}
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	for _, c := range clusters {
		if c.nodes >= nodes {
			return c
		}
	}
	c, skip, err := startCluster(nodes)
	if skip != "" {
		clusterSkip = skip
		t.Skip(skip)
	}
	if err != nil {
		clusterErr = err
		t.Fatal(err)
	}
	clusters = append(clusters, c)
	return c
}

// startCluster runs up.sh for a new cluster in its own folder. It returns
// a reason to skip when namespaces cannot be created here.
func startCluster(nodes int) (*cluster, string, error) {
	base := os.TempDir()
	if popmonBin != "" {
		base = filepath.Dir(popmonBin) // removed by TestMain
	}
	dir, err := os.MkdirTemp(base, "cluster-")
	if err != nil {
		return nil, "", fmt.Errorf("creating the cluster's folder: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, "", fmt.Errorf("creating the cluster's lifeline pipe: %w", err)
	}
	defer r.Close()
	up := filepath.Join(clusterScripts(), "up.sh")
	cmd := exec.Command("timeout", "60", up, strconv.Itoa(nodes), dir)
	cmd.Env = append(os.Environ(), "CLUSTER_LIFELINE=3")
	cmd.ExtraFiles = []*os.File{r} // fd 3 of up.sh and of the holders
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.Close()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == exitCannot {
			os.RemoveAll(dir)
			return nil, fmt.Sprintf("multi-node tests skipped: %s", strings.TrimSpace(string(out))), nil
		}
		return nil, "", fmt.Errorf("starting a cluster of %d nodes (%s %d %s): %v\n%s", nodes, up, nodes, dir, err, out)
	}
	return &cluster{dir: dir, nodes: nodes, agent: filepath.Join(dir, "on"), lifeline: w}, "", nil
}

// clusterScripts is the folder of up.sh, down.sh and on.
func clusterScripts() string {
	root := repoRoot
	if root == "" {
		wd, _ := os.Getwd()
		root = filepath.Clean(filepath.Join(wd, "..", ".."))
	}
	return filepath.Join(root, "scripts", "cluster")
}

// teardownClusters ends every cluster needCluster started: the processes
// still running on its nodes, the namespaces, the folder. TestMain calls it
// after m.Run.
func teardownClusters() {
	clustersMu.Lock()
	defer clustersMu.Unlock()
	for _, c := range clusters {
		// Slurm's watcher ends its processes while their namespaces
		// still exist (it finds them by namespace).
		for _, f := range c.closers {
			f.Close()
		}
		down := exec.Command("timeout", "60", filepath.Join(clusterScripts(), "down.sh"), c.dir)
		if out, err := down.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "tearing down the cluster in %s: %v\n%s", c.dir, err, out)
		}
		c.lifeline.Close()
		os.RemoveAll(c.dir)
	}
	clusters = nil
}

// Node is the name of node k.
func (c *cluster) Node(k int) string { return fmt.Sprintf("node%d", k) }

// Hosts is the launchers' host list of the first nodes nodes with perNode
// slots each, "node0:2,node1:2"; Open MPI's --host and Hydra's -hosts
// accept it and place ranks by slot (ranks 0, 1 on node0, 2, 3 on node1).
func (c *cluster) Hosts(nodes, perNode int) string {
	hs := make([]string, nodes)
	for k := range hs {
		hs[k] = fmt.Sprintf("%s:%d", c.Node(k), perNode)
	}
	return strings.Join(hs, ",")
}

// On is the command line that runs argv on node k the way ssh would: in a
// fresh environment (HOME, USER, LOGNAME, SHELL, PATH, the locale), in the
// current directory. Each word is quoted for the remote shell.
func (c *cluster) On(node int, argv ...string) []string {
	return c.OnEnv(node, nil, argv...)
}

// OnEnv is On with env (KEY=VALUE) added to the node's fresh environment.
func (c *cluster) OnEnv(node int, env []string, argv ...string) []string {
	words := argv
	if len(env) > 0 {
		words = append(append([]string{"env"}, env...), argv...)
	}
	out := []string{c.agent, c.Node(node)}
	for _, w := range words {
		out = append(out, shellQuote(w))
	}
	return out
}

// OpenMPI is Open MPI's launcher command for np ranks on hosts (see Hosts)
// across the cluster, to be run on a node (On): the rsh agent is the
// cluster's, TCP (out-of-band and MPI) stays on the cluster's subnet, and
// it runs as root. Launcher options may start argv, before the program.
func (c *cluster) OpenMPI(np int, hosts string, argv ...string) []string {
	cmd := []string{"mpirun.openmpi"}
	if os.Geteuid() == 0 {
		cmd = append(cmd, "--allow-run-as-root")
	}
	cmd = append(cmd, "--host", hosts, "-np", strconv.Itoa(np),
		"--mca", "plm_rsh_agent", c.agent,
		"--mca", "oob_tcp_if_include", clusterSubnet,
		"--mca", "btl_tcp_if_include", clusterSubnet,
		"--mca", "btl_vader_single_copy_mechanism", "none")
	return append(cmd, argv...)
}

// MPICH is MPICH's Hydra launcher command for np ranks on hosts (see
// Hosts), to be run on a node (On): Hydra's ssh launcher with the cluster's
// agent. Launcher options may start argv, before the program.
func (c *cluster) MPICH(np int, hosts string, argv ...string) []string {
	cmd := []string{"mpirun.mpich", "-launcher", "ssh", "-launcher-exec", c.agent,
		"-hosts", hosts, "-n", strconv.Itoa(np)}
	return append(cmd, argv...)
}

// Launch is OpenMPI or MPICH for impl.
func (c *cluster) Launch(impl mpiImpl, np int, hosts string, argv ...string) []string {
	if impl.name == "openmpi" {
		return c.OpenMPI(np, hosts, argv...)
	}
	return c.MPICH(np, hosts, argv...)
}

// run runs argv (e.g. from On) and returns its stdout, stderr and exit
// status. Past timeout its process group gets SIGTERM, then SIGKILL, and the
// test fails; processes it left on the nodes end with the cluster.
func (c *cluster) run(t *testing.T, timeout time.Duration, argv []string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ctx.Err() != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("%s: still running after %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), timeout, so.String(), se.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return so.String(), se.String(), code
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+@%-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestClusterAgent: the agent runs a command on the named node with a fresh
// environment, in the current directory, with its exit status; each node has
// its own hostname, /dev/shm and node-local directory, and reaches the others
// by name.
func TestClusterAgent(t *testing.T) {
	c := needCluster(t, 2)
	t.Setenv("POPMON_LEAK_TEST", "leaked")
	wd, err := os.Getwd()
	if err == nil {
		wd, err = filepath.EvalSymlinks(wd) // the agent gives the physical path
	}
	if err != nil {
		t.Fatal(err)
	}
	shm := "/dev/shm/popmon-cluster-test"
	local := nodeLocal + "/popmon-cluster-test"
	script := `echo "host=$(hostname)"; echo "leak=${POPMON_LEAK_TEST-unset}"; echo "pwd=$(pwd)"; echo "arg=$1"
		echo "node0=$(getent hosts node0 | cut -d' ' -f1)"
		if [ "$(hostname)" = node0 ]; then echo 0 >` + shm + `; echo 0 >` + local + `; fi
		echo "shm=$(cat ` + shm + ` 2>/dev/null || echo none)"; echo "local=$(cat ` + local + ` 2>/dev/null || echo none)"
		exit 7`
	want := map[int]map[string]string{
		0: {"host": "node0", "shm": "0", "local": "0"},
		1: {"host": "node1", "shm": "none", "local": "none"},
	}
	for _, k := range []int{0, 1} {
		so, se, code := c.run(t, time.Minute, c.On(k, "sh", "-c", script, "sh", "two words 'quoted' $HOME"))
		if code != 7 {
			t.Errorf("node%d: exit status %d, want 7 (the command's)\nstderr: %s", k, code, se)
		}
		got := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(so), "\n") {
			if key, v, ok := strings.Cut(l, "="); ok {
				got[key] = v
			}
		}
		for key, v := range map[string]string{
			"leak": "unset", "pwd": wd, "arg": "two words 'quoted' $HOME", "node0": "10.77.0.10",
			"host": want[k]["host"], "shm": want[k]["shm"], "local": want[k]["local"],
		} {
			if got[key] != v {
				t.Errorf("node%d: %s=%q, want %q\nstdout:\n%s\nstderr:\n%s", k, key, got[key], v, so, se)
			}
		}
	}
	// The file node0 wrote into its own /dev/shm is not in this machine's.
	if _, err := os.Stat(shm); err == nil {
		t.Errorf("%s written on node0 is visible outside the node", shm)
	}
}

// nodesProgram prints, per rank, its processor name and its node
// communicator (MPI_COMM_TYPE_SHARED): size, lowest world rank, and the
// number of such communicators. It ends with a barrier and a 100 ms pause
// without MPI calls: MPICH up to 4.1 with UCX over TCP (Debian's 4.0.2) can
// hang in MPI_Finalize when a rank is still in MPI calls after another one
// has finished its part of finalize (scripts/cluster/README.md).
const nodesProgram = `#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
	int rank, size, nrank, nsize, leader, first, nodes, len;
	char name[MPI_MAX_PROCESSOR_NAME];
	MPI_Comm node;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(name, &len);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &nrank);
	MPI_Comm_size(node, &nsize);
	MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
	first = nrank == 0;
	MPI_Allreduce(&first, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank=%d size=%d host=%s nodesize=%d leader=%d nodes=%d\n", rank, size, name, nsize, leader, nodes);
	MPI_Comm_free(&node);
	MPI_Barrier(MPI_COMM_WORLD);
	usleep(100000);
	MPI_Finalize();
	return 0;
}
`

var nodesLine = regexp.MustCompile(`^rank=(\d+) size=(\d+) host=(\S+) nodesize=(\d+) leader=(\d+) nodes=(\d+)$`)

// TestClusterSeesNodes: 4 ranks launched from node0 onto node0:2,node1:2
// are on 2 distinct hosts (processor names node0, node1, ranks placed by
// slot) and MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives 2 node
// communicators of 2 ranks, with Open MPI and with MPICH.
func TestClusterSeesNodes(t *testing.T) {
	c := needCluster(t, 2)
	src := filepath.Join(t.TempDir(), "nodes.c")
	if err := os.WriteFile(src, []byte(nodesProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(filepath.Dir(src), "nodes-"+impl.name)
			if out, err := exec.Command(impl.mpicc, "-o", prog, src).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", impl.mpicc, err, out)
			}
			argv := c.On(0, c.Launch(impl, 4, c.Hosts(2, 2), prog)...)
			so, se, code := c.run(t, 2*time.Minute, argv)
			if code != 0 {
				t.Fatalf("%s: exit status %d\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
			}
			type rankInfo struct {
				host                          string
				size, nodeSize, leader, nodes int
			}
			ranks := map[int]rankInfo{}
			sc := bufio.NewScanner(strings.NewReader(so))
			for sc.Scan() {
				m := nodesLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
				if m == nil {
					continue
				}
				n := make([]int, 5)
				for i, s := range []string{m[1], m[2], m[4], m[5], m[6]} {
					n[i], _ = strconv.Atoi(s)
				}
				if _, dup := ranks[n[0]]; dup {
					t.Errorf("rank %d printed twice", n[0])
				}
				ranks[n[0]] = rankInfo{host: m[3], size: n[1], nodeSize: n[2], leader: n[3], nodes: n[4]}
			}
			if len(ranks) != 4 {
				t.Fatalf("%d ranks reported, want 4\nstdout:\n%s\nstderr:\n%s", len(ranks), so, se)
			}
			hosts := map[string]bool{}
			for r := 0; r < 4; r++ {
				got, ok := ranks[r]
				if !ok {
					t.Fatalf("rank %d missing\nstdout:\n%s", r, so)
				}
				hosts[got.host] = true
				want := rankInfo{host: c.Node(r / 2), size: 4, nodeSize: 2, leader: r / 2 * 2, nodes: 2}
				if got != want {
					t.Errorf("rank %d: %+v, want %+v", r, got, want)
				}
			}
			if len(hosts) != 2 {
				t.Errorf("processor names %v, want 2 distinct hosts", hosts)
			}
		})
	}
}
