/* comms.c: communicators created and freed in a loop, whose messages and
 * collectives a trace must attribute to the right communicator (popmon run
 * --trace; docs/trace-format.md). MPI implementations reuse a freed
 * communicator's handle for the next one, so a stale handle → id mapping
 * would send the messages of one round to the partners of another.
 *
 * Usage: comms [ROUNDS]          default ROUNDS = 3; exactly 4 ranks
 *
 * Round i splits MPI_COMM_WORLD into pairs: {0,1},{2,3} when i is even,
 * {0,2},{1,3} when i is odd (MPI_Comm_split). Each rank exchanges 8*(i+1)
 * bytes with tag i with its partner (MPI_Sendrecv on the pair), joins an
 * MPI_Allreduce on the pair, then frees it (MPI_Comm_free): 4 messages and
 * 2 two-member allreduces per round. Prints "ok <rounds>" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	if (size != 4 || rounds < 1) {
		if (rank == 0)
			fprintf(stderr, "comms: needs exactly 4 ranks and ROUNDS >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char out[64] = {0}, in[64] = {0};
	for (int i = 0; i < rounds; i++) {
		int colour = i % 2 == 0 ? rank / 2 : rank % 2;
		MPI_Comm pair;
		MPI_Comm_split(MPI_COMM_WORLD, colour, rank, &pair);
		int me;
		MPI_Comm_rank(pair, &me);
		int n = 8 * (i + 1) < (int)sizeof out ? 8 * (i + 1) : (int)sizeof out;
		MPI_Sendrecv(out, n, MPI_BYTE, 1 - me, i, in, n, MPI_BYTE, 1 - me, i, pair, MPI_STATUS_IGNORE);
		int one = 1, sum = 0;
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, pair);
		if (sum != 2)
			MPI_Abort(MPI_COMM_WORLD, 3);
		MPI_Comm_free(&pair);
	}
	if (rank == 0)
		printf("ok %d\n", rounds);
	MPI_Finalize();
	return 0;
}
