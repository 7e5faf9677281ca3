package runs

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/pop"
)

// epochDir holds the EPOCH Extrae traces and BSC's modelfactors.csv for
// them (internal/paraver/testdata, from shared/data/pypop).
const epochDir = "../paraver/testdata"

// TestEPOCHSerTransfer opens the EPOCH traces as every command does (import
// and ideal-network replay in one pass) and compares serialisation and
// transfer efficiency of model pop-additive with modelfactors.csv, within
// 1e-4 % (relative 1e-6), for the default definition; and the pop
// definition at 16 processes with the research note's 97.0846/98.7508.
func TestEPOCHSerTransfer(t *testing.T) {
	for _, tc := range []struct {
		p                int
		ser, trans       float64 // %, bsc-basicanalysis (modelfactors.csv)
		popSer, popTrans float64 // %, pop, 4 decimals (0 = not checked)
	}{
		{1, 100.000000, 99.925583, 0, 0},
		{2, 99.842359, 99.773690, 0, 0},
		{4, 99.203493, 99.436599, 0, 0},
		{8, 98.282015, 99.084296, 0, 0},
		{16, 97.952863, 97.875538, 97.0846, 98.7508},
	} {
		t.Run(fmt.Sprint(tc.p), func(t *testing.T) {
			path := filepath.Join(epochDir, fmt.Sprintf("epoch_%dproc.prv.gz", tc.p))
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				t.Skipf("EPOCH traces not present at %s", epochDir)
			}
			f, err := Open(path, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m := f.Measurement
			if m.IdealNetwork == nil || len(m.Warnings) != 0 {
				t.Fatalf("ideal network %+v, warnings %q", m.IdealNetwork, m.Warnings)
			}
			rep, err := pop.ComputeWith(m, pop.ModelPOPAdditive, pop.Options{})
			if err != nil {
				t.Fatal(err)
			}
			g, _ := rep.Region("Global")
			ser, _ := g.Value(pop.IDSerialisationEfficiency)
			trans, _ := g.Value(pop.IDTransferEfficiency)
			if math.Abs(100*ser/tc.ser-1) > 1e-6 || math.Abs(100*trans/tc.trans-1) > 1e-6 || rep.SerTransfer != pop.SerTransferBSC {
				t.Errorf("SerE %.6f TransE %.6f (%s), want %.6f %.6f", 100*ser, 100*trans, rep.SerTransfer, tc.ser, tc.trans)
			}
			if tc.popSer == 0 {
				return
			}
			rep, err = pop.ComputeWith(m, pop.ModelPOPAdditive, pop.Options{SerTransfer: pop.SerTransferPOP})
			if err != nil {
				t.Fatal(err)
			}
			g, _ = rep.Region("Global")
			ser, _ = g.Value(pop.IDSerialisationEfficiency)
			trans, _ = g.Value(pop.IDTransferEfficiency)
			if math.Abs(100*ser-tc.popSer) > 5e-5 || math.Abs(100*trans-tc.popTrans) > 5e-5 || rep.SerTransfer != pop.SerTransferPOP {
				t.Errorf("pop: SerE %.4f TransE %.4f (%s), want %.4f %.4f", 100*ser, 100*trans, rep.SerTransfer, tc.popSer, tc.popTrans)
			}
		})
	}
}

// TestTraceReplayFails: a trace whose replay deadlocks still opens, with a
// warning that says where, and serialisation and transfer efficiency say
// they are not measured.
func TestTraceReplayFails(t *testing.T) {
	// Two ranks, each in an MPI_Recv (Extrae id 2) that the other's
	// MPI_Send (id 1) serves only after it: a rendezvous deadlock.
	prv := "#Paraver (01/01/2024 at 10:00):100_ns:1(2):1:2(1:1,1:1),1\n" +
		"c:1:1:2:1:2\n" +
		"1:1:1:1:1:0:10:1\n" +
		"2:1:1:1:1:10:50000001:2\n" +
		"1:2:1:2:1:0:10:1\n" +
		"2:2:1:2:1:10:50000001:2\n" +
		"1:1:1:1:1:10:50:3\n" +
		"1:2:1:2:1:10:50:3\n" +
		"2:1:1:1:1:50:50000001:1\n" +
		"2:2:1:2:1:50:50000001:1\n" +
		"3:1:1:1:1:50:50:2:1:2:1:10:50:40000:0\n" +
		"3:2:1:2:1:50:50:1:1:1:1:10:50:40000:0\n" +
		"1:1:1:1:1:50:60:4\n" +
		"1:2:1:2:1:50:60:4\n" +
		"2:1:1:1:1:60:50000001:0\n" +
		"2:2:1:2:1:60:50000001:0\n" +
		"1:1:1:1:1:60:100:1\n" +
		"1:2:1:2:1:60:100:1\n"
	path := filepath.Join(t.TempDir(), "dead.prv")
	if err := os.WriteFile(path, []byte(prv), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := f.Measurement
	if m.IdealNetwork != nil || len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "no ideal-network replay") || !strings.Contains(m.Warnings[0], "deadlock") {
		t.Fatalf("ideal network %+v, warnings %q", m.IdealNetwork, m.Warnings)
	}
	rep, err := pop.Compute(m, pop.ModelPOPAdditive)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := rep.Region("Global")
	if x, ok := g.Metric(pop.IDSerialisationEfficiency); !ok || x.NotMeasured != pop.ReasonIdealNetwork || rep.SerTransfer != "" {
		t.Errorf("serialisation %+v (%q)", x, rep.SerTransfer)
	}
}
