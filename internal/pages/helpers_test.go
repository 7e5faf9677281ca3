package pages

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
)

// rank is one process of a synthetic run: seconds of useful and MPI time
// (one CPU per process).
type rank struct{ useful, mpi float64 }

func sec(s float64) int64 { return int64(math.Round(s * 1e9)) }

// synthRun builds a valid popmon measurement of a pure MPI run with one
// CPU per rank and elapsed time t in every region of regions.
func synthRun(ts time.Time, t float64, regions []string, ranks ...rank) *measure.Measurement {
	m := &measure.Measurement{
		Format: measure.Format, Version: measure.Version,
		Tool:      measure.Tool{Name: "popmon", Version: "test"},
		Timestamp: ts.UTC().Format(time.RFC3339),
		Command:   []string{"./app"}, Cwd: "/tmp",
		Launcher:  measure.Launcher{Kind: measure.LauncherNone},
		MPI:       &measure.MPI{Library: "test", Standard: "3.1", ThreadLevel: "single"},
		Clock:     measure.Clock{Source: "monotonic"},
		Resources: measure.Resources{Processes: len(ranks), Nodes: 1, CPUs: len(ranks)},
		MPICalls:  []measure.MPICall{},
		Warnings:  []string{},
	}
	for i := range ranks {
		m.Processes = append(m.Processes, measure.Process{Rank: i, Node: 0, Hostname: "h", PID: 100 + i, CPUs: 1})
	}
	for _, name := range regions {
		g := measure.Region{Name: name}
		for i, r := range ranks {
			g.Processes = append(g.Processes, measure.ProcessAccounts{
				Rank: i, CPUs: 1, Visits: 1, ElapsedNS: sec(t), UsefulNS: sec(r.useful), MPINS: sec(r.mpi),
			})
		}
		m.Regions = append(m.Regions, g)
	}
	return m
}

// writeRun writes m to dir/name.
func writeRun(t testing.TB, dir, name string, m *measure.Measurement) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := measure.Write(f, m); err != nil {
		t.Fatal(err)
	}
}

// checkXML fails unless s is well-formed XML.
func checkXML(t testing.TB, what, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v\n%s", what, err, truncate(s, 400))
		}
	}
}

// externalRefs returns the http(s) references in s other than XML
// namespace identifiers.
func externalRefs(s string) []string {
	var out []string
	for _, scheme := range []string{"http://", "https://"} {
		for i := 0; ; {
			j := strings.Index(s[i:], scheme)
			if j < 0 {
				break
			}
			k := i + j
			end := k + strings.IndexAny(s[k:]+" ", "\"' <>")
			ref := s[k:end]
			if ref != svgNS {
				out = append(out, fmt.Sprintf("%q", ref))
			}
			i = end
		}
	}
	return out
}
