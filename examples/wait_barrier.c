/* wait_barrier.c: Wait at Barrier by design (Scalasca's wait-state pattern).
 *
 * Usage: wait_barrier [K_MS [N]]           defaults: K = 10 ms, N = 10; 4 ranks
 *
 * Rank r works r*K ms before each of N MPI_Barrier calls, so in every
 * barrier rank r waits (P-1-r)*K for rank P-1:
 *   Wait at Barrier = N*K*P*(P-1)/2 in total (P = 4: 0.60 s = 10 x 60 ms),
 *                     N*(P-1)*K on rank 0 (0.30 s), 0 on rank P-1
 * Prints "ok N" on rank 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double arg[2] = { 10, 10 };
	if (parse_args(argc, argv, rank, "[K_MS [N]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const int n = (int)arg[1];
	for (int i = 0; i < n; i++) {
		work_ms(rank * arg[0]);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("ok %d\n", n);
	MPI_Finalize();
	return 0;
}
