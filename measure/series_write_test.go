package measure_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// countWriter counts what is written to it.
type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// TestWriteSeriesStreams: a measurement's time series is written an
// interval at a time, as it was encoded whole before (the same bytes), but
// without holding its JSON in memory: popmon run writes a series of up to
// 262,144 process accounts, about 80 MB of JSON, which Write encoded into
// one buffer (3 times its size in allocations, a9d5b23).
func TestWriteSeriesStreams(t *testing.T) {
	acc := measure.ProcessAccounts{CPUs: 1, ElapsedNS: 10, UsefulNS: 6, MPINS: 4}
	m := invMeasurement(acc, acc)
	g := measure.SeriesRegion{Name: `Global "<&>", a: b`}
	for k := range 4000 {
		iv := measure.SeriesInterval{StartNS: int64(k) * 1e9}
		for r := range 8 {
			iv.Processes = append(iv.Processes, measure.ProcessAccounts{Rank: r, CPUs: 1, Visits: 1, ElapsedNS: 1e9, UsefulNS: 5e8 + int64(k), MPINS: 5e8 - int64(k)})
		}
		g.Intervals = append(g.Intervals, iv)
	}
	m.Series = &measure.Series{IntervalNS: 1e9, Regions: []measure.SeriesRegion{g, {Name: "R"}}}

	var out bytes.Buffer
	if err := measure.Write(&out, m); err != nil {
		t.Fatal(err)
	}
	// The bytes: the series as compact JSON with a space after each ','
	// and ':' (what Write writes for every value).
	var enc bytes.Buffer
	je := json.NewEncoder(&enc)
	je.SetEscapeHTML(false)
	if err := je.Encode(m.Series); err != nil {
		t.Fatal(err)
	}
	raw := bytes.TrimSpace(enc.Bytes())
	var want strings.Builder
	in := false
	for i, c := range string(raw) { // ASCII
		want.WriteRune(c)
		switch {
		case c == '"' && (i == 0 || raw[i-1] != '\\'):
			in = !in
		case !in && (c == ',' || c == ':'):
			want.WriteByte(' ')
		}
	}
	if !strings.Contains(out.String(), "\n  \"series\": "+want.String()+",\n") {
		t.Fatalf("the series is not written as before:\n%.300s", out.String()[strings.Index(out.String(), `"series"`):])
	}
	back, err := measure.Read(&out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Series.Regions) != 2 || len(back.Series.Regions[0].Intervals) != 4000 || back.Series.Regions[0].Intervals[3999].Processes[7].UsefulNS != 5e8+3999 {
		t.Fatalf("series read back: %d regions", len(back.Series.Regions))
	}

	// The memory: a few KB for a series of 1.8 MB, not the series whole.
	var cw countWriter
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	if err := measure.Write(&cw, m); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&b)
	if alloc := b.TotalAlloc - a.TotalAlloc; alloc > uint64(cw.n)/8 {
		t.Errorf("writing %d bytes allocated %d bytes: the series is held whole", cw.n, alloc)
	}
}
