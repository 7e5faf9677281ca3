package runs

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// talpDir is the shared TALP JSON samples; tests using it skip when absent.
const talpDir = "../../../shared/data/talp-json"

func talpPath(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(talpDir, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("TALP samples not available: %v", err)
	}
	return p
}

func TestLoadEveryTALPSample(t *testing.T) {
	dir := talpPath(t, ".")
	rs, err := LoadAll([]string{dir}, pop.ModelTALP, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 14 {
		t.Errorf("loaded %d runs, want the 14 samples", len(rs))
	}
	for _, r := range rs {
		if r.Kind != KindTALP || r.DLBVersion == "" || r.Label == "" || r.Timestamp.IsZero() {
			t.Errorf("%s: kind %q dlb %q label %q time %v", r.Source, r.Kind, r.DLBVersion, r.Label, r.Timestamp)
		}
		if len(r.Regions) == 0 || r.Regions[0].Name != "Global" {
			t.Errorf("%s: first region is not Global", r.Source)
			continue
		}
		g := r.Regions[0]
		if _, ok := g.Metrics[pop.IDParallelEfficiency]; !ok {
			t.Errorf("%s: no parallel_efficiency", r.Source)
		}
		for id, v := range g.Metrics {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: %s = %v", r.Source, id, v)
			}
		}
	}
}

func TestLoadTALPValues(t *testing.T) {
	cases := []struct {
		file, label string
		processes   int
		metrics     map[string]float64
		absent      []string
		counters    bool
		git         Git
		mtime       bool
	}{
		{file: "jsons/unit-tests/correct_2MPI_with_metadata.json", label: "2xMPI 1xOpenMP", processes: 2,
			metrics:  map[string]float64{pop.IDParallelEfficiency: 0.74, pop.IDMPIParallelEfficiency: 0.35, pop.IDMPILoadBalanceOut: 0.56},
			absent:   []string{pop.IDOMPParallelEfficiency, pop.IDDeviceOffloadEfficiency},
			counters: true,
			git:      Git{Commit: "<somehash>", Branch: "branch", Timestamp: "2024-09-02T14:11:24", IsMergeRequest: true, DefaultBranch: "main"}},
		{file: "jsons/unit-tests/dlb_3_6_0.json", label: "1xOpenMP 1xGPU", processes: 1,
			metrics: map[string]float64{pop.IDParallelEfficiency: 0.77, pop.IDDeviceOffloadEfficiency: 0.77, pop.IDGPUOrchestrationEfficiency: 0.12},
			absent:  []string{pop.IDMPIParallelEfficiency, pop.IDOMPParallelEfficiency, pop.IDIPC}},
		{file: "jsons/unit-tests/dlb_2gpu_hybrid.json", label: "2xMPI 2xOpenMP 2xGPU", processes: 2,
			metrics: map[string]float64{pop.IDGPUCommunicationEfficiency: 0.54}},
		{file: "jsons/unit-tests/no_timestamp.json", label: "2xMPI 1xOpenMP", processes: 2, counters: true, mtime: true,
			metrics: map[string]float64{pop.IDParallelEfficiency: 1}},
		{file: "example_files/genex/talp.small.json", label: "2xMPI 112xOpenMP", processes: 2, counters: true,
			metrics: map[string]float64{pop.IDParallelEfficiency: 0.93, pop.IDOMPLoadBalance: 0.95, pop.IDMPILoadBalanceOut: 0.99}},
	}
	for _, c := range cases {
		r, err := Load(talpPath(t, c.file), "")
		if err != nil {
			t.Fatal(err)
		}
		g := r.Regions[0]
		if r.Label != c.label || r.Resources.Processes != c.processes || g.HasCounters != c.counters || r.Git != c.git || r.TimestampFromMtime != c.mtime {
			t.Errorf("%s: label %q processes %d counters %v git %+v mtime %v", c.file, r.Label, r.Resources.Processes, g.HasCounters, r.Git, r.TimestampFromMtime)
		}
		for id, want := range c.metrics {
			if got, ok := g.Metrics[id]; !ok || got != want {
				t.Errorf("%s: %s = %v (%v), want %v", c.file, id, got, ok, want)
			}
		}
		for _, id := range c.absent {
			if v, ok := g.Metrics[id]; ok {
				t.Errorf("%s: %s = %v, want absent", c.file, id, v)
			}
		}
	}
}

func TestTALPGlobalRegionNames(t *testing.T) {
	r, err := Load(talpPath(t, "example_files/genex/talp.4x56.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Regions[0].Name != "Global" || len(r.Regions) < 30 {
		t.Errorf("regions: first %q, %d in all", r.Regions[0].Name, len(r.Regions))
	}
	if _, ok := r.Region("calc_rhs_dynamic"); !ok {
		t.Error("no region calc_rhs_dynamic")
	}
	// Older DLB: "MPI Execution", not first.
	dir := t.TempDir()
	p := filepath.Join(dir, "old.json")
	os.WriteFile(p, []byte(`{"dlbVersion": "3.3", "resources": {"numCpus": 2, "numNodes": 1, "numMpiRanks": 2},
	 "Application": {"solve": {"numCpus": 2, "numMpiRanks": 2, "elapsedTime": 1, "usefulTime": 1, "parallelEfficiency": 0.5},
	                 "MPI Execution": {"numCpus": 2, "numMpiRanks": 2, "elapsedTime": 2, "usefulTime": 2, "parallelEfficiency": 0.9}}}`), 0o644)
	r, err = Load(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Regions[0].Name != "Global" || r.Regions[0].Metrics[pop.IDParallelEfficiency] != 0.9 || r.Regions[1].Name != "solve" {
		t.Errorf("regions %+v", r.Regions)
	}
}

// writeMeasurement writes a popmon measurement of two MPI ranks with
// counters and returns its path.
func writeMeasurement(t *testing.T, dir, name string, useful1 int64) string {
	t.Helper()
	acct := func(rank int, useful int64) measure.ProcessAccounts {
		return measure.ProcessAccounts{Rank: rank, CPUs: 1, Visits: 1, ElapsedNS: 1e9, UsefulNS: useful, MPINS: 1e9 - useful,
			Cycles: useful * 2, Instructions: useful * 3}
	}
	m := &measure.Measurement{
		Tool: measure.Tool{Name: "popmon", Version: "0.1.0"}, Timestamp: "2026-01-02T03:04:05Z",
		Command: []string{"./app"}, Cwd: "/tmp", Launcher: measure.Launcher{Kind: measure.LauncherOpenMPI},
		MPI:       &measure.MPI{Library: "Open MPI", Standard: "3.1", ThreadLevel: "single"},
		Clock:     measure.Clock{Source: "monotonic"},
		Resources: measure.Resources{Processes: 2, Nodes: 1, CPUs: 2, HardwareCounters: true},
		Processes: []measure.Process{{Rank: 0, Hostname: "h", PID: 1, CPUs: 1}, {Rank: 1, Hostname: "h", PID: 2, CPUs: 1}},
		Regions: []measure.Region{
			{Name: "Global", Processes: []measure.ProcessAccounts{acct(0, 1e9), acct(1, useful1)}},
			{Name: "solve", Processes: []measure.ProcessAccounts{acct(0, 5e8), acct(1, 5e8)}},
		},
	}
	var b bytes.Buffer
	if err := measure.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadPopmon(t *testing.T) {
	p := writeMeasurement(t, t.TempDir(), "run.json", 5e8)
	r, err := Load(p, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindPopmon || r.Label != "2xMPI 1xOpenMP" || r.Timestamp.Format("2006-01-02T15:04:05") != "2026-01-02T03:04:05" {
		t.Errorf("kind %q label %q time %v", r.Kind, r.Label, r.Timestamp)
	}
	g := r.Regions[0]
	// U = 1.5e9 of 2e9 CPU time: PE 0.75; LB = 0.75/1; IPC 1.5.
	if g.Name != "Global" || g.UsefulNS != 1.5e9 || !g.HasCounters || g.Metrics[pop.IDParallelEfficiency] != 0.75 || g.Metrics[pop.IDIPC] != 1.5 {
		t.Errorf("global %+v", g)
	}
	if len(g.Tree) == 0 || g.Tree[0].ID != pop.IDParallelEfficiency {
		t.Errorf("tree %+v", g.Tree)
	}
	if _, err := Load(p, pop.ModelPOPHybrid); err != nil {
		t.Errorf("pop-hybrid on a popmon file: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	cases := []struct {
		path  string
		model pop.Model
		want  string
	}{
		{write("other.json", `{"hello": 1}`), "", "is neither a popmon measurement"},
		{write("broken.json", `{"dlbVersion": `), "", "is not valid JSON (invalid JSON at byte 14"},
		{write("array.json", `[1,2]`), "", "its top level is not a JSON object"},
		{write("badapp.json", `{"dlbVersion": "3.5", "Application": [1]}`), "", `"Application" is an array, not an object`},
		{write("badregion.json", `{"dlbVersion": "3.5", "Application": {"Global": 3}}`), "", `region "Global" is 3, not an object`},
		{write("empty.json", `{"dlbVersion": "3.5", "Application": {}}`), "", `"Application" has no regions`},
		{write("badpopmon.json", `{"format": "popmon-measurement", "version": 1}`), "", "badpopmon.json"},
		{write("talp.json", `{"dlbVersion": "3.5", "Application": {"Global": {}}}`), pop.ModelPOPHybrid, "model talp only"},
		{filepath.Join(dir, "missing.json"), "", "missing.json"},
	}
	for _, c := range cases {
		_, err := Load(c.path, c.model)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Base(c.path)) {
			t.Errorf("%s: error %v, want one naming the file and %q", c.path, err, c.want)
		}
	}
}

func TestLoadAllSkipBad(t *testing.T) {
	dir := t.TempDir()
	writeMeasurement(t, dir, "a.json", 5e8)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	writeMeasurement(t, filepath.Join(dir, "sub"), "b.json", 1e9)
	os.WriteFile(filepath.Join(dir, "sub", "bad.json"), []byte("nope"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o644)
	if _, err := LoadAll([]string{dir}, "", false, nil); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("strict: %v", err)
	}
	var warned []error
	rs, err := LoadAll([]string{dir}, "", true, func(err error) { warned = append(warned, err) })
	if err != nil || len(rs) != 2 || len(warned) != 1 {
		t.Errorf("skip-bad: %d runs, %v, warnings %v", len(rs), err, warned)
	}
	if _, err := LoadAll([]string{filepath.Join(dir, "nope")}, "", true, nil); err == nil {
		t.Error("missing path accepted")
	}
}

func TestGitFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		name string
		env  map[string]string
		want Git
	}{
		{"none", nil, Git{}},
		{"github push", map[string]string{"GITHUB_SHA": "abc", "GITHUB_REF_NAME": "main", "GITHUB_EVENT_NAME": "push"}, Git{Commit: "abc", Branch: "main"}},
		{"github pr", map[string]string{"GITHUB_SHA": "abc", "GITHUB_REF_NAME": "7/merge", "GITHUB_HEAD_REF": "feature", "GITHUB_EVENT_NAME": "pull_request"},
			Git{Commit: "abc", Branch: "feature", IsMergeRequest: true}},
		{"gitlab mr", map[string]string{"CI_COMMIT_SHA": "def", "CI_COMMIT_REF_NAME": "fix", "CI_COMMIT_TIMESTAMP": "2026-01-01T00:00:00+00:00",
			"CI_MERGE_REQUEST_IID": "12", "CI_DEFAULT_BRANCH": "main"},
			Git{Commit: "def", Branch: "fix", Timestamp: "2026-01-01T00:00:00+00:00", IsMergeRequest: true, DefaultBranch: "main"}},
	}
	for _, c := range cases {
		if got := GitFromEnv(env(c.env)); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if !GitFromEnv(nil).IsZero() {
		t.Error("nil getenv")
	}
}

func TestLabel(t *testing.T) {
	cases := []struct {
		r    Resources
		want string
	}{
		{Resources{MPI: true, Processes: 4, CPUs: 8}, "4xMPI 2xOpenMP"},
		{Resources{MPI: true, Processes: 4, CPUs: 4}, "4xMPI 1xOpenMP"},
		{Resources{Processes: 1, CPUs: 8}, "8xOpenMP"},
		{Resources{Processes: 1, CPUs: 1}, "1xOpenMP"},
		{Resources{MPI: true, Processes: 2, CPUs: 5}, "2xMPI 2.5xOpenMP"},
		{Resources{MPI: true, Processes: 2, CPUs: 4, GPUs: 2}, "2xMPI 2xOpenMP 2xGPU"},
		{Resources{}, "1xOpenMP"},
	}
	for _, c := range cases {
		if got := c.r.Label(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

// TestRunFoldersScalingMode: talp-pages asserts strong for strong-scaling/
// and weak for weak-scaling/; auto mode must agree.
func TestRunFoldersScalingMode(t *testing.T) {
	cases := []struct {
		dir  string
		want pop.ScalingMode
		// hand-checked cells of the 4-CPU run
		instr, comp float64
	}{
		// I 2240503 on 2 and on 4 CPUs: strong, instruction scaling 1;
		// U 12514719683 → 24514719683: 0.5105.
		{"jsons/run-folder/strong-scaling", pop.ScalingStrong, 1, 12514719683.0 / 24514719683},
		// I 2240503 → 5240503: weak, (2240503/2)/(5240503/4) = 0.8551;
		// computation scalability 0.5105 × 4/2.
		{"jsons/run-folder/weak-scaling", pop.ScalingWeak, (2240503.0 / 2) / (5240503.0 / 4), 2 * 12514719683.0 / 24514719683},
	}
	for _, c := range cases {
		rs, err := LoadAll([]string{talpPath(t, c.dir)}, "", false, nil)
		if err != nil {
			t.Fatal(err)
		}
		in, err := ScalingInput(rs, pop.ModelTALP, pop.ScalingAuto, -1, "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := pop.Scale(in)
		if err != nil {
			t.Fatal(err)
		}
		if s.Mode != c.want {
			t.Errorf("%s: %s (%s), want %s", c.dir, s.Mode, s.ModeReason, c.want)
		}
		g := s.Regions[0]
		if g.Runs[g.Reference].CPUs != 2 {
			t.Errorf("%s: reference has %d CPUs", c.dir, g.Runs[g.Reference].CPUs)
		}
		for id, want := range map[string]float64{pop.IDInstructionScaling: c.instr, pop.IDComputationScalability: c.comp} {
			r, _ := g.Row(id)
			if v, ok := r.Value(1); !ok || math.Abs(v-want) > 1e-12 {
				t.Errorf("%s: %s = %v, want %v", c.dir, id, v, want)
			}
		}
	}
}

func TestFindReferenceAndRegion(t *testing.T) {
	rs, err := LoadAll([]string{talpPath(t, "jsons/run-folder/strong-scaling")}, "", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]int{"4xmpi 2xopenmp": 1, "test_base.json": 0, rs[1].Source: 1} {
		if got, err := FindReference(rs, ref); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", ref, got, err, want)
		}
	}
	if _, err := FindReference(rs, "9xMPI"); err == nil || !strings.Contains(err.Error(), "2xMPI 1xOpenMP") {
		t.Errorf("unknown reference: %v", err)
	}
	if _, err := ScalingInput(rs, "", "", -1, "nope"); err == nil || !strings.Contains(err.Error(), "Global") {
		t.Errorf("unknown region: %v", err)
	}
	// Names are case-sensitive: "global" is refused with a suggestion.
	if _, err := ScalingInput(rs, "", "", -1, "global"); err == nil || err.Error() != `no region "global"; did you mean "Global"? names are case-sensitive` {
		t.Errorf("region global: %v", err)
	}
	in, err := ScalingInput(rs, "", "", -1, "Global")
	if err != nil || len(in.Regions) != 1 || in.Regions[0].Name != "Global" {
		t.Errorf("region Global: %+v %v", in.Regions, err)
	}
}
