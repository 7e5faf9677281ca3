package shimbuild

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The library's layers, lowest first (ARCHITECTURE.md, "The C library"): a
// file may include the headers of its own layer and of those below, and call
// the functions they define; never one of a layer above.
var cLayers = []struct {
	name  string
	files []string // sources and headers; a .c's .h of the same name is in its layer
}{
	{"base", []string{
		"base/clock.c", "base/dlbargs.c", "base/env.c", "base/process.c", "base/threads.c", "base/warn.c",
		// Declarations only: the public API, the generated call table
		// (whose name and kind tables mpi/mpi_wrappers.c defines, see
		// generatedData) and the ABIs of OMPT, CUPTI and rocprofiler.
		"popmon.h", "mpi_calls.h", "ompt_abi.h", "gpu_abi.h", "gpu_rocm_abi.h", "gpu_cbids.h",
	}},
	{"subsystems", []string{
		"accounts.c", "counters.c", "dispatch.c", "intercept.c", "reduce.c",
		"lewi_shm.c", "lewi.c", "drom_shm.c", "drom.c", "barrier.c",
		"live.c", "live_read.c",
		"gpu_mode.c", "gpu_counters.c", "gpu_pool.c", "gpu.c", "gpu_cupti_pm.c", "gpu_cupti.c", "gpu_rocm.c", "openacc.c",
		"gpu_backends.c",
		"regions.c", "ompt.c", "gomp.c", "talp_api.c", "dlb_compat.c",
		"mpi/mpidata.c", "mpi/trace.c",
	}},
	{"output", []string{"output.c", "dlb_output.c"}},
	{"start-up", []string{"core.c"}},
	{"MPI path", []string{"mpi/mpi.c", "mpi/owncost.c", "mpi/lewi_mpi.c"}},
	{"MPI wrappers", []string{"mpi/mpi_wrappers.c"}},
}

// cSublayers orders files inside a layer, lowest first: a file of one
// sublayer includes and calls only its own sublayer's and lower ones' (and
// the lower layers'). The bottom layer, lowest first: the process's state,
// warnings, the environment's values, the clock, DLB's options, the
// threads (its declaration-only headers in no sublayer). The subsystems,
// lowest first: the leaves (where MPI calls go, LeWI's registry and LeWI,
// DROM's registry and DROM), the records (counters), the live file, the
// GPU accounting, the accounts, the event sources (regions, OpenMP), the
// GPU backends, the MPI data (the trace, then the bytes that feed it), the
// queries (TALP's, the live file's reader, DLB's API) and the finalize
// reductions. What a file needs from above is handed down to it
// (ARCHITECTURE.md, the upcall rule): the region and OpenMP events reach
// the trace through the observers it registers, and the live file gets the
// layouts of the records it holds from their owners.
var cSublayers = map[string][]struct {
	name  string
	files []string
}{
	"base": {
		{"process", []string{"base/process.c"}},
		{"warnings", []string{"base/warn.c"}},
		{"environment", []string{"base/env.c"}},
		{"clock", []string{"base/clock.c"}},
		{"DLB options", []string{"base/dlbargs.c"}},
		{"threads", []string{"base/threads.c"}},
	},
	"subsystems": {
		{"MPI routing", []string{"intercept.c", "dispatch.c"}},
		{"LeWI registry", []string{"lewi_shm.c"}},
		{"LeWI", []string{"lewi.c"}},
		{"DROM registry", []string{"drom_shm.c"}},
		{"DROM", []string{"drom.c"}},
		{"node barrier", []string{"barrier.c"}},
		{"records", []string{"counters.c"}},
		{"live", []string{"live.c"}},
		{"GPU modes", []string{"gpu_mode.c"}},
		{"GPU support", []string{"gpu_counters.c", "gpu_pool.c"}},
		{"GPU accounting", []string{"gpu.c"}},
		{"accounts", []string{"accounts.c"}},
		{"regions", []string{"regions.c"}},
		{"OpenMP", []string{"ompt.c", "gomp.c"}},
		{"GPU backend parts", []string{"gpu_cupti_pm.c"}},
		{"GPU backends", []string{"gpu_cupti.c", "gpu_rocm.c", "openacc.c"}},
		{"GPU backend table", []string{"gpu_backends.c"}},
		{"MPI trace", []string{"mpi/trace.c"}},
		{"MPI data", []string{"mpi/mpidata.c"}},
		{"queries", []string{"talp_api.c", "live_read.c", "dlb_compat.c"}},
		{"reductions", []string{"reduce.c"}},
	},
}

// generatedData is the generated file whose data objects (the call
// table's names and kinds, the dispatch slots) every layer may read: they
// are tables, not functions, and mpi_calls.h (base) and dispatch.h declare
// them.
const generatedData = "mpi/mpi_wrappers.c"

// place is a file's layer (index in cLayers) and sublayer (index in its
// layer's cSublayers, -1 for none).
type place struct{ layer, sub int }

// name is the place's name in messages: the sublayer's, else the layer's.
func (p place) name() string {
	if p.sub >= 0 {
		return cSublayers[cLayers[p.layer].name][p.sub].name
	}
	return cLayers[p.layer].name
}

// above reports whether p is above q: a higher layer, or a higher sublayer
// of the same layer (files in no sublayer are not ordered within theirs).
func (p place) above(q place) bool {
	if p.layer != q.layer {
		return p.layer > q.layer
	}
	return p.sub >= 0 && q.sub >= 0 && p.sub > q.sub
}

// layerTable returns each file's place: the sources and headers listed, and
// each listed source's header of the same name.
func layerTable() map[string]place {
	m := map[string]place{}
	add := func(f string, p place) {
		m[f] = p
		if strings.HasSuffix(f, ".c") {
			m[strings.TrimSuffix(f, ".c")+".h"] = p
		}
	}
	for i, l := range cLayers {
		for _, f := range l.files {
			add(f, place{i, -1})
		}
		for j, sl := range cSublayers[l.name] {
			for _, f := range sl.files {
				add(f, place{i, j})
			}
		}
	}
	return m
}

var includeRe = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)

// includeViolations returns the includes of sources (by path) that name a
// header of a higher layer than the including file's, and the library files
// the table does not place.
func includeViolations(sources map[string][]byte, layer map[string]place) []string {
	var bad []string
	for name, b := range sources {
		if !strings.HasSuffix(name, ".c") && !strings.HasSuffix(name, ".h") {
			continue
		}
		from, ok := layer[name]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: in no layer (add it to cLayers in layers_test.go)", name))
			continue
		}
		for _, m := range includeRe.FindAllSubmatch(b, -1) {
			inc := string(m[1])
			// As the compiler finds it: next to the including file, else
			// from shim/ (-I.).
			target := path.Join(path.Dir(name), inc)
			if _, ok := sources[target]; !ok {
				target = path.Clean(inc)
			}
			to, ok := layer[target]
			if !ok {
				if _, lib := sources[target]; lib {
					bad = append(bad, fmt.Sprintf("%s: includes %s, which is in no layer", name, inc))
				}
				continue // a header of the system or of a test stub
			}
			if to.above(from) {
				bad = append(bad, fmt.Sprintf("%s (%s) includes %s (%s)", name, from.name(), inc, to.name()))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// nmSymbols returns an object's global definitions (name to nm type) and
// its undefined references (weak ones included).
func nmSymbols(obj string) (defs map[string]byte, undef []string, err error) {
	out, err := exec.Command("nm", "-P", obj).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("nm %s: %w", obj, err)
	}
	defs = map[string]byte{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || len(f[1]) != 1 {
			continue
		}
		switch t := f[1][0]; t {
		case 'U', 'w', 'v':
			undef = append(undef, f[0])
		default:
			if t >= 'A' && t <= 'Z' { // global
				defs[f[0]] = t
			}
		}
	}
	return defs, undef, sc.Err()
}

// callViolations compiles every source of the library (as the MPI build
// does, with compiler and extra flags) in dir and returns each reference of a file to a
// symbol defined by a file of a higher layer.
func callViolations(t *testing.T, compiler string, extra []string, dir string, sources map[string][]byte, layer map[string]place) []string {
	t.Helper()
	var cfiles []string
	for name := range sources {
		if strings.HasSuffix(name, ".c") {
			cfiles = append(cfiles, name)
		}
	}
	sort.Strings(cfiles)
	type result struct {
		defs  map[string]byte
		undef []string
		err   error
	}
	results := make([]result, len(cfiles))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, name := range cfiles {
		wg.Add(1)
		go func(i int, name string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			obj := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".o")
			args := append([]string{"-std=c11", "-O2", "-fPIC", "-Wall", "-Wextra", "-D_GNU_SOURCE",
				versionDefine(), "-I."}, extra...)
			cmd := exec.Command(compiler, append(args, "-c", name, "-o", obj)...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				results[i].err = fmt.Errorf("%s -c %s: %v\n%s", compiler, name, err, out)
				return
			}
			results[i].defs, results[i].undef, results[i].err = nmSymbols(obj)
		}(i, name)
	}
	wg.Wait()
	owner := map[string]string{}
	for i, r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		for s, typ := range r.defs {
			if cfiles[i] == generatedData && strings.ContainsRune("DBRGS", rune(typ)) {
				owner[s] = "mpi_calls.h" // a generated table: base
				continue
			}
			owner[s] = cfiles[i]
		}
	}
	var bad []string
	calls := map[[2]string][]string{}
	for i, r := range results {
		from, ok := layer[cfiles[i]]
		if !ok {
			from = place{0, -1} // in no layer: includeViolations says so
		}
		for _, s := range r.undef {
			def, ok := owner[s]
			if !ok || mpiName(s) {
				continue // the C library's, MPI's, CUDA's...
			}
			to, ok := layer[def]
			if ok && to.above(from) {
				bad = append(bad, fmt.Sprintf("%s (%s) uses %s of %s (%s)", cfiles[i], from.name(), s, def, to.name()))
			}
			if ok && to == from && from.sub >= 0 && def != cfiles[i] {
				calls[[2]string{cfiles[i], def}] = append(calls[[2]string{cfiles[i], def}], s)
			}
		}
	}
	bad = append(bad, sublayerCycles(calls, layer)...)
	sort.Strings(bad)
	return bad
}

// sublayerCycles returns the call cycles among the files of one sublayer
// (calls: from file, to file of the same sublayer, and the symbols), which
// the order between sublayers cannot catch: each as "cycle in SUBLAYER:
// a.c -> b.c -> a.c".
func sublayerCycles(calls map[[2]string][]string, layer map[string]place) []string {
	next := map[string][]string{}
	for e := range calls {
		next[e[0]] = append(next[e[0]], e[1])
	}
	var bad []string
	seen := map[string]bool{}
	var files []string
	for f := range next {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, start := range files {
		// A path back to start through files after it in order: each
		// cycle once, from its first file.
		var walk func(f string, path []string)
		walk = func(f string, path []string) {
			for _, g := range next[f] {
				if g == start {
					c := strings.Join(append(path, start), " -> ")
					if !seen[c] {
						seen[c] = true
						bad = append(bad, fmt.Sprintf("cycle in %s: %s", layer[start].name(), c))
					}
					continue
				}
				if g < start || strings.Contains(" "+strings.Join(path, " ")+" ", " "+g+" ") {
					continue
				}
				walk(g, append(path[:len(path):len(path)], g))
			}
		}
		walk(start, []string{start})
	}
	return bad
}

// mpiName reports whether symbol s is a name of MPI's API: the library
// defines them (the wrappers, the PMPI_ stubs that jump to the program's MPI
// library) but calls them as MPI's, whichever file defines them.
func mpiName(s string) bool {
	for _, p := range []string{"MPI_", "PMPI_", "mpi_", "pmpi_"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestLayers checks the C library's layers (cLayers): no file includes a
// header of a higher layer, and no function of a lower layer calls (or
// reads the data of) one of a higher layer, by the objects' undefined
// symbols (nm) mapped to the files that define them.
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles C: skipped with -short")
	}
	sources, err := sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	layer := layerTable()
	for _, v := range includeViolations(sources, layer) {
		t.Error(v)
	}
	var compiler string
	for _, cc := range []string{"mpicc", "mpicc.openmpi", "mpicc.mpich"} {
		if p, err := exec.LookPath(cc); err == nil {
			compiler = p
			break
		}
	}
	if compiler == "" {
		t.Skip("no MPI compiler wrapper: calls not checked")
	}
	if _, err := exec.LookPath("nm"); err != nil {
		t.Skip("no nm: calls not checked")
	}
	dir := t.TempDir()
	if err := writeTree(dir, sources); err != nil {
		t.Fatal(err)
	}
	for _, v := range callViolations(t, compiler, nil, dir, sources, layer) {
		t.Error(v)
	}
}

// TestLayersCatch shows that the check fails on an upward include and an
// upward call between layers, the bottom layer's clock.c made to call
// regions.c; between the subsystems' floors, the live file (live.c) made to
// ask the regions for their count again, as it did before the layouts were
// handed down, and the GPU leaf gpu_mode.c made to call the accounting
// layer's popmon_gpu_flush (gpu.c); and on a cycle inside one floor,
// ompt.c made to call gomp.c, which calls it.
func TestLayersCatch(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles C: skipped with -short")
	}
	compiler, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no cc")
	}
	sources, err := sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{}
	for n, b := range sources {
		if !mpiOnly(n) || !strings.HasSuffix(n, ".c") { // a NoMPI build: no MPI needed here
			bad[n] = b
		}
	}
	bad["base/clock.c"] = append(append([]byte{}, sources["base/clock.c"]...),
		[]byte("\n#include \"regions.h\"\nvoid popmon_layers_test_upcall(void);\nvoid popmon_layers_test_upcall(void)\n{\n\tpopmon_regions_lock();\n}\n")...)
	bad["gpu_mode.c"] = append(append([]byte{}, sources["gpu_mode.c"]...),
		[]byte("\n#include \"gpu.h\"\nvoid popmon_layers_test_gpu_upcall(void);\nvoid popmon_layers_test_gpu_upcall(void)\n{\n\tpopmon_gpu_flush();\n}\n")...)
	bad["live.c"] = append(append([]byte{}, sources["live.c"]...),
		[]byte("\n#include \"regions.h\"\nint popmon_layers_test_live_upcall(void);\nint popmon_layers_test_live_upcall(void)\n{\n\treturn popmon_region_count();\n}\n")...)
	bad["ompt.c"] = append(append([]byte{}, sources["ompt.c"]...),
		[]byte("\n#include \"gomp.h\"\nvoid popmon_layers_test_cycle(void);\nvoid popmon_layers_test_cycle(void)\n{\n\tpopmon_gomp_probe();\n}\n")...)
	layer := layerTable()
	want := map[string]bool{
		"base/clock.c (clock) includes regions.h (regions)":      false,
		"gpu_mode.c (GPU modes) includes gpu.h (GPU accounting)": false,
		"live.c (live) includes regions.h (regions)":             false,
	}
	for _, v := range includeViolations(bad, layer) {
		if _, ok := want[v]; ok {
			want[v] = true
		} else {
			t.Errorf("unexpected: %s", v)
		}
	}
	dir := t.TempDir()
	if err := writeTree(dir, bad); err != nil {
		t.Fatal(err)
	}
	want["base/clock.c (clock) uses popmon_regions_lock of regions.c (regions)"] = false
	want["gpu_mode.c (GPU modes) uses popmon_gpu_flush of gpu.c (GPU accounting)"] = false
	want["live.c (live) uses popmon_region_count of regions.c (regions)"] = false
	want["cycle in OpenMP: gomp.c -> ompt.c -> gomp.c"] = false
	for _, c := range callViolations(t, compiler, []string{"-DPOPMON_NO_MPI"}, dir, bad, layer) {
		if _, ok := want[c]; ok {
			want[c] = true
		} else {
			t.Errorf("unexpected: %s", c)
		}
	}
	for v, caught := range want {
		if !caught {
			t.Errorf("not caught: %s", v)
		}
	}
}
