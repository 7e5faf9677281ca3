/* wildcard.c: receives from MPI_ANY_SOURCE whose actual senders a trace
 * must recover (popmon run --trace; docs/trace-format.md).
 *
 * Usage: wildcard [ROUNDS]          default ROUNDS = 3; P >= 2 ranks
 *
 * In each round every rank r > 0 sends 100*r bytes with tag r to rank 0
 * (MPI_Send), which receives them with MPI_ANY_SOURCE and MPI_ANY_TAG and
 * MPI_STATUS_IGNORE in whatever order they arrive (MPI_Recv), then again
 * with P-1 MPI_Irecv(MPI_ANY_SOURCE) completed by one MPI_Waitall: 2*(P-1)
 * messages per round, each of 100*source bytes and tag source. The posted
 * size (100*P bytes) is larger than any message. A final MPI_Barrier.
 * Prints "ok <messages>" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* GCC flags MPICH's MPI_STATUSES_IGNORE (a null pointer cast) as an
 * overflow of MPI_Waitall's status array: a false positive. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	if (size < 2 || rounds < 1) {
		if (rank == 0)
			fprintf(stderr, "wildcard: needs at least 2 ranks and ROUNDS >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char *buf = calloc((size_t)size, (size_t)100 * (size_t)size);
	MPI_Request *req = malloc(sizeof *req * (size_t)size);
	if (!buf || !req)
		MPI_Abort(MPI_COMM_WORLD, 3);
	int got = 0;
	for (int i = 0; i < rounds; i++) {
		for (int pass = 0; pass < 2; pass++) {
			if (rank > 0) {
				MPI_Send(buf, 100 * rank, MPI_CHAR, 0, rank, MPI_COMM_WORLD);
			} else if (pass == 0) {
				for (int k = 1; k < size; k++, got++)
					MPI_Recv(buf, 100 * size, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
			} else {
				for (int k = 1; k < size; k++, got++)
					MPI_Irecv(buf + (size_t)k * 100 * (size_t)size, 100 * size, MPI_CHAR, MPI_ANY_SOURCE,
						  MPI_ANY_TAG, MPI_COMM_WORLD, &req[k - 1]);
				MPI_Waitall(size - 1, req, MPI_STATUSES_IGNORE);
			}
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ok %d\n", got);
	free(buf);
	free(req);
	MPI_Finalize();
	return 0;
}
