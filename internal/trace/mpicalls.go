package trace

// callKind is a call's entry in mpiCalls (mpicalls_gen.go).
type callKind struct {
	kind Kind
	coll Coll
}

// CallKind classifies an MPI function by its C name, from the table that
// shim/gen writes with libpopmon's wrappers from the same call list
// (shim/gen/mpi_calls.txt, mpicalls_gen.go): a function libpopmon does not
// intercept is KindOther.
func CallKind(name string) (Kind, Coll) {
	if c, ok := mpiCalls[name]; ok {
		return c.kind, c.coll
	}
	return KindOther, CollNone
}
