/* pipeline.c: a serialized pipeline, perfectly balanced but communication
 * bound (every rank waits for its predecessor).
 *
 * Usage: pipeline [K_MS [STEPS]]          defaults: K = 100 ms, N = 3
 *                                         (wall time N*P*K: 1.2 s for P = 4)
 *
 * A token travels around the ring once per step: rank 0 works K and sends
 * it to rank 1; rank r > 0 receives it from r-1, works K and sends it on to
 * (r+1) mod P; rank 0 receives it back from P-1, which closes the step, and
 * starts the next one. Only one rank works at any time. A final
 * MPI_Allreduce (checksum) makes every rank end at the same time.
 *
 * With P ranks (one CPU each) and N steps, each step lasts P*K and every rank
 * works exactly K in it (rank r works from s*P*K + r*K to s*P*K + (r+1)*K):
 *   T = N*P*K,  U_r = N*K for every r,  M_r = T - U_r = N*(P-1)*K
 * (POP-METRICS.md section 2, talp):
 *   Load balance             = mean U / max U         = 1
 *     (talp: nonmpi_app = T - mean M = N*K = T - min M = nonmpi_proc)
 *   Communication efficiency = (T - min M) / T = N*K / (N*P*K) = 1/P
 *   Parallel efficiency      = sum U / (P*T)          = 1/P
 *   LB in = 1, LB out = 1
 *   P = 2: CommE = PE = 0.5      P = 4: CommE = PE = 0.25
 * The token hand-offs (P*N messages) add their latency to T only, i.e. they
 * lower CommE below 1/P by a factor of about 1 - latency/K: negligible
 * normally; with MPICH and more ranks than cores (busy-waiting ranks hold
 * the cores) a hand-off can take a scheduler tick, ~4 ms, so P = 4 on 2
 * cores gives CommE ~0.24 instead of 0.25 at the defaults.
 *
 * Prints "ok <N*P>" on rank 0 (the token counts the hand-offs).
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

	double arg[2] = { 100, 3 }; /* K in ms, steps */
	if (parse_args(argc, argv, rank, "[K_MS [STEPS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double k = arg[0];
	const int n = (int)arg[1];
	const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

	/* No barrier before the loop: ranks r > 0 wait for the token anyway. */
	long token = 0;
	for (int step = 0; step < n; step++) {
		if (rank != 0)
			MPI_Recv(&token, 1, MPI_LONG, prev, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		work_ms(k);
		token++;
		if (size > 1) {
			MPI_Send(&token, 1, MPI_LONG, next, step, MPI_COMM_WORLD);
			if (rank == 0) /* close the step */
				MPI_Recv(&token, 1, MPI_LONG, prev, step, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
		}
	}
	long last = 0;
	MPI_Allreduce(&token, &last, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("ok %ld\n", last);

	MPI_Finalize();
	return last == (long)n * size ? 0 : 1;
}
