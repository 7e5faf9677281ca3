/* lewi_imbalance.c: a hybrid MPI+OpenMP program with a designed load
 * imbalance that LeWI can balance (docs/lewi.md; examples/README.md).
 *
 * Usage: lewi_imbalance [ITERS [REGIONS [ITEMS [RATIO]]]]
 *        defaults 12 iterations, 10 regions, 64 items, ratio 2
 *        2 ranks (any P works), each bound to ONE CPU (mpirun --bind-to
 *        core; MPICH: -bind-to core); OpenMP's default team: 1 thread.
 *
 * Each iteration: rank 0 runs RATIO*REGIONS short parallel regions, every
 * other rank REGIONS; each region is an `omp parallel for
 * schedule(dynamic)` over ITEMS items of integer work (about 30 µs each);
 * then every rank calls MPI_Allreduce (the checksum). Per iteration rank 0
 * works RATIO units, the others 1 unit: without LeWI an iteration lasts
 * RATIO units, the other ranks wait RATIO-1 in MPI_Allreduce. With LeWI
 * (2 ranks, ratio 2), rank 1 lends its CPU once its unit is done and rank
 * 0's next regions run on both CPUs: 1 + 1/2 = 1.5 units, 0.75 of the time.
 * RATIO 1 is the balanced program (nothing to lend: LeWI must cost nothing);
 * built without OpenMP it is an MPI-only program (scripts/bench-lewi.sh).
 *
 * The checksum is an integer sum (the same whatever the team sizes and the
 * order of the items); rank 0 prints it, and every rank its time waiting in
 * MPI_Allreduce and the process's CPU time during those waits
 * (getrusage), so a test can check that a rank whose CPU is lent does not
 * burn it, and how many of its items ran on threads beyond its own CPUs'
 * team (omp_get_max_threads at the start: 1 with one CPU), on borrowed CPUs:
 *   checksum 0x...
 *   elapsed_s 0.612
 *   rank R wait_s 0.24 wait_cpu_s 0.003 items 1280 extra_items 310 compute_s 0.3
 * (compute_s: its time in the parallel regions).
 * Exits 0; 2 with a bad argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#else /* built without OpenMP: the MPI-only form of the same program */
static int omp_get_max_threads(void) { return 1; }
static int omp_get_thread_num(void) { return 0; }
#endif

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec * 1e-6;
}

/* One item: integer mixing, about 30 µs; the same result on every run. */
static uint64_t item(uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (int i = 0; i < 6000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static long arg(int argc, char **argv, int i, long dflt)
{
	if (argc <= i)
		return dflt;
	char *end;
	long v = strtol(argv[i], &end, 10);
	if (*end || v < 1 || v > 1000000) {
		fprintf(stderr, "lewi_imbalance: bad argument %s\n", argv[i]);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long iters = arg(argc, argv, 1, 12), regions = arg(argc, argv, 2, 10), items = arg(argc, argv, 3, 64),
	     ratio = arg(argc, argv, 4, 2);
	int provided, rank;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = now_s(), wait = 0, wait_cpu = 0, compute = 0;
	uint64_t checksum = 0;
	long done = 0, extra = 0;
	const int own = omp_get_max_threads();
	long mine = rank == 0 ? ratio * regions : regions;
	for (long it = 0; it < iters; it++) {
		uint64_t part = 0;
		double c_0 = now_s();
		for (long r = 0; r < mine; r++) {
			uint64_t s = 0;
			long base = (it * 1000003L + r * 7919L + rank) * items;
#pragma omp parallel for schedule(dynamic) reduction(+ : s, extra)
			for (long i = 0; i < items; i++) {
				s += item((uint64_t)(base + i));
				extra += omp_get_thread_num() >= own;
			}
			done += items;
			part += s;
		}
		uint64_t sum = 0;
		double w0 = now_s(), c0 = cpu_s();
		compute += w0 - c_0;
		MPI_Allreduce(&part, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
		wait += now_s() - w0;
		wait_cpu += cpu_s() - c0;
		checksum += sum;
	}
	double elapsed = now_s() - t0;
	if (rank == 0)
		printf("checksum 0x%016llx\nelapsed_s %.4f\n", (unsigned long long)checksum, elapsed);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("rank %d wait_s %.4f wait_cpu_s %.4f items %ld extra_items %ld compute_s %.4f\n", rank, wait, wait_cpu,
	       done, extra, compute);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
