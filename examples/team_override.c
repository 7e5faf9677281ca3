/* team_override.c: MPI+OpenMP, a `num_threads(4)` clause overrides
 * OMP_NUM_THREADS=2, after a serial start: the process holds the CPUs of its
 * largest team (4), not OMP_NUM_THREADS, and the serial start is
 * serialization of the 3 CPUs that idle then (POP-METRICS.md §1).
 *
 * Usage: team_override [S_MS [W_MS]]      defaults: S = 200 ms, W = 200 ms
 *        P ranks (any P >= 1; tested with P = 2), run with OMP_NUM_THREADS=2
 *        (any value below 4 gives the same metrics); MPI_THREAD_FUNNELED
 *        wall time S + W: 0.4 s
 *        Measure with OMP_WAIT_POLICY=passive (see examples/README.md).
 *
 * Every rank: the primary thread works S alone (no OpenMP construct yet),
 * then one `omp parallel num_threads(4)` region in which each of the 4
 * threads works W, then MPI_Barrier.
 *
 * Accounts per rank (C = 4 CPUs per rank, R = S + W):
 *   U = S + 4W, Iser = 3S (Mw = 0), M = Ilb = Isch = 0 (up to fork/join)
 *   U + Iser = 4S + 4W = C*R
 * Expected, model talp:
 *   Parallel efficiency        = (S + 4W)/(4(S + W))          = 0.625 (S = W)
 *   MPI parallel efficiency = Communication = LB = In = Out   = 1
 *   OpenMP parallel efficiency = Serialization = (S+4W)/(4(S+W)) = 0.625
 *   OpenMP load balance = Scheduling                          = 1
 * (Counting only OMP_NUM_THREADS = 2 CPUs during S, or 1, the accounts would
 * not add up to C*R.)
 *
 * Prints "ok <4*P>" on rank 0 (thread work items of all ranks); exits 1 if
 * the team is not 4 threads or MPI lacks FUNNELED, 2 with a bad argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_FUNNELED) {
		if (rank == 0)
			fprintf(stderr, "team_override: MPI does not provide MPI_THREAD_FUNNELED\n");
		MPI_Finalize();
		return 1;
	}
	double arg[2] = { 200, 200 }; /* S, W in ms */
	if (parse_args(argc, argv, rank, "[S_MS [W_MS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	MPI_Barrier(MPI_COMM_WORLD); /* everyone starts together */
	work_ms(arg[0]);             /* serial: the other 3 CPUs idle */
	long items = 0;
	int team = 0;
#pragma omp parallel num_threads(4) reduction(+ : items)
	{
		if (omp_get_thread_num() == 0)
			team = omp_get_num_threads();
		work_ms(arg[1]);
		items++;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	long total = 0;
	MPI_Reduce(&items, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (team != 4)
		fprintf(stderr, "team_override: rank %d: team of %d threads, want 4\n", rank, team);
	if (rank == 0 && team == 4)
		printf("ok %ld\n", total);
	MPI_Finalize();
	return team == 4 ? 0 : 1;
}
