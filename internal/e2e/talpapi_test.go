package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/pop"
)

// fieldsAfter parses "key value" pairs of a line of the examples' output
// ("iter 3 rc 0 lb 0.6250 ...") into a map.
func fieldsAfter(t *testing.T, line string) map[string]float64 {
	t.Helper()
	f := strings.Fields(line)
	out := map[string]float64{}
	for i := 0; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i+1], 64)
		if err != nil {
			t.Fatalf("line %q: %s: %v", line, f[i], err)
		}
		out[f[i]] = v
	}
	return out
}

// TestTALPAPI runs examples/talp_api and its Fortran twin talp_api_f (the
// imbalance design, P = 4) under popmon with both MPIs: DLB_TALP_CollectPOPMetrics(DLB_GLOBAL_REGION)
// answers 0 every iteration with LB = (P+1)/(2P) = 0.625 from the third
// on, over 4 ranks, and popmon_metrics since the last call the same per
// iteration; a region registered on rank 0 only is collected on every rank
// without hanging (the run has a deadline), with one process in it; the
// last call's values are the final report's Global.
func TestTALPAPI(t *testing.T) {
	for _, impl := range impls(t) {
		for _, prog := range []string{"talp_api", "talp_api_f"} {
			t.Run(impl.name+"/"+prog, func(t *testing.T) { talpAPI(t, impl, prog) })
		}
	}
}

// talpAPI checks one run of talp_api or its Fortran twin talp_api_f (same
// design, same output lines).
func talpAPI(t *testing.T, impl mpiImpl, prog string) {
	if _, err := os.Stat(filepath.Join(examples(t, impl), prog)); err != nil {
		t.Skipf("%s not built (no Fortran compiler wrapper)", prog)
	}
	// popmon_metrics since the last call measures one iteration: 100-ms
	// steps keep a scheduling delay of a loaded machine within the
	// tolerance. Longer ones where every synchronization costs a time
	// slice (each iteration has five: the program's and two per query).
	k, n := 100, 6
	if busyWaitOversubscribed(impl, 4) {
		k, n = 200, 5
	}
	r := measureRun(t, impl, 4, prog, fmt.Sprint(k), fmt.Sprint(n))
	const lb = 0.625
	iters, ones := 0, 0
	var final, node map[string]float64
	for _, line := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.HasPrefix(line, "iter "):
			v := fieldsAfter(t, line)
			iters++
			if v["rc"] != 0 || v["ranks"] != 4 {
				t.Errorf("%s: want rc 0 and 4 ranks", line)
			}
			if v["iter"] >= 3 && (math.Abs(v["lb"]-lb) > 0.03 || math.Abs(v["last_lb"]-lb) > 0.03) {
				t.Errorf("%s: want lb and last_lb %.3f ± 0.03", line, lb)
			}
		case strings.HasPrefix(line, "rank ") && strings.Contains(line, "one-rank"):
			v := fieldsAfter(t, strings.Replace(line, "one-rank ", "", 1))
			ones++
			if v["rc"] != 0 || v["ranks"] != 1 || v["dlb_rc"] != 0 || v["dlb_ranks"] != 1 ||
				math.Abs(v["pe"]-1) > 0.02 || math.Abs(v["elapsed_ms"]-float64(k)) > 0.1*float64(k) {
				t.Errorf("%s: want rc 0, 1 rank (both calls), PE 1, elapsed %d ms", line, k)
			}
		case strings.HasPrefix(line, "node "):
			node = fieldsAfter(t, strings.TrimPrefix(line, "node "))
		case strings.HasPrefix(line, "final "):
			final = fieldsAfter(t, strings.TrimPrefix(line, "final "))
		}
	}
	if iters != n || ones != 4 || final == nil || !strings.Contains(r.stdout, "\nok\n") {
		t.Fatalf("want %d iterations, 4 one-rank lines, a final line and ok:\n%s\nstderr:\n%s", n, r.stdout, r.stderr)
	}
	// DLB_TALP_CollectPOPNodeMetrics: every rank on this node.
	if node == nil || node["rc"] != 0 || node["ppn"] != 4 || math.Abs(node["lb"]-lb) > 0.03 {
		t.Errorf("node line %v: want rc 0, ppn 4, lb %.3f ± 0.03", node, lb)
	}
	g := r.region(t, "Global")
	for _, c := range []struct {
		key, id string
	}{{"lb", pop.IDMPILoadBalance}, {"pe", pop.IDParallelEfficiency}, {"comm", pop.IDMPICommunicationEfficiency}} {
		want, _ := g.Value(c.id)
		if math.Abs(final[c.key]-want) > effTol {
			t.Errorf("last call %s = %.4f, final report's Global %.4f", c.key, final[c.key], want)
		}
	}
	if final["ranks"] != float64(g.Processes) {
		t.Errorf("last call: %v ranks, report %d", final["ranks"], g.Processes)
	}
	if e := float64(g.ElapsedNS); math.Abs(final["elapsed_ns"]-e) > 0.1*e {
		t.Errorf("last call: elapsed %v ns, report %d ns", final["elapsed_ns"], g.ElapsedNS)
	}
	var u int64
	for _, a := range r.m.Regions[0].Processes {
		u += a.UsefulNS
	}
	if math.Abs(final["useful_ns"]-float64(u)) > 0.1*float64(u) {
		t.Errorf("last call: useful %v ns, report %d ns", final["useful_ns"], u)
	}
	r.expect(t, "rank 0 only", pop.IDParallelEfficiency, 1, effTol)
	t.Logf("final call %v", final)
}

// TestTALPMonitor starts examples/talp_monitor (a process that is not part
// of the job, with the library preloaded and measuring nothing itself:
// POPMON_DISABLE=1) BEFORE a job of examples/imbalance on 4 ranks, both
// sharing a private live folder ($POPMON_LIVE_DIR; the folder scan of
// /dev/shm would also see other jobs of this machine). The monitor first
// sees no process, then the 4 ranks with growing times, and a node load
// balance of (P+1)/(2P) = 0.625; it stops when the job has ended.
func TestTALPMonitor(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			lib, se, code := popmon(t, nil, "build", "--mpicc", impl.mpicc)
			if code != 0 {
				t.Fatalf("popmon build: exit %d\n%s", code, se)
			}
			lib = strings.TrimSpace(lib)
			live, err := os.MkdirTemp(t.TempDir(), "live-")
			if err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "LD_PRELOAD="+lib, "POPMON_LIVE_DIR="+live)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			mon := exec.CommandContext(ctx, filepath.Join(dir, "talp_monitor"), "90", "250")
			mon.Env = append(env, "POPMON_DISABLE=1")
			var mo, me bytes.Buffer
			mon.Stdout, mon.Stderr = &mo, &me
			if err := mon.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(700 * time.Millisecond) // the monitor is up before the job
			out := filepath.Join(t.TempDir(), "m.json")
			job := exec.CommandContext(ctx, launch(impl, 4)[0], append(launch(impl, 4)[1:], filepath.Join(dir, "imbalance"), "100", "12")...)
			job.Env = append(env, "POPMON_OUTPUT="+out)
			if b, err := job.CombinedOutput(); err != nil {
				t.Fatalf("job: %v\n%s", err, b)
			}
			if err := mon.Wait(); err != nil {
				t.Fatalf("monitor: %v\nstdout:\n%s\nstderr:\n%s", err, mo.String(), me.String())
			}
			lines := strings.Split(mo.String(), "\n")
			first := ""
			useful := map[string][]float64{}
			var lastNode map[string]float64
			for _, line := range lines {
				switch {
				case strings.HasPrefix(line, "sample ") && first == "":
					first = line
				case strings.HasPrefix(line, "pid "):
					f := strings.Fields(line)
					if len(f) == 6 {
						v, _ := strconv.ParseFloat(f[5], 64)
						useful[f[1]] = append(useful[f[1]], v)
					}
				case strings.HasPrefix(line, "node "):
					lastNode = fieldsAfter(t, strings.TrimPrefix(line, "node "))
				}
			}
			if !strings.HasSuffix(first, " pids 0") {
				t.Errorf("first sample %q: the monitor should see no process before the job", first)
			}
			if !strings.Contains(mo.String(), "ok max_pids 4\n") || len(useful) != 4 {
				t.Fatalf("want 4 processes seen:\n%s", mo.String())
			}
			for pid, u := range useful {
				for i := 1; i < len(u); i++ {
					if u[i] < u[i-1] {
						t.Errorf("pid %s: useful time went back, %v", pid, u)
						break
					}
				}
				if len(u) < 3 || u[len(u)-1] <= u[0] {
					t.Errorf("pid %s: useful times %v do not grow", pid, u)
				}
			}
			if !strings.Contains(mo.String(), "\nnode_times 4\n") {
				t.Errorf("DLB_TALP_GetNodeTimes never listed the 4 processes:\n%s", mo.String())
			}
			if lastNode == nil || lastNode["ppn"] != 4 || math.Abs(lastNode["lb"]-0.625) > 0.03 {
				t.Errorf("last node line %v: want ppn 4, lb 0.625 ± 0.03", lastNode)
			}
		})
	}
}

// TestMalleable runs examples/malleable (2 ranks, hybrid MPI+OpenMP) under
// popmon: it grows its OpenMP team while popmon_metrics(NULL,
// POPMON_WINDOW_SINCE_LAST) says the last window's parallel efficiency
// reached the target, and must settle on the designed T* = 2 (the program
// exits 1 otherwise); its processes had a largest team of 3 (the step past
// T*), their CPUs in the measurement.
func TestMalleable(t *testing.T) {
	for _, impl := range impls(t) {
		dir := examples(t, impl)
		for _, cc := range compilers(t, dir, "malleable") {
			t.Run(impl.name+"/"+cc, func(t *testing.T) {
				argv := append(launch(impl, 2), filepath.Join(dir, "malleable."+cc))
				m, _, _ := ompRun(t, []string{"OMP_NUM_THREADS=1"}, []string{"--mpicc", impl.mpicc}, argv...)
				for _, p := range m.Processes {
					if p.CPUs != 3 {
						t.Errorf("rank %d: %d CPUs, want 3 (teams of 1, 2, 3 and back to 2)", p.Rank, p.CPUs)
					}
				}
			})
		}
	}
}

// TestTALPAPIMultiNode runs examples/talp_api on the namespace cluster, 2
// nodes × 2 ranks: DLB_TALP_CollectPOPMetrics's node terms come from the
// node communicator. Rank r works (r+1)·K in each of N iterations, and
// rank 0 K more in the "rank 0 only" region before the last call, while
// the others wait in MPI: T = (4N+1)K; MPI time per rank 3N, 2N+1, N+1, 1
// (× K), mean (6N+3)/4, least of a process 1, least mean of a node
// (N+2)/2. So LB = (T − mean)/(T − 1) = (10N+1)/(16N), In = (T − (N+2)/2)/
// (T − 1) = 7/8, Out = (T − mean)/(T − (N+2)/2) = (10N+1)/(14N) (0.625,
// 0.875, 0.714 for long runs), on 2 nodes, as the final report's Global.
func TestTALPAPIMultiNode(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			c := needCluster(t, 2)
			dir := examples(t, impl)
			out := filepath.Join(t.TempDir(), "m.json")
			k, n := "100", "4"
			if busyWaitOversubscribed(impl, 4) {
				k, n = "600", "3" // five synchronizations per iteration, each a time slice or so: long steps keep them small
			}
			iters, _ := strconv.ParseFloat(n, 64)
			job := c.Launch(impl, 4, c.Hosts(2, 2), filepath.Join(dir, "talp_api"), k, n)
			argv := c.OnEnv(0, clusterEnv(), append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, job...)...)
			so, se, code := c.run(t, 3*time.Minute, argv)
			if code != 0 || !strings.Contains(so, "\nok\n") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			var final map[string]float64
			for _, line := range strings.Split(so, "\n") {
				if strings.HasPrefix(line, "final ") {
					final = fieldsAfter(t, strings.TrimPrefix(line, "final "))
				}
			}
			if final == nil {
				t.Fatalf("no final line:\n%s", so)
			}
			m := readChecked(t, out)
			if m.Resources.Nodes != 2 || final["nodes"] != 2 || final["ranks"] != 4 {
				t.Fatalf("nodes: file %d, last call %v (ranks %v), want 2 (4)", m.Resources.Nodes, final["nodes"], final["ranks"])
			}
			rep := compute(t, m, pop.ModelTALP)
			for _, c := range []struct {
				key, id string
				want    float64
			}{
				{"lb", pop.IDMPILoadBalance, (10*iters + 1) / (16 * iters)},
				{"in", pop.IDMPILoadBalanceIn, 0.875},
				{"out", pop.IDMPILoadBalanceOut, (10*iters + 1) / (14 * iters)},
			} {
				near(t, "last call "+c.key, final[c.key], c.want, 0.03)
				near(t, "last call "+c.key+" against the report", final[c.key], value(t, rep, "Global", c.id), effTol)
			}
		})
	}
}
