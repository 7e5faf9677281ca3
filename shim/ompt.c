/* ompt.c: the OpenMP tool (OMPT) of libpopmon.
 *
 * Accounting (POP-METRICS.md §1; docs/measurement-format.md, "OpenMP
 * accounting"):
 *  - The CPUs of a process are the runtime's max threads (cpus).
 *  - Outside parallel regions only the primary thread is accounted; it
 *    charges its (cpus - 1) idle workers at the same clock reads as its own
 *    state changes (popmon_account): to serialization while it runs serial
 *    code, to MPI worker idle while it is inside MPI. No worker event is
 *    needed for that, and the MPI hot path only gains a multiply.
 *  - Each instance of an outermost parallel region (wall time W, team size
 *    n) is closed by the encountering thread at parallel_end, when every
 *    team thread has reached the join barrier: thread j's busy time b_j
 *    (useful + MPI since its implicit task began) gives
 *    scheduling += n (W - max b) and load imbalance += sum (max b - b_j);
 *    CPUs outside the team are charged W each to serialization through the
 *    encountering thread's rate. (Workers report the end of their implicit
 *    task only when the next region starts, in LLVM's runtime; closing at
 *    parallel_end does not depend on those late events.)
 *  - Waits (barriers, taskwait, taskgroup, locks, critical, ordered) switch
 *    a thread to IDLE; explicit tasks switch it to USEFUL wherever they run.
 *  - Nested parallel regions (as DLB/TALP counts them): a nested team's
 *    threads are CPUs of the process: the largest outermost team plus the
 *    places of nested teams' threads 1 to n - 1 (their indices in every
 *    enclosing team), as DLB counts the CPUs of bound threads, whichever
 *    pool thread the runtime puts in a place.
 *    A nested instance is closed by its encountering thread like an
 *    outermost one (scheduling and load imbalance over its team); its
 *    workers are CPUs outside the outermost team, which the primary charges
 *    to serialization, so the encountering thread takes (n - 1) W back from
 *    serialization (its own account may wrap below zero: every reader sums
 *    the accounts modulo 2^64). The encountering thread's time in the nested
 *    region that the nested accounts hold (omp_nested_cov) is busy time for
 *    the enclosing team, so nothing is counted twice. CPUs gained while the
 *    primary is inside an outermost region (a nested team that needs more
 *    threads than before) are charged by the primary when it closes it.
 *    Nesting deeper than MAX_DEPTH is part of the enclosing thread's work
 *    (its events are ignored).
 * Hot paths take no lock and allocate nothing: instances live in a ring
 * owned by the encountering thread (allocated at its first parallel region),
 * the per-construct table is a fixed open-addressing table updated with
 * atomics.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <sched.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "counters.h"
#include "drom.h"
#include "lewi.h"
#include "live.h"
#include "ompt.h"
#include "ompt_abi.h"
#include "regions.h"

static int ompt_active;          /* the runtime started our tool */
static char runtime_name[128];
static int runtime_seen;         /* an OpenMP runtime is loaded */
static const char *no_ompt_reason;
static const char *method;       /* how it is measured: POPMON_OMP_BY_OMPT or _BY_GOMP */
static int primary_charged;      /* the primary charges its idle workers */
static int runtime_cpus(void);
static void start_charging(struct popmon_thread *t);

enum { MAX_TEAM = 256, RING = 8, MAX_DEPTH = 4, TABLE = POPMON_OMP_CONSTRUCTS };

/* One instance of a parallel region (outermost: depth 1). Team members
 * write their own slots; the encountering thread reads them at
 * parallel_end, after the join barrier (which orders the writes before the
 * reads). */
struct instance {
	uint64_t begin;
	const void *codeptr;
	uint32_t n;        /* actual team size */
	uint32_t requested;
	uint32_t depth;    /* 1: outermost */
	void *prev_parallel; /* the encountering thread's omp_parallel before this one */
	const struct instance *parent; /* the team the encountering thread runs in (NULL: none) */
	uint32_t parent_index;         /* its index there */
	uint64_t grow_k0, grow_s0; /* growth counters at the primary's implicit begin */
	uint64_t credit0, nuseful0; /* nested_credit and nested_useful at an outermost begin */
	struct {
		struct popmon_thread *t;
		uint64_t useful0, mpi0; /* accounts at implicit-task begin */
		uint64_t cov0;          /* omp_nested_cov at implicit-task begin */
		uint64_t task_begin;    /* tick */
		uint64_t task_end;      /* tick, 0 until seen */
		uint64_t sync;          /* explicit waits, ticks */
		void *prev_inst;        /* the thread's omp_inst, index and stack depth before */
		uint32_t prev_index, prev_nstack;
	} m[MAX_TEAM];
};

/* The places of nested teams' threads (popmon_omp_position of a nested
 * team's threads 1 to n - 1: threads beyond those of the outermost teams),
 * a set filled with atomics; and the largest outermost team. The process
 * needs outer_max + npositions CPUs: DLB counts nested teams' threads as
 * CPUs (bound threads: one CPU per place), however the runtime's pool
 * assigns its threads to the places and whether the teams overlapped. */
enum { POSITIONS = 4096 };
static uint64_t positions[POSITIONS];
static uint32_t npositions, outer_max;
/* CPUs the OpenMP teams gained (Σ k) and Σ k × tick of each gain: what the
 * primary did not charge while inside an outermost region. */
static uint64_t grow_k, grow_s;
/* Σ (n - 1) W over the nested instances closed, and their threads' useful
 * time but the encountering ones': the outermost construct's profile takes
 * them from its CPUs outside the team. */
static uint64_t nested_credit, nested_useful;

struct ring {
	struct instance inst[RING];
	uint32_t next;
};

/* Per-construct profile, keyed by code address: in the live file when
 * there is one (popmon_omp_place_table), else here. */
typedef struct popmon_construct construct_t;
static construct_t table_mem[TABLE];
static construct_t *table = table_mem;
/* The slots taken, in the order they were taken: the table is walked
 * through them only (in the live file, reading an untouched slot would
 * allocate its pages). */
static int used_slots[TABLE];
static int nused;

/* The observer of the outermost parallel regions closed
 * (popmon_omp_observe): handed down by a file above, not named here. */
static popmon_omp_closed_fn *closed_observer;

void popmon_omp_observe(popmon_omp_closed_fn *fn)
{
	__atomic_store_n(&closed_observer, fn, __ATOMIC_RELEASE);
}

void popmon_omp_layout(struct popmon_live_header *h)
{
	h->omp_size = (uint32_t)sizeof(struct popmon_construct);
	h->omp_max = POPMON_OMP_CONSTRUCTS;
	h->om_codeptr = offsetof(struct popmon_construct, codeptr);
	h->om_executions = offsetof(struct popmon_construct, executions);
	h->om_threads = offsetof(struct popmon_construct, threads);
	h->om_wall = offsetof(struct popmon_construct, wall);
	h->om_useful = offsetof(struct popmon_construct, useful);
	h->om_imbalance = offsetof(struct popmon_construct, imbalance);
	h->om_sync = offsetof(struct popmon_construct, sync);
	h->om_limited = offsetof(struct popmon_construct, limited);
	h->om_mgmt = offsetof(struct popmon_construct, mgmt);
	h->om_address = offsetof(struct popmon_construct, address);
	h->om_module = offsetof(struct popmon_construct, module);
	h->om_module_max = POPMON_OMP_MODULE;
}

void popmon_omp_place_table(struct popmon_construct *mem)
{
	if (!mem || mem == table)
		return;
	/* Normally empty (no parallel region runs before the library's
	 * constructor): only the slots in use are copied, so the file's
	 * untouched pages stay unallocated. */
	for (int i = 0; i < TABLE; i++)
		if (table[i].codeptr) {
			if (popmon_live_reserve_construct(i) != 0)
				return; /* no room: the table stays in memory */
			mem[i] = table[i];
			popmon_live_construct_added(i);
		}
	__atomic_store_n(&table, mem, __ATOMIC_RELEASE);
}

static void resolve_module(construct_t *c);

static construct_t *construct_of(const void *codeptr)
{
	uintptr_t h = ((uintptr_t)codeptr >> 4) * 0x9E3779B97F4A7C15ull;
	for (int probe = 0; probe < TABLE; probe++) {
		int idx = (int)((h + (uintptr_t)probe) % TABLE);
		construct_t *c = &table[idx];
		const void *k = __atomic_load_n(&c->codeptr, __ATOMIC_ACQUIRE);
		if (k == codeptr)
			return c;
		if (k == NULL) {
			/* A slot's pages of the live file are reserved before it
			 * is first written (a full tmpfs is a SIGBUS otherwise). */
			if (popmon_live_reserve_construct(idx) != 0) {
				popmon_warn_once("omproom", "no room left for the live file: OpenMP constructs first "
						 "seen from now on are not listed");
				return NULL;
			}
			const void *expected = NULL;
			if (__atomic_compare_exchange_n(&c->codeptr, &expected, codeptr, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				/* Once, off the hot path: where the construct is. */
				resolve_module(c);
				__atomic_thread_fence(__ATOMIC_RELEASE);
				int k = __atomic_fetch_add(&nused, 1, __ATOMIC_ACQ_REL);
				if (k < TABLE)
					__atomic_store_n(&used_slots[k], idx + 1, __ATOMIC_RELEASE);
				popmon_live_construct_added(idx);
				return c;
			}
			if (expected == codeptr)
				return c;
		}
	}
	popmon_warn_once("omptable", "more than %d OpenMP parallel constructs: the rest are not listed",
			 TABLE);
	return NULL;
}

static inline struct popmon_thread *self(void)
{
	struct popmon_thread *t = popmon_tls;
	return t ? t : popmon_thread_slow();
}

static inline void push_state(struct popmon_thread *t, uint32_t st, uint64_t now)
{
	if (t->nstack < POPMON_STATE_STACK)
		t->stack[t->nstack] = t->state;
	t->nstack++;
	popmon_switch(t, st, now);
}

static inline void pop_state(struct popmon_thread *t, uint64_t now)
{
	uint32_t st = POPMON_ST_IDLE;
	if (t->nstack > 0) {
		t->nstack--;
		if (t->nstack < POPMON_STATE_STACK)
			st = t->stack[t->nstack];
		else
			st = POPMON_ST_USEFUL;
	} else if (t->omp_inst || t->slot == 0) {
		st = POPMON_ST_USEFUL;
	}
	popmon_switch(t, st, now);
}

/* ------------------------------------------------------------------ callbacks */

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
	(void)thread_data;
	if (popmon_proc.inert)
		return;
	/* Workers wait outside parallel regions: IDLE (charged by the primary). */
	popmon_thread_new(POPMON_THR_OPENMP, type == ompt_thread_initial ? POPMON_ST_USEFUL : POPMON_ST_IDLE);
}

static void on_thread_end(ompt_data_t *thread_data)
{
	(void)thread_data;
	struct popmon_thread *t = popmon_tls;
	if (t && t->slot != 0)
		popmon_switch(t, POPMON_ST_IDLE, popmon_now());
}

/* ------------------------------------------------------------------ events
 * Runtime-neutral: ompt.c's callbacks below and gomp.c's wrappers of
 * libgomp's entry points (GOMP interposition) both call these. */

void *popmon_omp_parallel_begin(struct popmon_thread *t, unsigned int requested, const void *codeptr)
{
	if (!t)
		return NULL;
	uint32_t depth = 1;
	if (t->omp_inst || t->omp_nested) {
		struct instance *outer = t->omp_inst;
		depth = outer ? outer->depth + 1 : MAX_DEPTH + 1;
		if (t->omp_nested || depth > MAX_DEPTH) {
			/* Too deep: part of this thread's work; counted as TALP
			 * counts parallel regions (every one, nested included). */
			t->omp_nested++;
			POPMON_ADD(t->extra[POPMON_X_PARALLELS], 1);
			return NULL;
		}
	}
	struct ring *ring = t->omp_ring;
	if (!ring) {
		/* Once per encountering thread, at its first parallel region. */
		ring = calloc(1, sizeof *ring);
		if (!ring) {
			popmon_warn_once("nomem", "out of memory for OpenMP accounting");
			return NULL;
		}
		t->omp_ring = ring;
	}
	struct instance *in = &ring->inst[ring->next++ % RING];
	uint64_t now = popmon_now();
	in->begin = now;
	in->codeptr = codeptr;
	in->n = 0;
	in->requested = requested;
	in->depth = depth;
	in->prev_parallel = t->omp_parallel;
	in->parent = t->omp_inst;
	in->parent_index = t->omp_index;
	if (depth == 1) {
		in->credit0 = __atomic_load_n(&nested_credit, __ATOMIC_RELAXED);
		in->nuseful0 = __atomic_load_n(&nested_useful, __ATOMIC_RELAXED);
	}
	/* Forking: the encountering thread waits; CPUs outside the team are
	 * idle (a nested team's: the enclosing region's rate holds them). */
	popmon_switch(t, POPMON_ST_IDLE, now);
	if (depth == 1 && t->slot == 0) {
		uint32_t cpus = (uint32_t)popmon_omp_team_cpus();
		uint32_t team = requested < cpus ? requested : cpus;
		t->rate = cpus > team ? cpus - team : 0;
	}
	t->omp_parallel = in;
	return in;
}

static void on_parallel_begin(ompt_data_t *encountering_task_data,
			      const ompt_frame_t *encountering_task_frame, ompt_data_t *parallel_data,
			      unsigned int requested_parallelism, int flags, const void *codeptr_ra)
{
	(void)encountering_task_data;
	(void)encountering_task_frame;
	(void)flags;
	popmon_drom_parallel_begin(); /* a new mask from DROM: this or the next region's team */
	struct popmon_thread *t = self();
	popmon_lewi_parallel_begin(t && !t->omp_inst && !t->omp_nested, 1); /* LeWI: the team's size */
	parallel_data->ptr = popmon_omp_parallel_begin(t, requested_parallelism, codeptr_ra);
}

/* Adds place h (not 0) to the set; 1 when it was not there. Lock-free;
 * a full set counts no more places. */
static int position_new(uint64_t h)
{
	if (!h)
		return 0;
	for (uint32_t probe = 0; probe < POSITIONS; probe++) {
		uint64_t *slot = &positions[(h + probe) % POSITIONS];
		uint64_t v = __atomic_load_n(slot, __ATOMIC_RELAXED);
		if (v == h)
			return 0;
		if (v == 0) {
			uint64_t expected = 0;
			if (__atomic_compare_exchange_n(slot, &expected, h, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
				__atomic_add_fetch(&npositions, 1, __ATOMIC_RELAXED);
				return 1;
			}
			if (expected == h)
				return 0;
		}
	}
	return 0;
}

int popmon_omp_implicit_begin(struct popmon_thread *t, void *inst, unsigned int n, unsigned int index)
{
	struct instance *in = inst;
	if (!t || !in || index >= MAX_TEAM)
		return 0; /* too large: not accounted */
	if (t->omp_inst && !(index == 0 && in->depth > 1 && t->omp_parallel == in))
		return 0; /* in a team already: only a nested team's encountering thread */
	uint64_t now = popmon_now();
	in->n = n;
	popmon_switch(t, POPMON_ST_USEFUL, now);
	in->m[index].t = t;
	in->m[index].useful0 = t->acc[POPMON_ST_USEFUL];
	in->m[index].mpi0 = t->acc[POPMON_ST_MPI];
	in->m[index].cov0 = t->omp_nested_cov;
	in->m[index].task_begin = now;
	in->m[index].task_end = 0;
	in->m[index].sync = 0;
	in->m[index].prev_inst = t->omp_inst;
	in->m[index].prev_index = t->omp_index;
	in->m[index].prev_nstack = t->nstack;
	t->omp_inst = in;
	t->omp_index = index;
	t->nstack = 0;
	if (in->depth == 1 && index == 0) {
		uint32_t mx = __atomic_load_n(&outer_max, __ATOMIC_RELAXED);
		while (n > mx && !__atomic_compare_exchange_n(&outer_max, &mx, n, 0, __ATOMIC_RELAXED,
							       __ATOMIC_RELAXED)) {
		}
	}
	if (in->depth > 1 && index > 0 && position_new(popmon_omp_position(t))) {
		/* A nested team's thread in a place not seen before: one
		 * more CPU when the process has fewer (as DLB counts them). */
		int need = (int)__atomic_load_n(&outer_max, __ATOMIC_RELAXED) +
			   (int)__atomic_load_n(&npositions, __ATOMIC_RELAXED);
		if (need > popmon_omp_team_cpus()) {
			int gained = popmon_cpus_grow_omp(need, in->begin);
			if (gained > 0) {
				__atomic_add_fetch(&grow_k, (uint64_t)gained, __ATOMIC_RELAXED);
				__atomic_add_fetch(&grow_s, (uint64_t)gained * in->begin, __ATOMIC_RELAXED);
			}
		}
	}
	if (in->depth > 1)
		return 1;
	if (t->slot == 0) {
		in->grow_k0 = __atomic_load_n(&grow_k, __ATOMIC_RELAXED);
		in->grow_s0 = __atomic_load_n(&grow_s, __ATOMIC_RELAXED);
		if (!primary_charged)
			start_charging(t);
		/* omp_set_num_threads / num_threads may exceed the default:
		 * the process holds as many CPUs as its largest team. */
		if ((int)n > popmon_omp_team_cpus())
			popmon_cpus_grow_omp((int)n, in->begin);
		uint32_t cpus = (uint32_t)popmon_omp_team_cpus();
		t->rate = cpus > n ? cpus - n : 0;
	}
	return 1;
}

void popmon_omp_implicit_end(struct popmon_thread *t, int mark_end)
{
	if (!t || !t->omp_inst)
		return;
	uint64_t now = popmon_now();
	struct instance *in = t->omp_inst;
	void *prev = NULL;
	uint32_t prev_index = 0, prev_nstack = 0;
	if (t->omp_index < MAX_TEAM && in->m[t->omp_index].t == t) {
		if (mark_end && in->m[t->omp_index].task_end == 0)
			in->m[t->omp_index].task_end = now;
		/* Back in the enclosing team (a nested team's encountering
		 * thread), or in none. */
		prev = in->m[t->omp_index].prev_inst;
		prev_index = in->m[t->omp_index].prev_index;
		prev_nstack = in->m[t->omp_index].prev_nstack;
	}
	t->omp_inst = prev;
	t->omp_index = prev ? prev_index : 0;
	t->nstack = prev ? prev_nstack : 0;
	popmon_switch(t, POPMON_ST_IDLE, now);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
			     ompt_data_t *task_data, unsigned int actual_parallelism,
			     unsigned int index, int flags)
{
	if (flags & ompt_task_initial)
		return;
	struct popmon_thread *t = self();
	if (!t)
		return;
	if (endpoint == ompt_scope_begin) {
		popmon_lewi_implicit_begin(index); /* LeWI: the thread's CPU */
		task_data->value = (uint64_t)popmon_omp_implicit_begin(
			t, parallel_data ? parallel_data->ptr : NULL, actual_parallelism, index);
	} else if (endpoint == ompt_scope_end) {
		if (task_data->value != 1)
			return;
		popmon_omp_implicit_end(t, 1);
	}
}

void popmon_omp_parallel_end(struct popmon_thread *t, void *inst)
{
	if (!t)
		return;
	struct instance *in = inst;
	if (!in) {
		if (t->omp_nested)
			t->omp_nested--;
		return;
	}
	uint64_t now = popmon_now();
	/* Close our own interval first (our implicit task has ended). */
	popmon_account(t, now);
	uint64_t w = popmon_delta(in->begin, now);
	uint32_t n = in->n < MAX_TEAM ? in->n : MAX_TEAM;
	uint64_t max_busy = 0, sum_busy = 0, sum_useful = 0, self_useful = 0, self_busy = 0;
	int nested = in->depth > 1;
	uint64_t mgmt = 0, sync = 0, limited = 0, imbalance = 0;
	for (uint32_t j = 0; j < n; j++) {
		struct popmon_thread *m = in->m[j].t;
		if (!m)
			continue;
		uint64_t u = POPMON_LOAD(m->acc[POPMON_ST_USEFUL]) - in->m[j].useful0;
		uint64_t b = u + (POPMON_LOAD(m->acc[POPMON_ST_MPI]) - in->m[j].mpi0) +
			     (POPMON_LOAD(m->omp_nested_cov) - in->m[j].cov0);
		if (b > w)
			b = w;
		sum_busy += b;
		sum_useful += u;
		if (m == t) {
			self_useful = u;
			self_busy = b;
		}
		if (b > max_busy)
			max_busy = b;
		/* ompP categories of this thread. */
		uint64_t tm = popmon_delta(in->begin, in->m[j].task_begin);
		if (m == t && in->m[j].task_end)
			tm += popmon_delta(in->m[j].task_end, now);
		uint64_t sy = in->m[j].sync;
		if (b == 0) {
			limited += w;
			continue;
		}
		uint64_t rest = w > b + tm + sy ? w - b - tm - sy : 0;
		mgmt += tm;
		sync += sy;
		imbalance += rest;
	}
	uint32_t cpus = (uint32_t)popmon_omp_team_cpus();
	if (cpus > n && !nested)
		limited += (uint64_t)(cpus - n) * w;
	/* TALP's accounts (POP-METRICS.md §1), written by their owner. */
	if (n > 0) {
		uint64_t sch = w > max_busy ? (uint64_t)n * (w - max_busy) : 0;
		uint64_t lb = (uint64_t)n * max_busy - sum_busy;
		POPMON_ADD(t->acc[POPMON_ST_OMP_SCHEDULING], sch);
		POPMON_ADD(t->acc[POPMON_ST_OMP_LOAD_IMBALANCE], lb);
	}
	if (nested) {
		/* The workers' time was charged to serialization as CPUs
		 * outside the outermost team: taken back (wrapping: readers sum
		 * modulo 2^64). Our own time here that these accounts hold is
		 * busy for the enclosing team. */
		if (n > 1)
			POPMON_STORE(t->acc[POPMON_ST_OMP_SERIALIZATION],
				     POPMON_LOAD(t->acc[POPMON_ST_OMP_SERIALIZATION]) - (uint64_t)(n - 1) * w);
		POPMON_ADD(t->omp_nested_cov, w > self_busy ? w - self_busy : 0);
		POPMON_ADD(t->extra[POPMON_X_PAR_USEFUL], sum_useful - self_useful);
		if (n > 1)
			__atomic_add_fetch(&nested_credit, (uint64_t)(n - 1) * w, __ATOMIC_RELAXED);
		__atomic_add_fetch(&nested_useful, sum_useful - self_useful, __ATOMIC_RELAXED);
	} else {
		POPMON_ADD(t->extra[POPMON_X_PAR_WALL], w);
		POPMON_ADD(t->extra[POPMON_X_PAR_USEFUL], sum_useful);
		POPMON_ADD(t->extra[POPMON_X_PAR_SELF_USEFUL], self_useful);
		if (t->slot == 0 && in->m[0].t == t) {
			/* CPUs that nested teams added during this region, charged
			 * by no one since they were gained: idle (serialization)
			 * from their gain until now. */
			uint64_t k = __atomic_load_n(&grow_k, __ATOMIC_RELAXED) - in->grow_k0;
			uint64_t ks = __atomic_load_n(&grow_s, __ATOMIC_RELAXED) - in->grow_s0;
			if (k)
				POPMON_ADD(t->acc[POPMON_ST_OMP_SERIALIZATION], k * now - ks);
		}
	}
	POPMON_ADD(t->extra[POPMON_X_PARALLELS], 1);
	/* Constructs: outermost ones (a nested region's return address is
	 * not reliable on libomp: its worker threads report the runtime's
	 * own). Their CPUs outside the team that nested teams used are not
	 * limited parallelism: those threads' useful time, and the rest as
	 * imbalance. */
	construct_t *c = !nested && in->codeptr ? construct_of(in->codeptr) : NULL;
	if (c) {
		uint64_t dc = __atomic_load_n(&nested_credit, __ATOMIC_RELAXED) - in->credit0;
		uint64_t du = __atomic_load_n(&nested_useful, __ATOMIC_RELAXED) - in->nuseful0;
		if (dc > limited)
			dc = limited;
		if (du > dc)
			du = dc;
		limited -= dc;
		sum_useful += du;
		imbalance += dc > du ? dc - du : 0;
	}
	if (c) {
		/* Only the encountering thread updates a construct in practice
		 * (outermost regions): relaxed load+store, no locked RMW. A
		 * construct encountered concurrently by two threads may lose an
		 * update; the accounts above are exact regardless. */
		POPMON_ADD(c->executions, 1);
		if (n > POPMON_LOAD(c->threads))
			POPMON_STORE(c->threads, n);
		POPMON_ADD(c->wall, w);
		POPMON_ADD(c->useful, sum_useful);
		POPMON_ADD(c->imbalance, imbalance);
		POPMON_ADD(c->sync, sync);
		POPMON_ADD(c->limited, limited);
		POPMON_ADD(c->mgmt, mgmt);
	}
	popmon_omp_closed_fn *observe = __atomic_load_n(&closed_observer, __ATOMIC_ACQUIRE);
	if (observe && !nested) /* trace.c, when tracing */
		observe(in->begin, now, n, c ? (int)(c - __atomic_load_n(&table, __ATOMIC_ACQUIRE)) : -1);
	t->omp_parallel = in->prev_parallel;
	if (t->slot == 0 && !nested)
		t->rate = cpus > 1 ? cpus - 1 : 0;
	popmon_ctr_hook(t, t->state, POPMON_ST_USEFUL);
	POPMON_STORE(t->state, POPMON_ST_USEFUL);
}

static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
			    int flags, const void *codeptr_ra)
{
	(void)encountering_task_data;
	(void)flags;
	(void)codeptr_ra;
	popmon_omp_parallel_end(popmon_tls, parallel_data ? parallel_data->ptr : NULL);
	popmon_lewi_parallel_end(popmon_tls && !popmon_tls->omp_inst && !popmon_tls->omp_nested);
}

static int explicit_wait(ompt_sync_region_t kind)
{
	return kind == ompt_sync_region_barrier_explicit || kind == ompt_sync_region_taskwait ||
	       kind == ompt_sync_region_taskgroup || kind == ompt_sync_region_reduction ||
	       kind == ompt_sync_region_barrier;
}

static void add_sync(struct popmon_thread *t, uint64_t ticks)
{
	struct instance *in = t->omp_inst;
	if (in && t->omp_index < MAX_TEAM && in->m[t->omp_index].t == t)
		in->m[t->omp_index].sync += ticks;
}

void popmon_omp_wait_begin(struct popmon_thread *t, int synchronization)
{
	if (!t)
		return;
	uint64_t now = popmon_now();
	t->omp_wait_begin = now;
	t->omp_wait_kind = (uint32_t)synchronization;
	push_state(t, POPMON_ST_IDLE, now);
}

void popmon_omp_wait_end(struct popmon_thread *t)
{
	if (!t)
		return;
	uint64_t now = popmon_now();
	if (t->omp_wait_kind)
		add_sync(t, popmon_delta(t->omp_wait_begin, now));
	pop_state(t, now);
}

static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
				ompt_data_t *parallel_data, ompt_data_t *task_data,
				const void *codeptr_ra)
{
	(void)parallel_data;
	(void)task_data;
	(void)codeptr_ra;
	struct popmon_thread *t = popmon_tls;
	if (!t)
		return;
	if (endpoint == ompt_scope_begin)
		popmon_omp_wait_begin(t, explicit_wait(kind));
	else
		popmon_omp_wait_end(t);
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
			     ompt_wait_id_t wait_id, const void *codeptr_ra)
{
	(void)hint;
	(void)impl;
	(void)wait_id;
	(void)codeptr_ra;
	if (kind == ompt_mutex_atomic)
		return;
	popmon_omp_wait_begin(popmon_tls, 1);
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra)
{
	(void)wait_id;
	(void)codeptr_ra;
	if (kind == ompt_mutex_atomic)
		return;
	popmon_omp_wait_end(popmon_tls);
}

enum { TASK_EXPLICIT = 0x706f706d }; /* marks explicit tasks in task_data */

static void on_task_create(ompt_data_t *encountering_task_data,
			   const ompt_frame_t *encountering_task_frame, ompt_data_t *new_task_data,
			   int flags, int has_dependences, const void *codeptr_ra)
{
	(void)encountering_task_data;
	(void)encountering_task_frame;
	(void)has_dependences;
	(void)codeptr_ra;
	if (!(flags & ompt_task_explicit))
		return;
	new_task_data->value = TASK_EXPLICIT;
	popmon_omp_task_created(popmon_tls);
}

uint64_t popmon_omp_position(const struct popmon_thread *t)
{
	if (!t)
		return 0;
	uint64_t h = 1469598103934665603ull; /* FNV-1a over the indices, innermost first */
	int any = 0;
	const struct instance *in = t->omp_inst;
	uint32_t idx = t->omp_index;
	for (int d = 0; in && d <= MAX_DEPTH; d++) {
		/* A team's thread 0 is the thread that encountered it: the
		 * innermost zeros name the same thread as its enclosing place. */
		if (idx != 0 || any) {
			any = 1;
			h = (h ^ (uint64_t)(idx + 1)) * 1099511628211ull;
		}
		idx = in->parent_index;
		in = in->parent;
	}
	return any ? h : 0;
}

void popmon_omp_task_created(struct popmon_thread *t)
{
	if (t)
		POPMON_ADD(t->extra[POPMON_X_TASKS], 1);
}

void popmon_omp_task_run(struct popmon_thread *t, int begin)
{
	if (!t)
		return;
	uint64_t now = popmon_now();
	if (begin) {
		/* Run inside a wait (a barrier, a taskwait): the wait so far
		 * is synchronization, the task's time is not. */
		if (t->nstack > 0 && t->state == POPMON_ST_IDLE && t->omp_wait_kind)
			add_sync(t, popmon_delta(t->omp_wait_begin, now));
		push_state(t, POPMON_ST_USEFUL, now);
	} else {
		pop_state(t, now); /* back to where it ran (barrier, taskwait, ...) */
		/* The wait resumes (after a wait inside the task, with that
		 * wait's kind: an approximation for waits nested in tasks). */
		t->omp_wait_begin = now;
	}
}

static void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
			     ompt_data_t *next_task_data)
{
	struct popmon_thread *t = popmon_tls;
	if (!t)
		return;
	int prior_explicit = prior_task_data && prior_task_data->value == TASK_EXPLICIT;
	int next_explicit = next_task_data && next_task_data->value == TASK_EXPLICIT;
	(void)prior_task_status; /* completed, yielded or switched: it stops running here */
	if (prior_explicit)
		popmon_omp_task_run(t, 0);
	if (next_explicit)
		popmon_omp_task_run(t, 1);
}

/* ------------------------------------------------------------------ tool */

static int tool_initialize(ompt_function_lookup_t lookup, int initial_device_num,
			   ompt_data_t *tool_data)
{
	(void)initial_device_num;
	(void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (!set)
		return 0;
#define REG(ev, fn) set(ev, (ompt_callback_t)(void (*)(void))(fn))
	REG(ompt_callback_thread_begin, on_thread_begin);
	REG(ompt_callback_thread_end, on_thread_end);
	REG(ompt_callback_parallel_begin, on_parallel_begin);
	REG(ompt_callback_parallel_end, on_parallel_end);
	REG(ompt_callback_implicit_task, on_implicit_task);
	REG(ompt_callback_sync_region_wait, on_sync_region_wait);
	REG(ompt_callback_mutex_acquire, on_mutex_acquire);
	REG(ompt_callback_mutex_acquired, on_mutex_acquired);
	REG(ompt_callback_task_create, on_task_create);
	REG(ompt_callback_task_schedule, on_task_schedule);
#undef REG
	popmon_omp_measured_by(NULL, POPMON_OMP_BY_OMPT);
	return 1; /* keep the tool */
}

static void tool_finalize(ompt_data_t *tool_data)
{
	(void)tool_data;
}

static ompt_start_tool_result_t tool = {tool_initialize, tool_finalize, {0}};

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version);
ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	(void)omp_version;
	popmon_wake(POPMON_WAKE_COMPUTE); /* an OpenMP program named like a utility */
	if (popmon_proc.inert)
		return NULL;
	snprintf(runtime_name, sizeof runtime_name, "%s", runtime_version ? runtime_version : "OpenMP");
	if (popmon_env_switch("POPMON_NO_OMPT", 0, 1)) {
		/* --openmp=off: the runtime is there, its events are not wanted. */
		runtime_seen = 1;
		no_ompt_reason = "OpenMP measurement is off (popmon run --openmp=off)";
		return NULL;
	}
	return &tool;
}

/* The CPUs of the process as the runtime will size its teams: the first
 * value of OMP_NUM_THREADS, else the CPUs the process may run on (LLVM's
 * default). Computed without calling the runtime: this runs inside its
 * initialisation, and the program's own first OpenMP call must stay the
 * one that starts the runtime (it may set OMP_NUM_THREADS itself first). */
static int runtime_cpus(void)
{
	const char *v = getenv("OMP_NUM_THREADS");
	if (v && *v) {
		int n = atoi(v);
		if (n > 0)
			return n;
	}
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		int n = CPU_COUNT(&set);
		if (n > 0)
			return n;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* Called at tool initialisation (the program's first OpenMP use), on the
 * thread that started the runtime, after the process gained its OpenMP CPUs
 * (popmon_cpus_grow_omp charged their idle time so far to every region):
 * from then on the primary charges its idle workers. */
static void start_charging(struct popmon_thread *t)
{
	if (!t || t->slot != 0 || primary_charged) {
		if (t && t->slot == 0)
			primary_charged = 1;
		return;
	}
	primary_charged = 1;
	popmon_account(t, popmon_now());
	t->rate = (uint32_t)(popmon_omp_team_cpus() - 1);
}

/* Why OpenMP is not measured, for the file's "openmp" object, which every
 * report shows once, in its header (docs/openmp-regions.md, "When OpenMP is
 * not measured"). GNU libgomp, which has no OMPT, is measured in place
 * through its entry points (gomp.c); what is left is --openmp=off. A
 * libgomp program that never entered a parallel region was measured all
 * the same: it ran on one CPU. */
static void no_ompt_check(void)
{
	static int done;
	if (done || ompt_active)
		return;
	done = 1;
	if (!dlsym(RTLD_DEFAULT, "omp_get_max_threads"))
		return; /* no OpenMP runtime in this program */
	/* libpopmon exports GOMP_parallel itself (gomp.c): the runtime's is
	 * the next one. */
	if (dlsym(RTLD_NEXT, "GOMP_parallel") && !dlsym(RTLD_DEFAULT, "__kmpc_fork_call")) {
		runtime_seen = 1;
		snprintf(runtime_name, sizeof runtime_name, "GNU libgomp");
		if (popmon_env_switch("POPMON_NO_OMPT", 0, 1)) {
			no_ompt_reason = "OpenMP measurement is off (popmon run --openmp=off)";
			return;
		}
		ompt_active = 1;
		method = POPMON_OMP_BY_GOMP;
	}
	/* An OMPT runtime that never started the tool was never used. */
}

void popmon_omp_measured_by(const char *runtime, const char *how)
{
	if (ompt_active)
		return;
	if (runtime)
		snprintf(runtime_name, sizeof runtime_name, "%s", runtime);
	method = how;
	runtime_seen = 1;
	ompt_active = 1;
	popmon_cpus_grow_omp(runtime_cpus(), popmon_now());
	start_charging(popmon_tls);
}

void popmon_omp_off(const char *runtime)
{
	if (runtime && !runtime_seen)
		snprintf(runtime_name, sizeof runtime_name, "%s", runtime);
	runtime_seen = 1;
	no_ompt_reason = "OpenMP measurement is off (popmon run --openmp=off)";
}

const char *popmon_openmp_method(void)
{
	return ompt_active && method ? method : "";
}

int popmon_openmp_info(const char **runtime, int *ompt, const char **reason, int *max_threads)
{
	no_ompt_check();
	if (!runtime_seen && !ompt_active)
		return 0;
	*runtime = runtime_name;
	*ompt = ompt_active;
	*reason = ompt_active ? "" : (no_ompt_reason ? no_ompt_reason : "");
	*max_threads = popmon_omp_team_cpus();
	return 1;
}

/* ------------------------------------------------------------------ output */

struct find_module {
	uintptr_t addr;
	const char *name;
	uintptr_t bias;
	int found;
};

static int find_module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct find_module *fm = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (fm->addr >= lo && fm->addr < lo + ph->p_memsz) {
			fm->name = info->dlpi_name;
			fm->bias = info->dlpi_addr;
			fm->found = 1;
			return 1;
		}
	}
	return 0;
}

/* Fills c's module (the executable or shared library holding codeptr) and
 * its address in that module's ELF file. */
static void resolve_module(construct_t *c)
{
	struct find_module fm = {.addr = (uintptr_t)c->codeptr};
	dl_iterate_phdr(find_module_cb, &fm);
	if (fm.found && fm.name && *fm.name) {
		snprintf(c->module, sizeof c->module, "%s", fm.name);
	} else {
		ssize_t len = readlink("/proc/self/exe", c->module, sizeof c->module - 1);
		c->module[len > 0 ? len : 0] = '\0';
	}
	c->address = (uint64_t)((uintptr_t)c->codeptr - (fm.found ? fm.bias : 0));
}

int popmon_omp_rows(struct popmon_omp_row **rows)
{
	*rows = NULL;
	int taken = __atomic_load_n(&nused, __ATOMIC_ACQUIRE);
	if (taken > TABLE)
		taken = TABLE;
	if (taken == 0)
		return 0;
	struct popmon_omp_row *r = calloc((size_t)taken, sizeof *r);
	if (!r)
		return 0;
	double ns = popmon_ticks_to_ns(1000000000ull) / 1e9; /* ns per tick */
	int k = 0;
	for (int j = 0; j < taken; j++) {
		int slot = __atomic_load_n(&used_slots[j], __ATOMIC_ACQUIRE) - 1;
		if (slot < 0)
			continue; /* being taken */
		construct_t *c = &table[slot];
		if (!c->codeptr || !c->executions)
			continue;
		snprintf(r[k].module, sizeof r[k].module, "%s", c->module);
		r[k].address = c->address;
		r[k].executions = (int64_t)c->executions;
		r[k].threads = (int64_t)c->threads;
		r[k].wall_ns = (int64_t)((double)c->wall * ns + 0.5);
		r[k].useful_ns = (int64_t)((double)c->useful * ns + 0.5);
		r[k].imbalance_ns = (int64_t)((double)c->imbalance * ns + 0.5);
		r[k].sync_ns = (int64_t)((double)c->sync * ns + 0.5);
		r[k].limited_ns = (int64_t)((double)c->limited * ns + 0.5);
		r[k].mgmt_ns = (int64_t)((double)c->mgmt * ns + 0.5);
		k++;
	}
	*rows = r;
	return k;
}

int popmon_omp_construct_name(int idx, char *out, size_t n)
{
	construct_t *tb = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	if (idx < 0 || idx >= TABLE || !tb[idx].codeptr || n == 0)
		return 0;
	snprintf(out, n, "%s+0x%llx", tb[idx].module[0] ? tb[idx].module : "?", (unsigned long long)tb[idx].address);
	return 1;
}

int popmon_cpus_grow_omp(int n, uint64_t until)
{
	popmon_regions_lock();
	int old = popmon_omp_team_cpus();
	int gained = n > old ? n - old : 0;
	if (n > old)
		popmon_regions_grow_locked((uint32_t)(n - old), until);
	if (n > __atomic_load_n(&popmon_omp_cpus, __ATOMIC_RELAXED))
		__atomic_store_n(&popmon_omp_cpus, n, __ATOMIC_RELAXED);
	popmon_live_publish();
	popmon_regions_unlock();
	return gained;
}
