/* dlb_serial.c: a program without MPI built against a DLB prefix (-ldlb),
 * popmon's validation program for DLB_ARGS without `popmon run` (the output
 * at exit, the formats by extension, --talp-region-select).
 *
 * Usage: dlb_serial [K_MS]   default 100
 * Region "work" (2 visits, K each), then region "skip" (1 visit, K).
 * Expected: Global elapsed 3K, numMpiRanks 0; work: numMeasurements 2,
 * elapsed 2K; skip: numMeasurements 1, elapsed K. Prints "ok".
 */
#include <dlb_talp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void busy(double s)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	volatile unsigned long x = 0;
	do {
		x++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
}

int main(int argc, char **argv)
{
	double k = (argc > 1 ? atof(argv[1]) : 100) / 1000.0;
	dlb_monitor_t *work = DLB_MonitoringRegionRegister("work");
	dlb_monitor_t *skip = DLB_MonitoringRegionRegister("skip");
	for (int i = 0; i < 2; i++) {
		DLB_MonitoringRegionStart(work);
		busy(k);
		DLB_MonitoringRegionStop(work);
	}
	DLB_MonitoringRegionStart(skip);
	busy(k);
	DLB_MonitoringRegionStop(skip);
	printf("ok\n");
	return 0;
}
