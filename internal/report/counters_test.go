package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Hand-made measurements as libpopmon writes them with hardware counters
// (testdata/counters.json) and where the machine has none
// (testdata/counters_unavailable.json): the same run, without the cycles and
// instructions keys and with the library's reason.
const (
	countersFile      = "counters.json"
	noCountersFile    = "counters_unavailable.json"
	noCountersReason  = "counters unavailable: the CPU's performance monitoring unit is not exposed here (perf_event_open: ENOENT)"
	computationalHead = "Computational metrics\n"
)

// computationalIDs are the metric ids that need hardware counters.
var computationalIDs = []string{pop.IDIPC, pop.IDFrequencyGHz, pop.IDInstructions, pop.IDCycles}

// loadLocal reads a measurement of this package's testdata (checked against
// the measurement schema) and computes the reports of the models name
// selects.
func loadLocal(t *testing.T, file, name string) ([]*pop.Report, *measure.Measurement) {
	t.Helper()
	path := filepath.Join("testdata", file)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := measure.ValidateSchema(raw); err != nil {
		t.Fatalf("%s does not match the measurement schema: %v", path, err)
	}
	m, err := measure.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return computeModels(t, m, file, name), m
}

func renderReports(t *testing.T, format string, reps []*pop.Report, m *measure.Measurement) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderAll(&b, format, withRuns(reps, m), Options{}); err != nil {
		t.Fatalf("render %s: %v", format, err)
	}
	return b.String()
}

func TestCountersGolden(t *testing.T) {
	ext := map[string]string{FormatText: "txt", FormatJSON: "json", FormatCSV: "csv", FormatTALPJSON: "talp.json"}
	for _, c := range []struct{ file, name, model string }{
		{countersFile, "counters", ""},
		{noCountersFile, "counters_unavailable", ""},
		{countersFile, "counters.all", "all"},
	} {
		reps, m := loadLocal(t, c.file, c.model)
		for _, f := range []string{FormatText, FormatJSON, FormatCSV, FormatTALPJSON} {
			if f == FormatTALPJSON && c.model != "" {
				continue
			}
			t.Run(c.name+"/"+f, func(t *testing.T) {
				golden(t, c.name+"."+ext[f], renderReports(t, f, reps, m))
			})
		}
	}
}

// TestComputationalMetrics checks every format with and without counters:
// TALP's "Computational metrics" in text, the four ids in JSON and CSV, and
// without counters no key, no row and no zero anywhere but in talp-json
// (whose layout, DLB's, always has cycles and instructions; DLB writes 0
// without PAPI), and the reason in the text header.
func TestComputationalMetrics(t *testing.T) {
	const G = 1e9
	tests := []struct {
		file string
		want map[string]map[string]float64 // region -> id -> value; nil: none
	}{
		{countersFile, map[string]map[string]float64{
			"Global": {pop.IDIPC: 9.0 / 5, pop.IDFrequencyGHz: 2, pop.IDInstructions: 9 * G, pop.IDCycles: 5 * G},
			"solve":  {pop.IDIPC: 5.0 / 3, pop.IDFrequencyGHz: 2, pop.IDInstructions: 5 * G, pop.IDCycles: 3 * G},
		}},
		{noCountersFile, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			for _, model := range pop.Models() {
				reps, _ := loadLocal(t, tt.file, string(model))
				for _, r := range reps[0].Regions {
					for _, id := range computationalIDs {
						got, ok := r.Value(id)
						want, wantOK := tt.want[r.Name][id]
						if ok != wantOK || math.Abs(got-want) > 1e-9*math.Max(1, want) {
							t.Errorf("%s %s %s = %v (present %v), want %v (present %v)", model, r.Name, id, got, ok, want, wantOK)
						}
					}
				}
			}
			reps, m := loadLocal(t, tt.file, "")

			// JSON: the ids with their values, or no key at all.
			var doc struct {
				Regions []struct {
					Name    string             `json:"name"`
					Metrics map[string]float64 `json:"metrics"`
				} `json:"regions"`
			}
			if err := json.Unmarshal([]byte(renderReports(t, FormatJSON, reps, m)), &doc); err != nil {
				t.Fatal(err)
			}
			for _, r := range doc.Regions {
				for _, id := range computationalIDs {
					got, ok := r.Metrics[id]
					want, wantOK := tt.want[r.Name][id]
					if ok != wantOK || math.Abs(got-want) > 1e-9*math.Max(1, want) {
						t.Errorf("json %s %s = %v (present %v), want %v (present %v)", r.Name, id, got, ok, want, wantOK)
					}
				}
			}

			// CSV: one row per id, or none.
			rows, err := csv.NewReader(strings.NewReader(renderReports(t, FormatCSV, reps, m))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, row := range rows {
				for _, id := range computationalIDs {
					if row[1] == id {
						n++
						if _, ok := tt.want[row[0]][id]; !ok {
							t.Errorf("csv row %v without counters", row)
						}
					}
				}
			}
			if want := 4 * len(tt.want); n != want {
				t.Errorf("csv has %d computational rows, want %d", n, want)
			}

			// Text: TALP's block per region, or the reason once in the header.
			text := renderReports(t, FormatText, reps, m)
			blocks := strings.Count(text, computationalHead)
			if blocks != len(tt.want) {
				t.Errorf("text has %d %q blocks, want %d:\n%s", blocks, computationalHead, len(tt.want), text)
			}
			if tt.want == nil {
				if !strings.Contains(text, "Counters:  no computational metrics: "+noCountersReason+"\n") {
					t.Errorf("text header does not say why counters are missing:\n%s", text)
				}
				for _, label := range []string{"IPC", "frequency", "Cycles", "Instructions"} {
					if strings.Contains(text, label+" ..") {
						t.Errorf("text prints %s without counters:\n%s", label, text)
					}
				}
			} else {
				for _, line := range []string{
					"Counters:  cycles and instructions during useful time (rdpmc)\n",
					computationalHead + "  Average useful IPC .............. 1.80\n" +
						"  Average useful frequency ........ 2.00 GHz\n" +
						"  Number of instructions .......... 9 G\n",
					computationalHead + "  Average useful IPC .............. 1.67\n",
				} {
					if !strings.Contains(text, line) {
						t.Errorf("text lacks %q:\n%s", line, text)
					}
				}
			}

			// talp-json: DLB's keys when measured; absent, never 0, when not.
			var tj struct {
				Application map[string]map[string]float64 `json:"Application"`
			}
			if err := json.Unmarshal([]byte(renderReports(t, FormatTALPJSON, reps, m)), &tj); err != nil {
				t.Fatal(err)
			}
			for name, g := range tj.Application {
				for key, id := range map[string]string{"cycles": pop.IDCycles, "instructions": pop.IDInstructions} {
					got, ok := g[key]
					want, measured := tt.want[name][id]
					if ok != measured {
						t.Errorf("talp-json %s has %q: %v, want %v", name, key, ok, measured)
					}
					if got != want {
						t.Errorf("talp-json %s %s = %v, want %v", name, key, got, want)
					}
				}
			}
		})
	}
}

// TestTextCountersHeader covers the header line for each way a file can
// say (or not say) why it has no counters.
func TestTextCountersHeader(t *testing.T) {
	tests := []struct {
		name     string
		counters *measure.Counters
		hardware bool
		want     string
	}{
		{"measured", &measure.Counters{Mode: "auto", Available: true, Method: "read"}, true,
			"cycles and instructions during useful time (read system call)"},
		{"older file with counters", nil, true, "cycles and instructions during useful time"},
		{"unavailable", &measure.Counters{Mode: "on", Reason: noCountersReason}, false,
			"no computational metrics: " + noCountersReason},
		{"off", &measure.Counters{Mode: "off", Reason: "counters off (POPMON_COUNTERS=off)"}, false,
			"no computational metrics: counters off (POPMON_COUNTERS=off)"},
		{"older file without counters", nil, false, "no computational metrics: hardware counters were not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &measure.Measurement{Counters: tt.counters}
			m.Resources.HardwareCounters = tt.hardware
			if got := textCounters(runOf(m)); got != tt.want {
				t.Errorf("textCounters = %q, want %q", got, tt.want)
			}
		})
	}
}
