/* finalize_skew.c: ranks start and finish at different times: no barrier
 * after MPI_Init, none before MPI_Finalize. Rank r works (r+1)*K ms between
 * them; a rank that finishes early waits inside MPI_Finalize for the others
 * (it is collective). popmon aligns the Global region across ranks (from the
 * first rank's exit of MPI_Init to the last rank's entry into MPI_Finalize,
 * docs/library.md "Finalize"), so that time counts as MPI time, not as
 * nothing (which the formulas would read as useful time: LB 1.00).
 *
 * Usage: finalize_skew [K_MS]     default K = 200 ms; wall time P*K
 *
 * Accounts, P ranks (one CPU each), Global aligned to T = P*K:
 *   U_r = (r+1)*K, M_r = T - U_r (inside MPI_Finalize), min M = 0
 *   Load balance = PE = (P+1)/(2P): 0.75 (P = 2), 0.625 (P = 4)
 *   Communication efficiency = 1
 * Rank 0 prints "ok".
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
	double k[1] = { 200 };
	if (parse_args(argc, argv, rank, "[K_MS]", 1, k) != 0) {
		MPI_Finalize();
		return 2;
	}
	work_ms((rank + 1) * k[0]);
	if (rank == 0)
		printf("ok\n");
	MPI_Finalize();
	return 0;
}
