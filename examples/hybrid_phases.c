/* hybrid_phases.c: MPI+OpenMP, two phases that lose the same time to
 * different programming models (the synthetic experiment of seed 001): phase 1
 * is imbalanced inside OpenMP, phase 2 between MPI ranks. Each phase is a
 * popmon region (popmon.h; compile with -I<repo>/shim, nothing to link).
 *
 * Usage: hybrid_phases [W_MS [REPS]]       defaults: W = 100 ms, N = 2
 *        P ranks, T = OMP_NUM_THREADS threads per rank (designed for any
 *        P >= 1, T >= 2; tested with P = 2, T = 2); MPI_THREAD_FUNNELED
 *        wall time N*(T+P)*W: 0.8 s for P = T = 2
 *        Measure with OMP_WAIT_POLICY=passive (needed with MPICH, which
 *        busy-waits; see examples/README.md, "Environment for the tests").
 *
 * Region "phase1", N repetitions of: an `omp parallel` region in which thread
 *   j works (T-j)*W (every rank alike), then MPI_Allreduce.  R1 = N*T*W
 *   (The primary thread, j = 0, works longest: it never waits at the join,
 *   so no sleeping thread has to be woken before the MPI call. With MPICH,
 *   which busy-waits, that wake-up cost up to a scheduler tick per region.)
 * Region "phase2", N repetitions of: an `omp parallel` region in which every
 *   thread of rank r works (r+1)*W, then MPI_Allreduce.     R2 = N*P*W
 *   Rank r waits in the Allreduce (P-1-r)*W while its T-1 workers idle.
 * "Global" = phase1 + phase2 (up to the MPI_Init/Finalize edges).
 *
 * Accounts per rank, in units of N*W (R = elapsed; T CPUs per rank, C = P*T):
 *   phase1: R = T,   U = T(T+1)/2, Ilb = T(T-1)/2, M = Mw = 0
 *   phase2: R = P,   U_r = T(r+1), M_r = P-1-r, Mw_r = (T-1)(P-1-r), Ilb = 0
 *   (Iser and Isch are 0 up to fork/join latency and loop overhead)
 *
 * Expected, model talp (POP-METRICS.md §2: Mw is serialization of the
 * OpenMP branch and MPI time of the MPI branch):
 *   phase1: PE = (T+1)/(2T);  MPI PE = CommE = LB = In = Out = 1;
 *           OpenMP PE = OpenMP LB = (T+1)/(2T), Serialization = Scheduling = 1
 *   phase2: PE = (P+1)/(2P);  MPI PE = MPI LB = In = (P+1)/(2P), CommE = Out = 1
 *           (rank P-1 never waits); OpenMP LB = Sched = 1,
 *           OpenMP PE = Serialization = 1 - (T-1)(P-1)/(2TP)  (0.875, P = T = 2)
 *   Global: PE = (T+P+2)/(2(T+P));  MPI PE = MPI LB = In = 1 - (P-1)/(2(T+P)),
 *           CommE = Out = 1;  OpenMP LB = 1 - (T-1)/(2(T+P)), Scheduling = 1,
 *           Serialization 13/14 and OpenMP PE 13/16 for P = T = 2
 * Model pop-hybrid (per-thread U; NonMPI_r = R - M_r):
 *   phase1: Hybrid PE = LB = (T+1)/(2T), CommE = 1; MPI PE = LB = CommE = 1;
 *           OpenMP PE = LB = (T+1)/(2T), OpenMP CommE = 1
 *   phase2: Hybrid PE = LB = (P+1)/(2P), CommE = 1; MPI PE = LB = (P+1)/(2P),
 *           MPI CommE = 1; OpenMP PE = LB = CommE = 1
 *   Global: thread j of rank r: U = (T-j) + (r+1), max = T+P, NonMPI_r = T+r+1
 *           Hybrid PE = LB = (T+P+2)/(2(T+P)), CommE = 1;
 *           MPI PE = LB = (2T+P+1)/(2(T+P)), MPI CommE = 1;
 *           OpenMP PE = LB = (T+P+2)/(2T+P+1), OpenMP CommE = 1
 * Model pop-additive (SerialUseful = 0; OMP_r = R - M_r; Avg(OMPUseful) = Avg(U)):
 *   phase1: PE = Thread eff = OpenMP region eff = (T+1)/(2T);
 *           Process eff = MPI LB = MPI CommE = Serial region eff = 1
 *   phase2: PE = Process eff = MPI LB = (P+1)/(2P);
 *           MPI CommE = Thread eff = OpenMP region eff = Serial region eff = 1
 *   Global: PE = (T+P+2)/(2(T+P)); Process eff = MPI LB = 1 - (P-1)/(2(T+P)),
 *           MPI CommE = 1; Thread eff = OpenMP region eff = 1 - (T-1)/(2(T+P)),
 *           Serial region eff = 1
 *
 * P = 2, T = 2 (the tested configuration):
 *   phase1: talp PE 0.75, MPI LB 1, OpenMP LB 0.75 (OpenMP is to blame)
 *   phase2: talp PE 0.75, MPI LB 0.75, OpenMP LB 1 (MPI is to blame)
 *   Global: talp PE 0.75, MPI PE/LB 0.875, OpenMP PE/LB 0.875;
 *           pop-hybrid 0.75 / MPI 0.875 / OpenMP 6/7 = 0.857;
 *           pop-additive PE 0.75, Process 0.875, Thread 0.875
 * P = 4, T = 2: phase1 0.75 (OpenMP), phase2 0.625 (MPI); Global talp PE 2/3,
 *   MPI LB 0.75, OpenMP LB 11/12 = 0.917.
 *
 * Prints "ok <N*P*T(T+P+2)/2>" on rank 0 (units of W worked, all threads of
 * all ranks) and exits 0; 1 if MPI lacks FUNNELED or a team is smaller than
 * T; 2 with a bad argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#include "popmon.h"
#include "work.h"

/* One `omp parallel` region in which thread j works `same` units of W when
 * same > 0, else t - j units; returns the units worked by the team, or -1
 * when the team is smaller than t. */
static long team_work(double w, int t, int same)
{
	long units = 0;
	int bad_team = 0;
#pragma omp parallel reduction(+ : units, bad_team)
	{
		const int j = omp_get_thread_num();
		bad_team += j == 0 && omp_get_num_threads() != t;
		const int u = same > 0 ? same : t - j;
		work_ms(u * w);
		units += u;
	}
	return bad_team ? -1 : units;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_FUNNELED) {
		if (rank == 0)
			fprintf(stderr, "hybrid_phases: MPI does not provide MPI_THREAD_FUNNELED\n");
		MPI_Finalize();
		return 1;
	}

	double arg[2] = { 100, 2 }; /* W in ms, repetitions per phase */
	if (parse_args(argc, argv, rank, "[W_MS [REPS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double w = arg[0];
	const int n = (int)arg[1];
	const int t = omp_get_max_threads();

	popmon_region_t phase1 = popmon_region_register("phase1");
	popmon_region_t phase2 = popmon_region_register("phase2");

	long total = 0;
	int bad = 0;
	MPI_Barrier(MPI_COMM_WORLD); /* everyone starts together */

	popmon_region_start(phase1); /* imbalance inside OpenMP */
	for (int it = 0; it < n; it++) {
		long mine = team_work(w, t, 0), sum = 0;
		bad |= mine < 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		total += sum;
	}
	popmon_region_stop(phase1);

	popmon_region_start(phase2); /* imbalance between MPI ranks */
	for (int it = 0; it < n; it++) {
		long mine = team_work(w, t, rank + 1), sum = 0;
		bad |= mine < 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		total += sum;
	}
	popmon_region_stop(phase2);

	if (bad)
		fprintf(stderr, "hybrid_phases: rank %d: parallel team smaller than omp_get_max_threads() = %d\n",
			rank, t);
	const long expect = (long)n * size * t * (t + size + 2) / 2;
	if (rank == 0 && !bad)
		printf("ok %ld\n", total);
	MPI_Finalize();
	return !bad && total == expect ? 0 : 1;
}
