/* dlb_barrier_mpi.c: DLB_Barrier in an MPI program that never calls
 * DLB_Init (internal/e2e/barrier_test.go): under popmon with DLB's
 * interface in use, MPI_Init joins every rank to the node barrier, as DLB's
 * libdlb_mpi does. Rank 1 reaches the barrier 300 ms after rank 0; rank 0
 * prints how long it waited ("rank0_waited_ms W"), then "ok".
 * DLB_Barrier comes from popmon's preloaded library (weak: absent, the
 * program says so and exits 1). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

extern int DLB_Barrier(void) __attribute__((weak));

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!DLB_Barrier) {
		printf("no DLB_Barrier in this process\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		struct timespec ts = {0, 300000000L};
		nanosleep(&ts, NULL);
	}
	double t = MPI_Wtime();
	int r = DLB_Barrier();
	t = MPI_Wtime() - t;
	if (r != 0)
		printf("rank %d: DLB_Barrier returned %d\n", rank, r);
	if (rank == 0)
		printf("rank0_waited_ms %.1f\n", t * 1e3);
	MPI_Finalize();
	if (rank == 0 && r == 0)
		printf("ok\n");
	return r != 0;
}
