/* drom_phases: an OpenMP program in phases of short parallel regions that
 * prints its team size per phase, for DROM (docs/drom.md):
 *
 *   popmon run --drom -- ./drom_phases STOPFILE [SECONDS]
 *   popmon taskset -p PID -c 0      (its next phases run 1 thread)
 *   popmon taskset -p PID -c 0,1    (2 again)
 *
 * Each phase is 20 parallel regions of ~1 ms of work per thread; it prints
 * "phase N threads T" after each phase and stops when STOPFILE exists or
 * after SECONDS (default 30). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double spin(double seconds)
{
	double t0 = now(), x = 0;
	while (now() - t0 < seconds)
		for (int i = 0; i < 1000; i++)
			x += 1e-9 * i;
	return x;
}

int main(int argc, char **argv)
{
	const char *stop = argc > 1 ? argv[1] : "/nonexistent";
	double limit = argc > 2 ? atof(argv[2]) : 30, t0 = now(), sink = 0;
	for (int phase = 0;; phase++) {
		int team = 0;
		for (int r = 0; r < 20; r++) {
#pragma omp parallel reduction(+ : sink)
			{
#pragma omp single
				team = omp_get_num_threads();
				sink += spin(0.001);
			}
		}
		printf("phase %d threads %d\n", phase, team);
		fflush(stdout);
		if (access(stop, F_OK) == 0 || now() - t0 > limit)
			break;
	}
	return sink < 0; /* keeps the work */
}
