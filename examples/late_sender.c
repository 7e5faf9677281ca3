/* late_sender.c: a Late Sender by design (Scalasca's wait-state pattern).
 *
 * Usage: late_sender [K_MS [N]]            defaults: K = 50 ms, N = 10; 2 ranks
 *
 * After a barrier that aligns the ranks, rank 0 works K ms before each of
 * N MPI_Send of 8 bytes to rank 1, which waits in MPI_Recv right away:
 *   Late Sender   = N*K on rank 1 (0.50 s), 0 on rank 0
 *   Late Receiver = 0 (8-byte messages are sent eagerly)
 * Ranks beyond 2 only join the barrier. Prints "ok N" on rank 1.
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
	double arg[2] = { 50, 10 };
	if (parse_args(argc, argv, rank, "[K_MS [N]]", 2, arg) != 0 || size < 2) {
		if (rank == 0 && size < 2)
			fprintf(stderr, "late_sender: needs 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	const int n = (int)arg[1];
	MPI_Barrier(MPI_COMM_WORLD);
	double buf = 0;
	int got = 0;
	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			work_ms(arg[0]);
			buf = i;
			MPI_Send(&buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
		} else if (rank == 1) {
			MPI_Recv(&buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			got += buf == i;
		}
	}
	if (rank == 1)
		printf("ok %d\n", got);
	MPI_Finalize();
	return rank == 1 && got != n;
}
