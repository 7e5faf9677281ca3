package runs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRegionIsExact: a run's regions are found by their exact name
// only; "all" is not Global.
func TestRunRegionIsExact(t *testing.T) {
	r := &Run{Regions: []Region{{Name: "Global"}, {Name: "all"}, {Name: "ALL"}}}
	for name, want := range map[string]int{"Global": 0, "all": 1, "ALL": 2, "global": -1, "All": -1, "": -1} {
		g, ok := r.Region(name)
		got := -1
		for i := range r.Regions {
			if ok && g == &r.Regions[i] {
				got = i
			}
		}
		if got != want {
			t.Errorf("Region(%q) = %d, want %d", name, got, want)
		}
	}
	if got := strings.Join(r.RegionNames(), ","); got != "Global,all,ALL" {
		t.Errorf("RegionNames %q", got)
	}
}

// TestOpenKinds: Open tells the three kinds apart (a trace by its first
// bytes too) and refuses what is none, naming the file.
func TestOpenKinds(t *testing.T) {
	dir := t.TempDir()
	pm := writeMeasurement(t, dir, "run.json", 5e8)
	talp := filepath.Join(dir, "talp.json")
	os.WriteFile(talp, []byte("\xef\xbb\xbf"+`{"dlbVersion": "3.7", "Application": {"Global": {"numCpus": 2, "numMpiRanks": 2, "elapsedTime": 10, "usefulTime": 15, "parallelEfficiency": 0.75}}}`), 0o644)
	trace := filepath.Join(dir, "trace.txt")
	os.WriteFile(trace, []byte("#Paraver (d):10_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:10:1\n"), 0o644)
	fifo := filepath.Join(dir, "fifo.json")
	for path, kind := range map[string]string{pm: KindPopmon, talp: KindTALP, trace: KindParaver} {
		f, err := Open(path, ReadOptions{})
		if err != nil || f.Kind != kind || f.Measurement == nil || f.Measurement.Validate() != nil {
			t.Errorf("%s: %+v %v, want kind %s", path, f, err, kind)
			continue
		}
		r, err := f.Run("")
		if err != nil || r.Kind != kind || r.Regions[0].Name != "Global" {
			t.Errorf("%s: run %+v %v", path, r, err)
		}
	}
	// A TALP file's summary keeps DLB's own efficiency.
	if r, err := Load(talp, ""); err != nil || r.Regions[0].Metrics["parallel_efficiency"] != 0.75 {
		t.Errorf("talp: %+v %v", r, err)
	}
	if err := mkfifo(fifo); err == nil {
		// A FIFO would block a reader forever: refused without reading.
		if _, err := Open(fifo, ReadOptions{}); err == nil || !strings.Contains(err.Error(), fifo+" is not a regular file") {
			t.Errorf("fifo: %v", err)
		}
	}
}

// TestLoadAllTraceWarnings: with skipBad a trace with a malformed line is
// read, and its warning reaches warn as a *Warning naming the file.
func TestLoadAllTraceWarnings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.prv")
	os.WriteFile(p, []byte("#Paraver (d):10_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:4:1\ngarbage\n1:1:1:1:1:4:10:1\n"), 0o644)
	if _, err := LoadAll([]string{dir}, "", false, nil); err == nil || !strings.Contains(err.Error(), p+" is not a usable Paraver trace: line 3") {
		t.Errorf("strict: %v", err)
	}
	var got []error
	rs, err := LoadAll([]string{dir}, "", true, func(err error) { got = append(got, err) })
	if err != nil || len(rs) != 1 || len(got) != 1 {
		t.Fatalf("skip-bad: %d runs, %v, warnings %v", len(rs), err, got)
	}
	var w *Warning
	if !errors.As(got[0], &w) || w.Path != p || !strings.Contains(w.Text, "skipped 1 malformed line(s)") {
		t.Errorf("warning %v", got[0])
	}
}
