/* sessions.c: an MPI-4 program that uses the Sessions model (MPI_Session_init,
 * a communicator from the "mpi://WORLD" process set) and never calls
 * MPI_Init. popmon measures programs that call MPI_Init or MPI_Init_thread;
 * for this one it must say, in one line, that it was not measured, rather
 * than pass one process's measurement off as the job's.
 *
 * Usage: sessions              (any P; needs an MPI-4 library: MPICH 4)
 * Rank 0 prints "ok <P>" (the sum of one per rank).
 */
#include <mpi.h>
#include <stdio.h>

int main(void)
{
#if MPI_VERSION >= 4
	MPI_Session s;
	MPI_Group g;
	MPI_Comm c;
	if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS)
		return 1;
	MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
	MPI_Comm_create_from_group(g, "org.popmon.sessions", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
	int rank, one = 1, sum = 0;
	MPI_Comm_rank(c, &rank);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
	if (rank == 0)
		printf("ok %d\n", sum);
	MPI_Comm_free(&c);
	MPI_Group_free(&g);
	MPI_Session_finalize(&s);
	return 0;
#else
	fprintf(stderr, "sessions: this MPI has no MPI-4 Sessions\n");
	return 1;
#endif
}
