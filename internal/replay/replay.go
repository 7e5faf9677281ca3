// Package replay replays a trace on an ideal network (zero latency,
// infinite bandwidth; Dimemas' semantics as BSC's basicanalysis uses them)
// to split communication efficiency into serialisation and transfer.
package replay

import (
	"errors"

	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/measure"
)

// DefaultEagerLimit is the message size (bytes) from which a send waits
// for its receive, Dimemas' -S 32k as basicanalysis runs it.
const DefaultEagerLimit = 32768

// Options are the replay's semantics.
type Options struct {
	// EagerLimit: messages of at least this many bytes use rendezvous;
	// 0 means DefaultEagerLimit.
	EagerLimit int64
	// NoInitBarrier leaves out the barrier prv2dim adds at the end of
	// MPI_Init.
	NoInitBarrier bool
}

// Result is what the replay found.
type Result struct {
	// RuntimeNS is the replayed runtime, T_ideal.
	RuntimeNS int64
	// UsefulMaxNS is the maximum over ranks of the time outside MPI.
	UsefulMaxNS int64
}

// Run replays tr. A deadlock is an error naming where each blocked rank is.
func Run(tr *trace.Trace, opt Options) (*Result, error) {
	return nil, errors.New("replay: not implemented yet")
}

// Apply replays tr and records the result in m.IdealNetwork.
func Apply(m *measure.Measurement, tr *trace.Trace, opt Options) error {
	_, err := Run(tr, opt)
	return err
}
