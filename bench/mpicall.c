/* mpicall.c: cost of cheap MPI calls, for `make bench`.
 *
 * Times tight loops of MPI_Comm_rank and MPI_Iprobe (no message pending),
 * and of MPI_Sendrecv of 8 bytes to itself (a call that carries data), and
 * prints nanoseconds per call. Run once plain and once under the measurement
 * library; the difference is what popmon adds to every intercepted call.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	MPI_Init(&argc, &argv);
	int rank = 0, flag = 0;
	volatile int sink = 0;
	for (long i = 0; i < n / 10; i++) { /* warm-up */
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		sink += rank;
	}
	double t0 = now();
	for (long i = 0; i < n; i++) {
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		sink += rank;
	}
	double t1 = now();
	long m = n / 10;
	for (long i = 0; i < m; i++) {
		MPI_Iprobe(MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		sink += flag;
	}
	double t2 = now();
	double out = 0, in = 0;
	int me = 0;
	MPI_Comm_rank(MPI_COMM_SELF, &me);
	for (long i = 0; i < m; i++)
		MPI_Sendrecv(&out, 1, MPI_DOUBLE, me, 7, &in, 1, MPI_DOUBLE, me, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE);
	double t3 = now();
	if (rank == 0)
		printf("comm_rank_ns %.2f\niprobe_ns %.2f\nsendrecv_ns %.2f\n", (t1 - t0) / (double)n,
		       (t2 - t1) / (double)m, (t3 - t2) / (double)m);
	MPI_Finalize();
	return sink == -1;
}
