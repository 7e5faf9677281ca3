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
 * Prints "ok S" on rank 0, and on every rank "span R NS": the nanoseconds
 * from MPI_Init's return to the call of MPI_Finalize by the program's own
 * clock, which is what the useful time must be (a sleep may overrun S by
 * the scheduler's delay; the tests compare with the span).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double arg[1] = { 200 };
	if (parse_args(argc, argv, rank, "[S_MS]", 1, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	work_ms(arg[0]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	MPI_Finalize();
	printf("span %d %lld\n", rank,
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (long long)(t1.tv_nsec - t0.tv_nsec));
	if (rank == 0)
		printf("ok %d\n", (int)arg[0]);
	return 0;
}
