/* bytes.c: a 2-rank program whose bytes and message sizes per MPI call are
 * known exactly (the byte accounting's validation; docs/library.md, "Bytes
 * and message sizes").
 *
 * Usage: bytes [N]          default N = 10 (ping-pong round trips); 2 ranks
 *
 * Expected call profile (sums over both ranks; bucket b of the size
 * histogram holds sizes 2^(b-1) to 2^b - 1 bytes, bucket 0 empty messages):
 *   MPI_Send       sent 1100*N  (N of 1000 B: bucket 10; N of 100 B: bucket 7)
 *   MPI_Recv       recv 1100*N  posted 4000 B each, MPI_ANY_SOURCE/MPI_ANY_TAG,
 *                               MPI_STATUS_IGNORE: the actual sizes count
 *   MPI_Isend      sent 32      (4 of 8 B: bucket 4)
 *   MPI_Irecv      recv 48      (4 of 8 B completed by MPI_Waitall with
 *                               MPI_STATUSES_IGNORE, posted 40 B each; 1 of
 *                               16 B completed by MPI_Wait: bucket 5)
 *   MPI_Ssend      sent 16      (bucket 5)
 *   MPI_Send_init  sent 64*N    (N starts of 64 B: bucket 7)
 *   MPI_Recv_init  recv 64*N    (bucket 7)
 *   MPI_Sendrecv   sent 48, recv 48  (each rank 24 B each way: 4 entries in bucket 5)
 *   MPI_Bcast      sent 1024 (root), recv 1024 (other): bucket 11 twice
 *   MPI_Allreduce  sent 128, recv 128 (64 B on each rank: bucket 7 twice)
 *   MPI_Gather     sent 32 (16 B each), recv 32 (root): bucket 6 once (root:
 *                  its larger buffer, 32 B), bucket 5 once
 *   MPI_Barrier    no bytes
 * Prints "ok" on rank 0.
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
	int n = argc > 1 ? atoi(argv[1]) : 10;
	if (size != 2 || n < 1) {
		if (rank == 0)
			fprintf(stderr, "bytes: needs exactly 2 ranks and N >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	static char buf[4096], small[128];
	int other = 1 - rank;

	/* Blocking ping-pong: 1000 B there, 100 B back; wildcard receives. */
	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, 1000, MPI_CHAR, 1, i, MPI_COMM_WORLD);
			MPI_Recv(buf, 1000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, 1000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 100, MPI_CHAR, 0, i, MPI_COMM_WORLD);
		}
	}

	/* Non-blocking: 4 messages of 2 ints, completed by MPI_Waitall. */
	MPI_Request req[4];
	int ints[4][10];
	for (int k = 0; k < 4; k++) {
		if (rank == 0)
			MPI_Isend(ints[k], 2, MPI_INT, 1, 100 + k, MPI_COMM_WORLD, &req[k]);
		else
			MPI_Irecv(ints[k], 10, MPI_INT, MPI_ANY_SOURCE, 100 + k, MPI_COMM_WORLD, &req[k]);
	}
	MPI_Waitall(4, req, MPI_STATUSES_IGNORE);

	/* One MPI_Irecv completed by MPI_Wait, 16 B by MPI_Ssend. */
	if (rank == 0) {
		MPI_Irecv(small, 64, MPI_CHAR, 1, 200, MPI_COMM_WORLD, &req[0]);
		MPI_Wait(&req[0], MPI_STATUS_IGNORE);
	} else {
		MPI_Ssend(small, 16, MPI_CHAR, 0, 200, MPI_COMM_WORLD);
	}

	/* Persistent: N starts of 64 B from rank 0 to rank 1. */
	if (rank == 0)
		MPI_Send_init(buf, 16, MPI_INT, 1, 300, MPI_COMM_WORLD, &req[0]);
	else
		MPI_Recv_init(buf, 16, MPI_INT, 0, 300, MPI_COMM_WORLD, &req[0]);
	for (int i = 0; i < n; i++) {
		MPI_Start(&req[0]);
		MPI_Wait(&req[0], MPI_STATUS_IGNORE);
	}
	MPI_Request_free(&req[0]);

	/* Exchange: 24 B each way on each rank. */
	MPI_Sendrecv(buf, 24, MPI_CHAR, other, 400, small, 24, MPI_CHAR, other, 400, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);

	/* Collectives. */
	MPI_Bcast(buf, 256, MPI_INT, 0, MPI_COMM_WORLD);
	double d[8] = {0}, dsum[8];
	MPI_Allreduce(d, dsum, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	int four[4] = {0}, all[8];
	MPI_Gather(four, 4, MPI_INT, all, 4, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);

	if (rank == 0)
		printf("ok\n");
	MPI_Finalize();
	return 0;
}
