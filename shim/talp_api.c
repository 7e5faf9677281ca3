/* talp_api.c: the runtime query API inside the application
 * (docs/library.md, "Runtime query API"): DLB_TALP_CollectPOPMetrics,
 * DLB_TALP_CollectPOPNodeMetrics and popmon's own popmon_metrics.
 *
 * A query takes this process's accounts of the region so far (an open visit
 * counted up to now, without closing it), reduces them over the ranks with
 * ONE reduction of a fixed-size vector of doubles (sums, maxima, negated
 * minima: one user operation on one derived datatype, so that an MPI cannot
 * split an element), on a duplicate of MPI_COMM_WORLD made at the first
 * query, and computes model talp (pop/talp.go) from the sums, so that the
 * values equal popmon's report of the same accounts. The node terms of
 * LB In/Out come from a reduction on the node's communicator first.
 * Every rank enters the same reductions whatever region it asks for: a
 * rank that does not know the region takes part with nothing (it cannot
 * hang the others), and ranks asking for different regions are detected
 * (name hashes reduced alongside) and get DLB_ERR_NOCOMP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define POPMON_BUILDING_LIBRARY
#include "accounts.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "counters.h"
#include "ompt.h"
#include "regions.h"
#include "talp_api.h"

#ifndef POPMON_NO_MPI
#include <mpi.h>
#endif

/* DLB's return codes (dlb_errors.h). */
enum { DLB_SUCCESS_ = 0, DLB_ERR_NOINIT_ = -2, DLB_ERR_TIMEOUT_ = -9, DLB_ERR_NOENT_ = -11, DLB_ERR_NOCOMP_ = -12,
       DLB_ERR_NOMEM_ = -14, DLB_ERR_NOTALP_ = -16 };

/* ------------------------------------------------------------------ model talp */

void popmon_talp_sums_zero(double s[POPMON_TS_N])
{
	for (int i = 0; i < POPMON_TS_N; i++)
		s[i] = i < POPMON_TS_NSUM ? 0.0 : -INFINITY;
}

void popmon_talp_sums_merge(double a[POPMON_TS_N], const double b[POPMON_TS_N])
{
	for (int i = 0; i < POPMON_TS_NSUM; i++)
		a[i] += b[i];
	for (int i = POPMON_TS_NSUM; i < POPMON_TS_N; i++)
		if (b[i] > a[i])
			a[i] = b[i];
}

void popmon_talp_sums_add(double s[POPMON_TS_N], const struct popmon_talp_proc *p, double node_mpi,
			  double node_cpus, double node_share)
{
	if (!p->present)
		return;
	double one[POPMON_TS_N];
	double cpus = p->cpus >= 1 ? p->cpus : 1; /* as model talp: at least 1 */
	double m = p->mpi + p->mw;
	memset(one, 0, sizeof one);
	one[POPMON_TS_PROCS] = 1;
	one[POPMON_TS_NODES] = node_share;
	one[POPMON_TS_CPUS] = cpus;
	one[POPMON_TS_U] = p->u;
	one[POPMON_TS_MPI] = p->mpi;
	one[POPMON_TS_MW] = p->mw;
	one[POPMON_TS_ISER] = p->iser;
	one[POPMON_TS_ILB] = p->ilb;
	one[POPMON_TS_ISCH] = p->isch;
	one[POPMON_TS_G] = p->g;
	one[POPMON_TS_VISITS] = p->visits;
	one[POPMON_TS_MPI_CALLS] = p->mpi_calls;
	one[POPMON_TS_OMP_PARALLELS] = p->omp_parallels;
	one[POPMON_TS_OMP_TASKS] = p->omp_tasks;
	one[POPMON_TS_GPU_CALLS] = p->gpu_calls;
	one[POPMON_TS_CYCLES] = p->cycles;
	one[POPMON_TS_INSTRUCTIONS] = p->instructions;
	one[POPMON_TS_ELAPSED] = p->elapsed;
	one[POPMON_TS_MAX_U] = p->u;
	one[POPMON_TS_MAX_M] = m;
	one[POPMON_TS_NEG_MIN_PROC] = -(m / cpus);
	one[POPMON_TS_NEG_MIN_NODE] = node_cpus > 0 ? -(node_mpi / node_cpus) : -INFINITY;
	one[POPMON_TS_OMP_RUNTIME] = p->omp_runtime;
	one[POPMON_TS_OMPT] = p->ompt;
	one[POPMON_TS_OMP_HINT] = p->omp_hint;
	popmon_talp_sums_merge(s, one);
}

/* num / den, or 0 when den is not positive (the report leaves it out). */
static double ratio(double num, double den)
{
	return den > 0 ? num / den : 0.0;
}

static int64_t ns64(double v)
{
	return v >= 9.2e18 ? INT64_MAX : v <= 0 ? 0 : (int64_t)(v + 0.5);
}

int popmon_talp_compute(const double s[POPMON_TS_N], struct popmon_metrics *m)
{
	double procs = s[POPMON_TS_PROCS];
	m->processes = (int32_t)(procs + 0.5);
	m->nodes = (int32_t)(s[POPMON_TS_NODES] + 0.5);
	m->cpus = (int32_t)(s[POPMON_TS_CPUS] + 0.5);
	m->flags = 0;
	m->reserved = 0;
	m->visits = ns64(s[POPMON_TS_VISITS]);
	m->elapsed_ns = procs > 0 ? ns64(s[POPMON_TS_ELAPSED]) : 0;
	m->useful_ns = ns64(s[POPMON_TS_U]);
	m->mpi_ns = ns64(s[POPMON_TS_MPI]);
	m->mpi_worker_idle_ns = ns64(s[POPMON_TS_MW]);
	m->omp_serialization_ns = ns64(s[POPMON_TS_ISER]);
	m->omp_load_imbalance_ns = ns64(s[POPMON_TS_ILB]);
	m->omp_scheduling_ns = ns64(s[POPMON_TS_ISCH]);
	m->gpu_runtime_ns = ns64(s[POPMON_TS_G]);
	m->mpi_calls = ns64(s[POPMON_TS_MPI_CALLS]);
	double *eff[] = {&m->parallel_efficiency, &m->mpi_parallel_efficiency, &m->mpi_communication_efficiency,
			 &m->mpi_load_balance, &m->mpi_load_balance_in, &m->mpi_load_balance_out,
			 &m->omp_parallel_efficiency, &m->omp_serialization_efficiency, &m->omp_load_balance,
			 &m->omp_scheduling_efficiency, &m->device_offload_efficiency};
	for (size_t i = 0; i < sizeof eff / sizeof eff[0]; i++)
		*eff[i] = 0.0;
	if (procs < 0.5)
		return POPMON_ERR_NOENT; /* nobody visited the region: no metrics */

	/* OpenMP as the file's "openmp" object decides it (pop/talp.go,
	 * detect): measured when OMPT was active; without an OpenMP runtime,
	 * when any process shows OpenMP. */
	int openmp = s[POPMON_TS_OMP_RUNTIME] > 0 ? s[POPMON_TS_OMPT] > 0 : s[POPMON_TS_OMP_HINT] > 0;
	if (openmp)
		m->flags |= POPMON_METRICS_OPENMP;
	if (s[POPMON_TS_G] > 0 || s[POPMON_TS_GPU_CALLS] > 0)
		m->flags |= POPMON_METRICS_GPU;

	/* POP-METRICS.md §2, as pop/talp.go computes it. */
	double u = s[POPMON_TS_U], mpi = s[POPMON_TS_MPI], mw = s[POPMON_TS_MW];
	double iser = s[POPMON_TS_ISER] + mw, ilb = s[POPMON_TS_ILB], isch = s[POPMON_TS_ISCH], g = s[POPMON_TS_G];
	double active = u + mpi + ilb + isch + iser + g;
	double active_nomp = u + mpi + g;
	double T = s[POPMON_TS_ELAPSED], C = s[POPMON_TS_CPUS];
	double mpi_app = C > 0 ? (mpi + mw) / C : 0;
	double min_proc = -s[POPMON_TS_NEG_MIN_PROC], min_node = -s[POPMON_TS_NEG_MIN_NODE];
	m->parallel_efficiency = ratio(u, active);
	if (T > 0) {
		m->mpi_parallel_efficiency = ratio(T - mpi_app, T);
		m->mpi_communication_efficiency = ratio(T - min_proc, T);
		m->mpi_load_balance = ratio(T - mpi_app, T - min_proc);
		m->mpi_load_balance_in = ratio(T - min_node, T - min_proc);
		m->mpi_load_balance_out = ratio(T - mpi_app, T - min_node);
	}
	m->omp_parallel_efficiency = ratio(active_nomp, active);
	m->omp_serialization_efficiency = ratio(active_nomp, active_nomp + iser);
	m->omp_load_balance = ratio(active_nomp + iser, active_nomp + iser + ilb);
	m->omp_scheduling_efficiency = ratio(active_nomp + iser + ilb, active);
	double host = u + ilb + isch + iser;
	m->device_offload_efficiency = ratio(host, host + g);
	return POPMON_SUCCESS;
}

void popmon_talp_fill_dlb(const double s[POPMON_TS_N], const struct popmon_metrics *m, const char *name,
			  struct dlb_pop_metrics_compat *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", name ? name : "");
	out->num_cpus = m->cpus;
	out->num_mpi_ranks = m->processes;
	out->num_nodes = m->nodes;
	out->avg_cpus = (float)m->cpus;
	out->cycles = s[POPMON_TS_CYCLES];
	out->instructions = s[POPMON_TS_INSTRUCTIONS];
	out->num_measurements = m->processes > 0 ? ns64(s[POPMON_TS_VISITS] / s[POPMON_TS_PROCS]) : 0;
	out->num_mpi_calls = m->mpi_calls;
	out->num_omp_parallels = ns64(s[POPMON_TS_OMP_PARALLELS]);
	out->num_omp_tasks = ns64(s[POPMON_TS_OMP_TASKS]);
	out->num_gpu_runtime_calls = ns64(s[POPMON_TS_GPU_CALLS]);
	out->elapsed_time = m->elapsed_ns;
	out->useful_time = m->useful_ns;
	out->mpi_time = ns64(s[POPMON_TS_MPI] + s[POPMON_TS_MW]); /* DLB's mpi_time: M + Mw */
	out->omp_load_imbalance_time = m->omp_load_imbalance_ns;
	out->omp_scheduling_time = m->omp_scheduling_ns;
	out->omp_serialization_time = m->omp_serialization_ns;
	out->gpu_runtime_time = m->gpu_runtime_ns;
	if (m->processes > 0) {
		out->min_mpi_normd_proc = -s[POPMON_TS_NEG_MIN_PROC];
		out->min_mpi_normd_node = -s[POPMON_TS_NEG_MIN_NODE];
	}
	out->parallel_efficiency = (float)m->parallel_efficiency;
	out->mpi_parallel_efficiency = (float)m->mpi_parallel_efficiency;
	out->mpi_communication_efficiency = (float)m->mpi_communication_efficiency;
	out->mpi_load_balance = (float)m->mpi_load_balance;
	out->mpi_load_balance_in = (float)m->mpi_load_balance_in;
	out->mpi_load_balance_out = (float)m->mpi_load_balance_out;
	out->omp_parallel_efficiency = (float)m->omp_parallel_efficiency;
	out->omp_load_balance = (float)m->omp_load_balance;
	out->omp_scheduling_efficiency = (float)m->omp_scheduling_efficiency;
	out->omp_serialization_efficiency = (float)m->omp_serialization_efficiency;
	out->device_offload_efficiency = (float)m->device_offload_efficiency;
}

void popmon_talp_fill_node(const double s[POPMON_TS_N], const struct popmon_metrics *m, const char *name,
			   int node_id, struct dlb_node_metrics_compat *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", name ? name : "");
	out->node_id = node_id;
	out->processes_per_node = m->processes;
	out->total_useful_time = m->useful_ns;
	out->total_mpi_time = ns64(s[POPMON_TS_MPI] + s[POPMON_TS_MW]);
	if (m->processes > 0) {
		out->max_useful_time = ns64(s[POPMON_TS_MAX_U]);
		out->max_mpi_time = ns64(s[POPMON_TS_MAX_M]);
	}
	out->parallel_efficiency = (float)m->parallel_efficiency;
	out->communication_efficiency = (float)m->mpi_communication_efficiency;
	out->load_balance = (float)m->mpi_load_balance;
}

/* ------------------------------------------------------------------ this process */

/* Previous accounts of each region for POPMON_WINDOW_SINCE_LAST, apart for
 * the collective and the local calls (allocated at the first such call;
 * untouched entries cost no memory). */
static struct popmon_talp_proc *prev_of[2];

/* This process's part of a query of region idx (-1: none) in window. The
 * region's name goes to name. Returns 0, or DLB_ERR_NOMEM_. */
static int my_part(int idx, int window, int local, struct popmon_talp_proc *p, char name[POPMON_NAME_MAX])
{
	memset(p, 0, sizeof *p);
	uint64_t visits = 0, elapsed = 0;
	struct popmon_accounts a;
	memset(&a, 0, sizeof a);
	int have = idx >= 0 ? popmon_region_sofar(idx, name, &visits, &elapsed, &a) : -1;
	if (have < 0)
		name[0] = '\0';
	const char *rt, *reason;
	int ompt = 0, maxthr;
	p->omp_runtime = popmon_openmp_info(&rt, &ompt, &reason, &maxthr);
	p->ompt = ompt;
	/* A region measured per thread: one thread's time at a time. */
	p->cpus = idx >= 0 && popmon_region_threads(idx) > 0 ? 1 : popmon_cpus();
	p->present = have > 0;
	p->elapsed = (double)elapsed;
	p->u = (double)a.t[POPMON_ST_USEFUL];
	p->mpi = (double)a.t[POPMON_ST_MPI];
	p->mw = (double)a.t[POPMON_ST_MPI_WORKER_IDLE];
	p->iser = (double)a.t[POPMON_ST_OMP_SERIALIZATION];
	p->ilb = (double)a.t[POPMON_ST_OMP_LOAD_IMBALANCE];
	p->isch = (double)a.t[POPMON_ST_OMP_SCHEDULING];
	p->g = (double)a.t[POPMON_ST_GPU_RUNTIME];
	p->visits = (double)visits;
	p->mpi_calls = (double)a.mpi_calls;
	p->omp_parallels = (double)a.omp_parallels;
	p->omp_tasks = (double)a.omp_tasks;
	p->gpu_calls = (double)a.gpu_calls;
	p->cycles = (double)a.ctr[POPMON_CTR_CYCLES];
	p->instructions = (double)a.ctr[POPMON_CTR_INSTRUCTIONS];
	p->prim_mpi = (double)a.prim_mpi;
	p->omp_hint = p->cpus > 1 || p->iser > 0 || p->ilb > 0 || p->isch > 0 || p->mw > 0 || p->omp_parallels > 0;
	if (window != POPMON_WINDOW_SINCE_LAST || idx < 0)
		return 0;
	struct popmon_talp_proc *table = __atomic_load_n(&prev_of[local ? 1 : 0], __ATOMIC_ACQUIRE);
	if (!table) {
		struct popmon_talp_proc *fresh = calloc(POPMON_MAX_REGIONS, sizeof *fresh);
		if (!fresh)
			return DLB_ERR_NOMEM_;
		if (__atomic_compare_exchange_n(&prev_of[local ? 1 : 0], &table, fresh, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			table = fresh;
		else
			free(fresh); /* another thread's came first */
	}
	struct popmon_talp_proc cur = *p, *q = &table[idx];
	/* A reset since the previous call: the window starts at the reset. */
	if (cur.elapsed < q->elapsed || cur.visits < q->visits)
		memset(q, 0, sizeof *q);
	if (cur.cpus > q->cpus && q->cpus > 0) {
		/* CPUs joined (a larger OpenMP team, an MPI thread): the library
		 * charged their idle time before they joined to the region
		 * (ompt.h, popmon_cpus_grow_omp), all of it up to now. The part
		 * before the previous call belongs to earlier windows: charge it
		 * to the baseline the same way, so that the window counts the
		 * new CPUs over the window only. */
		double k = cur.cpus - q->cpus, pm = q->prim_mpi < q->elapsed ? q->prim_mpi : q->elapsed;
		q->mw += k * pm;
		q->iser += k * (q->elapsed - pm);
	}
	double *dst[] = {&p->elapsed, &p->u, &p->mpi, &p->mw, &p->iser, &p->ilb, &p->isch, &p->g,
			 &p->visits, &p->mpi_calls, &p->omp_parallels, &p->omp_tasks, &p->gpu_calls,
			 &p->cycles, &p->instructions};
	const double *old[] = {&q->elapsed, &q->u, &q->mpi, &q->mw, &q->iser, &q->ilb, &q->isch, &q->g,
			       &q->visits, &q->mpi_calls, &q->omp_parallels, &q->omp_tasks, &q->gpu_calls,
			       &q->cycles, &q->instructions};
	for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++)
		*dst[i] = *dst[i] > *old[i] ? *dst[i] - *old[i] : 0;
	p->present = cur.present && p->elapsed > 0;
	*q = cur;
	return 0;
}

/* The region index of name (NULL or any case of "Global": Global), or -1. */
static int index_of_name(const char *name)
{
	if (!name || strcasecmp(name, "Global") == 0)
		return 0;
	return popmon_region_find(name);
}

/* Copies the filled metrics m into the caller's structure (at most its
 * size). */
static int deliver(struct popmon_metrics *out, const struct popmon_metrics *m)
{
	uint32_t size = out->size;
	if (size < 2 * sizeof(uint32_t))
		return POPMON_ERR_UNKNOWN;
	size_t n = size < sizeof *m ? size : sizeof *m;
	memcpy((char *)out + sizeof(uint32_t), (const char *)m + sizeof(uint32_t), n - sizeof(uint32_t));
	return 0;
}

/* The sums of this process alone (its own node) for region idx in window
 * (the local query's windows). Returns 0, or DLB_ERR_NOMEM_. */
static int local_sums(int idx, int window, double s[POPMON_TS_N], char name[POPMON_NAME_MAX])
{
	struct popmon_talp_proc p;
	int rc = my_part(idx, window, 1, &p, name);
	popmon_talp_sums_zero(s);
	popmon_talp_sums_add(s, &p, p.mpi + p.mw, p.cpus >= 1 ? p.cpus : 1, 1.0);
	return rc;
}

int popmon_api_metrics_local(const char *region, int window, struct popmon_metrics *out);
int popmon_api_metrics_local(const char *region, int window, struct popmon_metrics *out)
{
	if (popmon_proc.inert)
		return POPMON_ERR_NOTMEASURED;
	if (!out || (window != POPMON_WINDOW_RUN && window != POPMON_WINDOW_SINCE_LAST))
		return POPMON_ERR_UNKNOWN;
	struct popmon_metrics m;
	memset(&m, 0, sizeof m);
	m.version = POPMON_METRICS_VERSION;
	m.window = window;
	char name[POPMON_NAME_MAX];
	int idx = index_of_name(region);
	double s[POPMON_TS_N];
	if (local_sums(idx, window, s, name) != 0)
		return DLB_ERR_NOMEM_;
	snprintf(m.region, sizeof m.region, "%s", idx >= 0 ? name : region ? region : "Global");
	int rc = popmon_talp_compute(s, &m);
	if (deliver(out, &m) != 0)
		return POPMON_ERR_UNKNOWN;
	return rc;
}

/* ------------------------------------------------------------------ collectives */

#ifndef POPMON_NO_MPI

/* The queries' own communicators, never the application's: world, a
 * duplicate of MPI_COMM_WORLD, and node, made at the first query once every
 * rank is known to be in it (first_query). */
static MPI_Comm world = MPI_COMM_NULL, node = MPI_COMM_NULL;
static int world_ready, node_made;
static MPI_Datatype sums_type = MPI_DATATYPE_NULL;
static MPI_Op sums_op = MPI_OP_NULL;
/* A query that not every rank entered in time (a collective query called
 * by some ranks only) left a nonblocking handshake behind on world:
 * world is unusable for later queries, which fail at once. */
static int queries_broken;
static int64_t queries_done[2]; /* collective queries this rank entered: over all ranks, over the node */

static void sums_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	for (int k = 0; k < *len; k++)
		popmon_talp_sums_merge((double *)inout + (size_t)k * POPMON_TS_N,
				       (const double *)in + (size_t)k * POPMON_TS_N);
}

/* The first query's handshake, point to point on MPI_COMM_WORLD with tag
 * MPI_TAG_UB - 1, along a binary tree of the ranks (rank r's parent is
 * (r - 1) / 2, its children 2r + 1 and 2r + 2): at MPI_Init, before the
 * program's first call, each rank posts one receive from its parent (GO)
 * and one from each of its children (WANT), from those ranks only, so
 * the program never sees a message of popmon's (MPI matches a message with
 * the earliest posted receive) and no rank holds more than three posted
 * receives of popmon's, whatever the job's size (MPICH matches incoming
 * messages against a linear list of posted receives). At the first query a
 * rank waits, until its deadline, for its children's WANT, then sends its
 * parent WANT with the earliest deadline of its subtree; rank 0 decides GO
 * (1) when the whole tree came with at least half the timeout left before
 * that deadline (no rank can have given up), else 0, and GO travels down,
 * each rank forwarding it to its children before it acts on it. A
 * collective (the duplicate of MPI_COMM_WORLD) is entered only after GO 1,
 * so a first query that some ranks never call returns after the timeout
 * instead of hanging; no collective of popmon's is left pending on
 * MPI_COMM_WORLD, where it would meet the application's. The receives that
 * never complete are cancelled at MPI_Finalize. */
enum { TREE_GO, TREE_CHILD1, TREE_CHILD2, TREE_N };
static MPI_Request tree_req[TREE_N] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
static int tree_peer[TREE_N] = {-1, -1, -1};       /* parent, children; -1: none */
static int64_t tree_in[TREE_N];                     /* GO; the children's earliest deadlines */
static int64_t want_out, go_out;                    /* what this rank sends (kept until delivered) */
static int first_done; /* the first query's handshake happened (whatever its outcome) */

static int query_tag(void)
{
	int *ub = NULL, flag = 0;
	PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	return (flag && ub && *ub >= 32767 ? *ub : 32767) - 1;
}

void popmon_talp_mpi_init(void)
{
	int size = popmon_proc.size, rank = popmon_proc.rank, tag = query_tag();
	if (size <= 1)
		return;
	tree_peer[TREE_GO] = rank > 0 ? (rank - 1) / 2 : -1;
	tree_peer[TREE_CHILD1] = 2 * rank + 1 < size ? 2 * rank + 1 : -1;
	tree_peer[TREE_CHILD2] = 2 * rank + 2 < size ? 2 * rank + 2 : -1;
	for (int i = 0; i < TREE_N; i++)
		if (tree_peer[i] >= 0 &&
		    PMPI_Irecv(&tree_in[i], 1, MPI_INT64_T, tree_peer[i], tag, MPI_COMM_WORLD, &tree_req[i]) != MPI_SUCCESS)
			tree_req[i] = MPI_REQUEST_NULL;
}

/* How long a collective query waits for the other ranks (POPMON_QUERY_TIMEOUT,
 * seconds, 0.001 to 86400; default 5). */
static int64_t query_timeout_ns(void)
{
	static int64_t ns;
	if (!ns)
		ns = popmon_env_seconds_ns("POPMON_QUERY_TIMEOUT", 5000000000LL, 1000000LL, 86400000000000LL);
	return ns;
}

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void pause_briefly(void)
{
	struct timespec ts = {0, 200000}; /* 0.2 ms */
	nanosleep(&ts, NULL);
}

/* Waits for r until the monotonic time end; 1 when it completed. */
static int wait_until(MPI_Request *r, int64_t end)
{
	for (;;) {
		int done = 0;
		PMPI_Test(r, &done, MPI_STATUS_IGNORE);
		if (done)
			return 1;
		if ((int64_t)popmon_monotonic_ns() > end)
			return 0;
		pause_briefly();
	}
}

/* Says once, on the calling rank, that the queries stopped working. */
static void say_broken(void)
{
	char line[400];
	snprintf(line, sizeof line,
		 "a collective POP-metrics query (popmon_metrics, DLB_TALP_CollectPOP*) waited %.0f s for ranks that "
		 "did not call it: it is collective, every rank must call it; this and later collective queries "
		 "return an error (the local query still works)",
		 (double)query_timeout_ns() / 1e9);
	popmon_warn_once("collect-timeout", "%s", line);
	if (!popmon_warns_aloud()) { /* rank 0 says it above; another rank that waited says it here */
		char out[420];
		int n = snprintf(out, sizeof out, "popmon: %s\n", line);
		if (n > (int)sizeof out - 1)
			n = (int)sizeof out - 1;
		if (write(2, out, (size_t)n) < 0) {
			/* ignore */
		}
	}
}

static void tree_send(int64_t *v, int peer)
{
	MPI_Request r;
	if (peer >= 0 && PMPI_Isend(v, 1, MPI_INT64_T, peer, query_tag(), MPI_COMM_WORLD, &r) == MPI_SUCCESS)
		PMPI_Request_free(&r);
}

/* Sends GO (go) to this rank's children. */
static void tree_go_down(int64_t go)
{
	go_out = go;
	tree_send(&go_out, tree_peer[TREE_CHILD1]);
	tree_send(&go_out, tree_peer[TREE_CHILD2]);
}

/* The first collective query's handshake over the tree; 1 for GO. */
static int tree_handshake(int64_t arrived, int64_t timeout, int64_t end)
{
	/* The children's WANT (the earliest deadline of their subtrees). */
	int64_t deadline = arrived + timeout;
	int came = 1;
	for (int i = TREE_CHILD1; i <= TREE_CHILD2 && came; i++) {
		if (tree_peer[i] < 0)
			continue;
		came = 0;
		if (tree_req[i] == MPI_REQUEST_NULL && tree_in[i] == 0)
			break; /* its receive could not be posted: never complete */
		if (!wait_until(&tree_req[i], end))
			break; /* a subtree did not come in time: this rank gives up, so do its ancestors */
		came = 1;
		if (tree_in[i] < deadline)
			deadline = tree_in[i];
	}
	int64_t go = 0;
	if (!came) {
		/* Its subtree gives up with it (GO 0); the ancestors, which
		 * never get its WANT, give up at their deadlines. */
	} else if (popmon_proc.rank == 0) {
		/* Every rank came at least half the timeout before the first
		 * deadline: none can have given up. */
		go = realtime_ns() < deadline - timeout / 2;
	} else {
		want_out = deadline;
		tree_send(&want_out, tree_peer[TREE_GO]);
		/* Rank 0 decides before the first deadline; a late GO lands in
		 * the receive, which stays posted until MPI_Finalize. */
		go = wait_until(&tree_req[TREE_GO], end) && tree_in[TREE_GO] == 1;
	}
	tree_go_down(go);
	return (int)go;
}

/* The first collective query: every rank is in it within the timeout, and
 * then the queries' duplicate of MPI_COMM_WORLD is made. Returns 0, or
 * DLB_ERR_TIMEOUT_. */
static int first_query(int64_t arrived, int64_t timeout, int64_t end)
{
	first_done = 1;
	int ok = popmon_proc.size <= 1 || tree_handshake(arrived, timeout, end);
	if (ok && PMPI_Comm_dup(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
		world_ready = 1;
		return 0;
	}
	queries_broken = 1;
	say_broken();
	return DLB_ERR_TIMEOUT_;
}

/* Every rank's entry into the same collective query, within the timeout:
 * one nonblocking reduction on the queries' own communicator of each
 * rank's count of queries, arrival and deadline (a rank that gave up
 * leaves its part behind: a later query of the others that matches it sees
 * a deadline passed, or counts that differ, and fails too, instead of
 * entering reductions that rank will never join). Returns 0 when every
 * rank is here, else DLB_ERR_TIMEOUT_ (world is then unusable). */
static int all_here(MPI_Comm comm, int64_t *count)
{
	if (queries_broken)
		return DLB_ERR_TIMEOUT_;
	int64_t timeout = query_timeout_ns();
	int64_t end = (int64_t)popmon_monotonic_ns() + timeout, arrived = realtime_ns();
	if (!first_done && first_query(arrived, timeout, end) != 0)
		return DLB_ERR_TIMEOUT_;
	/* [count, -count, arrival, -deadline]: MAX gives the extremes. */
	/* Static: a handshake left pending writes into them later. */
	static int64_t mine[4], all[4];
	mine[0] = *count;
	mine[1] = -*count;
	mine[2] = arrived;
	mine[3] = -(arrived + timeout);
	++*count;
	MPI_Request r;
	if (PMPI_Iallreduce(mine, all, 4, MPI_INT64_T, MPI_MAX, comm == MPI_COMM_NULL ? world : comm, &r) != MPI_SUCCESS ||
	    !wait_until(&r, end)) {
		queries_broken = 1;
		say_broken();
		return DLB_ERR_TIMEOUT_;
	}
	/* Every rank arrived at least half the timeout before the first
	 * deadline: none can have given up. */
	if (all[0] != -all[1] || all[2] > -all[3] - timeout / 2) {
		queries_broken = 1;
		say_broken();
		return DLB_ERR_TIMEOUT_;
	}
	return 0;
}

/* The query's node communicator, type and operation, made at the first
 * query that every rank entered. */
static int setup(void)
{
	if (node_made)
		return 0;
	node_made = 1;
	if (PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
		node = MPI_COMM_NULL;
	PMPI_Type_contiguous(POPMON_TS_N, MPI_DOUBLE, &sums_type);
	PMPI_Type_commit(&sums_type);
	PMPI_Op_create(sums_fn, 1, &sums_op);
	return 0;
}

/* MPI_Finalize: the first query's receives that never completed. */
static void first_end(void)
{
	for (int i = 0; i < TREE_N; i++) {
		if (tree_req[i] == MPI_REQUEST_NULL)
			continue;
		PMPI_Cancel(&tree_req[i]);
		PMPI_Wait(&tree_req[i], MPI_STATUS_IGNORE);
	}
}

void popmon_talp_finalize(void)
{
	first_end();
	/* MPI_Finalize: what the queries made (MPICH reports a datatype left
	 * behind). A communicator with a query's handshake still pending (a
	 * query some ranks never called) is left as it is: freeing it would
	 * need the others. */
	if (queries_broken) {
		world = node = MPI_COMM_NULL;
		return;
	}
	if (node_made) {
		PMPI_Op_free(&sums_op);
		PMPI_Type_free(&sums_type);
		if (node != MPI_COMM_NULL)
			PMPI_Comm_free(&node);
	}
	if (world_ready)
		PMPI_Comm_free(&world);
	world = node = MPI_COMM_NULL;
	world_ready = node_made = 0;
}

/* The query's own time is MPI time of the calling thread (not an MPI call
 * of the program's: the call counts do not change). */
static int enter_mpi_state(void)
{
	struct popmon_thread *t = popmon_tls;
	if (!t || t->mpi_depth != 0)
		return 0;
	t->mpi_depth = 1;
	t->prev_state = t->state;
	popmon_switch(t, POPMON_ST_MPI, popmon_now());
	return 1;
}

static void leave_mpi_state(int entered)
{
	struct popmon_thread *t = popmon_tls;
	if (!entered || !t)
		return;
	popmon_account(t, popmon_now());
	popmon_ctr_hook(t, POPMON_ST_MPI, t->prev_state);
	POPMON_STORE(t->state, t->prev_state);
	t->mpi_depth = 0;
}

/* Whether collectives can run now: MPI initialized and not finalized, and
 * the library measuring. */
static int mpi_ready(void)
{
	int init = 0, fin = 0;
	PMPI_Initialized(&init);
	PMPI_Finalized(&fin);
	return init && !fin && popmon_proc.mpi_initialized && !popmon_proc.finalized;
}

/* Whether this process is a job of its own that never uses MPI (a serial
 * program, a Python script without mpi4py: MPI never initialized, and no
 * launcher started it as a rank). Its collective queries are its local
 * ones; a rank before MPI_Init or after MPI_Finalize is not such a job. */
static int serial_job(void)
{
	int init = 0, fin = 0;
	PMPI_Initialized(&init);
	PMPI_Finalized(&fin);
	return !init && !fin && !popmon_proc.mpi_initialized && popmon_env_rank(NULL) < 0;
}

/* FNV-1a of a region name, in [1, 2^32], as a double (exact). */
static double name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return (double)h + 1.0;
}

/* The collective part of every query: this process's part p of the
 * region whose name hashes to h (0: the rank knows no such region) reduced
 * over the node (node_only) or over all ranks, into s. Returns 0, or
 * DLB_ERR_NOCOMP_ when the ranks asked for different regions. */
static int reduce(const struct popmon_talp_proc *p, double h, int node_only, double s[POPMON_TS_N])
{
	double mine[POPMON_TS_N];
	double nodesum[3] = {p->present ? 1 : 0, p->present ? p->mpi + p->mw : 0,
			     p->present ? (p->cpus >= 1 ? p->cpus : 1) : 0};
	int entered = enter_mpi_state();
	if (!node_only && node != MPI_COMM_NULL) {
		double in[3] = {nodesum[0], nodesum[1], nodesum[2]};
		PMPI_Allreduce(in, nodesum, 3, MPI_DOUBLE, MPI_SUM, node);
	}
	popmon_talp_sums_zero(mine);
	popmon_talp_sums_add(mine, p, nodesum[1], nodesum[2], nodesum[0] > 0 ? 1.0 / nodesum[0] : 0);
	if (h > 0) {
		mine[POPMON_TS_HASH] = h;
		mine[POPMON_TS_NEG_HASH] = -h;
	}
	PMPI_Allreduce(mine, s, 1, sums_type, sums_op, node_only ? node : world);
	leave_mpi_state(entered);
	if (s[POPMON_TS_HASH] > 0 && s[POPMON_TS_HASH] != -s[POPMON_TS_NEG_HASH]) {
		popmon_warn_once("collect-mismatch", "a collective POP-metrics query named different regions on "
				 "different ranks: no metrics (every rank must ask for the same region)");
		return DLB_ERR_NOCOMP_;
	}
	return 0;
}

/* The collective part of a query (in the caller's MPI state): every rank
 * here in time, then the reductions of p (name hash h) into s, and the
 * node's id. */
static int collective(const struct popmon_talp_proc *p, double h, int node_only, double s[POPMON_TS_N],
		      int *node_id)
{
	/* A node query is collective over the node once its communicator is
	 * made (the first query makes it, over every rank). */
	int on_node = node_only && node_made && node != MPI_COMM_NULL;
	int here = all_here(on_node ? node : MPI_COMM_NULL, &queries_done[on_node]);
	if (here != 0)
		return here;
	if (setup() != 0)
		return DLB_ERR_NOINIT_;
	if (node_only && node == MPI_COMM_NULL)
		return DLB_ERR_NOCOMP_;
	int rc = reduce(p, h, node_only, s);
	if (node_id) {
		/* The node's lowest rank of MPI_COMM_WORLD. */
		int lowest = popmon_proc.rank;
		if (node != MPI_COMM_NULL)
			PMPI_Allreduce(&popmon_proc.rank, &lowest, 1, MPI_INT, MPI_MIN, node);
		*node_id = lowest;
	}
	return rc;
}

/* A collective query of region idx (-1: unknown here, name asked: for the
 * hash) in window over all ranks or the node: s and this process's region
 * name. Every rank reaches the reductions whatever happens here. */
static int query(int idx, const char *asked, int window, int node_only, double s[POPMON_TS_N],
		 char name[POPMON_NAME_MAX], int *node_id)
{
	if (popmon_proc.inert)
		return DLB_ERR_NOTALP_;
	if (!mpi_ready()) {
		if (!serial_job())
			return DLB_ERR_NOINIT_;
		/* The whole job is this process: its own accounts answer, as
		 * in the build without MPI (with the collective window's own
		 * baseline). */
		struct popmon_talp_proc p;
		int rc = my_part(idx, window, 0, &p, name);
		if (idx < 0)
			snprintf(name, POPMON_NAME_MAX, "%s", asked ? asked : "");
		popmon_talp_sums_zero(s);
		popmon_talp_sums_add(s, &p, p.mpi + p.mw, p.cpus >= 1 ? p.cpus : 1, 1.0);
		if (node_id)
			*node_id = 0;
		return rc;
	}
	/* This process's part first (the query's own time, MPI time of the
	 * caller, shows in the next call), then the collective part. */
	struct popmon_talp_proc p;
	int bad = my_part(idx, window, 0, &p, name);
	if (bad)
		memset(&p, 0, sizeof p); /* still take part */
	if (idx < 0)
		snprintf(name, POPMON_NAME_MAX, "%s", asked ? asked : "");
	double h = name[0] ? name_hash(idx == 0 ? "Global" : name) : 0;
	int entered = enter_mpi_state();
	int rc = collective(&p, h, node_only, s, node_id);
	leave_mpi_state(entered);
	return bad && rc != DLB_ERR_TIMEOUT_ ? bad : rc;
}

int popmon_api_metrics(const char *region, int window, struct popmon_metrics *out);
int popmon_api_metrics(const char *region, int window, struct popmon_metrics *out)
{
	if (popmon_proc.inert)
		return POPMON_ERR_NOTMEASURED;
	/* A bad argument on one rank must not hang the others: it still takes
	 * part (with nothing), then returns the error. */
	int badarg = !out || (window != POPMON_WINDOW_RUN && window != POPMON_WINDOW_SINCE_LAST);
	struct popmon_metrics m;
	memset(&m, 0, sizeof m);
	m.version = POPMON_METRICS_VERSION;
	m.window = window;
	double s[POPMON_TS_N];
	char name[POPMON_NAME_MAX];
	int idx = badarg ? -1 : index_of_name(region);
	int rc = query(idx, region ? region : "Global", badarg ? POPMON_WINDOW_RUN : window, 0, s, name, NULL);
	if (badarg)
		return POPMON_ERR_UNKNOWN;
	if (rc != 0 && rc != DLB_ERR_NOCOMP_)
		return rc == DLB_ERR_NOINIT_ ? POPMON_ERR_NOINIT : rc;
	snprintf(m.region, sizeof m.region, "%s", name);
	int crc = rc == 0 ? popmon_talp_compute(s, &m) : rc;
	if (deliver(out, &m) != 0)
		return POPMON_ERR_UNKNOWN;
	return crc;
}

#else /* POPMON_NO_MPI: one process, the collective query is the local one */

int popmon_api_metrics(const char *region, int window, struct popmon_metrics *out);
int popmon_api_metrics(const char *region, int window, struct popmon_metrics *out)
{
	return popmon_api_metrics_local(region, window, out);
}

#endif /* POPMON_NO_MPI */

/* ------------------------------------------------------------------ DLB/TALP */

int DLB_TALP_CollectPOPMetrics(void *monitor, struct dlb_pop_metrics_compat *metrics);
int DLB_TALP_CollectPOPNodeMetrics(void *monitor, struct dlb_node_metrics_compat *metrics);

/* The region of a DLB handle (NULL: Global); -1 for a handle that names no
 * region (the rank then takes part with nothing). */
static int index_of_monitor(const void *monitor)
{
	return popmon_proc.inert ? -1 : popmon_region_of_handle(monitor);
}

/* The DLB collective queries of region handle monitor over all ranks or
 * the node: the sums s, their metrics m, the region's name and the node's
 * id. Returns DLB's code. */
static int collect(void *monitor, int node_only, double s[POPMON_TS_N], struct popmon_metrics *m,
		   char name[POPMON_NAME_MAX], int *node_id)
{
	if (popmon_proc.inert)
		return DLB_ERR_NOTALP_;
	memset(m, 0, sizeof *m);
	*node_id = 0;
	int idx = index_of_monitor(monitor);
#ifndef POPMON_NO_MPI
	int rc = query(idx, "", POPMON_WINDOW_RUN, node_only, s, name, node_only ? node_id : NULL);
#else
	(void)node_only;
	int rc = local_sums(idx, POPMON_WINDOW_RUN, s, name);
#endif
	if (rc != 0)
		return rc;
	if (idx < 0)
		return DLB_ERR_NOENT_;
	popmon_talp_compute(s, m);
	return DLB_SUCCESS_;
}

int DLB_TALP_CollectPOPMetrics(void *monitor, struct dlb_pop_metrics_compat *metrics)
{
	double s[POPMON_TS_N];
	char name[POPMON_NAME_MAX];
	struct popmon_metrics m;
	int node_id, rc = collect(monitor, 0, s, &m, name, &node_id);
	if (rc == DLB_SUCCESS_ && metrics)
		popmon_talp_fill_dlb(s, &m, name, metrics);
	return rc;
}

int DLB_TALP_CollectPOPNodeMetrics(void *monitor, struct dlb_node_metrics_compat *metrics)
{
	double s[POPMON_TS_N];
	char name[POPMON_NAME_MAX];
	struct popmon_metrics m;
	int node_id, rc = collect(monitor, 1, s, &m, name, &node_id);
	if (rc == DLB_SUCCESS_ && metrics)
		popmon_talp_fill_node(s, &m, name, node_id, metrics);
	return rc;
}

/* ------------------------------------------------------------------ Fortran */
/* Entry points of the Fortran module (popmon.f90): the region name arrives
 * as a Fortran string with its length. */

int popmon_f_metrics(const char *name, int len, int window, struct popmon_metrics *m);
int popmon_f_metrics_local(const char *name, int len, int window, struct popmon_metrics *m);

int popmon_f_metrics(const char *name, int len, int window, struct popmon_metrics *m)
{
	char buf[POPMON_NAME_MAX];
	popmon_fortran_name(buf, sizeof buf, name, len);
	return popmon_api_metrics(buf[0] ? buf : NULL, window, m);
}

int popmon_f_metrics_local(const char *name, int len, int window, struct popmon_metrics *m)
{
	char buf[POPMON_NAME_MAX];
	popmon_fortran_name(buf, sizeof buf, name, len);
	return popmon_api_metrics_local(buf[0] ? buf : NULL, window, m);
}
