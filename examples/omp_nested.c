/* omp_nested.c: nested OpenMP teams and regions started inside parallel
 * regions, the behaviour of DLB's tests/functional/talp/omp/test_omp_nested
 * (no MPI), with sleeps as work so that the designed times hold on fewer
 * cores than threads. Instrumented for DLB/TALP (dlb_talp.h), built against
 * examples/dlbstub like talp_regions.
 *
 * Usage: omp_nested [U_MS [REPS]]           defaults: U = 40 ms, N = 2
 *        threads: OMP_NUM_THREADS=2,2 (two levels of two threads: 4 threads)
 *        wall time N * 12.5 U (1.0 s)
 *
 * Each repetition:
 *   serial: the primary works 1.5 U.
 *   parallel (2 threads): thread j starts region "Thread", works (5 - 2.5 j) U
 *     (5 U, 2.5 U), stops it; explicit barrier (thread 1 waits 2.5 U);
 *     nested parallel (2 threads each): in the team of outer thread 0 both
 *     threads start "Thread", work 5 U, stop it; the team of outer thread 1
 *     does nothing (outer thread 1 waits 5 U at the outer implicit barrier,
 *     its nested worker idles).
 *   region "Small": a parallel region of 1 thread working 1 U.
 *
 * Per repetition, 4 threads = 4 CPUs of the process (1 + Σ (n - 1) over the
 * teams open together, as DLB counts them); elapsed 12.5 U:
 *   Global: parallel regions 4 (outer, 2 nested, Small's)
 *     U    = 1.5 + 5 + 2.5 + 5 + 5 + 1       = 20 U
 *     Iser = 3 × 2.5 (serial, Small) + 2 × 5 (first phase: the nested
 *            threads) + 1 × 5 (the idle nested worker)  = 22.5 U
 *     Ilb  = 2.5 (explicit barrier) + 5 (outer thread 1 at the join) = 7.5 U
 *     Isch = 0 (fork/join latency)
 *     talp: PE = 20/50 = 0.40, OpenMP LB = (20+22.5)/50 = 0.85,
 *           Serialization eff. = 20/42.5 = 0.47 (DLB's expectations)
 *   "Thread" (measured per thread: started inside parallel regions):
 *     4 measurements by 3 threads (outer 0 twice, outer 1, the nested worker
 *     of outer 0), U = 5 + 2.5 + 5 + 5 = 17.5 U, elapsed (the measurements'
 *     sum) 17.5 U on 1 CPU: PE = 1, no parallel region inside
 *   "Small": 1 parallel region, U = 1 U, Iser = 3 U, elapsed 1 U × 4 CPUs:
 *     PE = 0.25, Serialization eff. = 0.25, LB = 1
 *
 * Prints "ok" and exits 0; 1 when the teams were not 2 × 2; 2 with a bad
 * argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>

#include "dlb_talp.h"
#include "work.h"

int main(int argc, char **argv)
{
	double arg[2] = { 40, 2 }; /* U in ms, repetitions */
	if (parse_args(argc, argv, 0, "[U_MS [REPS]]", 2, arg) != 0)
		return 2;
	double u = arg[0];
	int reps = (int)arg[1];
	int bad = 0;
	for (int i = 0; i < reps; i++) {
		dlb_monitor_t *thread = DLB_MonitoringRegionRegister("Thread");
		work_ms(1.5 * u);
#pragma omp parallel num_threads(2) reduction(+ : bad)
		{
			int tid = omp_get_thread_num();
			double w = 5 - 2.5 * tid;
			bad += omp_get_num_threads() != 2;
			DLB_MonitoringRegionStart(thread);
			work_ms(w * u);
			DLB_MonitoringRegionStop(thread);
#pragma omp barrier
#pragma omp parallel num_threads(2) shared(tid, w) reduction(+ : bad)
			{
				bad += omp_get_num_threads() != 2;
				if (tid == 0) {
					DLB_MonitoringRegionStart(thread);
					work_ms(w * u);
					DLB_MonitoringRegionStop(thread);
				}
			}
		}
		dlb_monitor_t *small = DLB_MonitoringRegionRegister("Small");
		DLB_MonitoringRegionStart(small);
#pragma omp parallel num_threads(1)
		work_ms(u);
		DLB_MonitoringRegionStop(small);
	}
	if (bad) {
		fprintf(stderr, "omp_nested: the teams were not 2 x 2 (OMP_NUM_THREADS=2,2, nesting on)\n");
		return 1;
	}
	printf("ok\n");
	return 0;
}
