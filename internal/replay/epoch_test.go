package replay

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/trace"
)

// epochDir holds the EPOCH Extrae traces and BSC's modelfactors.csv for
// them (internal/paraver/testdata, from shared/data/pypop).
const epochDir = "../paraver/testdata"

var (
	epochMu     sync.Mutex
	epochTraces = map[int]*trace.Trace{}
)

// epoch returns the trace of the EPOCH run of p processes (read once),
// skipping the test when the shared data is not there.
func epoch(t testing.TB, p int) *trace.Trace {
	t.Helper()
	epochMu.Lock()
	defer epochMu.Unlock()
	if tr := epochTraces[p]; tr != nil {
		return tr
	}
	path := filepath.Join(epochDir, fmt.Sprintf("epoch_%dproc.prv.gz", p))
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		t.Skipf("EPOCH traces not present at %s", epochDir)
	}
	tr, err := paraver.ReadTrace(path, paraver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	epochTraces[p] = tr
	return tr
}

// us converts ns to µs.
func us(ns int64) float64 { return float64(ns) / 1e3 }

// TestEPOCHOracle replays the EPOCH traces and compares with
// modelfactors.csv (BSC's basicanalysis with Dimemas): #Runtime (ideal)
// and #Useful duration (ideal, max) within 0.01 µs (the table's rounding).
func TestEPOCHOracle(t *testing.T) {
	for _, tc := range []struct {
		p              int
		tIdeal, uIdeal float64 // µs
	}{
		{1, 21884758.97, 21884758.97},
		{2, 11504370.09, 11486234.50},
		{4, 6051059.08, 6002862.00},
		{8, 3486349.43, 3426454.46},
		{16, 2310335.96, 2263040.22},
	} {
		t.Run(fmt.Sprint(tc.p), func(t *testing.T) {
			res, err := Run(epoch(t, tc.p), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := us(res.RuntimeNS) - tc.tIdeal; math.Abs(d) > 0.01 {
				t.Errorf("T_ideal = %.3f µs, want %.2f (diff %.3f)", us(res.RuntimeNS), tc.tIdeal, d)
			}
			if d := us(res.UsefulMaxNS) - tc.uIdeal; math.Abs(d) > 0.01 {
				t.Errorf("U_ideal,max = %.3f µs, want %.2f (diff %.3f)", us(res.UsefulMaxNS), tc.uIdeal, d)
			}
			if !res.InitBarrier || res.EagerLimit != DefaultEagerLimit {
				t.Errorf("semantics %+v, want the Init barrier and the default eager limit", res)
			}
		})
	}
}

// TestEPOCHSemantics pins the semantics that change the result (research
// note §2.3): without the MPI_Init barrier, with every message eager, and
// with MPI_Sendrecv's send before its receive (a deadlock, not a hang).
func TestEPOCHSemantics(t *testing.T) {
	res, err := Run(epoch(t, 16), Options{NoInitBarrier: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := us(res.RuntimeNS) - 2310163.11; math.Abs(d) > 0.01 || res.InitBarrier {
		t.Errorf("without the Init barrier: T_ideal(16) = %.3f µs, want 2310163.11 (%+v)", us(res.RuntimeNS), res)
	}
	res, err = Run(epoch(t, 8), Options{EagerLimit: math.MaxInt64})
	if err != nil {
		t.Fatal(err)
	}
	if d := us(res.RuntimeNS) - 3484603.90; math.Abs(d) > 0.01 {
		t.Errorf("all eager: T_ideal(8) = %.3f µs, want 3484603.90", us(res.RuntimeNS))
	}
	_, err = Run(epoch(t, 2), Options{sendFirst: true})
	if err == nil || !strings.Contains(err.Error(), "deadlock") || !strings.Contains(err.Error(), "rank 0 in MPI_Sendrecv") ||
		!strings.Contains(err.Error(), "rank 1 in MPI_Sendrecv") || !strings.Contains(err.Error(), "to post the receive of its 41360-byte message") {
		t.Errorf("send before receive: got %v, want a deadlock naming both ranks' MPI_Sendrecv", err)
	}
}

// BenchmarkReplayEPOCH16 measures the replay of the 16-process trace
// (the target: under 0.5 s).
func BenchmarkReplayEPOCH16(b *testing.B) {
	tr := epoch(b, 16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(tr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadAndReplayEPOCH16 measures reading the 16-process trace and
// replaying it, the work `popmon import` adds.
func BenchmarkReadAndReplayEPOCH16(b *testing.B) {
	epoch(b, 16) // skip without the data
	path := filepath.Join(epochDir, "epoch_16proc.prv.gz")
	for i := 0; i < b.N; i++ {
		tr, err := paraver.ReadTrace(path, paraver.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Run(tr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
