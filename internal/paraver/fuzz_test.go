package paraver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Fuzz targets of the trace reader and importer. Their seeds are the heads of
// the real traces in testdata (cut after a few dozen records, once as they
// are and once with the header's end moved to the last record, so that
// both the truncation refusal and a complete import are explored), the
// hand-made traces of the tests and the companions' sections popmon reads.
// Run one with, e.g.:
//
//	go test -run '^$' -fuzz '^FuzzImport$' -fuzztime 200000x ./internal/paraver/
//
// (a count: with a duration, Go 1.26's fuzzing coordinator may end a clean
// run with a spurious "context deadline exceeded", go.dev/issue/75804).
//
// Inputs that failed once are kept in testdata/fuzz/<target>/ and run with
// every `go test`.

var bundledTraces = []string{"epoch_1proc", "epoch_2proc", "epoch_16proc", "imagemagick_omp2"}

// traceHeads returns, per bundled trace, its first records: as cut (the
// header's end is far later) and complete (the header's end moved to the
// last record's end).
func traceHeads(tb testing.TB, records int) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, name := range bundledTraces {
		f, err := os.Open("testdata/" + name + ".prv.gz")
		if err != nil {
			tb.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 1<<20)
		var lines []string
		var last int64
		for sc.Scan() && len(lines) < records {
			line := sc.Text()
			lines = append(lines, line)
			var rec [8]int64
			if n, _ := fmt.Sscanf(line, "1:%d:%d:%d:%d:%d:%d:", &rec[0], &rec[1], &rec[2], &rec[3], &rec[4], &rec[5]); n == 6 {
				last = max(last, rec[5])
			} else if n, _ := fmt.Sscanf(line, "2:%d:%d:%d:%d:%d:", &rec[0], &rec[1], &rec[2], &rec[3], &rec[4]); n == 5 {
				last = max(last, rec[4])
			}
		}
		f.Close()
		cut := strings.Join(lines, "\n") + "\n"
		out = append(out, []byte(cut))
		// "#Paraver (date):END_ns:..." → the last record's end.
		h := lines[0]
		open := strings.Index(h, "):")
		unit := strings.Index(h[open:], "_ns") + open
		complete := h[:open+2] + fmt.Sprint(last) + h[unit:] + "\n" + strings.Join(lines[1:], "\n") + "\n"
		out = append(out, []byte(complete))
	}
	return out
}

// smallBuffers makes the reader's buffers small (so that each input runs
// fast and long lines take the reader's long-line path) until the returned
// function restores them.
func smallBuffers() func() {
	r, a := readBufferSize, asyncChunk
	readBufferSize, asyncChunk = 64, 256
	return func() { readBufferSize, asyncChunk = r, a }
}

// smallPCF is a .pcf with the sections popmon reads.
const smallPCF = `STATES
0    Idle
1    Running
13    Group Communication

EVENT_TYPE
9   50000001    MPI Point-to-point
9   50000002    MPI Collective Comm
VALUES
0   Outside MPI
10   MPI_Allreduce

EVENT_TYPE
7  42000050 PAPI_TOT_INS [Instr completed]
`

// FuzzParseHeader: the header parser never panics, fails with its own
// messages, and what it returns is consistent and no larger than its text
// (a header cannot make the parser allocate what it only declares).
func FuzzParseHeader(f *testing.F) {
	for _, h := range traceHeads(f, 1) {
		f.Add(strings.TrimSpace(string(h)))
	}
	for _, s := range []string{
		"#Paraver (01/02/2003 at 04:05):1500:2(4,4):1:2(2:1,2:2)",
		"#Paraver (01/02/2003 at 04:05):7_us:0:2:1(1:0):2(3:0,1:0),2",
		"#Paraver :42_ms:1(1):1:1(1:1)\r\n",
		"#Paraver (d):1000_ns:1(1):1:1(1000000000:1)",
		"#Paraver (d):1000_ns:1000000000(4):1:1(1:1)",
		"#Paraver (d):9300000000_s:1(1):1:1(1:1)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		h, err := ParseHeader(line)
		if err != nil {
			if h != nil {
				t.Error("a header with the error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "bad Paraver header: ") && !strings.HasPrefix(msg, "not a Paraver trace") {
				t.Errorf("error %q is not the parser's", msg)
			}
			return
		}
		if h.End < 0 || (h.Unit != "ns" && h.Unit != "us" && h.Unit != "ms" && h.Unit != "s") || h.Communicators < 0 {
			t.Errorf("end %d unit %q communicators %d", h.End, h.Unit, h.Communicators)
		}
		if len(h.NodeCPUs) > len(line) || len(h.Apps) > len(line) {
			t.Errorf("%d nodes, %d applications from %d bytes", len(h.NodeCPUs), len(h.Apps), len(line))
		}
		for _, c := range h.NodeCPUs {
			if c < 0 {
				t.Errorf("node CPUs %d", c)
			}
		}
		for i, a := range h.Apps {
			if len(a.Tasks) > len(line) || len(a.Tasks) == 0 {
				t.Errorf("application %d: %d tasks from %d bytes", i+1, len(a.Tasks), len(line))
			}
			for _, tk := range a.Tasks {
				if tk.Threads < 1 || tk.Node < 0 {
					t.Errorf("application %d: task %+v", i+1, tk)
				}
			}
			if n := h.Threads(i + 1); n < len(a.Tasks) {
				t.Errorf("application %d: %d threads for %d tasks", i+1, n, len(a.Tasks))
			}
		}
	})
}

// FuzzReader: the record reader never panics or loops; every record it
// returns is well formed, every error is a *SyntaxError with its line (or
// io.EOF at the end), and nothing is read after a truncation.
func FuzzReader(f *testing.F) {
	for _, h := range traceHeads(f, 40) {
		f.Add(h)
	}
	f.Add([]byte("#Paraver (09/10/2019 at 16:09):1000_ns:1(2):1:2(1:1,1:1),1\nc:1:1:2:1:2\nnew format\n# a comment\n\n" +
		"1:1:1:1:1:0:956810:2\r\n2:2:1:2:1:7:50000003:31:42000050:18446744073709551615\n" +
		"3:1:1:1:1:10:11:2:1:2:1:20:21:41360:7\n4:1:2:3\n1:2:1:2:1:5:6:1"))
	f.Add([]byte("#Paraver (d):1000_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:995:1\n1:1:1:1:1:995:10"))
	defer smallBuffers()()
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) && err.Error() != "empty trace: no #Paraver header line" {
				t.Errorf("header error %v is neither a SyntaxError nor the empty trace's", err)
			}
			return
		}
		lines := int64(bytes.Count(data, []byte("\n")) + 1)
		line := rd.Line()
		for calls := int64(0); ; calls++ {
			if calls > lines+1 {
				t.Fatalf("%d calls of Next for %d lines", calls, lines)
			}
			rec, err := rd.Next()
			if rd.Line() < line || rd.Line() > lines || rd.Bytes() > int64(len(data)) {
				t.Fatalf("line %d after %d (of %d), %d bytes of %d", rd.Line(), line, lines, rd.Bytes(), len(data))
			}
			line = rd.Line()
			if err == io.EOF {
				return
			}
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) || se.Line != rd.Line() || se.Msg == "" {
					t.Fatalf("error %v at line %d is not a SyntaxError of that line", err, rd.Line())
				}
				if se.Truncated {
					if rec, err := rd.Next(); rec != nil || err == nil {
						t.Fatalf("a record after a truncation: %+v, %v", rec, err)
					}
					return
				}
				continue
			}
			if rec.Kind < KindState || rec.Kind > KindGlobalComm {
				t.Fatalf("kind %d", rec.Kind)
			}
			if rec.Kind == KindGlobalComm {
				continue
			}
			if rec.App < 1 || rec.Task < 1 || rec.Thread < 1 || rec.CPU < 0 || rec.Time < 0 {
				t.Fatalf("record %+v", rec)
			}
			switch rec.Kind {
			case KindState:
				if rec.End < rec.Time || rec.State < 0 {
					t.Fatalf("state %+v", rec)
				}
			case KindEvent:
				if len(rec.Events) == 0 {
					t.Fatalf("event without type/value pairs: %+v", rec)
				}
			case KindComm:
				c := rec.Comm
				if c.RecvApp < 1 || c.RecvTask < 1 || c.RecvThread < 1 || c.PhysicalSend < 0 || c.LogicalRecv < 0 || c.PhysicalRecv < 0 || c.Size < 0 {
					t.Fatalf("communication %+v", c)
				}
			}
		}
	})
}

// FuzzImport: importing a small trace with its .pcf and .row, plain, gzip
// or gzip cut short, never panics and either fails with a message or
// returns a measurement that is valid, whose accounts are non-negative and
// sum per process to CPUs × elapsed (POP-METRICS.md §1), whose parts stay
// within their wholes (no MPI call of a process longer than its CPU time,
// no parallel-region time longer than the run), whose elapsed time
// is the header's unless --skip-bad imported a truncated trace, whose
// metrics compute to finite values, whose accounts are exactly those of
// the eager reference (no worker parked), and whose import allocated in
// proportion to the input, not to what its header declares.
func FuzzImport(f *testing.F) {
	rows := map[string]string{}
	for _, name := range bundledTraces {
		b, err := os.ReadFile("testdata/" + name + ".row")
		if err != nil {
			f.Fatal(err)
		}
		rows[name] = string(b)
	}
	omp, err := os.ReadFile("testdata/imagemagick_omp2.pcf")
	if err != nil {
		f.Fatal(err)
	}
	for i, h := range traceHeads(f, 60) {
		name := bundledTraces[i/2]
		pcf := smallPCF
		if strings.HasPrefix(name, "imagemagick") {
			pcf = string(omp)
		}
		f.Add(h, pcf, rows[name], i%4 == 3, uint8(0), uint8(i%3))
	}
	const head = "#Paraver (21/11/2026 at 10:00):1000_ns:1(3):1:1(3:1),0\n"
	f.Add([]byte(head+hybridRecords), smallPCF, "LEVEL NODE SIZE 1\nn1\n", false, uint8(1), uint8(0))
	f.Add([]byte("#Paraver (d):1000_ns:1(1):1:1(1000000000:1)\n"+hybridRecords), "", "", true, uint8(0), uint8(1))
	f.Add([]byte("#Paraver (d):10_ns:0:2:1(1:0):1(2:0)\n1:1:1:1:1:0:10:1\n1:1:2:1:1:0:10:1\n1:1:2:1:2:0:10:2\n"), "", "", false, uint8(2), uint8(0))
	f.Add([]byte("#Paraver (d):1000_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:300:1\n2:1:1:1:1:300:50000002:10\n1:1:1:1:1:300:400:13\n"), smallPCF, "", true, uint8(0), uint8(200))
	// Records back in time on their threads (regions and calls over the
	// same time twice), a primary named by events only.
	back := "2:1:1:1:1:0:60000001:1\n2:1:1:1:2:0:50000002:10\n2:1:1:1:1:1000:60000001:0\n2:1:1:1:2:1000:50000002:0\n"
	f.Add([]byte("#Paraver (d):1000_ns:1(1):1:1(2:1)\n"+back+back), smallPCF, "", false, uint8(0), uint8(0))
	f.Add([]byte(hybridTrace(7, 4)), smallPCF, "", false, uint8(0), uint8(0))
	defer smallBuffers()()
	zw := gzip.NewWriter(nil) // reused: a new one allocates its tables each time
	f.Fuzz(func(t *testing.T, prv []byte, pcfText, rowText string, skipBad bool, app, gz uint8) {
		opt := Options{SkipBad: skipBad, App: int(app % 4), Path: "fuzz.prv"}
		if p, err := ParsePCF(strings.NewReader(pcfText)); err == nil {
			opt.PCF = p
		}
		if r, err := ParseRow(strings.NewReader(rowText)); err == nil {
			opt.Row = r
		}
		in := prv
		if gz > 0 {
			var z bytes.Buffer
			zw.Reset(&z)
			zw.Write(prv)
			zw.Close()
			in = z.Bytes()
			if gz > 1 { // cut the compressed data
				in = in[:len(in)*int(gz)/256]
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, _, err := importStream(bytes.NewReader(in), opt)
		runtime.ReadMemStats(&after)
		// Small buffers (smallBuffers), gzip's state (about 50 KB a
		// reader) and a bounded multiple of the text: never the header's
		// declarations.
		if n, bound := after.TotalAlloc-before.TotalAlloc, uint64(1<<20+256*len(prv)); n > bound {
			t.Errorf("the import allocated %d bytes for %d bytes of trace (bound %d)", n, len(prv), bound)
		}
		if err != nil {
			if m != nil {
				t.Error("a measurement with the error")
			}
			if msg := err.Error(); msg == "" || strings.Contains(msg, "popmon bug") {
				t.Fatalf("error %q", msg)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("invalid measurement: %v", err)
		}
		h, err := ParseHeader(string(bytes.SplitN(prv, []byte("\n"), 2)[0]))
		if err != nil {
			t.Fatalf("imported a trace whose header does not parse: %v", err)
		}
		if m.Resources.Processes != len(m.Processes) || len(m.Regions) != 1 || len(m.Regions[0].Processes) != len(m.Processes) {
			t.Fatalf("resources %+v, %d processes, regions %d", m.Resources, len(m.Processes), len(m.Regions))
		}
		cpus, capacity := 0, int64(0)
		for _, a := range m.Regions[0].Processes {
			cpus += a.CPUs
			capacity = max(capacity, int64(a.CPUs)*a.ElapsedNS)
			for _, v := range []int64{a.UsefulNS, a.MPINS, a.OtherNS, a.MPIWorkerIdleNS, a.OMPSerializationNS, a.OMPLoadImbalanceNS,
				a.OMPSchedulingNS, a.PrimaryUsefulNS, a.PrimaryMPINS, a.PrimaryOtherNS, a.PrimaryParallelNS, a.PrimarySerialUsefulNS,
				a.ParallelUsefulNS, a.ThreadUsefulMaxNS, a.Instructions, a.Cycles, a.MPICalls, a.OMPParallels, a.OMPTasks} {
				if v < 0 {
					t.Fatalf("rank %d: a negative account: %+v", a.Rank, a)
				}
			}
			if got, want := sumAccounts(a), int64(a.CPUs)*a.ElapsedNS; got != want {
				t.Fatalf("rank %d: accounts sum to %d, want CPUs × elapsed = %d × %d: %+v", a.Rank, got, a.CPUs, a.ElapsedNS, a)
			}
			if a.ElapsedNS <= 0 || a.ElapsedNS > h.End || (!skipBad && a.ElapsedNS != h.End) {
				t.Fatalf("rank %d: elapsed %d, header end %d (skip-bad %v)", a.Rank, a.ElapsedNS, h.End, skipBad)
			}
			if a.ThreadUsefulMaxNS > a.UsefulNS || a.PrimaryUsefulNS > a.UsefulNS || a.PrimarySerialUsefulNS > a.PrimaryUsefulNS ||
				a.ParallelUsefulNS > a.UsefulNS || a.PrimaryMPINS > a.MPINS || a.PrimaryOtherNS > a.OtherNS || a.PrimaryParallelNS > a.ElapsedNS {
				t.Fatalf("rank %d: a part exceeds its whole: %+v", a.Rank, a)
			}
		}
		if cpus != m.Resources.CPUs {
			t.Fatalf("resources.cpus %d, processes' CPUs %d", m.Resources.CPUs, cpus)
		}
		for _, c := range m.MPICalls {
			if c.MinTimeNS > c.MaxTimeNS || c.TimeNS < c.MaxTimeNS || c.Calls < 1 || c.MaxTimeNS > capacity {
				t.Fatalf("MPI call %+v", c)
			}
		}
		checkMetrics(t, m)
		// Parking idle workers changes nothing.
		opt.eager = true
		ref, _, err := importStream(bytes.NewReader(in), opt)
		if err != nil {
			t.Fatalf("the eager reference fails where the import did not: %v", err)
		}
		if !reflect.DeepEqual(m.Regions, ref.Regions) || !reflect.DeepEqual(m.MPICalls, ref.MPICalls) || !reflect.DeepEqual(m.Warnings, ref.Warnings) {
			t.Fatalf("parked workers\n %+v\neager reference\n %+v", m.Regions[0].Processes, ref.Regions[0].Processes)
		}
	})
}

// checkMetrics computes every model's metrics of m: they must compute and
// be finite and non-negative.
func checkMetrics(t *testing.T, m *measure.Measurement) {
	t.Helper()
	reps, err := pop.ComputeAll(m)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	for _, r := range reps {
		for _, g := range r.Regions {
			for _, x := range g.Metrics {
				if x.Measured() && (math.IsNaN(x.Value) || math.IsInf(x.Value, 0) || x.Value < 0) {
					t.Fatalf("%s: %s = %v", r.Model, x.ID, x.Value)
				}
			}
		}
	}
}
