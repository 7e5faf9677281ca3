/* wrong_order.c: a Late Sender in the wrong order by design (Scalasca's
 * "Late Sender, wrong order", same source).
 *
 * Usage: wrong_order [K_MS]                default: K = 50 ms; 2 ranks
 *
 * After a barrier, rank 0 sends tag 1, works K ms, then sends tag 2 (8
 * bytes each, so both are sent eagerly). Rank 1 receives tag 2 first,
 * waiting K for it, then tag 1, which had arrived long before:
 *   Late Sender = K on rank 1 (50 ms), all of it wrong order (same source)
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
	double k = 50;
	if (parse_args(argc, argv, rank, "[K_MS]", 1, &k) != 0 || size < 2) {
		if (rank == 0 && size < 2)
			fprintf(stderr, "wrong_order: needs 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double a = 1, b = 2;
	int ok = 1;
	if (rank == 0) {
		MPI_Send(&a, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
		work_ms(k);
		MPI_Send(&b, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv(&b, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(&a, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		ok = a == 1 && b == 2;
		printf(ok ? "ok\n" : "wrong values\n");
	}
	MPI_Finalize();
	return !ok;
}
