package talpjson_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// fixtureDir holds JSON files written by the real DLB 3.7 (see its
// README.md for how each was produced).
const fixtureDir = "testdata/dlb-3.7"

// TestDLB37Fixtures converts every file DLB wrote and checks that model
// talp reproduces every efficiency in it, within DLB's 2-decimal rounding
// (the times and minima DLB writes are integers, so they add nothing
// measurable), and that the conversion keeps DLB's sums. The exception is
// DLB's impossible load balance In/Out (below 0 or above 1: DLB caps a
// node's CPUs at its hardware CPUs, and these files come from a 2-core
// machine): popmon's are the true ones, In = load balance and Out = 1 on
// one node. Where the per-process times are derived (one CPU per
// process), pop-hybrid's MPI load balance is talp's.
func TestDLB37Fixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 15 {
		t.Fatalf("found %d fixtures in %s, want the 15 of its README", len(files), fixtureDir)
	}
	readme, err := os.ReadFile(filepath.Join(fixtureDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	impossibleSeen, derivedSeen := 0, 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			if !strings.Contains(string(readme), "`"+filepath.Base(path)+"`") {
				t.Errorf("README.md does not say how %s was produced", filepath.Base(path))
			}
			m, data := convertFile(t, path)
			f := readDLB(t, data)
			if !strings.HasPrefix(m.Tool.Version, "3.7.0") {
				t.Errorf("dlbVersion %q", m.Tool.Version)
			}
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			hybrid, err := pop.Compute(m, pop.ModelPOPHybrid)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for i := range rep.Regions {
				r := &rep.Regions[i]
				d := f.dlbRegion(r.Name)
				if d == nil || d["usefulTime"] <= 0 || d["elapsedTime"] <= 0 {
					continue
				}
				for _, k := range talpjson.Efficiencies {
					want, ok := d[k.Key]
					if k.Branch == talpjson.BranchGPU || !ok {
						continue
					}
					got, ok := r.Value(k.ID)
					switch {
					case !ok && want == 1:
						// a branch that does not apply (DLB writes 1.00)
					case !ok:
						t.Errorf("region %q: %s absent, DLB wrote %v", r.Name, k.ID, want)
					case (k.ID == pop.IDMPILoadBalanceIn || k.ID == pop.IDMPILoadBalanceOut) && (d["mpiLoadBalanceIn"] < 0 || d["mpiLoadBalanceIn"] > 1 || d["mpiLoadBalanceOut"] < 0 || d["mpiLoadBalanceOut"] > 1):
						lb, _ := r.Value(pop.IDMPILoadBalance)
						truth := map[string]float64{pop.IDMPILoadBalanceIn: lb, pop.IDMPILoadBalanceOut: 1}[k.ID]
						if d["numNodes"] != 1 || math.Abs(got-truth) > 1e-9 {
							t.Errorf("region %q: %s = %v where DLB's is impossible (%v), want %v", r.Name, k.ID, got, want, truth)
						}
						impossibleSeen++
					case math.Abs(got-want) > dlbTol:
						t.Errorf("region %q: %s = %.6f, DLB wrote %v", r.Name, k.ID, got, want)
					default:
						n++
					}
				}
				g, _ := m.Region(r.Name)
				if len(g.Processes) > 0 && g.Processes[0].CPUs == 1 && g.Processes[0].ThreadUsefulMaxNS == g.Processes[0].UsefulNS {
					lb, _ := r.Value(pop.IDMPILoadBalance)
					hlb, ok := hybrid.Regions[i].Value(pop.IDMPILoadBalance)
					if !ok || math.Abs(hlb-lb) > 1e-6 {
						t.Errorf("region %q: pop-hybrid MPI load balance %v (%v), talp's %v", r.Name, hlb, ok, lb)
					}
					derivedSeen++
				}
			}
			if n < 4 {
				t.Errorf("compared %d values", n)
			}
			for _, g := range m.Regions {
				checkTotals(t, &g, f.dlbRegion(g.Name), m.Resources.HardwareCounters)
			}
		})
	}
	if impossibleSeen == 0 || derivedSeen == 0 {
		t.Errorf("impossible In/Out seen %d times, derived regions %d: the fixtures lost their point", impossibleSeen, derivedSeen)
	}
}

// TestDLBVersionsOnTheBarrierPhase pins what the two DLB builds wrote for
// the 2 × 2 barrier phase of issue 10 (designed: parallel efficiency 0.75,
// serialization 0.875, MPI load balance 0.75): DLB after 3.7.0 agrees with
// the design (and with popmon's model), DLB 3.7.0 counts the workers' idle
// time during MPI twice (≈ 0.6/0.9 and 0.8/0.9), and popmon reproduces both
// files and says so in the notes.
func TestDLBVersionsOnTheBarrierPhase(t *testing.T) {
	for _, c := range []struct {
		file       string
		pe, ser    float64
		lb         float64
		noteHas    string
		violations bool
	}{
		{"barrier_2x2.dlb-3.7.0+63-9d67.json", 0.75, 0.875, 0.75, "ompSerializationTime − mpiWorkerIdleTime is omp_serialization_ns", false},
		{"barrier_2x2.dlb-3.7.0.json", 0.6 / 0.9, 0.8 / 0.9, 0.75, "DLB 3.6.2 to 3.7.0 do so", true},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, _ := convertFile(t, filepath.Join(fixtureDir, c.file))
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := rep.Region("phase")
			if !ok {
				t.Fatal("no region phase")
			}
			// ±0.03: start-up and fork/join on a loaded 2-core machine.
			for id, want := range map[string]float64{pop.IDParallelEfficiency: c.pe, pop.IDOMPSerializationEfficiency: c.ser, pop.IDMPILoadBalance: c.lb} {
				if got, _ := r.Value(id); math.Abs(got-want) > 0.03 {
					t.Errorf("%s = %.3f, designed %.3f", id, got, want)
				}
			}
			if notes := strings.Join(m.Source.Notes, "\n"); !strings.Contains(notes, c.noteHas) {
				t.Errorf("notes lack %q:\n%s", c.noteHas, notes)
			}
			if v := measure.CheckAccounts(m); (len(v) > 0) != c.violations {
				t.Errorf("invariant violations %v, want some: %v", v, c.violations)
			}
		})
	}
}

// TestWorkerIdleLayouts converts the 2 × 2 barrier phase of issue 10 (rank
// 0: 100 ms balanced parallel region, then 100 ms in MPI_Barrier while its
// worker idles; rank 1: 200 ms) as the DLB versions write it, with the
// efficiencies each writes, and checks that model talp reproduces them.
func TestWorkerIdleLayouts(t *testing.T) {
	const ms = 1_000_000
	// times: U 600 ms, M 100 ms, Mw 100 ms of 4 CPUs × 200 ms.
	doc := func(version, times string) []byte {
		return []byte(fmt.Sprintf(`{"dlbVersion": %q, "resources": {"numCpus": 4, "numNodes": 1, "numMpiRanks": 2},
 "Application": {"Global": {"numCpus": 4, "numMpiRanks": 2, "numNodes": 1, "numMeasurements": 2, "numMpiCalls": 4,
   "numOmpParallels": 2, "elapsedTime": %d, "usefulTime": %d, %s, "ompLoadImbalanceTime": 0, "ompSchedulingTime": 0}}}`,
			version, 200*ms, 600*ms, times))
	}
	tests := []struct {
		name     string
		data     []byte
		want     map[string]float64
		mw, iser int64 // Σ mpi_worker_idle_ns, Σ omp_serialization_ns
		note     string
		over     bool // the sums exceed elapsed × CPUs
	}{
		{
			// DLB after 3.7.0: Mw apart, and in ompSerializationTime.
			name: "mpiWorkerIdleTime",
			data: doc("3.7.0+63-9d67", fmt.Sprintf(`"mpiTime": %d, "mpiWorkerIdleTime": %d, "ompSerializationTime": %d,
   "minMpiNormdProc": 0, "minMpiNormdNode": %d`, 100*ms, 100*ms, 100*ms, 50*ms)),
			want: map[string]float64{pop.IDParallelEfficiency: 0.75, pop.IDMPILoadBalance: 0.75, pop.IDMPICommunicationEfficiency: 1,
				pop.IDOMPSerializationEfficiency: 0.875, pop.IDOMPParallelEfficiency: 0.875},
			mw: 100 * ms, iser: 0, note: "ompSerializationTime − mpiWorkerIdleTime is omp_serialization_ns",
		},
		{
			// DLB 3.6.2 – 3.7.0: mpiTime = primary × 2 CPUs, and Mw in
			// ompSerializationTime again; DLB wrote PE 0.6/0.9, serialization
			// 0.8/0.9.
			name: "DLB 3.7.0",
			data: doc("3.7.0", fmt.Sprintf(`"mpiTime": %d, "ompSerializationTime": %d, "minMpiNormdProc": 0, "minMpiNormdNode": %d`,
				200*ms, 100*ms, 50*ms)),
			want: map[string]float64{pop.IDParallelEfficiency: 0.6 / 0.9, pop.IDMPILoadBalance: 0.75,
				pop.IDOMPSerializationEfficiency: 0.8 / 0.9, pop.IDOMPParallelEfficiency: 0.8 / 0.9},
			iser: 100 * ms, note: "DLB 3.6.2 to 3.7.0 do so", over: true,
		},
		{
			// DLB before 3.6.2: mpiTime is the primary's; Mw only in
			// ompSerializationTime. MPI LB 1 − 0.025/0.2 over 1.
			name: "DLB 3.6.1",
			data: doc("3.6.1", fmt.Sprintf(`"mpiTime": %d, "ompSerializationTime": %d, "minMpiNormdProc": 0, "minMpiNormdNode": %d`,
				100*ms, 100*ms, 25*ms)),
			want: map[string]float64{pop.IDParallelEfficiency: 0.75, pop.IDMPILoadBalance: 0.875,
				pop.IDOMPSerializationEfficiency: 0.875},
			iser: 100 * ms, note: "DLB before 3.6.2 leaves",
		},
		{
			name: "serialization below worker idle",
			data: doc("3.7.0+63-9d67", fmt.Sprintf(`"mpiTime": %d, "mpiWorkerIdleTime": %d, "ompSerializationTime": %d,
   "minMpiNormdProc": 0, "minMpiNormdNode": %d`, 100*ms, 100*ms, 40*ms, 50*ms)),
			want: map[string]float64{pop.IDOMPSerializationEfficiency: 0.875},
			mw:   100 * ms, note: "ompSerializationTime is below mpiWorkerIdleTime",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := talpjson.Convert(tt.data, "x.json")
			if err != nil {
				t.Fatal(err)
			}
			g, _ := m.Global()
			var mw, iser int64
			for _, a := range g.Processes {
				mw += a.MPIWorkerIdleNS
				iser += a.OMPSerializationNS
			}
			if mw != tt.mw || iser != tt.iser {
				t.Errorf("Σ Mw %d, Σ Iser %d; want %d, %d", mw, iser, tt.mw, tt.iser)
			}
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			for id, want := range tt.want {
				if got, ok := rep.Regions[0].Value(id); !ok || math.Abs(got-want) > 1e-6 {
					t.Errorf("%s = %v (%v), want %v", id, got, ok, want)
				}
			}
			notes := strings.Join(m.Source.Notes, "\n")
			if !strings.Contains(notes, tt.note) {
				t.Errorf("notes lack %q:\n%s", tt.note, notes)
			}
			if got := strings.Contains(notes, "add up to more than elapsedTime × numCpus"); got != tt.over {
				t.Errorf("over-count note %v, want %v:\n%s", got, tt.over, notes)
			}
			if v := measure.CheckAccounts(m); (len(v) > 0) != tt.over || tt.over && v[0].Rank != -1 {
				t.Errorf("invariant violations %v, want some: %v", v, tt.over)
			}
		})
	}
}

// TestHybridModelsFromTALPSums: with one CPU per process and DLB's MPI
// minima, the per-process useful times are derived and pop-hybrid and
// pop-additive agree with TALP's MPI efficiencies; with sums that contradict
// equal elapsed times, or several CPUs per process, they are not measured.
func TestHybridModelsFromTALPSums(t *testing.T) {
	// 4 ranks of 1 CPU work 1, 2, 3, 4 s of T = 4 s: mpiTime 6 s, the
	// busiest rank waits 0. DLB: PE = LB = 0.625, CommE 1.
	imbalance := talpDoc(4, 1, 4, `"usefulTime": 10000000000, "mpiTime": 6000000000, "minMpiNormdProc": 0, "minMpiNormdNode": 1500000000, "elapsedTime": 4000000000`)
	imbalance = []byte(strings.Replace(string(imbalance), `"elapsedTime": 10000000000, `, "", 1))
	m, err := talpjson.Convert(imbalance, "x.json")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := m.Global()
	for i, a := range g.Processes {
		if a.ThreadUsefulMaxNS != a.UsefulNS || a.UsefulNS+a.MPINS != a.ElapsedNS {
			t.Errorf("rank %d: useful %d, MPI %d, mark %d, elapsed %d", i, a.UsefulNS, a.MPINS, a.ThreadUsefulMaxNS, a.ElapsedNS)
		}
	}
	if v := measure.CheckAccounts(m); len(v) != 0 {
		t.Errorf("violations %v", v)
	}
	for model, want := range map[pop.Model]map[string]float64{
		pop.ModelPOPHybrid: {pop.IDHybridParallelEfficiency: 0.625, pop.IDHybridLoadBalance: 0.625, pop.IDHybridCommunicationEfficiency: 1,
			pop.IDMPIParallelEfficiency: 0.625, pop.IDMPILoadBalance: 0.625, pop.IDOMPParallelEfficiency: 1},
		pop.ModelPOPAdditive: {pop.IDParallelEfficiency: 0.625, pop.IDProcessEfficiency: 0.625, pop.IDMPILoadBalance: 0.625,
			pop.IDMPICommunicationEfficiency: 1, pop.IDThreadEfficiency: 1},
	} {
		rep, err := pop.Compute(m, model)
		if err != nil {
			t.Fatal(err)
		}
		for id, w := range want {
			if got, ok := rep.Regions[0].Value(id); !ok || math.Abs(got-w) > 1e-9 {
				t.Errorf("%s %s = %v (%v), want %v", model, id, got, ok, w)
			}
		}
	}

	notDerived := map[string][]byte{
		// usefulTime 7 s: the ranks' times add up to 13 of 16 s.
		"sums below elapsed × CPUs": talpDoc(4, 1, 4, `"usefulTime": 7000000000, "mpiTime": 6000000000, "minMpiNormdProc": 0, "minMpiNormdNode": 1500000000`),
		"no MPI minima":             talpDoc(4, 1, 4, `"usefulTime": 34000000000, "mpiTime": 6000000000`),
		"two CPUs per process":      talpDoc(2, 1, 4, `"usefulTime": 34000000000, "mpiTime": 6000000000, "minMpiNormdProc": 0, "minMpiNormdNode": 1500000000`),
	}
	for name, data := range notDerived {
		t.Run(name, func(t *testing.T) {
			m, err := talpjson.Convert(data, "x.json")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := pop.Compute(m, pop.ModelPOPHybrid)
			if err != nil {
				t.Fatal(err)
			}
			x, ok := rep.Regions[0].Metric(pop.IDHybridParallelEfficiency)
			if !ok || x.Measured() || !strings.Contains(x.NotMeasured, "DLB/TALP JSON holds sums") {
				t.Errorf("hybrid PE = %+v (%v), want not measured", x, ok)
			}
			if !strings.Contains(strings.Join(m.Source.Notes, "\n"), "the pop-hybrid and pop-additive models report their metrics as not measured") {
				t.Errorf("notes: %v", m.Source.Notes)
			}
		})
	}
}

// TestImpossibleLoadBalanceNote: DLB's impossible In/Out are named in the
// notes, and the conversion does not reproduce them.
func TestImpossibleLoadBalanceNote(t *testing.T) {
	data := talpDoc(4, 1, 4, `"usefulTime": 34000000000, "mpiTime": 6000000000, "minMpiNormdProc": 0, "minMpiNormdNode": 3000000000, "mpiLoadBalanceIn": 0.25, "mpiLoadBalanceOut": 2.48`)
	m, err := talpjson.Convert(data, "x.json")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(m.Source.Notes, "\n")
	if !strings.Contains(notes, `impossible (below 0 or above 1) in "Global" (In 0.25, Out 2.48)`) {
		t.Errorf("notes:\n%s", notes)
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{pop.IDMPILoadBalanceIn, pop.IDMPILoadBalanceOut} {
		if v, ok := rep.Regions[0].Value(id); !ok || v < 0 || v > 1 {
			t.Errorf("%s = %v (%v)", id, v, ok)
		}
	}
}
