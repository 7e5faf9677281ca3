package report

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/internal/symbolize"
	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/pop"
)

// topOMPRegions is how many OpenMP parallel constructs the text report
// lists.
const topOMPRegions = 10

// OMPRegionRow is one OpenMP parallel construct of the overhead table
// (ompP's overhead analysis, POP-METRICS.md §7; docs/openmp-regions.md):
// a measure.OMPRegion with its source location. Times are thread times
// in nanoseconds, summed over processes and executions.
type OMPRegionRow struct {
	// Location is where the construct is: the function that contains
	// the parallel directive and the directive's file and line. Fields
	// are empty (0) when unknown.
	Location symbolize.Location
	// LocationErr says why Location is incomplete; nil when it is not.
	LocationErr error
	// Module and Address are the construct's ELF file and return address
	// (measure.OMPRegion).
	Module  string
	Address uint64

	Executions int64
	Threads    int
	WallNS     int64
	UsefulNS   int64
	// The four overhead categories.
	ImbalanceNS          int64
	SynchronizationNS    int64
	LimitedParallelismNS int64
	ThreadManagementNS   int64
}

// OverheadNS is the sum of the four overhead categories.
func (r *OMPRegionRow) OverheadNS() int64 {
	return ompSatSum(r.ImbalanceNS, r.SynchronizationNS, r.LimitedParallelismNS, r.ThreadManagementNS)
}

// RegionNS is the region time the percentages refer to: useful time plus
// the four overheads, that is all thread time that the measurement
// accounts to the construct (MPI time inside it is not included).
func (r *OMPRegionRow) RegionNS() int64 {
	return ompSatSum(r.UsefulNS, r.OverheadNS())
}

// Percent returns ns as a percentage of RegionNS; ok is false when the
// region has no time.
func (r *OMPRegionRow) Percent(ns int64) (pct float64, ok bool) {
	t := r.RegionNS()
	if t <= 0 {
		return 0, false
	}
	return 100 * float64(ns) / float64(t), true
}

// Where names the construct for people: "main (prog.c:20)" when its
// source is known, else "main (app+0x1a2b)" or "app+0x1a2b" with the
// module's base name ("?" when the measurement names none) and the
// address as measured.
func (r *OMPRegionRow) Where() string {
	if r.Location.File != "" {
		return r.Location.String()
	}
	mod := "?"
	if r.Module != "" {
		mod = filepath.Base(r.Module)
	}
	addr := fmt.Sprintf("%s+%#x", mod, r.Address)
	if r.Location.Function != "" {
		return r.Location.Function + " (" + addr + ")"
	}
	return addr
}

// OMPRegionRows returns one row per OpenMP parallel construct of the run
// (pop.Run.OMPRegions), sorted by total overhead, largest first (then by
// wall time, then by location). Each row has the location its reader
// looked up once (symbolize.OMPRegions; measure.OMPRegion.Location): a
// construct whose module cannot be read or has no debug information has a
// partial or empty Location and the reason in LocationErr. It returns nil
// when run is nil or has no regions.
func OMPRegionRows(run *pop.Run) []OMPRegionRow {
	if run == nil || len(run.OMPRegions) == 0 {
		return nil
	}
	rows := make([]OMPRegionRow, len(run.OMPRegions))
	for i, g := range run.OMPRegions {
		r := OMPRegionRow{
			Module:               g.Module,
			Address:              g.Address,
			Executions:           g.Executions,
			Threads:              g.Threads,
			WallNS:               g.WallNS,
			UsefulNS:             g.UsefulNS,
			ImbalanceNS:          g.ImbalanceNS,
			SynchronizationNS:    g.SynchronizationNS,
			LimitedParallelismNS: g.LimitedParallelismNS,
			ThreadManagementNS:   g.ThreadManagementNS,
		}
		if l := g.Location; l != nil {
			r.Location = symbolize.Location{Function: l.Function, File: l.File, Line: l.Line}
			r.LocationErr = l.Err
		} else {
			r.LocationErr = errNotLookedUp
		}
		rows[i] = r
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := &rows[i], &rows[j]
		if oa, ob := a.OverheadNS(), b.OverheadNS(); oa != ob {
			return oa > ob
		}
		if a.WallNS != b.WallNS {
			return a.WallNS > b.WallNS
		}
		if wa, wb := a.Where(), b.Where(); wa != wb {
			return wa < wb
		}
		if a.Module != b.Module {
			return a.Module < b.Module
		}
		return a.Address < b.Address
	})
	return rows
}

// ShowsOMPRegions reports whether format prints the OpenMP parallel
// constructs with their source locations (text, json, omp-regions-csv),
// which the caller looks up once before rendering (symbolize.OMPRegions).
func ShowsOMPRegions(format string) bool {
	return format == FormatText || format == FormatJSON || format == FormatOMPRegionsCSV
}

// errNotLookedUp is the reason of a row whose construct's location its
// reader did not look up (symbolize.OMPRegions was not called).
var errNotLookedUp = errors.New("the location was not looked up")

// ompSatSum adds v, saturating at the int64 limits.
func ompSatSum(v ...int64) int64 {
	var s int64
	for _, x := range v {
		switch {
		case x > 0 && s > math.MaxInt64-x:
			s = math.MaxInt64
		case x < 0 && s < math.MinInt64-x:
			s = math.MinInt64
		default:
			s += x
		}
	}
	return s
}

// textOMPRegions writes the text report's OpenMP section: the top
// constructs by overhead. It writes nothing for a run without OpenMP
// regions, nor when the OpenMP runtime was not measured: the header's
// "OpenMP:" line says so, and why, once.
func textOMPRegions(b *bufio.Writer, run *pop.Run, top int) {
	writeOMPRegionsText(b, OMPRegionRows(run), top)
}

// writeOMPRegionsText writes the table of the first top rows (all when top
// <= 0), then how many were left out and why locations are missing.
func writeOMPRegionsText(b *bufio.Writer, rows []OMPRegionRow, top int) {
	if len(rows) == 0 {
		return
	}
	shown := rows
	if top > 0 && len(rows) > top {
		shown = rows[:top]
	}
	table := [][]string{{"Region", "Execs", "Threads", "Wall", "Useful", "Imbalance", "Synchronization", "Limited par.", "Thread mgmt", "Overhead"}}
	for i := range shown {
		r := &shown[i]
		cell := func(ns int64) string {
			if ns == 0 {
				return "-"
			}
			if p, ok := r.Percent(ns); ok {
				return fmt.Sprintf("%s %4.1f%%", units.Duration(ns), p)
			}
			return units.Duration(ns)
		}
		table = append(table, []string{
			safetext.Text(r.Where()), strconv.FormatInt(r.Executions, 10), strconv.Itoa(r.Threads), units.Duration(r.WallNS), units.Duration(r.UsefulNS),
			cell(r.ImbalanceNS), cell(r.SynchronizationNS), cell(r.LimitedParallelismNS), cell(r.ThreadManagementNS), cell(r.OverheadNS()),
		})
	}
	b.WriteString("\nOpenMP parallel regions (ompP overheads, largest first; whole run, all processes; % of the region's thread time)\n")
	writeTable(b, table)
	if rest := len(rows) - len(shown); rest > 0 {
		fmt.Fprintf(b, "  (%s)\n", plural(rest, "more region", ""))
	}
	// Why source locations are missing, once per module.
	seen := map[string]bool{}
	for i := range shown {
		r := &shown[i]
		if r.LocationErr == nil || seen[r.Module] {
			continue
		}
		seen[r.Module] = true
		fmt.Fprintf(b, "  No source location for %s: %s\n", safetext.Text(orDefault(r.Module, "(no module)")), safetext.Text(ompLocationReason(r.LocationErr)))
	}
}

// ompLocationReason is the part of a symbolize error that explains it,
// without the "symbolize module+address:" prefix.
func ompLocationReason(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "the file does not exist here (measured on another machine, or moved or deleted since)"
	}
	if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "symbolize ") {
		return inner.Error()
	}
	return err.Error()
}

// ompRegionsJSON returns the value of the JSON report's "omp_regions" key:
// one object per row, in the rows' order. Unknown function, file and line
// are left out, as are the _pct keys of a region without time.
func ompRegionsJSON(rows []OMPRegionRow) []object {
	out := make([]object, 0, len(rows))
	for i := range rows {
		r := &rows[i]
		o := object{}
		if r.Location.Function != "" {
			o = append(o, member{"function", r.Location.Function})
		}
		if r.Location.File != "" {
			o = append(o, member{"file", r.Location.File})
		}
		if r.Location.Line > 0 {
			o = append(o, member{"line", r.Location.Line})
		}
		o = append(o,
			member{"module", r.Module},
			member{"address", r.Address},
			member{"executions", r.Executions},
			member{"threads", r.Threads},
			member{"wall_s", float(ompSeconds(r.WallNS))},
			member{"useful_s", float(ompSeconds(r.UsefulNS))},
		)
		for _, c := range r.categories() {
			o = append(o, member{c.key + "_s", float(ompSeconds(c.ns))})
			if p, ok := r.Percent(c.ns); ok {
				o = append(o, member{c.key + "_pct", float(p)})
			}
		}
		out = append(out, o)
	}
	return out
}

// appendOMPRegionsJSON adds the "omp_regions" key to the JSON report out
// when the run has OpenMP regions.
func appendOMPRegionsJSON(out object, run *pop.Run) object {
	rows := OMPRegionRows(run)
	if len(rows) == 0 {
		return out
	}
	return append(out, member{"omp_regions", ompRegionsJSON(rows)})
}

// ompRegionsCSVHeader is the header of the OpenMP regions CSV table.
var ompRegionsCSVHeader = []string{
	"function", "file", "line", "executions", "threads", "wall_s", "useful_s",
	"imbalance_s", "imbalance_pct", "synchronization_s", "synchronization_pct",
	"limited_parallelism_s", "limited_parallelism_pct", "thread_management_s", "thread_management_pct",
	"overhead_s", "overhead_pct", "module", "address",
}

// OMPRegionsCSV writes the OpenMP regions of the run as a CSV table of its own
// (header ompRegionsCSVHeader, one row per construct, largest overhead
// first; docs/openmp-regions.md). Unknown function, file and line, and the
// percentages of a region without time, are empty fields. The text cells
// (function, file, module) are made safe with safetext.CSVCell; numbers
// are written as they are. The header is written even when m has no
// regions.
func OMPRegionsCSV(w io.Writer, run *pop.Run) error {
	return writeOMPRegionsCSV(w, OMPRegionRows(run))
}

func writeOMPRegionsCSV(w io.Writer, rows []OMPRegionRow) error {
	c := csv.NewWriter(w)
	if err := c.Write(ompRegionsCSVHeader); err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		line := ""
		if r.Location.Line > 0 {
			line = strconv.Itoa(r.Location.Line)
		}
		rec := []string{
			safetext.CSVCell(r.Location.Function), safetext.CSVCell(r.Location.File), line,
			strconv.FormatInt(r.Executions, 10), strconv.Itoa(r.Threads),
			num(ompSeconds(r.WallNS)), num(ompSeconds(r.UsefulNS)),
		}
		for _, cat := range r.categories() {
			pct := ""
			if p, ok := r.Percent(cat.ns); ok {
				pct = num(p)
			}
			rec = append(rec, num(ompSeconds(cat.ns)), pct)
		}
		rec = append(rec, safetext.CSVCell(r.Module), strconv.FormatUint(r.Address, 10))
		if err := c.Write(rec); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}

// ompCategory is one overhead column: its key prefix and time.
type ompCategory struct {
	key string
	ns  int64
}

// categories returns the four overhead categories and their total, in
// column order.
func (r *OMPRegionRow) categories() []ompCategory {
	return []ompCategory{
		{"imbalance", r.ImbalanceNS},
		{"synchronization", r.SynchronizationNS},
		{"limited_parallelism", r.LimitedParallelismNS},
		{"thread_management", r.ThreadManagementNS},
		{"overhead", r.OverheadNS()},
	}
}

// ompSeconds converts nanoseconds to seconds.
func ompSeconds(ns int64) float64 { return float64(ns) / 1e9 }
