package report

import (
	"bufio"
	"fmt"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/pop"
)

// textSerTransfer writes which definition of serialisation and transfer
// efficiency a report printed, and the replay they come from.
func textSerTransfer(b *bufio.Writer, rep *pop.Report) {
	if rep.SerTransfer == "" || rep.Run == nil || rep.Run.IdealNetwork == nil {
		return
	}
	in := rep.Run.IdealNetwork
	fmt.Fprintf(b, "\nSerialisation and transfer: definition %s: %s.\n", rep.SerTransfer, rep.SerTransfer.Description())
	fmt.Fprintf(b, "Ideal network (%s): T_ideal %.6f s, U_ideal,max %.6f s, eager limit %d bytes.\n",
		safetext.Text(in.Method), float64(in.RuntimeNS)/1e9, float64(in.UsefulMaxNS)/1e9, in.EagerLimit)
}

// appendSerTransferJSON adds the definition of serialisation and transfer
// efficiency and the replay's values to a report object.
func appendSerTransferJSON(o object, rep *pop.Report) object {
	if rep.SerTransfer == "" || rep.Run == nil || rep.Run.IdealNetwork == nil {
		return o
	}
	in := rep.Run.IdealNetwork
	return append(o, member{"ser_transfer", object{
		{"definition", string(rep.SerTransfer)},
		{"formula", rep.SerTransfer.Description()},
		{"ideal_runtime_s", float(float64(in.RuntimeNS) / 1e9)},
		{"ideal_useful_max_s", float(float64(in.UsefulMaxNS) / 1e9)},
		{"eager_limit", in.EagerLimit},
		{"method", in.Method},
	}})
}
