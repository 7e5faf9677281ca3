/* critical_path.c: a critical path that crosses ranks by design.
 *
 * Usage: critical_path [K_MS [S_MS]]       defaults: K = 100 ms, S = 10 ms; 2 ranks
 *
 * After a barrier, rank 0 works K ms and sends 8 bytes to rank 1; rank 1
 * works S ms, receives (waiting K - S for rank 0), then works K ms. The
 * critical path (from the end of MPI_Init) runs through rank 0's work and
 * then rank 1's: 2K = 200 ms of useful time on it, K = 100 ms on each rank
 * (plus the MPI calls' own few microseconds and the barrier, MPI_Init's
 * end and MPI_Finalize's time). Late Sender = K - S = 90 ms on rank 1.
 * Ranks beyond 2 only join the barrier. Prints "ok" on rank 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double arg[2] = { 100, 10 };
	if (parse_args(argc, argv, rank, "[K_MS [S_MS]]", 2, arg) != 0 || size < 2 || arg[1] > arg[0]) {
		if (rank == 0 && (size < 2 || arg[1] > arg[0]))
			fprintf(stderr, "critical_path: needs 2 ranks and S <= K\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double v = 0;
	if (rank == 0) {
		work_ms(arg[0]);
		v = 42;
		MPI_Send(&v, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
	} else if (rank == 1) {
		work_ms(arg[1]);
		MPI_Recv(&v, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		work_ms(arg[0]);
		printf(v == 42 ? "ok\n" : "wrong value\n");
	}
	MPI_Finalize();
	return rank == 1 && v != 42;
}
