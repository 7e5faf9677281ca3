package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/pop"
)

// OverTimeColumns are the efficiencies shown per interval (by metric id,
// with a short heading): the POP tree's top, the MPI branch and, when
// measured, the OpenMP one.
var OverTimeColumns = []struct{ ID, Head string }{
	{"parallel_efficiency", "PE"},
	{"mpi_parallel_efficiency", "MPI PE"},
	{"mpi_communication_efficiency", "CommE"},
	{"mpi_load_balance", "LB"},
	{"mpi_load_balance_in", "LB in"},
	{"mpi_load_balance_out", "LB out"},
	{"omp_parallel_efficiency", "OMP PE"},
}

// RenderOverTime writes region's intervals (pop.OverTime) as a text table (one row per
// interval, a column per efficiency any interval has) or as CSV.
func RenderOverTime(w io.Writer, format, region string, ivs []pop.Interval, intervalNS int64) error {
	var cols []int
	for i, col := range OverTimeColumns {
		for _, iv := range ivs {
			if _, ok := iv.Values[col.ID]; ok {
				cols = append(cols, i)
				break
			}
		}
	}
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		head := []string{"region", "start_s", "elapsed_s"}
		for _, c := range cols {
			head = append(head, OverTimeColumns[c].ID)
		}
		cw.Write(head)
		for _, iv := range ivs {
			row := []string{safetext.CSVCell(region), strconv.FormatFloat(iv.StartS, 'f', 3, 64), strconv.FormatFloat(iv.ElapsedS, 'f', 3, 64)}
			for _, c := range cols {
				if v, ok := iv.Values[OverTimeColumns[c].ID]; ok {
					row = append(row, strconv.FormatFloat(v, 'f', 4, 64))
				} else {
					row = append(row, "")
				}
			}
			cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	case "text":
		b := bufio.NewWriter(w)
		fmt.Fprintf(b, "### %s over time (intervals of %s)\n", safetext.Text(region), units.Seconds(float64(intervalNS)/1e9))
		fmt.Fprintf(b, "%9s %9s", "start", "elapsed")
		for _, c := range cols {
			fmt.Fprintf(b, " %7s", OverTimeColumns[c].Head)
		}
		fmt.Fprintln(b, "  PE")
		for _, iv := range ivs {
			fmt.Fprintf(b, "%8.2fs %8.2fs", iv.StartS, iv.ElapsedS)
			for _, c := range cols {
				if v, ok := iv.Values[OverTimeColumns[c].ID]; ok {
					fmt.Fprintf(b, " %7.2f", v)
				} else {
					fmt.Fprintf(b, " %7s", "-")
				}
			}
			fmt.Fprintf(b, "  %s\n", bar(iv.Values["parallel_efficiency"], 20))
		}
		return b.Flush()
	}
	return fmt.Errorf("--over-time prints text or csv, not %s", format)
}

// bar draws v (0…1) as a bar of width cells.
func bar(v float64, width int) string {
	n := int(v*float64(width) + 0.5)
	n = min(max(n, 0), width)
	out := make([]rune, width)
	for i := range out {
		out[i] = '·'
		if i < n {
			out[i] = '█'
		}
	}
	return string(out)
}
