package trace

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fileWriter builds a native trace file as libpopmon writes it
// (docs/trace-format.md).
type fileWriter struct {
	rank, size int32
	names      []string
	recs       []record
	noTrailer  bool
	host       string   // default node1
	regions    []string // the region names chunk, when set
	rawChunks  [][]byte // appended as they are
}

func (w *fileWriter) bytes() []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	h := make([]byte, headerSize)
	copy(h, nativeMagic)
	le.PutUint32(h[8:], nativeVersion)
	le.PutUint32(h[12:], headerSize)
	le.PutUint32(h[16:], recordSize)
	le.PutUint32(h[20:], uint32(w.rank))
	le.PutUint32(h[24:], uint32(w.size))
	b.Write(h)
	chunk := func(typ uint32, body []byte) {
		c := make([]byte, chunkHeader)
		le.PutUint32(c, typ)
		le.PutUint64(c[8:], uint64(len(body)))
		b.Write(c)
		b.Write(body)
	}
	chunk(chunkNames, []byte(strings.Join(w.names, "\x00")+"\x00"))
	var rb bytes.Buffer
	for _, r := range w.recs {
		x := make([]byte, recordSize)
		le.PutUint64(x, r.enter)
		le.PutUint64(x[8:], r.leave)
		le.PutUint16(x[16:], r.fn)
		x[18], x[19] = r.kind, r.flags
		le.PutUint32(x[20:], r.comm)
		le.PutUint32(x[24:], uint32(r.peer))
		le.PutUint32(x[28:], uint32(r.tag))
		le.PutUint32(x[32:], r.req)
		le.PutUint32(x[36:], r.bytes)
		rb.Write(x)
	}
	chunk(chunkRecords, rb.Bytes())
	if w.regions != nil {
		chunk(chunkRegions, []byte(strings.Join(w.regions, "\x00")+"\x00"))
	}
	for _, c := range w.rawChunks {
		b.Write(c)
	}
	if !w.noTrailer {
		t := make([]byte, trailerSize)
		le.PutUint64(t[16:], math.Float64bits(1)) // ticks are ns
		le.PutUint64(t[40:], uint64(len(w.recs)))
		host := w.host
		if host == "" {
			host = "node1"
		}
		copy(t[64:], host)
		chunk(chunkTrailer, t)
	}
	return b.Bytes()
}

var testNames = []string{"MPI_Init", "MPI_Finalize", "MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Waitall", "MPI_Bcast", "MPI_Isend"}

const (
	fnInit = iota
	fnFinalize
	fnSend
	fnRecv
	fnIrecv
	fnWaitall
	fnBcast
	fnIsend
)

func call(fn uint16, enter, leave uint64, flags uint8, peer, tag int32, req, bytes uint32) record {
	c := uint32(0)
	if flags == 0 {
		c = noComm
	}
	return record{enter: enter, leave: leave, fn: fn, kind: recCall, flags: flags, comm: c, peer: peer, tag: tag, req: req, bytes: bytes}
}

func writeDir(t *testing.T, files ...*fileWriter) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		name := filepath.Join(dir, "rank-"+strings.Repeat("0", 5)+string(rune('0'+f.rank))+".trace")
		if err := os.WriteFile(name, f.bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// twoRanks: rank 1 sends 3 messages (tags 5, 6, 5) then a broadcast;
// rank 0 receives the first with MPI_Recv(MPI_ANY_SOURCE), the other two
// with MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) completed by MPI_Waitall
// (the statuses give the actual tags). Rank 1 is on another node, whose
// clock is 1000 ns ahead.
func twoRanks() (*fileWriter, *fileWriter) {
	clock := func(tick uint64, phase int32) record {
		return record{enter: tick, leave: tick, kind: recClock, peer: phase}
	}
	r0 := &fileWriter{rank: 0, size: 2, names: testNames, recs: []record{
		clock(100, 0),
		call(fnInit, 10, 100, 0, -1, 0, 0, 0),
		call(fnRecv, 200, 300, flRecv, 1, 5, 0, 64),
		call(fnIrecv, 310, 320, flRecv|32, -1, -1, 1, 128),
		call(fnIrecv, 330, 340, flRecv|32, -1, -1, 2, 128),
		{enter: 350, kind: recDone, flags: flRecv, comm: 0, peer: 1, tag: 6, req: 1, bytes: 16},
		{enter: 350, kind: recDone, flags: flRecv, comm: 0, peer: 1, tag: 5, req: 2, bytes: 32},
		call(fnWaitall, 350, 400, 0, -1, 0, 0, 0),
		{enter: 410, kind: recPart, flags: flColl | flRecv, comm: 0, peer: 0, bytes: 0},
		call(fnBcast, 410, 420, flColl|flSend, 0, 0, 0, 8),
		{enter: 150, leave: 450, kind: recRegion, peer: 1}, // outer, recorded after inner
		{enter: 100, leave: 495, kind: recRegion, peer: 2},
		call(fnFinalize, 500, 500, 0, -1, 0, 0, 0),
		clock(510, 1),
	}, regions: []string{"Global", "solve", "setup"}}
	r1 := &fileWriter{rank: 1, size: 2, names: testNames, host: "node2", recs: []record{
		clock(1100, 0),
		call(fnInit, 1010, 1100, 0, -1, 0, 0, 0),
		call(fnSend, 1150, 1160, flSend, 0, 5, 0, 64),
		call(fnIsend, 1170, 1180, flSend, 0, 6, 7, 16),
		call(fnSend, 1190, 1200, flSend, 0, 5, 0, 32),
		{enter: 1410, kind: recPart, flags: flColl | flRecv, comm: 0, peer: 0, bytes: 8},
		call(fnBcast, 1410, 1420, flColl|flSend, 0, 0, 0, 0),
		call(fnFinalize, 1500, 1500, 0, -1, 0, 0, 0),
		clock(1510, 1),
	}}
	return r0, r1
}

func TestReadDirMatches(t *testing.T) {
	r0, r1 := twoRanks()
	tr, err := ReadDir(writeDir(t, r0, r1))
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		tag                                    int32
		bytes                                  int64
		sendCall, sendDone, recvPost, recvDone int32
	}
	want := []msg{
		{5, 64, 1, 1, 1, 1},  // MPI_Send → MPI_Recv(ANY_SOURCE)
		{6, 16, 2, -1, 2, 4}, // MPI_Isend (completion not seen) → first MPI_Irecv, by its status's tag
		{5, 32, 3, 3, 3, 4},  // second MPI_Send (tag 5) → second MPI_Irecv
	}
	if len(tr.Messages) != len(want) {
		t.Fatalf("%d messages, want %d: %+v (notes %v)", len(tr.Messages), len(want), tr.Messages, tr.Notes)
	}
	got := map[int64]msg{}
	for _, m := range tr.Messages {
		if m.Src != 1 || m.Dst != 0 || m.Comm != 0 {
			t.Errorf("message %+v: want 1 → 0 on MPI_COMM_WORLD", m)
		}
		got[m.Bytes] = msg{m.Tag, m.Bytes, m.SendCall, m.SendDone, m.RecvPost, m.RecvDone}
	}
	for _, w := range want {
		if got[w.bytes] != w {
			t.Errorf("message of %d bytes: %+v, want %+v", w.bytes, got[w.bytes], w)
		}
	}
	// Clocks: rank 1's sync ticks are 1000 ahead: its calls land on rank
	// 0's time line; the trace starts at the end of MPI_Init (100, where
	// the measurement starts), and MPI_Init keeps only what follows it.
	if c := tr.Ranks[1].Calls[1]; c.Name != "MPI_Send" || c.Enter != 50 || c.Leave != 60 {
		t.Errorf("rank 1's MPI_Send: %+v, want [50, 60] after alignment", c)
	}
	if c := tr.Ranks[0].Calls[0]; c.Kind != KindInit || c.Enter != 0 || c.Leave != 0 {
		t.Errorf("rank 0's MPI_Init: %+v, want [0, 0]", c)
	}
	if sp := tr.Ranks[0].Spans; len(sp) != 2 || sp[0].Name != "setup" || sp[0].Enter != 0 || sp[1].Name != "solve" || sp[1].Leave != 350 || sp[0].Kind != "region" {
		t.Errorf("rank 0's spans %+v: want setup [0, 395] then solve [50, 350]", sp)
	}
	b := tr.Ranks[1].Calls[4]
	if b.Kind != KindCollective || b.Coll != CollBcast || b.Root != 0 || b.RecvBytes != 8 || b.SendBytes != 0 {
		t.Errorf("rank 1's MPI_Bcast: %+v", b)
	}
	if w := tr.Ranks[0].Calls[4]; w.Kind != KindWait || w.RecvBytes != 48 {
		t.Errorf("rank 0's MPI_Waitall: %+v, want a wait that received 48 bytes", w)
	}
	// On one node the ticks need no offset (the calibration gives the
	// node's CLOCK_MONOTONIC): the same files with rank 1 on node1.
	r1.host = "node1"
	same, err := ReadDir(writeDir(t, r0, r1))
	if err != nil {
		t.Fatal(err)
	}
	if c := same.Ranks[1].Calls[1]; c.Enter != 1050 {
		t.Errorf("rank 1's MPI_Send on rank 0's node: enter %d, want 1050 (no offset)", c.Enter)
	}
	if tr.Ranks[0].Node != "node1" || tr.Ranks[1].Node != "node2" || tr.End != 400 {
		t.Errorf("node %q, end %d; want node1, 400 (rank 0's MPI_Finalize, from the end of MPI_Init)", tr.Ranks[0].Node, tr.End)
	}
}

func TestReadDirHostile(t *testing.T) {
	le := binary.LittleEndian
	tests := []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, "not a popmon trace file"},
		{"version", func(b []byte) []byte { le.PutUint32(b[8:], 9); return b }, "version 9"},
		{"record size", func(b []byte) []byte { le.PutUint32(b[16:], 48); return b }, "record size 48"},
		{"rank", func(b []byte) []byte { le.PutUint32(b[20:], 7); return b }, "rank 7 of 1"},
		{"header size", func(b []byte) []byte { le.PutUint32(b[12:], 1<<30); return b }, "header size"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-5] }, "beyond the end"},
		{"chunk type", func(b []byte) []byte {
			return append(b, []byte{9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}...)
		}, "unknown chunk type 9"},
		{"huge chunk", func(b []byte) []byte {
			c := make([]byte, chunkHeader)
			le.PutUint32(c, chunkRecords)
			le.PutUint64(c[8:], math.MaxUint64)
			return append(b, c...)
		}, "beyond the end"},
		{"odd records", func(b []byte) []byte {
			c := make([]byte, chunkHeader+3)
			le.PutUint32(c, chunkRecords)
			le.PutUint64(c[8:], 3)
			return append(b, c...)
		}, "not a multiple of 40"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &fileWriter{rank: 0, size: 1, names: testNames, recs: []record{call(fnInit, 1, 2, 0, -1, 0, 0, 0)}}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "rank-000000.trace"), tt.edit(w.bytes()), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadDir(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	cases := []struct {
		name string
		w    *fileWriter
		want string
	}{
		{"no trailer", &fileWriter{rank: 0, size: 1, names: testNames, noTrailer: true}, "no trailer"},
		{"function id", &fileWriter{rank: 0, size: 1, names: testNames, recs: []record{call(99, 1, 2, 0, -1, 0, 0, 0)}}, "call id 99"},
		{"members without comm", &fileWriter{rank: 0, size: 1, names: testNames, recs: []record{{kind: recMembers, comm: 3}}}, "outside its record"},
		{"huge comm", &fileWriter{rank: 0, size: 1, names: testNames, recs: []record{{kind: recComm, comm: 3, peer: -5}}}, "of -5 members"},
		{"record kind", &fileWriter{rank: 0, size: 1, names: testNames, recs: []record{{kind: 77}}}, "unknown record kind 77"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadDir(writeDir(t, tt.w))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := ReadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no trace files") {
		t.Errorf("empty folder: %v", err)
	}
	r0, _ := twoRanks()
	dup := *r0
	d := writeDir(t, r0)
	if err := os.WriteFile(filepath.Join(d, "rank-000001.trace"), dup.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(d); err == nil || !strings.Contains(err.Error(), "both rank 0") {
		t.Errorf("two files of rank 0: %v", err)
	}
}

func TestCallKind(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		coll Coll
	}{
		{"MPI_Send_c", KindSend, CollNone},
		{"MPI_Sendrecv_replace", KindSendrecv, CollNone},
		{"MPI_Irecv", KindIrecv, CollNone},
		{"MPI_Waitsome", KindWait, CollNone},
		{"MPI_Iprobe", KindProbe, CollNone},
		{"MPI_Allreduce", KindCollective, CollAllreduce},
		{"MPI_Iallreduce", KindICollective, CollAllreduce},
		{"MPI_Ibarrier", KindICollective, CollBarrier},
		{"MPI_Bcast_init", KindICollective, CollBcast},
		{"MPI_Reduce_scatter_block", KindCollective, CollReduceScatter},
		{"MPI_Neighbor_alltoall", KindCollective, CollOther},
		{"MPI_Comm_rank", KindOther, CollNone},
		{"MPI_Init_thread", KindInit, CollNone},
		{"MPI_Test_cancelled", KindOther, CollNone},
		{"MPI_Testsome", KindWait, CollNone},
		{"MPI_Ineighbor_alltoallw", KindICollective, CollOther},
		{"MPI_Wtime", KindOther, CollNone}, // not intercepted
	}
	for _, tt := range tests {
		if k, c := CallKind(tt.name); k != tt.kind || c != tt.coll {
			t.Errorf("CallKind(%s) = %d, %d; want %d, %d", tt.name, k, c, tt.kind, tt.coll)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	r0, r1 := twoRanks()
	f.Add(r0.bytes())
	f.Add(r1.bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := parseData("fuzz", data)
		if err != nil {
			return
		}
		_, _ = build([]*rankFile{rf}, rf.size, "fuzz") // must not panic
	})
}

// TestReadDirOffsets: a node leader's OFFSET records (ping-pong offsets to
// rank 0 at MPI_Init and MPI_Finalize) replace the barrier estimate, which
// a rank that left the barrier late skews: here rank 1's CLOCK records say
// 1000 ns but the measured offsets are 990 at MPI_Init and 970 at
// MPI_Finalize (interpolated in between); a damaged offset (over a day)
// is ignored.
func TestReadDirOffsets(t *testing.T) {
	off := func(at uint64, offset int64, phase int32) record {
		return record{enter: at, leave: uint64(offset), kind: recOffset, peer: phase}
	}
	r0, r1 := twoRanks()
	recs := append([]record(nil), r1.recs[:2]...)
	recs = append(recs, off(1100, -990, 0))
	recs = append(recs, r1.recs[2:]...)
	recs = append(recs, off(1510, -970, 1))
	r1.recs = recs
	tr, err := ReadDir(writeDir(t, r0, r1))
	if err != nil {
		t.Fatal(err)
	}
	// MPI_Send at 1150: offset −990 + 20·(1150−1100)/(1510−1100) = −987.56,
	// so 162.44 on rank 0's line, 62 after the origin (rank 0's end of
	// MPI_Init, 100).
	if c := tr.Ranks[1].Calls[1]; c.Name != "MPI_Send" || c.Enter != 62 {
		t.Errorf("rank 1's MPI_Send: %+v, want enter 62 with the measured offsets", c)
	}
	// A damaged offset is ignored: the barrier estimate (1000) applies.
	r0, r1 = twoRanks()
	r1.recs = append(append(append([]record(nil), r1.recs[:2]...), off(1100, 1<<62, 0)), r1.recs[2:]...)
	tr, err = ReadDir(writeDir(t, r0, r1))
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Ranks[1].Calls[1]; c.Enter != 50 {
		t.Errorf("rank 1's MPI_Send with a damaged offset: enter %d, want 50 (barrier estimate)", c.Enter)
	}
}
