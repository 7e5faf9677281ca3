/* ompchunk.c: cost of one chunk of a dynamically scheduled OpenMP loop and
 * of one explicit barrier, for scripts/bench-gomp.sh.
 *
 *   ompchunk [CHUNKS [THREADS]]            defaults: 200000 chunks, 2 threads
 *
 * One parallel region; in it a `for schedule(dynamic, 1)` loop of CHUNKS
 * empty iterations (each one a GOMP_loop_dynamic_next on libgomp, a
 * __kmpc_dispatch_next on libomp), then CHUNKS/100 `#pragma omp barrier`s.
 * Prints "loop_chunk_ns <ns per chunk>" and "barrier_ns <ns per barrier>"
 * (wall time per chunk of the whole team, per barrier of the team).
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
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	if (n < 100 || threads < 1) {
		fprintf(stderr, "usage: %s [CHUNKS>=100 [THREADS]]\n", argv[0]);
		return 2;
	}
	double t0 = 0, t1 = 0, t2 = 0;
	long nb = n / 100;
#pragma omp parallel num_threads(threads)
	{
#pragma omp barrier
#pragma omp master
		t0 = now();
#pragma omp for schedule(dynamic, 1)
		for (long i = 0; i < n; i++)
			__asm__ __volatile__("" ::: "memory");
#pragma omp master
		t1 = now();
		for (long i = 0; i < nb; i++) {
#pragma omp barrier
		}
#pragma omp master
		t2 = now();
	}
	printf("loop_chunk_ns %.1f\nbarrier_ns %.1f\n", (t1 - t0) / (double)n, (t2 - t1) / (double)nb);
	return 0;
}
