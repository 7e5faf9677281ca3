// Package trace is popmon's in-memory event trace of an MPI program: per
// rank, its MPI calls in time order, the matched point-to-point messages
// and the communicators they use. Both trace sources produce it — an
// imported Paraver trace (internal/paraver) and a trace recorded by
// libpopmon under `popmon run --trace` (the native per-rank files) — and
// every trace analysis consumes it: the ideal-network replay
// (internal/replay), wait-state patterns and the critical path, and the
// Paraver and Perfetto exports.
//
// Times are nanoseconds from the trace's start on one time line: a
// producer aligns the ranks' clocks before it fills a Trace (the replay
// uses only per-rank durations and is immune to offsets; the patterns
// compare times across ranks and are not).
package trace

// Kind is what a call does for the replay and the patterns.
type Kind uint8

// The call kinds. A call that moves no data and synchronises nothing is
// KindOther; its time still counts as MPI (not useful) time.
const (
	KindOther       Kind = iota
	KindInit             // MPI_Init, MPI_Init_thread
	KindFinalize         // MPI_Finalize
	KindSend             // blocking send: MPI_Send, Ssend, Rsend, Bsend
	KindRecv             // blocking receive: MPI_Recv, Mrecv
	KindSendrecv         // MPI_Sendrecv, Sendrecv_replace
	KindIsend            // non-blocking send start: Isend, Issend, Irsend, Ibsend, Start of a send
	KindIrecv            // non-blocking receive post: Irecv, Imrecv, Start of a receive
	KindWait             // request completion: Wait*, Test* that completed something
	KindProbe            // Probe, Iprobe, Mprobe, Improbe
	KindCollective       // blocking collective (Coll says which)
	KindICollective      // non-blocking collective start (Coll says which); completed by a KindWait
)

// Coll is the collective operation of a KindCollective or KindICollective call.
type Coll uint8

// The collective operations, grouped as the wait-state patterns need them.
const (
	CollNone          Coll = iota
	CollBarrier            // MPI_Barrier
	CollBcast              // 1-to-N: MPI_Bcast
	CollScatter            // 1-to-N: MPI_Scatter, Scatterv
	CollReduce             // N-to-1: MPI_Reduce
	CollGather             // N-to-1: MPI_Gather, Gatherv
	CollAllreduce          // N-to-N: MPI_Allreduce
	CollAllgather          // N-to-N: MPI_Allgather, Allgatherv
	CollAlltoall           // N-to-N: MPI_Alltoall
	CollAlltoallv          // N-to-N without Scalasca patterns: Alltoallv, Alltoallw
	CollReduceScatter      // N-to-N: Reduce_scatter, Reduce_scatter_block
	CollScan               // prefix: MPI_Scan, Exscan
	CollOther              // any other collective (neighbourhood, communicator constructors that synchronise)
)

// Call is one MPI call of one rank.
type Call struct {
	// Name is the MPI function's C name ("MPI_Sendrecv").
	Name string
	// Kind and Coll classify it.
	Kind Kind
	Coll Coll
	// Enter and Leave are the call's entry and exit, ns from the trace start.
	Enter, Leave int64
	// Comm indexes Trace.Comms; 0 is MPI_COMM_WORLD. -1 when unknown or none.
	Comm int32
	// Root is a rooted collective's root as a world rank; -1 otherwise.
	Root int32
	// SendBytes and RecvBytes are the bytes the call sends and receives
	// (a collective's own contribution and receipt), 0 when none or unknown.
	SendBytes, RecvBytes int64
}

// Message is one matched point-to-point message.
type Message struct {
	// Src and Dst are world ranks.
	Src, Dst int32
	// Tag and Comm are the message's tag and communicator (Trace.Comms index).
	Tag  int32
	Comm int32
	// Bytes is the message's size.
	Bytes int64
	// SendCall indexes Ranks[Src].Calls: the call that started the send
	// (Send, Sendrecv, Isend, Start).
	SendCall int32
	// SendDone indexes Ranks[Src].Calls: the call that completed the send
	// (SendCall itself for a blocking send, the Wait of an Isend); -1 when
	// unknown.
	SendDone int32
	// RecvPost indexes Ranks[Dst].Calls: the call that posted the receive
	// (Recv, Sendrecv, Irecv).
	RecvPost int32
	// RecvDone indexes Ranks[Dst].Calls: the call that completed the
	// receive (RecvPost itself for a blocking receive, the Wait of an Irecv).
	RecvDone int32
	// LogSend, PhysSend, LogRecv and PhysRecv are Paraver's four times of a
	// communication record (ns): the send call's entry (twice), the
	// receive's post and its completion.
	LogSend, PhysSend, LogRecv, PhysRecv int64
}

// Comm is one communicator.
type Comm struct {
	// Members are the world ranks of the communicator's ranks, in
	// communicator rank order.
	Members []int32
}

// Span is a non-MPI interval of a rank worth showing or accounting: a
// user region, an OpenMP parallel region, or a buffer flush.
type Span struct {
	// Kind is "region", "omp", "flush" or "other" (time of the MPI thread
	// outside MPI calls that is not useful: an imported trace's Paraver
	// states other than Running there, Name being the state's name).
	Kind string
	// Name is the region's name or the construct's source location.
	Name string
	// Thread is the thread within the rank (0 = the primary).
	Thread int32
	// Enter and Leave are ns from the trace start.
	Enter, Leave int64
}

// Rank is one MPI process of the trace.
type Rank struct {
	// Calls are the MPI calls of the rank's MPI-calling thread in entry
	// order (calls of other threads of a MPI_THREAD_MULTIPLE program are
	// not replayed).
	Calls []Call
	// Spans are the rank's other intervals, in entry order.
	Spans []Span
	// Threads is the number of threads the rank ran (1 when unknown).
	Threads int32
	// Node is the rank's node name, "" when unknown.
	Node string
	// End is the rank's last record (ns): the end of its last CPU burst.
	End int64
}

// Trace is an MPI program's event trace.
type Trace struct {
	// Ranks holds one entry per world rank, in rank order.
	Ranks []Rank
	// Comms are the communicators; Comms[0] is MPI_COMM_WORLD.
	Comms []Comm
	// Messages are the matched point-to-point messages.
	Messages []Message
	// End is the trace's end (ns): the last record of any rank.
	End int64
	// Source names where the trace came from ("paraver: FILE",
	// "popmon: DIR").
	Source string
	// Notes are plain sentences about what the trace lacks or how it was
	// repaired (unmatched messages, flushes, clock alignment).
	Notes []string
}
