/* regions.c: named monitoring regions, the popmon region API and the
 * DLB/TALP compatibility names.
 *
 * A region accumulates the process-wide accounts between a start and the
 * matching stop: start takes a snapshot of the accounts, stop adds the
 * difference. The hot path (MPI calls) never looks at regions, so the cost
 * of an MPI call does not depend on how many regions are open.
 *
 * A region started on a thread inside an OpenMP parallel region is measured
 * per thread, as DLB 3.7+ measures it (docs/openmp-regions.md, "Regions
 * started inside a parallel region"): that thread's own time between its
 * start and stop (useful, MPI, GPU runtime; the rest, its waits in the
 * runtime, as OpenMP scheduling), summed over every thread's measurements;
 * its record has 1 CPU, the measurements' summed time as elapsed time, and
 * the threads that measured it. Starting takes no lock (the thread's own
 * record holds the open measurements); stopping adds under the lock.
 *
 * Bounded memory: at most POPMON_MAX_REGIONS regions live in a static table
 * (untouched entries cost no memory); registrations past that get a handle
 * that counts nothing. Region calls take one mutex: they are user calls, not
 * the MPI hot path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define POPMON_BUILDING_LIBRARY
#include "accounts.h"
#include "base/clock.h"
#include "base/dlbargs.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "counters.h"
#include "gpu.h"
#include "gpu_counters.h"
#include "live.h"
#include "regions.h"
#include "popmon.h"

/* Laid out exactly like dlb_monitor_t of DLB 3.6 (dlb_talp.h), so programs
 * written for TALP that read handle fields keep working. Times are in
 * nanoseconds and refreshed at every stop and reset. */
struct dlb_monitor_compat {
	const char *name;
	int num_cpus;
	float avg_cpus;
	int64_t cycles;
	int64_t instructions;
	int num_measurements;
	int num_resets;
	int64_t num_mpi_calls;
	int64_t num_omp_parallels;
	int64_t num_omp_tasks;
	int64_t num_gpu_runtime_calls;
	int64_t start_time;
	int64_t stop_time;
	int64_t elapsed_time;
	int64_t useful_time;
	int64_t mpi_time;
	int64_t omp_load_imbalance_time;
	int64_t omp_scheduling_time;
	int64_t omp_serialization_time;
	int64_t gpu_runtime_time;
	int64_t gpu_useful_time;
	int64_t gpu_communication_time;
	int64_t gpu_inactive_time;
	void *_data;
};

/* Threads counted per region measured per thread. */
#define POPMON_PT_POSITIONS 256

struct region {
	struct dlb_monitor_compat mon; /* first: the handle points here */
	char name[POPMON_NAME_MAX];
	int open;
	int anon;                  /* an anonymous region: not found by name */
	uint64_t start_tick;
	uint64_t elapsed;          /* ticks */
	uint64_t visits;
	struct popmon_accounts snap; /* at the last start, ticks */
	struct popmon_accounts tot;  /* accumulated, ticks */
	uint64_t thr[2 * POPMON_DETAIL_THREADS]; /* [0, D): useful per thread at start; [D, 2D): accumulated */
	/* Measured per thread (started inside parallel regions): completed
	 * measurements, their summed ticks, the threads (by slot) that made
	 * them and their accounts (ticks). */
	uint64_t pt_visits, pt_elapsed;
	uint32_t pt_threads;
	uint64_t pt_pos[POPMON_PT_POSITIONS]; /* the threads' places in the teams (ompt.h) */
	struct popmon_accounts pt;
};

/* Per-thread useful time at the current operation (under the lock). */
static uint64_t thr_now[POPMON_DETAIL_THREADS];

enum { HASH_SLOTS = 2 * POPMON_MAX_REGIONS };

/* The table: in the live file when there is one (live.h), else on the heap
 * (zero pages until used). */
static struct region *regions;
static struct region overflow_region; /* handle past the limit: counts nothing */
static struct region refused_region;  /* handle of a refused name: counts nothing */
static int nregions;
static int anon_count;
static int16_t hash_slots[HASH_SLOTS]; /* region index + 1, 0 = empty */
static int open_stack[POPMON_MAX_REGIONS]; /* indices, start order */
static int nopen;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Every change of the table happens under the lock; a live reader retries
 * while the header's regions_seq is odd or has changed. */
static void lock_regions(void)
{
	pthread_mutex_lock(&lock);
	popmon_live_regions_begin();
}

static void unlock_regions(void)
{
	popmon_live_regions_end();
	pthread_mutex_unlock(&lock);
}

void popmon_regions_layout(struct popmon_live_header *h)
{
	h->region_size = (uint32_t)sizeof(struct region);
	h->max_regions = POPMON_MAX_REGIONS;
	h->name_max = POPMON_NAME_MAX;
	h->rg_name = offsetof(struct region, name);
	h->rg_open = offsetof(struct region, open);
	h->rg_anon = offsetof(struct region, anon);
	h->rg_start = offsetof(struct region, start_tick);
	h->rg_elapsed = offsetof(struct region, elapsed);
	h->rg_visits = offsetof(struct region, visits);
	h->rg_snap = offsetof(struct region, snap);
	h->rg_tot = offsetof(struct region, tot);
	h->rg_thr = offsetof(struct region, thr);
}

/* The observer of closed visits (popmon_regions_observe) and the place of
 * a thread in the OpenMP teams (popmon_regions_init): handed down by the
 * files above, which the regions do not name. */
static popmon_region_closed_fn *closed_observer;
static popmon_position_fn *position_of;

void popmon_regions_observe(popmon_region_closed_fn *fn)
{
	__atomic_store_n(&closed_observer, fn, __ATOMIC_RELEASE);
}

#define GLOBAL_INDEX 0
#define DLB_LAST_OPEN ((void *)1)

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a, case-sensitive (names are) */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

static int lookup_locked(const char *name)
{
	uint32_t h = hash_name(name) % HASH_SLOTS;
	for (int probes = 0; probes < HASH_SLOTS; probes++) {
		int v = hash_slots[h];
		if (v == 0)
			return -1;
		if (strcmp(regions[v - 1].name, name) == 0)
			return v - 1;
		h = (h + 1) % HASH_SLOTS;
	}
	return -1;
}

static void insert_hash_locked(int idx)
{
	uint32_t h = hash_name(regions[idx].name) % HASH_SLOTS;
	while (hash_slots[h] != 0)
		h = (h + 1) % HASH_SLOTS;
	hash_slots[h] = (int16_t)(idx + 1);
}

/* Cuts s (at most POPMON_NAME_MAX - 1 bytes, already cut by snprintf) back
 * to the last whole UTF-8 character, so that a cut name stays valid. */
static void utf8_trim(char *s)
{
	size_t n = strlen(s);
	if (n < POPMON_NAME_MAX - 1)
		return;
	size_t i = n, k = 0;
	while (i > 0 && k < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80) {
		i--;
		k++;
	}
	if (i == 0)
		return;
	unsigned char lead = (unsigned char)s[i - 1];
	size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	if (lead >= 0xc0 && want > k + 1)
		s[i - 1] = '\0';
}

/* Whether an anonymous region is called name (anonymous regions are not in
 * the name table: a user region may take the name of one). */
static int anon_named_locked(const char *name)
{
	for (int i = 0; i < nregions; i++)
		if (regions[i].anon && strcmp(regions[i].name, name) == 0)
			return i;
	return -1;
}

/* The next "Anonymous Region N" that no region is called, into out. */
static void anon_name_locked(char *out, size_t n)
{
	char buf[POPMON_NAME_MAX];
	do
		snprintf(buf, sizeof buf, "Anonymous Region %d", ++anon_count);
	while (lookup_locked(buf) >= 0 || anon_named_locked(buf) >= 0);
	snprintf(out, n, "%s", buf);
}

/* A cleared region slot named name (NULL: the next anonymous name), or -1
 * when the table is full. */
static int alloc_region_locked(const char *name)
{
	if (nregions >= POPMON_MAX_REGIONS) {
		popmon_warn_once("regions",
				 "more than %d regions: further regions are not measured",
				 POPMON_MAX_REGIONS);
		return -1;
	}
	if (popmon_live_reserve_region(nregions) != 0) {
		popmon_warn_once("regions-room", "no room left for the live file: further regions are not measured");
		return -1;
	}
	int idx = nregions++;
	if (popmon_live)
		POPMON_STORE(popmon_live->nregions, (uint32_t)nregions);
	struct region *r = &regions[idx];
	memset(r, 0, sizeof *r);
	if (name) {
		snprintf(r->name, sizeof r->name, "%s", name);
	} else {
		anon_name_locked(r->name, sizeof r->name);
		r->anon = 1;
	}
	r->mon.name = r->name;
	r->mon.num_cpus = 1;
	r->mon.avg_cpus = 1.0f;
	return idx;
}

static int new_region_locked(const char *name)
{
	int idx = alloc_region_locked(name);
	if (idx >= 0)
		insert_hash_locked(idx);
	return idx;
}

static int new_anon_region_locked(void)
{
	return alloc_region_locked(NULL);
}

int popmon_regions_init(popmon_position_fn *position)
{
	position_of = position;
	if (!regions) {
		regions = popmon_live_regions();
		if (!regions)
			regions = calloc(POPMON_MAX_REGIONS, sizeof *regions);
		if (!regions) {
			popmon_warn_once("nomem", "out of memory for the region table: nothing is measured");
			return -1;
		}
	}
	lock_regions();
	if (nregions == 0)
		new_region_locked("Global");
	snprintf(overflow_region.name, sizeof overflow_region.name, "%s", "(too many regions)");
	overflow_region.mon.name = overflow_region.name;
	snprintf(refused_region.name, sizeof refused_region.name, "%s", "(refused name)");
	refused_region.mon.name = refused_region.name;
	unlock_regions();
	return 0;
}

static int64_t tick_ns_abs(uint64_t tick)
{
	/* Absolute CLOCK_MONOTONIC-based time of a tick, for handle fields. */
	if (tick < popmon_proc.t0_tick)
		return (int64_t)popmon_proc.t0_ns;
	return (int64_t)(popmon_proc.t0_ns + popmon_ticks_to_ns(tick - popmon_proc.t0_tick));
}

/* Refreshes the public fields of a region's handle (nanoseconds). */
/* Whether region r is reported from its per-thread measurements: it has
 * them and no whole-process visit. */
static int per_thread(const struct region *r)
{
	return r->visits == 0 && r->pt_visits > 0;
}

static void refresh_handle_locked(struct region *r)
{
	int pt = per_thread(r);
	const struct popmon_accounts *a = pt ? &r->pt : &r->tot;
	r->mon.num_measurements = (int)(pt ? r->pt_visits : r->visits);
	r->mon.num_cpus = pt ? (int)r->pt_threads : popmon_cpus();
	r->mon.avg_cpus = (float)r->mon.num_cpus;
	r->mon.num_mpi_calls = (int64_t)a->mpi_calls;
	r->mon.num_omp_parallels = (int64_t)a->omp_parallels;
	r->mon.num_omp_tasks = (int64_t)a->omp_tasks;
	r->mon.num_gpu_runtime_calls = (int64_t)a->gpu_calls;
	r->mon.elapsed_time = (int64_t)popmon_ticks_to_ns(pt ? r->pt_elapsed : r->elapsed);
	r->mon.useful_time = (int64_t)popmon_ticks_to_ns(a->t[POPMON_ST_USEFUL]);
	r->mon.mpi_time = (int64_t)popmon_ticks_to_ns(a->t[POPMON_ST_MPI] +
						   a->t[POPMON_ST_MPI_WORKER_IDLE]);
	r->mon.omp_load_imbalance_time =
		(int64_t)popmon_ticks_to_ns(a->t[POPMON_ST_OMP_LOAD_IMBALANCE]);
	r->mon.omp_scheduling_time = (int64_t)popmon_ticks_to_ns(a->t[POPMON_ST_OMP_SCHEDULING]);
	r->mon.omp_serialization_time =
		(int64_t)popmon_ticks_to_ns(a->t[POPMON_ST_OMP_SERIALIZATION]);
	r->mon.gpu_runtime_time = (int64_t)popmon_ticks_to_ns(a->t[POPMON_ST_GPU_RUNTIME]);
	/* 0 without counters, as DLB without PAPI. */
	r->mon.cycles = (int64_t)a->ctr[POPMON_CTR_CYCLES];
	r->mon.instructions = (int64_t)a->ctr[POPMON_CTR_INSTRUCTIONS];
}

static void start_locked(int idx, uint64_t now)
{
	struct region *r = &regions[idx];
	r->open = 1;
	r->start_tick = now;
	popmon_snapshot(now, &r->snap, thr_now);
	memcpy(r->thr, thr_now, sizeof thr_now);
	r->mon.start_time = tick_ns_abs(now);
	if (nopen < POPMON_MAX_REGIONS)
		open_stack[nopen++] = idx;
}

static void accumulate(struct popmon_accounts *tot, const struct popmon_accounts *a,
		       const struct popmon_accounts *b)
{
	for (int s = 0; s < POPMON_NSTATES; s++)
		tot->t[s] += b->t[s] >= a->t[s] ? b->t[s] - a->t[s] : 0;
	tot->mpi_calls += b->mpi_calls - a->mpi_calls;
	tot->omp_parallels += b->omp_parallels - a->omp_parallels;
	tot->omp_tasks += b->omp_tasks - a->omp_tasks;
	tot->gpu_calls += b->gpu_calls - a->gpu_calls;
	for (int x = 0; x < POPMON_NEXTRA; x++)
		tot->x[x] += b->x[x] >= a->x[x] ? b->x[x] - a->x[x] : 0;
	tot->prim_useful += b->prim_useful >= a->prim_useful ? b->prim_useful - a->prim_useful : 0;
	tot->prim_mpi += b->prim_mpi >= a->prim_mpi ? b->prim_mpi - a->prim_mpi : 0;
	for (int c = 0; c < POPMON_CTR_N; c++)
		tot->ctr[c] += b->ctr[c] >= a->ctr[c] ? b->ctr[c] - a->ctr[c] : 0;
	for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
		tot->gpu_k[d] += b->gpu_k[d] >= a->gpu_k[d] ? b->gpu_k[d] - a->gpu_k[d] : 0;
		tot->gpu_a[d] += b->gpu_a[d] >= a->gpu_a[d] ? b->gpu_a[d] - a->gpu_a[d] : 0;
	}
	for (int d = 0; d < POPMON_GC_DEVICES; d++)
		for (int q = 0; q < POPMON_GC_N; q++)
			tot->gpu_c[d][q] += b->gpu_c[d][q] >= a->gpu_c[d][q] ? b->gpu_c[d][q] - a->gpu_c[d][q] : 0;
}

/* Adds the per-thread useful time since the region's start (thr_now must
 * hold the current values) and refreshes the largest. */
static void accumulate_threads(struct region *r, struct popmon_accounts *tot)
{
	uint64_t mx = 0;
	for (int i = 0; i < POPMON_DETAIL_THREADS; i++) {
		if (thr_now[i] > r->thr[i])
			r->thr[POPMON_DETAIL_THREADS + i] += thr_now[i] - r->thr[i];
		if (r->thr[POPMON_DETAIL_THREADS + i] > mx)
			mx = r->thr[POPMON_DETAIL_THREADS + i];
	}
	tot->thr_useful_max = mx;
}

static void stop_locked(int idx, uint64_t now, const struct popmon_accounts *cur)
{
	struct region *r = &regions[idx];
	accumulate(&r->tot, &r->snap, cur);
	accumulate_threads(r, &r->tot);
	r->elapsed += popmon_delta(r->start_tick, now);
	r->visits++;
	r->open = 0;
	r->mon.stop_time = tick_ns_abs(now);
	for (int i = nopen - 1; i >= 0; i--) {
		if (open_stack[i] == idx) {
			memmove(&open_stack[i], &open_stack[i + 1], sizeof(int) * (size_t)(nopen - 1 - i));
			nopen--;
			break;
		}
	}
	refresh_handle_locked(r);
}

void popmon_regions_restart_global(uint64_t now)
{
	popmon_gpu_flush(); /* device work before now stays out of the new Global */
	lock_regions();
	struct region *g = &regions[GLOBAL_INDEX];
	int was_open = g->open;
	if (was_open) {
		for (int i = nopen - 1; i >= 0; i--) {
			if (open_stack[i] == GLOBAL_INDEX) {
				memmove(&open_stack[i], &open_stack[i + 1],
					sizeof(int) * (size_t)(nopen - 1 - i));
				nopen--;
				break;
			}
		}
	}
	memset(&g->tot, 0, sizeof g->tot);
	g->elapsed = 0;
	g->visits = 0;
	g->mon.num_resets = 0;
	start_locked(GLOBAL_INDEX, now);
	unlock_regions();
}

void popmon_regions_lock(void)
{
	lock_regions();
}

void popmon_regions_unlock(void)
{
	unlock_regions();
}

/* Charges the time of k CPUs that were missing during t ticks, of which the
 * primary thread spent pm inside MPI, to region r: MPI worker idle while the
 * primary was in MPI, serialization otherwise (POP-METRICS.md §1). */
static void charge_missing(struct region *r, uint64_t k, uint64_t t, uint64_t pm)
{
	if (pm > t)
		pm = t;
	r->tot.t[POPMON_ST_MPI_WORKER_IDLE] += k * pm;
	r->tot.t[POPMON_ST_OMP_SERIALIZATION] += k * (t - pm);
}

void popmon_regions_grow_locked(uint32_t k, uint64_t until)
{
	struct popmon_accounts cur;
	int have_cur = 0;
	uint64_t now = popmon_now();
	for (int i = 0; i < nregions; i++) {
		struct region *r = &regions[i];
		uint64_t e = r->elapsed, pm = r->tot.prim_mpi;
		if (r->open) {
			if (!have_cur) {
				popmon_snapshot(now, &cur, NULL);
				have_cur = 1;
			}
			e += popmon_delta(r->start_tick, until);
			pm += cur.prim_mpi >= r->snap.prim_mpi ? cur.prim_mpi - r->snap.prim_mpi : 0;
		}
		charge_missing(r, k, e, pm);
		if (r->visits || r->open)
			refresh_handle_locked(r);
	}
}

void popmon_regions_adopt_locked(struct popmon_thread *t, uint64_t birth, int is_new)
{
	for (int i = 0; i < nregions; i++) {
		struct region *r = &regions[i];
		if (is_new) /* one more CPU, missing in every closed visit */
			charge_missing(r, 1, r->elapsed, r->tot.prim_mpi);
		if (!r->open)
			continue;
		if (popmon_delta(r->start_tick, birth) > 0) {
			/* Opened before the thread was born: a new CPU idled from
			 * the start to the birth (a vacant slot's record holds that
			 * idle time itself). */
			if (is_new)
				r->tot.t[POPMON_ST_OMP_SERIALIZATION] += birth - r->start_tick;
		} else {
			/* Opened after the birth: the record's useful time before
			 * the start (and not its vacancy) is outside the region. */
			uint64_t d = popmon_delta(birth, r->start_tick);
			r->snap.t[POPMON_ST_USEFUL] += d;
			if (!is_new)
				r->snap.t[POPMON_ST_OMP_SERIALIZATION] -=
					r->snap.t[POPMON_ST_OMP_SERIALIZATION] > d ? d : r->snap.t[POPMON_ST_OMP_SERIALIZATION];
			if (t->slot < POPMON_DETAIL_THREADS)
				r->thr[t->slot] += d;
		}
	}
}

void popmon_regions_close_all(uint64_t now)
{
	popmon_gpu_flush(); /* delivers device activity up to now (never under the GPU lock) */
	lock_regions();
	struct popmon_accounts cur;
	popmon_snapshot(now, &cur, thr_now);
	while (nopen > 0)
		stop_locked(open_stack[nopen - 1], now, &cur);
	unlock_regions();
}

int popmon_region_count(void)
{
	return nregions;
}

int popmon_region_find(const char *name)
{
	lock_regions();
	int idx = lookup_locked(name);
	if (idx < 0)
		idx = anon_named_locked(name);
	unlock_regions();
	return idx;
}

/* Converts accounts in ticks to nanoseconds (counts stay counts). */
static void accounts_ns(const struct popmon_accounts *a, struct popmon_accounts *ns)
{
	for (int s = 0; s < POPMON_NSTATES; s++)
		ns->t[s] = popmon_ticks_to_ns(a->t[s]);
	ns->mpi_calls = a->mpi_calls;
	ns->omp_parallels = a->omp_parallels;
	ns->omp_tasks = a->omp_tasks;
	ns->gpu_calls = a->gpu_calls;
	ns->x[POPMON_X_PAR_WALL] = popmon_ticks_to_ns(a->x[POPMON_X_PAR_WALL]);
	ns->x[POPMON_X_PAR_USEFUL] = popmon_ticks_to_ns(a->x[POPMON_X_PAR_USEFUL]);
	ns->x[POPMON_X_PAR_SELF_USEFUL] = popmon_ticks_to_ns(a->x[POPMON_X_PAR_SELF_USEFUL]);
	ns->x[POPMON_X_PARALLELS] = a->x[POPMON_X_PARALLELS];
	ns->x[POPMON_X_TASKS] = a->x[POPMON_X_TASKS];
	ns->prim_useful = popmon_ticks_to_ns(a->prim_useful);
	ns->prim_mpi = popmon_ticks_to_ns(a->prim_mpi);
	ns->thr_useful_max = popmon_ticks_to_ns(a->thr_useful_max);
	for (int c = 0; c < POPMON_CTR_N; c++)
		ns->ctr[c] = a->ctr[c]; /* counts, not ticks */
	memcpy(ns->gpu_k, a->gpu_k, sizeof ns->gpu_k); /* already nanoseconds */
	memcpy(ns->gpu_a, a->gpu_a, sizeof ns->gpu_a);
	memcpy(ns->gpu_c, a->gpu_c, sizeof ns->gpu_c); /* counts and ns */
}

int popmon_region_get(int i, const char **name, uint64_t *visits, uint64_t *elapsed_ns,
		      struct popmon_accounts *ns)
{
	if (i < 0 || i >= nregions)
		return 0;
	struct region *r = &regions[i];
	*name = r->name;
	if (per_thread(r)) {
		*visits = r->pt_visits;
		*elapsed_ns = popmon_ticks_to_ns(r->pt_elapsed);
		accounts_ns(&r->pt, ns);
		return 1;
	}
	if (r->visits > 0 && r->pt_visits > 0)
		popmon_warn_once("ptmixed", "region \"%s\" was started both outside and inside OpenMP parallel "
				 "regions: its measurements by threads inside parallel regions are left out",
				 r->name);
	*visits = r->visits;
	*elapsed_ns = popmon_ticks_to_ns(r->elapsed);
	accounts_ns(&r->tot, ns);
	return r->visits > 0;
}

int popmon_region_threads(int i)
{
	if (i < 0 || i >= nregions || !per_thread(&regions[i]))
		return 0;
	return (int)regions[i].pt_threads;
}

int popmon_region_sofar(int i, char name[POPMON_NAME_MAX], uint64_t *visits, uint64_t *elapsed_ns,
			struct popmon_accounts *ns)
{
	lock_regions();
	if (i < 0 || i >= nregions) {
		unlock_regions();
		return -1;
	}
	struct region *r = &regions[i];
	if (per_thread(r) && !r->open) {
		memcpy(name, r->name, POPMON_NAME_MAX);
		*visits = r->pt_visits;
		*elapsed_ns = popmon_ticks_to_ns(r->pt_elapsed);
		accounts_ns(&r->pt, ns);
		unlock_regions();
		return 1;
	}
	struct popmon_accounts tot = r->tot;
	uint64_t elapsed = r->elapsed;
	int open = r->open;
	if (open) {
		/* The visit in progress, without closing it (as a report does). */
		uint64_t now = popmon_now();
		struct popmon_accounts cur;
		popmon_snapshot(now, &cur, NULL);
		accumulate(&tot, &r->snap, &cur);
		elapsed += popmon_delta(r->start_tick, now);
	}
	memcpy(name, r->name, POPMON_NAME_MAX);
	*visits = r->visits;
	*elapsed_ns = popmon_ticks_to_ns(elapsed);
	accounts_ns(&tot, ns);
	unlock_regions();
	return r->visits > 0 || open;
}

/* ------------------------------------------------------------------ handles */

enum { H_GLOBAL = -2, H_LAST = -3, H_OVERFLOW = -4, H_BAD = -5, H_REFUSED = -6 };

/* Maps a handle to a region index without dereferencing it. */
static int handle_index(const void *h)
{
	if (h == NULL)
		return H_GLOBAL;
	if (h == DLB_LAST_OPEN)
		return H_LAST;
	if (h == (const void *)&overflow_region)
		return H_OVERFLOW;
	if (h == (const void *)&refused_region)
		return H_REFUSED;
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)regions;
	if (p >= base && p < base + sizeof(struct region) * POPMON_MAX_REGIONS && (p - base) % sizeof(struct region) == 0) {
		int idx = (int)((p - base) / sizeof(struct region));
		if (idx < nregions)
			return idx;
	}
	return H_BAD;
}

int popmon_region_of_handle(const void *h)
{
	int i = handle_index(h);
	return i == H_GLOBAL ? GLOBAL_INDEX : i >= 0 ? i : -1;
}

static int bad_handle(const char *op, const void *h)
{
	popmon_warn_once("badhandle", "%s: unknown region handle %p (ignored)", op, h);
	return POPMON_ERR_NOENT;
}

/* Resolves a handle for op: returns 1 with *idx set (H_LAST stays for the
 * caller when allow_last), or 0 with the call's return code in *rc. */
static int resolve(popmon_region_t h, const char *op, int allow_last, int *idx, int *rc)
{
	popmon_ensure_init();
	if (popmon_proc.inert) {
		*rc = POPMON_ERR_NOTMEASURED;
		return 0;
	}
	int i = handle_index(h);
	if (i == H_OVERFLOW || i == H_REFUSED) {
		*rc = POPMON_NOUPDT; /* a no-op: the refusal said why */
		return 0;
	}
	if (i == H_BAD || (i == H_LAST && !allow_last)) {
		*rc = bad_handle(op, h);
		return 0;
	}
	*idx = i == H_GLOBAL ? GLOBAL_INDEX : i;
	return 1;
}

/* Registers (or finds) the region called name; dlb: DLB's rule, where any
 * case of "Global" names the Global region. */
static popmon_region_t region_register(const char *name, int dlb)
{
	popmon_ensure_init(); /* a static constructor's region, before libpopmon's */
	if (popmon_proc.inert)
		return NULL;
	/* "all" is an ordinary name (DLB reserves it for its region selection
	 * and gives back the Global region: docs/library.md, "Regions"). */
	if (name == DLB_LAST_OPEN)
		return NULL;
	if (!dlb && name && strcasecmp(name, "Global") == 0) {
		/* In popmon's API, Global is POPMON_REGION_GLOBAL: a region
		 * named so would end the run's region at its first stop. */
		popmon_warn_once("globalname", "a region cannot be named \"%.20s\": that name is the whole run's "
				 "region (Global); region not created (use another name, or popmon_region_global())",
				 name);
		return (popmon_region_t)&refused_region;
	}
	char buf[POPMON_NAME_MAX];
	lock_regions();
	int idx;
	if (name == NULL || *name == '\0') {
		/* Anonymous: a new region at every call, as in TALP, named so that
		 * no other region has its name. */
		idx = new_anon_region_locked();
	} else if (strcasecmp(name, "Global") == 0) {
		idx = GLOBAL_INDEX;
	} else {
		if (strlen(name) >= POPMON_NAME_MAX)
			popmon_warn_once("longname", "region names are cut to %d bytes",
					 POPMON_NAME_MAX - 1);
		snprintf(buf, sizeof buf, "%s", name);
		utf8_trim(buf);
		idx = lookup_locked(buf);
		if (idx < 0) {
			/* A user region takes its name from an anonymous one,
			 * which gets another. */
			int a = anon_named_locked(buf);
			if (a >= 0)
				anon_name_locked(regions[a].name, sizeof regions[a].name);
			idx = new_region_locked(buf);
		}
	}
	unlock_regions();
	return idx < 0 ? (popmon_region_t)&overflow_region : (popmon_region_t)&regions[idx];
}

popmon_region_t popmon_api_region_register(const char *name)
{
	return region_register(name, 0);
}

popmon_region_t popmon_api_region_global(void)
{
	return popmon_proc.inert ? NULL : (popmon_region_t)&regions[GLOBAL_INDEX];
}

/* The calling thread's record when it runs inside an OpenMP parallel
 * region (an implicit task of a measured team), else NULL. */
static struct popmon_thread *in_parallel(void)
{
	struct popmon_thread *t = popmon_tls;
	return t && t->omp_inst ? t : NULL;
}

/* Starts region idx on thread t alone (per thread). No lock: t's own
 * record holds the open measurement. */
static int thread_start(struct popmon_thread *t, int idx)
{
	if (idx == GLOBAL_INDEX) {
		popmon_warn_once("ptglobal", "the Global region cannot be started or stopped inside an OpenMP "
				 "parallel region (ignored)");
		return POPMON_NOUPDT;
	}
	uint32_t n = t->nregions;
	for (uint32_t k = 0; k < n && k < POPMON_THREAD_REGIONS; k++)
		if (t->regions[k].idx == idx)
			return POPMON_NOUPDT; /* open on this thread already (as DLB) */
	if (n >= POPMON_THREAD_REGIONS) {
		popmon_warn_once("ptdepth", "more than %d regions open at once on one thread inside a parallel "
				 "region: the others are not measured", POPMON_THREAD_REGIONS);
		return POPMON_NOUPDT;
	}
	uint64_t now = popmon_now();
	popmon_switch(t, t->state, now); /* the thread's accounts up to now */
	struct popmon_thread_region *e = &t->regions[n];
	e->idx = idx;
	e->start = now;
	e->position = position_of ? position_of(t) : 0;
	e->useful = t->acc[POPMON_ST_USEFUL];
	e->mpi = t->acc[POPMON_ST_MPI];
	e->gpu = t->acc[POPMON_ST_GPU_RUNTIME];
	e->mpi_calls = t->mpi_calls;
	e->parallels = t->extra[POPMON_X_PARALLELS];
	e->tasks = t->extra[POPMON_X_TASKS];
	e->gpu_calls = t->gpu_calls;
	for (int c = 0; c < POPMON_CTR_N; c++)
		e->ctr[c] = t->ctr.acc[c];
	t->nregions = n + 1;
	return POPMON_SUCCESS;
}

static uint64_t since(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : 0;
}

/* Stops region idx (H_LAST: the thread's innermost) on thread t alone and
 * adds the measurement to the region's per-thread accounts. */
static int thread_stop(struct popmon_thread *t, int idx)
{
	if (idx == GLOBAL_INDEX)
		return thread_start(t, idx); /* the same refusal */
	uint32_t n = t->nregions < POPMON_THREAD_REGIONS ? t->nregions : POPMON_THREAD_REGIONS;
	int k = -1;
	for (int j = (int)n - 1; j >= 0; j--)
		if (idx == H_LAST || t->regions[j].idx == idx) {
			k = j;
			break;
		}
	if (k < 0)
		return idx == H_LAST ? POPMON_ERR_NOENT : POPMON_NOUPDT;
	uint64_t now = popmon_now();
	popmon_switch(t, t->state, now);
	struct popmon_thread_region e = t->regions[k];
	memmove(&t->regions[k], &t->regions[k + 1], sizeof e * (n - 1 - (uint32_t)k));
	t->nregions = n - 1;
	uint64_t el = since(now, e.start);
	uint64_t u = since(t->acc[POPMON_ST_USEFUL], e.useful), m = since(t->acc[POPMON_ST_MPI], e.mpi),
		 g = since(t->acc[POPMON_ST_GPU_RUNTIME], e.gpu);
	/* The thread's own time: the rest is its waits in the OpenMP runtime
	 * (DLB counts them as scheduling), so the accounts add up to el. */
	uint64_t busy = u + m + g;
	if (busy > el) {
		el = busy;
	}
	lock_regions();
	struct region *r = &regions[e.idx];
	r->pt.t[POPMON_ST_USEFUL] += u;
	r->pt.t[POPMON_ST_MPI] += m;
	r->pt.t[POPMON_ST_GPU_RUNTIME] += g;
	r->pt.t[POPMON_ST_OMP_SCHEDULING] += el - busy;
	r->pt.mpi_calls += since(t->mpi_calls, e.mpi_calls);
	r->pt.omp_parallels += since(t->extra[POPMON_X_PARALLELS], e.parallels);
	r->pt.omp_tasks += since(t->extra[POPMON_X_TASKS], e.tasks);
	r->pt.gpu_calls += since(t->gpu_calls, e.gpu_calls);
	for (int c = 0; c < POPMON_CTR_N; c++)
		r->pt.ctr[c] += since(t->ctr.acc[c], e.ctr[c]);
	r->pt_elapsed += el;
	r->pt_visits++;
	/* The threads that measured it: their places in the teams (as DLB
	 * counts the CPUs of bound threads), not the runtime's choice of pool
	 * thread for a place. */
	uint32_t k2 = 0;
	while (k2 < r->pt_threads && k2 < POPMON_PT_POSITIONS && r->pt_pos[k2] != e.position)
		k2++;
	if (k2 == r->pt_threads && k2 < POPMON_PT_POSITIONS) {
		r->pt_pos[k2] = e.position;
		r->pt_threads++;
	}
	refresh_handle_locked(r);
	unlock_regions();
	return POPMON_SUCCESS;
}

int popmon_api_region_start(popmon_region_t h)
{
	int idx, rc;
	if (!resolve(h, "start", 0, &idx, &rc))
		return rc;
	struct popmon_thread *pt = in_parallel();
	if (pt)
		return thread_start(pt, idx);
	uint64_t now = popmon_now();
	popmon_gpu_flush();
	lock_regions();
	rc = POPMON_SUCCESS;
	if (regions[idx].open) {
		popmon_warn_once("doublestart", "region \"%s\" started while already open (ignored)",
				 regions[idx].name);
		rc = POPMON_NOUPDT;
	} else {
		start_locked(idx, now);
	}
	unlock_regions();
	return rc;
}

int popmon_api_region_stop(popmon_region_t h)
{
	int idx, rc;
	if (!resolve(h, "stop", 1, &idx, &rc))
		return rc;
	struct popmon_thread *pt = in_parallel();
	if (pt)
		return thread_stop(pt, idx);
	uint64_t now = popmon_now();
	popmon_gpu_flush();
	lock_regions();
	rc = POPMON_SUCCESS;
	if (idx == H_LAST) {
		if (nopen == 0) {
			popmon_warn_once("stoplast", "stop of the last open region, but none is open (ignored)");
			unlock_regions();
			return POPMON_ERR_NOENT;
		}
		idx = open_stack[nopen - 1];
	}
	if (!regions[idx].open) {
		popmon_warn_once("stopclosed", "region \"%s\" stopped while not open (ignored)",
				 regions[idx].name);
		rc = POPMON_NOUPDT;
	} else {
		struct popmon_accounts cur;
		uint64_t start = regions[idx].start_tick;
		popmon_snapshot(now, &cur, thr_now);
		stop_locked(idx, now, &cur);
		popmon_region_closed_fn *observe = __atomic_load_n(&closed_observer, __ATOMIC_ACQUIRE);
		if (observe) /* trace.c, when tracing */
			observe(idx, start, now);
	}
	unlock_regions();
	return rc;
}

int popmon_api_region_reset(popmon_region_t h)
{
	int idx, rc;
	if (!resolve(h, "reset", 0, &idx, &rc))
		return rc;
	uint64_t now = popmon_now();
	popmon_gpu_flush();
	lock_regions();
	struct region *r = &regions[idx];
	memset(&r->tot, 0, sizeof r->tot);
	r->elapsed = 0;
	r->visits = 0;
	r->pt_visits = r->pt_elapsed = 0;
	r->pt_threads = 0;
	memset(r->pt_pos, 0, sizeof r->pt_pos);
	memset(&r->pt, 0, sizeof r->pt);
	r->mon.num_resets++;
	memset(r->thr + POPMON_DETAIL_THREADS, 0, sizeof(uint64_t) * POPMON_DETAIL_THREADS);
	if (r->open) {
		r->start_tick = now;
		popmon_snapshot(now, &r->snap, thr_now);
		memcpy(r->thr, thr_now, sizeof thr_now);
	}
	refresh_handle_locked(r);
	unlock_regions();
	return POPMON_SUCCESS;
}

static void fmt_seconds(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%.3f s", (double)ns / 1e9);
}

int popmon_api_region_report(popmon_region_t h)
{
	int idx, rc;
	if (!resolve(h, "report", 1, &idx, &rc))
		return rc;
	uint64_t now = popmon_now();
	popmon_gpu_flush();
	lock_regions();
	if (idx == H_LAST)
		idx = nopen ? open_stack[nopen - 1] : GLOBAL_INDEX;
	struct region *r = &regions[idx];
	struct popmon_accounts tot = r->tot;
	uint64_t elapsed = r->elapsed;
	if (r->open) {
		/* Include the visit in progress without closing it. */
		struct popmon_accounts cur;
		popmon_snapshot(now, &cur, NULL);
		accumulate(&tot, &r->snap, &cur);
		elapsed += popmon_delta(r->start_tick, now);
	}
	char e[32], u[32], m[32];
	fmt_seconds(e, sizeof e, popmon_ticks_to_ns(elapsed));
	fmt_seconds(u, sizeof u, popmon_ticks_to_ns(tot.t[POPMON_ST_USEFUL]));
	fmt_seconds(m, sizeof m, popmon_ticks_to_ns(tot.t[POPMON_ST_MPI]));
	char line[512];
	int len = snprintf(line, sizeof line,
			   "popmon[rank %d]: region \"%s\": visits %llu%s, elapsed %s, useful %s, "
			   "MPI %s, MPI calls %llu\n",
			   popmon_proc.rank, r->name, (unsigned long long)r->visits,
			   r->open ? " (open)" : "", e, u, m, (unsigned long long)tot.mpi_calls);
	unlock_regions();
	if (len > (int)sizeof line - 1)
		len = (int)sizeof line - 1;
	if (write(2, line, (size_t)len) < 0) {
		/* ignore */
	}
	return POPMON_SUCCESS;
}

/* ------------------------------------------------------------------ DLB/TALP */
/* Compatibility names so that programs instrumented for TALP run unchanged.
 * Return codes are DLB's: DLB_SUCCESS 0, DLB_NOUPDT 2, DLB_ERR_NOENT -11. */

void *DLB_MonitoringRegionGetGlobal(void);
void *DLB_MonitoringRegionGetImplicit(void);
const void *DLB_MonitoringRegionGetMPIRegion(void);
void *DLB_MonitoringRegionRegister(const char *name);
int DLB_MonitoringRegionReset(void *handle);
int DLB_MonitoringRegionStart(void *handle);
int DLB_MonitoringRegionStop(void *handle);
int DLB_MonitoringRegionReport(const void *handle);
int DLB_MonitoringRegionsUpdate(void);

void *DLB_MonitoringRegionGetGlobal(void)
{
	return popmon_api_region_global();
}

void *DLB_MonitoringRegionGetImplicit(void)
{
	return popmon_api_region_global();
}

const void *DLB_MonitoringRegionGetMPIRegion(void)
{
	return popmon_api_region_global();
}

void *DLB_MonitoringRegionRegister(const char *name)
{
	/* DLB_ARGS --talp-region-select: a region left out counts nothing
	 * (its calls return DLB_NOUPDT) and is in no output. */
	if (name && *name && strcasecmp(name, "Global") != 0 && !popmon_dlb_region_selected(name) &&
	    !popmon_proc.inert)
		return (popmon_region_t)&refused_region;
	return region_register(name, 1);
}

int DLB_MonitoringRegionReset(void *handle)
{
	return popmon_api_region_reset(handle);
}

int DLB_MonitoringRegionStart(void *handle)
{
	return popmon_api_region_start(handle);
}

int DLB_MonitoringRegionStop(void *handle)
{
	int global_open = regions && regions[GLOBAL_INDEX].open;
	int rc = popmon_api_region_stop(handle);
	/* DLB's rule: "Global" in any case is the Global region, so
	 * DLB_MonitoringRegionRegister("global") and stopping it ends the
	 * run's region early: said once. */
	if (rc == POPMON_SUCCESS && global_open && !popmon_proc.finalized && !regions[GLOBAL_INDEX].open)
		popmon_warn_once("globalstop", "DLB_MonitoringRegionStop stopped the Global region before the end of "
				 "the run (in DLB's API any case of \"Global\" names it): the run's metrics cover "
				 "only the time until then");
	return rc;
}

int DLB_MonitoringRegionReport(const void *handle)
{
	return popmon_api_region_report((popmon_region_t)(uintptr_t)handle);
}

int DLB_MonitoringRegionsUpdate(void)
{
	/* Handles are refreshed at every stop; refresh the open ones too. */
	if (popmon_proc.inert)
		return POPMON_ERR_NOTMEASURED;
	return POPMON_SUCCESS;
}

/* ------------------------------------------------------------------ Fortran */
/* Entry points for the Fortran module (popmon.f90), which binds to these by
 * name; names arrive as Fortran strings with a length. */

void popmon_fortran_name(char *out, size_t n, const char *s, int len)
{
	if (len < 0)
		len = 0;
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\0'))
		len--;
	if ((size_t)len >= n)
		len = (int)n - 1;
	memcpy(out, s, (size_t)len);
	out[len] = '\0';
}

popmon_region_t popmon_f_region_register(const char *name, int len);
popmon_region_t popmon_f_region_register(const char *name, int len)
{
	char buf[POPMON_NAME_MAX];
	popmon_fortran_name(buf, sizeof buf, name, len);
	return popmon_api_region_register(buf);
}
