/* lewi.c: DLB's LeWI for this process (lewi.h) on the node's CPU registry
 * (lewi_shm.c). The semantics are DLB 3.7's lewi_mask policy in polling mode
 * (src/LB_policies/lewi_mask.c over src/LB_comm/shmem_cpuinfo.c): a process
 * owns the CPUs it registered; lending one makes it available, borrowing
 * takes an available one, reclaiming gets an owned one back at once when
 * idle (DLB_SUCCESS) or when its guest returns it at its next parallel
 * region (DLB_NOTED). No request queues (DLB's async mode), no SMT cores
 * (every CPU its own core), --lewi-respect-cpuset as DLB's default. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/dlbargs.h"
#include "base/env.h"
#include "base/process.h"
#include "base/warn.h"
#include "lewi.h"
#include "lewi_shm.h"

static struct {
	_Atomic int ready;  /* registered (a child of fork: 0, by atfork) */
	int slot;           /* the registry's slot */
	int ncpu;           /* CPU ids looked at: 0..ncpu-1 */
	cpu_set_t mask;     /* the CPUs it owns (registered) */
	int keep_one;       /* --lewi-keep-one-cpu */
	int respect;        /* --lewi-respect-cpuset */
	_Atomic int max_par;        /* DLB_SetMaxParallelism, 0 none */
	_Atomic int blocking;       /* threads inside blocking calls */
	cpu_set_t blocking_lent;    /* what the first of them lent */
	_Atomic long long last_sweep_ns;
	/* CPU time lent in blocking calls and borrowed in parallel regions,
	 * in popmon_now() ticks times CPUs; the open intervals' starts. */
	_Atomic uint64_t lent_ticks, borrowed_ticks;
	/* Of lent_ticks, the blocking calls' own CPU's: the time the CPU the
	 * lending thread ran on was lent (it waited on no CPU of its own). */
	_Atomic uint64_t lent_caller_ticks;
	/* Its own CPUs over time (DROM changes them: popmon_lewi_update_mask). */
	struct popmon_own_cpus own;
	uint64_t lend_t0, borrow_t0;
	int lend_n, lend_caller;
	_Atomic int borrow_n; /* CPUs borrowed by the open region, 0 none */
	_Atomic uint64_t last_blocking_end; /* popmon_now() when a blocking call last ended */
	_Atomic int held; /* other processes' CPUs its last team was given (0: none to give back) */
	_Atomic int lent_first; /* the first CPU the open blocking call lent, -1 none */
} L;

/* The order it borrows lent CPUs in (DLB's cpus_priority_array with
 * --lewi-affinity=nearby-first, its default): its own, then the CPUs of
 * the NUMA nodes its own are on, then (not with nearby-only) the rest;
 * built for ncpu() CPUs, again when that or its own CPUs change. CPUs of
 * no known node count as one node: without topology, all are nearby. */
static struct {
	_Atomic int n, len;  /* len: entries of cpu[] readers may look at */
	_Atomic int building; /* a thread builds it: the others keep the old one */
	int nodes_read;       /* CPUs whose node was looked up */
	_Atomic int cpu[POPMON_LEWI_MAX_CPUS];
	int node[POPMON_LEWI_MAX_CPUS];
} P;

static void order_cpus(void);

/* After a blocking call ends, the next regions borrow nothing for this long:
 * the other ranks of the same collective are leaving it too (each within
 * its poll's sleep, at most 200 µs), and a CPU borrowed from one of them now
 * would be reclaimed at once and shared for a whole region. */
#define BORROW_GRACE_NS 1000000ULL

static void publish(void);

static int atfork_set;

static void lewi_forked(void)
{
	atomic_store(&L.ready, 0);
}

int popmon_lewi_enabled(void)
{
	popmon_dlb_args_parse();
	return popmon_dlb.lewi || popmon_env_switch("POPMON_LEWI", 0, 0);
}

int popmon_lewi_ready(void)
{
	return atomic_load_explicit(&L.ready, memory_order_acquire);
}

int popmon_lewi_slot(void)
{
	return popmon_lewi_ready() ? L.slot : 0;
}

int popmon_lewi_init(const cpu_set_t *mask)
{
	if (!popmon_lewi_enabled())
		return POPMON_DLB_ERR_NOLEWI;
	if (popmon_lewi_ready())
		return POPMON_DLB_ERR_INIT;
	const char *key = getenv("POPMON_LEWI_KEY");
	if (!key || !*key)
		key = popmon_dlb.shm_key;
	char why[512];
	int r = popmon_lewi_shm_attach(key, why, sizeof why);
	if (r != POPMON_DLB_SUCCESS) {
		popmon_warn_once("lewi", "%s; LeWI is off", why);
		return r;
	}
	cpu_set_t own;
	if (mask)
		own = *mask;
	else if (sched_getaffinity(0, sizeof own, &own) != 0) {
		popmon_warn_once("lewi", "cannot read this process's CPUs; LeWI is off");
		return POPMON_DLB_ERR_PERM;
	}
	int slot = 0;
	r = popmon_lewi_shm_register(getpid(), &own, &slot);
	if (r != POPMON_DLB_SUCCESS) {
		popmon_warn_once("lewi", "%s; LeWI is off",
				 r == POPMON_DLB_ERR_PERM  ? "some of this process's CPUs are another process's in the LeWI registry (bind each rank to its own CPUs: mpirun --bind-to core)"
				 : r == POPMON_DLB_ERR_NOMEM ? "the LeWI registry has no free process slot"
							     : "the LeWI registry is not available");
		return r;
	}
	int n = get_nprocs_conf();
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &own) && c + 1 > n)
			n = c + 1;
	L.ncpu = n < POPMON_LEWI_MAX_CPUS ? n : POPMON_LEWI_MAX_CPUS;
	L.respect = popmon_dlb.lewi_respect_cpuset;
	if (!L.respect)
		popmon_lewi_shm_public(L.ncpu);
	L.slot = slot;
	L.mask = own;
	atomic_store(&P.n, -1);
	L.keep_one = popmon_dlb.lewi_keep_one_cpu;
	atomic_store(&L.max_par, popmon_dlb.lewi_max_parallelism);
	atomic_store(&L.blocking, 0);
	CPU_ZERO(&L.blocking_lent);
	atomic_store(&L.last_sweep_ns, 0);
	atomic_store(&L.lent_ticks, 0);
	atomic_store(&L.lent_caller_ticks, 0);
	atomic_store(&L.borrowed_ticks, 0);
	popmon_own_start(&L.own, CPU_COUNT(&own));
	atomic_store(&L.borrow_n, 0);
	atomic_store(&L.last_blocking_end, 0);
	atomic_store(&L.held, 0);
	atomic_store(&L.lent_first, -1);
	order_cpus(); /* the borrowing order (the topology read here, not in a region) */
	if (!atfork_set) {
		atfork_set = 1;
		pthread_atfork(NULL, NULL, lewi_forked);
	}
	atomic_store_explicit(&L.ready, 1, memory_order_release);
	publish();
	return POPMON_DLB_SUCCESS;
}

int popmon_lewi_finalize(void)
{
	if (!popmon_lewi_ready())
		return POPMON_DLB_NOUPDT;
	atomic_store(&L.ready, 0);
	popmon_lewi_shm_deregister(L.slot);
	/* Its own CPUs stop changing: no more CPU time counted against them. */
	popmon_own_set(&L.own, L.own.n0);
	return POPMON_DLB_SUCCESS;
}

/* DLB's checks before every LeWI call. */
static int guard(void)
{
	if (!popmon_lewi_ready())
		return popmon_lewi_enabled() ? POPMON_DLB_ERR_NOINIT : POPMON_DLB_ERR_NOLEWI;
	return POPMON_DLB_SUCCESS;
}
#define GUARD()                              \
	do {                                 \
		int g_ = guard();            \
		if (g_ != POPMON_DLB_SUCCESS) \
			return g_;           \
	} while (0)

/* The CPU ids to look at: this node's, and any a process registered. */
static inline int ncpu(void)
{
	int n = popmon_lewi_shm_ncpus();
	return n > L.ncpu ? n : L.ncpu;
}

static inline int in_mask(const cpu_set_t *m, int c)
{
	return !m || CPU_ISSET(c, m);
}

/* ---------------------------------------------------------------- lend */

int popmon_lewi_lend(void)
{
	GUARD();
	for (int c = 0; c < ncpu(); c++)
		popmon_lewi_shm_lend(L.slot, c);
	return POPMON_DLB_SUCCESS;
}

int popmon_lewi_lend_cpu(int cpuid)
{
	GUARD();
	return popmon_lewi_shm_lend(L.slot, cpuid);
}

int popmon_lewi_lend_cpus(int ncpus)
{
	(void)ncpus;
	GUARD();
	return POPMON_DLB_ERR_NOPOL; /* not in DLB's lewi_mask policy either */
}

int popmon_lewi_lend_cpu_mask(const cpu_set_t *mask)
{
	GUARD();
	for (int c = 0; c < ncpu(); c++)
		if (in_mask(mask, c))
			popmon_lewi_shm_lend(L.slot, c);
	return POPMON_DLB_SUCCESS;
}

/* ---------------------------------------------------------------- reclaim */

/* DLB's priorities when reclaiming a mask: PERM, then NOTED, SUCCESS, NOUPDT. */
static int worse(int acc, int r)
{
	if (acc == POPMON_DLB_ERR_PERM || r == POPMON_DLB_ERR_PERM)
		return POPMON_DLB_ERR_PERM;
	if (acc == POPMON_DLB_NOTED || r == POPMON_DLB_NOTED)
		return POPMON_DLB_NOTED;
	if (acc == POPMON_DLB_SUCCESS || r == POPMON_DLB_SUCCESS)
		return POPMON_DLB_SUCCESS;
	return POPMON_DLB_NOUPDT;
}

/* Whether cpu is one DLB's reclaim looks at: lent, or used by another. */
static int reclaimable(int c)
{
	struct popmon_lewi_cpu w;
	return popmon_lewi_shm_cpu(c, &w) == 0 && (w.state == POPMON_LEWI_LENT || (w.guest != w.owner && w.owner != 0));
}

static int reclaim_in(const cpu_set_t *mask)
{
	int acc = POPMON_DLB_NOUPDT;
	for (int c = 0; c < ncpu(); c++)
		if (in_mask(mask, c) && reclaimable(c))
			acc = worse(acc, popmon_lewi_shm_reclaim(L.slot, c));
	return acc;
}

int popmon_lewi_reclaim(void)
{
	GUARD();
	return reclaim_in(&L.mask);
}

int popmon_lewi_reclaim_cpu(int cpuid)
{
	GUARD();
	return popmon_lewi_shm_reclaim(L.slot, cpuid);
}

int popmon_lewi_reclaim_cpus(int ncpus)
{
	GUARD();
	int acc = POPMON_DLB_NOUPDT;
	for (int c = 0; c < ncpu() && ncpus > 0; c++) {
		struct popmon_lewi_cpu w;
		if (!CPU_ISSET(c, &L.mask) || popmon_lewi_shm_cpu(c, &w) != 0 || w.guest == L.slot)
			continue;
		int r = popmon_lewi_shm_reclaim(L.slot, c);
		if (r == POPMON_DLB_SUCCESS || r == POPMON_DLB_NOTED) {
			ncpus--;
			acc = worse(acc, r);
		}
	}
	return acc;
}

int popmon_lewi_reclaim_cpu_mask(const cpu_set_t *mask)
{
	GUARD();
	return reclaim_in(mask);
}

/* ---------------------------------------------------------------- borrow, acquire */

/* How many CPUs this process is the guest of. */
static int guested(void)
{
	int n = 0;
	for (int c = 0; c < ncpu(); c++) {
		struct popmon_lewi_cpu w;
		if (popmon_lewi_shm_cpu(c, &w) == 0 && w.guest == L.slot)
			n++;
	}
	return n;
}

/* With --lewi-respect-cpuset (the default) only CPUs some process owns
 * are borrowed: one nobody owns (free in a registry a process with
 * --lewi-respect-cpuset=no made public) answers as a disabled one. */
static int unowned(int c)
{
	struct popmon_lewi_cpu w;
	return L.respect && (popmon_lewi_shm_cpu(c, &w) != 0 || w.owner == 0);
}

static int borrow(int c)
{
	return unowned(c) ? POPMON_DLB_ERR_PERM : popmon_lewi_shm_borrow(L.slot, c);
}

static int acquire(int c)
{
	return unowned(c) ? POPMON_DLB_ERR_PERM : popmon_lewi_shm_acquire(L.slot, c);
}

/* Builds P for ncpu() CPUs (one thread at a time: another one building it
 * meanwhile keeps the old order). The topology is read once per CPU count,
 * at registration in practice. */
static void order_cpus(void)
{
	if (atomic_exchange(&P.building, 1))
		return;
	int n = ncpu();
	if (P.nodes_read < n) {
		popmon_cpu_nodes(P.node, n);
		P.nodes_read = n;
	}
	int near[64], nnear = 0;
	for (int c = 0; c < n; c++) {
		if (!CPU_ISSET(c, &L.mask))
			continue;
		int k = 0;
		while (k < nnear && near[k] != P.node[c])
			k++;
		if (k == nnear && nnear < 64)
			near[nnear++] = P.node[c];
	}
	unsigned char placed[POPMON_LEWI_MAX_CPUS] = {0};
	int len = 0;
	atomic_store(&P.len, 0); /* readers see no half-built order */
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 2 && popmon_dlb.lewi_nearby_only)
			break;
		for (int c = 0; c < n; c++) {
			int k = 0;
			while (k < nnear && near[k] != P.node[c])
				k++;
			int ok = pass == 0 ? CPU_ISSET(c, &L.mask) != 0 : pass == 1 ? k < nnear : 1;
			if (ok && !placed[c]) {
				placed[c] = 1;
				atomic_store_explicit(&P.cpu[len++], c, memory_order_relaxed);
			}
		}
	}
	atomic_store(&P.len, len);
	atomic_store(&P.n, n);
	atomic_store(&P.building, 0);
}

/* The borrowing order, rebuilt when the registry grew: its length. */
static int ordered(void)
{
	if (atomic_load(&P.n) != ncpu())
		order_cpus();
	return atomic_load(&P.len);
}

/* DLB's borrow of ncpus (0: as many as possible) among mask (NULL: all),
 * its own idle CPUs first, within the maximum parallelism. */
static int borrow_in(int ncpus, const cpu_set_t *mask)
{
	int room = ncpus > 0 ? ncpus : ncpu();
	int max = atomic_load(&L.max_par);
	if (max > 0) {
		int left = max - guested();
		if (left <= 0)
			return POPMON_DLB_NOUPDT;
		if (left < room)
			room = left;
	}
	int got = 0, len = ordered(); /* its own first, then nearby, then the rest */
	for (int i = 0; i < len && got < room; i++) {
		int c = atomic_load_explicit(&P.cpu[i], memory_order_relaxed);
		if (in_mask(mask, c) && borrow(c) == POPMON_DLB_SUCCESS)
			got++;
	}
	return got ? POPMON_DLB_SUCCESS : POPMON_DLB_NOUPDT;
}

int popmon_lewi_borrow(void)
{
	GUARD();
	return borrow_in(0, NULL);
}

int popmon_lewi_borrow_cpu(int cpuid)
{
	GUARD();
	return borrow(cpuid);
}

int popmon_lewi_borrow_cpus(int ncpus)
{
	GUARD();
	return ncpus > 0 ? borrow_in(ncpus, NULL) : POPMON_DLB_NOUPDT;
}

int popmon_lewi_borrow_cpu_mask(const cpu_set_t *mask)
{
	GUARD();
	return borrow_in(0, mask);
}

int popmon_lewi_borrow_cpus_in_mask(int ncpus, const cpu_set_t *mask)
{
	GUARD();
	return borrow_in(ncpus, mask);
}

int popmon_lewi_acquire_cpu(int cpuid)
{
	GUARD();
	return acquire(cpuid);
}

int popmon_lewi_acquire_cpus_in_mask(int ncpus, const cpu_set_t *mask)
{
	GUARD();
	/* DLB's order: its own idle CPUs, then its own ones a guest uses
	 * (reclaimed: DLB_NOTED), then lent idle ones of others; within the
	 * maximum parallelism. */
	int want = ncpus > 0 ? ncpus : ncpu(), got = 0, noted = 0;
	int max = atomic_load(&L.max_par);
	if (max > 0) {
		int left = max - guested();
		if (left <= 0)
			return POPMON_DLB_NOUPDT;
		if (left < want)
			want = left;
	}
	for (int pass = 0; pass < 2; pass++)
		for (int c = 0; c < ncpu() && got < want; c++) {
			struct popmon_lewi_cpu w;
			if (!in_mask(mask, c) || !CPU_ISSET(c, &L.mask) || popmon_lewi_shm_cpu(c, &w) != 0 ||
			    w.state == POPMON_LEWI_DISABLED || w.guest == L.slot || (w.guest == 0) != (pass == 0))
				continue;
			int r = popmon_lewi_shm_reclaim(L.slot, c);
			if (r == POPMON_DLB_SUCCESS || r == POPMON_DLB_NOTED) {
				got++;
				noted |= r == POPMON_DLB_NOTED;
			}
		}
	int len = ordered();
	for (int i = 0; i < len && got < want; i++) {
		int c = atomic_load_explicit(&P.cpu[i], memory_order_relaxed);
		if (in_mask(mask, c) && !CPU_ISSET(c, &L.mask) && borrow(c) == POPMON_DLB_SUCCESS)
			got++;
	}
	if (noted)
		return POPMON_DLB_NOTED;
	return got ? POPMON_DLB_SUCCESS : POPMON_DLB_NOUPDT;
}

int popmon_lewi_acquire_cpus(int ncpus)
{
	GUARD();
	if (ncpus == 0)
		return POPMON_DLB_SUCCESS; /* DLB: drops earlier requests; there are none */
	return ncpus > 0 ? popmon_lewi_acquire_cpus_in_mask(ncpus, NULL) : POPMON_DLB_NOUPDT;
}

int popmon_lewi_acquire_cpu_mask(const cpu_set_t *mask)
{
	GUARD();
	return popmon_lewi_acquire_cpus_in_mask(0, mask);
}

/* ---------------------------------------------------------------- return */

static int return_in(const cpu_set_t *mask)
{
	int acc = POPMON_DLB_NOUPDT;
	for (int c = 0; c < ncpu(); c++)
		if (in_mask(mask, c) && popmon_lewi_shm_return(L.slot, c) == POPMON_DLB_SUCCESS)
			acc = POPMON_DLB_SUCCESS;
	return acc;
}

int popmon_lewi_return(void)
{
	GUARD();
	return return_in(NULL);
}

int popmon_lewi_return_cpu(int cpuid)
{
	GUARD();
	struct popmon_lewi_cpu w;
	if (popmon_lewi_shm_cpu(cpuid, &w) != 0 || w.guest != L.slot)
		return POPMON_DLB_ERR_PERM;
	return popmon_lewi_shm_return(L.slot, cpuid);
}

int popmon_lewi_return_cpu_mask(const cpu_set_t *mask)
{
	GUARD();
	return return_in(mask);
}

int popmon_lewi_check_cpu_availability(int cpuid)
{
	GUARD();
	struct popmon_lewi_cpu w;
	if (popmon_lewi_shm_cpu(cpuid, &w) != 0)
		return POPMON_DLB_ERR_PERM;
	if (w.owner != L.slot && (w.state == POPMON_LEWI_BUSY || w.state == POPMON_LEWI_DISABLED))
		return POPMON_DLB_ERR_PERM; /* reclaimed or disabled */
	if (w.guest == L.slot)
		return POPMON_DLB_SUCCESS;
	if (w.guest == 0)
		return acquire(cpuid) == POPMON_DLB_SUCCESS ? POPMON_DLB_SUCCESS : POPMON_DLB_NOTED;
	if (w.owner == L.slot && w.state == POPMON_LEWI_LENT)
		return POPMON_DLB_NOUPDT; /* mine, lent, not reclaimed yet */
	return POPMON_DLB_NOTED;
}

/* ---------------------------------------------------------------- max parallelism */

int popmon_lewi_set_max_parallelism(int max)
{
	GUARD();
	if (max <= 0)
		return POPMON_DLB_SUCCESS;
	atomic_store(&L.max_par, max);
	/* Lend what is beyond max: owned CPUs first in the count, then the
	 * borrowed ones (DLB's shmem_cpuinfo__update_max_parallelism). */
	int owned = 0;
	for (int c = 0; c < ncpu(); c++)
		if (CPU_ISSET(c, &L.mask) && ++owned > max)
			popmon_lewi_shm_lend(L.slot, c);
	int i = 0;
	for (int c = 0; c < ncpu(); c++) {
		struct popmon_lewi_cpu w;
		if (CPU_ISSET(c, &L.mask) || popmon_lewi_shm_cpu(c, &w) != 0 || w.guest != L.slot)
			continue;
		if (owned + ++i > max)
			popmon_lewi_shm_lend(L.slot, c);
	}
	return POPMON_DLB_SUCCESS;
}

int popmon_lewi_unset_max_parallelism(void)
{
	GUARD();
	atomic_store(&L.max_par, 0);
	return POPMON_DLB_SUCCESS;
}

/* ---------------------------------------------------------------- hooks */

int popmon_lewi_into_blocking_call(void)
{
	if (!popmon_lewi_ready())
		return POPMON_DLB_NOUPDT;
	if (atomic_fetch_add(&L.blocking, 1) != 0)
		return POPMON_DLB_NOUPDT; /* another thread lent already */
	int kept = -1;
	if (L.keep_one)
		for (int c = 0; c < ncpu() && kept < 0; c++)
			if (CPU_ISSET(c, &L.mask))
				kept = c;
	CPU_ZERO(&L.blocking_lent);
	int any = 0;
	for (int c = 0; c < ncpu(); c++) {
		struct popmon_lewi_cpu w;
		if (c == kept || popmon_lewi_shm_cpu(c, &w) != 0 || w.guest != L.slot)
			continue;
		popmon_lewi_shm_lend(L.slot, c);
		if (w.owner == L.slot)
			CPU_SET(c, &L.blocking_lent);
		any = 1;
	}
	atomic_store_explicit(&L.held, 0, memory_order_relaxed);
	int first = -1;
	for (int c = 0; c < ncpu() && first < 0; c++)
		if (CPU_ISSET(c, &L.blocking_lent))
			first = c;
	atomic_store_explicit(&L.lent_first, first, memory_order_relaxed);
	L.lend_n = CPU_COUNT(&L.blocking_lent);
	int me = sched_getcpu(); /* a vDSO read, once per lend */
	L.lend_caller = me >= 0 && me < CPU_SETSIZE && CPU_ISSET(me, &L.blocking_lent);
	L.lend_t0 = popmon_now();
	return any ? POPMON_DLB_SUCCESS : POPMON_DLB_NOUPDT;
}

int popmon_lewi_out_of_blocking_call(void)
{
	if (!popmon_lewi_ready())
		return POPMON_DLB_NOUPDT;
	int depth = atomic_load(&L.blocking);
	do {
		if (depth <= 0)
			return POPMON_DLB_NOUPDT; /* not inside one */
	} while (!atomic_compare_exchange_weak(&L.blocking, &depth, depth - 1));
	if (depth != 1)
		return POPMON_DLB_NOUPDT; /* another thread is still inside */
	uint64_t now = popmon_now();
	atomic_store_explicit(&L.last_blocking_end, now, memory_order_relaxed);
	uint64_t d = popmon_delta(L.lend_t0, now);
	atomic_fetch_add(&L.lent_ticks, d * (uint64_t)L.lend_n);
	if (L.lend_n > 0 && L.lend_caller)
		atomic_fetch_add(&L.lent_caller_ticks, d);
	L.lend_n = 0;
	atomic_store_explicit(&L.lent_first, -1, memory_order_relaxed);
	publish();
	int acc = POPMON_DLB_NOUPDT;
	for (int c = 0; c < ncpu(); c++)
		if (CPU_ISSET(c, &L.blocking_lent))
			acc = worse(acc, popmon_lewi_shm_reclaim(L.slot, c));
	CPU_ZERO(&L.blocking_lent);
	return acc;
}

int popmon_lewi_lent_sleep(long ns)
{
	int c = popmon_lewi_ready() ? atomic_load_explicit(&L.lent_first, memory_order_relaxed) : -1;
	struct popmon_lewi_cpu w;
	if (c >= 0 && popmon_lewi_shm_cpu(c, &w) == 0 && w.guest != 0 && w.guest != L.slot &&
	    w.state == POPMON_LEWI_LENT) {
		popmon_lewi_shm_wait_guest(c, w.guest, POPMON_LEWI_BORROWED_SLEEP_NS);
		return 1;
	}
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	nanosleep(&ts, NULL);
	return 0;
}

static long long coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int popmon_lewi_team(int *cpus, int max)
{
	if (!popmon_lewi_ready() || max < 1)
		return 0;
	popmon_lewi_team_end();
	long long now = coarse_ns(), last = atomic_load(&L.last_sweep_ns);
	if (now - last >= 100000000LL && atomic_compare_exchange_strong(&L.last_sweep_ns, &last, now))
		popmon_lewi_shm_sweep(L.slot);
	return_in(NULL);
	uint64_t end = atomic_load_explicit(&L.last_blocking_end, memory_order_relaxed);
	if (!end || popmon_ticks_to_ns(popmon_delta(end, popmon_now())) >= BORROW_GRACE_NS)
		borrow_in(0, NULL);
	int n = 0, limit = atomic_load(&L.max_par);
	if (limit <= 0 || limit > max)
		limit = max;
	/* Its own busy CPUs (even one a guest has not returned yet: DLB's
	 * thread binding), then the borrowed ones. */
	int own = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			own = n;
		for (int c = 0; c < ncpu() && n < limit; c++) {
			struct popmon_lewi_cpu w;
			if (popmon_lewi_shm_cpu(c, &w) != 0)
				continue;
			if (pass == 0 ? (w.owner == L.slot && w.state == POPMON_LEWI_BUSY)
				      : (w.owner != L.slot && w.guest == L.slot))
				cpus[n++] = c;
		}
	}
	atomic_store_explicit(&L.held, n - own, memory_order_relaxed);
	if (n > own) {
		L.borrow_t0 = popmon_now();
		atomic_store(&L.borrow_n, n - own);
	}
	if (n == 0) { /* everything lent: the region still runs, on its first CPU */
		for (int c = 0; c < ncpu() && n == 0; c++)
			if (CPU_ISSET(c, &L.mask))
				cpus[n++] = c;
		if (n == 0)
			cpus[n++] = 0;
	}
	return n;
}

void popmon_lewi_team_end(void)
{
	int nb = atomic_exchange(&L.borrow_n, 0);
	if (nb > 0) {
		atomic_fetch_add(&L.borrowed_ticks, popmon_delta(L.borrow_t0, popmon_now()) * (uint64_t)nb);
		publish();
	}
}

/* Gives back the CPUs its last team borrowed (nothing when it had none: one
 * atomic exchange), waking their owners (popmon_lewi_shm_lend). */
static void give_back_held(void)
{
	if (atomic_exchange_explicit(&L.held, 0, memory_order_relaxed) == 0)
		return;
	for (int c = 0; c < ncpu(); c++) {
		struct popmon_lewi_cpu w;
		if (popmon_lewi_shm_cpu(c, &w) == 0 && w.guest == L.slot && w.owner != L.slot)
			popmon_lewi_shm_lend(L.slot, c);
	}
}

void popmon_lewi_blocking_call_begins(void)
{
	if (popmon_lewi_ready())
		give_back_held();
}

void popmon_lewi_blocking_call_ended(void)
{
	if (!popmon_lewi_ready())
		return;
	atomic_store_explicit(&L.last_blocking_end, popmon_now(), memory_order_relaxed);
	give_back_held();
}

static struct popmon_lewi_words obs;

/* The closed intervals' totals to the observer's words (relaxed stores:
 * each word is read on its own). */
static void publish(void)
{
	if (obs.on == NULL)
		return;
	if (popmon_lewi_used())
		POPMON_STORE(*obs.on, 1);
	POPMON_STORE(*obs.lent, atomic_load(&L.lent_ticks));
	POPMON_STORE(*obs.lent_caller, atomic_load(&L.lent_caller_ticks));
	POPMON_STORE(*obs.borrowed, atomic_load(&L.borrowed_ticks));
	popmon_own_publish(&L.own, &obs.own);
}

void popmon_lewi_observe(const struct popmon_lewi_words *w)
{
	struct popmon_lewi_words none = {0};
	if (!w || !w->on || !w->lent || !w->lent_caller || !w->borrowed || !popmon_own_words_ok(&w->own))
		w = &none;
	obs = *w;
	publish();
}

void popmon_lewi_totals(struct popmon_lewi_totals *t)
{
	*t = (struct popmon_lewi_totals){0};
	uint64_t now = popmon_now();
	t->own_cpus = L.own.n0;
	t->lent = atomic_load(&L.lent_ticks);
	t->lent_caller = atomic_load(&L.lent_caller_ticks);
	t->borrowed = atomic_load(&L.borrowed_ticks);
	t->own_delta = popmon_own_delta(&L.own, now);
	if (atomic_load(&L.blocking) > 0 && L.lend_n > 0) {
		uint64_t d = popmon_delta(L.lend_t0, now);
		t->lent += d * (uint64_t)L.lend_n;
		if (L.lend_caller)
			t->lent_caller += d;
	}
	int nb = atomic_load(&L.borrow_n);
	if (nb > 0)
		t->borrowed += popmon_delta(L.borrow_t0, now) * (uint64_t)nb;
}

int popmon_lewi_update_mask(const cpu_set_t *mask)
{
	if (!popmon_lewi_ready() || !mask || CPU_COUNT(mask) < 1)
		return POPMON_DLB_NOUPDT;
	int r = popmon_lewi_shm_update_ownership(L.slot, mask);
	if (r < 0 || CPU_EQUAL(mask, &L.mask))
		return r; /* an error, or nothing new (a CPU already taken from it) */
	popmon_own_set(&L.own, CPU_COUNT(mask));
	L.mask = *mask;
	atomic_store(&P.n, -1); /* rebuilt by the next borrow if another thread builds now */
	order_cpus();
	publish();
	return r;
}

/* ---------------------------------------------------------------- automatic LeWI
 * popmon run/exec --lewi, DLB_ARGS=--lewi: the process registers itself at
 * MPI_Init (or at its first parallel region, whichever comes first), lends
 * in the blocking MPI calls --lewi-mpi-calls selects (the MPI wrappers read
 * popmon_lewi_calls), and sizes and places its parallel regions' teams. */

int popmon_lewi_calls;

static _Atomic int auto_state; /* 0 not tried, 1 on, -1 off or failed, 2 stopped */
static int (*set_num_threads)(int);
static int team_cpu[POPMON_LEWI_MAX_CPUS];
static _Atomic int team_n;
static _Atomic uint64_t team_gen; /* changes whenever team_cpu does */
static __thread uint64_t pinned_gen;
static __thread int pinned_cpu = -1;

static void auto_exit(void)
{
	popmon_lewi_stop();
}

void popmon_lewi_start(void)
{
	int s = atomic_load(&auto_state);
	if (s != 0 || !atomic_compare_exchange_strong(&auto_state, &s, -1))
		return;
	if (!popmon_lewi_enabled())
		return;
	/* The MPI wrappers take LeWI's path from here whether or not this
	 * process registers: a collective's nonblocking form does not match
	 * the blocking one, so every rank must take the same path (they share
	 * the job's environment, hence its options). Unregistered, the path
	 * only waits without spinning: nothing is lent. */
	__atomic_store_n(&popmon_lewi_calls, popmon_dlb.lewi_mpi_calls, __ATOMIC_RELAXED);
	int r = popmon_lewi_ready() ? POPMON_DLB_SUCCESS : popmon_lewi_init(NULL);
	if (r != POPMON_DLB_SUCCESS)
		return;
	*(void **)&set_num_threads = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
	atexit(auto_exit);
	atomic_store(&auto_state, 1);
	publish();
}

void popmon_lewi_stop(void)
{
	int s = 1;
	__atomic_store_n(&popmon_lewi_calls, 0, __ATOMIC_RELAXED);
	if (!atomic_compare_exchange_strong(&auto_state, &s, 2))
		return;
	popmon_lewi_team_end();
	popmon_lewi_finalize();
}

int popmon_lewi_used(void)
{
	return atomic_load(&auto_state) > 0 || popmon_lewi_ready();
}

int popmon_lewi_on(void)
{
	return atomic_load_explicit(&auto_state, memory_order_relaxed) == 1;
}

int popmon_lewi_parallel_begin(int outermost, int set_icv)
{
	int s = atomic_load_explicit(&auto_state, memory_order_relaxed);
	if (s == 0) {
		popmon_lewi_start(); /* a program without MPI: its first region */
		s = atomic_load(&auto_state);
	}
	if (s != 1 || !outermost || !popmon_lewi_ready())
		return 0;
	int n = popmon_lewi_team(team_cpu, POPMON_LEWI_MAX_CPUS);
	if (n <= 0)
		return 0;
	atomic_store_explicit(&team_n, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&team_gen, 1, memory_order_release);
	if (set_icv && set_num_threads)
		set_num_threads(n);
	return n;
}

void popmon_lewi_implicit_begin(unsigned int index)
{
	if (atomic_load_explicit(&auto_state, memory_order_relaxed) != 1)
		return;
	uint64_t gen = atomic_load_explicit(&team_gen, memory_order_acquire);
	int n = atomic_load_explicit(&team_n, memory_order_relaxed);
	if (gen == pinned_gen || n <= 0)
		return;
	pinned_gen = gen;
	/* A team larger than the CPUs (a num_threads clause): the extra
	 * threads share the CPUs round robin. */
	int cpu = team_cpu[index % (unsigned int)n];
	if (cpu == pinned_cpu)
		return;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0)
		pinned_cpu = cpu;
}

void popmon_lewi_parallel_end(int outermost)
{
	if (outermost && atomic_load_explicit(&auto_state, memory_order_relaxed) == 1)
		popmon_lewi_team_end();
}
