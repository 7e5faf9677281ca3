/* ompregion.c: cost of one (empty) OpenMP parallel region, for `make bench`.
 *
 *   ompregion [REGIONS [THREADS]]           defaults: 20000 regions, 4 threads
 *
 * Times a tight loop of empty `#pragma omp parallel num_threads(THREADS)`
 * regions (the body is only a compiler barrier) (fork + implicit barrier + join) after a warm-up and prints
 * "parallel_region_ns <ns per region>". Built with clang -fopenmp (LLVM
 * libomp, which has OMPT); run once plain and once with libpopmon preloaded:
 * the difference is what the OMPT tool adds to every parallel region.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
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
	long n = argc > 1 ? atol(argv[1]) : 20000;
	int threads = argc > 2 ? atoi(argv[2]) : 4;
	if (n < 1 || threads < 1) {
		fprintf(stderr, "usage: %s [REGIONS [THREADS]]\n", argv[0]);
		return 2;
	}
	volatile int sink = 0;
	for (long i = 0; i < n / 10 + 1; i++) { /* warm-up: create the team */
#pragma omp parallel num_threads(threads)
		{
			if (omp_get_thread_num() == 0)
				sink = sink + 1;
		}
	}
	double t0 = now();
	for (long i = 0; i < n; i++) {
#pragma omp parallel num_threads(threads)
		{
			/* an empty body the compiler may not drop (GCC and clang elide
			 * a truly empty region) */
			__asm__ __volatile__("" ::: "memory");
		}
	}
	double t1 = now();
	printf("parallel_region_ns %.1f\n", (t1 - t0) / (double)n);
	return sink == 0;
}
