package paraver

import "github.com/popmon/popmon/internal/trace"

// mpiCall is one of Extrae's MPI call ids: the value of the 5000000X event
// that enters the call.
type mpiCall struct {
	name string
	// kind and coll classify the call as the event trace does
	// (trace.CallKind, the table shim/gen writes from libpopmon's call
	// list); KindOther for a call libpopmon does not intercept.
	kind trace.Kind
	coll trace.Coll
	// typ is the event type Extrae files the call under: 50000001
	// point-to-point, 50000002 collective, 50000003 other, 50000004
	// one-sided, 50000005 I/O.
	typ int64
}

// extraeCall is an entry of Extrae's call table: the C name and the event
// type.
type extraeCall struct {
	name string
	typ  int64
}

// Event types of a collective's entry record besides its call id.
const (
	EventCollSendBytes = 50100001 // bytes the rank sends
	EventCollRecvBytes = 50100002 // bytes the rank receives
	EventCollRoot      = 50100003 // 1 on the root
	EventCollComm      = 50100004 // the communicator's id (a c: line)
)

// extraeCalls maps Extrae's MPI call ids to the calls.
var extraeCalls = func() map[uint64]mpiCall {
	calls := make(map[uint64]mpiCall, len(extraeTable))
	for id, c := range extraeTable {
		kind, coll := trace.CallKind(c.name)
		calls[id] = mpiCall{name: c.name, kind: kind, coll: coll, typ: c.typ}
	}
	return calls
}()

// extraeTable is Extrae's table of MPI call ids (MPI_EventEncoding.h, the
// MPIVal enumeration, which the EPOCH traces' .pcf confirms).
var extraeTable = map[uint64]extraeCall{
	1:   {"MPI_Send", 50000001},
	2:   {"MPI_Recv", 50000001},
	3:   {"MPI_Isend", 50000001},
	4:   {"MPI_Irecv", 50000001},
	5:   {"MPI_Wait", 50000001},
	6:   {"MPI_Waitall", 50000001},
	7:   {"MPI_Bcast", 50000002},
	8:   {"MPI_Barrier", 50000002},
	9:   {"MPI_Reduce", 50000002},
	10:  {"MPI_Allreduce", 50000002},
	11:  {"MPI_Alltoall", 50000002},
	12:  {"MPI_Alltoallv", 50000002},
	13:  {"MPI_Gather", 50000002},
	14:  {"MPI_Gatherv", 50000002},
	15:  {"MPI_Scatter", 50000002},
	16:  {"MPI_Scatterv", 50000002},
	17:  {"MPI_Allgather", 50000002},
	18:  {"MPI_Allgatherv", 50000002},
	19:  {"MPI_Comm_rank", 50000003},
	20:  {"MPI_Comm_size", 50000003},
	21:  {"MPI_Comm_create", 50000003},
	22:  {"MPI_Comm_dup", 50000003},
	23:  {"MPI_Comm_split", 50000003},
	24:  {"MPI_Comm_group", 50000003},
	25:  {"MPI_Comm_free", 50000003},
	26:  {"MPI_Comm_remote_group", 50000003},
	27:  {"MPI_Comm_remote_size", 50000003},
	28:  {"MPI_Comm_test_inter", 50000003},
	29:  {"MPI_Comm_compare", 50000003},
	30:  {"MPI_Scan", 50000002},
	31:  {"MPI_Init", 50000003},
	32:  {"MPI_Finalize", 50000003},
	33:  {"MPI_Bsend", 50000001},
	34:  {"MPI_Ssend", 50000001},
	35:  {"MPI_Rsend", 50000001},
	36:  {"MPI_Ibsend", 50000001},
	37:  {"MPI_Issend", 50000001},
	38:  {"MPI_Irsend", 50000001},
	39:  {"MPI_Test", 50000001},
	40:  {"MPI_Cancel", 50000001},
	41:  {"MPI_Sendrecv", 50000001},
	42:  {"MPI_Sendrecv_replace", 50000001},
	43:  {"MPI_Cart_create", 50000003},
	44:  {"MPI_Cart_shift", 50000003},
	45:  {"MPI_Cart_coords", 50000003},
	46:  {"MPI_Cart_get", 50000003},
	47:  {"MPI_Cart_map", 50000003},
	48:  {"MPI_Cart_rank", 50000003},
	49:  {"MPI_Cart_sub", 50000003},
	50:  {"MPI_Cartdim_get", 50000003},
	51:  {"MPI_Dims_create", 50000003},
	52:  {"MPI_Graph_get", 50000003},
	53:  {"MPI_Graph_map", 50000003},
	54:  {"MPI_Graph_create", 50000003},
	55:  {"MPI_Graph_neighbors", 50000003},
	56:  {"MPI_Graphdims_get", 50000003},
	57:  {"MPI_Graph_neighbors_count", 50000003},
	58:  {"MPI_Topo_test", 50000003},
	59:  {"MPI_Waitany", 50000001},
	60:  {"MPI_Waitsome", 50000001},
	61:  {"MPI_Probe", 50000001},
	62:  {"MPI_Iprobe", 50000001},
	63:  {"MPI_Win_create", 50000004},
	64:  {"MPI_Win_free", 50000004},
	65:  {"MPI_Put", 50000004},
	66:  {"MPI_Get", 50000004},
	67:  {"MPI_Accumulate", 50000004},
	68:  {"MPI_Win_fence", 50000004},
	69:  {"MPI_Win_start", 50000004},
	70:  {"MPI_Win_complete", 50000004},
	71:  {"MPI_Win_post", 50000004},
	72:  {"MPI_Win_wait", 50000004},
	73:  {"MPI_Win_test", 50000004},
	74:  {"MPI_Win_lock", 50000004},
	75:  {"MPI_Win_unlock", 50000004},
	76:  {"MPI_Pack", 50000003},
	77:  {"MPI_Unpack", 50000003},
	78:  {"MPI_Op_create", 50000003},
	79:  {"MPI_Op_free", 50000003},
	80:  {"MPI_Reduce_scatter", 50000002},
	81:  {"MPI_Attr_delete", 50000003},
	82:  {"MPI_Attr_get", 50000003},
	83:  {"MPI_Attr_put", 50000003},
	84:  {"MPI_Group_difference", 50000003},
	85:  {"MPI_Group_excl", 50000003},
	86:  {"MPI_Group_free", 50000003},
	87:  {"MPI_Group_incl", 50000003},
	88:  {"MPI_Group_intersection", 50000003},
	89:  {"MPI_Group_rank", 50000003},
	90:  {"MPI_Group_range_excl", 50000003},
	91:  {"MPI_Group_range_incl", 50000003},
	92:  {"MPI_Group_size", 50000003},
	93:  {"MPI_Group_translate_ranks", 50000003},
	94:  {"MPI_Group_union", 50000003},
	95:  {"MPI_Group_compare", 50000003},
	96:  {"MPI_Intercomm_create", 50000003},
	97:  {"MPI_Intercomm_merge", 50000003},
	98:  {"MPI_Keyval_free", 50000003},
	99:  {"MPI_Keyval_create", 50000003},
	100: {"MPI_Abort", 50000003},
	101: {"MPI_Error_class", 50000003},
	102: {"MPI_Errhandler_create", 50000003},
	103: {"MPI_Errhandler_free", 50000003},
	104: {"MPI_Errhandler_get", 50000003},
	105: {"MPI_Error_string", 50000003},
	106: {"MPI_Errhandler_set", 50000003},
	107: {"MPI_Get_processor_name", 50000003},
	108: {"MPI_Initialized", 50000003},
	109: {"MPI_Wtick", 50000003},
	110: {"MPI_Wtime", 50000003},
	111: {"MPI_Address", 50000003},
	112: {"MPI_Bsend_init", 50000001},
	113: {"MPI_Buffer_attach", 50000003},
	114: {"MPI_Buffer_detach", 50000003},
	115: {"MPI_Request_free", 50000003},
	116: {"MPI_Recv_init", 50000001},
	117: {"MPI_Send_init", 50000001},
	118: {"MPI_Get_count", 50000003},
	119: {"MPI_Get_elements", 50000003},
	120: {"MPI_Pack_size", 50000003},
	121: {"MPI_Rsend_init", 50000001},
	122: {"MPI_Ssend_init", 50000001},
	123: {"MPI_Start", 50000003},
	124: {"MPI_Startall", 50000003},
	125: {"MPI_Testall", 50000001},
	126: {"MPI_Testany", 50000001},
	127: {"MPI_Test_cancelled", 50000001},
	128: {"MPI_Testsome", 50000001},
	129: {"MPI_Type_commit", 50000003},
	130: {"MPI_Type_contiguous", 50000003},
	131: {"MPI_Type_extent", 50000003},
	132: {"MPI_Type_free", 50000003},
	133: {"MPI_Type_hindexed", 50000003},
	134: {"MPI_Type_hvector", 50000003},
	135: {"MPI_Type_indexed", 50000003},
	136: {"MPI_Type_lb", 50000003},
	137: {"MPI_Type_size", 50000003},
	138: {"MPI_Type_struct", 50000003},
	139: {"MPI_Type_ub", 50000003},
	140: {"MPI_Type_vector", 50000003},
	141: {"MPI_File_open", 50000005},
	142: {"MPI_File_close", 50000005},
	143: {"MPI_File_read", 50000005},
	144: {"MPI_File_read_all", 50000005},
	145: {"MPI_File_write", 50000005},
	146: {"MPI_File_write_all", 50000005},
	147: {"MPI_File_read_at", 50000005},
	148: {"MPI_File_read_at_all", 50000005},
	149: {"MPI_File_write_at", 50000005},
	150: {"MPI_File_write_at_all", 50000005},
	151: {"MPI_Comm_spawn", 50000003},
	152: {"MPI_Comm_spawn_multiple", 50000003},
	153: {"MPI_Request_get_status", 50000003},
	154: {"MPI_Ireduce", 50000002},
	155: {"MPI_Iallreduce", 50000002},
	156: {"MPI_Ibarrier", 50000002},
	157: {"MPI_Ibcast", 50000002},
	158: {"MPI_Ialltoall", 50000002},
	159: {"MPI_Ialltoallv", 50000002},
	160: {"MPI_Iallgather", 50000002},
	161: {"MPI_Iallgatherv", 50000002},
	162: {"MPI_Igather", 50000002},
	163: {"MPI_Igatherv", 50000002},
	164: {"MPI_Iscatter", 50000002},
	165: {"MPI_Iscatterv", 50000002},
	166: {"MPI_Ireduce_scatter", 50000002},
	167: {"MPI_Iscan", 50000002},
}

// extraeIDs maps a call's C name back to its Extrae id, for the writer.
var extraeIDs = func() map[string]uint64 {
	ids := make(map[string]uint64, len(extraeTable))
	for v, c := range extraeTable {
		ids[c.name] = v
	}
	return ids
}()
