/* manyregions.c: a job with many regions, every one visited all the time,
 * for scripts/bench-series.sh (the memory of popmon run's time series).
 *
 * Usage: manyregions [SECONDS [REGIONS [SWEEP_MS]]]   defaults 60, 4095, 250
 *
 * Registers REGIONS regions (4095 and Global fill the library's table of
 * 4096) and, until SECONDS have passed, sweeps them every SWEEP_MS: a start
 * and a stop of each (a few µs of work in between), then an
 * MPI_Allreduce of the elapsed time and a sleep for the rest of the sweep.
 * Every region thus has time in every interval of the time series, on
 * every rank: the densest series a job can have. Light on CPU (a sweep of
 * 4095 regions takes a few ms), so that 8 ranks fit on 2 cores. Rank 0
 * prints "ok" and the sweeps made.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "popmon.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	double secs = argc > 1 ? atof(argv[1]) : 60;
	int n = argc > 2 ? atoi(argv[2]) : 4095;
	double sweep = (argc > 3 ? atof(argv[3]) : 250) * 1e-3;
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (n < 1 || secs <= 0 || sweep <= 0) {
		if (rank == 0)
			fprintf(stderr, "usage: manyregions [SECONDS [REGIONS [SWEEP_MS]]]\n");
		MPI_Finalize();
		return 2;
	}
	popmon_region_t *r = malloc(sizeof *r * (size_t)n);
	if (r == NULL)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "region %04d", i);
		r[i] = popmon_region_register(name);
	}
	double t0 = now();
	long sweeps = 0;
	volatile double sink = 0;
	for (;;) {
		double s0 = now();
		for (int i = 0; i < n; i++) {
			popmon_region_start(r[i]);
			for (int k = 0; k < 200; k++)
				sink += k * 1e-9;
			popmon_region_stop(r[i]);
		}
		double el = now() - t0, all;
		MPI_Allreduce(&el, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		sweeps++;
		if (all >= secs)
			break;
		double rest = sweep - (now() - s0);
		if (rest > 0) {
			struct timespec ts = { (time_t)rest, (long)((rest - (double)(time_t)rest) * 1e9) };
			nanosleep(&ts, NULL);
		}
	}
	if (rank == 0)
		printf("ok %ld sweeps\n", sweeps);
	free(r);
	MPI_Finalize();
	return 0;
}
