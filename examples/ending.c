/* ending.c: the imbalance demo, ended abnormally by one rank mid-run.
 *
 * Usage: ending [K_MS [ITERATIONS [HOW [RANK+1 [AT]]]]]
 *        defaults: K = 50 ms, N = 100, HOW = 1, RANK+1 = 2 (rank 1), AT = 20
 *
 * Rank r (0-based) works (r+1)*K per iteration, then all ranks meet in an
 * MPI_Allreduce, exactly as imbalance.c (load balance (P+1)/(2P): 0.75 for
 * P = 2, 0.625 for P = 4). At the start of iteration AT, rank RANK ends the
 * job the way HOW says, never reaching MPI_Finalize:
 *   HOW = 1  a segmentation fault (a store through a null pointer)
 *   HOW = 2  MPI_Abort(MPI_COMM_WORLD, 7)
 *   HOW = 3  exit(3)
 * The other ranks are then ended by the MPI launcher (MPICH kills them at
 * once, Open MPI sends SIGTERM, then SIGKILL). popmon run assembles a
 * partial measurement up to the end: its load balance is the design's,
 * its MPI_Allreduce count per rank about AT - 1, and its reason crashed,
 * aborted or no_finalize.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	double arg[5] = { 50, 100, 1, 2, 20 };
	if (parse_args(argc, argv, rank, "[K_MS [ITERATIONS [HOW [RANK+1 [AT]]]]]", 5, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double k = arg[0];
	const int n = (int)arg[1], how = (int)arg[2], who = (int)arg[3] - 1, at = (int)arg[4];

	long checksum = 0;
	for (int it = 1; it <= n; it++) {
		if (it == at && rank == who) {
			fprintf(stderr, "ending: rank %d ends the job (how %d) at iteration %d\n", rank, how, it);
			fflush(stderr);
			if (how == 1)
				*(volatile int *)(uintptr_t)0 = 1;
			if (how == 2)
				MPI_Abort(MPI_COMM_WORLD, 7);
			exit(3);
		}
		work_ms((rank + 1) * k);
		long mine = (long)(rank + 1) * it, sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		checksum += sum;
	}
	if (rank == 0)
		printf("ok %ld\n", checksum);
	MPI_Finalize();
	return 0;
}
