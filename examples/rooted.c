/* rooted.c: a 2-rank program whose rooted collectives' bytes are known
 * exactly, MPI_IN_PLACE at the root included (the byte accounting's
 * validation of the gather and scatter family; docs/library.md, "Bytes and
 * message sizes"). Root 0; counts in ints (4 B).
 *
 * Usage: rooted             2 ranks
 *
 * Expected call profile (sums over both ranks):
 *   MPI_Gather    in place at the root (its send count 0, ignored): each rank
 *                 gives 4 ints; the root's own slot counts as sent
 *                 sent 16 + 16, recv 32 (root)                 sent 32, recv 32
 *   MPI_Gatherv   counts {3, 5}, in place at the root (send count 0): root
 *                 sent 12 (its slot), recv 32; rank 1 sent 20
 *                 (rank 1 passes no counts: not significant there);
 *                 then counts {1, 7} not in place: sent 4 + 28, recv 32
 *                                                              sent 64, recv 64
 *   MPI_Scatter   in place at the root (its receive count 0): root sent 32,
 *                 recv 16 (its slot); rank 1 recv 16;
 *                 then not in place, 2 ints each: sent 16, recv 8 + 8
 *                                                              sent 48, recv 48
 *   MPI_Scatterv  counts {3, 5}, in place at the root: root sent 32, recv 12
 *                 (its slot); rank 1 recv 20             sent 32, recv 32
 * Prints "ok" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "rooted: run with 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int buf[8] = {0, 1, 2, 3, 4, 5, 6, 7}, all[8] = {0};
	int counts[2] = {3, 5}, displs[2] = {0, 3};
	int counts2[2] = {1, 7}, displs2[2] = {0, 1};

	if (rank == 0)
		MPI_Gather(MPI_IN_PLACE, 0, MPI_INT, all, 4, MPI_INT, 0, MPI_COMM_WORLD);
	else
		MPI_Gather(buf, 4, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);

	if (rank == 0)
		MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	else
		MPI_Gatherv(buf, 5, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Gatherv(buf, counts2[rank], MPI_INT, all, counts2, displs2, MPI_INT, 0, MPI_COMM_WORLD);

	if (rank == 0)
		MPI_Scatter(all, 4, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, 0, MPI_COMM_WORLD);
	else
		MPI_Scatter(NULL, 0, MPI_INT, buf, 4, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Scatter(all, 2, MPI_INT, buf, 2, MPI_INT, 0, MPI_COMM_WORLD);

	if (rank == 0)
		MPI_Scatterv(all, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, 0, MPI_COMM_WORLD);
	else
		MPI_Scatterv(NULL, NULL, NULL, MPI_INT, buf, 5, MPI_INT, 0, MPI_COMM_WORLD);

	if (rank == 0)
		printf("ok\n");
	MPI_Finalize();
	return 0;
}
