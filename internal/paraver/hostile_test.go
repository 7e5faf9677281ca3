package paraver

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/measure"
)

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc: every
// allocation counts, freed or not, so a peak cannot hide).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// header returns a .prv header line of one application whose tasks are
// given as "threads:node" items, n times each.
func header(end string, nodes string, task string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#Paraver (d):%s:%s:1:%d(", end, nodes, n)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(task)
	}
	b.WriteString(")\n")
	return b.String()
}

// sumAccounts is the invariant of POP-METRICS.md §1 for an imported
// process: every account of every thread, which must equal CPUs × elapsed.
func sumAccounts(a measure.ProcessAccounts) int64 {
	return a.UsefulNS + a.MPINS + a.OtherNS + a.MPIWorkerIdleNS + a.OMPSerializationNS + a.OMPLoadImbalanceNS + a.OMPSchedulingNS
}

// hybridRecords: a task whose primary computes 0–100, is in MPI 100–200
// (its workers then MPI worker idle), computes 200–1000 and opens a
// parallel region 300–500 in which thread 2 works 300–400. Thread 2 is
// idle outside that.
const hybridRecords = `1:1:1:1:1:0:100:1
1:1:1:1:2:0:300:0
1:1:1:1:1:100:200:13
2:1:1:1:1:100:50000002:10
2:1:1:1:1:200:50000002:0
1:1:1:1:1:200:1000:1
2:1:1:1:1:300:60000001:1
1:1:1:1:2:300:400:1
2:1:1:1:2:300:60000018:1
2:1:1:1:2:400:60000018:0
1:1:1:1:2:400:1000:0
2:1:1:1:1:500:60000001:0
`

// hybridAccounts are the accounts of hybridRecords in a task of n threads
// whose threads 3 … n never work. By hand: the primary is useful 900 (200
// of it inside the parallel region) and in MPI 100; thread 2 is useful 100, serialization 100+100+500, MPI worker
// idle 100 and the region's load imbalance 100 (the primary waited 0);
// each idle thread is serialization 100+100+500 outside the region plus
// 200 inside it (outside the team) and MPI worker idle 100.
func hybridAccounts(n int64) measure.ProcessAccounts {
	return measure.ProcessAccounts{
		Rank: 0, CPUs: int(n), Visits: 1, ElapsedNS: 1000,
		UsefulNS: 1000, MPINS: 100,
		MPIWorkerIdleNS:    100 * (n - 1),
		OMPSerializationNS: 700 + 900*(n-2),
		OMPLoadImbalanceNS: 100,
		MPICalls:           1, OMPParallels: 1,
		PrimaryUsefulNS: 900, PrimaryMPINS: 100, PrimaryParallelNS: 200, PrimarySerialUsefulNS: 700,
		ParallelUsefulNS: 100 + 200, ThreadUsefulMaxNS: 900,
	}
}

// TestImportSilentThreadsAreIdle: a declared thread that no record names
// accounts exactly like one whose records say it is idle throughout, and
// like one first named late; the importer keeps one shared history for all
// of them instead of one per declared thread.
func TestImportSilentThreadsAreIdle(t *testing.T) {
	const head = "#Paraver (d):1000_ns:1(3):1:1(3:1)\n"
	variants := map[string]string{
		"no record":                 hybridRecords,
		"idle records from 0":       "1:1:1:1:3:0:1000:0\n" + hybridRecords,
		"first record at 600":       hybridRecords + "1:1:1:1:3:600:1000:0\n",
		"first record after region": strings.Replace(hybridRecords, "2:1:1:1:1:500:60000001:0\n", "2:1:1:1:1:500:60000001:0\n1:1:1:1:3:500:1000:0\n", 1),
	}
	want := hybridAccounts(3)
	if sum := sumAccounts(want); sum != 3*1000 {
		t.Fatalf("hand-computed accounts sum to %d, want 3000", sum)
	}
	for name, recs := range variants {
		m := importText(t, head+recs, Options{})
		if got := m.Regions[0].Processes[0]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %+v\n want %+v", name, got, want)
		}
		silent := strings.Contains(strings.Join(m.Warnings, "\n"), "1 thread(s) the header declares have no record (the first: thread 3 of task 1)")
		if silent != (name == "no record") {
			t.Errorf("%s: warnings %q", name, m.Warnings)
		}
	}
}

// TestImportHeaderBombs: headers that declare absurd sizes. Memory follows
// the records present, the accounts follow the declarations where they can
// be right, and a header that no trace can have is refused.
func TestImportHeaderBombs(t *testing.T) {
	const giga = 1_000_000_000
	tasks := header("1000_ns", "1(1)", "1:1", 1_000_000)
	cases := []struct {
		name    string
		text    string
		skipBad bool
		err     string // the exact error; "" to import
		check   func(t *testing.T, m *measure.Measurement)
		// maxAlloc bounds what the import allocates: a read buffer and the
		// header's text, never the declared sizes.
		maxAlloc uint64
	}{
		{
			name: "1e9 threads, the first and the last named",
			text: header("1000_ns", "1(1)", "1000000000:1", 1) + "1:1:1:1:1:0:1000:1\n1:1:1:1:1000000000:0:1000:0\n",
			check: func(t *testing.T, m *measure.Measurement) {
				want := measure.ProcessAccounts{Rank: 0, CPUs: giga, Visits: 1, ElapsedNS: 1000, UsefulNS: 1000,
					OMPSerializationNS: (giga - 1) * 1000, PrimaryUsefulNS: 1000, PrimarySerialUsefulNS: 1000, ThreadUsefulMaxNS: 1000}
				if got := m.Regions[0].Processes[0]; !reflect.DeepEqual(got, want) {
					t.Errorf("accounts:\n got  %+v\n want %+v", got, want)
				}
				if m.Resources.CPUs != giga || m.OpenMP == nil || m.OpenMP.MaxThreads != giga {
					t.Errorf("resources %+v openmp %+v", m.Resources, m.OpenMP)
				}
				if !reflect.DeepEqual(m.Warnings, []string{"999999998 thread(s) the header declares have no record (the first: thread 2 of task 1): they are counted as CPUs idle throughout the trace"}) {
					t.Errorf("warnings %q", m.Warnings)
				}
			},
			maxAlloc: 4 << 20,
		},
		{
			name: "1e9 threads, MPI and a parallel region",
			text: header("1000_ns", "1(1)", "1000000000:1", 1) + hybridRecords,
			check: func(t *testing.T, m *measure.Measurement) {
				got, want := m.Regions[0].Processes[0], hybridAccounts(giga)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("accounts:\n got  %+v\n want %+v", got, want)
				}
				if sumAccounts(got) != giga*1000 {
					t.Errorf("accounts sum to %d, want CPUs × elapsed = %d", sumAccounts(got), int64(giga*1000))
				}
			},
			maxAlloc: 4 << 20,
		},
		{
			name: "1e6 tasks, two with records",
			text: tasks + "1:1:1:1:1:0:1000:1\n1:1:1:1000000:1:0:1000:1\n",
			err:  "the header declares 1000000 tasks in application 1 but only 2 of them have records (the first without: task 2): the header does not describe this trace (damaged, or another trace's); pass --skip-bad to import the tasks that are there",
			// The header's text is 4 MB: reading and parsing it is the bound.
			maxAlloc: 48 << 20,
		},
		{
			name:    "1e6 tasks, two with records, --skip-bad",
			text:    tasks + "1:1:1:1:1:0:1000:1\n1:1:1:1000000:1:0:1000:1\n",
			skipBad: true,
			check: func(t *testing.T, m *measure.Measurement) {
				g := m.Regions[0].Processes
				if len(m.Processes) != 2 || len(g) != 2 || g[0].Rank != 0 || g[1].Rank != 999999 || g[0].UsefulNS != 1000 || g[1].UsefulNS != 1000 || m.Resources.CPUs != 2 {
					t.Errorf("processes %+v accounts %+v", m.Processes, g)
				}
				if !reflect.DeepEqual(m.Warnings, []string{"999998 of the 1000000 tasks the header declares have no record (the first: task 2) and are not in the measurement (--skip-bad)"}) {
					t.Errorf("warnings %q", m.Warnings)
				}
				if n := m.Source.Notes; n[len(n)-1] != "processes = the 2 tasks with records, of the 1000000 the header declares (--skip-bad)" {
					t.Errorf("notes %q", n)
				}
			},
			maxAlloc: 48 << 20,
		},
		{
			name:     "1e9 tasks announced, one described",
			text:     "#Paraver (d):1000_ns:1(1):1:1000000000(1:1)\n1:1:1:1:1:0:1000:1\n",
			err:      "line 1: bad Paraver header: application 1: 1000000000 tasks announced, 1 described",
			maxAlloc: 4 << 20,
		},
		{
			name:     "1e9 nodes announced, one described",
			text:     "#Paraver (d):1000_ns:1000000000(4):1:1(1:1)\n1:1:1:1:1:0:1000:1\n",
			err:      `line 1: bad Paraver header: 1000000000 nodes announced, 1 described in "1000000000(4)"`,
			maxAlloc: 4 << 20,
		},
		{
			name: "1e9 CPUs in a node, a task on node 1e9",
			text: "#Paraver (d):1000_ns:1(1000000000):1:1(1:1000000000)\n1:1:1:1:1:0:1000:1\n",
			check: func(t *testing.T, m *measure.Measurement) {
				if m.Resources.Nodes != 1 || m.Resources.CPUs != 1 || m.Regions[0].Processes[0].UsefulNS != 1000 || m.Processes[0].Hostname != "" {
					t.Errorf("resources %+v processes %+v", m.Resources, m.Processes)
				}
			},
			maxAlloc: 4 << 20,
		},
		{
			name:     "1e9 threads for 10 s",
			text:     header("10_s", "1(1)", "1000000000:1", 1) + "1:1:1:1:1:0:10:1\n",
			err:      "the header declares 1000000000 threads in application 1 over 10 s: more than 292 years of CPU time, which no trace holds; the header is damaged",
			maxAlloc: 4 << 20,
		},
		{
			name:     "threads summing past 2^63",
			text:     header("1_ns", "0", "9223372036854775807:0", 2) + "1:1:1:1:1:0:1:1\n",
			err:      "the header declares 9223372036854775807 threads in application 1 over 1 ns: more than 292 years of CPU time, which no trace holds; the header is damaged",
			maxAlloc: 4 << 20,
		},
		{
			name:     "end time past 2^63 ns",
			text:     "#Paraver (d):9300000000_s:1(1):1:1(1:1)\n1:1:1:1:1:0:10:1\n",
			err:      `line 1: bad Paraver header: end time "9300000000_s" is over 292 years`,
			maxAlloc: 4 << 20,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m *measure.Measurement
			var err error
			n := allocated(func() { m, err = Import(strings.NewReader(c.text), Options{SkipBad: c.skipBad}) })
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error\n %v\nwant\n %s", err, c.err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				c.check(t, m)
				for _, a := range m.Regions[0].Processes {
					if got, want := sumAccounts(a), int64(a.CPUs)*a.ElapsedNS; got != want {
						t.Errorf("rank %d: accounts sum to %d, want CPUs × elapsed = %d", a.Rank, got, want)
					}
				}
			}
			t.Logf("allocated %d KB", n>>10)
			if n > c.maxAlloc {
				t.Errorf("the import allocated %d MB, want at most %d MB", n>>20, c.maxAlloc>>20)
			}
		})
	}
}

// endlessLine is an io.Reader of a header line followed by one line of n
// digits: its text is never held anywhere but in the reader under test.
type endlessLine struct {
	head string
	n    int
}

var sevens = bytes.Repeat([]byte("7"), 1<<16)

func (e *endlessLine) Read(p []byte) (int, error) {
	if e.head != "" {
		k := copy(p, e.head)
		e.head = e.head[k:]
		return k, nil
	}
	if e.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), e.n, len(sevens))
	copy(p, sevens[:k])
	e.n -= k
	return k, nil
}

// TestImportLineWithoutEnd: a line of 96 MB fails with the reader's line
// bound (64 MB), holding at most that bound, not the line: the import
// allocates about twice the bound (the line buffer doubling up to it),
// where keeping the line would take twice 128 MB.
func TestImportLineWithoutEnd(t *testing.T) {
	var err error
	n := allocated(func() {
		_, err = Import(&endlessLine{head: "#Paraver (d):1000_ns:1(1):1:1(1:1)\n", n: 96 << 20}, Options{})
	})
	want := "line 2: the line is longer than 64 MiB: not a Paraver record (use --skip-bad to skip malformed lines)"
	if err == nil || err.Error() != want {
		t.Errorf("error\n %v\nwant\n %s", err, want)
	}
	if bound := uint64(2*maxLineBytes + 8<<20); n > bound {
		t.Errorf("the import allocated %d MB, want at most %d MB", n>>20, bound>>20)
	}
}

// TestImportTruncated: a trace whose records stop before its header's end,
// or that has only its header, or ends inside a line, is refused with what
// happened and the fix; --skip-bad imports what is there and says so.
func TestImportTruncated(t *testing.T) {
	const head = "#Paraver (d):1000_ns:1(1):1:1(1:1)\n"
	// 40 %: useful 0–300, MPI 300–400, then nothing.
	const at40 = head + "1:1:1:1:1:0:300:1\n2:1:1:1:1:300:50000002:10\n1:1:1:1:1:300:400:13\n2:1:1:1:1:400:50000002:0\n"
	const fix = "the trace was cut short: re-run mpi2prv or re-copy the file, or pass --skip-bad to import what is there"
	stop40 := "its records stop at 400 ns, 40.0 % of the 1 µs its header declares"
	cases := []struct {
		name    string
		text    string
		skipBad bool
		err     string
		// With an import: the elapsed time, useful and MPI time, the last
		// note and the warnings.
		elapsed, useful, mpi int64
		note                 string
		warnings             []string
	}{
		{name: "records stop at 40 %", text: at40,
			err: "the trace is truncated: " + stop40 + " (a complete trace reaches at least 99 %); " + fix},
		{name: "records stop at 40 %, --skip-bad", text: at40, skipBad: true,
			elapsed: 400, useful: 300, mpi: 100,
			note:     "elapsed = 0 … 400 ns only: the trace is truncated (" + stop40 + "); imported up to where the records stop (--skip-bad)",
			warnings: []string{"the trace is truncated: " + stop40 + "; only the first 400 ns were imported (--skip-bad)"}},
		{name: "seconds in microseconds",
			text: "#Paraver (d):10000000:1(1):1:1(1:1)\n1:1:1:1:1:0:4000000:1\n",
			err:  "the trace is truncated: its records stop at 4 s, 40.0 % of the 10 s its header declares (a complete trace reaches at least 99 %); " + fix},
		{name: "records reach 98.9 %", text: head + "1:1:1:1:1:0:989:1\n",
			err: "the trace is truncated: its records stop at 989 ns, 98.9 % of the 1 µs its header declares (a complete trace reaches at least 99 %); " + fix},
		{name: "records reach 99 %", text: head + "1:1:1:1:1:0:990:1\n",
			elapsed: 1000, useful: 990, note: "elapsed = the trace's whole duration from its header, for every process (one region, Global)"},
		{name: "an event at the end", text: head + "1:1:1:1:1:0:500:1\n2:1:1:1:1:1000:42000050:1\n",
			elapsed: 1000, useful: 500, note: "elapsed = the trace's whole duration from its header, for every process (one region, Global)"},
		{name: "a communication received at the end", text: head + "1:1:1:1:1:0:500:1\n3:1:1:1:1:400:400:1:1:1:1:1000:1000:8:1\n",
			elapsed: 1000, useful: 500, note: "elapsed = the trace's whole duration from its header, for every process (one region, Global)"},
		{name: "header only", text: head,
			err: "the trace has a header but no records: it was cut short or never written; re-run mpi2prv or re-copy the file"},
		{name: "header only, --skip-bad", text: head, skipBad: true,
			err: "the trace has a header but no records: it was cut short or never written; re-run mpi2prv or re-copy the file"},
		{name: "header without newline", text: strings.TrimSuffix(head, "\n"),
			err: "the trace has a header but no records: it was cut short or never written; re-run mpi2prv or re-copy the file"},
		{name: "header, communicators and comments", text: strings.Replace(head, ")\n", "),1\n", 1) + "c:1:1:1:1\n# nothing\n",
			err: "the trace has a header but no records: it was cut short or never written; re-run mpi2prv or re-copy the file"},
		{name: "header and garbage, --skip-bad", text: head + "x\ny\n", skipBad: true,
			err: "the trace has a header but no records (2 malformed line(s) skipped; the first: line 2: unknown record type: \"x\"): it was cut short or never written; re-run mpi2prv or re-copy the file"},
		{name: "header cut mid-line", text: "#Paraver (d):1000_ns:1(1):1:1(1:",
			err: "line 1: the trace ends in the middle of its header line (bad Paraver header: application 1: task list \"1(1:\" is not NTASKS(threads:node,...)): the trace was cut short: re-run mpi2prv or re-copy the file"},
		{name: "cut mid-line", text: head + "1:1:1:1:1:0:995:1\n1:1:1:1:1:995:10",
			err: "line 3: the trace ends in the middle of this line (malformed state record (want 1:cpu:app:task:thread:begin:end:state)): \"1:1:1:1:1:995:10\": " + fix},
		{name: "cut mid-line, --skip-bad", text: head + "1:1:1:1:1:0:995:1\n1:1:1:1:1:995:10", skipBad: true,
			elapsed: 1000, useful: 995, note: "elapsed = the trace's whole duration from its header, for every process (one region, Global)",
			warnings: []string{"the trace file ends early (line 3: the trace ends in the middle of this line (malformed state record (want 1:cpu:app:task:thread:begin:end:state)): \"1:1:1:1:1:995:10\"); the records before it were imported (--skip-bad)"}},
		{name: "cut mid-line at 40 %, --skip-bad", text: at40 + "1:1:1:1:1:400:", skipBad: true,
			elapsed: 400, useful: 300, mpi: 100,
			note: "elapsed = 0 … 400 ns only: the trace is truncated (" + stop40 + "); imported up to where the records stop (--skip-bad)",
			warnings: []string{
				"the trace file ends early (line 6: the trace ends in the middle of this line (malformed state record (want 1:cpu:app:task:thread:begin:end:state)): \"1:1:1:1:1:400:\"); the records before it were imported (--skip-bad)",
				"the trace is truncated: " + stop40 + "; only the first 400 ns were imported (--skip-bad)"}},
		{name: "records at time 0 only, --skip-bad", text: head + "2:1:1:1:1:0:50000002:0\n", skipBad: true,
			err: "the trace is truncated: its records stop at 0 ns, 0.0 % of the 1 µs its header declares, so nothing can be imported; re-run mpi2prv or re-copy the file"},
		{name: "end time 0", text: "#Paraver (d):0_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:0:1\n",
			err: "the header's end time is 0: the trace has no duration to account (a damaged header); re-run mpi2prv or re-copy the file"},
		{name: "records of another application only", text: "#Paraver (d):10_ns:0:2:1(1:0):1(1:0)\n1:1:2:1:1:0:10:1\n", skipBad: true,
			err: "none of the 1 task(s) the header declares in application 1 has a record: there is nothing to import (is it the right --app?)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Import(strings.NewReader(c.text), Options{SkipBad: c.skipBad})
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error\n %v\nwant\n %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := m.Regions[0].Processes[0]
			if a.ElapsedNS != c.elapsed || a.UsefulNS != c.useful || a.MPINS != c.mpi || sumAccounts(a) != c.elapsed {
				t.Errorf("elapsed %d useful %d mpi %d (sum %d), want %d %d %d", a.ElapsedNS, a.UsefulNS, a.MPINS, sumAccounts(a), c.elapsed, c.useful, c.mpi)
			}
			if n := m.Source.Notes; n[len(n)-1] != c.note {
				t.Errorf("last note\n %q\nwant\n %q", n[len(n)-1], c.note)
			}
			if len(m.Warnings) != len(c.warnings) || (len(c.warnings) > 0 && !reflect.DeepEqual(m.Warnings, c.warnings)) {
				t.Errorf("warnings\n %q\nwant\n %q", m.Warnings, c.warnings)
			}
		})
	}
}

// TestImportFileTruncatedGzipSkipBad: compressed data cut in the middle
// fails naming the file; with --skip-bad the records before the cut are
// imported up to where they stop, and both facts are warned about.
func TestImportFileTruncatedGzipSkipBad(t *testing.T) {
	var text strings.Builder
	text.WriteString("#Paraver (d):200000_ns:1(1):1:1(1:1)\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&text, "1:1:1:1:1:%d:%d:1\n", 10*i, 10*i+10)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text.String()))
	zw.Close()
	path := t.TempDir() + "/cut.prv.gz"
	if err := os.WriteFile(path, z.Bytes()[:z.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ImportFile(path, Options{}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), path+": line ") ||
		!strings.HasSuffix(err.Error(), ": the trace is truncated (unexpected end of compressed data): the trace was cut short: re-run mpi2prv or re-copy the file, or pass --skip-bad to import what is there") {
		t.Fatalf("error %v", err)
	}
	m, err := ImportFile(path, Options{SkipBad: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Regions[0].Processes[0]
	if a.ElapsedNS < 10_000 || a.ElapsedNS > 190_000 || a.UsefulNS != a.ElapsedNS {
		t.Errorf("elapsed %d useful %d: want all of the records before the cut", a.ElapsedNS, a.UsefulNS)
	}
	w := strings.Join(m.Warnings, "\n")
	if len(m.Warnings) != 2 || !strings.Contains(w, "unexpected end of compressed data") || !strings.Contains(w, fmt.Sprintf("only the first %s were imported", units.DurationSignificant(a.ElapsedNS))) {
		t.Errorf("warnings %q", m.Warnings)
	}
}

// TestBundledTracesReachTheirEnd: the threshold's evidence. In every real
// trace here (mpi2prv's EPOCH 1–16 ranks and ImageMagick 1–2 threads) the
// last record ends exactly at the header's end time, far above the 99 %
// that import requires.
func TestBundledTracesReachTheirEnd(t *testing.T) {
	for _, name := range []string{"epoch_1proc", "epoch_2proc", "epoch_4proc", "epoch_8proc", "epoch_16proc", "imagemagick_omp1", "imagemagick_omp2"} {
		f, err := os.Open("testdata/" + name + ".prv.gz")
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := NewReader(zr)
		if err != nil {
			t.Fatal(err)
		}
		var last int64
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch rec.Kind {
			case KindState:
				last = max(last, rec.End)
			case KindEvent:
				last = max(last, rec.Time)
			case KindComm:
				last = max(last, rec.Comm.LogicalRecv, rec.Comm.PhysicalRecv)
			}
		}
		f.Close()
		if sc, _ := scale(rd.Header().Unit); last*sc != rd.Header().End {
			t.Errorf("%s: last record ends at %d, header end %d", name, last*sc, rd.Header().End)
		}
	}
}

// TestImportRecordsBackInTime: records that go back in time on their thread
// never count time twice, not even in the parallel-region wall time and the
// MPI call profile, so the accounts keep summing to CPUs × elapsed.
func TestImportRecordsBackInTime(t *testing.T) {
	// Two parallel regions over the same 0–1000 (the second goes back in
	// time) and two MPI calls over the same 0–1000 on thread 2; the primary
	// is named by events only.
	once := "2:1:1:1:1:0:60000001:1\n2:1:1:1:2:0:50000002:10\n2:1:1:1:1:1000:60000001:0\n2:1:1:1:2:1000:50000002:0\n"
	trace := "#Paraver (d):1000_ns:1(1):1:1(2:1)\n" + once + once
	m := importText(t, trace, Options{PCF: &PCF{Values: map[int64]map[uint64]string{50000002: {10: "MPI_Allreduce"}}}})
	// The first region: the primary (the team) idle 1000 → scheduling,
	// thread 2 in MPI. The second region and call start and end at 1000:
	// empty.
	want := measure.ProcessAccounts{Rank: 0, CPUs: 2, Visits: 1, ElapsedNS: 1000, MPINS: 1000, OMPSchedulingNS: 1000,
		MPICalls: 2, OMPParallels: 2, PrimaryParallelNS: 1000}
	if got := m.Regions[0].Processes[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("accounts:\n got  %+v\n want %+v", got, want)
	}
	if len(m.MPICalls) != 1 || !reflect.DeepEqual(m.MPICalls[0], measure.MPICall{Name: "MPI_Allreduce", Calls: 2, TimeNS: 1000, MinTimeNS: 1000, MaxTimeNS: 1000}) {
		t.Errorf("MPI calls %+v", m.MPICalls)
	}
	if !reflect.DeepEqual(m.Warnings, []string{"2 record(s) of the trace go back in time on their thread; their overlap was not counted twice (is the trace sorted?)"}) {
		t.Errorf("warnings %q (threads named by events only have records)", m.Warnings)
	}
}

// TestParsePCFBlockBomb: an EVENT_TYPE block of 20 000 types and 20 000
// values costs its lines, not their product (4 × 10⁸ names), and every type
// of the block names every value.
func TestParsePCFBlockBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("EVENT_TYPE\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "9 %d T%d\n", 50000000+i, i)
	}
	b.WriteString("VALUES\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "%d MPI_%d\n", i, i)
	}
	var p *PCF
	var err error
	n := allocated(func() { p, err = ParsePCF(strings.NewReader(b.String())) })
	if err != nil {
		t.Fatal(err)
	}
	if p.ValueName(50000000, 0) != "MPI_0" || p.ValueName(50019999, 19999) != "MPI_19999" || p.Types[50019999] != "T19999" {
		t.Errorf("names: %q %q %q", p.ValueName(50000000, 0), p.ValueName(50019999, 19999), p.Types[50019999])
	}
	if n > 32<<20 {
		t.Errorf("parsing %d KB of .pcf allocated %d MB", b.Len()>>10, n>>20)
	}
	// A type in two blocks takes the last block's values.
	p, err = ParsePCF(strings.NewReader("EVENT_TYPE\n9 7 A\nVALUES\n1 one\n\nEVENT_TYPE\n9 7 A\n9 8 B\nVALUES\n2 two\n"))
	if err != nil || p.ValueName(7, 1) != "" || p.ValueName(7, 2) != "two" || p.ValueName(8, 2) != "two" {
		t.Errorf("two blocks: %v %+v", err, p)
	}
}

// TestImportCallProfile: the MPI call profile by name, from each process's
// own calls: two event values of one name merge, a process without the
// call is the minimum (0), the longest process is the maximum.
func TestImportCallProfile(t *testing.T) {
	trace := "#Paraver (d):100_ns:1(3):1:3(1:1,1:1,1:1)\n" +
		"1:1:1:1:1:0:100:1\n" +
		"2:1:1:2:1:0:50000002:10\n2:1:1:2:1:20:50000002:11\n2:1:1:2:1:30:50000002:0\n1:1:1:2:1:30:100:1\n" +
		"2:1:1:3:1:0:50000002:10\n2:1:1:3:1:40:50000002:0\n1:1:1:3:1:40:100:1\n"
	pcf := &PCF{Values: map[int64]map[uint64]string{50000002: {10: "MPI_Allreduce", 11: "MPI_Allreduce"}}}
	m := importText(t, trace, Options{PCF: pcf})
	want := []measure.MPICall{{Name: "MPI_Allreduce", Calls: 3, TimeNS: 70, MinTimeNS: 0, MaxTimeNS: 40, MaxRank: 2}}
	if !reflect.DeepEqual(m.MPICalls, want) {
		t.Errorf("MPI calls\n %+v\nwant\n %+v", m.MPICalls, want)
	}
}

// hybridTrace writes a task of w threads that runs k iterations of 50 ns:
// serial 10, a parallel region of 30 in which threads 2–5 each work a
// different share (and the others idle through), MPI 10. Threads 6 … w
// have one idle state record over the whole trace.
func hybridTrace(w, k int) string {
	var b strings.Builder
	end := 50 * k
	fmt.Fprintf(&b, "#Paraver (d):%d_ns:1(%d):1:1(%d:1)\n", end, w, w)
	for j := 6; j <= w; j++ {
		fmt.Fprintf(&b, "1:1:1:1:%d:0:%d:0\n", j, end)
	}
	for i := 0; i < k; i++ {
		a := 50 * i
		fmt.Fprintf(&b, "1:1:1:1:1:%d:%d:1\n", a, a+40)
		fmt.Fprintf(&b, "2:1:1:1:1:%d:60000001:1\n", a+10)
		for j := 2; j <= min(w, 5); j++ {
			work := 5 * j
			if i%3 == j%3 {
				work = 0 // outside this instance's team
			}
			fmt.Fprintf(&b, "1:1:1:1:%d:%d:%d:1\n2:1:1:1:%d:%d:60000018:1\n", j, a+10, a+10+work, j, a+10)
			fmt.Fprintf(&b, "1:1:1:1:%d:%d:%d:0\n2:1:1:1:%d:%d:60000018:0\n", j, a+10+work, a+50, j, a+10+work)
		}
		fmt.Fprintf(&b, "2:1:1:1:1:%d:60000001:0\n", a+40)
		fmt.Fprintf(&b, "1:1:1:1:1:%d:%d:13\n2:1:1:1:1:%d:50000002:10\n2:1:1:1:1:%d:50000002:0\n", a+40, a+50, a+40, a+50)
	}
	return b.String()
}

// TestImportParkedWorkersAreExact: idle workers are parked and accounted
// in aggregate, which gives exactly the accounts of keeping every worker
// current at every change of its primary's context (the eager reference),
// on hand-made and real traces.
func TestImportParkedWorkersAreExact(t *testing.T) {
	traces := map[string]string{
		"hybrid, 3 threads":     "#Paraver (d):1000_ns:1(3):1:1(3:1)\n" + hybridRecords,
		"hybrid, 1e9 threads":   "#Paraver (d):1000_ns:1(1):1:1(1000000000:1)\n" + hybridRecords,
		"regions, 12 threads":   hybridTrace(12, 40),
		"regions, 1e6 declared": strings.Replace(hybridTrace(12, 40), "1(12:1)", "1(1000000:1)", 1),
	}
	for _, name := range []string{"imagemagick_omp2", "epoch_2proc"} {
		f, err := os.Open("testdata/" + name + ".prv.gz")
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		traces[name] = string(text)
	}
	for name, text := range traces {
		lazy, im, err := run(strings.NewReader(text), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		eager, imEager, err := run(strings.NewReader(text), Options{eager: true})
		if err != nil {
			t.Fatalf("%s, eager: %v", name, err)
		}
		if !reflect.DeepEqual(lazy.Regions, eager.Regions) || !reflect.DeepEqual(lazy.MPICalls, eager.MPICalls) || !reflect.DeepEqual(lazy.Warnings, eager.Warnings) {
			t.Errorf("%s: parked\n %+v\neager\n %+v", name, lazy.Regions[0].Processes, eager.Regions[0].Processes)
		}
		if a := lazy.Regions[0].Processes[0]; sumAccounts(a) != int64(a.CPUs)*a.ElapsedNS {
			t.Errorf("%s: accounts sum to %d, want %d", name, sumAccounts(a), int64(a.CPUs)*a.ElapsedNS)
		}
		t.Logf("%s: %d worker syncs parked, %d eager", name, visits(im), visits(imEager))
	}
}

// visits counts the worker syncs of an import.
func visits(im *importer) int64 {
	var n int64
	for _, tk := range im.tasks {
		n += tk.visits
	}
	return n
}

// TestImportIdleWorkersCostNothing: a process of 3000 threads of which 4
// work, with 3000 changes of its primary's context (parallel regions and
// MPI calls), costs syncs in proportion to the working threads, not to all
// of them times the changes (the 9 million of the eager reference, which
// makes a few-MB trace of many threads take minutes).
func TestImportIdleWorkersCostNothing(t *testing.T) {
	text := hybridTrace(3000, 1000)
	m, im, err := run(strings.NewReader(text), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := m.Regions[0].Processes[0]
	if a.CPUs != 3000 || a.OMPParallels != 1000 || a.MPICalls != 1000 || sumAccounts(a) != 3000*a.ElapsedNS {
		t.Errorf("accounts %+v", a)
	}
	// Per change: the 4 working threads and at most each idle thread once
	// more when it parks.
	if n, bound := visits(im), int64(3000*8+3000); n > bound {
		t.Errorf("%d worker syncs, want at most %d", n, bound)
	}
}

// randomTrace writes a random but well-formed trace of one or two tasks of
// up to 6 threads: states, MPI calls, parallel regions and functions in
// random order, mostly forward in time, sometimes back.
func randomTrace(r *rand.Rand) string {
	var b strings.Builder
	tasks, threads := 1+r.Intn(2), 1+r.Intn(6)
	const end = 10000
	fmt.Fprintf(&b, "#Paraver (d):%d_ns:0:1:%d(", end, tasks)
	for i := 0; i < tasks; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:0", threads)
	}
	b.WriteString(")\n")
	t := int64(0)
	for n := 10 + r.Intn(200); n > 0; n-- {
		t += int64(r.Intn(200))
		if r.Intn(20) == 0 {
			t -= int64(r.Intn(500)) // back in time
		}
		t = min(max(t, 0), end)
		task, th := 1+r.Intn(tasks), 1+r.Intn(threads)
		if r.Intn(3) > 0 && th > 1 && r.Intn(2) == 0 {
			th = 1 // the primary more often
		}
		switch r.Intn(8) {
		case 0, 1:
			fmt.Fprintf(&b, "1:1:1:%d:%d:%d:%d:%d\n", task, th, t, min(t+int64(r.Intn(800)), end), []int{0, 1, 1, 13, 7}[r.Intn(5)])
		case 2:
			fmt.Fprintf(&b, "2:1:1:%d:%d:%d:50000002:%d\n", task, th, t, r.Intn(3))
		case 3:
			fmt.Fprintf(&b, "2:1:1:%d:%d:%d:60000001:%d\n", task, th, t, r.Intn(2))
		case 4, 5:
			fmt.Fprintf(&b, "2:1:1:%d:%d:%d:60000018:%d\n", task, th, t, r.Intn(2))
		case 6:
			fmt.Fprintf(&b, "2:1:1:%d:%d:%d:42000050:%d:42000059:%d\n", task, th, t, r.Intn(1000), r.Intn(1000))
		case 7:
			fmt.Fprintf(&b, "2:1:1:%d:%d:%d:60000023:%d\n", task, th, t, r.Intn(2))
		}
	}
	for task := 1; task <= tasks; task++ { // every task, to the end
		fmt.Fprintf(&b, "1:1:1:%d:1:%d:%d:1\n", task, end, end)
	}
	return b.String()
}

// TestImportParkedRandom: on 500 random traces, parking idle workers gives
// exactly the eager reference's accounts, which sum to CPUs × elapsed.
func TestImportParkedRandom(t *testing.T) {
	seed, n := int64(1), 500
	if s := os.Getenv("PARAVER_RANDOM_TRACES"); s != "" { // more: PARAVER_RANDOM_TRACES=seed:count
		fmt.Sscanf(s, "%d:%d", &seed, &n)
	}
	r := rand.New(rand.NewSource(seed))
	parked := int64(0)
	for i := 0; i < n; i++ {
		text := randomTrace(r)
		lazy, im, err := run(strings.NewReader(text), Options{})
		if err != nil {
			t.Fatalf("trace %d: %v\n%s", i, err, text)
		}
		eager, imEager, err := run(strings.NewReader(text), Options{eager: true})
		if err != nil {
			t.Fatalf("trace %d, eager: %v", i, err)
		}
		if !reflect.DeepEqual(lazy.Regions, eager.Regions) || !reflect.DeepEqual(lazy.MPICalls, eager.MPICalls) {
			t.Fatalf("trace %d: parked\n %+v\neager\n %+v\n%s", i, lazy.Regions[0].Processes, eager.Regions[0].Processes, text)
		}
		for _, a := range lazy.Regions[0].Processes {
			if sumAccounts(a) != int64(a.CPUs)*a.ElapsedNS {
				t.Fatalf("trace %d: rank %d accounts sum to %d, want %d\n%s", i, a.Rank, sumAccounts(a), int64(a.CPUs)*a.ElapsedNS, text)
			}
		}
		parked += visits(imEager) - visits(im)
	}
	if parked <= 0 {
		t.Errorf("no worker was ever parked (%d syncs saved): the test does not test parking", parked)
	}
}
