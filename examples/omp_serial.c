/* omp_serial.c: OpenMP serialization: serial code on the primary thread
 * while the other OpenMP threads have nothing to do (no MPI).
 *
 * Usage: omp_serial [S_MS [W_MS [REPS]]]   defaults: S = W = 100 ms, N = 4
 *        threads: OMP_NUM_THREADS (T = omp_get_max_threads(), designed for T >= 2)
 *        wall time N*(S+W): 0.8 s (any T)
 *
 * Each of N repetitions: the primary thread works S alone (serial code), then
 * a perfectly balanced `omp parallel` region in which every one of the T
 * threads works W.
 *
 * Per repetition (wall S+W; T threads = T CPUs; the run's elapsed R = N*(S+W)):
 *   U    = S + T*W           useful, all threads
 *   Iser = S*(T-1)           workers idle while the primary runs serial code
 *   Ilb  = 0, Isch = 0       (up to fork/join latency), no MPI
 *
 * Expected (POP-METRICS.md; x = S/(S+W), with S = W: x = 1/2):
 *   talp:  Parallel efficiency      = U/(U+Iser) = (S+T*W)/(T*(S+W))
 *          OpenMP parallel eff.     = the same
 *            Serialization eff.     = (S+T*W)/(T*(S+W))   (active_nomp = U)
 *            Load balance           = 1
 *            Scheduling eff.        = 1
 *          no MPI metrics (absent)
 *   pop-hybrid: per-thread U: primary N*(S+W), workers N*W each
 *          Hybrid PE = LB = (S+T*W)/(T*(S+W)), Hybrid CommE = 1
 *          MPI PE, LB, CommE absent (no MPI)
 *          OpenMP PE = LB = (S+T*W)/(T*(S+W)), OpenMP CommE = 1
 *   pop-additive: SerialUseful = N*S, OMP = N*W, Avg(OMPUseful) = N*W
 *          Parallel efficiency      = (S+T*W)/(T*(S+W))
 *          Process efficiency       = 1 (MPI LB, MPI CommE absent: no MPI)
 *          Thread efficiency        = 1 - x*(1-1/T)
 *            OpenMP region eff.     = 1
 *            Serial region eff.     = 1 - x*(1-1/T)
 *   T = 4, S = W: every efficiency above that is not 1 is 5/8 = 0.625
 *   T = 2, S = W: 3/4 = 0.75.
 *
 * Prints "ok <N*(1+T)>" (serial sections plus thread work items done) and
 * exits 0; 1 if the team was smaller than T; 2 with a bad argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	double arg[3] = { 100, 100, 4 }; /* S, W in ms, repetitions */
	if (parse_args(argc, argv, 0, "[S_MS [W_MS [REPS]]]", 3, arg) != 0)
		return 2;
	const double s = arg[0], w = arg[1];
	const int n = (int)arg[2];
	const int t = omp_get_max_threads();

	long items = 0;
	int bad_team = 0;
	for (int it = 0; it < n; it++) {
		work_ms(s); /* serial: the primary alone */
		items++;
#pragma omp parallel reduction(+ : items, bad_team)
		{
			bad_team += omp_get_thread_num() == 0 && omp_get_num_threads() != t;
			work_ms(w);
			items++;
		}
	}
	if (bad_team) {
		fprintf(stderr, "omp_serial: parallel team smaller than omp_get_max_threads() = %d\n", t);
		return 1;
	}
	printf("ok %ld\n", items);
	return items == (long)n * (1 + t) ? 0 : 1;
}
