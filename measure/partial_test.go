package measure_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// partialFile is a version-3 measurement assembled after rank 1 aborted.
var partialFile = strings.Replace(strings.Replace(strings.Replace(incompleteFile, `"version": 2`, `"version": 3`, 1),
	`"incomplete": {"processes": 4, "measured": 2, "missing_ranks": "1,3",
   "reason": "the measurement library did not reach ranks 1,3 of 4: their processes ran without LD_PRELOAD"},`,
	`"partial": {"reason": "aborted", "detail": "rank 2 called MPI_Abort(7) first", "cut_ns": 1000,
   "ranks": 4, "included": 2, "missing_ranks": "1,3", "assembled_by": "run",
   "ends": [{"rank": 0, "end": "killed", "valid_until_ns": 1000}, {"rank": 2, "end": "MPI_Abort(7)", "valid_until_ns": 990}]},`, 1),
	`"global_alignment": {"start_skew_ns": 2000000, "end_skew_ns": 100000},`, "", 1)

func TestPartialMeasurement(t *testing.T) {
	if err := measure.ValidateSchema([]byte(partialFile)); err != nil {
		t.Fatalf("schema: %v", err)
	}
	m, err := measure.Read(strings.NewReader(partialFile))
	if err != nil {
		t.Fatal(err)
	}
	p := m.Partial
	if p == nil || p.Reason != measure.PartialAborted || p.Included != 2 || len(p.Ends) != 2 || p.Ends[1].End != "MPI_Abort(7)" {
		t.Fatalf("partial = %+v", p)
	}
	want := "partial measurement: rank 2 called MPI_Abort(7) first; measured up to 0.00 s after MPI_Init; 2 of 4 ranks (no data from ranks 1,3)"
	if got := p.Sentence(); got != want {
		t.Errorf("Sentence() = %q, want %q", got, want)
	}
	// Written back as version 3 without being told.
	m.Version = 0
	var b bytes.Buffer
	if err := measure.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"version": 3`) || !strings.Contains(b.String(), `"assembled_by": "run"`) {
		t.Errorf("written back:\n%s", b.String())
	}
	// An older version cannot carry it, and an older reader refuses it.
	v2 := strings.Replace(partialFile, `"version": 3`, `"version": 2`, 1)
	if _, err := measure.Read(strings.NewReader(v2)); err == nil || !strings.Contains(err.Error(), "partial needs version 3") {
		t.Errorf("version 2 with partial: error %v", err)
	}
	bad := strings.Replace(partialFile, `"included": 2`, `"included": 5`, 1)
	if _, err := measure.Read(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "5 included of 4 ranks") {
		t.Errorf("5 of 4 included: error %v", err)
	}
}
