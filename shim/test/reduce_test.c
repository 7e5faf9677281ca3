/* reduce_test.c: unit tests and the in-process benchmark of the summary
 * form's reduction (shim/reduce.c), without MPI.
 *
 * Built and run by internal/shimbuild's TestReduceC, and by
 * scripts/bench-finalize.sh for the benchmark:
 *
 *   cc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Ishim \
 *      shim/base/{clock,process,threads,warn}.c shim/reduce.c shim/test/reduce_test.c -lm -ldl -lpthread -o reduce_test
 *   ./reduce_test tree|extremes|hist|omp|owncost
 *   ./reduce_test bench P REGIONS   (one line: the simulated reduction)
 *
 * Exits 0 and prints "ok SCENARIO" on success, prints "FAIL ..." lines and
 * exits 1 otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"
#include "reduce.h"
#include "seam.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A plausible record of process p: some do not visit, 1-8 CPUs. */
static void record(struct popmon_region_rec *x, int p)
{
	memset(x, 0, sizeof *x);
	x->visits = next() % 5 == 0 ? 0 : 1 + (int64_t)(next() % 3);
	x->cpus = 1 + (int64_t)(next() % 8);
	int64_t e = 1000000000 + (int64_t)(next() % 1000000000);
	x->elapsed_ns = e;
	x->t[POPMON_ST_USEFUL] = (int64_t)(next() % (uint64_t)e) * x->cpus / 2;
	x->t[POPMON_ST_MPI] = (int64_t)(next() % (uint64_t)e) / 3;
	x->t[POPMON_ST_MPI_WORKER_IDLE] = x->cpus > 1 ? x->t[POPMON_ST_MPI] * (x->cpus - 1) : 0;
	x->t[POPMON_ST_OMP_LOAD_IMBALANCE] = (int64_t)(next() % 1000000);
	x->mpi_calls = (int64_t)(next() % 1000);
	x->prim_useful = x->cpus > 1 ? x->t[POPMON_ST_USEFUL] / x->cpus : 0;
	x->prim_mpi = x->cpus > 1 ? x->t[POPMON_ST_MPI] : 0;
	x->prim_parallel = x->cpus > 1 ? e / 2 : 0;
	x->par_useful = x->prim_parallel ? x->t[POPMON_ST_USEFUL] / 2 : 0;
	x->thr_useful_max = p % 7 == 0 ? 0 : x->t[POPMON_ST_USEFUL] / x->cpus + (int64_t)(next() % 1000);
	x->cycles = (int64_t)(next() % 100000);
}

/* The sequential summary of n processes (ppn per node), as measure.Summarize
 * computes it: processes in rank order, then nodes in order. */
static void sequential(struct popmon_region_sum *s, const struct popmon_region_rec *x, int n, int ppn)
{
	popmon_sum_init(s);
	for (int p = 0; p < n; p++)
		popmon_sum_proc(s, &x[p], p, 1);
	for (int node = 0; node * ppn < n; node++) {
		double mpi = 0;
		int64_t cpus = 0;
		for (int p = node * ppn; p < n && p < (node + 1) * ppn; p++) {
			if (x[p].visits <= 0)
				continue;
			mpi += (double)x[p].t[POPMON_ST_MPI] + (double)x[p].t[POPMON_ST_MPI_WORKER_IDLE];
			cpus += x[p].cpus > 1 ? x[p].cpus : 1;
		}
		popmon_sum_node(s, mpi, cpus);
	}
}

/* Each process's contribution as mpi.c makes it (node terms at the node's
 * first process), then combined as a binomial tree whose order depends on
 * shift: the same result whatever the tree. */
static void tree(struct popmon_region_sum *out, const struct popmon_region_rec *x, int n, int ppn, int shift)
{
	struct popmon_region_sum *leaf = malloc(sizeof *leaf * (size_t)n);
	for (int p = 0; p < n; p++) {
		popmon_sum_init(&leaf[p]);
		popmon_sum_proc(&leaf[p], &x[p], p, 1);
		if (p % ppn == 0) {
			double mpi = 0;
			int64_t cpus = 0;
			for (int q = p; q < n && q < p + ppn; q++) {
				if (x[q].visits <= 0)
					continue;
				mpi += (double)x[q].t[POPMON_ST_MPI] + (double)x[q].t[POPMON_ST_MPI_WORKER_IDLE];
				cpus += x[q].cpus > 1 ? x[q].cpus : 1;
			}
			popmon_sum_node(&leaf[p], mpi, cpus);
		}
	}
	for (int step = 1; step < n; step *= 2)
		for (int p = 0; p + step < n; p += 2 * step) {
			int a = (p + shift) % n, b = (p + step + shift) % n;
			if ((step / 1) % 2)
				popmon_sum_combine(&leaf[b], &leaf[a]);
			else {
				popmon_sum_combine(&leaf[a], &leaf[b]);
				leaf[a] = leaf[b];
			}
		}
	*out = leaf[shift % n];
	free(leaf);
}

static int same(const struct popmon_region_sum *a, const struct popmon_region_sum *b)
{
	return memcmp(a, b, sizeof *a) == 0;
}

static void test_tree(void)
{
	for (int n = 1; n <= 1000; n = n * 3 + 1) {
		struct popmon_region_rec *x = malloc(sizeof *x * (size_t)n);
		for (int p = 0; p < n; p++)
			record(&x[p], p);
		struct popmon_region_sum seq, t;
		sequential(&seq, x, n, 4);
		for (int shift = 0; shift < 3; shift++) {
			tree(&t, x, n, 4, shift * 7);
			CHECK(same(&seq, &t), "n=%d shift=%d: the tree differs from the sequential pass", n, shift);
		}
		int visited = 0, multi = 0;
		int64_t useful = 0;
		for (int p = 0; p < n; p++)
			if (x[p].visits > 0) {
				visited++;
				multi += x[p].cpus > 1;
				useful += x[p].t[POPMON_ST_USEFUL];
			}
		CHECK(seq.procs == visited && seq.multi_cpu == multi && seq.sum[POPMON_SUM_USEFUL] == useful,
		      "n=%d: %lld processes (%d), %lld multi-CPU (%d), useful %lld (%lld)", n, (long long)seq.procs,
		      visited, (long long)seq.multi_cpu, multi, (long long)seq.sum[POPMON_SUM_USEFUL], (long long)useful);
		free(x);
	}
	/* Saturation instead of wrapping. */
	struct popmon_region_sum a, b;
	popmon_sum_init(&a);
	popmon_sum_init(&b);
	a.sum[POPMON_SUM_ELAPSED] = INT64_MAX - 5;
	b.sum[POPMON_SUM_ELAPSED] = 10;
	popmon_sum_combine(&b, &a);
	CHECK(a.sum[POPMON_SUM_ELAPSED] == INT64_MAX, "saturating sum %lld", (long long)a.sum[POPMON_SUM_ELAPSED]);
	if (!failures)
		printf("ok tree\n");
}

static void test_extremes(void)
{
	struct popmon_region_sum s, e;
	popmon_sum_init(&s);
	popmon_sum_init(&e);
	struct popmon_region_rec x = {.visits = 1, .cpus = 1};
	int64_t useful[] = {5, 3, 9, 3, 9};
	for (int p = 4; p >= 0; p--) { /* reverse order: ties still go to the lowest rank */
		struct popmon_region_sum one;
		popmon_sum_init(&one);
		x.t[POPMON_ST_USEFUL] = useful[p];
		x.t[POPMON_ST_MPI] = 10 - useful[p];
		popmon_sum_proc(&one, &x, p, 0);
		popmon_sum_combine(&one, &s);
	}
	CHECK(s.useful.min == 3 && s.useful.min_rank == 1 && s.useful.max == 9 && s.useful.max_rank == 2,
	      "useful extremes %lld@%lld %lld@%lld", (long long)s.useful.min, (long long)s.useful.min_rank,
	      (long long)s.useful.max, (long long)s.useful.max_rank);
	CHECK(s.mpi.min == 1 && s.mpi.min_rank == 2 && s.mpi.max == 7 && s.mpi.max_rank == 1, "MPI extremes");
	/* The identity changes nothing, a record without visits neither. */
	struct popmon_region_sum before = s;
	popmon_sum_combine(&e, &s);
	x.visits = 0;
	popmon_sum_proc(&s, &x, 0, 0);
	CHECK(same(&before, &s), "identity or an unvisited record changed the summary");
	CHECK(isinf(e.min_mpi_proc) && e.procs == 0, "identity");
	if (!failures)
		printf("ok extremes\n");
}

static void test_hist(void)
{
	static const struct {
		int64_t v, min, max;
		int bin;
	} cases[] = {
		{0, 0, 99, 0}, {50, 0, 99, 10}, {99, 0, 99, 19}, {98, 0, 99, 19}, {5, 5, 5, 0},
		{4, 5, 10, 0}, {11, 5, 10, 19}, {1000000000, 0, 4000000000, 4},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int b = popmon_hist_bin(cases[i].v, cases[i].min, cases[i].max);
		CHECK(b == cases[i].bin, "bin(%lld in [%lld, %lld]) = %d, want %d", (long long)cases[i].v,
		      (long long)cases[i].min, (long long)cases[i].max, b, cases[i].bin);
	}
	struct popmon_region_sum r, h;
	popmon_sum_init(&r);
	popmon_sum_init(&h);
	r.useful.min = 0;
	r.useful.max = 99;
	r.mpi.min = 0;
	r.mpi.max = 0;
	struct popmon_region_rec x = {.visits = 1, .cpus = 1};
	for (int v = 0; v < 100; v++) {
		x.t[POPMON_ST_USEFUL] = v;
		popmon_sum_hist(&h, &r, &x);
	}
	for (int b = 0; b < POPMON_HIST_BINS; b++)
		CHECK(h.hist[0][b] == 5, "useful bin %d holds %lld, want 5", b, (long long)h.hist[0][b]);
	CHECK(h.hist[1][0] == 100, "MPI all in bin 0: %lld", (long long)h.hist[1][0]);
	if (!failures)
		printf("ok hist\n");
}

static void test_omp(void)
{
	int n = 1000000, distinct = 1000;
	struct popmon_omp_row *rows = calloc((size_t)n, sizeof *rows);
	for (int i = 0; i < n; i++) {
		int k = (int)(next() % (uint64_t)distinct);
		snprintf(rows[i].module, sizeof rows[i].module, "lib%d.so", k % 3);
		rows[i].address = (uint64_t)k;
		rows[i].executions = 1;
		rows[i].threads = 1 + k % 5 + (i % 2);
		rows[i].wall_ns = 10;
	}
	clock_t c = clock();
	int m = popmon_omp_merge(rows, n);
	double s = (double)(clock() - c) / CLOCKS_PER_SEC;
	int64_t exec = 0;
	for (int i = 0; i < m; i++) {
		exec += rows[i].executions;
		if (i)
			CHECK(strcmp(rows[i - 1].module, rows[i].module) < 0 ||
				      (strcmp(rows[i - 1].module, rows[i].module) == 0 && rows[i - 1].address < rows[i].address),
			      "rows %d and %d not in order or not merged", i - 1, i);
	}
	CHECK(m == distinct && exec == n, "%d merged rows (want %d), %lld executions (want %d)", m, distinct,
	      (long long)exec, n);
	CHECK(rows[0].wall_ns == rows[0].executions * 10, "wall times summed");
	CHECK(s < 5, "merging 10^6 rows took %.2f s", s);
	CHECK(popmon_omp_merge(rows, 0) == 0, "empty");
	free(rows);
	if (!failures)
		printf("ok omp\n");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The reduction of P processes × R regions simulated as a tree: the MPI
 * reduction's critical path is ceil(log2 P) combinations of R summaries
 * (each rank combines what its children send), so its time is the depth
 * times the measured cost of one combination of R summaries, and every
 * rank holds 2 × R summaries whatever P. Prints that, and rank 0's bytes
 * for the gather of the full form (P process records and P × R region
 * records, twice: the receive buffer and its copy). */
static void bench(long p, int regions)
{
	struct popmon_region_sum *acc = malloc(sizeof *acc * (size_t)regions);
	struct popmon_region_sum *one = malloc(sizeof *one * (size_t)regions);
	struct popmon_region_rec x;
	for (int r = 0; r < regions; r++) {
		popmon_sum_init(&acc[r]);
		popmon_sum_init(&one[r]);
		record(&x, r);
		x.visits = 1;
		popmon_sum_proc(&one[r], &x, r, 1);
	}
	int reps = 2000;
	double t0 = now();
	for (int k = 0; k < reps; k++)
		for (int r = 0; r < regions; r++)
			popmon_sum_combine(&one[r], &acc[r]);
	double per = (now() - t0) / reps; /* one combination of R summaries */
	int depth = 0;
	while ((1L << depth) < p)
		depth++;
	double old_bytes = (double)p * ((double)sizeof(struct popmon_proc_rec) +
					 (double)regions * (double)sizeof(struct popmon_region_rec)) * 2;
	double new_bytes = 2.0 * regions * (double)sizeof(struct popmon_region_sum);
	printf("P=%ld regions=%d combine_us=%.2f depth=%d critical_path_ms=%.3f rank0_bytes_new=%.0f rank0_bytes_old=%.0f procs=%lld\n",
	       p, regions, per * 1e6, depth, per * depth * 1e3, new_bytes, old_bytes, (long long)acc[0].procs);
	free(acc);
	free(one);
}

/* popmon_owncost_apply: calls x cost moves out of MPI and useful time into
 * the instrumentation account, no account goes below 0, the accounts' sum
 * is unchanged, the primary thread's accounts follow. */
static void test_owncost(void)
{
	static const struct {
		int64_t calls, useful, mpi, prim_useful, prim_serial, prim_mpi;
		double in_ns, out_ns;
		int64_t want_useful, want_mpi, want_instr, want_prim_useful, want_prim_mpi;
	} cases[] = {
		/* 1000 calls x (20 + 15) ns: 20 us out of MPI, 15 us out of useful. */
		{1000, 1000000, 500000, 1000000, 800000, 500000, 20, 15, 985000, 480000, 35000, 985000, 480000},
		/* Uncalibrated: nothing moves. */
		{1000, 1000000, 500000, 1000000, 1000000, 500000, 0, 0, 1000000, 500000, 0, 1000000, 500000},
		/* More own cost than MPI time: MPI time goes to 0, not below. */
		{1000000, 1000000, 5000, 1000000, 1000000, 5000, 20, 0.5, 500000, 0, 505000, 500000, 0},
		/* No calls. */
		{0, 1000, 1000, 1000, 1000, 1000, 20, 15, 1000, 1000, 0, 1000, 1000},
		/* Fractions of a ns per call add up: 3 x 0.5 ns, rounded. */
		{3, 100, 100, 100, 100, 100, 0.5, 0.5, 98, 98, 4, 98, 98},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct popmon_region_rec x;
		memset(&x, 0, sizeof x);
		x.visits = 1;
		x.cpus = 1;
		x.mpi_calls = cases[k].calls;
		x.t[POPMON_ST_USEFUL] = cases[k].useful;
		x.t[POPMON_ST_MPI] = cases[k].mpi;
		x.prim_useful = cases[k].prim_useful;
		x.prim_serial_useful = cases[k].prim_serial;
		x.prim_mpi = cases[k].prim_mpi;
		x.thr_useful_max = cases[k].useful;
		int64_t before = x.t[POPMON_ST_USEFUL] + x.t[POPMON_ST_MPI];
		struct popmon_owncost c = {cases[k].in_ns, cases[k].out_ns};
		popmon_owncost_apply(&x, &c);
		CHECK(x.t[POPMON_ST_USEFUL] == cases[k].want_useful && x.t[POPMON_ST_MPI] == cases[k].want_mpi &&
			      x.instr == cases[k].want_instr,
		      "case %zu: useful %lld, MPI %lld, instrumentation %lld; want %lld, %lld, %lld", k,
		      (long long)x.t[POPMON_ST_USEFUL], (long long)x.t[POPMON_ST_MPI], (long long)x.instr,
		      (long long)cases[k].want_useful, (long long)cases[k].want_mpi, (long long)cases[k].want_instr);
		CHECK(x.t[POPMON_ST_USEFUL] + x.t[POPMON_ST_MPI] + x.instr == before, "case %zu: the accounts' sum changed", k);
		CHECK(x.prim_useful == cases[k].want_prim_useful && x.prim_mpi == cases[k].want_prim_mpi &&
			      x.prim_serial_useful <= x.prim_useful && x.thr_useful_max <= x.t[POPMON_ST_USEFUL],
		      "case %zu: primary useful %lld, serial %lld, MPI %lld, thread max %lld", k, (long long)x.prim_useful,
		      (long long)x.prim_serial_useful, (long long)x.prim_mpi, (long long)x.thr_useful_max);
	}
	/* The summary form sums the account. */
	struct popmon_region_rec y;
	memset(&y, 0, sizeof y);
	y.visits = 1;
	y.cpus = 1;
	y.elapsed_ns = 1000;
	y.t[POPMON_ST_USEFUL] = 900;
	y.instr = 100;
	struct popmon_region_sum s, one;
	popmon_sum_init(&s);
	for (int r = 0; r < 2; r++) {
		popmon_sum_init(&one);
		popmon_sum_proc(&one, &y, r, 0);
		popmon_sum_combine(&one, &s);
	}
	CHECK(s.sum[POPMON_SUM_INSTR] == 200, "summary: instrumentation %lld, want 200", (long long)s.sum[POPMON_SUM_INSTR]);
	if (!failures)
		printf("ok owncost\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: reduce_test tree|extremes|hist|omp|bench P REGIONS\n");
		return 2;
	}
	if (strcmp(argv[1], "tree") == 0)
		test_tree();
	else if (strcmp(argv[1], "extremes") == 0)
		test_extremes();
	else if (strcmp(argv[1], "hist") == 0)
		test_hist();
	else if (strcmp(argv[1], "omp") == 0)
		test_omp();
	else if (strcmp(argv[1], "owncost") == 0)
		test_owncost();
	else if (strcmp(argv[1], "bench") == 0 && argc == 4)
		bench(atol(argv[2]), atoi(argv[3]));
	else {
		fprintf(stderr, "unknown scenario %s\n", argv[1]);
		return 2;
	}
	return failures != 0;
}
