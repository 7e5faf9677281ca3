package paraver

import (
	"errors"

	"github.com/popmon/popmon/internal/trace"
)

// WriteTrace writes tr as prefix.prv, prefix.pcf and prefix.row with
// Extrae's event conventions.
func WriteTrace(prefix string, tr *trace.Trace) error {
	return errors.New("paraver: WriteTrace not implemented yet")
}
