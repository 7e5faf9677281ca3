/* malleable.c: a malleable hybrid MPI+OpenMP program that picks its own
 * OpenMP thread count from its measured parallel efficiency while it runs
 * (the malleability story of seed 002: "has the efficiency of the last
 * iterations reached the target?"), with popmon_metrics(...,
 * POPMON_WINDOW_SINCE_LAST) (popmon.h; compile with -I<repo>/shim, nothing
 * to link).
 *
 * Usage: malleable [S_MS [P_MS [TARGET_PERCENT]]]  defaults: S = 100 ms,
 *        P = 200 ms, target 66 %; any number of ranks (tested with 2),
 *        MPI_THREAD_FUNNELED. Run with OMP_NUM_THREADS=1: popmon counts the
 *        OpenMP runtime's maximum team as the process's CPUs from the
 *        start, and the program starts with one thread (it asks for larger
 *        teams with num_threads). Measure with OMP_WAIT_POLICY=passive
 *        (MPICH).
 *
 * Every iteration each rank works S alone (its other threads idle: OpenMP
 * serialization), then P split over a team of T threads (P/T each), then
 * MPI_Allreduce (balanced: every rank alike). With T threads (T CPUs, the
 * largest team so far) the parallel efficiency of an iteration is
 *   PE(T) = (S + P) / (T*S + P)      (1, 0.75, 0.6, 0.5 for T = 1..4)
 * decreasing in T. The controller starts at T = 1 and, every 3 iterations
 * (a window), asks popmon_metrics(NULL, SINCE_LAST) (collective: the same
 * answer on every rank) for the window's PE: at least the target: one
 * thread more; below it: one thread less, and it stays there. The answer
 * is the largest T with PE(T) >= target:
 *   T* = floor(((S + P)/target - P) / S)   (2 for the defaults: 0.75 >= 0.66 > 0.6)
 * Windows: T = 1, 2, 3 (PE 1, 0.75, 0.6), then back to 2: 9 iterations,
 * about 2 s. S/P = 1/2 makes the gap PE(2) - PE(3) the largest, so that the
 * time a busy-waiting MPI loses in its synchronizations (real, not
 * designed) cannot move the answer.
 * popmon counts the largest team as the process's CPUs, so the controller
 * only grows until it steps back once (a team that shrinks keeps its CPUs).
 *
 * Rank 0 prints "window W threads T pe PE" per window, then
 * "converged threads T expected T*" and "ok"; exits 1 when T != T* or a
 * query failed (0 without popmon: nothing to adapt, "ok (not measured)").
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#include "popmon.h"
#include "work.h"

enum { WINDOW = 3, MAX_THREADS = 8, MAX_WINDOWS = 12 };

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double arg[3] = { 100, 200, 66 }; /* S ms, P ms, target % */
	if (provided < MPI_THREAD_FUNNELED || parse_args(argc, argv, rank, "[S_MS [P_MS [TARGET_PERCENT]]]", 3, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double s = arg[0], p = arg[1], target = arg[2] / 100;
	const int expected = (int)(((s + p) / target - p) / s);

	struct popmon_metrics m = { .size = sizeof m };
	if (popmon_metrics(NULL, POPMON_WINDOW_SINCE_LAST, &m) == POPMON_ERR_NOTMEASURED) {
		if (rank == 0)
			printf("ok (not measured)\n");
		MPI_Finalize();
		return 0;
	}
	int threads = 1, settled = 0, failures = 0;
	for (int w = 0; w < MAX_WINDOWS && !settled; w++) {
		for (int it = 0; it < WINDOW; it++) {
			work_ms(s);
			const double share = p / threads;
#pragma omp parallel num_threads(threads)
			work_ms(share);
			long one = 1, sum = 0;
			MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		}
		if (popmon_metrics(NULL, POPMON_WINDOW_SINCE_LAST, &m) != POPMON_SUCCESS) {
			failures++;
			break;
		}
		if (rank == 0)
			printf("window %d threads %d pe %.4f\n", w, threads, m.parallel_efficiency);
		if (m.parallel_efficiency >= target && threads < MAX_THREADS) {
			threads++;
		} else {
			if (m.parallel_efficiency < target && threads > 1)
				threads--;
			settled = 1;
		}
	}
	if (rank == 0) {
		printf("converged threads %d expected %d\n", threads, expected);
		if (threads == expected && settled && !failures)
			printf("ok\n");
	}
	MPI_Finalize();
	return threads == expected && settled && !failures ? 0 : 1;
}
