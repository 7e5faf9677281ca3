package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// TestImportReplaysAndReportsSerTransfer: popmon import of a trace keeps
// the ideal-network replay in the measurement, and popmon report prints
// serialisation and transfer efficiency with the definition it used
// (--ser-transfer), from the file and from the trace alike.
func TestImportReplaysAndReportsSerTransfer(t *testing.T) {
	dir := t.TempDir()
	trace := copyTrace(t, dir, "epoch_16proc")
	out := filepath.Join(dir, "e.json")
	code, _, stderr := runMain("import", "-o", out, trace)
	if code != ExitOK || !strings.Contains(stderr, "popmon: ideal-network replay: 2.31 s (useful max 2.26 s)") {
		t.Fatalf("import: exit %d, stderr %q", code, stderr)
	}
	m, err := measure.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if in := m.IdealNetwork; in == nil || math.Abs(float64(in.RuntimeNS)/1e3-2310335.96) > 0.01 || in.EagerLimit != 32768 {
		t.Fatalf("ideal network %+v", m.IdealNetwork)
	}
	for _, tc := range []struct {
		flag, def  string
		ser, trans float64 // %
	}{
		{"bsc", "bsc-basicanalysis", 97.952863, 97.875538},
		{"pop", "pop", 97.0846, 98.7508},
	} {
		for _, file := range []string{out, trace} {
			code, stdout, stderr := runMain("report", "--model", "pop-additive", "--ser-transfer", tc.flag, "--format", "json", file)
			if code != ExitOK {
				t.Fatalf("report %s: exit %d, %s", file, code, stderr)
			}
			var rep struct {
				SerTransfer struct{ Definition string } `json:"ser_transfer"`
				Regions     []struct{ Metrics map[string]float64 }
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			g := rep.Regions[0].Metrics
			if rep.SerTransfer.Definition != tc.def || math.Abs(100*g["serialisation_efficiency"]-tc.ser) > 5e-5 || math.Abs(100*g["transfer_efficiency"]-tc.trans) > 5e-5 {
				t.Errorf("%s %s: definition %q SerE %.6f TransE %.6f, want %s %.6f %.6f", tc.flag, file, rep.SerTransfer.Definition,
					100*g["serialisation_efficiency"], 100*g["transfer_efficiency"], tc.def, tc.ser, tc.trans)
			}
		}
		_, text, _ := runMain("report", "--model", "pop-additive", "--ser-transfer", tc.flag, out)
		if !strings.Contains(text, "Serialisation and transfer: definition "+tc.def+": ") {
			t.Errorf("text report without the definition:\n%s", text)
		}
	}
	if code, _, stderr := runMain("report", "--ser-transfer", "dimemas", out); code != ExitUsage || !strings.Contains(stderr, `unknown serialisation/transfer definition "dimemas"`) {
		t.Errorf("bad definition: exit %d, %q", code, stderr)
	}
}
