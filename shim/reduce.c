/* reduce.c: the summary form's reduction and the OpenMP rows' merge.
 *
 * Above the per-process record limit (POPMON_MAX_PROCESS_RECORDS), finalize
 * reduces every region's accounts with one custom MPI operation over
 * struct popmon_region_sum (mpi.c) instead of gathering P records: this
 * file is that operation and each process's contribution, without MPI, so
 * that a C unit test (shim/test/reduce_test.c) and the benchmark can drive
 * it. The quantities are exactly those of measure.RegionSummary
 * (measure/summary.go), computed the same way from the same integers, so
 * the models give the same values from the summary as from full records.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/threads.h"
#include "ompt.h"
#include "reduce.h"

const char *const popmon_sum_keys[POPMON_NSUM] = {
	"visits", "elapsed_ns", "useful_ns", "mpi_ns", "mpi_worker_idle_ns",
	"omp_serialization_ns", "omp_load_imbalance_ns", "omp_scheduling_ns",
	"gpu_runtime_ns", "mpi_calls", "omp_parallels", "omp_tasks",
	"gpu_runtime_calls", "cycles", "instructions", "primary_useful_ns",
	"primary_mpi_ns", "primary_parallel_ns", "primary_serial_useful_ns", "parallel_useful_ns",
	"thread_useful_max_ns", "instrumentation_ns",
};

uint64_t popmon_owncost_ticks[2];

/* calls x ns, rounded (saturating, never negative). */
static int64_t calls_ns(int64_t calls, double ns)
{
	if (calls <= 0 || !(ns > 0))
		return 0;
	double v = (double)calls * ns + 0.5;
	return v >= 9.2e18 ? INT64_MAX : (int64_t)v;
}

static int64_t take(int64_t *from, int64_t want)
{
	int64_t v = want < *from ? want : *from;
	if (v < 0)
		v = 0;
	*from -= v;
	return v;
}

void popmon_owncost_apply(struct popmon_region_rec *rec, const struct popmon_owncost *c)
{
	int64_t in = calls_ns(rec->mpi_calls, c->in_ns), out = calls_ns(rec->mpi_calls, c->out_ns);
	in = take(&rec->t[POPMON_ST_MPI], in);
	out = take(&rec->t[POPMON_ST_USEFUL], out);
	rec->instr += in + out;
	take(&rec->prim_mpi, in);
	take(&rec->prim_serial_useful, out);
	take(&rec->prim_useful, out);
	if (rec->prim_serial_useful > rec->prim_useful)
		rec->prim_serial_useful = rec->prim_useful;
	if (rec->thr_useful_max > rec->t[POPMON_ST_USEFUL])
		rec->thr_useful_max = rec->t[POPMON_ST_USEFUL];
}

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

void popmon_sum_init(struct popmon_region_sum *s)
{
	memset(s, 0, sizeof *s);
	s->min_mpi_proc = s->min_mpi_node = INFINITY;
	s->useful.min = s->mpi.min = INT64_MAX;
	s->useful.max = s->mpi.max = INT64_MIN;
	s->useful.min_rank = s->useful.max_rank = s->mpi.min_rank = s->mpi.max_rank = INT64_MAX;
}

static void extreme(struct popmon_extreme *e, int64_t v, int64_t rank)
{
	if (v < e->min || (v == e->min && rank < e->min_rank)) {
		e->min = v;
		e->min_rank = rank;
	}
	if (v > e->max || (v == e->max && rank < e->max_rank)) {
		e->max = v;
		e->max_rank = rank;
	}
}

/* The accessors of measure/accounts.go, on a record as written to the
 * file. */
static int64_t primary_useful(const struct popmon_region_rec *x)
{
	return x->prim_useful == 0 && x->cpus <= 1 ? x->t[POPMON_ST_USEFUL] : x->prim_useful;
}

static int64_t primary_serial_useful(const struct popmon_region_rec *x)
{
	if (x->prim_serial_useful > 0)
		return x->prim_serial_useful;
	if (x->prim_parallel == 0)
		return primary_useful(x);
	int64_t v = x->t[POPMON_ST_USEFUL] - x->par_useful;
	if (v < 0)
		v = 0;
	int64_t p = primary_useful(x);
	return v < p ? v : p;
}

void popmon_sum_proc(struct popmon_region_sum *s, const struct popmon_region_rec *x, int64_t rank,
		     int with_counters)
{
	if (x->visits <= 0)
		return;
	int64_t cpus = x->cpus > 1 ? x->cpus : 1;
	double t = (double)cpus;
	int64_t useful = x->t[POPMON_ST_USEFUL], mpi = x->t[POPMON_ST_MPI];
	int64_t v[POPMON_NSUM] = {
		x->visits, x->elapsed_ns, useful, mpi, x->t[POPMON_ST_MPI_WORKER_IDLE],
		x->t[POPMON_ST_OMP_SERIALIZATION], x->t[POPMON_ST_OMP_LOAD_IMBALANCE], x->t[POPMON_ST_OMP_SCHEDULING],
		x->t[POPMON_ST_GPU_RUNTIME], x->mpi_calls, x->omp_parallels, x->omp_tasks,
		x->gpu_calls, with_counters ? x->cycles : 0, with_counters ? x->instructions : 0, x->prim_useful,
		x->prim_mpi, x->prim_parallel, x->prim_serial_useful, x->par_useful,
		x->thr_useful_max, x->instr,
	};
	struct popmon_region_sum p;
	popmon_sum_init(&p);
	p.procs = 1;
	p.cpus = cpus;
	p.max_cpus = x->cpus;
	p.elapsed_max = x->elapsed_ns;
	memcpy(p.sum, v, sizeof v);
	p.min_mpi_proc = ((double)mpi + (double)x->t[POPMON_ST_MPI_WORKER_IDLE] + 0.0) / t;
	p.thr_useful_max = x->thr_useful_max == 0 && x->cpus <= 1 ? useful : x->thr_useful_max;
	int64_t pmpi = x->prim_mpi == 0 && x->cpus <= 1 ? mpi : x->prim_mpi;
	double nonmpi = (double)x->elapsed_ns - (double)pmpi - 0.0;
	if (!(nonmpi > 0))
		nonmpi = 0;
	p.nonmpi_sum = p.nonmpi_max = nonmpi;
	p.nonmpi_w = t * nonmpi;
	double su = (double)primary_serial_useful(x);
	p.par_w = t * (double)x->prim_parallel;
	p.ser_w = t * su;
	p.ser_idle = su * (t - 1);
	p.without_thr = !(x->cpus <= 1 || x->thr_useful_max > 0 || useful == 0);
	p.multi_cpu = x->cpus > 1;
	p.talp_derived = x->cpus <= 1 && x->thr_useful_max == useful;
	p.with_thr_useful = x->thr_useful_max > 0;
	extreme(&p.useful, useful, rank);
	extreme(&p.mpi, mpi, rank);
	popmon_sum_combine(&p, s);
}

static double dmin(double a, double b)
{
	return a < b ? a : b;
}

static int64_t imax(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

void popmon_sum_combine(const struct popmon_region_sum *in, struct popmon_region_sum *io)
{
	io->procs += in->procs;
	io->nodes += in->nodes;
	io->cpus += in->cpus;
	io->max_cpus = imax(io->max_cpus, in->max_cpus);
	io->elapsed_max = imax(io->elapsed_max, in->elapsed_max);
	io->thr_useful_max = imax(io->thr_useful_max, in->thr_useful_max);
	io->without_thr += in->without_thr;
	io->multi_cpu += in->multi_cpu;
	io->talp_derived += in->talp_derived;
	io->with_thr_useful += in->with_thr_useful;
	for (int k = 0; k < POPMON_NSUM; k++)
		io->sum[k] = sat_add(io->sum[k], in->sum[k]);
	io->min_mpi_proc = dmin(io->min_mpi_proc, in->min_mpi_proc);
	io->min_mpi_node = dmin(io->min_mpi_node, in->min_mpi_node);
	io->nonmpi_sum += in->nonmpi_sum;
	io->nonmpi_max = io->nonmpi_max > in->nonmpi_max ? io->nonmpi_max : in->nonmpi_max;
	io->nonmpi_w += in->nonmpi_w;
	io->par_w += in->par_w;
	io->ser_w += in->ser_w;
	io->ser_idle += in->ser_idle;
	const struct popmon_extreme *ie[2] = {&in->useful, &in->mpi};
	struct popmon_extreme *oe[2] = {&io->useful, &io->mpi};
	for (int k = 0; k < 2; k++) {
		if (ie[k]->min_rank != INT64_MAX)
			extreme(oe[k], ie[k]->min, ie[k]->min_rank);
		if (ie[k]->max_rank != INT64_MAX)
			extreme(oe[k], ie[k]->max, ie[k]->max_rank);
	}
	for (int k = 0; k < 2; k++)
		for (int b = 0; b < POPMON_HIST_BINS; b++)
			io->hist[k][b] += in->hist[k][b];
}

void popmon_sum_node(struct popmon_region_sum *s, double mpi, int64_t cpus)
{
	if (cpus <= 0)
		return;
	s->nodes++;
	s->min_mpi_node = dmin(s->min_mpi_node, mpi / (double)cpus);
}

int popmon_hist_bin(int64_t v, int64_t min, int64_t max)
{
	if (v <= min)
		return 0;
	if (v >= max)
		return POPMON_HIST_BINS - 1;
	double w = (double)max - (double)min + 1;
	int b = (int)((double)(v - min) * POPMON_HIST_BINS / w);
	return b < 0 ? 0 : b >= POPMON_HIST_BINS ? POPMON_HIST_BINS - 1 : b;
}

void popmon_sum_hist(struct popmon_region_sum *s, const struct popmon_region_sum *r,
		     const struct popmon_region_rec *x)
{
	if (x->visits <= 0)
		return;
	s->hist[0][popmon_hist_bin(x->t[POPMON_ST_USEFUL], r->useful.min, r->useful.max)]++;
	s->hist[1][popmon_hist_bin(x->t[POPMON_ST_MPI], r->mpi.min, r->mpi.max)]++;
}

static int cmp_row(const void *x, const void *y)
{
	const struct popmon_omp_row *a = x, *b = y;
	int c = strcmp(a->module, b->module);
	if (c)
		return c;
	return (a->address > b->address) - (a->address < b->address);
}

int popmon_omp_merge(struct popmon_omp_row *rows, int n)
{
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		rows[i].module[sizeof rows[i].module - 1] = '\0'; /* from other processes */
	qsort(rows, (size_t)n, sizeof *rows, cmp_row);
	int w = 0;
	for (int i = 0; i < n; i++) {
		if (w && cmp_row(&rows[w - 1], &rows[i]) == 0) {
			struct popmon_omp_row *m = &rows[w - 1], *a = &rows[i];
			m->executions += a->executions;
			if (a->threads > m->threads)
				m->threads = a->threads;
			m->wall_ns += a->wall_ns;
			m->useful_ns += a->useful_ns;
			m->imbalance_ns += a->imbalance_ns;
			m->sync_ns += a->sync_ns;
			m->limited_ns += a->limited_ns;
			m->mgmt_ns += a->mgmt_ns;
		} else {
			if (w != i)
				rows[w] = rows[i];
			w++;
		}
	}
	return w;
}
