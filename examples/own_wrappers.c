/* own_wrappers.c: an application with its own PMPI wrapper (a common way to
 * count or time calls in-house): it defines MPI_Allreduce itself, so its
 * calls to it bind inside the program and never reach a preloaded library.
 * popmon must say so instead of reporting the MPI_Allreduce waits as useful
 * time (otherwise: a confident load balance of 1.00 for a designed 0.625).
 *
 * Usage: own_wrappers [K_MS [ITERATIONS]]   defaults: K = 50 ms, N = 5
 *        (as imbalance.c: rank r works (r+1)*K, then MPI_Allreduce;
 *        designed LB = (P+1)/(2P), 0.625 for P = 4)
 *
 * Prints "ok <sum> (own wrapper: N calls)" on rank 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "work.h"

static long own_calls;

/* The program's own PMPI wrapper. */
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		  MPI_Comm comm)
{
	own_calls++;
	return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double arg[2] = { 50, 5 };
	if (parse_args(argc, argv, rank, "[K_MS [ITERATIONS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	long total = 0;
	for (int it = 0; it < (int)arg[1]; it++) {
		work_ms((rank + 1) * arg[0]);
		long mine = rank + 1, sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		total += sum;
	}
	if (rank == 0)
		printf("ok %ld (own wrapper: %ld calls)\n", total, own_calls);
	MPI_Finalize();
	return 0;
}
