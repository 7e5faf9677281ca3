package paraver

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// readAll returns copies of every record, or the first error.
func readAll(t *testing.T, text string) ([]Record, error) {
	t.Helper()
	rd, err := NewReader(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	var out []Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		c := *rec
		c.Events = append([]Event(nil), rec.Events...)
		out = append(out, c)
	}
}

func TestReaderRecords(t *testing.T) {
	text := "#Paraver (09/10/2019 at 16:09):1000_ns:1(2):1:2(1:1,1:1),1\n" +
		"c:1:1:2:1:2\n" +
		"new format\n" +
		"# a comment\n" +
		"\n" +
		"1:1:1:1:1:0:956810:2\r\n" +
		"2:2:1:2:1:7:50000003:31:42000050:18446744073709551615\n" +
		"3:1:1:1:1:10:11:2:1:2:1:20:21:41360:7\n" +
		"4:1:2:3\n" +
		"1:2:1:2:1:5:6:1" // no final newline
	got, err := readAll(t, text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Kind: KindState, CPU: 1, App: 1, Task: 1, Thread: 1, Time: 0, End: 956810, State: 2, Events: []Event{}},
		{Kind: KindEvent, CPU: 2, App: 1, Task: 2, Thread: 1, Time: 7, End: 956810, State: 2,
			Events: []Event{{50000003, 31}, {42000050, 1<<64 - 1}}},
		{Kind: KindComm, CPU: 1, App: 1, Task: 1, Thread: 1, Time: 10, End: 956810, State: 2,
			Events: []Event{{50000003, 31}, {42000050, 1<<64 - 1}},
			Comm: Comm{RecvCPU: 2, RecvApp: 1, RecvTask: 2, RecvThread: 1, LogicalSend: 10, PhysicalSend: 11,
				LogicalRecv: 20, PhysicalRecv: 21, Size: 41360, Tag: 7}},
	}
	// The reader reuses its record: fields of other kinds keep old values.
	// Compare only what each kind defines.
	if len(got) != 5 {
		t.Fatalf("got %d records, want 5 (state, event, comm, global comm, state)", len(got))
	}
	if g := got[0]; g.Kind != KindState || g.Task != 1 || g.Time != 0 || g.End != 956810 || g.State != 2 {
		t.Errorf("state = %+v, want %+v", g, want[0])
	}
	if g := got[1]; g.Kind != KindEvent || g.Task != 2 || g.Time != 7 || !reflect.DeepEqual(g.Events, want[1].Events) {
		t.Errorf("event = %+v, want %+v", g, want[1])
	}
	if g := got[2]; g.Kind != KindComm || g.Time != 10 || g.Comm != want[2].Comm {
		t.Errorf("comm = %+v, want %+v", g.Comm, want[2].Comm)
	}
	if got[3].Kind != KindGlobalComm {
		t.Errorf("record 4 kind = %d, want global comm", got[3].Kind)
	}
	if g := got[4]; g.Kind != KindState || g.Task != 2 || g.Time != 5 || g.End != 6 || g.State != 1 {
		t.Errorf("last state (no final newline) = %+v", g)
	}
}

func TestReaderMalformedLines(t *testing.T) {
	const head = "#Paraver (d):1000_ns:1(1):1:1(1:1)\n1:1:1:1:1:0:10:1\n"
	cases := []struct{ line, want string }{
		{"1:1:1:1:1:0:10", "malformed state record"},
		{"1:1:1:1:1:0:10:1:5", "malformed state record"},
		{"1:1:1:1:1:10:5:1", "ends before it begins"},
		{"1:1:1:1:1:0:1x:1", "malformed state record"},
		{"1:1:1:1:1:0:99999999999999999999:1", "malformed state record"},
		{"2:1:1:1:1:5", "malformed event record"},
		{"2:1:1:1:1:5:50000001", "malformed event record"},
		{"2:1:1:1:1:5:50000001:1:", "malformed event record"},
		{"3:1:1:1:1:10:11:2:1:2:1:20:21:41360", "malformed communication record"},
		{"1:1:0:1:1:0:10:1", "object ids"},
		{"3:1:1:1:1:10:11:2:1:0:1:20:21:41360:7", "object ids"},
		{"9:1:1:1:1:0:10:1", "unknown record type"},
		{"1;1;1", "unknown record type"},
		{"hello", "unknown record type"},
	}
	for _, c := range cases {
		_, err := readAll(t, head+c.line+"\n1:1:1:1:1:10:20:1\n")
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != 3 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a SyntaxError at line 3 mentioning %q", c.line, err, c.want)
		}
	}
}

func TestReaderContinuesAfterSyntaxError(t *testing.T) {
	rd, err := NewReader(strings.NewReader("#Paraver (d):1000_ns:1(1):1:1(1:1)\nbad\n1:1:1:1:1:0:10:1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); err == nil {
		t.Fatal("no error for a bad line")
	}
	rec, err := rd.Next()
	if err != nil || rec.Kind != KindState || rd.Line() != 3 {
		t.Fatalf("after a bad line: %+v, %v at line %d", rec, err, rd.Line())
	}
}

func TestReaderLongLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("#Paraver (d):1000_ns:1(1):1:1(1:1)\n2:1:1:1:1:5")
	n := 0
	for b.Len() < 3*readBufferSize {
		b.WriteString(":42000050:123")
		n++
	}
	b.WriteString("\n")
	got, err := readAll(t, b.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Events) != n {
		t.Fatalf("got %d records, %d events; want 1 record with %d events", len(got), len(got[0].Events), n)
	}
}

func TestReaderTruncatedGzip(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("#Paraver (d):1000_ns:1(1):1:1(1:1)\n" + strings.Repeat("1:1:1:1:1:0:10:1\n", 10000)))
	zw.Close()
	cut := z.Bytes()[:z.Len()/2]
	zr, err := gzip.NewReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(zr)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = rd.Next()
		if err != nil {
			break
		}
	}
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("error %v, want a SyntaxError saying the trace is truncated", err)
	}
}

func TestReaderEmptyAndHeaderless(t *testing.T) {
	if _, err := NewReader(strings.NewReader("")); err == nil || !strings.Contains(err.Error(), "empty trace") {
		t.Errorf("empty: %v", err)
	}
	_, err := NewReader(strings.NewReader("1:1:1:1:1:0:10:1\n"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 1 {
		t.Errorf("headerless: %v, want a SyntaxError at line 1", err)
	}
}

func TestParsePCFAndRow(t *testing.T) {
	pcf := `DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC

STATES
0    Idle
1    Running
13    Group Communication

STATES_COLOR
0    {117,195,255}

EVENT_TYPE
9   50000001    MPI Point-to-point
9   50000002    MPI Collective Comm
VALUES
0   Outside MPI
10   MPI_Allreduce

EVENT_TYPE
7  42000050 PAPI_TOT_INS [Instr completed]
`
	p, err := ParsePCF(strings.NewReader(pcf))
	if err != nil {
		t.Fatal(err)
	}
	if p.States[1] != "Running" || p.States[13] != "Group Communication" {
		t.Errorf("states = %v", p.States)
	}
	if p.Types[42000050] != "PAPI_TOT_INS [Instr completed]" || p.Types[50000002] != "MPI Collective Comm" {
		t.Errorf("types = %v", p.Types)
	}
	if p.ValueName(50000001, 10) != "MPI_Allreduce" || p.ValueName(50000002, 10) != "MPI_Allreduce" || p.ValueName(42000050, 10) != "" {
		t.Errorf("values = %v", p.Values)
	}
	if _, err := ParsePCF(strings.NewReader("STATES\n1x Running\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad state line: %v", err)
	}

	row, err := ParseRow(strings.NewReader("LEVEL CPU SIZE 2\n1.vetinari\n2.vetinari\n\nLEVEL NODE SIZE 1\nvetinari\n\nLEVEL THREAD SIZE 2\nTHREAD 1.1.1\nTHREAD 1.1.2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(row.Nodes, []string{"vetinari"}) || len(row.Threads) != 2 {
		t.Errorf("row = %+v", row)
	}
	if _, err := ParseRow(strings.NewReader("LEVEL NODE SIZE 1\na\nb\n")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("extra name: %v", err)
	}
}

func TestImportFileTruncatedGzipAndPlain(t *testing.T) {
	dir := t.TempDir()
	text := "#Paraver (d):10_ns:1(1):1:1(1:1)\n" + strings.Repeat("1:1:1:1:1:0:10:1\n", 200000)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text))
	zw.Close()
	cut := dir + "/cut.prv.gz"
	if err := os.WriteFile(cut, z.Bytes()[:z.Len()*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportFile(cut, Options{}, nil); err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), "cut.prv.gz") {
		t.Errorf("truncated gzip: %v", err)
	}
	// Plain text named .prv.gz and gzip named .prv: content decides.
	plain := dir + "/plain.prv.gz"
	os.WriteFile(plain, []byte(text), 0o644)
	zipped := dir + "/zipped.prv"
	os.WriteFile(zipped, z.Bytes(), 0o644)
	for _, p := range []string{plain, zipped} {
		var calls int
		m, err := ImportFile(p, Options{}, func(read, size int64) { calls++ })
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if m.Regions[0].Processes[0].UsefulNS != 10 || calls == 0 {
			t.Errorf("%s: useful %d, progress calls %d", p, m.Regions[0].Processes[0].UsefulNS, calls)
		}
		if len(m.Source.Notes) < 2 || !strings.Contains(strings.Join(m.Source.Notes, "\n"), "no .pcf") {
			t.Errorf("%s: notes %q", p, m.Source.Notes)
		}
	}
}
