package talpjson_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// dlbMPIFile is a DLB file of tests/functional/talp/mpi's run (2 ranks, one
// repetition): DLB counts MPI_Init, MPI_Comm_rank, MPI_Finalize and 2 per
// rank, 10 calls; the user region has 4.
const dlbMPIFile = `{"dlbVersion": "3.7.0", "resources": {"numCpus": 2, "numNodes": 1, "numMpiRanks": 2},
 "Application": {
  "Global": {"numCpus": 2, "numMpiRanks": 2, "numNodes": 1, "numMeasurements": 2, "numMpiCalls": 10,
   "elapsedTime": 2000000000, "usefulTime": 2500000000, "mpiTime": 1500000000,
   "minMpiNormdProc": 500000000, "minMpiNormdNode": 750000000},
  "After": {"numCpus": 2, "numMpiRanks": 2, "numNodes": 1, "numMeasurements": 2, "numMpiCalls": 4,
   "elapsedTime": 1000000000, "usefulTime": 1000000000, "mpiTime": 1000000000,
   "minMpiNormdProc": 500000000, "minMpiNormdNode": 500000000}}}`

func roundTrip(t *testing.T) (*measure.Measurement, []pop.RegionReport) {
	t.Helper()
	m, err := talpjson.Convert([]byte(dlbMPIFile), "mpi.json")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	return m, rep.Regions
}

// TestMPIInitFinalizeCalls: reading DLB's file takes MPI_Init and
// MPI_Finalize out of Global (popmon's Global runs between them), writing
// puts them back: DLB's count survives the round trip; other regions are
// untouched.
func TestMPIInitFinalizeCalls(t *testing.T) {
	m, regs := roundTrip(t)
	g, _ := m.Global()
	var calls int64
	for _, a := range g.Processes {
		calls += a.MPICalls
	}
	if calls != 6 {
		t.Errorf("Global: %d MPI calls in the measurement, want 6 (10 less MPI_Init and MPI_Finalize of 2 ranks)", calls)
	}
	var b bytes.Buffer
	if err := talpjson.Write(&b, pop.NewRun(m), regs); err != nil {
		t.Fatal(err)
	}
	var f struct {
		Application map[string]map[string]float64
	}
	if err := json.Unmarshal(b.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"Global": 10, "After": 4} {
		if got := f.Application[name]["numMpiCalls"]; got != want {
			t.Errorf("%s: numMpiCalls %v written, want %v", name, got, want)
		}
		if got := f.Application[name]["numOmpThreads"]; got != 2 {
			t.Errorf("%s: numOmpThreads %v, want 2", name, got)
		}
	}
}

// TestCSVAndText: DLB's other layouts carry the same values.
func TestCSVAndText(t *testing.T) {
	m, regs := roundTrip(t)
	var c, c2, x bytes.Buffer
	if err := talpjson.WriteCSV(&c, pop.NewRun(m), regs, true); err != nil {
		t.Fatal(err)
	}
	if err := talpjson.WriteCSV(&c2, pop.NewRun(m), regs, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(c.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "name,numCpus,numOmpThreads,numMpiRanks,") ||
		!strings.HasPrefix(lines[1], `"Global",2,2,2,1,2.0,0,2,10,`) || !strings.HasPrefix(lines[2], `"After",`) {
		t.Errorf("csv:\n%s", c.String())
	}
	if c2.String() != strings.Join(lines[1:], "\n")+"\n" {
		t.Errorf("csv without header:\n%s", c2.String())
	}
	if err := talpjson.WriteText(&x, pop.NewRun(m), regs, "DLB[h:1]: "); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"DLB[h:1]: ######### Monitoring Region POP Metrics #########\n",
		"DLB[h:1]: ### Name:                                       After\n",
		"DLB[h:1]: ### Number of MPI calls:                        10\n",
		"DLB[h:1]: ### Parallel efficiency:                        0.62\n",
		"DLB[h:1]: ###   - MPI Communication efficiency:           0.75\n",
	} {
		if !strings.Contains(x.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, x.String())
		}
	}
}

// TestHardwareCPUs: with the processes' affinity masks recorded, numCpus
// is DLB's count of hardware CPUs, Σ min(threads, affinity CPUs), and
// numOmpThreads the threads (2 ranks of 2 threads bound to 1 CPU each: 2
// and 4, test_hybrid's "numCpus == min(4, cpu_count)" on 2 CPUs).
func TestHardwareCPUs(t *testing.T) {
	m, _ := roundTrip(t)
	for i := range m.Processes {
		m.Processes[i].CPUs, m.Processes[i].AffinityCPUs = 2, 1
	}
	for r := range m.Regions {
		for i := range m.Regions[r].Processes {
			a := &m.Regions[r].Processes[i]
			a.CPUs, a.UsefulNS = 2, 2*a.UsefulNS+a.ElapsedNS-a.UsefulNS-a.MPINS // accounts add up for 2 CPUs
		}
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := talpjson.Write(&b, pop.NewRun(m), rep.Regions); err != nil {
		t.Fatal(err)
	}
	var f struct {
		Resources   map[string]float64
		Application map[string]map[string]float64
	}
	if err := json.Unmarshal(b.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	if f.Resources["numCpus"] != 2 {
		t.Errorf("resources numCpus %v, want 2", f.Resources["numCpus"])
	}
	for _, name := range []string{"Global", "After"} {
		if g := f.Application[name]; g["numCpus"] != 2 || g["numOmpThreads"] != 4 {
			t.Errorf("%s: numCpus %v numOmpThreads %v, want 2 and 4", name, g["numCpus"], g["numOmpThreads"])
		}
	}
	m.Processes[1].AffinityCPUs = 0 // one process without a record: popmon's CPUs
	b.Reset()
	if err := talpjson.Write(&b, pop.NewRun(m), rep.Regions); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b.Bytes(), &f)
	if f.Application["Global"]["numCpus"] != 4 {
		t.Errorf("without every affinity: numCpus %v, want 4", f.Application["Global"]["numCpus"])
	}
}
