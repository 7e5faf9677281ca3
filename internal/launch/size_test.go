package launch

import (
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/fault"
)

// TestParseSize: the sizes libpopmon takes (shim/base/env.c), and nothing
// else.
func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		bad  bool
	}{
		{"4096", 4096, false}, {"64m", 64 << 20, false}, {"64M", 64 << 20, false}, {"1g", 1 << 30, false},
		{"512KiB", 512 << 10, false}, {"2MB", 2 << 20, false}, {"100b", 100, false},
		{"", 0, true}, {"m", 0, true}, {"-1m", 0, true}, {"64q", 0, true}, {"64 m", 0, true}, {"1.5g", 0, true}, {"64mm", 0, true},
	} {
		got, err := ParseSize(c.in)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (bad %v)", c.in, got, err, c.want, c.bad)
		}
	}
	if v, err := ParseSize("99999999999999999999g"); err != nil || v < 1<<62 {
		t.Errorf("a huge size: %d, %v; want larger than any limit", v, err)
	}
}

// TestSizeOptionsBounded: --trace-buffer and --max-process-records are
// refused beyond what the machine holds, with a usage error that says the
// value, the limit and why.
func TestSizeOptionsBounded(t *testing.T) {
	mem := MemTotal()
	if mem == 0 {
		t.Skip("no /proc/meminfo")
	}
	for _, c := range []struct {
		name string
		err  error
		want string // "" accepted
	}{
		{"default", CheckTraceBuffer(""), ""},
		{"100m", CheckTraceBuffer("100m"), ""},
		{"100g", CheckTraceBuffer("100000g"), "--trace-buffer 100000g: more than "},
		{"memory", CheckTraceBuffer("64g"), "--trace-buffer 64g: more than "},
		{"tiny", CheckTraceBuffer("10"), "below the smallest, 1k"},
		{"garbage", CheckTraceBuffer("lots"), `--trace-buffer "lots": not a size`},
		{"records", CheckProcessRecords("5000"), ""},
		{"records huge", CheckProcessRecords("99999999"), "--max-process-records 99999999: more than 1048576"},
		{"records negative", CheckProcessRecords("-1"), "want a number of processes"},
	} {
		if mem/4 >= 64<<30 && c.name == "memory" {
			continue // a machine with 256 GiB takes it
		}
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("%s: %v", c.name, c.err)
		case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		case c.want != "":
			if k, _ := fault.KindOf(c.err); k != fault.Usage {
				t.Errorf("%s: kind %v, want a usage error", c.name, k)
			}
		}
	}
}
