package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The native trace files (docs/trace-format.md): one per rank,
// rank-NNNNNN.trace, a 64-byte header then chunks.
const (
	nativeMagic   = "POPMTRC1"
	nativeVersion = 1
	headerSize    = 64
	recordSize    = 40
	chunkHeader   = 16
	trailerSize   = 128

	chunkRecords = 1
	chunkNames   = 2
	chunkTrailer = 3
	chunkRegions = 4
	chunkOMP     = 5

	recCall    = 1
	recPart    = 2
	recDone    = 3
	recStart   = 4
	recComm    = 5
	recMembers = 6
	recFlush   = 7
	recClock   = 8
	recRegion  = 9
	recOMP     = 10
	recOffset  = 11

	flSend       = 1
	flRecv       = 2
	flColl       = 4
	flPersistent = 8
	flProcNull   = 16

	noComm = 0xffffffff

	// Bounds on what a (hostile) file may declare.
	maxNamesBytes = 1 << 20
	maxCommSize   = 1 << 24
	maxRanks      = 1 << 20
)

// record is one 40-byte record as written.
type record struct {
	enter, leave uint64
	fn           uint16
	kind, flags  uint8
	comm         uint32
	peer, tag    int32
	req, bytes   uint32
}

// rankFile is one rank's file, parsed.
type rankFile struct {
	path         string
	rank, size   int32
	names        []string
	regions      []string            // user region names by index (REGION records)
	constructs   map[int32]string    // OpenMP constructs by slot (OMP records)
	threads      map[uint32][]record // in file order
	order        []uint32            // threads in order of first chunk
	hasTrailer   bool
	t0Tick       uint64
	t0NS         uint64
	nsPerTick    float64
	records      int64
	flushes      int64
	hostname     string
	fileBytes    int64
	syncA, syncB uint64 // CLOCK ticks at Init (A) and Finalize (B); 0 when absent
	// off holds a node leader's OFFSET records at Init (0) and Finalize
	// (1): its CLOCK_MONOTONIC ns then and its offset to rank 0's.
	off [2]struct {
		at, offset float64
		ok         bool
	}
}

// parseFile reads and bounds-checks one rank's trace file.
func parseFile(path string) (*rankFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseData(path, data)
}

// parseData parses the bytes of the file at path.
func parseData(path string, data []byte) (*rankFile, error) {
	bad := func(off int, format string, args ...any) error {
		return fmt.Errorf("%s: byte %d: %s", path, off, fmt.Sprintf(format, args...))
	}
	le := binary.LittleEndian
	if len(data) < headerSize || string(data[:8]) != nativeMagic {
		return nil, fmt.Errorf("%s: not a popmon trace file (no %s header)", path, nativeMagic)
	}
	if v := le.Uint32(data[8:]); v != nativeVersion {
		return nil, fmt.Errorf("%s: trace format version %d, this popmon reads %d", path, v, nativeVersion)
	}
	hs, rs := le.Uint32(data[12:]), le.Uint32(data[16:])
	if hs < headerSize || int64(hs) > int64(len(data)) {
		return nil, bad(12, "header size %d", hs)
	}
	if rs != recordSize {
		return nil, bad(16, "record size %d, want %d", rs, recordSize)
	}
	f := &rankFile{path: path, rank: int32(le.Uint32(data[20:])), size: int32(le.Uint32(data[24:])),
		threads: map[uint32][]record{}, fileBytes: int64(len(data))}
	if f.size <= 0 || f.size > maxRanks || f.rank < 0 || f.rank >= f.size {
		return nil, bad(20, "rank %d of %d", f.rank, f.size)
	}
	for off := int(hs); off < len(data); {
		if len(data)-off < chunkHeader {
			return nil, bad(off, "truncated chunk header")
		}
		typ, thread, n := le.Uint32(data[off:]), le.Uint32(data[off+4:]), le.Uint64(data[off+8:])
		off += chunkHeader
		if n > uint64(len(data)-off) {
			return nil, bad(off, "chunk of %d bytes beyond the end of the file", n)
		}
		body := data[off : off+int(n)]
		switch typ {
		case chunkRecords:
			if n%recordSize != 0 {
				return nil, bad(off, "records chunk of %d bytes (not a multiple of %d)", n, recordSize)
			}
			if _, ok := f.threads[thread]; !ok {
				f.order = append(f.order, thread)
			}
			recs := f.threads[thread]
			for i := 0; i < len(body); i += recordSize {
				r := body[i : i+recordSize]
				recs = append(recs, record{enter: le.Uint64(r), leave: le.Uint64(r[8:]), fn: le.Uint16(r[16:]),
					kind: r[18], flags: r[19], comm: le.Uint32(r[20:]), peer: int32(le.Uint32(r[24:])),
					tag: int32(le.Uint32(r[28:])), req: le.Uint32(r[32:]), bytes: le.Uint32(r[36:])})
			}
			f.threads[thread] = recs
		case chunkNames:
			if n > maxNamesBytes {
				return nil, bad(off, "names chunk of %d bytes", n)
			}
			f.names = strings.Split(strings.TrimRight(string(body), "\x00"), "\x00")
		case chunkRegions:
			if n > maxNamesBytes {
				return nil, bad(off, "region names chunk of %d bytes", n)
			}
			f.regions = strings.Split(strings.TrimRight(string(body), "\x00"), "\x00")
		case chunkOMP:
			if n > maxNamesBytes {
				return nil, bad(off, "OpenMP constructs chunk of %d bytes", n)
			}
			f.constructs = map[int32]string{}
			for _, line := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
				idx, name, ok := strings.Cut(line, " ")
				if k, err := strconv.ParseInt(idx, 10, 32); ok && err == nil {
					f.constructs[int32(k)] = strings.ToValidUTF8(name, "?")
				}
			}
		case chunkTrailer:
			if n < trailerSize {
				return nil, bad(off, "trailer of %d bytes", n)
			}
			f.hasTrailer = true
			f.t0Tick, f.t0NS = le.Uint64(body), le.Uint64(body[8:])
			f.nsPerTick = math.Float64frombits(le.Uint64(body[16:]))
			f.records, f.flushes = int64(le.Uint64(body[40:])), int64(le.Uint64(body[48:]))
			host := body[64:128]
			if i := bytes.IndexByte(host, 0); i >= 0 {
				host = host[:i]
			}
			f.hostname = strings.ToValidUTF8(string(host), "?")
		default:
			return nil, bad(off-chunkHeader, "unknown chunk type %d", typ)
		}
		off += int(n)
	}
	if !f.hasTrailer {
		return nil, fmt.Errorf("%s: no trailer: the process ended before MPI_Finalize wrote its trace", path)
	}
	if !(f.nsPerTick > 0 && f.nsPerTick < 1e6) {
		return nil, fmt.Errorf("%s: clock calibration %g ns per tick", path, f.nsPerTick)
	}
	if f.names == nil {
		return nil, fmt.Errorf("%s: no function names", path)
	}
	return f, nil
}

// ns converts a tick of f's clock to f's nanoseconds.
func (f *rankFile) ns(tick uint64) float64 {
	return float64(f.t0NS) + float64(int64(tick-f.t0Tick))*f.nsPerTick
}

// DirInfo sums what a folder's trace files hold.
type DirInfo struct {
	// Records is the records over every file (what the trailers count);
	// Bytes the files' sizes; Flushes the buffer flushes during the run.
	Records, Bytes, Flushes int64
}

// DirStats sums the trace files of dir (unreadable files count nothing).
func DirStats(dir string) DirInfo {
	var d DirInfo
	paths, _ := filepath.Glob(filepath.Join(dir, "rank-*.trace"))
	for _, p := range paths {
		if f, err := parseFile(p); err == nil {
			d.Records += f.records
			d.Bytes += f.fileBytes
			d.Flushes += f.flushes
		}
	}
	return d
}

// ReadDir reads the per-rank trace files that libpopmon wrote under
// `popmon run --trace` into dir, aligns their clocks and matches their
// messages.
func ReadDir(dir string) (*Trace, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "rank-*.trace"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no trace files (rank-*.trace)", dir)
	}
	var files []*rankFile
	size := int32(-1)
	seen := map[int32]string{}
	for _, p := range paths {
		f, err := parseFile(p)
		if err != nil {
			return nil, err
		}
		if size >= 0 && f.size != size {
			return nil, fmt.Errorf("%s: a job of %d ranks, %s of %d", p, f.size, files[0].path, size)
		}
		if other, dup := seen[f.rank]; dup {
			return nil, fmt.Errorf("%s and %s are both rank %d", other, p, f.rank)
		}
		seen[f.rank], size = p, f.size
		files = append(files, f)
	}
	return build(files, size, "popmon: "+dir)
}

// build turns the parsed files of a job of size ranks into a Trace.
func build(files []*rankFile, size int32, source string) (*Trace, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].rank < files[j].rank })
	tr := &Trace{Ranks: make([]Rank, size), Comms: []Comm{worldComm(size)}, Source: source}
	if int(size) != len(files) {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d of the job's %d ranks left a trace file", len(files), size))
	}
	align := clockAlignment(files, tr)
	b := &builder{tr: tr, comms: map[string]int32{}}
	for _, f := range files {
		if err := b.rank(f, align[f.rank]); err != nil {
			return nil, err
		}
	}
	b.match()
	b.shift()
	return tr, nil
}

func worldComm(n int32) Comm {
	m := make([]int32, n)
	for i := range m {
		m[i] = int32(i)
	}
	return Comm{Members: m}
}

// maxClockOffsetNS bounds the clock offsets the reader accepts from
// OFFSET records (a day): a larger one is damage, and the barrier estimate
// is used instead.
const maxClockOffsetNS = 86400e9

// clock is a rank's mapping from its ticks to the common time line (ns).
type clock struct {
	f           *rankFile
	a, oa, ob   float64 // the rank's ns at Init's sync, offsets there and at Finalize's
	b           float64
	interpolate bool
}

func (c clock) at(tick uint64) float64 {
	t := c.f.ns(tick)
	if !c.interpolate {
		return t + c.oa
	}
	return t + c.oa + (c.ob-c.oa)*(t-c.a)/(c.b-c.a)
}

// clockAlignment maps each rank's ticks to the lowest rank's time line.
// Ranks on the lowest rank's node need no offset: each file's calibration
// converts its ticks to the node's CLOCK_MONOTONIC, common to the node.
// Another node's offset is its leader's, measured by ping-pong with rank 0
// at MPI_Init and MPI_Finalize (OFFSET records) and linearly interpolated
// between them; for files without them, the median over its ranks of the
// difference
// to the lowest rank at the CLOCK records after the barriers at MPI_Init
// and at MPI_Finalize (ranks leave a barrier at nearly the same moment;
// the median discounts the ones that were descheduled), linearly
// interpolated between the two.
func clockAlignment(files []*rankFile, tr *Trace) map[int32]clock {
	for _, f := range files {
		for _, recs := range f.threads {
			for _, r := range recs {
				if r.kind == recClock && r.peer == 0 && f.syncA == 0 {
					f.syncA = r.enter
				} else if r.kind == recClock && r.peer == 1 && f.syncB == 0 {
					f.syncB = r.enter
				} else if r.kind == recOffset && (r.peer == 0 || r.peer == 1) && !f.off[r.peer].ok &&
					math.Abs(float64(int64(r.leave))) < maxClockOffsetNS {
					o := &f.off[r.peer]
					o.at, o.offset, o.ok = float64(r.enter), float64(int64(r.leave)), true
				}
			}
		}
	}
	ref := files[0]
	median := func(v []float64) float64 {
		sort.Float64s(v)
		if n := len(v); n%2 == 1 {
			return v[n/2]
		} else {
			return (v[n/2-1] + v[n/2]) / 2
		}
	}
	type nodeOffset struct {
		oa, ob     float64
		hasA, hasB bool
	}
	nodes := map[string]*nodeOffset{}
	var da, db = map[string][]float64{}, map[string][]float64{}
	for _, f := range files {
		if f.hostname == ref.hostname {
			continue
		}
		if ref.syncA != 0 && f.syncA != 0 {
			da[f.hostname] = append(da[f.hostname], ref.ns(ref.syncA)-f.ns(f.syncA))
		}
		if ref.syncB != 0 && f.syncB != 0 {
			db[f.hostname] = append(db[f.hostname], ref.ns(ref.syncB)-f.ns(f.syncB))
		}
	}
	for host, v := range da {
		n := &nodeOffset{oa: median(v), hasA: true}
		if w := db[host]; len(w) > 0 {
			n.ob, n.hasB = median(w), true
		}
		nodes[host] = n
	}
	// Offsets measured by ping-pong between the node leaders (OFFSET
	// records; files of libraries before them have none) replace the
	// barrier estimate for their node: every rank of the node shares its
	// leader's CLOCK_MONOTONIC.
	measured := map[string]*rankFile{}
	for _, f := range files {
		if f.hostname != ref.hostname && f.off[0].ok && measured[f.hostname] == nil {
			measured[f.hostname] = f
		}
	}
	out := map[int32]clock{}
	unaligned := 0
	for _, f := range files {
		c := clock{f: f}
		if l := measured[f.hostname]; l != nil {
			c.oa = l.off[0].offset
			if l.off[1].ok && l.off[1].at > l.off[0].at {
				c.a, c.b, c.ob, c.interpolate = l.off[0].at, l.off[1].at, l.off[1].offset, true
			}
		} else if f.hostname != ref.hostname {
			n := nodes[f.hostname]
			if n == nil {
				unaligned++
			} else {
				c.oa = n.oa
				if n.hasB && f.syncA != 0 && f.syncB != 0 {
					c.a, c.b, c.ob = f.ns(f.syncA), f.ns(f.syncB), n.ob
					c.interpolate = c.b > c.a
				}
			}
		}
		out[f.rank] = c
	}
	if unaligned > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d ranks on other nodes than rank %d have no clock synchronisation: their clocks are taken as they are", unaligned, ref.rank))
	}
	return out
}

// event is one side of a point-to-point message, for matching.
type event struct {
	key        msgKey
	bytes      int64
	call, done int32 // call: the send's start or the receive's post
	order      int   // the position of call in its rank (FIFO)
}

type msgKey struct{ src, dst, tag, comm int32 }

type builder struct {
	tr           *Trace
	comms        map[string]int32 // members + ordinal → Trace.Comms index
	sends, recvs []event
	// sendOf is the send event of a request of the current rank: a send
	// is a message from its start on (the MPI may give every completed
	// send one shared handle, so the completion may not be seen).
	sendOf    map[uint32]int
	origin    float64
	originSet bool
}

// pendingReq is a request the rank started: what its completion completes.
type pendingReq struct {
	flags      uint8
	peer, tag  int32
	comm       int32
	bytes      int64
	post       int32 // the call that posted (or started) it
	persistent bool
	coll       Coll // a collective request's operation
}

func (b *builder) rank(f *rankFile, c clock) error {
	tr := b.tr
	rk := &tr.Ranks[f.rank]
	rk.Node, rk.Threads = f.hostname, int32(max(1, len(f.threads)))
	// The MPI thread: the one with the most calls.
	var main uint32
	most := -1
	for _, th := range f.order {
		n := 0
		for _, r := range f.threads[th] {
			if r.kind == recCall {
				n++
			}
		}
		if n > most {
			main, most = th, n
		}
	}
	t := func(tick uint64) int64 {
		v := c.at(tick)
		if !b.originSet || v < b.origin {
			b.origin, b.originSet = v, true
		}
		return int64(math.Round(v))
	}
	local := map[uint32]int32{0: 0} // the rank's communicator ids → Trace.Comms
	ordinal := map[string]int{}
	var pendingComm struct {
		id      uint32
		members []int32
		n       int
	}
	closeComm := func() {
		if pendingComm.members == nil {
			return
		}
		k := fmt.Sprint(pendingComm.members)
		ordinal[k]++
		key := fmt.Sprintf("%s#%d", k, ordinal[k])
		g, ok := b.comms[key]
		if !ok {
			g = int32(len(tr.Comms))
			tr.Comms = append(tr.Comms, Comm{Members: pendingComm.members})
			b.comms[key] = g
		}
		local[pendingComm.id] = g
		pendingComm.members = nil
	}
	commOf := func(id uint32) int32 {
		if id == noComm {
			return -1
		}
		if g, ok := local[id]; ok {
			return g
		}
		return -1
	}
	reqs := map[uint32]*pendingReq{}
	b.sendOf = map[uint32]int{}
	var extras []record
	for _, th := range f.order {
		for _, r := range f.threads[th] {
			if r.kind == recOMP {
				name, ok := f.constructs[r.peer]
				if !ok {
					name = "OpenMP parallel region"
				}
				rk.Spans = append(rk.Spans, Span{Kind: "omp", Name: name, Thread: int32(th), Enter: t(r.enter), Leave: t(r.leave)})
				continue
			}
			if r.kind == recRegion {
				name := fmt.Sprintf("region %d", r.peer)
				if r.peer >= 0 && int(r.peer) < len(f.regions) {
					name = f.regions[r.peer]
				}
				rk.Spans = append(rk.Spans, Span{Kind: "region", Name: name, Thread: int32(th), Enter: t(r.enter), Leave: t(r.leave)})
				continue
			}
			if th != main {
				if r.kind == recFlush {
					rk.Spans = append(rk.Spans, Span{Kind: "flush", Name: "trace buffer flush", Thread: int32(th), Enter: t(r.enter), Leave: t(r.leave)})
				}
				continue
			}
			switch r.kind {
			case recComm:
				closeComm()
				n := int(r.peer)
				if n < 0 || n > maxCommSize {
					return fmt.Errorf("%s: communicator %d of %d members", f.path, r.comm, r.peer)
				}
				pendingComm.id, pendingComm.n = r.comm, n
				pendingComm.members = make([]int32, n)
				for i := range pendingComm.members {
					pendingComm.members[i] = -1
				}
			case recMembers:
				if pendingComm.members == nil || r.comm != pendingComm.id {
					return fmt.Errorf("%s: members of communicator %d outside its record", f.path, r.comm)
				}
				first := r.enter
				for k, m := range []int32{r.peer, r.tag, int32(r.req), int32(r.bytes)} {
					i := first + uint64(k)
					if i < uint64(pendingComm.n) {
						pendingComm.members[i] = m
					}
				}
			case recFlush:
				closeComm()
				rk.Spans = append(rk.Spans, Span{Kind: "flush", Name: "trace buffer flush", Thread: 0, Enter: t(r.enter), Leave: t(r.leave)})
			case recClock:
				closeComm()
			case recOffset:
				closeComm()
			case recPart, recDone, recStart:
				closeComm()
				extras = append(extras, r)
			case recCall:
				closeComm()
				if int(r.fn) >= len(f.names) {
					return fmt.Errorf("%s: call id %d beyond the %d function names", f.path, r.fn, len(f.names))
				}
				b.call(f, rk, r, extras, reqs, commOf, t)
				extras = extras[:0]
			default:
				return fmt.Errorf("%s: unknown record kind %d", f.path, r.kind)
			}
		}
	}
	closeComm()
	return nil
}

// call adds one CALL record (with the extras before it) to rk.
func (b *builder) call(f *rankFile, rk *Rank, r record, extras []record, reqs map[uint32]*pendingReq,
	commOf func(uint32) int32, t func(uint64) int64) {
	name := f.names[r.fn]
	kind, coll := CallKind(name)
	idx := int32(len(rk.Calls))
	cl := Call{Name: name, Kind: kind, Coll: coll, Enter: t(r.enter), Leave: t(r.leave), Comm: commOf(r.comm), Root: -1}
	if cl.Leave < cl.Enter {
		cl.Leave = cl.Enter
	}
	me := f.rank
	p2p := func(flags uint8, peer, tag int32, comm int32, bytes int64, done int32) {
		switch {
		case flags&flProcNull != 0 || peer < 0 || comm < 0:
		case flags&flSend != 0:
			b.sends = append(b.sends, event{key: msgKey{me, peer, tag, comm}, bytes: bytes, call: idx, done: done, order: int(idx)})
		case flags&flRecv != 0:
			b.recvs = append(b.recvs, event{key: msgKey{peer, me, tag, comm}, bytes: bytes, call: idx, done: done, order: int(idx)})
		}
	}
	if r.flags&flColl != 0 {
		cl.SendBytes, cl.Root = int64(r.bytes), r.peer
		for _, x := range extras {
			if x.kind == recPart && x.flags&flColl != 0 {
				cl.RecvBytes = int64(x.bytes)
			}
		}
		if r.req != 0 {
			reqs[r.req] = &pendingReq{flags: r.flags, post: idx, persistent: r.flags&flPersistent != 0, coll: coll}
		}
	} else if r.flags&(flSend|flRecv) != 0 {
		switch {
		case r.req != 0: // a request: completed (or started) later
			reqs[r.req] = &pendingReq{flags: r.flags, peer: r.peer, tag: r.tag, comm: commOf(r.comm),
				bytes: int64(r.bytes), post: idx, persistent: r.flags&flPersistent != 0}
			if r.flags&flSend != 0 && r.flags&flPersistent == 0 {
				cl.SendBytes = int64(r.bytes)
				p2p(r.flags, r.peer, r.tag, commOf(r.comm), int64(r.bytes), -1)
				if r.flags&flProcNull == 0 && r.peer >= 0 && commOf(r.comm) >= 0 {
					b.sendOf[r.req] = len(b.sends) - 1
				}
			}
		case r.flags&flSend != 0:
			cl.SendBytes = int64(r.bytes)
			p2p(r.flags, r.peer, r.tag, commOf(r.comm), int64(r.bytes), idx)
		default:
			cl.RecvBytes = int64(r.bytes)
			p2p(r.flags, r.peer, r.tag, commOf(r.comm), int64(r.bytes), idx)
		}
	}
	completed := false
	for _, x := range extras {
		switch x.kind {
		case recPart:
			if x.flags&flColl == 0 {
				if x.flags&flRecv != 0 {
					cl.RecvBytes += int64(x.bytes)
				} else {
					cl.SendBytes += int64(x.bytes)
				}
				p2p(x.flags, x.peer, x.tag, commOf(x.comm), int64(x.bytes), idx)
			}
		case recStart:
			q := reqs[x.req]
			if q == nil {
				continue
			}
			q.post = idx
			if q.flags&flSend != 0 {
				cl.Kind = KindIsend
				cl.SendBytes += q.bytes
				if q.flags&flProcNull == 0 && q.peer >= 0 && q.comm >= 0 {
					b.sends = append(b.sends, event{key: msgKey{me, q.peer, q.tag, q.comm}, bytes: q.bytes, call: idx, done: -1, order: int(idx)})
					b.sendOf[x.req] = len(b.sends) - 1
				}
			} else if q.flags&flRecv != 0 {
				cl.Kind = KindIrecv
			} else {
				cl.Kind, cl.Coll = KindICollective, q.coll
			}
		case recDone:
			completed = true
			q := reqs[x.req]
			if q == nil {
				continue
			}
			switch {
			case x.flags&flSend != 0:
				if k, ok := b.sendOf[x.req]; ok {
					b.sends[k].done = idx
					delete(b.sendOf, x.req)
				}
			case x.flags&flRecv != 0:
				cl.RecvBytes += int64(x.bytes)
				if x.peer >= 0 && q.comm >= 0 {
					b.recvs = append(b.recvs, event{key: msgKey{x.peer, me, x.tag, q.comm}, bytes: int64(x.bytes), call: q.post, done: idx, order: int(q.post)})
				}
			}
			if !q.persistent {
				delete(reqs, x.req)
			}
		}
	}
	if strings.HasPrefix(name, "MPI_Test") && !completed {
		cl.Kind = KindOther
	}
	rk.Calls = append(rk.Calls, cl)
	if cl.Leave > rk.End {
		rk.End = cl.Leave
	}
}

// match pairs sends and receives FIFO per (source, destination, tag,
// communicator), in the order the sends started and the receives were
// posted.
func (b *builder) match() {
	group := func(evs []event) map[msgKey][]event {
		m := map[msgKey][]event{}
		for _, e := range evs {
			m[e.key] = append(m[e.key], e)
		}
		for _, l := range m {
			sort.SliceStable(l, func(i, j int) bool { return l[i].order < l[j].order })
		}
		return m
	}
	sends, recvs := group(b.sends), group(b.recvs)
	keys := make([]msgKey, 0, len(sends))
	for k := range sends {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, c := keys[i], keys[j]
		if a.src != c.src {
			return a.src < c.src
		}
		if a.dst != c.dst {
			return a.dst < c.dst
		}
		if a.comm != c.comm {
			return a.comm < c.comm
		}
		return a.tag < c.tag
	})
	unmatched := 0
	tr := b.tr
	for _, k := range keys {
		s, r := sends[k], recvs[k]
		n := min(len(s), len(r))
		unmatched += len(s) - n
		if int(k.src) >= len(tr.Ranks) || int(k.dst) >= len(tr.Ranks) || k.src < 0 || k.dst < 0 {
			unmatched += n
			continue
		}
		for i := 0; i < n; i++ {
			se, re := s[i], r[i]
			src, dst := &tr.Ranks[k.src], &tr.Ranks[k.dst]
			if int(se.call) >= len(src.Calls) || int(re.call) >= len(dst.Calls) || int(re.done) >= len(dst.Calls) {
				unmatched++
				continue
			}
			bytes := re.bytes
			if bytes == 0 {
				bytes = se.bytes
			}
			m := Message{Src: k.src, Dst: k.dst, Tag: k.tag, Comm: k.comm, Bytes: bytes,
				SendCall: se.call, SendDone: se.done, RecvPost: re.call, RecvDone: re.done}
			m.LogSend = src.Calls[se.call].Enter
			m.PhysSend = m.LogSend
			m.LogRecv = dst.Calls[re.call].Enter
			if re.done >= 0 {
				m.PhysRecv = dst.Calls[re.done].Leave
			}
			tr.Messages = append(tr.Messages, m)
		}
		delete(recvs, k)
	}
	for _, r := range recvs {
		unmatched += len(r)
	}
	if unmatched > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d sends or receives found no partner (requests completed by another thread, "+
			"a full request table, or ranks without a trace)", unmatched))
	}
	sort.SliceStable(tr.Messages, func(i, j int) bool { return tr.Messages[i].LogSend < tr.Messages[j].LogSend })
}

// shift moves every time so that the trace starts at 0: at the end of
// MPI_Init (the first rank's return from the barrier popmon adds there)
// when every rank with calls has an MPI_Init, which is where the
// measurement's Global region starts, so that a trace and its exports
// cover what the measurement covers; otherwise at the earliest record.
// MPI_Init then keeps only its part after the new origin.
func (b *builder) shift() {
	o := int64(math.Round(b.origin))
	tr := b.tr
	if io, ok := initEnd(tr); ok && io > o {
		o = io
		for i := range tr.Ranks {
			rk := &tr.Ranks[i]
			for k := range rk.Calls {
				c := &rk.Calls[k]
				c.Enter, c.Leave = max(c.Enter, o), max(c.Leave, o)
			}
			for k := range rk.Spans {
				sp := &rk.Spans[k]
				sp.Enter, sp.Leave = max(sp.Enter, o), max(sp.Leave, o)
			}
			rk.End = max(rk.End, o)
		}
		tr.Notes = append(tr.Notes, "the trace starts at the end of MPI_Init, where the measurement starts: MPI_Init's time before it is not in the trace")
	}
	tr.End = 0
	for i := range tr.Ranks {
		rk := &tr.Ranks[i]
		for k := range rk.Calls {
			rk.Calls[k].Enter -= o
			rk.Calls[k].Leave -= o
		}
		for k := range rk.Spans {
			rk.Spans[k].Enter -= o
			rk.Spans[k].Leave -= o
		}
		if len(rk.Calls) > 0 || len(rk.Spans) > 0 {
			rk.End -= o
		}
		// Regions are recorded when they end: in entry order.
		sort.SliceStable(rk.Spans, func(a, b int) bool { return rk.Spans[a].Enter < rk.Spans[b].Enter })
		for _, s := range rk.Spans {
			rk.End = max(rk.End, s.Leave)
		}
		tr.End = max(tr.End, rk.End)
	}
	for i := range tr.Messages {
		m := &tr.Messages[i]
		m.LogSend -= o
		m.PhysSend -= o
		m.LogRecv -= o
		if m.RecvDone >= 0 {
			m.PhysRecv -= o
		}
	}
	flushes := 0
	for _, rk := range tr.Ranks {
		for _, s := range rk.Spans {
			if s.Kind == "flush" {
				flushes++
			}
		}
	}
	if flushes > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d trace buffer flushes during the run (their time is MPI time of the calls that hit them)", flushes))
	}
}

// initEnd returns the earliest end of MPI_Init over the ranks, when every
// rank with calls has one.
func initEnd(tr *Trace) (int64, bool) {
	end, any := int64(0), false
	for i := range tr.Ranks {
		rk := &tr.Ranks[i]
		if len(rk.Calls) == 0 {
			continue
		}
		found := false
		for k := range rk.Calls {
			if rk.Calls[k].Kind == KindInit {
				if !any || rk.Calls[k].Leave < end {
					end = rk.Calls[k].Leave
				}
				found, any = true, true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	return end, any
}
