/* region_names.c: region names that must neither be refused nor merged with
 * another region: "all" (DLB reserves it and hands back the Global region;
 * popmon measures it like any other), an anonymous region (popmon names it
 * "Anonymous Region N") next to a user region literally named "Anonymous
 * Region 1", and a name of 150 two-byte UTF-8 characters, cut by popmon at
 * its 127-byte limit on a character boundary. Each region is visited once
 * and works a different time, so that a merged or aliased region shows:
 *
 *   "all"                  K ms
 *   the anonymous region   2K ms   (named "Anonymous Region 2": the user
 *                                    took "Anonymous Region 1")
 *   "Anonymous Region 1"   3K ms
 *   the long name          4K ms   (63 × "é": 126 bytes)
 *
 * Usage: region_names [K_MS]    default K = 50 ms; any P; wall time 10K
 * Every region is balanced: PE 1. Rank 0 prints "ok".
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "popmon.h"
#include "work.h"

static void visit(popmon_region_t r, double ms)
{
	popmon_region_start(r);
	work_ms(ms);
	popmon_region_stop(r);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double k[1] = { 50 };
	if (parse_args(argc, argv, rank, "[K_MS]", 1, k) != 0) {
		MPI_Finalize();
		return 2;
	}
	char long_name[301];
	for (int i = 0; i < 150; i++)
		memcpy(long_name + 2 * i, "\xc3\xa9", 2); /* é */
	long_name[300] = '\0';

	popmon_region_t all = popmon_region_register("all");
	popmon_region_t anon = popmon_region_register(NULL);
	popmon_region_t user = popmon_region_register("Anonymous Region 1");
	popmon_region_t lng = popmon_region_register(long_name);
	visit(all, k[0]);
	visit(anon, 2 * k[0]);
	visit(user, 3 * k[0]);
	visit(lng, 4 * k[0]);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ok\n");
	MPI_Finalize();
	return 0;
}
