package runs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// TestAttachTraceUnreadable: a traced run whose trace cannot be read keeps
// its measurement, records the folder and gets the one replay warning,
// the same as an imported trace that cannot be replayed.
func TestAttachTraceUnreadable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app.trace")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &measure.Measurement{MPI: &measure.MPI{}}
	ws := AttachTrace(m, dir)
	if m.Trace == nil || m.Trace.Dir != "app.trace" {
		t.Errorf("trace %+v, want the folder app.trace", m.Trace)
	}
	if m.IdealNetwork != nil {
		t.Errorf("ideal network %+v from an unreadable trace", m.IdealNetwork)
	}
	want := "no ideal-network replay (serialisation and transfer efficiency not measured): the trace in " + dir + " could not be read: "
	if len(ws) != 1 || len(m.Warnings) != 1 || ws[0] != m.Warnings[0] || !strings.HasPrefix(ws[0], want) {
		t.Errorf("warnings %q (measurement %q), want one starting %q", ws, m.Warnings, want)
	}
}

// TestTraceDir: a measurement's trace folder, relative to the file's
// folder unless absolute; "" when it names none.
func TestTraceDir(t *testing.T) {
	for _, tc := range []struct {
		m    *measure.Measurement
		want string
	}{
		{nil, ""},
		{&measure.Measurement{}, ""},
		{&measure.Measurement{Trace: &measure.TraceInfo{}}, ""},
		{&measure.Measurement{Trace: &measure.TraceInfo{Dir: "app.trace"}}, filepath.Join("runs", "app.trace")},
		{&measure.Measurement{Trace: &measure.TraceInfo{Dir: "/abs/app.trace"}}, "/abs/app.trace"},
	} {
		if got := TraceDir(filepath.Join("runs", "app.json"), tc.m); got != tc.want {
			t.Errorf("TraceDir(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}
