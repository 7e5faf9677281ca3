/* ompbusy.c: OpenMP threads that compute (spin on the clock) while useful,
 * for the hardware-counter tests with a stand-in PMU (fakepmu.c): 4 times,
 * 20 ms of serial work, then a parallel region where thread j computes
 * 10·(j+1) ms and the others wait at the barrier (LLVM's runtime spins
 * there, which must not count).
 *
 *   clang -O2 -fopenmp -o ompbusy ompbusy.c
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

static void compute_ms(double ms)
{
	double end = now_ms() + ms;
	while (now_ms() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

int main(void)
{
	for (int it = 0; it < 4; it++) {
		compute_ms(20);
#pragma omp parallel
		compute_ms(10.0 * (omp_get_thread_num() + 1));
	}
	printf("ok\n");
	return 0;
}
