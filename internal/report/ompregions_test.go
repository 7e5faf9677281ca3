package report

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// ompMeasurement is a hand-written measurement with OpenMP regions in
// modules that do not exist, so that every location falls back to
// module+address.
func ompMeasurement() *measure.Measurement {
	return &measure.Measurement{
		OpenMP: &measure.OpenMP{Runtime: "LLVM OMP version: 5.0.20140926", OMPT: true, MaxThreads: 4},
		OMPRegions: []measure.OMPRegion{
			{Module: "/nonexistent/lib/libsolver.so", Address: 0x4f10, Executions: 2000, Threads: 4,
				WallNS: 1_000_000_000, UsefulNS: 3_600_000_000, ImbalanceNS: 200_000_000, SynchronizationNS: 100_000_000,
				LimitedParallelismNS: 0, ThreadManagementNS: 100_000_000},
			{Module: "/nonexistent/bin/jacobi", Address: 0x1a2b, Executions: 100, Threads: 4,
				WallNS: 2_000_000_000, UsefulNS: 6_000_000_000, ImbalanceNS: 1_200_000_000, SynchronizationNS: 300_000_000,
				LimitedParallelismNS: 400_000_000, ThreadManagementNS: 100_000_000},
			{Module: "/nonexistent/bin/jacobi", Address: 0x1c00, Executions: 1, Threads: 2,
				WallNS: 0, UsefulNS: 0},
			{Module: "", Address: 0x99, Executions: 10, Threads: 4,
				WallNS: 12_000, UsefulNS: 40_000, ThreadManagementNS: 8_000},
			{Module: "/nonexistent/bin/jacobi", Address: 0x2000, Executions: 5, Threads: 3,
				WallNS: 30_000_000, UsefulNS: 60_000_000, ImbalanceNS: 10_000_000, LimitedParallelismNS: 20_000_000},
		},
	}
}

// ompGolden compares got with testdata/name.golden; the package's -update
// flag rewrites the file.
func ompGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -run OMPRegion -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./internal/report -run OMPRegion -update rewrites it after review)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

func ompText(m *measure.Measurement, top int) string {
	var buf bytes.Buffer
	b := bufio.NewWriter(&buf)
	if top == topOMPRegions {
		textOMPRegions(b, runOf(m), top)
	} else {
		writeOMPRegionsText(b, OMPRegionRows(runOf(m)), top)
	}
	b.Flush()
	return buf.String()
}

func TestOMPRegionGolden(t *testing.T) {
	m := ompMeasurement()
	ompGolden(t, "ompregions.txt", ompText(m, topOMPRegions))
	ompGolden(t, "ompregions_top3.txt", ompText(m, 3))

	var js bytes.Buffer
	if err := writeIndented(&js, appendOMPRegionsJSON(object{{"format", JSONFormat}}, runOf(m))); err != nil {
		t.Fatal(err)
	}
	ompGolden(t, "ompregions.json", js.String())

	var c bytes.Buffer
	if err := OMPRegionsCSV(&c, runOf(m)); err != nil {
		t.Fatal(err)
	}
	ompGolden(t, "ompregions.csv", c.String())
}

func TestOMPRegionRows(t *testing.T) {
	if OMPRegionRows(nil) != nil || OMPRegionRows(runOf(&measure.Measurement{})) != nil {
		t.Error("rows of nothing")
	}
	rows := OMPRegionRows(runOf(ompMeasurement()))
	var order []string
	for i := range rows {
		r := &rows[i]
		order = append(order, r.Where())
		if r.LocationErr == nil {
			t.Errorf("%s: no location error for a missing module", r.Where())
		}
		if r.Module != "" && !errors.Is(r.LocationErr, os.ErrNotExist) {
			t.Errorf("%s: location error %v, want a missing file", r.Where(), r.LocationErr)
		}
		if i > 0 && rows[i-1].OverheadNS() < r.OverheadNS() {
			t.Errorf("rows not sorted by overhead: %v", order)
		}
		// Useful time and the four overheads make up the region time.
		if r.RegionNS() == 0 {
			if _, ok := r.Percent(r.OverheadNS()); ok {
				t.Errorf("%s: percentage of a region without time", r.Where())
			}
			continue
		}
		sum := 0.0
		for _, ns := range []int64{r.UsefulNS, r.ImbalanceNS, r.SynchronizationNS, r.LimitedParallelismNS, r.ThreadManagementNS} {
			p, _ := r.Percent(ns)
			sum += p
		}
		if math.Abs(sum-100) > 1e-9 {
			t.Errorf("%s: percentages add up to %v", r.Where(), sum)
		}
	}
	want := []string{"jacobi+0x1a2b", "libsolver.so+0x4f10", "jacobi+0x2000", "?+0x99", "jacobi+0x1c00"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("order %v, want %v", order, want)
	}
	r := rows[0]
	if r.OverheadNS() != 2_000_000_000 || r.RegionNS() != 8_000_000_000 {
		t.Errorf("overhead %d region %d", r.OverheadNS(), r.RegionNS())
	}
	if p, ok := r.Percent(r.ImbalanceNS); !ok || p != 15 {
		t.Errorf("imbalance %v%%", p)
	}
	big := OMPRegionRow{ImbalanceNS: math.MaxInt64, SynchronizationNS: math.MaxInt64}
	if big.OverheadNS() != math.MaxInt64 || big.RegionNS() != math.MaxInt64 {
		t.Errorf("overflow: %d", big.OverheadNS())
	}
}

func TestOMPRegionNotMeasured(t *testing.T) {
	// Not measured (the header says so and why), no OpenMP, or measured
	// without regions: nothing.
	gomp := &measure.OpenMP{Runtime: "GNU libgomp", Reason: "GNU libgomp has no OMPT: run with popmon run --openmp=libomp"}
	for _, m := range []*measure.Measurement{{OpenMP: gomp}, nil, {}, {OpenMP: &measure.OpenMP{OMPT: true}}} {
		if got := ompText(m, topOMPRegions); got != "" {
			t.Errorf("%+v: %q", m, got)
		}
		if out := appendOMPRegionsJSON(object{}, runOf(m)); len(out) != 0 {
			t.Errorf("%+v: json %v", m, out)
		}
	}
	var c bytes.Buffer
	if err := OMPRegionsCSV(&c, nil); err != nil || c.String() != strings.Join(ompRegionsCSVHeader, ",")+"\n" {
		t.Errorf("csv without regions: %q, %v", c.String(), err)
	}
}

func TestOMPRegionJSONAndCSVShape(t *testing.T) {
	m := ompMeasurement()
	var js bytes.Buffer
	if err := writeIndented(&js, appendOMPRegionsJSON(object{}, runOf(m))); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OMPRegions []map[string]any `json:"omp_regions"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.OMPRegions) != len(m.OMPRegions) {
		t.Fatalf("%d regions in JSON", len(doc.OMPRegions))
	}
	first := doc.OMPRegions[0]
	for _, k := range []string{"module", "address", "executions", "threads", "wall_s", "useful_s", "imbalance_s", "imbalance_pct",
		"synchronization_s", "synchronization_pct", "limited_parallelism_s", "limited_parallelism_pct",
		"thread_management_s", "thread_management_pct", "overhead_s", "overhead_pct"} {
		if _, ok := first[k]; !ok {
			t.Errorf("JSON region lacks %q: %v", k, first)
		}
	}
	if first["imbalance_pct"] != 15.0 || first["address"] != float64(0x1a2b) {
		t.Errorf("JSON region %v", first)
	}

	var c bytes.Buffer
	if err := OMPRegionsCSV(&c, runOf(m)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.Join(rows[0], ","), "function,file,line,executions,threads,wall_s,useful_s,imbalance_s,imbalance_pct,") {
		t.Errorf("header %v", rows[0])
	}
	if len(rows) != 1+len(m.OMPRegions) {
		t.Errorf("%d CSV rows", len(rows))
	}
}

func TestOMPRegionWriteErrors(t *testing.T) {
	if err := OMPRegionsCSV(ompFailWriter{}, runOf(ompMeasurement())); err == nil {
		t.Error("no error from a failing writer")
	}
}

type ompFailWriter struct{}

func (ompFailWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestOMPRegionRealModule looks up a region in an executable built at test
// time: the location is the function's source, not the address.
func TestOMPRegionRealModule(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "kernel.c")
	code := "int kernel(int n) {\n\tint s = 0;\n\tfor (int i = 0; i < n; i++)\n\t\ts += i * i;\n\treturn s;\n}\n\nint main(void) { return kernel(3) == 5 ? 0 : 1; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "kernel")
	if out, err := exec.Command(cc, "-g", "-O0", src, "-o", exe).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var kernel elf.Symbol
	for _, y := range syms {
		if y.Name == "kernel" {
			kernel = y
		}
	}
	m := &measure.Measurement{
		OpenMP: &measure.OpenMP{OMPT: true},
		OMPRegions: []measure.OMPRegion{{Module: exe, Address: kernel.Value + 1, Executions: 1, Threads: 2,
			WallNS: 1000, UsefulNS: 1500, ImbalanceNS: 500}},
	}
	rows := OMPRegionRows(runOf(m))
	r := rows[0]
	if r.LocationErr != nil || r.Location.Function != "kernel" || r.Location.File != src || r.Location.Line != 1 {
		t.Fatalf("location %+v, %v; want kernel at %s:1", r.Location, r.LocationErr, src)
	}
	if got := r.Where(); got != "kernel (kernel.c:1)" {
		t.Errorf("Where = %q", got)
	}
	txt := ompText(m, topOMPRegions)
	if !strings.Contains(txt, "kernel (kernel.c:1)") || strings.Contains(txt, "No source location") {
		t.Errorf("text:\n%s", txt)
	}
	var c bytes.Buffer
	if err := OMPRegionsCSV(&c, runOf(m)); err != nil || !strings.Contains(c.String(), "kernel,"+src+",1,1,2,") {
		t.Errorf("csv: %v\n%s", err, c.String())
	}
}
