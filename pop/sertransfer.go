package pop

import (
	"fmt"
	"strings"

	"github.com/popmon/popmon/measure"
)

// SerTransfer names a definition of serialisation and transfer efficiency
// (docs/metrics.md). Both split communication efficiency using the
// ideal-network replay: T_ideal is the replayed runtime, U_ideal,max the
// largest time outside MPI of a process in the replay, U_max the largest
// non-MPI time measured, T the measured runtime and CommE = U_max/T.
type SerTransfer string

// The definitions.
const (
	// SerTransferBSC is BSC's basicanalysis (modelfactors.py), the default:
	// SerE = U_ideal,max / T_ideal and TransE = CommE / SerE. It reproduces
	// the model-factor tables BSC's tools print.
	SerTransferBSC SerTransfer = "bsc-basicanalysis"
	// SerTransferPOP is the POP Centre of Excellence website's and PyPOP's
	// multiplicative definition: SerE = U_max / T_ideal and TransE =
	// T_ideal / T.
	SerTransferPOP SerTransfer = "pop"
)

// Options are choices of a computation beyond the model.
type Options struct {
	// SerTransfer is the definition of serialisation and transfer
	// efficiency; "" means SerTransferBSC.
	SerTransfer SerTransfer
}

// ParseSerTransfer parses a definition's name ("bsc" is short for
// bsc-basicanalysis).
func ParseSerTransfer(name string) (SerTransfer, error) {
	switch strings.ToLower(name) {
	case "", "bsc", string(SerTransferBSC):
		return SerTransferBSC, nil
	case string(SerTransferPOP):
		return SerTransferPOP, nil
	}
	return "", fmt.Errorf("unknown serialisation/transfer definition %q: use %s (bsc) or %s", name, SerTransferBSC, SerTransferPOP)
}

// Description says how a definition computes the two efficiencies.
func (d SerTransfer) Description() string {
	if d == SerTransferPOP {
		return "SerE = U_max/T_ideal, TransE = T_ideal/T (POP website, PyPOP)"
	}
	return "SerE = U_ideal,max/T_ideal, TransE = CommE/SerE (BSC basicanalysis)"
}

// ReasonReplayGlobal is why a region other than Global has no
// serialisation and transfer efficiency: the replay covers the whole run.
const ReasonReplayGlobal = "the ideal-network replay covers the whole run (region Global) only"

// serTransfer returns serialisation and transfer efficiency of a region
// with measured runtime r, largest non-MPI time uMax and communication
// efficiency commE, from the ideal network's result; ok is false when the
// values cannot be computed (no replay time).
func serTransfer(d SerTransfer, ideal *measure.IdealNetwork, r, uMax, commE float64) (ser, trans float64, ok bool) {
	tIdeal := float64(ideal.RuntimeNS)
	if tIdeal <= 0 || r <= 0 {
		return 0, 0, false
	}
	if d == SerTransferPOP {
		return uMax / tIdeal, tIdeal / r, true
	}
	ser = float64(ideal.UsefulMaxNS) / tIdeal
	if ser <= 0 {
		return 0, 0, false
	}
	return ser, commE / ser, true
}
