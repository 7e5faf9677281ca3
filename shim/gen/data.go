package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// dataRole says which arguments of a data-carrying MPI call the wrapper
// hands to libpopmon's byte accounting (shim/mpidata.c), given by the
// option data=ROLE of the call list. The wrapper of a call with role R calls
// popmon_d_R after the MPI call (and popmon_dpre_R before it when Pre is
// set); every other wrapper is untouched, so calls that carry no data pay
// nothing.
type dataRole struct {
	// Args are the parameters passed to popmon_d_R after the call, in
	// order; an array of counts (a name ending in "counts") is followed by
	// its element size (int or MPI_Count).
	Args []string
	// Status is a single MPI_Status * parameter that the wrapper replaces
	// with a local status when the caller passed MPI_STATUS_IGNORE (the
	// accounting reads the actual source, tag and count from it; the caller
	// sees nothing of it).
	Status string
	// Pre are the parameters passed to popmon_dpre_R before the call (the
	// requests that the call may free and set to MPI_REQUEST_NULL).
	Pre []string
	// Poll: a polling call (MPI_Test*), which must cost no more than a call
	// without data when nothing completes. Nothing is looked up before the
	// call: the wrapper keeps the handles as they were (MPI sets a completed
	// request to MPI_REQUEST_NULL): one request (a single parameter, one
	// load), or an array (count and requests: copied by popmon_dpoll_save
	// only while the thread holds requests). popmon_d_R runs only when Done
	// holds after the call, with the saved handle or &popmon_p first.
	Poll []string
	// Done is the C condition, over the call's parameters, that the call
	// completed something (Poll only).
	Done string
	// Statuses is an MPI_Status array parameter; popmon_dpre_R returns the
	// array to pass instead (a scratch array when the caller passed
	// MPI_STATUSES_IGNORE and receives are pending).
	Statuses string
	// Slot: the call starts transfers and has its own bytes and histogram
	// (an id in enum popmon_dfn); completion calls credit the call that
	// started the transfer instead.
	Slot bool
	// Coll: a collective; the wrapper passes its request (NULL for a
	// blocking one) and whether it is persistent (MPI_X_init) last.
	Coll bool
}

var dataRoles = map[string]dataRole{
	// Point-to-point starts.
	"send":              {Args: []string{"count", "datatype", "dest", "tag", "comm"}, Slot: true},
	"isend":             {Args: []string{"count", "datatype", "dest", "tag", "comm", "request"}, Slot: true},
	"send_init":         {Args: []string{"count", "datatype", "dest", "tag", "comm", "request"}, Slot: true},
	"recv":              {Args: []string{"count", "datatype", "source", "tag", "comm", "status"}, Status: "status", Slot: true},
	"irecv":             {Args: []string{"count", "datatype", "source", "tag", "comm", "request"}, Slot: true},
	"recv_init":         {Args: []string{"count", "datatype", "source", "tag", "comm", "request"}, Slot: true},
	"sendrecv":          {Args: []string{"sendcount", "sendtype", "dest", "sendtag", "recvcount", "recvtype", "source", "recvtag", "comm", "status"}, Status: "status", Slot: true},
	"sendrecv_replace":  {Args: []string{"count", "datatype", "dest", "sendtag", "source", "recvtag", "comm", "status"}, Status: "status", Slot: true},
	"isendrecv":         {Args: []string{"sendcount", "sendtype", "dest", "sendtag", "recvcount", "recvtype", "source", "recvtag", "comm", "request"}, Slot: true},
	"isendrecv_replace": {Args: []string{"count", "datatype", "dest", "sendtag", "source", "recvtag", "comm", "request"}, Slot: true},
	"mrecv":             {Args: []string{"count", "datatype", "status"}, Status: "status", Slot: true},
	"imrecv":            {Args: []string{"count", "datatype", "request"}, Slot: true},
	// Starts of persistent requests and completions.
	"start":        {Args: []string{"request"}},
	"startall":     {Args: []string{"count", "array_of_requests"}},
	"wait":         {Pre: []string{"request"}, Args: []string{"status"}, Status: "status"},
	"test":         {Poll: []string{"request"}, Args: []string{"status"}, Status: "status", Done: "flag != NULL && *flag"},
	"waitany":      {Pre: []string{"count", "array_of_requests"}, Args: []string{"indx", "status"}, Status: "status"},
	"testany":      {Poll: []string{"count", "array_of_requests"}, Args: []string{"indx", "status"}, Status: "status", Done: "flag != NULL && *flag"},
	"waitall":      {Pre: []string{"count", "array_of_requests", "array_of_statuses"}, Statuses: "array_of_statuses"},
	"testall":      {Poll: []string{"count", "array_of_requests"}, Statuses: "array_of_statuses", Done: "flag != NULL && *flag"},
	"waitsome":     {Pre: []string{"incount", "array_of_requests", "array_of_statuses"}, Args: []string{"outcount", "array_of_indices"}, Statuses: "array_of_statuses"},
	"testsome":     {Poll: []string{"incount", "array_of_requests"}, Args: []string{"outcount", "array_of_indices"}, Statuses: "array_of_statuses", Done: "outcount != NULL && *outcount > 0"},
	"request_free": {Pre: []string{"request"}},
	// Collectives (blocking, non-blocking and persistent).
	"bcast":                {Args: []string{"count", "datatype", "root", "comm"}, Slot: true, Coll: true},
	"reduce":               {Args: []string{"count", "datatype", "root", "comm"}, Slot: true, Coll: true},
	"allreduce":            {Args: []string{"count", "datatype", "comm"}, Slot: true, Coll: true},
	"gather":               {Args: []string{"sendbuf", "sendcount", "sendtype", "recvcount", "recvtype", "root", "comm"}, Slot: true, Coll: true},
	"gatherv":              {Args: []string{"sendbuf", "sendcount", "sendtype", "recvcounts", "recvtype", "root", "comm"}, Slot: true, Coll: true},
	"scatter":              {Args: []string{"sendcount", "sendtype", "recvbuf", "recvcount", "recvtype", "root", "comm"}, Slot: true, Coll: true},
	"scatterv":             {Args: []string{"sendcounts", "sendtype", "recvbuf", "recvcount", "recvtype", "root", "comm"}, Slot: true, Coll: true},
	"allgather":            {Args: []string{"sendbuf", "sendcount", "sendtype", "recvcount", "recvtype", "comm"}, Slot: true, Coll: true},
	"allgatherv":           {Args: []string{"sendbuf", "sendcount", "sendtype", "recvcounts", "recvtype", "comm"}, Slot: true, Coll: true},
	"alltoall":             {Args: []string{"sendbuf", "sendcount", "sendtype", "recvcount", "recvtype", "comm"}, Slot: true, Coll: true},
	"alltoallv":            {Args: []string{"sendbuf", "sendcounts", "sendtype", "recvcounts", "recvtype", "comm"}, Slot: true, Coll: true},
	"alltoallw":            {Args: []string{"sendbuf", "sendcounts", "sendtypes", "recvcounts", "recvtypes", "comm"}, Slot: true, Coll: true},
	"reduce_scatter":       {Args: []string{"recvcounts", "datatype", "comm"}, Slot: true, Coll: true},
	"reduce_scatter_block": {Args: []string{"recvcount", "datatype", "comm"}, Slot: true, Coll: true},
	"barrier":              {Args: []string{"comm"}, Coll: true}, // no bytes: for the trace
}

// deviceBuffers returns the buffers of a call that starts transfers (a
// data role with its own slot), as C arguments of popmon_gpu_mpi_enter
// (gpu.h: a CUDA-aware MPI moving device memory is device communication):
// buf, or sendbuf and recvbuf; nil for every other call.
func (c *Call) deviceBuffers() []string {
	if r, ok := dataRoles[c.Data]; !ok || !r.Slot {
		return nil
	}
	switch {
	case c.hasParam("buf"):
		return []string{"buf", "NULL"}
	case c.hasParam("sendbuf") && c.hasParam("recvbuf"):
		return []string{"sendbuf", "recvbuf"}
	case c.hasParam("recvbuf"):
		return []string{"NULL", "recvbuf"}
	case c.hasParam("sendbuf"):
		return []string{"sendbuf", "NULL"}
	}
	return nil
}

func dataRoleNames() string {
	names := make([]string, 0, len(dataRoles))
	for n := range dataRoles {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// checkData validates c's data= role against its parameters.
func (c *Call) checkData() error {
	if c.Data == "" {
		return nil
	}
	r, ok := dataRoles[c.Data]
	if !ok {
		return fmt.Errorf("%s: data=%s: unknown role (want one of %s)", c.Name, c.Data, dataRoleNames())
	}
	if c.Hook != HookNone || c.Return != "int" {
		return fmt.Errorf("%s: data= needs an int return and no hook", c.Name)
	}
	has := map[string]bool{}
	for _, p := range c.Params {
		has[p.Name] = true
	}
	need := append(append(append([]string{}, r.Args...), r.Pre...), r.Poll...)
	if r.Statuses != "" {
		need = append(need, r.Statuses)
	}
	if r.Coll && c.persistentColl() {
		need = append(need, "request")
	}
	for _, a := range need {
		if !has[a] {
			return fmt.Errorf("%s: data=%s needs a parameter named %s", c.Name, c.Data, a)
		}
	}
	return nil
}

// hasParam reports whether c has a parameter named name.
func (c *Call) hasParam(name string) bool {
	for _, p := range c.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// persistentColl reports whether c is a persistent collective (MPI_X_init).
func (c *Call) persistentColl() bool {
	return strings.HasSuffix(strings.TrimSuffix(c.Name, "_c"), "_init")
}

// DataID is the C enumerator of the call's bytes slot, e.g. POPMON_D_MPI_Send.
func (c *Call) DataID() string { return "POPMON_D_" + c.Name }

// dataSlots are the calls with their own bytes and histogram, in id order.
func dataSlots(calls []*Call) []*Call {
	var out []*Call
	for _, c := range calls {
		if c.Data != "" && dataRoles[c.Data].Slot {
			out = append(out, c)
		}
	}
	return out
}

// writeDataHeader writes enum popmon_dfn and its table's declaration.
func writeDataHeader(b *bytes.Buffer, calls []*Call) {
	b.WriteString("/* One id per call that starts transfers (data=ROLE with bytes of its own):\n" +
		" * the slots of the bytes and size histogram (shim/mpidata.c). */\nenum popmon_dfn {\n")
	for i, c := range dataSlots(calls) {
		if i == 0 {
			fmt.Fprintf(b, "\t%s = 0,\n", c.DataID())
		} else {
			fmt.Fprintf(b, "\t%s,\n", c.DataID())
		}
	}
	fmt.Fprintf(b, "\tPOPMON_DFN_COUNT /* %d */\n};\n\n", len(dataSlots(calls)))
	b.WriteString("/* The enum popmon_fn of each slot. Defined in mpi_wrappers.c. */\n" +
		"extern const unsigned short popmon_dfn_fn[POPMON_DFN_COUNT];\n\n")
}

// writeDataTable writes popmon_dfn_fn.
func writeDataTable(b *bytes.Buffer, calls []*Call) {
	b.WriteString("const unsigned short popmon_dfn_fn[POPMON_DFN_COUNT] = {\n")
	for _, c := range dataSlots(calls) {
		fmt.Fprintf(b, "\t%s,\n", c.ID())
	}
	b.WriteString("};\n\n")
}

// dataArgs renders the arguments names for a data helper: arrays of
// counts get their element size after them.
func dataArgs(names []string, subst map[string]string) []string {
	var out []string
	for _, n := range names {
		v := n
		if s, ok := subst[n]; ok {
			v = s
		}
		out = append(out, v)
		if strings.HasSuffix(n, "counts") {
			out = append(out, fmt.Sprintf("sizeof(*%s)", n))
		}
	}
	return out
}

// writeDataC writes the body of a data call's C wrapper between
// popmon_mpi_enter() and popmon_mpi_leave(): the status substitution, the
// pre-call hook, the call and the accounting.
func writeDataC(b *bytes.Buffer, c *Call, next string) {
	r := dataRoles[c.Data]
	if len(r.Poll) > 0 {
		writePollC(b, c, r, next)
		return
	}
	subst := map[string]string{}
	if r.Status != "" {
		b.WriteString("\tMPI_Status popmon_st;\n")
		fmt.Fprintf(b, "\tMPI_Status *popmon_sp = %s == MPI_STATUS_IGNORE ? &popmon_st : %s;\n", r.Status, r.Status)
		subst[r.Status] = "popmon_sp"
	}
	if len(r.Pre) > 0 {
		b.WriteString("\tstruct popmon_dpre popmon_p;\n")
		pre := strings.Join(append([]string{"&popmon_p"}, dataArgs(r.Pre, nil)...), ", ")
		if r.Statuses != "" {
			fmt.Fprintf(b, "\tMPI_Status *popmon_sa = popmon_dpre_%s(%s);\n", c.Data, pre)
			subst[r.Statuses] = "popmon_sa"
		} else {
			fmt.Fprintf(b, "\tpopmon_dpre_%s(%s);\n", c.Data, pre)
		}
	}
	fmt.Fprintf(b, "\tint popmon_r = %s(%s);\n", next, strings.Join(c.argsWith(subst), ", "))
	post := []string{}
	if r.Slot {
		post = append(post, c.DataID())
	}
	post = append(post, "popmon_r")
	if len(r.Pre) > 0 {
		post = append(post, "&popmon_p")
	}
	post = append(post, dataArgs(r.Args, subst)...)
	if r.Statuses != "" {
		post = append(post, "popmon_sa")
	}
	if r.Coll {
		switch {
		case c.persistentColl():
			post = append(post, "request", "1")
		case c.hasParam("request"):
			post = append(post, "request", "0")
		default:
			post = append(post, "NULL", "0")
		}
	}
	fmt.Fprintf(b, "\tpopmon_d_%s(%s);\n", c.Data, strings.Join(post, ", "))
}

// writePollC writes the body of a polling call's wrapper (dataRole.Poll):
// the handles saved before the call, and popmon_d_R after it only when
// something completed.
func writePollC(b *bytes.Buffer, c *Call, r dataRole, next string) {
	subst := map[string]string{}
	if r.Status != "" {
		b.WriteString("\tMPI_Status popmon_st;\n")
		fmt.Fprintf(b, "\tMPI_Status *popmon_sp = %s == MPI_STATUS_IGNORE ? &popmon_st : %s;\n", r.Status, r.Status)
		subst[r.Status] = "popmon_sp"
	}
	var saved, cond string
	if len(r.Poll) == 1 {
		q := r.Poll[0]
		fmt.Fprintf(b, "\tMPI_Request popmon_q = %s != NULL ? *%s : MPI_REQUEST_NULL;\n", q, q)
		// MPI_Test on MPI_REQUEST_NULL completes at once (a common
		// poll): nothing to look up.
		saved, cond = "popmon_q", r.Done+" && popmon_q != MPI_REQUEST_NULL"
	} else {
		b.WriteString("\tstruct popmon_dpoll popmon_p;\n")
		sts := "MPI_STATUSES_IGNORE"
		if r.Statuses != "" {
			sts = r.Statuses
			fmt.Fprintf(b, "\tMPI_Status *popmon_sa = ")
			subst[r.Statuses] = "popmon_sa"
		} else {
			b.WriteString("\t")
		}
		fmt.Fprintf(b, "popmon_dpoll_save(&popmon_p, popmon_t, %s, %s);\n", strings.Join(r.Poll, ", "), sts)
		saved, cond = "&popmon_p", "popmon_p.n > 0 && "+r.Done
	}
	fmt.Fprintf(b, "\tint popmon_r = %s(%s);\n", next, strings.Join(c.argsWith(subst), ", "))
	post := append([]string{"popmon_r", saved}, dataArgs(r.Args, subst)...)
	if r.Statuses != "" {
		post = append(post, "popmon_sa")
	}
	fmt.Fprintf(b, "\tif (%s)\n\t\tpopmon_d_%s(%s);\n", cond, c.Data, strings.Join(post, ", "))
}

// argsWith is the call's arguments by name, each replaced by its entry in
// subst where it has one (a wrapper's own status array, say).
func (c *Call) argsWith(subst map[string]string) []string {
	args := make([]string, len(c.Params))
	for i, p := range c.Params {
		args[i] = p.Name
		if s, ok := subst[p.Name]; ok {
			args[i] = s
		}
	}
	return args
}
