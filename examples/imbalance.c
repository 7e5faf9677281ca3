/* imbalance.c: THE DEMO, a load imbalance and nothing else.
 *
 * Usage: imbalance [K_MS [ITERATIONS]]     defaults: K = 50 ms, N = 5
 *                                          (wall time N*P*K: 1.0 s for P = 4)
 *
 * Rank r (0-based) works (r+1)*K per iteration, then all ranks meet in an
 * MPI_Allreduce, which waits for the slowest rank (r = P-1, (P*K)).
 * With P ranks (one CPU each), N iterations (POP-METRICS.md section 2, talp):
 *   U_r = N*(r+1)*K           max U = N*P*K = T     mean U = N*K*(P+1)/2
 *   M_r = T - U_r             min M = M_{P-1} = 0 (+ MPI latency)
 *   Load balance             = mean U / max U   = (P+1)/(2P)
 *   Communication efficiency = (T - min M) / T  = 1
 *   Parallel efficiency      = sum U / (P*T)    = (P+1)/(2P)  (= LB * CommE)
 *   One node (all ranks on it): mpi_node_min = mean M, so
 *     LB in = LB = (P+1)/(2P), LB out = 1
 *   P = 2: LB = PE = 0.75        P = 4: LB = PE = 0.625
 *
 * Prints "ok <checksum>" on rank 0, checksum = P(P+1)/2 * N(N+1)/2.
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

	double arg[2] = { 50, 5 }; /* K in ms, iterations */
	if (parse_args(argc, argv, rank, "[K_MS [ITERATIONS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double k = arg[0];
	const int n = (int)arg[1];

	/* No barrier before the loop: the first MPI_Allreduce absorbs the skew
	 * of MPI_Init (the last rank arrives last anyway). */
	long checksum = 0;
	for (int it = 1; it <= n; it++) {
		work_ms((rank + 1) * k);
		long mine = (long)(rank + 1) * it, sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		checksum += sum;
	}
	if (rank == 0)
		printf("ok %ld\n", checksum);

	MPI_Finalize();
	return checksum == (long)size * (size + 1) / 2 * n * (n + 1) / 2 ? 0 : 1;
}
