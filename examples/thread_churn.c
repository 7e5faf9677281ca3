/* thread_churn.c: MPI_THREAD_MULTIPLE, thousands of short-lived POSIX
 * threads that call MPI. Thread records are reused when threads exit, so a
 * long-running program keeps every MPI call in a bounded table.
 *
 * Usage: thread_churn [N [B]]        defaults: N = 5000 threads, B = 4 at once
 *        any P >= 1; MPI_THREAD_MULTIPLE; wall time about N/B thread lifetimes
 *
 * Each rank starts N threads, B at a time (start B, join B, repeat); each
 * thread calls MPI_Comm_rank and MPI_Comm_size once. Then MPI_Barrier.
 *
 * Expected: the call profile holds exactly N*P MPI_Comm_size calls (the
 * primary thread calls MPI_Comm_size once more: N*P + P) and every
 * process has at most 1 + B CPUs (the primary and B thread slots, reused).
 *
 * Prints "ok <N*P>" on rank 0; exits 1 if MPI lacks MULTIPLE, 2 with a bad
 * argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "work.h"

enum { MAX_BATCH = 64 };

static void *short_thread(void *p)
{
	(void)p;
	int r = -1, s = -1;
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &s);
	return (void *)(long)(r >= 0 && s > 0);
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			fprintf(stderr, "thread_churn: MPI does not provide MPI_THREAD_MULTIPLE\n");
		MPI_Finalize();
		return 1;
	}
	double arg[2] = { 5000, 4 };
	if (parse_args(argc, argv, rank, "[N [B]]", 2, arg) != 0 || arg[1] > MAX_BATCH) {
		MPI_Finalize();
		return 2;
	}
	long n = (long)arg[0], done = 0;
	int b = (int)arg[1], good = 1;
	while (done < n) {
		pthread_t th[MAX_BATCH];
		int k = 0;
		for (; k < b && done + k < n; k++)
			if (pthread_create(&th[k], NULL, short_thread, NULL) != 0) {
				fprintf(stderr, "thread_churn: pthread_create failed\n");
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		for (int i = 0; i < k; i++) {
			void *r;
			pthread_join(th[i], &r);
			good &= r != NULL;
		}
		done += k;
	}
	long total = 0;
	MPI_Reduce(&done, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0 && good)
		printf("ok %ld\n", total);
	MPI_Finalize();
	return good ? 0 : 1;
}
