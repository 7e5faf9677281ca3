/* regioncall.c: cost of a popmon region start + stop, for `make bench`.
 *
 * Times a tight loop of popmon_region_start/popmon_region_stop of one
 * region (popmon.h: no link dependency) after MPI_Init and prints
 * "region_ns <ns per start+stop>". Run under the measurement library: each
 * pair takes the region lock and two snapshots of the process's accounts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "popmon.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	MPI_Init(&argc, &argv);
	popmon_region_t r = popmon_region_register("bench");
	for (long i = 0; i < n / 10; i++) { /* warm-up */
		popmon_region_start(r);
		popmon_region_stop(r);
	}
	double t0 = now();
	for (long i = 0; i < n; i++) {
		popmon_region_start(r);
		popmon_region_stop(r);
	}
	double t1 = now();
	printf("region_ns %.2f\n", (t1 - t0) / (double)n);
	MPI_Finalize();
	return 0;
}
