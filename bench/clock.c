/* clock.c: cost of one clock read, for `make bench`: the invariant TSC
 * (rdtsc, what libpopmon uses when the CPU has one) against
 * clock_gettime(CLOCK_MONOTONIC) (the portable fallback). An MPI call under
 * popmon reads the clock twice. */
#define _GNU_SOURCE
#include <stdint.h>
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
	volatile uint64_t sink = 0;
	double t0 = now();
	for (long i = 0; i < n; i++) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (uint64_t)ts.tv_nsec;
	}
	double t1 = now();
#if defined(__x86_64__)
	for (long i = 0; i < n; i++) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		sink += ((uint64_t)hi << 32) | lo;
	}
#endif
	double t2 = now();
	/* The fastest of chunks of 1000 reads (as bench/mpipoll.c's NAME_min_ns). */
	double best = 1e300;
#if defined(__x86_64__)
	for (long k = 0; k < n / 1000; k++) {
		double c0 = now();
		for (int i = 0; i < 1000; i++) {
			uint32_t lo, hi;
			__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
			sink += ((uint64_t)hi << 32) | lo;
		}
		double c = now() - c0;
		if (c < best)
			best = c;
	}
#endif
	/* The same with the read ordered after every earlier instruction
	 * (lfence; rdtsc): what libpopmon's MPI entry reads (shim/base/clock.h,
	 * popmon_now_ordered). */
	double t3 = now(), best_ord = 1e300;
#if defined(__x86_64__)
	for (long i = 0; i < n; i++) {
		uint32_t lo, hi;
		__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
		sink += ((uint64_t)hi << 32) | lo;
	}
#endif
	double t4 = now();
#if defined(__x86_64__)
	for (long k = 0; k < n / 1000; k++) {
		double c0 = now();
		for (int i = 0; i < 1000; i++) {
			uint32_t lo, hi;
			__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
			sink += ((uint64_t)hi << 32) | lo;
		}
		double c = now() - c0;
		if (c < best_ord)
			best_ord = c;
	}
#endif
	printf("clock_gettime_ns %.2f\nrdtsc_ns %.2f\nrdtsc_min_ns %.2f\nrdtsc_ordered_ns %.2f\nrdtsc_ordered_min_ns %.2f\n",
	       (t1 - t0) / (double)n, (t2 - t1) / (double)n, best / 1000, (t4 - t3) / (double)n, best_ord / 1000);
	return sink == 1;
}
