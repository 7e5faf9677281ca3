package measure_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// incompleteFile is a version-2 measurement of 2 of a job's 4 processes, as
// libpopmon writes it when the library did not reach every rank.
const incompleteFile = `{"format": "popmon-measurement", "version": 2,
 "tool": {"name": "popmon", "version": "0.1.0"}, "timestamp": "2026-11-23T10:00:00Z",
 "command": ["./app"], "cwd": "/", "launcher": {"kind": "openmpi"},
 "mpi": {"library": "Open MPI v4.1.4", "standard": "3.1", "thread_level": "single"},
 "incomplete": {"processes": 4, "measured": 2, "missing_ranks": "1,3",
   "reason": "the measurement library did not reach ranks 1,3 of 4: their processes ran without LD_PRELOAD"},
 "global_alignment": {"start_skew_ns": 2000000, "end_skew_ns": 100000},
 "clock": {"source": "tsc"},
 "resources": {"processes": 2, "nodes": 1, "cpus": 2, "gpus": 0, "hardware_counters": false},
 "processes": [
   {"rank": 0, "node": 0, "hostname": "n", "pid": 1, "cpus": 1},
   {"rank": 2, "node": 0, "hostname": "n", "pid": 3, "cpus": 1}],
 "regions": [{"name": "Global", "processes": [
   {"rank": 0, "cpus": 1, "visits": 1, "elapsed_ns": 1000, "useful_ns": 500, "mpi_ns": 500, "mpi_calls": 2},
   {"rank": 2, "cpus": 1, "visits": 1, "elapsed_ns": 1000, "useful_ns": 1000, "mpi_ns": 0, "mpi_calls": 2}]}],
 "mpi_calls": [], "warnings": []}`

func TestIncompleteMeasurement(t *testing.T) {
	if err := measure.ValidateSchema([]byte(incompleteFile)); err != nil {
		t.Fatalf("schema: %v", err)
	}
	m, err := measure.Read(strings.NewReader(incompleteFile))
	if err != nil {
		t.Fatal(err)
	}
	if m.Incomplete == nil || m.Incomplete.MissingRanks != "1,3" || m.Incomplete.Processes != 4 {
		t.Fatalf("incomplete = %+v", m.Incomplete)
	}
	if m.GlobalAlignment == nil || m.GlobalAlignment.StartSkewNS != 2000000 {
		t.Errorf("global_alignment = %+v", m.GlobalAlignment)
	}
	want := "popmon measured 2 of the job's 4 processes: the measurement library did not reach ranks 1,3 of 4"
	if got := m.Refusal(); !strings.HasPrefix(got, want) || !strings.Contains(got, "POP metrics would be wrong") {
		t.Errorf("Refusal() = %q, want it to start with %q", got, want)
	}

	// Written back: still version 2, still incomplete.
	var b bytes.Buffer
	if err := measure.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"version": 2`) || !strings.Contains(b.String(), `"missing_ranks": "1,3"`) {
		t.Errorf("written back:\n%s", b.String())
	}
	m2, err := measure.Read(&b)
	if err != nil || m2.Incomplete == nil {
		t.Fatalf("read back: %v, %+v", err, m2)
	}

	// A version-1 file cannot carry it: a version-1 reader would take it
	// for complete.
	v1 := strings.Replace(incompleteFile, `"version": 2`, `"version": 1`, 1)
	if _, err := measure.Read(strings.NewReader(v1)); err == nil || !strings.Contains(err.Error(), "incomplete needs version 2") {
		t.Errorf("version 1 with incomplete: error %v", err)
	}
	if err := measure.ValidateSchema([]byte(strings.Replace(incompleteFile, `"version": 2`, `"version": 5`, 1))); err == nil {
		t.Error("schema accepted version 5")
	}

	// A complete measurement is written as version 1.
	m.Incomplete = nil
	m.Version = 0
	b.Reset()
	if err := measure.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"version": 1`) {
		t.Errorf("complete measurement not version 1:\n%s", b.String()[:200])
	}
	if m.Refusal() != "" {
		t.Errorf("complete measurement refused: %q", m.Refusal())
	}
}

func TestInterceptionRefusal(t *testing.T) {
	m, err := measure.Read(strings.NewReader(strings.Replace(strings.Replace(incompleteFile,
		`"incomplete": {"processes": 4, "measured": 2, "missing_ranks": "1,3",
   "reason": "the measurement library did not reach ranks 1,3 of 4: their processes ran without LD_PRELOAD"},`,
		`"interception": {"complete": false, "processes": 2, "reason": "./app defines MPI_Send itself (its own PMPI wrappers): those calls do not reach popmon"},`, 1),
		`"version": 2`, `"version": 1`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Refusal()
	if !strings.HasPrefix(got, "the program's MPI calls did not all reach popmon: ./app defines MPI_Send itself") {
		t.Errorf("Refusal() = %q", got)
	}
}
