package measure_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

func TestThreadAccountAccessors(t *testing.T) {
	const sec = int64(1_000_000_000)
	tests := []struct {
		name                     string
		a                        measure.ProcessAccounts
		has                      bool
		useful, mpi, max, serial int64
	}{
		{"one CPU, keys absent: the process accounts",
			measure.ProcessAccounts{CPUs: 1, UsefulNS: 3 * sec, MPINS: sec},
			true, 3 * sec, sec, 3 * sec, 3 * sec},
		{"one CPU, keys present win",
			measure.ProcessAccounts{CPUs: 1, UsefulNS: 3 * sec, MPINS: sec, PrimaryUsefulNS: 2 * sec, PrimaryMPINS: sec / 2,
				PrimaryParallelNS: sec, PrimarySerialUsefulNS: sec, ParallelUsefulNS: sec, ThreadUsefulMaxNS: 2 * sec},
			true, 2 * sec, sec / 2, 2 * sec, sec},
		{"four CPUs, all keys",
			measure.ProcessAccounts{CPUs: 4, UsefulNS: 34 * sec, MPINS: sec, PrimaryUsefulNS: 9 * sec, PrimaryMPINS: sec,
				PrimaryParallelNS: 8 * sec, PrimarySerialUsefulNS: sec / 2, ParallelUsefulNS: 33 * sec, ThreadUsefulMaxNS: 9 * sec},
			true, 9 * sec, sec, 9 * sec, sec / 2},
		{"four CPUs, serial useful omitted: useful − parallel useful",
			measure.ProcessAccounts{CPUs: 4, UsefulNS: 34 * sec, PrimaryUsefulNS: 9 * sec, PrimaryParallelNS: 8 * sec,
				ParallelUsefulNS: 33 * sec, ThreadUsefulMaxNS: 9 * sec},
			true, 9 * sec, 0, 9 * sec, sec},
		{"four CPUs, serial useful derived is clamped to the primary's useful time",
			measure.ProcessAccounts{CPUs: 4, UsefulNS: 34 * sec, PrimaryUsefulNS: sec / 2, PrimaryParallelNS: 8 * sec,
				ParallelUsefulNS: 30 * sec, ThreadUsefulMaxNS: 9 * sec},
			true, sec / 2, 0, 9 * sec, sec / 2},
		{"four CPUs, no parallel region: all primary useful time is serial",
			measure.ProcessAccounts{CPUs: 4, UsefulNS: 2 * sec, PrimaryUsefulNS: 2 * sec, ThreadUsefulMaxNS: 2 * sec},
			true, 2 * sec, 0, 2 * sec, 2 * sec},
		{"four CPUs, keys absent (older writer)",
			measure.ProcessAccounts{CPUs: 4, UsefulNS: 34 * sec, MPINS: sec},
			false, 0, 0, 0, 0},
		{"four CPUs, nothing useful",
			measure.ProcessAccounts{CPUs: 4, MPINS: sec},
			true, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a
			if got := a.HasThreadAccounts(); got != tt.has {
				t.Errorf("HasThreadAccounts = %v, want %v", got, tt.has)
			}
			for _, c := range []struct {
				name      string
				got, want int64
			}{
				{"PrimaryUseful", a.PrimaryUseful(), tt.useful},
				{"PrimaryMPI", a.PrimaryMPI(), tt.mpi},
				{"ThreadUsefulMax", a.ThreadUsefulMax(), tt.max},
				{"PrimarySerialUseful", a.PrimarySerialUseful(), tt.serial},
			} {
				if c.got != c.want {
					t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestOpenMPMeasured(t *testing.T) {
	tests := []struct {
		o        *measure.OpenMP
		measured bool
		reason   string
	}{
		{nil, false, ""},
		{&measure.OpenMP{Runtime: "LLVM OMP", OMPT: true}, true, ""},
		{&measure.OpenMP{Runtime: "GNU libgomp", Reason: "GNU libgomp has no OMPT: run with popmon run --openmp=libomp"}, false,
			"GNU libgomp has no OMPT: run with popmon run --openmp=libomp"},
		{&measure.OpenMP{Runtime: "GNU libgomp"}, false, "GNU libgomp was not measured (no OMPT tool)"},
		{&measure.OpenMP{}, false, "the OpenMP runtime was not measured (no OMPT tool)"},
	}
	for _, tt := range tests {
		if got := tt.o.Measured(); got != tt.measured {
			t.Errorf("%+v: Measured = %v", tt.o, got)
		}
		if got := tt.o.NotMeasured(); got != tt.reason {
			t.Errorf("%+v: NotMeasured = %q, want %q", tt.o, got, tt.reason)
		}
	}
}

func TestReadOpenMP(t *testing.T) {
	m, err := measure.ReadFile(filepath.Join("testdata", "hybrid_2nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	if o := m.OpenMP; !o.Measured() || o.MaxThreads != 4 || !strings.HasPrefix(o.Runtime, "LLVM OMP") {
		t.Errorf("openmp = %+v", o)
	}
	if len(m.OMPRegions) != 2 {
		t.Fatalf("omp_regions = %+v", m.OMPRegions)
	}
	r := m.OMPRegions[1]
	if r.Module != "/scratch/u42/solver/solver" || r.Address != 4199321 || r.Executions != 400 || r.Threads != 4 ||
		r.SynchronizationNS != 100000000 || r.LimitedParallelismNS != 100000000 {
		t.Errorf("omp_regions[1] = %+v", r)
	}
	g, _ := m.Global()
	a, _ := g.Process(1)
	if a.PrimaryUsefulNS != 8449999000 || a.PrimaryMPI() != 1500000000 || a.PrimaryParallelNS != 8099999000 ||
		a.PrimarySerialUseful() != 400000000 || a.ParallelUsefulNS != 31599996000 || a.ThreadUsefulMax() != 8449999000 {
		t.Errorf("rank 1 thread accounts = %+v", *a)
	}
	// The testdata follow the OpenMP accounting: outside parallel regions
	// only the primary thread is useful.
	for _, g := range m.Regions {
		for _, a := range g.Processes {
			if a.UsefulNS != a.ParallelUsefulNS+a.PrimarySerialUseful() {
				t.Errorf("%s rank %d: useful %d ≠ parallel useful %d + primary serial useful %d",
					g.Name, a.Rank, a.UsefulNS, a.ParallelUsefulNS, a.PrimarySerialUseful())
			}
		}
	}

	m, err = measure.ReadFile(filepath.Join("testdata", "hybrid_libgomp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.OpenMP.Measured() || !strings.Contains(m.OpenMP.NotMeasured(), "--openmp=libomp") || m.OMPRegions != nil {
		t.Errorf("libgomp openmp = %+v, omp_regions %v", m.OpenMP, m.OMPRegions)
	}
}

func TestValidateOpenMP(t *testing.T) {
	region := `{"module": "a.out", "address": 4096, "executions": 1, "threads": 2, "wall_ns": 5, "useful_ns": 8, "imbalance_ns": 1, "synchronization_ns": 0, "limited_parallelism_ns": 0, "thread_management_ns": 1}`
	tests := []struct {
		name, old, new, want string
	}{
		{"negative max_threads", `"version": 1,`, `"version": 1, "openmp": {"runtime": "x", "ompt": true, "max_threads": -1},`,
			"openmp has negative max_threads (-1)"},
		{"negative region time", `"version": 1,`, `"version": 1, "omp_regions": [` + region + `, ` + strings.Replace(region, `"wall_ns": 5`, `"wall_ns": -5`, 1) + `],`,
			"omp_regions[1] has negative wall_ns (-5)"},
		{"negative threads", `"version": 1,`, `"version": 1, "omp_regions": [` + strings.Replace(region, `"threads": 2`, `"threads": -2`, 1) + `],`,
			"omp_regions[0] has negative threads (-2)"},
		{"negative address", `"version": 1,`, `"version": 1, "omp_regions": [` + strings.Replace(region, `"address": 4096`, `"address": -1`, 1) + `],`,
			"omp_regions.address is a JSON number -1, want an integer in the range of uint64"},
		{"negative thread account", `"useful_ns": 10`, `"useful_ns": 10, "primary_serial_useful_ns": -3`,
			`processes[0] has negative primary_serial_useful_ns (-3)`},
		{"negative thread max", `"useful_ns": 10`, `"useful_ns": 10, "thread_useful_max_ns": -4`,
			`processes[0] has negative thread_useful_max_ns (-4)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := measure.Read(strings.NewReader(edit(tt.old, tt.new)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	// Both are optional and a valid one reads.
	m, err := measure.Read(strings.NewReader(edit(`"version": 1,`, `"version": 1, "openmp": {"runtime": "x", "ompt": false}, "omp_regions": [`+region+`],`)))
	if err != nil || m.OpenMP.Measured() || len(m.OMPRegions) != 1 || m.OMPRegions[0].UsefulNS != 8 {
		t.Errorf("valid openmp: %v, %+v", err, m)
	}
}

func TestSchemaOpenMP(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "hybrid_2nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []fileEdit{
		{"ompt type", `"ompt": true`, `"ompt": "yes"`, "$.openmp.ompt: is a string, want boolean"},
		{"runtime missing", `"runtime": "LLVM OMP version: 5.0.20140926", `, ``, `$.openmp: misses required key "runtime"`},
		{"max_threads negative", `"max_threads": 4`, `"max_threads": -4`, "$.openmp.max_threads: is -4, below the minimum 0"},
		{"region key missing", `"executions": 400, `, ``, `$.omp_regions[1]: misses required key "executions"`},
		{"region address fraction", `"address": 4199321`, `"address": 4199321.5`, "$.omp_regions[1].address: is the number 4199321.5, want integer"},
		{"region negative", `"limited_parallelism_ns": 100000000`, `"limited_parallelism_ns": -1`, "$.omp_regions[1].limited_parallelism_ns: is -1, below the minimum 0"},
		{"module type", `"module": "/scratch/u42/solver/solver", "address": 4198765`, `"module": 7, "address": 4198765`, "$.omp_regions[0].module: is the number 7, want string"},
		{"thread account type", `"thread_useful_max_ns": 8950000000`, `"thread_useful_max_ns": "8950000000"`, "$.regions[0].processes[0].thread_useful_max_ns: is a string, want integer"},
		{"serial useful negative", `"primary_serial_useful_ns": 320000000`, `"primary_serial_useful_ns": -320000000`, "primary_serial_useful_ns: is -320000000, below the minimum 0"},
	}
	checkEdits(t, base, tests, measure.ValidateSchema)
	// Neither key is required.
	noOMP := bytes.Replace(base, []byte(`"openmp": {"runtime": "LLVM OMP version: 5.0.20140926", "ompt": true, "max_threads": 4},`), nil, 1)
	if bytes.Equal(noOMP, base) {
		t.Fatal("testdata lacks the openmp object")
	}
	if err := measure.ValidateSchema(noOMP); err != nil {
		t.Errorf("file without openmp: %v", err)
	}
}
