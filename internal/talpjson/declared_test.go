package talpjson_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/talpjson"
)

// allocated returns the bytes and allocations f allocates.
func allocated(f func()) (bytes, allocs uint64) {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc, b.Mallocs - a.Mallocs
}

// unbackedInputs declare far more processes or GPU devices than their
// content holds. Before the check each cost what a real run of that size
// does: 10⁶ process accounts, 1.5 GB and seconds, for a few dozen bytes.
var unbackedInputs = []struct {
	name, data, want string
}{
	{"region ranks, no times", `{"dlbVersion":"3.7.0","Application":{"Global":{"numMpiRanks":1000000}}}`,
		`the file declares 1000000 MPI ranks (numMpiRanks) but its largest region, "Global", holds 0 ns of CPU time`},
	{"resources ranks, 1 ns", `{"resources":{"numMpiRanks":1000000},"Application":{"Global":{"elapsedTime":1,"usefulTime":1}}}`,
		"holds 1 ns of CPU time"},
	{"the largest allowed", `{"Application":{"Global":{"numMpiRanks":1048576,"numCpus":1048576,"elapsedTime":5,"mpiTime":5}}}`,
		"declares 1048576 MPI ranks"},
	{"times short of 1 ns per rank", `{"Application":{"Global":{"numMpiRanks":100000,"elapsedTime":99999,"usefulTime":99999},"x":{}}}`,
		"holds 99999 ns of CPU time (usefulTime + mpiTime + OpenMP and GPU runtime times), less than 1 ns per process"},
	{"GPUs from the resources", `{"resources":{"numGpus":1000000},"Application":{"Global":{"elapsedTime":9,"usefulTime":9,"gpuUsefulTime":1}}}`,
		`the file declares 1000000 GPUs (numGpus) but its largest region, "Global", holds 1 ns of device time`},
	{"GPUs from a region", `{"Application":{"Global":{"elapsedTime":9,"usefulTime":9,"numGpus":1000000,"maxGpuActiveTime":7}}}`,
		"declares 1000000 GPUs"},
}

// TestUnbackedSizeRefused: a file whose declared processes or devices its
// times cannot back is refused, with an error that says so, at a cost
// bounded by the input (not by the declared size).
func TestUnbackedSizeRefused(t *testing.T) {
	for _, c := range unbackedInputs {
		t.Run(c.name, func(t *testing.T) {
			var err error
			bytes, allocs := allocated(func() { _, err = talpjson.Convert([]byte(c.data), "big.json") })
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "the declared size does not match the content") {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
			// A conversion of a 1-rank file allocates about 20 KB in
			// 200 allocations; 10⁶ processes took 1.5 GB in 6·10⁶.
			if bytes > 256<<10 || allocs > 2000 {
				t.Errorf("refusing %d bytes of input allocated %d bytes in %d allocations", len(c.data), bytes, allocs)
			}
		})
	}
}

// TestBackedSizeConverted: the check refuses nothing that DLB writes. Up
// to 64 processes convert whatever the times (a hand-written file), and
// beyond that a run whose times give each process at least 1 ns, however
// unevenly the regions split them (a user region entered by rank 0
// only: DLB's numMpiRanks is the run's ranks in every region), converts
// with every declared process, in summary form beyond 4096 processes.
func TestBackedSizeConverted(t *testing.T) {
	doc := func(ranks int, global, region string) string {
		return fmt.Sprintf(`{"resources":{"numMpiRanks":%d,"numCpus":%d,"numNodes":2},"Application":{"Global":{"numMpiRanks":%[1]d,"numCpus":%[2]d,%s},"io":{"numMpiRanks":%[1]d,"numCpus":%[2]d,%s},"never":{"numMpiRanks":0,"elapsedTime":0}}}`,
			ranks, ranks, global, region)
	}
	for _, c := range []struct {
		name  string
		data  string
		ranks int
	}{
		{"64 ranks without times", `{"Application":{"Global":{"numMpiRanks":64}}}`, 64},
		{"64 GPUs with 1 ns", `{"Application":{"Global":{"numMpiRanks":2,"elapsedTime":5,"usefulTime":10,"numGpus":64,"gpuUsefulTime":1}}}`, 2},
		{"1 ns per rank", doc(5000, `"elapsedTime":1,"usefulTime":5000`, `"elapsedTime":1,"usefulTime":1`), 5000},
		{"a region of rank 0", doc(5000, `"elapsedTime":2000000000,"usefulTime":9000000000000,"mpiTime":1000000000000,"minMpiNormdProc":100000000`, `"elapsedTime":50000,"usefulTime":50000`), 5000},
		{"GPUs", `{"resources":{"numGpus":1000},"Application":{"Global":{"numMpiRanks":1000,"elapsedTime":9,"usefulTime":9000,"gpuUsefulTime":1000}}}`, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := talpjson.Convert([]byte(c.data), "run.json")
			if err != nil {
				t.Fatal(err)
			}
			got, inGlobal := len(m.Processes), len(m.Regions[0].Processes)
			if m.Summarized != nil { // beyond 4096 processes
				got, inGlobal = m.Summarized.Processes, m.Regions[0].Summary.Processes
			}
			if got != c.ranks || inGlobal != c.ranks || m.Resources.Processes != c.ranks {
				t.Errorf("%d processes, %d in Global; want %d", got, inGlobal, c.ranks)
			}
		})
	}
}
