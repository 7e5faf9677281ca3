package talpjson

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/popmon/popmon/measure"
)

// summaryInputs are files whose synthesized processes take many shapes:
// uneven CPUs, several nodes, each MPI tier, worker idle time, counters,
// derived useful times, GPU devices, a region of fewer ranks.
var summaryInputs = []string{
	`{"resources":{"numMpiRanks":7,"numCpus":23,"numNodes":3},"Application":{"Global":{"numMpiRanks":7,"numCpus":23,"elapsedTime":1000003,"usefulTime":20000017,"mpiTime":2000011,"minMpiNormdProc":70001,"minMpiNormdNode":80003,"cycles":77777777,"instructions":99999999},"io":{"numMpiRanks":3,"elapsedTime":5001,"usefulTime":12007,"mpiTime":3001}}}`,
	`{"resources":{"numMpiRanks":10,"numCpus":10,"numNodes":4},"Application":{"Global":{"elapsedTime":1000000,"usefulTime":9000000,"mpiTime":1000000,"minMpiNormdProc":50000,"minMpiNormdNode":90000}}}`,
	`{"resources":{"numMpiRanks":9,"numCpus":9},"Application":{"Global":{"elapsedTime":1000000,"usefulTime":8000000,"mpiTime":1000000,"minMpiNormdProc":60000}}}`,
	`{"resources":{"numMpiRanks":6,"numCpus":24,"numNodes":2},"Application":{"Global":{"elapsedTime":1000000,"usefulTime":18000000,"mpiTime":3000000,"mpiWorkerIdleTime":1000001,"ompSerializationTime":1500000,"ompLoadImbalanceTime":300000,"ompSchedulingTime":100000,"numOmpParallels":600}}}`,
	`{"resources":{"numMpiRanks":5,"numGpus":7},"Application":{"Global":{"elapsedTime":1000000,"usefulTime":4000000,"mpiTime":1000000,"gpuUsefulTime":3000000,"gpuCommunicationTime":700000,"maxGpuUsefulTime":600000,"maxGpuActiveTime":800000,"gpuRuntimeTime":100000,"numGpuRuntimeCalls":77}}}`,
	`{"dlbVersion":"3.5","resources":{"numMpiRanks":11,"numCpus":11,"numNodes":2},"Application":{"MPI Execution":{"elapsedTime":1000000,"usefulTime":9000000,"mpiTime":2000000,"mpiNormdOfMaxUseful":100000,"numMeasurements":11,"numMpiCalls":1234567}}}`,
	`{"resources":{"numMpiRanks":12,"numCpus":12},"Application":{"Global":{"elapsedTime":1000000,"usefulTime":10000000,"mpiTime":2000000}}}`,
}

// TestSummaryFormMatchesFullForm: the summary form a large file gets is
// the summary of the full form (every synthesized process listed), for
// every shape of synthesized processes and every DLB sample.
func TestSummaryFormMatchesFullForm(t *testing.T) {
	inputs := map[string][]byte{}
	for i, s := range summaryInputs {
		inputs[fmt.Sprintf("input %d", i)] = []byte(s)
	}
	files, _ := filepath.Glob("testdata/dlb-3.7/*.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(p)] = data
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			full, _, err := read(data, "run.json")
			if err != nil {
				t.Fatal(err)
			}
			summaryAbove = 0
			sum, _, err := read(data, "run.json")
			summaryAbove = measure.DefaultProcessRecordLimit
			if err != nil {
				t.Fatal(err)
			}
			if full.Summarized != nil || sum.Summarized == nil || sum.Summarized.Processes != full.Resources.Processes || len(sum.Processes) != 0 {
				t.Fatalf("full form summarized %v, summary form %v with %d processes", full.Summarized, sum.Summarized, len(sum.Processes))
			}
			if err := sum.Validate(); err != nil {
				t.Fatal(err)
			}
			want := measure.Summarize(full, measure.DefaultProcessRecordLimit)
			if !reflect.DeepEqual(want.Resources, sum.Resources) {
				t.Errorf("resources %+v, want %+v", sum.Resources, want.Resources)
			}
			for i := range want.Regions {
				w, g := want.Regions[i].Summary, sum.Regions[i].Summary
				if !equalSummary(w, g) {
					t.Errorf("region %q:\n got %+v\nwant %+v", want.Regions[i].Name, *g, *w)
				}
			}
		})
	}
}

// equalSummary compares summaries, the float sums within rounding (the
// summary form multiplies where the full form adds).
func equalSummary(a, b *measure.RegionSummary) bool {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range va.NumField() {
		x, y := va.Field(i), vb.Field(i)
		if x.Kind() == reflect.Float64 {
			if math.Abs(x.Float()-y.Float()) > 1e-9*max(math.Abs(x.Float()), 1) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(x.Interface(), y.Interface()) {
			return false
		}
	}
	return true
}
