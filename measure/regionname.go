package measure

import (
	"fmt"
	"strings"
)

// Region names are case-sensitive everywhere, and no name is special:
// "global" is not "Global", and "all", "ALL" or "Anonymous Region 3" are
// user regions like any other, never aliases of the whole run. Every
// lookup of a region by name (Measurement.Region, pop.Report.Region,
// report.Options.Region, the runs of a comparison, the command line's
// --region flags) goes through NameIndex, so names match the same way
// everywhere; a name a user typed goes through MatchRegion, which
// suggests the names that differ from it only in case. No lookup falls
// back to a case-insensitive match on its own.

// NameIndex returns the index of want among n names (name(i) gives the
// i-th), or -1: the first name equal to want, case-sensitively.
func NameIndex(n int, name func(int) string, want string) int {
	for i := 0; i < n; i++ {
		if name(i) == want {
			return i
		}
	}
	return -1
}

// MatchRegion returns want when it is one of names (exactly: see
// NameIndex). When it is not, the error is a [*RegionError] that suggests
// the names equal to want but for case; where ("in any run") completes
// its message.
func MatchRegion(names []string, want, where string) (string, error) {
	if i := NameIndex(len(names), func(i int) string { return names[i] }, want); i >= 0 {
		return names[i], nil
	}
	e := &RegionError{Want: want, Where: where, Names: names}
	for _, n := range names {
		if strings.EqualFold(n, want) {
			e.Suggest = append(e.Suggest, n)
		}
	}
	return "", e
}

// RegionError says that no region has the name a user gave. Suggest lists
// the names that differ from it only in case.
type RegionError struct {
	// Want is the name asked for.
	Want string
	// Where says where it was looked for ("in any run").
	Where string
	// Names are the region names available.
	Names []string
	// Suggest are the names equal to Want but for case.
	Suggest []string
}

// Error implements error: `no region "global"; did you mean "Global"?
// names are case-sensitive`, or the list of the available names.
func (e *RegionError) Error() string {
	if len(e.Suggest) > 0 {
		return fmt.Sprintf("no region %q; did you mean %s? names are case-sensitive", e.Want, quoted(e.Suggest, " or "))
	}
	where := ""
	if e.Where != "" {
		where = " " + e.Where
	}
	if len(e.Names) == 0 {
		return fmt.Sprintf("no region %q%s: there are no regions", e.Want, where)
	}
	return fmt.Sprintf("no region %q%s: available regions are %s", e.Want, where, quoted(e.Names, ", "))
}

// quoted joins names, each quoted as Go does (%q), with sep.
func quoted(names []string, sep string) string {
	q := make([]string, len(names))
	for i, s := range names {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, sep)
}
