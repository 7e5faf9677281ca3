/* busy.c: computes (spins on the clock) while useful, so that CPU time
 * during useful time equals useful time; rank r computes (r+1)*K ms per
 * iteration, then all ranks meet in MPI_Allreduce, where the faster ones
 * busy-wait (Open MPI and MPICH poll).
 *
 * Usage: busy [K_MS [ITERATIONS]]     defaults: K = 40 ms, N = 4
 * Prints "ok <sum>" on rank 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

static void compute_ms(double ms)
{
	double end = now_ms() + ms;
	while (now_ms() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double k = argc > 1 ? atof(argv[1]) : 40;
	int n = argc > 2 ? atoi(argv[2]) : 4;
	int sum = 0;
	for (int it = 0; it < n; it++) {
		compute_ms((rank + 1) * k);
		int mine = rank + 1, all = 0;
		MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		sum += all;
	}
	if (rank == 0)
		printf("ok %d\n", sum);
	MPI_Finalize();
	return 0;
}
