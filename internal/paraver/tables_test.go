package paraver_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// scaleTraces imports the traces and computes their scaling table (model,
// strong scaling, reference = fewest CPUs), as `popmon scaling` does.
func scaleTraces(t *testing.T, model pop.Model, files ...string) *pop.ScalingRegion {
	t.Helper()
	rs, err := runs.LoadAll(files, model, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := runs.ScalingInput(rs, model, pop.ScalingStrong, -1, "Global")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pop.Scale(in)
	if err != nil {
		t.Fatal(err)
	}
	return &s.Regions[0]
}

// modelFactors reads BSC basicanalysis' modelfactors.csv: metric name →
// one value per run, in %, except speedup, IPC and frequency.
func modelFactors(t *testing.T, path string) map[string][]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ";")
		if len(parts) < 2 || strings.HasPrefix(parts[0], "#") {
			continue
		}
		for _, p := range parts[1:] {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, sc.Text(), err)
			}
			out[parts[0]] = append(out[parts[0]], v)
		}
	}
	return out
}

// TestEPOCHModelFactors reproduces BSC basicanalysis' table of the EPOCH
// strong-scaling traces (1–16 MPI ranks; testdata/modelfactors.csv) with
// model talp: ±0.005 for every efficiency and scaling metric (the table
// has 6 decimals of %), and IPC, frequency and speedup within 0.005
// relative. Serialisation and transfer efficiency need Dimemas and are not
// asserted.
func TestEPOCHModelFactors(t *testing.T) {
	want := modelFactors(t, "testdata/modelfactors.csv")
	var files []string
	for _, n := range []int{1, 2, 4, 8, 16} {
		files = append(files, fmt.Sprintf("testdata/epoch_%dproc.prv.gz", n))
	}
	g := scaleTraces(t, pop.ModelTALP, files...)
	if len(g.Runs) != 5 || g.Reference != 0 {
		t.Fatalf("%d runs, reference %d", len(g.Runs), g.Reference)
	}
	rows := []struct {
		id, name string
		percent  bool
	}{
		{pop.IDParallelEfficiency, "Parallel efficiency", true},
		{pop.IDMPILoadBalance, "Load balance", true},
		{pop.IDMPICommunicationEfficiency, "Communication efficiency", true},
		{pop.IDComputationScalability, "Computation scalability", true},
		{pop.IDGlobalEfficiency, "Global efficiency", true},
		{pop.IDIPCScaling, "IPC scalability", true},
		{pop.IDInstructionScaling, "Instruction scalability", true},
		{pop.IDFrequencyScaling, "Frequency scalability", true},
		{pop.IDSpeedup, "Speedup", false},
		{pop.IDIPC, "Average IPC", false},
		{pop.IDFrequencyGHz, "Average frequency (GHz)", false},
	}
	for _, r := range rows {
		row, ok := g.Row(r.id)
		if !ok {
			t.Errorf("no %s row", r.id)
			continue
		}
		for i, w := range want[r.name] {
			got, ok := row.Value(i)
			if r.percent {
				w /= 100
			}
			tol := 0.005
			if !r.percent {
				tol = 0.005 * w
			}
			if !ok || math.Abs(got-w) > tol {
				t.Errorf("%s, %d ranks: %.6f, want %.6f ± %.4f", r.name, g.Runs[i].CPUs, got, w, tol)
			}
		}
	}
}

// TestImageMagickOpenMPMetrics reproduces PyPOP's published additive
// OpenMP metrics of the ImageMagick traces (1 and 2 threads; README in
// testdata) with model pop-additive. PyPOP's IPC scaling for 2 threads
// (1.033760) contradicts its own other columns: computation scalability is
// instruction × IPC × frequency scaling by definition (POP-METRICS.md §6),
// and 0.999995 × 1.033760 × 0.988037 = 1.0214, not its 0.977705. popmon
// reproduces the three others, so its IPC scaling is asserted through that
// identity instead.
func TestImageMagickOpenMPMetrics(t *testing.T) {
	g := scaleTraces(t, pop.ModelPOPAdditive, "testdata/imagemagick_omp1.prv.gz", "testdata/imagemagick_omp2.prv.gz")
	want := []struct {
		id   string
		vals [2]float64
	}{
		{pop.IDOMPRegionEfficiency, [2]float64{0.998414, 0.998448}},
		{pop.IDSerialRegionEfficiency, [2]float64{1.000000, 0.728963}},
		{pop.IDParallelEfficiency, [2]float64{0.995348, 0.723112}},
		{pop.IDInstructionScaling, [2]float64{1.000000, 0.999995}},
		{pop.IDFrequencyScaling, [2]float64{1.000000, 0.988037}},
		{pop.IDComputationScalability, [2]float64{1.000000, 0.977705}},
		{pop.IDGlobalEfficiency, [2]float64{0.995348, 0.706990}},
		{pop.IDSpeedup, [2]float64{1.000000, 1.420588}},
		{pop.IDElapsedS, [2]float64{14.74657, 10.38061}},
	}
	for _, w := range want {
		row, ok := g.Row(w.id)
		if !ok {
			t.Errorf("no %s row", w.id)
			continue
		}
		for i, v := range w.vals {
			got, ok := row.Value(i)
			if !ok || math.Abs(got-v) > 0.005 {
				t.Errorf("%s, %d threads: %.6f, want %.6f ± 0.005", w.id, i+1, got, v)
			}
		}
	}
	for i := range g.Runs {
		v := func(id string) float64 {
			row, ok := g.Row(id)
			if !ok {
				t.Fatalf("no %s row", id)
			}
			x, ok := row.Value(i)
			if !ok {
				t.Fatalf("no %s value for run %d", id, i)
			}
			return x
		}
		ipc, comp := v(pop.IDIPCScaling), v(pop.IDComputationScalability)
		if prod := v(pop.IDInstructionScaling) * ipc * v(pop.IDFrequencyScaling); math.Abs(prod-comp) > 1e-9 {
			t.Errorf("run %d: instruction × IPC × frequency scaling = %.9f, computation scalability %.9f", i, prod, comp)
		}
		if i == 0 && ipc != 1 {
			t.Errorf("reference IPC scaling %v, want 1", ipc)
		}
	}
}

// TestImportEveryTestTrace checks the per-trace facts the tables rest on:
// the elapsed time is the header's end time, and the useful time of the
// EPOCH traces is basicanalysis' "Useful duration (total)".
func TestImportEveryTestTrace(t *testing.T) {
	useful := map[string]float64{ // µs, modelfactors.csv
		"epoch_1proc": 21882362.82, "epoch_2proc": 22913392.37, "epoch_4proc": 23684668.07,
		"epoch_8proc": 26902030.73, "epoch_16proc": 35617915.65,
	}
	for name, u := range useful {
		m, err := paraver.ImportFile("testdata/"+name+".prv.gz", paraver.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, a := range m.Regions[0].Processes {
			sum += a.UsefulNS
		}
		if math.Abs(float64(sum)/1000-u) > 1 {
			t.Errorf("%s: useful %.2f µs, want %.2f", name, float64(sum)/1000, u)
		}
		var out bytes.Buffer
		if err := measure.Write(&out, m); err != nil {
			t.Fatal(err)
		}
		if err := measure.ValidateSchema(out.Bytes()); err != nil {
			t.Errorf("%s: the written measurement fails the schema: %v", name, err)
		}
		back, err := measure.Read(&out)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Errorf("%s: write/read round trip changed the measurement (%v)", name, err)
		}
		if m.Resources.Nodes != 1 || m.Processes[0].Hostname == "" || m.MPICalls[0].Name == "" || !strings.HasPrefix(m.MPICalls[0].Name, "MPI_") {
			t.Errorf("%s: nodes %d host %q calls %+v", name, m.Resources.Nodes, m.Processes[0].Hostname, m.MPICalls[:1])
		}
	}
}
