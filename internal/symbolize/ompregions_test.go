package symbolize_test

import (
	"os"
	"testing"

	"github.com/popmon/popmon/internal/symbolize"
	"github.com/popmon/popmon/measure"
)

// Issue 33, item 2: a measurement's OpenMP constructs are looked up once,
// after reading, into measure.OMPRegion.Location; a construct already
// looked up is left alone, and one without a module says so.
func TestOMPRegions(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	kept := &measure.OMPLocation{Function: "kept"}
	m := &measure.Measurement{OMPRegions: []measure.OMPRegion{
		{Module: self, Address: 1},
		{},
		{Module: self, Address: 1, Location: kept},
	}}
	symbolize.OMPRegions(m)
	want, wantErr := symbolize.New().Lookup(self, 1)
	if l := m.OMPRegions[0].Location; l == nil || l.Function != want.Function || l.File != want.File || (l.Err == nil) != (wantErr == nil) {
		t.Errorf("looked up %+v, want %+v, %v", l, want, wantErr)
	}
	if l := m.OMPRegions[1].Location; l == nil || l.Err == nil || l.Err.Error() != "the measurement names no module" {
		t.Errorf("without a module: %+v", l)
	}
	if m.OMPRegions[2].Location != kept {
		t.Error("a location looked up before was replaced")
	}
	symbolize.OMPRegions(nil) // no panic
}
