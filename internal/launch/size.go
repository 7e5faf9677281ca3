package launch

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/units"
)

// The size options of a measured job (--trace-buffer, --max-process-records)
// are checked here, before anything runs, against what the machine can
// hold: a typo (100g for 100m) is refused with one line that says the
// value, the limit and why, instead of a rank killed by the OOM killer.
// libpopmon checks the same variables when they are set by hand
// (shim/base/env.c).

const (
	// maxTraceBuffer is the largest trace buffer per thread the library
	// takes (shim/mpi/trace.c), whatever the memory.
	maxTraceBuffer = 64 << 30
	// minTraceBuffer is the smallest (25 records).
	minTraceBuffer = 1 << 10
	// maxProcessRecords bounds --max-process-records: the full form of
	// more processes is one fixed-size record per process per region
	// gathered on rank 0.
	maxProcessRecords = 1 << 20
)

// ParseSize reads a size in bytes as libpopmon does: a number with an
// optional suffix k, m or g (KiB, MiB, GiB: "64m", "1g", "512KiB", "2MB").
func ParseSize(s string) (uint64, error) {
	t := s
	shift := 0
	if i := strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		num, suf := t[:i], t[i:]
		switch strings.ToLower(suf[:1]) {
		case "k":
			shift = 10
		case "m":
			shift = 20
		case "g":
			shift = 30
		}
		if shift > 0 {
			suf = suf[1:]
			suf = strings.TrimPrefix(suf, "i")
		}
		if suf != "" && suf != "B" && suf != "b" {
			return 0, errors.New("not a size: a number of bytes with an optional k, m or g")
		}
		t = num
	}
	if t == "" {
		return 0, errors.New("not a size: a number of bytes with an optional k, m or g")
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil || v > math.MaxUint64>>shift {
		return math.MaxUint64, nil // larger than any limit
	}
	return v << shift, nil
}

// CheckTraceBuffer checks a --trace-buffer value: a size of at least 1 KiB
// and at most a quarter of this machine's memory (every thread of every
// rank gets one, its pages faulted in when it starts tracing) and 64 GiB.
func CheckTraceBuffer(s string) error {
	if s == "" {
		return nil
	}
	v, err := ParseSize(s)
	if err != nil {
		return fault.Usagef("--trace-buffer %q: %v (per thread; default 64m)", s, err)
	}
	if v < minTraceBuffer {
		return fault.Usagef("--trace-buffer %s: below the smallest, 1k (25 records)", s)
	}
	limit, why := uint64(maxTraceBuffer), "the largest the library takes"
	if mem := MemTotal(); mem > 0 && mem/4 < limit {
		limit = mem / 4
		why = fmt.Sprintf("a quarter of this machine's %s of memory: the buffer is per thread of every rank, its pages taken when tracing starts", units.Bytes(mem))
	}
	if v > limit {
		return fault.Usagef("--trace-buffer %s: more than %s (%s); did you mean a smaller unit (k, m)?", s, units.Bytes(limit), why)
	}
	return nil
}

// CheckProcessRecords checks a --max-process-records value: a number of
// processes, 0 to 2^20.
func CheckProcessRecords(s string) error {
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fault.Usagef("--max-process-records %q: want a number of processes (0 or more)", s)
	}
	if n > maxProcessRecords {
		return fault.Usagef("--max-process-records %s: more than %d (one record per process and region gathered on rank 0; above it the summary form holds the same metrics)", s, maxProcessRecords)
	}
	return nil
}

// MemTotal is this machine's memory in bytes (MemTotal of /proc/meminfo;
// 0 when unknown).
func MemTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil || kb > math.MaxUint64>>10 {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
