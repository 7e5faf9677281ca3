package talpjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// sampleDir holds the DLB/TALP samples of shared/data/talp-json (see its
// README); tests that use them skip when it is absent.
const sampleDir = "../../../shared/data/talp-json"

// goldenGlob matches popmon's own talp-json exports (DLB 3.7 layout),
// written by internal/report's golden tests.
const goldenGlob = "../report/testdata/*.talp.json.golden"

// dlbTol is the tolerance against DLB's written efficiencies: DLB rounds
// them to 2 decimals (±0.005), plus float rounding.
const dlbTol = 0.0051

// keysOf returns DLB's efficiency keys of the branch.
func keysOf(b talpjson.Branch) []string {
	var keys []string
	for _, e := range talpjson.Efficiencies {
		if e.Branch == b {
			keys = append(keys, e.Key)
		}
	}
	return keys
}

var (
	keysPE  = keysOf(talpjson.BranchTop)
	keysMPI = keysOf(talpjson.BranchMPI)
	keysOMP = keysOf(talpjson.BranchOpenMP)
	keysDev = keysOf(talpjson.BranchOffload)
	keysGPU = keysOf(talpjson.BranchGPU)
)

func join(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func samplePath(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(sampleDir, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("TALP samples not available: %v", err)
	}
	return p
}

// allSamples returns every DLB sample and every popmon talp-json golden.
func allSamples(t *testing.T) []string {
	t.Helper()
	var files []string
	if _, err := os.Stat(sampleDir); err == nil {
		err := filepath.Walk(sampleDir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && strings.HasSuffix(p, ".json") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 14 {
			t.Errorf("found %d DLB samples, want the 14 of the README", len(files))
		}
	}
	goldens, err := filepath.Glob(goldenGlob)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, goldens...)
	if len(files) == 0 {
		t.Skip("no TALP samples available")
	}
	return files
}

func convertFile(t *testing.T, path string) (*measure.Measurement, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !talpjson.IsTALP(data) {
		t.Errorf("%s: IsTALP is false", path)
	}
	m, err := talpjson.Convert(data, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m, data
}

// checkSchema validates m against the measurement JSON schema, both as
// json.Marshal writes it and through measure.Write and measure.Read.
func checkSchema(t *testing.T, name string, m *measure.Measurement) {
	t.Helper()
	c := *m
	if c.Timestamp == "" {
		// The schema describes libpopmon's output, which always has a
		// timestamp; readers accept its absence (measure.Write's doc).
		c.Timestamp = "2000-01-01T00:00:00Z"
	}
	data, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	if err := measure.ValidateSchema(data); err != nil {
		t.Errorf("%s: fails the schema: %v", name, err)
	}
	var out bytes.Buffer
	if err := measure.Write(&out, &c); err != nil {
		t.Fatalf("%s: measure.Write: %v", name, err)
	}
	if err := measure.ValidateSchema(out.Bytes()); err != nil {
		t.Errorf("%s: measure.Write output fails the schema: %v", name, err)
	}
	if _, err := measure.Read(&out); err != nil {
		t.Errorf("%s: measure.Read of the written measurement: %v", name, err)
	}
}

// dlbFile is the part of a TALP file the tests compare with.
type dlbFile struct {
	Resources   map[string]float64            `json:"resources"`
	Application map[string]map[string]float64 `json:"-"`
}

func readDLB(t *testing.T, data []byte) *dlbFile {
	t.Helper()
	var top struct {
		Resources   map[string]float64         `json:"resources"`
		Application map[string]json.RawMessage `json:"Application"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	f := &dlbFile{Resources: top.Resources, Application: map[string]map[string]float64{}}
	for name, raw := range top.Application {
		var all map[string]any
		if err := json.Unmarshal(raw, &all); err != nil {
			t.Fatal(err)
		}
		vals := map[string]float64{}
		for k, v := range all {
			if x, ok := v.(float64); ok {
				vals[k] = x
			}
		}
		f.Application[name] = vals
	}
	return f
}

// dlbRegion returns DLB's values of the converted region name.
func (f *dlbFile) dlbRegion(name string) map[string]float64 {
	if r, ok := f.Application[name]; ok {
		return r
	}
	if name == measure.GlobalRegion {
		for _, g := range talpjson.GlobalNames {
			if r, ok := f.Application[g]; ok {
				return r
			}
		}
	}
	return nil
}

func TestIsTALP(t *testing.T) {
	cases := []struct {
		name string
		data string
		want bool
	}{
		{"dlb", `{"dlbVersion": "3.6.0", "Application": {}}`, true},
		{"application only", `{"Application": {"Global": {}}}`, true},
		{"key after others", `{"x": [1, {"a": "}"}], "y": "\"q", "dlbVersion": 1}`, true},
		{"BOM and spaces", "\xef\xbb\xbf \n {\"dlbVersion\":\"3.5\"}", true},
		{"truncated after key", `{"dlbVersion":`, true},
		{"popmon measurement", `{"format": "popmon-measurement", "version": 1, "regions": [{"name": "Application"}]}`, false},
		{"nested key", `{"x": {"dlbVersion": "3.5", "Application": {}}}`, false},
		{"key in a string", `{"x": "\"dlbVersion\": 1"}`, false},
		{"array", `[{"dlbVersion": "3.5"}]`, false},
		{"empty", ``, false},
		{"empty object", `{}`, false},
		{"garbage", `dlbVersion Application`, false},
		{"broken", `{"x": [1, 2, "dlbVersion"`, false},
		{"unterminated string", `{"x`, false},
		{"no colon", `{"x" 1, "dlbVersion": 2}`, false},
		{"paraver header", "#Paraver (01/01/2024 at 10:00):1000_ns:1(4):1:1(4:1)\n", false},
	}
	for _, c := range cases {
		if got := talpjson.IsTALP([]byte(c.data)); got != c.want {
			t.Errorf("%s: IsTALP(%q) = %v, want %v", c.name, c.data, got, c.want)
		}
	}
	for _, p := range []string{"../../measure/testdata/hybrid_2nodes.json", "../../measure/testdata/doc_example.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if talpjson.IsTALP(data) {
			t.Errorf("%s: a popmon measurement is not TALP JSON", p)
		}
	}
}

// TestConvertEverySample converts every DLB sample and every popmon
// talp-json golden: each must validate, pass the schema, and keep the
// file's totals (the synthesized accounts sum to them).
func TestConvertEverySample(t *testing.T) {
	for _, path := range allSamples(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, data := convertFile(t, path)
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			checkSchema(t, path, m)
			if m.Source == nil || m.Source.Kind != measure.SourceTALP || m.Source.Path != path || len(m.Source.Notes) == 0 || !strings.Contains(m.Source.Tool, "DLB") && !strings.Contains(m.Source.Tool, "popmon") {
				t.Errorf("source %+v", m.Source)
			}
			if m.Clock.Source != measure.ClockTALP || m.Tool.Name != talpjson.ToolName || m.Launcher.Kind != measure.LauncherNone {
				t.Errorf("clock %q tool %q launcher %q", m.Clock.Source, m.Tool.Name, m.Launcher.Kind)
			}
			if m.Command == nil || m.Warnings == nil || m.MPICalls == nil || len(m.MPICalls) != 0 {
				t.Errorf("command %v warnings %v mpi_calls %v: want empty, non-nil", m.Command, m.Warnings, m.MPICalls)
			}
			if m.Counters == nil || m.Counters.Available != m.Resources.HardwareCounters {
				t.Errorf("counters %+v, hardware_counters %v", m.Counters, m.Resources.HardwareCounters)
			}
			f := readDLB(t, data)
			if _, ok := m.Global(); !ok && f.dlbRegion(measure.GlobalRegion) != nil {
				t.Errorf("no Global region")
			}
			if len(m.Regions) != len(f.Application) {
				t.Errorf("%d regions, the file has %d", len(m.Regions), len(f.Application))
			}
			for _, g := range m.Regions {
				checkTotals(t, &g, f.dlbRegion(g.Name), m.Resources.HardwareCounters)
			}
			if _, err := pop.ComputeAll(m); err != nil {
				t.Errorf("ComputeAll: %v", err)
			}
		})
	}
}

// checkTotals checks that the accounts of g sum to the file's totals.
func checkTotals(t *testing.T, g *measure.Region, d map[string]float64, counters bool) {
	t.Helper()
	if d == nil {
		t.Errorf("region %q is not in the file", g.Name)
		return
	}
	var s struct{ useful, mpi, mw, lb, sch, ser, gpu, visits, calls, pars, cyc, ins int64 }
	cpus := 0
	for _, a := range g.Processes {
		if a.ElapsedNS != int64(d["elapsedTime"]) {
			t.Errorf("%s rank %d: elapsed %d, file %v", g.Name, a.Rank, a.ElapsedNS, d["elapsedTime"])
		}
		cpus += a.CPUs
		s.useful += a.UsefulNS
		s.mpi += a.MPINS + a.MPIWorkerIdleNS
		s.mw += a.MPIWorkerIdleNS
		s.lb += a.OMPLoadImbalanceNS
		s.sch += a.OMPSchedulingNS
		s.ser += a.OMPSerializationNS
		s.gpu += a.GPURuntimeNS
		s.visits += a.Visits
		s.calls += a.MPICalls
		s.pars += a.OMPParallels
		s.cyc += a.Cycles
		s.ins += a.Instructions
		// Only the mark of derived per-process times (one CPU).
		if a.PrimaryUsefulNS != 0 || a.ThreadUsefulMaxNS != 0 && (a.CPUs != 1 || a.ThreadUsefulMaxNS != a.UsefulNS) || a.ParallelUsefulNS != 0 {
			t.Errorf("%s rank %d: per-thread accounts set: %+v", g.Name, a.Rank, a)
		}
		if a.CPUs > 1 && a.UsefulNS > 0 && a.HasThreadAccounts() {
			t.Errorf("%s rank %d: HasThreadAccounts with %d CPUs", g.Name, a.Rank, a.CPUs)
		}
	}
	mpiKey := "mpiTime"
	if _, ok := d["mpiWorkerIdleTime"]; ok {
		// DLB after 3.7.0 (and popmon's talp-json): Mw apart from
		// mpiTime, and inside ompSerializationTime.
		d["mpiTime+mpiWorkerIdleTime"] = d["mpiTime"] + d["mpiWorkerIdleTime"]
		mpiKey = "mpiTime+mpiWorkerIdleTime"
		s.ser += s.mw
	}
	if g.Name == measure.GlobalRegion && len(g.Processes) > 0 && d["numMpiCalls"] > 0 {
		// DLB counts MPI_Init and MPI_Finalize in the whole-run region;
		// popmon's Global runs between them.
		d["numMpiCalls"] = max(d["numMpiCalls"]-2*float64(len(g.Processes)), 0)
	}
	for _, c := range []struct {
		key string
		got int64
	}{
		{"usefulTime", s.useful}, {mpiKey, s.mpi}, {"ompLoadImbalanceTime", s.lb},
		{"ompSchedulingTime", s.sch}, {"ompSerializationTime", s.ser}, {"gpuRuntimeTime", s.gpu},
		{"numMeasurements", s.visits}, {"numMpiCalls", s.calls}, {"numOmpParallels", s.pars},
	} {
		if want := int64(math.Round(d[c.key])); c.got != want {
			t.Errorf("%s: Σ %s = %d, file %d", g.Name, c.key, c.got, want)
		}
	}
	if int(d["numCpus"]) >= len(g.Processes) && cpus != int(d["numCpus"]) {
		t.Errorf("%s: %d CPUs, file %v", g.Name, cpus, d["numCpus"])
	}
	if counters && d["cycles"] > 0 && d["instructions"] > 0 {
		if s.cyc != int64(math.Round(d["cycles"])) || s.ins != int64(math.Round(d["instructions"])) {
			t.Errorf("%s: Σ cycles %d instructions %d, file %v %v", g.Name, s.cyc, s.ins, d["cycles"], d["instructions"])
		}
	}
}

// TestSampleDetails pins the mapping of the file-level keys.
func TestSampleDetails(t *testing.T) {
	cases := []struct {
		file                   string
		processes, nodes, cpus int
		gpus                   int
		mpi, omp, ompMeasured  bool
		counters               bool
		timestamp              string
		git                    *measure.Git
		procCPUs               []int
		procNodes              []int
		regions                int
		noteHas                []string
		countersHas            string
		derived                bool // per-process useful times derived (one CPU per process)
	}{
		{file: "jsons/unit-tests/correct_2MPI_with_metadata.json", processes: 2, nodes: 1, cpus: 2, mpi: true, counters: true,
			timestamp: "2024-09-02T14:11:24Z", procCPUs: []int{1, 1}, procNodes: []int{0, 0}, regions: 1,
			git:     &measure.Git{Commit: "<somehash>", Branch: "branch", Timestamp: "2024-09-02T14:11:24", IsMergeRequest: true, DefaultBranch: "main"},
			noteHas: []string{"DLB 3.5 layout", "mpiNormdOfMaxUseful"}, derived: true},
		{file: "jsons/unit-tests/no_timestamp.json", processes: 2, nodes: 1, cpus: 2, mpi: true, counters: true,
			procCPUs: []int{1, 1}, procNodes: []int{0, 0}, regions: 1, derived: true},
		{file: "jsons/unit-tests/complete_serial.json", processes: 1, nodes: 1, cpus: 1, mpi: true, counters: true,
			timestamp: "2024-09-02T14:11:24Z", procCPUs: []int{1}, procNodes: []int{0}, regions: 1,
			noteHas: []string{"split evenly by CPUs", "does not fit mpiTime"}},
		// resources.numCpus 8 but the region's 4 (synthetic): processes
		// of 2 CPUs without OpenMP data, accounts of 1 CPU.
		{file: "jsons/run-folder/strong-scaling/test_double.json", processes: 4, nodes: 1, cpus: 8, mpi: true, omp: true, counters: true,
			timestamp: "2024-09-02T14:11:24Z", procCPUs: []int{2, 2, 2, 2}, procNodes: []int{0, 0, 0, 0}, regions: 1},
		{file: "jsons/unit-tests/dlb_3_6_0.json", processes: 1, nodes: 1, cpus: 1, gpus: 1,
			timestamp: "2025-09-18T17:41:03Z", procCPUs: []int{1}, procNodes: []int{0}, regions: 1,
			noteHas: []string{"GPU devices: 1 device synthesized"}, derived: true},
		{file: "jsons/unit-tests/dlb_2gpu_hybrid.json", processes: 2, nodes: 1, cpus: 4, gpus: 2, mpi: true, omp: true,
			timestamp: "2025-09-18T17:41:03Z", procCPUs: []int{2, 2}, procNodes: []int{0, 0}, regions: 1,
			noteHas: []string{"GPU devices: 2 devices synthesized", "gpuLoadBalance 1.00 (times: 0.50)"}},
		{file: "example_files/genex/talp.small.json", processes: 2, nodes: 2, cpus: 224, mpi: true, omp: true, ompMeasured: true, counters: true,
			timestamp: "2024-09-05T15:00:42Z", procCPUs: []int{112, 112}, procNodes: []int{0, 1}, regions: 36,
			noteHas: []string{`"Application" is the Global region`, "workers idle while their primary thread is in MPI out of mpiTime", "ompSerializationTime in 36 regions"}},
		{file: "example_files/genex/talp.4x56.json", processes: 4, nodes: 2, cpus: 224, mpi: true, omp: true, ompMeasured: true,
			procCPUs: []int{56, 56, 56, 56}, procNodes: []int{0, 0, 1, 1}, regions: 32, timestamp: "2024-09-05T21:00:38Z",
			noteHas: []string{"ompSerializationTime in 32 regions"}, countersHas: "negative cycles/instructions"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			m, _ := convertFile(t, samplePath(t, c.file))
			r := m.Resources
			if r.Processes != c.processes || r.Nodes != c.nodes || r.CPUs != c.cpus || r.GPUs != c.gpus || r.HardwareCounters != c.counters {
				t.Errorf("resources %+v", r)
			}
			if m.HasMPI() != c.mpi {
				t.Errorf("MPI %+v, want present %v", m.MPI, c.mpi)
			}
			if m.MPI != nil && m.MPI.Library != talpjson.MPILibrary {
				t.Errorf("MPI library %q", m.MPI.Library)
			}
			if (m.OpenMP != nil) != c.omp || m.OpenMP.Measured() != c.ompMeasured {
				t.Errorf("OpenMP %+v, want present %v measured %v", m.OpenMP, c.omp, c.ompMeasured)
			}
			if m.OpenMP != nil && m.OpenMP.MaxThreads != c.procCPUs[0] {
				t.Errorf("OpenMP max threads %d", m.OpenMP.MaxThreads)
			}
			if !c.counters && (m.Counters == nil || !strings.Contains(m.Counters.Reason, "counters unavailable") || !strings.Contains(m.Counters.Reason, c.countersHas)) {
				t.Errorf("counters %+v", m.Counters)
			}
			if m.Timestamp != c.timestamp {
				t.Errorf("timestamp %q, want %q", m.Timestamp, c.timestamp)
			}
			if !reflect.DeepEqual(m.Git, c.git) {
				t.Errorf("git %+v, want %+v", m.Git, c.git)
			}
			var cpus, nodes []int
			for i, p := range m.Processes {
				if p.Rank != i {
					t.Errorf("process %d has rank %d", i, p.Rank)
				}
				cpus = append(cpus, p.CPUs)
				nodes = append(nodes, p.Node)
			}
			if !reflect.DeepEqual(cpus, c.procCPUs) || !reflect.DeepEqual(nodes, c.procNodes) {
				t.Errorf("process CPUs %v nodes %v, want %v %v", cpus, nodes, c.procCPUs, c.procNodes)
			}
			if len(m.Regions) != c.regions || m.Regions[0].Name != measure.GlobalRegion {
				t.Errorf("%d regions, first %q", len(m.Regions), m.Regions[0].Name)
			}
			notes := strings.Join(m.Source.Notes, "\n")
			perProcess := "Per-process and per-thread times are not in TALP files"
			if c.derived {
				perProcess = "Every process has one CPU: per-process useful times are derived"
			}
			for _, want := range append(c.noteHas, perProcess) {
				if !strings.Contains(notes, want) {
					t.Errorf("notes lack %q:\n%s", want, notes)
				}
			}
		})
	}
}

// TestMetricsAgreeWithDLB computes model talp from each converted sample
// and compares it with the efficiencies DLB wrote into the file.
//
// Where they are compared, and why not elsewhere:
//
//   - dlb_3_6_0.json (no MPI, 1 GPU) and dlb_2gpu_hybrid.json (2 ranks × 2
//     CPUs, 2 GPUs; DLB 3.6 layout): every efficiency popmon computes
//     agrees. Not compared: DLB writes 1.00 for branches that do not apply
//     (MPI without ranks, OpenMP without OpenMP data), where popmon's
//     metric is absent or, for 2 CPUs per rank without OpenMP data, not
//     measured (POP-METRICS.md, Deviation (missing data)).
//   - GENE-X talp.small.json and talp.4x56.json (a real application, DLB
//     "3.5a", 2×112 and 4×56 CPUs): parallel efficiency and the four
//     OpenMP efficiencies agree in every region. The MPI efficiencies are
//     not compared: DLB 3.5 computed them from normalized useful times
//     (usefulNormdApp / (usefulNormdApp + mpiNormdApp), maxUsefulNormdProc,
//     maxUsefulNormdNode), not from elapsed time as DLB ≥ 3.6 and popmon do,
//     and its mpiTime holds only the primary threads' MPI time (3.5 did not
//     account OpenMP workers idle during MPI), e.g. region mpi_allreduce:
//     DLB 0.02, popmon 0.99. The conversion's notes say so.
//   - the DLB 3.5 unit-test and run-folder samples (correct_2MPI_with_metadata,
//     no_timestamp, complete_serial, strong-/weak-scaling test_*): not
//     compared. Their values are synthetic: usefulTime exceeds
//     elapsedTime × numCpus, and DLB's efficiencies were not computed from
//     the times (parallelEfficiency 1 or 0.74 where usefulTime /
//     (usefulTime + mpiTime) is 0.63).
//   - popmon's own talp-json exports (internal/report goldens, DLB 3.7
//     layout, full precision): every efficiency agrees within 1e-6, also
//     In and Out across 2 nodes.
//
// DLB's node-CPU cap (POP-METRICS.md, Deviation (node CPUs)) makes
// minMpiNormdNode inconsistent with the totals on oversubscribed nodes;
// none of these samples has that case (TestMPIDistribution covers it).
func TestMetricsAgreeWithDLB(t *testing.T) {
	cases := []struct {
		file    string
		compare []string
		tol     float64
		min     int // values compared at least
	}{
		{file: "jsons/unit-tests/dlb_3_6_0.json", compare: join(keysPE, keysDev, keysGPU), tol: dlbTol, min: 6},
		// The one self-consistent GPU sample: DLB's 0.77, 0.77, 0.07, 1.00,
		// 0.54, 0.12 (the 2-GPU samples were hand-edited: TestSampleDetails).
		{file: "jsons/unit-tests/dlb_1gpu_2mpi.json", compare: join(keysPE, keysMPI, keysDev, keysGPU), tol: dlbTol, min: 11},
		{file: "jsons/unit-tests/dlb_2gpu_hybrid.json", compare: join(keysPE, keysMPI, keysDev), tol: dlbTol, min: 7},
		{file: "example_files/genex/talp.small.json", compare: join(keysPE, keysOMP), tol: dlbTol, min: 36 * 5},
		{file: "example_files/genex/talp.4x56.json", compare: join(keysPE, keysOMP), tol: dlbTol, min: 32 * 5},
	}
	goldens, _ := filepath.Glob(goldenGlob)
	for _, g := range goldens {
		cases = append(cases, struct {
			file    string
			compare []string
			tol     float64
			min     int
		}{file: g, compare: join(keysPE, keysMPI, keysOMP, keysDev, keysGPU), tol: 1e-6, min: 1})
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			path := c.file
			if !strings.HasPrefix(path, "../") {
				path = samplePath(t, c.file)
			}
			m, data := convertFile(t, path)
			f := readDLB(t, data)
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			n := compareDLB(t, rep, f, c.compare, c.tol)
			if n < c.min {
				t.Errorf("compared %d values, want at least %d", n, c.min)
			}
		})
	}
}

// compareDLB compares the keys of every region with time (DLB writes 0.00
// for a region without useful time) and returns how many values it
// compared. A key that DLB writes as 1.00 where popmon's metric is absent
// is a branch that does not apply (no MPI, no OpenMP, no GPU).
func compareDLB(t *testing.T, rep *pop.Report, f *dlbFile, keys []string, tol float64) int {
	t.Helper()
	n := 0
	for i := range rep.Regions {
		r := &rep.Regions[i]
		d := f.dlbRegion(r.Name)
		if d == nil || d["usefulTime"] <= 0 || d["elapsedTime"] <= 0 {
			continue
		}
		for _, key := range keys {
			want, ok := d[key]
			if !ok {
				continue
			}
			id := ""
			for _, e := range talpjson.Efficiencies {
				if e.Key == key {
					id = e.ID
				}
			}
			got, ok := r.Value(id)
			if !ok {
				if want != 1 {
					t.Errorf("region %q: %s absent, DLB wrote %v", r.Name, id, want)
				}
				continue
			}
			if math.Abs(got-want) > tol {
				t.Errorf("region %q: %s = %.6f, DLB wrote %v", r.Name, id, got, want)
			}
			n++
		}
	}
	return n
}

// TestMinimaReproduced checks that, for files with DLB's MPI minima
// (DLB ≥ 3.6, popmon's exports), model talp's mpi_proc_min and
// mpi_node_min equal them.
func TestMinimaReproduced(t *testing.T) {
	files, _ := filepath.Glob(goldenGlob)
	if _, err := os.Stat(sampleDir); err == nil {
		files = append(files, filepath.Join(sampleDir, "jsons/unit-tests/dlb_2gpu_hybrid.json"))
	}
	checked := 0
	for _, path := range files {
		m, data := convertFile(t, path)
		f := readDLB(t, data)
		rep, err := pop.Compute(m, pop.ModelTALP)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Regions {
			d := f.dlbRegion(r.Name)
			if _, ok := d["minMpiNormdProc"]; !ok || r.Processes == 0 || !m.HasMPI() {
				continue
			}
			// DLB writes the minima rounded to ns; the split rounds to ns.
			if math.Abs(r.Totals.MinMPIProcNS-d["minMpiNormdProc"]) > 1 || math.Abs(r.Totals.MinMPINodeNS-d["minMpiNormdNode"]) > 1 {
				t.Errorf("%s %q: minima %.1f %.1f, file %v %v", path, r.Name, r.Totals.MinMPIProcNS, r.Totals.MinMPINodeNS, d["minMpiNormdProc"], d["minMpiNormdNode"])
			}
			checked++
		}
	}
	if checked == 0 {
		t.Skip("no file with MPI minima available")
	}
}

// TestRoundTrip renders measurements with known accounts as popmon's
// talp-json, converts that back and checks that model talp agrees.
func TestRoundTrip(t *testing.T) {
	ms := map[string]*measure.Measurement{"known accounts": knownMeasurement()}
	files, err := filepath.Glob("../../measure/testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		m, err := measure.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ms[filepath.Base(p)] = m
	}
	names := make([]string, 0, len(ms))
	for n := range ms {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			orig := ms[name]
			want, err := pop.Compute(orig, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := report.Render(&buf, report.FormatTALPJSON, want, report.Options{}); err != nil {
				t.Fatal(err)
			}
			m, err := talpjson.Convert(buf.Bytes(), name+".talp.json")
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			checkSchema(t, name, m)
			got, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Regions) != len(want.Regions) {
				t.Fatalf("%d regions, want %d", len(got.Regions), len(want.Regions))
			}
			if m.Resources.Processes != orig.Resources.Processes || m.Resources.Nodes != orig.Resources.Nodes ||
				m.Resources.CPUs != orig.Resources.CPUs || m.Resources.GPUs != orig.Resources.GPUs ||
				m.Resources.HardwareCounters != orig.Resources.HardwareCounters || m.HasMPI() != orig.HasMPI() {
				t.Errorf("resources %+v mpi %v, want %+v mpi %v", m.Resources, m.HasMPI(), orig.Resources, orig.HasMPI())
			}
			if orig.Timestamp != "" && m.Timestamp != orig.Timestamp {
				t.Errorf("timestamp %q, want %q", m.Timestamp, orig.Timestamp)
			}
			for i := range want.Regions {
				w, g := &want.Regions[i], &got.Regions[i]
				if g.Name != w.Name || g.ElapsedNS != w.ElapsedNS || g.CPUs != w.CPUs || g.Totals.Visits != w.Totals.Visits {
					t.Errorf("region %q: %q elapsed %d CPUs %d visits %d, want %d %d %d", w.Name, g.Name, g.ElapsedNS, g.CPUs, g.Totals.Visits, w.ElapsedNS, w.CPUs, w.Totals.Visits)
				}
				for _, x := range w.Metrics {
					v, ok := g.Value(x.ID)
					switch {
					case !x.Measured():
						// OpenMP not measured (libgomp): the export writes
						// DLB's 1.00 placeholders, the file has no OpenMP
						// data, so the metric is absent.
						if ok {
							t.Errorf("region %q: %s = %v, originally not measured", w.Name, x.ID, v)
						}
					case !ok:
						t.Errorf("region %q: %s absent, want %v", w.Name, x.ID, x.Value)
					case math.Abs(v-x.Value) > 1e-6*math.Max(1, math.Abs(x.Value)):
						t.Errorf("region %q: %s = %v, want %v", w.Name, x.ID, v, x.Value)
					}
				}
				for _, x := range g.Metrics {
					if _, ok := w.Metric(x.ID); !ok {
						t.Errorf("region %q: extra metric %s = %v", w.Name, x.ID, x.Value)
					}
				}
			}
		})
	}
}

// knownMeasurement is a hybrid run with uneven MPI time: 2 nodes × 2 ranks
// × 3 CPUs, OpenMP, MPI worker idle time, GPU runtime time and counters.
func knownMeasurement() *measure.Measurement {
	const s = int64(1_000_000_000)
	m := &measure.Measurement{
		Format: measure.Format, Version: measure.Version,
		Tool:      measure.Tool{Name: "popmon", Version: "test"},
		Timestamp: "2026-03-04T05:06:07Z",
		Command:   []string{"./app"}, Launcher: measure.Launcher{Kind: measure.LauncherNone},
		MPI:       &measure.MPI{Library: "Open MPI v5", Standard: "3.1", ThreadLevel: "funneled"},
		Clock:     measure.Clock{Source: measure.ClockMonotonic},
		Resources: measure.Resources{Processes: 4, Nodes: 2, CPUs: 12, GPUs: 1, HardwareCounters: true},
		OpenMP:    &measure.OpenMP{Runtime: "LLVM OMP", OMPT: true, MaxThreads: 3},
		Counters:  &measure.Counters{Mode: measure.CountersAuto, Available: true, Method: "rdpmc"},
		Warnings:  []string{},
	}
	for i := 0; i < 4; i++ {
		m.Processes = append(m.Processes, measure.Process{Rank: i, Node: i / 2, Hostname: fmt.Sprintf("n%d", i/2), PID: 100 + i, CPUs: 3})
	}
	// Per rank: (M, Mw) in units of 0.1 s; every rank's CPUs sum to 3 × E.
	mpi := [][2]int64{{1, 2}, {4, 8}, {6, 12}, {2, 4}}
	for _, name := range []string{measure.GlobalRegion, "solve"} {
		g := measure.Region{Name: name}
		for i, x := range mpi {
			M, Mw := x[0]*s/10, x[1]*s/10
			a := measure.ProcessAccounts{
				Rank: i, CPUs: 3, Visits: 2, ElapsedNS: 10 * s, MPINS: M, MPIWorkerIdleNS: Mw,
				OMPLoadImbalanceNS: s / 5, OMPSchedulingNS: s / 10, OMPSerializationNS: s / 2, GPURuntimeNS: s / 4,
				MPICalls: 100, OMPParallels: 50, GPURuntimeCalls: 7, Cycles: 25 * s, Instructions: 40 * s,
				PrimaryUsefulNS: 9 * s, PrimaryMPINS: M, ThreadUsefulMaxNS: 9 * s,
			}
			a.UsefulNS = 30*s - M - Mw - a.OMPLoadImbalanceNS - a.OMPSchedulingNS - a.OMPSerializationNS - a.GPURuntimeNS
			if name == "solve" {
				// Half of every account, rank i 10·i ms longer in MPI
				// than that: the accounts still add up to 3 × E.
				a.ElapsedNS = a.ElapsedNS / 2
				a.MPINS, a.MPIWorkerIdleNS = M/2+int64(i)*s/100, Mw/2
				a.OMPLoadImbalanceNS, a.OMPSchedulingNS, a.OMPSerializationNS, a.GPURuntimeNS =
					a.OMPLoadImbalanceNS/2, a.OMPSchedulingNS/2, a.OMPSerializationNS/2, a.GPURuntimeNS/2
				a.UsefulNS = 15*s - a.MPINS - a.MPIWorkerIdleNS - a.OMPLoadImbalanceNS - a.OMPSchedulingNS - a.OMPSerializationNS - a.GPURuntimeNS
			}
			g.Processes = append(g.Processes, a)
		}
		m.Regions = append(m.Regions, g)
	}
	return m
}

// talpDoc builds a DLB ≥ 3.6 file with one Global region.
func talpDoc(ranks, nodes, cpus int, g string) []byte {
	return []byte(fmt.Sprintf(`{"dlbVersion": "3.6.1", "timestamp": "2025-01-02T03:04:05",
 "resources": {"numCpus": %d, "numNodes": %d, "numMpiRanks": %d, "numGpus": 0},
 "Application": {"Global": {"numCpus": %d, "numMpiRanks": %d, "numNodes": %d, "numMeasurements": %d,
   "elapsedTime": 10000000000, %s}}}`, cpus, nodes, ranks, cpus, ranks, nodes, ranks, g))
}

// TestMPIDistribution checks the distribution of MPI time against DLB's
// minima, and its fallbacks when they are inconsistent.
func TestMPIDistribution(t *testing.T) {
	cases := []struct {
		name                string
		data                []byte
		minProc, minNode    float64 // model talp's minima wanted (ns)
		note                string
		mpiNS, workerIdleNS int64 // Σ over processes, when not 0
	}{
		{
			// 7 ranks × 2 CPUs on 3 nodes (blocks 3, 2, 2): C_node0 = 6.
			// mpiTime 14 s; minProc 0.2 s/CPU; minNode 0.5 s/CPU (node 0:
			// 3 s); the other nodes share 11 s over 8 CPUs (1.375 s ≥ 0.5).
			name:    "exact, 3 nodes",
			data:    talpDoc(7, 3, 14, `"usefulTime": 120000000000, "mpiTime": 14000000000, "minMpiNormdProc": 200000000, "minMpiNormdNode": 500000000`),
			minProc: 2e8, minNode: 5e8, note: "reproduces DLB's minMpiNormdProc and minMpiNormdNode",
		},
		{
			name:    "exact, one node",
			data:    talpDoc(4, 1, 4, `"usefulTime": 36000000000, "mpiTime": 4000000000, "minMpiNormdProc": 100000000, "minMpiNormdNode": 1000000000`),
			minProc: 1e8, minNode: 1e9, note: "reproduces DLB's minMpiNormdProc and minMpiNormdNode",
		},
		{
			name:    "exact, one rank per node",
			data:    talpDoc(3, 3, 3, `"usefulTime": 27000000000, "mpiTime": 3000000000, "minMpiNormdProc": 500000000, "minMpiNormdNode": 500000000`),
			minProc: 5e8, minNode: 5e8, note: "reproduces DLB's minMpiNormdProc and minMpiNormdNode",
		},
		{
			// DLB capped the node's CPUs (8 ranks on a 4-core node): its
			// node minimum is twice the true mean. Only minProc is kept.
			name:    "node CPUs capped",
			data:    talpDoc(8, 1, 8, `"usefulTime": 72000000000, "mpiTime": 8000000000, "minMpiNormdProc": 200000000, "minMpiNormdNode": 2000000000`),
			minProc: 2e8, minNode: 1e9, note: "only minMpiNormdProc is reproduced",
		},
		{
			name:    "one rank per node, node minimum differs",
			data:    talpDoc(2, 2, 2, `"usefulTime": 18000000000, "mpiTime": 2000000000, "minMpiNormdProc": 500000000, "minMpiNormdNode": 700000000`),
			minProc: 5e8, minNode: 5e8, note: "one process per node",
		},
		{
			// A process minimum above the mean cannot be: split evenly.
			name:    "minimum above the mean",
			data:    talpDoc(2, 1, 2, `"usefulTime": 18000000000, "mpiTime": 2000000000, "minMpiNormdProc": 1500000000, "minMpiNormdNode": 1500000000`),
			minProc: 1e9, minNode: 1e9, note: "split evenly by CPUs",
		},
		{
			name:    "no minima",
			data:    talpDoc(2, 1, 2, `"usefulTime": 18000000000, "mpiTime": 2000000000`),
			minProc: 1e9, minNode: 1e9, note: "no MPI minima recorded",
		},
		{
			// Newer DLB writes the MPI time of idle workers apart.
			name:    "mpiWorkerIdleTime",
			data:    talpDoc(4, 2, 8, `"usefulTime": 72000000000, "mpiTime": 2000000000, "mpiWorkerIdleTime": 2000000000, "numOmpParallels": 8, "minMpiNormdProc": 200000000, "minMpiNormdNode": 400000000`),
			minProc: 2e8, minNode: 4e8, note: "mpiTime + mpiWorkerIdleTime", mpiNS: 2e9, workerIdleNS: 2e9,
		},
		{
			// DLB 3.5: rank 0 holds mpiNormdOfMaxUseful (0.4 s), ranks 1-3
			// share the rest (1.2 s each); node 0 = (0.4 + 1.2) / 2.
			name:    "3.5 layout",
			data:    talpDoc(4, 2, 4, `"usefulTime": 36000000000, "mpiTime": 4000000000, "mpiNormdOfMaxUseful": 400000000`),
			minProc: 4e8, minNode: 8e8, note: "approximates the per-process minimum",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := talpjson.Convert(c.data, "x.json")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			tot := rep.Regions[0].Totals
			if math.Abs(tot.MinMPIProcNS-c.minProc) > 1 || math.Abs(tot.MinMPINodeNS-c.minNode) > 1 {
				t.Errorf("minima %.1f %.1f, want %.1f %.1f", tot.MinMPIProcNS, tot.MinMPINodeNS, c.minProc, c.minNode)
			}
			if !strings.Contains(strings.Join(m.Source.Notes, "\n"), c.note) {
				t.Errorf("notes lack %q:\n%s", c.note, strings.Join(m.Source.Notes, "\n"))
			}
			var sum, mpi, mw int64
			for _, a := range m.Regions[0].Processes {
				sum += a.MPINS + a.MPIWorkerIdleNS
				mpi += a.MPINS
				mw += a.MPIWorkerIdleNS
				if n := float64(a.MPINS+a.MPIWorkerIdleNS) / float64(a.CPUs); n < tot.MinMPIProcNS-1e-6 {
					t.Errorf("rank %d below the minimum", a.Rank)
				}
			}
			if c.workerIdleNS > 0 && (math.Abs(float64(mpi-c.mpiNS)) > 4 || math.Abs(float64(mw-c.workerIdleNS)) > 4) {
				t.Errorf("Σ mpi_ns %d mpi_worker_idle_ns %d, want %d %d", mpi, mw, c.mpiNS, c.workerIdleNS)
			}
			if want := tot.MPINS + tot.MPIWorkerIdleNS; sum != want {
				t.Errorf("Σ MPI %d, totals %d", sum, want)
			}
		})
	}
}

// TestOddInputsConvert: inputs that are unusual but meaningful convert, with
// a note where something was assumed.
func TestOddInputsConvert(t *testing.T) {
	cases := []struct {
		name string
		data string
		note string
		chk  func(t *testing.T, m *measure.Measurement)
	}{
		{name: "no resources, no version", data: `{"Application": {"Global": {"numCpus": 4, "numMpiRanks": 2, "numNodes": 1, "elapsedTime": 5, "usefulTime": 20}}}`,
			note: "DLB (version not recorded)", chk: func(t *testing.T, m *measure.Measurement) {
				if m.Resources.Processes != 2 || m.Resources.CPUs != 4 || m.Timestamp != "" {
					t.Errorf("resources %+v timestamp %q", m.Resources, m.Timestamp)
				}
			}},
		{name: "numbers as strings", data: `{"dlbVersion": "3.5", "Application": {"Global": {"numCpus": "2", "numMpiRanks": 1, "cycles": "21817855.00", "instructions": "100", "elapsedTime": "5e9", "usefulTime": 9.5e9}}}`,
			chk: func(t *testing.T, m *measure.Measurement) {
				a := m.Regions[0].Processes[0]
				if a.ElapsedNS != 5e9 || a.UsefulNS != 9.5e9 || a.Cycles != 21817855 || !m.Resources.HardwareCounters {
					t.Errorf("account %+v", a)
				}
			}},
		{name: "nulls", data: `{"dlbVersion": null, "timestamp": null, "resources": null, "metadata": null, "Application": {"Global": {"numCpus": null, "elapsedTime": 5, "usefulTime": null}}}`},
		{name: "more nodes than ranks", data: `{"resources": {"numCpus": 2, "numNodes": 4, "numMpiRanks": 2}, "Application": {"Global": {"numCpus": 2, "numMpiRanks": 2, "elapsedTime": 1}}}`,
			note: "4 nodes for 2 MPI ranks"},
		{name: "fewer CPUs than ranks", data: `{"resources": {"numCpus": 1, "numNodes": 1, "numMpiRanks": 3}, "Application": {"Global": {"numCpus": 1, "numMpiRanks": 3, "elapsedTime": 1}}}`,
			note: "1 CPUs for 3 processes"},
		{name: "region with more ranks", data: `{"resources": {"numCpus": 2, "numNodes": 1, "numMpiRanks": 2}, "Application": {"Global": {"numCpus": 4, "numMpiRanks": 4, "elapsedTime": 1}}}`,
			note: "a region has 4"},
		{name: "region on fewer ranks", data: `{"resources": {"numCpus": 4, "numNodes": 1, "numMpiRanks": 4}, "Application": {"Global": {"numCpus": 4, "numMpiRanks": 4, "elapsedTime": 1}, "io": {"numCpus": 1, "numMpiRanks": 1, "elapsedTime": 1, "mpiTime": 1}}}`,
			chk: func(t *testing.T, m *measure.Measurement) {
				if g, _ := m.Region("io"); len(g.Processes) != 1 {
					t.Errorf("io has %d processes", len(g.Processes))
				}
			}},
		{name: "bad timestamp", data: `{"timestamp": "yesterday", "Application": {"Global": {"elapsedTime": 1}}}`, note: `timestamp "yesterday"`},
		{name: "RFC 3339 timestamp", data: `{"timestamp": "2025-01-02T03:04:05+01:00", "Application": {"Global": {"elapsedTime": 1}}}`,
			chk: func(t *testing.T, m *measure.Measurement) {
				if m.Timestamp != "2025-01-02T02:04:05Z" {
					t.Errorf("timestamp %q", m.Timestamp)
				}
			}},
		{name: "negative counters", data: `{"Application": {"Global": {"elapsedTime": 1, "usefulTime": 1, "cycles": -5.0, "instructions": 3}}}`,
			chk: func(t *testing.T, m *measure.Measurement) {
				if m.Resources.HardwareCounters || !strings.Contains(m.Counters.Reason, "negative") {
					t.Errorf("counters %+v", m.Counters)
				}
			}},
		{name: "no Global region", data: `{"Application": {"solve": {"elapsedTime": 1}}}`, note: "there is no Global region"},
		{name: "Global and old name", data: `{"Application": {"Application": {"elapsedTime": 2}, "Global": {"elapsedTime": 1}}}`,
			chk: func(t *testing.T, m *measure.Measurement) {
				if names := m.RegionNames(); !reflect.DeepEqual(names, []string{"Global", "Application"}) {
					t.Errorf("regions %v", names)
				}
			}},
		{name: "merge request as string", data: `{"metadata": {"gitCommit": "abc", "isMergeRequest": "true"}, "Application": {"Global": {"elapsedTime": 1}}}`,
			chk: func(t *testing.T, m *measure.Measurement) {
				if m.Git == nil || m.Git.Commit != "abc" || !m.Git.IsMergeRequest {
					t.Errorf("git %+v", m.Git)
				}
			}},
		{name: "unreadable per-process array", data: `{"region": 5, "Application": {"Global": {"elapsedTime": 1}}}`, note: "could not be read"},
		{name: "huge but valid times", data: `{"Application": {"Global": {"numCpus": 3, "elapsedTime": 9223372036854775807, "usefulTime": 9223372036854775807}}}`},
		{name: "BOM", data: "\xef\xbb\xbf{\"Application\": {\"Global\": {\"elapsedTime\": 1}}}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := talpjson.Convert([]byte(c.data), "odd.json")
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			checkSchema(t, c.name, m)
			if _, err := pop.ComputeAll(m); err != nil {
				t.Error(err)
			}
			notes := strings.Join(m.Source.Notes, "\n") + "\n" + m.Source.Tool
			if c.note != "" && !strings.Contains(notes, c.note) {
				t.Errorf("notes lack %q:\n%s", c.note, notes)
			}
			if c.chk != nil {
				c.chk(t, m)
			}
		})
	}
}

// brokenInputs are files Convert must refuse, with the problem named.
var brokenInputs = []struct {
	name, data, want string
}{
	{"empty", ``, "empty"},
	{"spaces", "  \n ", "empty"},
	{"not JSON", `dlbVersion: 3.5`, "not valid JSON"},
	{"truncated", `{"dlbVersion": "3.5", "Application": {"Global": {"elapsedTime": 1`, "not valid JSON"},
	{"trailing garbage", `{"Application": {}} x`, "not valid JSON"},
	{"null", `null`, "not a JSON object"},
	{"array", `[{"Application": {}}]`, "not a JSON object"},
	{"number", `3.5`, "not a JSON object"},
	{"popmon measurement", `{"format": "popmon-measurement", "version": 1}`, `no "Application" object`},
	{"Application array", `{"Application": [1, 2]}`, `"Application" is an array, not an object`},
	{"Application string", `{"Application": "x"}`, `"Application" is "x", not an object`},
	{"Application null", `{"Application": null}`, `"Application" is null, not an object`},
	{"no regions", `{"Application": {}}`, `"Application" has no regions`},
	{"region number", `{"Application": {"Global": 5}}`, `region "Global" is 5, not an object`},
	{"region array", `{"Application": {"Global": []}}`, `region "Global" is an array, not an object`},
	{"region null", `{"Application": {"Global": null}}`, `region "Global" is null, not an object`},
	{"empty region name", `{"Application": {"": {}}}`, "empty name"},
	{"duplicate region", `{"Application": {"a": {}, "a": {}}}`, `two regions named "a"`},
	{"negative elapsed", `{"Application": {"Global": {"elapsedTime": -1}}}`, `region "Global": elapsedTime is negative (-1)`},
	{"negative useful", `{"Application": {"Global": {"usefulTime": -2.5}}}`, "usefulTime is negative"},
	{"negative mpi", `{"Application": {"solve": {"mpiTime": -7}}}`, `region "solve": mpiTime is negative`},
	{"negative minimum", `{"Application": {"Global": {"minMpiNormdProc": -1}}}`, "minMpiNormdProc is negative"},
	{"negative ranks", `{"Application": {"Global": {"numMpiRanks": -2}}}`, "numMpiRanks is negative"},
	{"time not a number", `{"Application": {"Global": {"usefulTime": "abc"}}}`, `usefulTime is "abc", not a number`},
	{"time bool", `{"Application": {"Global": {"elapsedTime": true}}}`, "elapsedTime is true, not a number"},
	{"time object", `{"Application": {"Global": {"elapsedTime": {}}}}`, "elapsedTime is an object, not a number"},
	{"time NaN string", `{"Application": {"Global": {"elapsedTime": "NaN"}}}`, "not a number"},
	{"time Inf string", `{"Application": {"Global": {"elapsedTime": "Inf"}}}`, "not a number"},
	{"time hex string", `{"Application": {"Global": {"elapsedTime": "0x10"}}}`, "not a number"},
	{"time too large", `{"Application": {"Global": {"elapsedTime": 1e300}}}`, "elapsedTime (1e300) is larger than popmon converts"},
	{"time overflow", `{"Application": {"Global": {"elapsedTime": 9223372036854775808}}}`, "larger than popmon converts"},
	{"mpi sum overflow", `{"Application": {"Global": {"mpiTime": 9223372036854775807, "mpiWorkerIdleTime": 1}}}`, "too large"},
	{"too many ranks", `{"resources": {"numMpiRanks": 100000000}, "Application": {"Global": {}}}`, "numMpiRanks (100000000) is larger than popmon converts"},
	{"too many CPUs", `{"Application": {"Global": {"numCpus": 1e12}}}`, "numCpus (1e12) is larger"},
	{"too many accounts", `{"resources": {"numMpiRanks": 1000000}, "Application": {"a": {}, "b": {}, "c": {}, "d": {}, "e": {}}}`, "the declared size does not match the content"},
	{"too many GPU accounts", `{"resources": {"numGpus": 1000000}, "Application": {"a": {"gpuUsefulTime": 1}, "b": {}}}`, "the declared size does not match the content"},
	{"too many GPUs", `{"resources": {"numGpus": 1000000}, "Application": {"a": {"gpuUsefulTime": 1000000000000}, "b": {}}}`, "the file declares 1000000 GPUs (numGpus) with device times; popmon converts at most 65536"},
	{"too many nodes", `{"resources": {"numMpiRanks": 1000000, "numNodes": 1000000}, "Application": {"a": {"usefulTime": 1000000000000}, "b": {}}}`, "2 regions × 1000000 nodes is more than popmon converts"},
	{"negative GPU time", `{"Application": {"Global": {"maxGpuActiveTime": -1}}}`, `region "Global": maxGpuActiveTime is negative (-1)`},
	{"GPU time not a number", `{"Application": {"Global": {"gpuUsefulTime": "x"}}}`, `gpuUsefulTime is "x", not a number`},
	{"resources not object", `{"resources": [1], "Application": {"Global": {}}}`, `"resources" is an array, not an object`},
	{"resources negative", `{"resources": {"numCpus": -4}, "Application": {"Global": {}}}`, `"resources": numCpus is negative`},
	{"resources bad", `{"resources": {"numNodes": "two"}, "Application": {"Global": {}}}`, `"resources": numNodes is "two", not a number`},
	{"version not string", `{"dlbVersion": 3.5, "Application": {"Global": {}}}`, `"dlbVersion" is 3.5, not a string`},
	{"timestamp not string", `{"timestamp": 12, "Application": {"Global": {}}}`, `"timestamp" is 12, not a string`},
	{"metadata not object", `{"metadata": "x", "Application": {"Global": {}}}`, `"metadata" is "x", not an object`},
	{"metadata commit number", `{"metadata": {"gitCommit": 5}, "Application": {"Global": {}}}`, `"metadata": "gitCommit" is 5, not a string`},
	{"metadata merge request", `{"metadata": {"isMergeRequest": 1}, "Application": {"Global": {}}}`, `"isMergeRequest" is 1, not true or false`},
}

func TestConvertErrors(t *testing.T) {
	for _, c := range brokenInputs {
		t.Run(c.name, func(t *testing.T) {
			m, err := talpjson.Convert([]byte(c.data), "bad.json")
			if err == nil {
				t.Fatalf("converted %q: %+v", c.data, m)
			}
			if m != nil {
				t.Errorf("a measurement with the error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "convert DLB/TALP JSON bad.json: ") || !strings.Contains(msg, c.want) {
				t.Errorf("error %q, want it to name the file and contain %q", msg, c.want)
			}
			if errors.Is(err, measure.ErrInvalid) {
				t.Errorf("a broken input is not a popmon bug: %v", err)
			}
		})
	}
	_, err := talpjson.Convert([]byte(`[]`), "")
	if err == nil || !strings.HasPrefix(err.Error(), "convert DLB/TALP JSON input: ") {
		t.Errorf("unnamed input: %v", err)
	}
}

// FuzzConvert: Convert never panics, and what it returns is valid.
func FuzzConvert(f *testing.F) {
	for _, c := range brokenInputs {
		f.Add([]byte(c.data))
	}
	f.Add(talpDoc(7, 3, 14, `"usefulTime": 120000000000, "mpiTime": 14000000000, "minMpiNormdProc": 200000000, "minMpiNormdNode": 500000000`))
	f.Add(talpDoc(3, 2, 2, `"usefulTime": 1, "mpiTime": 5, "mpiNormdOfMaxUseful": 9`))
	for _, rel := range []string{"jsons/unit-tests/dlb_2gpu_hybrid.json", "jsons/unit-tests/correct_2MPI_with_metadata.json"} {
		if data, err := os.ReadFile(filepath.Join(sampleDir, rel)); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		talpjson.IsTALP(data)
		m, err := talpjson.Convert(data, "fuzz.json")
		if err != nil {
			if m != nil {
				t.Error("a measurement with the error")
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("invalid measurement: %v", err)
		}
		if _, err := pop.ComputeAll(m); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSingleRankKeepsTotals: one rank whose minimum matches up to DLB's
// rounding keeps all of mpiTime.
func TestSingleRankKeepsTotals(t *testing.T) {
	for _, g := range []string{
		`"usefulTime": 9, "mpiTime": 1000000001, "minMpiNormdProc": 500000000`,
		`"usefulTime": 9, "mpiTime": 1000000001, "minMpiNormdProc": 500000000, "minMpiNormdNode": 500000001`,
	} {
		m, err := talpjson.Convert(talpDoc(1, 1, 2, g), "x.json")
		if err != nil {
			t.Fatal(err)
		}
		if a := m.Regions[0].Processes[0]; a.MPINS != 1000000001 {
			t.Errorf("%s: mpi_ns %d", g, a.MPINS)
		}
	}
}

// TestGPUConvert checks the per-device accounts synthesized from DLB's GPU
// times: model talp's device tree gives DLB's formulas with one GPU per
// process, and the notes say where the times cannot be honoured or do not
// give the file's own efficiencies.
func TestGPUConvert(t *testing.T) {
	region := func(gpus int, keys string) string {
		return fmt.Sprintf(`{"resources": {"numMpiRanks": 2, "numCpus": 2, "numGpus": %d}, "Application": {"Global": {"numMpiRanks": 2, "numCpus": 2, "elapsedTime": 1000000000, "usefulTime": 2000000000, %s}}}`, gpus, keys)
	}
	tests := []struct {
		name    string
		data    string
		devices int
		want    map[string]float64
		notes   []string
	}{
		{"2 GPUs, one per process", region(2, `"gpuUsefulTime": 300000000, "gpuCommunicationTime": 100000000, "maxGpuUsefulTime": 200000000, "maxGpuActiveTime": 250000000`), 2,
			map[string]float64{"gpu_parallel_efficiency": 0.15, "gpu_load_balance": 0.75, "gpu_communication_efficiency": 0.8, "gpu_orchestration_efficiency": 0.25},
			[]string{"GPU devices: 2 devices synthesized"}},
		{"1 shared GPU", region(1, `"gpuUsefulTime": 400000000, "gpuCommunicationTime": 100000000, "maxGpuUsefulTime": 400000000, "maxGpuActiveTime": 500000000, "gpuLoadBalance": 1.0, "gpuParallelEfficiency": 0.40`), 1,
			map[string]float64{"gpu_parallel_efficiency": 0.4, "gpu_load_balance": 1, "gpu_communication_efficiency": 0.8, "gpu_orchestration_efficiency": 0.5}, nil},
		{"maxima above the sums", region(1, `"gpuUsefulTime": 100000000, "maxGpuUsefulTime": 300000000, "maxGpuActiveTime": 300000000`), 1,
			map[string]float64{"gpu_parallel_efficiency": 0.1, "gpu_load_balance": 1}, []string{"GPU times that no per-device split honours exactly"}},
		{"hand-edited efficiencies", region(2, `"gpuUsefulTime": 100000000, "maxGpuUsefulTime": 100000000, "maxGpuActiveTime": 100000000, "gpuLoadBalance": 1.00`), 2,
			map[string]float64{"gpu_load_balance": 0.5}, []string{`"Global": gpuLoadBalance 1.00 (times: 0.50)`}},
		{"numGpus 0 with device times", region(0, `"gpuUsefulTime": 100000000, "maxGpuUsefulTime": 100000000, "maxGpuActiveTime": 100000000`), 1,
			map[string]float64{"gpu_parallel_efficiency": 0.1}, []string{"numGpus was 0 but the file has device times"}},
		{"no maxima: an even split", region(2, `"gpuUsefulTime": 300000000, "gpuCommunicationTime": 100000000`), 2,
			map[string]float64{"gpu_parallel_efficiency": 0.15, "gpu_load_balance": 1, "gpu_communication_efficiency": 0.75, "gpu_orchestration_efficiency": 0.2}, nil},
		{"region with fewer GPUs than the run", `{"resources": {"numMpiRanks": 2, "numCpus": 2, "numGpus": 2}, "Application": {"Global": {"numMpiRanks": 2, "numCpus": 2, "numGpus": 2, "elapsedTime": 1000000000, "usefulTime": 2000000000, "gpuUsefulTime": 400000000, "maxGpuUsefulTime": 200000000, "maxGpuActiveTime": 200000000, "gpuLoadBalance": 1.0}, "one": {"numMpiRanks": 2, "numCpus": 2, "numGpus": 1, "elapsedTime": 1000000000, "usefulTime": 2000000000, "gpuUsefulTime": 100000000, "maxGpuUsefulTime": 100000000, "maxGpuActiveTime": 100000000, "gpuLoadBalance": 1.0, "gpuParallelEfficiency": 0.1}}}`, 2,
			map[string]float64{"gpu_load_balance": 1}, nil},
		{"GPUs without device times", region(2, `"gpuRuntimeTime": 5`), 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := talpjson.Convert([]byte(tt.data), "gpu.json")
			if err != nil {
				t.Fatal(err)
			}
			if len(m.GPUDevices) != tt.devices {
				t.Errorf("%d devices, want %d", len(m.GPUDevices), tt.devices)
			}
			rep, err := pop.Compute(m, pop.ModelTALP)
			if err != nil {
				t.Fatal(err)
			}
			r := &rep.Regions[0]
			for id, w := range tt.want {
				if v, ok := r.Value(id); !ok || math.Abs(v-w) > 1e-9 {
					t.Errorf("%s = %v (%v), want %v", id, v, ok, w)
				}
			}
			if tt.want == nil {
				if _, ok := r.Metric(pop.IDGPUParallelEfficiency); ok {
					t.Errorf("device tree without device times")
				}
			}
			notes := strings.Join(m.Source.Notes, "\n")
			for _, n := range tt.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes lack %q:\n%s", n, notes)
				}
			}
			if tt.notes == nil && strings.Contains(notes, "do not follow from its times") {
				t.Errorf("unexpected disagreement note:\n%s", notes)
			}
		})
	}
}
