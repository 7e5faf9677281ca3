package main

import (
	"bytes"
	"fmt"
	"strings"
)

// lewiCall says how a blocking MPI call lends its CPUs under LeWI
// (docs/lewi.md): Bit is the kind --lewi-mpi-calls selects it by
// (POPMON_LEWI_CALLS_*, shim/base/dlbargs.h), NB the nonblocking form the
// generated helper starts and completes with popmon_lewi_mpi_wait ("": the
// helper is written by hand in shim/mpi/lewi_mpi.c: the Wait family, Probe,
// Sendrecv).
type lewiCall struct {
	Bit string
	NB  string
}

const (
	lewiBarrier    = "POPMON_LEWI_CALLS_BARRIER"
	lewiCollective = "POPMON_LEWI_CALLS_COLLECTIVE"
	lewiP2P        = "POPMON_LEWI_CALLS_P2P"
)

// lewiCalls are the blocking calls that lend. Calls without a nonblocking
// form to wait on (MPI_Sendrecv_replace, the communicator constructors,
// MPI_Win_fence, file I/O, ...) do not lend: the MPI library would poll on
// the lent CPU, which makes the guest slower than no lending at all.
var lewiCalls = map[string]lewiCall{
	"MPI_Barrier":              {lewiBarrier, "MPI_Ibarrier"},
	"MPI_Allgather":            {lewiCollective, "MPI_Iallgather"},
	"MPI_Allgatherv":           {lewiCollective, "MPI_Iallgatherv"},
	"MPI_Allreduce":            {lewiCollective, "MPI_Iallreduce"},
	"MPI_Alltoall":             {lewiCollective, "MPI_Ialltoall"},
	"MPI_Alltoallv":            {lewiCollective, "MPI_Ialltoallv"},
	"MPI_Alltoallw":            {lewiCollective, "MPI_Ialltoallw"},
	"MPI_Bcast":                {lewiCollective, "MPI_Ibcast"},
	"MPI_Exscan":               {lewiCollective, "MPI_Iexscan"},
	"MPI_Gather":               {lewiCollective, "MPI_Igather"},
	"MPI_Gatherv":              {lewiCollective, "MPI_Igatherv"},
	"MPI_Reduce":               {lewiCollective, "MPI_Ireduce"},
	"MPI_Reduce_scatter":       {lewiCollective, "MPI_Ireduce_scatter"},
	"MPI_Reduce_scatter_block": {lewiCollective, "MPI_Ireduce_scatter_block"},
	"MPI_Scan":                 {lewiCollective, "MPI_Iscan"},
	"MPI_Scatter":              {lewiCollective, "MPI_Iscatter"},
	"MPI_Scatterv":             {lewiCollective, "MPI_Iscatterv"},
	"MPI_Recv":                 {lewiP2P, "MPI_Irecv"},
	"MPI_Send":                 {lewiP2P, "MPI_Isend"},
	"MPI_Ssend":                {lewiP2P, "MPI_Issend"},
	"MPI_Rsend":                {lewiP2P, "MPI_Irsend"},
	"MPI_Sendrecv":             {lewiP2P, ""},
	"MPI_Probe":                {lewiP2P, ""},
	"MPI_Wait":                 {lewiP2P, ""},
	"MPI_Waitall":              {lewiP2P, ""},
	"MPI_Waitany":              {lewiP2P, ""},
	"MPI_Waitsome":             {lewiP2P, ""},
}

// checkLewi checks the table against the call list: every call listed,
// every nonblocking form listed with the blocking call's parameters (but
// status) and a request after them.
func checkLewi(calls []*Call) error {
	byName := make(map[string]*Call, len(calls))
	for _, c := range calls {
		byName[c.Name] = c
	}
	for name, l := range lewiCalls {
		c := byName[name]
		if c == nil {
			return fmt.Errorf("lewi: %s is not in the call list", name)
		}
		if l.NB == "" {
			continue
		}
		nb := byName[l.NB]
		if nb == nil {
			return fmt.Errorf("lewi: %s's nonblocking form %s is not in the call list", name, l.NB)
		}
		want := c.lewiNBParams()
		if len(nb.Params) != len(want)+1 || nb.Params[len(want)].Name != "request" {
			return fmt.Errorf("lewi: %s does not take %s's parameters and a request", l.NB, name)
		}
		for i, p := range want {
			if nb.Params[i].Name != p.Name {
				return fmt.Errorf("lewi: %s's parameter %d is %s, %s's %s", l.NB, i+1, nb.Params[i].Name, name, p.Name)
			}
		}
	}
	return nil
}

// lewiNBParams are the parameters the nonblocking form takes before its
// request: the blocking call's but status.
func (c *Call) lewiNBParams() []Param {
	var ps []Param
	for _, p := range c.Params {
		if p.Name != "status" {
			ps = append(ps, p)
		}
	}
	return ps
}

// lewiGuard is the preprocessor condition of c's LeWI path: its
// nonblocking form's version (MPI-3.0 for the collectives).
func lewiGuard(c *Call, byName map[string]*Call) string {
	l, ok := lewiCalls[c.Name]
	if !ok || l.NB == "" {
		return ""
	}
	return byName[l.NB].Guard()
}

// writeLewiHelper writes c's LeWI path: the macro POPMON_LEWI_MPI_X(next),
// the function the wrapper calls (next, or while LeWI lends in c's kind of
// call, popmon_lewi_MPI_X: one relaxed load and a branch), and for a call
// with a nonblocking form popmon_lewi_MPI_X itself (the others are in
// shim/mpi/lewi_mpi.c). Without the nonblocking form (an MPI before 3.0)
// the call does not lend.
func writeLewiHelper(b *bytes.Buffer, c *Call, byName map[string]*Call) {
	l, ok := lewiCalls[c.Name]
	if !ok {
		return
	}
	sel := fmt.Sprintf("#define POPMON_LEWI_%s(next) \\\n\t(__builtin_expect(__atomic_load_n(&popmon_lewi_calls, __ATOMIC_RELAXED) & %s, 0) ? popmon_lewi_%s : (next))\n",
		c.Name, l.Bit, c.Name)
	if l.NB == "" {
		b.WriteString(sel)
		return
	}
	decls := make([]string, len(c.Params))
	for i, p := range c.Params {
		decls[i] = p.Decl
	}
	args := append(strings.Split(paramNames(c.lewiNBParams()), ", "), "&popmon_q")
	status := "MPI_STATUS_IGNORE"
	if c.hasParam("status") {
		status = "status"
	}
	g := lewiGuard(c, byName)
	if g != "" {
		fmt.Fprintf(b, "#if %s\n", g)
	}
	fmt.Fprintf(b, "static int popmon_lewi_%s(%s)\n{\n", c.Name, strings.Join(decls, ", "))
	b.WriteString("\tMPI_Request popmon_q;\n")
	fmt.Fprintf(b, "\tint popmon_r = P%s(%s);\n", l.NB, strings.Join(args, ", "))
	fmt.Fprintf(b, "\tif (popmon_r == MPI_SUCCESS)\n\t\tpopmon_r = popmon_lewi_mpi_wait(&popmon_q, %s);\n", status)
	b.WriteString("\treturn popmon_r;\n}\n")
	b.WriteString(sel)
	if g != "" {
		fmt.Fprintf(b, "#else\n#define POPMON_LEWI_%s(next) (next)\n#endif\n", c.Name)
	}
}

// lewiNext is the function c's wrapper calls (next when c does not lend).
func lewiNext(c *Call, next string) string {
	if _, ok := lewiCalls[c.Name]; !ok {
		return next
	}
	return fmt.Sprintf("POPMON_LEWI_%s(%s)", c.Name, next)
}
