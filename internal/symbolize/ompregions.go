package symbolize

import (
	"errors"

	"github.com/popmon/popmon/measure"
)

// shared is the process's one Symbolizer: every measurement a command
// reads, and every sample of a live view, looks its addresses up in it, so
// that each module is read once and each address looked up once.
var shared = New()

// OMPRegions looks up the source location of every OpenMP parallel
// construct of m that has none yet (measure.OMPRegion.Location), with the
// process's one cached Symbolizer: once after reading, so that renderers
// only print it. A construct whose module is not named, cannot be read or
// has no debug information gets a partial or empty location and the
// reason. A nil m is left alone.
func OMPRegions(m *measure.Measurement) {
	if m == nil {
		return
	}
	for i := range m.OMPRegions {
		g := &m.OMPRegions[i]
		if g.Location != nil {
			continue
		}
		if g.Module == "" {
			g.Location = &measure.OMPLocation{Err: errors.New("the measurement names no module")}
			continue
		}
		loc, err := shared.Lookup(g.Module, g.Address)
		g.Location = &measure.OMPLocation{Function: loc.Function, File: loc.File, Line: loc.Line, Err: err}
	}
}
