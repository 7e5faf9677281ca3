package measure_test

import (
	"errors"
	"testing"

	"github.com/popmon/popmon/measure"
)

// TestMatchRegion: the one lookup of a region name a user typed. Names are
// case-sensitive and no name is special; a name that differs only in case
// is never taken, it is suggested.
func TestMatchRegion(t *testing.T) {
	names := []string{"Global", "Anonymous Region 3", "all", "ALL"}
	cases := []struct {
		names     []string
		want      string
		where     string
		got, err  string
		suggested []string
	}{
		{names, "Global", "in any run", "Global", "", nil},
		{names, "all", "in any run", "all", "", nil},
		{names, "ALL", "in any run", "ALL", "", nil},
		{names, "Anonymous Region 3", "in any run", "Anonymous Region 3", "", nil},
		{names, "global", "in any run", "", `no region "global"; did you mean "Global"? names are case-sensitive`, []string{"Global"}},
		{names, "All", "in any run", "", `no region "All"; did you mean "all" or "ALL"? names are case-sensitive`, []string{"all", "ALL"}},
		{names, "anonymous region 3", "in any run", "", `no region "anonymous region 3"; did you mean "Anonymous Region 3"? names are case-sensitive`, []string{"Anonymous Region 3"}},
		{names, "solve", "in any run", "", `no region "solve" in any run: available regions are "Global", "Anonymous Region 3", "all", "ALL"`, nil},
		{names, "solve", "", "", `no region "solve": available regions are "Global", "Anonymous Region 3", "all", "ALL"`, nil},
		{nil, "x", "", "", `no region "x": there are no regions`, nil},
		{nil, "x", "in a.json", "", `no region "x" in a.json: there are no regions`, nil},
	}
	for _, c := range cases {
		got, err := measure.MatchRegion(c.names, c.want, c.where)
		msg := ""
		if err != nil {
			msg = err.Error()
			var re *measure.RegionError
			if !errors.As(err, &re) {
				t.Errorf("%q: error %T", c.want, err)
			} else if len(re.Suggest) != len(c.suggested) {
				t.Errorf("%q: suggests %q, want %q", c.want, re.Suggest, c.suggested)
			}
		}
		if got != c.got || msg != c.err {
			t.Errorf("%q: %q, %q; want %q, %q", c.want, got, msg, c.got, c.err)
		}
	}
}

// TestNameIndex: the first name equal to want, case-sensitively.
func TestNameIndex(t *testing.T) {
	names := []string{"Global", "solve", "Solve", "solve", ""}
	for _, c := range []struct {
		want string
		i    int
	}{
		{"Global", 0}, {"global", -1}, {"solve", 1}, {"Solve", 2}, {"SOLVE", -1}, {"", 4}, {"missing", -1},
	} {
		if got := measure.NameIndex(len(names), func(i int) string { return names[i] }, c.want); got != c.i {
			t.Errorf("NameIndex(%q) = %d, want %d", c.want, got, c.i)
		}
	}
	if got := measure.NameIndex(0, nil, "x"); got != -1 {
		t.Errorf("NameIndex of no names = %d", got)
	}
}
