/* balanced.c: the control experiment, no designed inefficiency.
 *
 * Usage: balanced [K_MS [ITERATIONS]]      defaults: K = 200 ms, N = 4 (0.8 s)
 *
 * Every rank works K per iteration, then all ranks meet in MPI_Allreduce (a
 * barrier that also carries the checksum). With P ranks (one CPU each) and N
 * iterations, per rank i (POP-METRICS.md section 2, model talp):
 *   U_i = N*K,  E_i = T = N*K (+ latency eps),  M_i = T - U_i = eps
 *   Load balance             = mean U / max U = 1
 *   Communication efficiency = (T - min M) / T  = 1
 *   Parallel efficiency      = sum U / (P*T)    = 1
 *   LB in (one node) = 1, LB out = 1
 * All efficiencies are 1 up to the MPI latency. Caveat: MPICH busy-waits,
 * so with more ranks than cores every synchronization where all ranks
 * arrive together costs about two scheduler ticks (~8 ms measured); see
 * README.md.
 *
 * Prints "ok <N*P>" on rank 0 (the checksum: iterations summed over ranks).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	double arg[2] = { 200, 4 }; /* K in ms, iterations */
	if (parse_args(argc, argv, rank, "[K_MS [ITERATIONS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double k = arg[0];
	const int n = (int)arg[1];

	/* No barrier before the loop: the first MPI_Allreduce absorbs the skew
	 * of MPI_Init, and one synchronization fewer is one latency fewer. */
	long total = 0;
	for (long it = 1; it <= n; it++) {
		work_ms(k);
		MPI_Allreduce(&it, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("ok %ld\n", total);

	MPI_Finalize();
	return total == (long)n * size ? 0 : 1;
}
