/* omp_imbalance.c: OpenMP load imbalance inside a parallel region (no MPI,
 * no serial code).
 *
 * Usage: omp_imbalance [W_MS [REPS]]       defaults: W = 100 ms, N = 2
 *        threads: OMP_NUM_THREADS (T = omp_get_max_threads(), designed for T >= 2)
 *        wall time N*T*W: 0.8 s for T = 4, 0.4 s for T = 2
 *
 * Each of N repetitions is one `omp parallel` region (no loop schedule: the
 * share is fixed by omp_get_thread_num(), so the design is deterministic) in
 * which thread j works (j+1)*W and then waits at the region's implicit
 * barrier for the slowest thread (T*W).
 *
 * Per repetition (wall T*W; T threads = T CPUs; the run's elapsed R = N*T*W):
 *   U    = W*T(T+1)/2                 Σ_j (j+1)*W
 *   Ilb  = W*T(T-1)/2                 Σ_j (T*W - (j+1)*W)
 *   Iser = 0, Isch = 0 (up to fork/join latency), no MPI
 *
 * Expected (POP-METRICS.md), q = (T+1)/(2T):
 *   talp:  Parallel efficiency      = U/(U+Ilb) = q
 *          OpenMP parallel eff.     = q
 *            Serialization eff.     = 1
 *            Load balance           = (active_nomp+Iser)/(active_nomp+Iser+Ilb) = q
 *            Scheduling eff.        = 1
 *          no MPI metrics (absent)
 *   pop-hybrid: per-thread U_j = N*(j+1)*W, max = N*T*W = R
 *          Hybrid PE = LB = q, Hybrid CommE = 1
 *          MPI PE, LB, CommE absent (no MPI)
 *          OpenMP PE = LB = q, OpenMP CommE = 1
 *   pop-additive: SerialUseful = 0, OMP = R, Avg(OMPUseful) = Avg(U) = q*R
 *          Parallel efficiency      = q
 *          Process efficiency       = 1 (MPI LB, MPI CommE absent: no MPI)
 *          Thread efficiency        = q
 *            OpenMP region eff.     = q
 *            Serial region eff.     = 1
 *   T = 4: q = 10/16 = 0.625;  T = 2: q = 0.75.
 *
 * Prints "ok <N*T(T+1)/2>" (units of W worked) and exits 0; 1 if the team
 * was smaller than T; 2 with a bad argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	double arg[2] = { 100, 2 }; /* W in ms, repetitions */
	if (parse_args(argc, argv, 0, "[W_MS [REPS]]", 2, arg) != 0)
		return 2;
	const double w = arg[0];
	const int n = (int)arg[1];
	const int t = omp_get_max_threads();

	long units = 0;
	int bad_team = 0;
	for (int it = 0; it < n; it++) {
#pragma omp parallel reduction(+ : units, bad_team)
		{
			const int j = omp_get_thread_num();
			bad_team += j == 0 && omp_get_num_threads() != t;
			work_ms((j + 1) * w);
			units += j + 1;
		}
	}
	if (bad_team) {
		fprintf(stderr, "omp_imbalance: parallel team smaller than omp_get_max_threads() = %d\n", t);
		return 1;
	}
	printf("ok %ld\n", units);
	return units == (long)n * t * (t + 1) / 2 ? 0 : 1;
}
