/* talp_regions.c: a program instrumented for DLB/TALP, as a TALP user writes
 * it, that popmon measures unchanged (popmon's library defines the DLB_*
 * functions). Built against examples/dlbstub (dlb_talp.h and the stand-in
 * libdlb.so, which behaves like DLB without TALP) or against a real DLB.
 *
 * Usage: talp_regions [K_MS [ITERATIONS]]   defaults: K = 100 ms, N = 2
 *                          (wall time N*K + N*P*K: 1.0 s for P = 4, 0.6 s for P = 2)
 *
 * Region "phase A" (one visit per iteration, N visits): every rank works K,
 *   then MPI_Barrier.                                   T_A = N*K
 * Region "phase B" (one visit per iteration, N visits, each stopped with
 *   DLB_LAST_OPEN_REGION): rank r works (r+1)*K, then MPI_Allreduce.
 *                                                       T_B = N*P*K
 * Expected, P ranks with one CPU each (POP-METRICS.md section 2, talp):
 *   "phase A": LB = 1, CommE = 1, PE = 1
 *   "phase B": U_r = N*(r+1)*K, M_r = N*(P-1-r)*K, min M = 0
 *              LB = PE = (P+1)/(2P), CommE = 1
 *   "Global":  U_r = N*K + N*(r+1)*K, T = T_A + T_B, CommE = 1,
 *              LB = PE = (T_A + T_B*(P+1)/(2P)) / (T_A + T_B) = (P+3)/(2(P+1))
 *   P = 2: A 1, B 0.75,  Global 0.833      P = 4: A 1, B 0.625, Global 0.700
 *   LB in = LB and LB out = 1 on one node. Handles: num_measurements = N for
 *   both phases, elapsed_time = T_A and T_B.
 *
 * Rank 0 prints one line: without TALP (the stub, or DLB without --talp)
 *   "ok (TALP not enabled)"; with TALP or popmon, the measurements and
 *   elapsed times read from the dlb_monitor_t handles, e.g.
 *   "ok phase A: 2 measurements, 0.20 s; phase B: 2 measurements, 0.80 s;
 *   global region Global" (P = 4),
 *   and DLB_MonitoringRegionReport prints phase B's report on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "dlb_talp.h"
#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	double arg[2] = { 100, 2 }; /* K in ms, iterations per phase */
	if (parse_args(argc, argv, rank, "[K_MS [ITERATIONS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double k = arg[0];
	const int n = (int)arg[1];

	/* NULL without TALP. The calls below are made anyway, as in any TALP
	 * program: TALP accepts NULL (= the global region), the stub ignores it. */
	dlb_monitor_t *global = DLB_MonitoringRegionGetGlobal();
	dlb_monitor_t *phase_a = DLB_MonitoringRegionRegister("phase A");
	dlb_monitor_t *phase_b = DLB_MonitoringRegionRegister("phase B");
	const int talp = global != NULL && phase_a != NULL && phase_b != NULL;

	MPI_Barrier(MPI_COMM_WORLD); /* everyone starts together */
	for (int it = 0; it < n; it++) {
		DLB_MonitoringRegionStart(phase_a);
		work_ms(k);
		MPI_Barrier(MPI_COMM_WORLD);
		DLB_MonitoringRegionStop(phase_a);
	}

	long checksum = 0;
	for (int it = 0; it < n; it++) {
		DLB_MonitoringRegionStart(phase_b);
		work_ms((rank + 1) * k);
		long mine = rank + 1, sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		checksum += sum;
		DLB_MonitoringRegionStop(DLB_LAST_OPEN_REGION); /* = phase_b */
	}

	if (rank == 0) {
		if (talp) {
			printf("ok phase A: %d measurements, %.2f s; phase B: %d measurements, "
			       "%.2f s; global region %s\n",
			       phase_a->num_measurements, (double)phase_a->elapsed_time / 1e9,
			       phase_b->num_measurements, (double)phase_b->elapsed_time / 1e9,
			       global->name ? global->name : DLB_GLOBAL_REGION_NAME);
			DLB_MonitoringRegionReport(phase_b);
		} else {
			printf("ok (TALP not enabled)\n");
		}
	}

	MPI_Finalize();
	return checksum == (long)n * size * (size + 1) / 2 ? 0 : 1;
}
