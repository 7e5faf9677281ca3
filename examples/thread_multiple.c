/* thread_multiple.c: MPI_THREAD_MULTIPLE with POSIX threads that call MPI.
 * Threads other than the primary and OpenMP threads that call MPI are CPUs
 * of their process from their birth (docs/library.md, "Threads"): here most
 * of their time is spent waiting inside MPI, which the report must show.
 *
 * Usage: thread_multiple [L_MS [H]]     defaults: L = 300 ms, H = 2 threads
 *        P = 2 ranks exactly; MPI_THREAD_MULTIPLE; wall time L
 *
 * Right after MPI_Init_thread each rank starts H POSIX threads; thread h:
 *   rank 0: MPI_Recv from rank 1, tag h: waits L inside MPI;
 *   rank 1: works L, then MPI_Send to rank 0, tag h.
 * Meanwhile each primary thread works L, joins its threads, and calls
 * MPI_Barrier.
 *
 * Accounts (C_i = 1 + H CPUs per rank, C = 2(1+H), R = L):
 *   rank 0: U = L (primary), M = H*L (threads)
 *   rank 1: U = (1+H)*L,     M = 0
 *   (Iser: the few µs between the start of the run and the threads' birth)
 * Expected, model talp (H = 2):
 *   Parallel efficiency     = U/(C*R) = (2+H)/(2(1+H))   = 0.667
 *   MPI parallel efficiency = 1 - H/(2(1+H))             = 0.667
 *     Communication eff.    = 1 (rank 1 never waits)
 *     Load balance = In     = 0.667, Out = 1
 *   (Counting only the primary threads as CPUs, every efficiency would
 *   read 1.00: the threads' MPI time would be invisible.)
 *
 * Prints "ok <H>" on rank 0; exits 1 if MPI lacks MULTIPLE or P != 2, 2 with
 * a bad argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "work.h"

enum { MAX_THREADS = 16 };

static int rank;
static double l_ms;

static void *comm_thread(void *p)
{
	int h = (int)(long)p, v = -1;
	if (rank == 0) {
		MPI_Recv(&v, 1, MPI_INT, 1, h, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		return (void *)(long)(v == h);
	}
	work_ms(l_ms);
	MPI_Send(&h, 1, MPI_INT, 0, h, MPI_COMM_WORLD);
	return (void *)1L;
}

int main(int argc, char **argv)
{
	int provided, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE || size != 2) {
		if (rank == 0)
			fprintf(stderr, "thread_multiple: needs MPI_THREAD_MULTIPLE (got %d) and 2 ranks (got %d)\n",
				provided, size);
		MPI_Finalize();
		return 1;
	}
	double arg[2] = { 300, 2 };
	if (parse_args(argc, argv, rank, "[L_MS [H]]", 2, arg) != 0 || arg[1] > MAX_THREADS) {
		MPI_Finalize();
		return 2;
	}
	l_ms = arg[0];
	int h = (int)arg[1];
	pthread_t th[MAX_THREADS];
	for (int i = 0; i < h; i++)
		if (pthread_create(&th[i], NULL, comm_thread, (void *)(long)i) != 0) {
			fprintf(stderr, "thread_multiple: pthread_create failed\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	work_ms(l_ms);
	int good = 1;
	for (int i = 0; i < h; i++) {
		void *r;
		pthread_join(th[i], &r);
		good &= r != NULL;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0 && good)
		printf("ok %d\n", h);
	MPI_Finalize();
	return good ? 0 : 1;
}
