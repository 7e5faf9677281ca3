package shimbuild

import (
	"bufio"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// buildTALPTest compiles shim/test/talp_test.c with shim/talp_api.c (the
// runtime query API's model and DLB structures, without MPI) with compiler
// cc, warnings as errors, and returns the program.
func buildTALPTest(t *testing.T, cc string) string {
	t.Helper()
	shim := filepath.Join("..", "..", "shim")
	stub := filepath.Join("..", "dlbhome", "files", "include") // DLB's headers as dlb-home installs them
	bin := filepath.Join(t.TempDir(), "talp_test")
	args := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-DPOPMON_NO_MPI",
		"-I", shim, "-I", stub}
	args = append(args, baseSources(t, shim)...)
	args = append(args, filepath.Join(shim, "talp_api.c"), filepath.Join(shim, "live_read.c"),
		filepath.Join(shim, "test", "talp_test.c"),
		"-ldl", "-lpthread", "-o", bin)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return bin
}

// TestTALPModelC checks that the runtime query's C model gives, for every
// region of the measurement files of measure/testdata (MPI imbalance, hybrid
// on two nodes, libgomp), the values popmon's report (pop.Compute, model
// talp) gives: what DLB_TALP_CollectPOPMetrics returns at the end of a run
// is what `popmon report` prints.
func TestTALPModelC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	ids := []string{
		pop.IDParallelEfficiency, pop.IDMPIParallelEfficiency, pop.IDMPICommunicationEfficiency,
		pop.IDMPILoadBalance, pop.IDMPILoadBalanceIn, pop.IDMPILoadBalanceOut,
		pop.IDOMPParallelEfficiency, pop.IDOMPSerializationEfficiency, pop.IDOMPLoadBalance,
		pop.IDOMPSchedulingEfficiency,
	}
	files := []string{"mpi_imbalance.json", "hybrid_2nodes.json", "hybrid_libgomp.json", "doc_example.json"}
	bin := buildTALPTest(t, cCompilers(t)[0])
	for _, name := range files {
		m, err := measure.ReadFile(filepath.Join("..", "..", "measure", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := pop.Compute(m, pop.ModelTALP)
		if err != nil {
			t.Fatal(err)
		}
		node := map[int]int{}
		for _, p := range m.Processes {
			node[p.Rank] = p.Node
		}
		for i, g := range m.Regions {
			t.Run(name+"/"+g.Name, func(t *testing.T) {
				var in strings.Builder
				rt, ompt := 0, 0
				if m.OpenMP != nil {
					rt = 1
					if m.OpenMP.OMPT {
						ompt = 1
					}
				}
				fmt.Fprintf(&in, "%d %d\n", rt, ompt)
				for _, a := range g.Processes {
					fmt.Fprintf(&in, "%d %d %d %d %d %d %d %d %d %d\n", node[a.Rank], a.CPUs, a.ElapsedNS,
						a.UsefulNS, a.MPINS+a.OtherNS, a.MPIWorkerIdleNS, a.OMPSerializationNS,
						a.OMPLoadImbalanceNS, a.OMPSchedulingNS, a.GPURuntimeNS)
				}
				cmd := exec.Command(bin, "model")
				cmd.Stdin = strings.NewReader(in.String())
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("model: %v\n%s", err, out)
				}
				got := map[string]float64{}
				sc := bufio.NewScanner(strings.NewReader(string(out)))
				for sc.Scan() {
					f := strings.Fields(sc.Text())
					if len(f) == 2 {
						v, err := strconv.ParseFloat(f[1], 64)
						if err != nil {
							t.Fatalf("line %q: %v", sc.Text(), err)
						}
						got[f[0]] = v
					}
				}
				r := &rep.Regions[i]
				if int(got["processes"]) != r.Processes || int(got["nodes"]) != r.Nodes || int(got["cpus"]) != r.CPUs {
					t.Errorf("processes/nodes/cpus %v/%v/%v, report %d/%d/%d", got["processes"], got["nodes"],
						got["cpus"], r.Processes, r.Nodes, r.CPUs)
				}
				openmp := int(got["flags"])&1 != 0
				for _, id := range ids {
					want, ok := r.Value(id)
					if !ok {
						if strings.HasPrefix(id, "omp_") && openmp {
							t.Errorf("%s: flagged OpenMP, but the report has no %s", name, id)
						}
						continue
					}
					if strings.HasPrefix(id, "omp_") && !openmp {
						t.Errorf("%s: the report has %s, the C flags say no OpenMP", name, id)
					}
					if math.Abs(got[id]-want) > 1e-9 {
						t.Errorf("%s = %.12g, report %.12g", id, got[id], want)
					}
				}
				if want, _ := r.Value(pop.IDMPILoadBalance); math.Abs(got["dlb_load_balance"]-want) > 1e-6 {
					t.Errorf("dlb_pop_metrics_t.mpi_load_balance %v, report %v", got["dlb_load_balance"], want)
				}
				if int64(got["dlb_elapsed_time"]) != r.ElapsedNS {
					t.Errorf("dlb elapsed_time %v, report %d", got["dlb_elapsed_time"], r.ElapsedNS)
				}
			})
		}
	}
}

// TestTALPC runs the C unit tests of the runtime query API with every C
// compiler here (table below; shim/test/talp_test.c says what each checks).
func TestTALPC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	scenarios := []struct{ name, what string }{
		{"layout", "dlb_pop_metrics_t 384 B (num_cpus @128, elapsed_time @208, useful_time @216, " +
			"parallel_efficiency @320, mpi_load_balance @332), dlb_node_metrics_t 184 B (@136, @168), " +
			"dlb_node_times_t 24 B, in libpopmon and in dlb-home's dlb_talp.h alike"},
		{"window", "popmon_metrics_local: since-last windows on scripted accounts, a CPU joining between " +
			"calls, the run window, an older (smaller) structure, bad arguments"},
		{"live", "the third-party queries on a well-formed live file (pid, Global 3 s useful / 1 s MPI, " +
			"node PE 0.75) and on 3000 corrupted ones (no crash)"},
	}
	for _, cc := range cCompilers(t) {
		bin := buildTALPTest(t, cc)
		for _, sc := range scenarios {
			t.Run(cc+"/"+sc.name, func(t *testing.T) {
				out, err := exec.Command(bin, sc.name).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "ok "+sc.name+"\n") {
					t.Fatalf("%s (%s): %v\n%s", sc.name, sc.what, err, out)
				}
			})
		}
	}
}
