package patterns

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/trace"
)

func TestWriteText(t *testing.T) {
	quiet := newBuilder(2).tr // MPI_Init only: nothing waits
	cases := []struct {
		name string
		tr   *trace.Trace
		want []string
		not  []string
	}{
		{"critical path", criticalPath2(), []string{
			"Wait states of run.json (2 ranks, 0.192 s in MPI over all ranks)",
			"Late Sender                                       0.090   46.9%         1  1: 0.090",
			"MPI_Recv 0.090",
			"Critical path: 0.200 s, from the end of MPI_Init (0.001 s) to the end of the last rank (0.201 s)",
			"on ranks: 0: 0.100, 1: 0.100",
			"(useful)                                0.200   100.0%              0.105          0.095",
			"critical-path imbalance: 0.095 s (47.5% of the path)",
		}, []string{"Wait at Barrier", "no wait states"}},
		{"wrong order", wrongOrder(), []string{"    wrong order (same source)", "0.050   96.2%         1  1: 0.050"}, nil},
		{"nothing", quiet, []string{"(no wait states)", "Critical path: 0.000 s"}, []string{"on ranks"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(tc.tr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteText(&b, "run.json", res); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("text has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestWriteJSONRoundTrip(t *testing.T) {
	res, err := Analyze(lateSender(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, "x.prv", res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
		Source  string `json:"source"`
		Result
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != FormatID || doc.Version != 1 || doc.Source != "x.prv" || doc.Pattern(LateSender).NS != 500*ms {
		t.Errorf("round trip: %+v", doc)
	}
	for i, id := range IDs() {
		if doc.Patterns[i].ID != id {
			t.Errorf("pattern %d is %s, want %s", i, doc.Patterns[i].ID, id)
		}
	}
}
