/* early_reduce.c: an Early Reduce by design (Scalasca's wait-state pattern).
 *
 * Usage: early_reduce [K_MS [N]]           defaults: K = 20 ms, N = 10; 4 ranks
 *
 * The ranks other than the root (rank 0) work K ms before each of N
 * MPI_Reduce of 1 KiB; the root enters right away and waits for them:
 *   Early Reduce = N*K on the root (0.20 s), nowhere else
 * Prints "ok N" on rank 0.
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
	double arg[2] = { 20, 10 };
	if (parse_args(argc, argv, rank, "[K_MS [N]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const int n = (int)arg[1];
	int in[256], out[256]; /* 1 KiB */
	int ok = 1;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < n; i++) {
		if (rank != 0)
			work_ms(arg[0]);
		for (int j = 0; j < 256; j++)
			in[j] = i;
		MPI_Reduce(in, out, 256, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
		if (rank == 0)
			ok &= out[0] == i * size;
	}
	if (rank == 0)
		printf("ok %d\n", n);
	MPI_Finalize();
	return !ok;
}
