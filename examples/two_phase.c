/* two_phase.c: balanced, then imbalanced: a phase change over time.
 *
 * Usage: two_phase [K_MS [N1 [N2]]]        defaults: K = 100 ms, N1 = 30, N2 = 8
 *
 * Phase 1 (N1 iterations): every rank works K, then MPI_Allreduce: load
 * balance 1, N1*K long (3 s by default). Phase 2 (N2 iterations): rank r
 * works (r+1)*K, then MPI_Allreduce, as imbalance.c: load balance
 * (P+1)/(2P) (0.75 for P = 2, 0.625 for P = 4), N2*P*K long. The whole
 * run's load balance lies between; popmon report --over-time shows the
 * change: intervals of phase 1 at 1.00, of phase 2 at (P+1)/(2P).
 * Prints "ok" on rank 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double arg[3] = { 100, 30, 8 };
	if (parse_args(argc, argv, rank, "[K_MS [N1 [N2]]]", 3, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double k = arg[0];
	long one = 1, sum = 0;
	for (int it = 0; it < (int)arg[1]; it++) {
		work_ms(k);
		MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	}
	for (int it = 0; it < (int)arg[2]; it++) {
		work_ms((rank + 1) * k);
		MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("ok\n");
	MPI_Finalize();
	return 0;
}
