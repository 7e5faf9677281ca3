/* regions.c: two phases with different efficiencies, told apart by popmon
 * regions (popmon.h; compile with -I<repo>/shim, nothing to link).
 *
 * Usage: regions [K_MS [ITERATIONS]]      defaults: K = 100 ms, N = 2
 *                          (wall time N*K + N*P*K: 1.0 s for P = 4, 0.6 s for P = 2)
 *
 * Phase 1, region "balanced" (one visit per iteration, N visits): every rank
 *   works K, then MPI_Barrier.                      T_b = N*K
 * Phase 2, region "imbalanced" (one visit, stopped with POPMON_REGION_LAST):
 *   rank r works (r+1)*K, then MPI_Allreduce.        T_i = N*P*K
 * Region "outer" (one visit) encloses both phases; "Global" (the implicit
 * whole-run region) encloses everything.
 *
 * Expected, P ranks with one CPU each (POP-METRICS.md section 2, talp):
 *   "balanced":   U_r = T_b           LB = 1, CommE = 1, PE = 1
 *   "imbalanced": U_r = N*(r+1)*K     LB = (P+1)/(2P), CommE = 1, PE = LB
 *   "outer" and "Global" (equal up to the MPI_Init/Finalize edges):
 *     T = T_b + T_i,  U_r = N*K + N*(r+1)*K,  M_r = N*(P-1-r)*K, min M = 0
 *     CommE = 1
 *     LB = PE = mean U / max U = (T_b*1 + T_i*(P+1)/(2P)) / (T_b + T_i)
 *        (the elapsed-weighted mean of the phases' LB)
 *        = (1 + (P+1)/2) / (1 + P) = (P+3) / (2(P+1))  with these phases
 *   P = 2: balanced 1, imbalanced 0.75,  Global/outer 5/6 = 0.833
 *   P = 4: balanced 1, imbalanced 0.625, Global/outer 7/10 = 0.700
 *   LB in = LB and LB out = 1 on one node, for every region.
 *
 * Prints "ok <checksum>" on rank 0, checksum = N*P(P+1)/2.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "popmon.h"
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

	popmon_region_t outer = popmon_region_register("outer");
	popmon_region_t bal = popmon_region_register("balanced");
	popmon_region_t imb = popmon_region_register("imbalanced");

	MPI_Barrier(MPI_COMM_WORLD); /* everyone starts together */
	popmon_region_start(outer);

	for (int it = 0; it < n; it++) {
		popmon_region_start(bal);
		work_ms(k);
		MPI_Barrier(MPI_COMM_WORLD);
		popmon_region_stop(bal);
	}

	long checksum = 0;
	popmon_region_start(imb);
	for (int it = 0; it < n; it++) {
		work_ms((rank + 1) * k);
		long mine = rank + 1, sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		checksum += sum;
	}
	popmon_region_stop(POPMON_REGION_LAST); /* = imb, the last one opened */

	popmon_region_stop(outer);

	if (rank == 0)
		printf("ok %ld\n", checksum);
	MPI_Finalize();
	return checksum == (long)n * size * (size + 1) / 2 ? 0 : 1;
}
