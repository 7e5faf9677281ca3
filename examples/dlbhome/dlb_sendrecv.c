/* dlb_sendrecv.c: a TALP user's MPI program built against a DLB prefix
 * (-I$DLB_HOME/include -L$DLB_HOME/lib -ldlb), popmon's validation program
 * for `popmon dlb-home` with the behaviour of DLB's functional test
 * tests/functional/talp/mpi (2 ranks; rewritten, K instead of 1 s) plus the
 * "After OMP" region of its hybrid test and DLB's other calls.
 *
 * Usage: dlb_sendrecv [K_MS [REPETITIONS]]   defaults K = 200 ms, R = 1
 *
 * Each repetition: rank 0 works 2K then sends to rank 1 and receives from
 * it (waits 2K); rank 1 works K, receives (waits K), works 2K, sends.
 * Region "After" spans each repetition's send/receive part.
 * Expected (2 ranks, R repetitions; DLB's values for K = 500 ms, R = 1):
 *   Global: elapsed 4K*R, useful 5K*R, MPI 3K*R, numMpiCalls (3 + 2R)*2
 *     (MPI_Init, MPI_Comm_rank, MPI_Finalize and 2 per repetition),
 *     parallel efficiency 0.625, communication efficiency 0.75,
 *     load balance 0.833
 *   After: numMeasurements 2R, numMpiCalls 4R, numOmpThreads 2
 * Rank 0 prints "ok lend L drom D version V.M" with the codes DLB_Lend and
 * DLB_DROM_Attach returned (popmon: DLB_ERR_NOLEWI -17 without --lewi,
 * DLB_SUCCESS 0).
 */
#include <dlb.h>
#include <dlb_drom.h>
#include <dlb_talp.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void busy(double s)
{
	double t0 = MPI_Wtime();
	volatile uint64_t x = 0;
	while (MPI_Wtime() - t0 < s)
		x++;
}

int main(int argc, char **argv)
{
	double k = (argc > 1 ? atof(argv[1]) : 200) / 1000.0;
	int reps = argc > 2 ? atoi(argv[2]) : 1;
	MPI_Init(&argc, &argv);
	int rank, dummy = 42;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	dlb_monitor_t *after = DLB_MonitoringRegionRegister("After");
	for (int i = 0; i < reps; i++) {
		if (rank == 0) {
			busy(2 * k);
			DLB_MonitoringRegionStart(after);
			MPI_Send(&dummy, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&dummy, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			DLB_MonitoringRegionStop(after);
		} else {
			busy(k);
			DLB_MonitoringRegionStart(after);
			MPI_Recv(&dummy, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			busy(2 * k);
			MPI_Send(&dummy, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
			DLB_MonitoringRegionStop(after);
		}
	}
	int lend = DLB_Lend(), drom = DLB_DROM_Attach(), major = 0, minor = 0, patch = 0;
	DLB_GetVersion(&major, &minor, &patch);
	if (rank == 0)
		printf("ok lend %d drom %d version %d.%d\n", lend, drom, major, minor);
	MPI_Finalize();
	return 0;
}
