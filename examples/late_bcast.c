/* late_bcast.c: a Late Broadcast by design (Scalasca's wait-state pattern).
 *
 * Usage: late_bcast [K_MS [N]]             defaults: K = 20 ms, N = 10; 4 ranks
 *
 * The root (rank 0) works K ms before each of N MPI_Bcast of 1 KiB; the
 * other ranks enter the broadcast right away and wait for it:
 *   Late Broadcast = N*K*(P-1) (P = 4: 0.60 s), K*N on each non-root, 0 on the root
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
	double arg[2] = { 20, 10 };
	if (parse_args(argc, argv, rank, "[K_MS [N]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const int n = (int)arg[1];
	int buf[256] = { 0 }; /* 1 KiB */
	int ok = 1;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			work_ms(arg[0]);
			buf[0] = i;
		}
		MPI_Bcast(buf, 256, MPI_INT, 0, MPI_COMM_WORLD);
		ok &= buf[0] == i;
	}
	if (rank == 0)
		printf("ok %d\n", n);
	MPI_Finalize();
	return !ok;
}
