/* pollcount.c: a 1-rank program that counts the request-table lookups of
 * popmon's polling wrappers (pollcost_test.go), through the library's test
 * seam popmon_dreq_lookups (shim/mpi/mpidata.h), found with dlsym.
 *
 * Rank 0 posts 4 MPI_Irecv from itself that nothing matches yet (so the
 * calling thread's request table holds them), then calls each polling
 * function N times (default 1000) on them, none completing anything:
 * MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall (all 4),
 * MPI_Request_get_status, MPI_Iprobe and MPI_Improbe (no message of their
 * tag). It prints "lookups NAME K" (the lookups during NAME's calls), then
 * sends itself the 4 messages and completes the receives, one with MPI_Test,
 * one with MPI_Testany, two with MPI_Testall, and prints "lookups done K"
 * (the lookups of those completions: the counter counts), then "ok".
 * Without the seam (a plain run) it prints "no-seam" instead of the counts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define NREQ 4
#define TAG 17

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	MPI_Init(&argc, &argv);
	int me = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	uint64_t (*lookups)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "popmon_dreq_lookups");
	double buf[NREQ], out[NREQ] = {1, 2, 3, 4};
	MPI_Request reqs[NREQ];
	for (int k = 0; k < NREQ; k++)
		MPI_Irecv(&buf[k], 1, MPI_DOUBLE, me, TAG, MPI_COMM_WORLD, &reqs[k]);
	long done = 0;
	uint64_t l[8] = {0};
	const char *names[7] = {"MPI_Test",		  "MPI_Testany", "MPI_Testsome", "MPI_Testall",
				"MPI_Request_get_status", "MPI_Iprobe",	 "MPI_Improbe"};
	for (int f = 0; f < 7; f++) {
		uint64_t l0 = lookups ? lookups() : 0;
		for (long i = 0; i < n; i++) {
			int flag = 0, idx = 0, outc = 0, idxs[NREQ];
			MPI_Message m;
			switch (f) {
			case 0: MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE); break;
			case 1: MPI_Testany(NREQ, reqs, &idx, &flag, MPI_STATUS_IGNORE); break;
			case 2: MPI_Testsome(NREQ, reqs, &outc, idxs, MPI_STATUSES_IGNORE); flag = outc > 0; break;
			case 3: MPI_Testall(NREQ, reqs, &flag, MPI_STATUSES_IGNORE); break;
			case 4: MPI_Request_get_status(reqs[0], &flag, MPI_STATUS_IGNORE); break;
			case 5: MPI_Iprobe(MPI_ANY_SOURCE, TAG + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); break;
			case 6: MPI_Improbe(MPI_ANY_SOURCE, TAG + 1, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE); break;
			}
			done += flag;
		}
		l[f] = (lookups ? lookups() : 0) - l0;
	}
	if (done != 0) {
		fprintf(stderr, "pollcount: %ld completions where none was expected\n", done);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	/* The completions: messages in posting order match the receives in order. */
	uint64_t l0 = lookups ? lookups() : 0;
	for (int k = 0; k < NREQ; k++)
		MPI_Send(&out[k], 1, MPI_DOUBLE, me, TAG, MPI_COMM_WORLD);
	int flag = 0, idx = MPI_UNDEFINED;
	while (!flag)
		MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
	for (flag = 0; !flag || idx == MPI_UNDEFINED;)
		MPI_Testany(NREQ, reqs, &idx, &flag, MPI_STATUS_IGNORE);
	for (flag = 0; !flag;)
		MPI_Testall(NREQ, reqs, &flag, MPI_STATUSES_IGNORE);
	l[7] = (lookups ? lookups() : 0) - l0;
	if (!lookups) {
		printf("no-seam\n");
	} else {
		for (int f = 0; f < 7; f++)
			printf("lookups %s %llu\n", names[f], (unsigned long long)l[f]);
		printf("lookups done %llu\n", (unsigned long long)l[7]);
	}
	printf("ok\n");
	MPI_Finalize();
	return 0;
}
