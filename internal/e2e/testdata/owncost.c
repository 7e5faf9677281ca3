/* owncost.c: a polling program whose useful and MPI time its own timers
 * know, for popmon's own cost (internal/e2e/owncost_test.go). 2 ranks.
 *
 * Usage: owncost [N]     N: polls (default 1000000)
 *
 * Rank 0 tests, N times in all, a receive that rank 1 satisfies only at the
 * end, with a compute chunk (a fixed number of integer steps) before each
 * test, as a polling code does. It runs in R rounds of N/R iterations of
 * three loops, interleaved so that the machine's noise falls on all three
 * alike:
 *   bare:    the chunk, then PMPI_Test (not intercepted): the program as it
 *            runs without popmon;
 *   compute: the chunk alone;
 *   polls:   the chunk, then MPI_Test (intercepted), inside the region
 *            "polls" (popmon's API), which only rank 0 visits.
 * Rank 1 sleeps meanwhile (1 ms naps, PMPI_Iprobe between them for rank 0's
 * word that it is done), so that rank 0 has a CPU to itself.
 * Without popmon the polls loop is the bare loop: its useful time is the
 * compute loop's time and its MPI time the bare loop's less the compute
 * loop's, and the region's communication efficiency (model talp: useful /
 * elapsed, one process) is compute / bare. Rank 0 prints "bare_ns B
 * compute_ns C polls_ns P polls N min_bare_ns b min_compute_ns c
 * min_polls_ns p" (the loops' sums over the rounds, and per iteration in
 * the least disturbed round of each loop), then "ok".
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../../shim/popmon.h"

enum { ROUNDS = 20, STEPS = 8, TAG_REQ = 98, TAG_DONE = 97 };

static volatile unsigned long long sink;

static inline void chunk(unsigned long long *x)
{
	unsigned long long v = *x;
	for (int k = 0; k < STEPS; k++) {
		v = v * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(v));
	}
	*x = v;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "owncost: run with 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	if (n < ROUNDS)
		n = ROUNDS;
	long per = n / ROUNDS;
	int one = 1, got = 0, flag = 0;
	if (rank == 1) {
		struct timespec nap = {0, 1000000};
		while (!flag) {
			nanosleep(&nap, NULL);
			PMPI_Iprobe(0, TAG_DONE, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		}
		PMPI_Recv(&got, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		PMPI_Send(&one, 1, MPI_INT, 0, TAG_REQ, MPI_COMM_WORLD);
		MPI_Finalize();
		return 0;
	}
	MPI_Request req;
	PMPI_Irecv(&got, 1, MPI_INT, 1, TAG_REQ, MPI_COMM_WORLD, &req);
	popmon_region_t polls = popmon_region_register("polls");
	unsigned long long x = 1;
	double bare = 0, comp = 0, wrapped = 0;
	double mbare = 1e30, mcomp = 1e30, mwrapped = 1e30; /* the least disturbed round's */
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = MPI_Wtime();
		for (long i = 0; i < per; i++) {
			chunk(&x);
			PMPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		}
		double t1 = MPI_Wtime();
		for (long i = 0; i < per; i++)
			chunk(&x);
		double t2 = MPI_Wtime();
		popmon_region_start(polls);
		double t3 = MPI_Wtime();
		for (long i = 0; i < per; i++) {
			chunk(&x);
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		}
		double t4 = MPI_Wtime();
		popmon_region_stop(polls);
		bare += t1 - t0;
		comp += t2 - t1;
		wrapped += t4 - t3;
		mbare = t1 - t0 < mbare ? t1 - t0 : mbare;
		mcomp = t2 - t1 < mcomp ? t2 - t1 : mcomp;
		mwrapped = t4 - t3 < mwrapped ? t4 - t3 : mwrapped;
	}
	sink = x;
	PMPI_Send(&one, 1, MPI_INT, 1, TAG_DONE, MPI_COMM_WORLD);
	PMPI_Wait(&req, MPI_STATUS_IGNORE);
	printf("bare_ns %.0f compute_ns %.0f polls_ns %.0f polls %ld min_bare_ns %.2f min_compute_ns %.2f min_polls_ns %.2f\n",
	       bare * 1e9, comp * 1e9, wrapped * 1e9, per * ROUNDS, mbare * 1e9 / (double)per, mcomp * 1e9 / (double)per,
	       mwrapped * 1e9 / (double)per);
	MPI_Finalize();
	printf("ok\n");
	return 0;
}
