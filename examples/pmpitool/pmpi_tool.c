/* pmpi_tool.c: a minimal PMPI tool (as mpiP or a site's accounting library
 * are), to check that popmon and another PMPI tool preloaded together both
 * see every MPI call. It counts the MPI_Allreduce calls of its process and
 * prints, at MPI_Finalize,
 *
 *   pmpi_tool: rank R: N MPI_Allreduce calls
 *
 * Built as libpmpi_tool.so (examples/build.sh); preloaded after popmon's
 * library (popmon run and popmon exec put popmon's first), popmon calls the
 * tool's wrappers instead of PMPI_, so both tools count. Preloaded before
 * popmon's, the tool calls PMPI_ directly and popmon never sees those
 * calls: popmon then says so instead of reporting metrics.
 */
#include <mpi.h>
#include <stdio.h>

static long allreduce_calls;

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		  MPI_Comm comm)
{
	allreduce_calls++;
	return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Finalize(void)
{
	int rank = -1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	printf("pmpi_tool: rank %d: %ld MPI_Allreduce calls\n", rank, allreduce_calls);
	fflush(stdout);
	return PMPI_Finalize();
}
