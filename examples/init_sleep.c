/* init_sleep.c: nothing but S ms of useful work between MPI_Init and
 * MPI_Finalize.
 *
 * Usage: init_sleep [S_MS]     default: S = 200 ms
 *
 * Every rank's useful time in the Global region is S (within the clock's
 * and the scheduler's resolution): whatever popmon itself does at MPI_Init
 * (its live file, the session registry, the node agent) and at
 * MPI_Finalize must not be counted as the application's useful time.
 *
 * Prints "ok S" on rank 0.
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
	double arg[1] = { 200 };
	if (parse_args(argc, argv, rank, "[S_MS]", 1, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	work_ms(arg[0]);
	MPI_Finalize();
	if (rank == 0)
		printf("ok %d\n", (int)arg[0]);
	return 0;
}
