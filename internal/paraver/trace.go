package paraver

import (
	"errors"

	"github.com/popmon/popmon/internal/trace"
)

// ReadTrace reads the Paraver trace at path (.prv, .prv.gz) into the
// in-memory trace model.
func ReadTrace(path string, opt Options) (*trace.Trace, error) {
	return nil, errors.New("paraver: ReadTrace not implemented yet")
}

// WriteTrace writes tr as prefix.prv, prefix.pcf and prefix.row with
// Extrae's event conventions.
func WriteTrace(prefix string, tr *trace.Trace) error {
	return errors.New("paraver: WriteTrace not implemented yet")
}
