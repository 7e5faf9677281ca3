/* weighted.c: each rank works its own weight, so that any load balance, and
 * any split of it within and across nodes, can be designed.
 *
 * Usage: weighted K_MS W0,W1,...,W(P-1) [ITERATIONS]
 *        rank r works W[r]*K ms, then MPI_Allreduce; ITERATIONS times
 *        (default 1); wall time ITERATIONS*max(W)*K
 *
 * With one CPU per rank (POP-METRICS.md §2, model talp): U_r = N*W[r]*K,
 * T = N*max(W)*K, M_r = T - U_r, so
 *   Load balance = mean(W)/max(W); Communication efficiency = 1;
 *   In  = (T - min over nodes of mean M of the node) / (T - min M)
 *       = max over nodes of mean(W of the node) / max(W)
 *   Out = mean(W) / max over nodes of mean(W of the node)
 * Example, 2 nodes × 2 ranks (ranks 0, 1 on node0), W = 0.5,1.5,8,10:
 *   LB = 5/10 = 0.5, In = 9/10 = 0.9, Out = 5/9 = 0.556 (1 s with K = 100).
 * Rank 0 prints "ok <sum of W rounded>".
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double k = argc > 1 ? strtod(argv[1], NULL) : 0, w = -1;
	int iters = argc > 3 ? atoi(argv[3]) : 1;
	const char *p = argc > 2 ? argv[2] : "";
	for (int r = 0; r <= rank && *p; r++) {
		char *end;
		double v = strtod(p, &end);
		if (end == p)
			break;
		if (r == rank)
			w = v;
		p = *end == ',' ? end + 1 : end;
	}
	if (!(k > 0) || !(w >= 0) || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: %s K_MS W0,W1,...,W%d [ITERATIONS]\n", argv[0], size - 1);
		MPI_Finalize();
		return 2;
	}
	double sum = 0;
	for (int it = 0; it < iters; it++) {
		work_ms(w * k);
		double all = 0;
		MPI_Allreduce(&w, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		sum = all;
	}
	if (rank == 0)
		printf("ok %.0f\n", sum);
	MPI_Finalize();
	return 0;
}
