/* barrier.c: DLB's node barrier (barrier.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "base/dlbargs.h"
#include "base/process.h"
#include "base/warn.h"
#include "drom.h"
#include "lewi.h"
#include "lewi_shm.h"

#define BARRIER_MAGIC 0x504f504d42415201ULL /* "POPMBAR" + version 1 */
#define WAIT_NS 50000000L                  /* a waiter looks for dead members this often */

enum { B_FREE = 0, B_CLAIMING = 1, B_NAMED = 2 };
enum { M_ATTACHED = 1, M_DETACHED = 2, M_CLAIMING = 3 };

struct member {
	_Atomic uint64_t who; /* pid (bits 0-31) | state << 32; 0: free */
	_Atomic uint64_t start; /* its start time (/proc/PID/stat field 22) */
	_Atomic uint32_t arrived; /* the generation + 1 it last arrived for */
	uint32_t pad;
};

struct barrier {
	_Atomic uint32_t state; /* B_*; the unnamed barrier (0) is always in use */
	_Atomic uint32_t gen;   /* the futex word: one more at every completion */
	char name[POPMON_BARRIER_NAME_MAX];
	struct member m[POPMON_BARRIER_MEMBERS];
};

struct reg {
	_Atomic uint64_t magic;
	uint64_t pad[7];
	struct barrier b[POPMON_BARRIER_MAX];
};

static struct reg *R;
static _Atomic int started;
/* This process's member of each barrier (index + 1, 0 none), and whether
 * waiting in it lends the CPUs. */
static int mine[POPMON_BARRIER_MAX];
static int lends[POPMON_BARRIER_MAX];

static uint64_t who_of(uint64_t pid, uint64_t state)
{
	return (pid & 0xffffffffu) | state << 32;
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

int popmon_barrier_enabled(void)
{
	popmon_dlb_args_parse();
	return popmon_dlb.barrier;
}

/* The attached members of b (dead ones dropped when sweep); with arrived,
 * whether all of them arrived for generation g. */
static int members(struct barrier *b, uint32_t g, int sweep, int *arrived)
{
	int n = 0, all = 1;
	for (int i = 0; i < POPMON_BARRIER_MEMBERS; i++) {
		uint64_t w = atomic_load(&b->m[i].who);
		if ((w & 0xffffffffu) == 0) /* free, or being taken (no pid yet) */
			continue;
		if (sweep && !popmon_lewi_shm_alive((pid_t)(w & 0xffffffffu), atomic_load(&b->m[i].start))) {
			atomic_compare_exchange_strong(&b->m[i].who, &w, 0);
			continue;
		}
		if (w >> 32 != M_ATTACHED)
			continue;
		n++;
		if (atomic_load(&b->m[i].arrived) != g + 1)
			all = 0;
	}
	if (arrived)
		*arrived = all;
	return n;
}

/* Moves b on from generation g when every attached member arrived for it,
 * and wakes the waiters. */
static int try_complete(struct barrier *b, uint32_t g, int sweep)
{
	int all;
	members(b, g, sweep, &all);
	if (!all)
		return 0;
	if (atomic_compare_exchange_strong(&b->gen, &g, g + 1))
		futex(&b->gen, FUTEX_WAKE, INT_MAX, NULL);
	return 1;
}

/* This process's member of b: found, or taken (attached); -1 when full. */
static int join(int id)
{
	struct barrier *b = &R->b[id];
	uint64_t pid = (uint64_t)getpid(); /* not popmon_proc's: a forked child is a process of its own */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < POPMON_BARRIER_MEMBERS; i++) {
			/* Taken without a pid (neither waited for nor checked
			 * for liveness against the last member's start time)
			 * until its arrival and start time are its own. */
			uint64_t w = 0;
			if (atomic_compare_exchange_strong(&b->m[i].who, &w, who_of(0, M_CLAIMING))) {
				atomic_store(&b->m[i].arrived, 0);
				atomic_store(&b->m[i].start, popmon_proc_start_time((int)pid));
				atomic_store(&b->m[i].who, who_of(pid, M_ATTACHED));
				return i;
			}
		}
		members(b, atomic_load(&b->gen), 1, NULL); /* full: drop the dead, then once more */
	}
	return -1;
}

/* A forked child is not a member: it joins (DLB_Init) on its own. */
static void barrier_forked(void)
{
	atomic_store(&started, 0);
	memset(mine, 0, sizeof mine);
}

/* Why the barrier could not be had (start_quiet), said at its first use. */
static char failed[400];
static int failed_code;

/* popmon_barrier_start, its failure kept in failed instead of said. */
static int start_quiet(void)
{
	if (atomic_load(&started))
		return POPMON_DLB_NOUPDT;
	if (!popmon_barrier_enabled())
		return POPMON_DLB_ERR_NOCOMP;
	static int atfork_set;
	if (!atfork_set) {
		atfork_set = 1;
		pthread_atfork(NULL, NULL, barrier_forked);
	}
	if (!R) {
		char name[128], why[300];
		popmon_shm_registry_name("barrier", popmon_dlb.shm_key, name, sizeof name);
		R = popmon_shm_registry_map("barrier", name, sizeof(struct reg), BARRIER_MAGIC, why, sizeof why);
		if (!R) {
			snprintf(failed, sizeof failed, "%s; DLB_Barrier is off", why);
			return failed_code = POPMON_DLB_ERR_NOSHMEM;
		}
	}
	int i = join(0);
	if (i < 0) {
		snprintf(failed, sizeof failed, "the node barrier has %d members already; DLB_Barrier is off in this process",
			 POPMON_BARRIER_MEMBERS);
		return failed_code = POPMON_DLB_ERR_NOMEM;
	}
	memset(mine, 0, sizeof mine);
	mine[0] = i + 1;
	lends[0] = popmon_dlb_barrier_lends("default", 0);
	failed_code = 0;
	atomic_store(&started, 1);
	return POPMON_DLB_SUCCESS;
}

int popmon_barrier_start(void)
{
	int r = start_quiet();
	if (failed_code)
		popmon_warn_once("barrier", "%s", failed);
	return r;
}

void popmon_barrier_mpi_init(void)
{
	popmon_dlb_args_parse();
	/* Quiet: most such programs never call DLB_Barrier; a failure is said
	 * when one does (member_of). */
	if (popmon_dlb.set || popmon_dlb_loaded_as() || popmon_lewi_enabled() || popmon_drom_enabled())
		start_quiet();
}

void popmon_barrier_stop(void)
{
	if (!atomic_exchange(&started, 0))
		return;
	for (int id = 0; id < POPMON_BARRIER_MAX; id++) {
		if (!mine[id])
			continue;
		struct barrier *b = &R->b[id];
		atomic_store(&b->m[mine[id] - 1].who, 0);
		mine[id] = 0;
		try_complete(b, atomic_load(&b->gen), 0); /* the others may wait for it no more */
	}
}

/* This process's member of barrier id, or NULL with the call's code. */
static struct member *member_of(int id, int *code)
{
	if (!atomic_load(&started) || id < 0 || id >= POPMON_BARRIER_MAX) {
		*code = POPMON_DLB_ERR_NOCOMP;
		if (!atomic_load(&started) && failed_code) { /* the start at MPI_Init failed */
			popmon_warn_once("barrier", "%s", failed);
			*code = failed_code;
		}
		return NULL;
	}
	if (!mine[id]) {
		*code = POPMON_DLB_ERR_PERM;
		return NULL;
	}
	return &R->b[id].m[mine[id] - 1];
}

int popmon_barrier_wait(int id)
{
	int code = POPMON_DLB_ERR_NOCOMP;
	struct member *m = member_of(id, &code);
	if (!m)
		return code;
	if (atomic_load(&m->who) >> 32 != M_ATTACHED)
		return POPMON_DLB_ERR_PERM;
	struct barrier *b = &R->b[id];
	uint32_t g = atomic_load(&b->gen);
	atomic_store(&m->arrived, g + 1);
	int lent = 0, sweep = 0;
	while (atomic_load(&b->gen) == g && !try_complete(b, g, sweep)) {
		if (!lent && lends[id] && popmon_lewi_ready()) {
			popmon_lewi_into_blocking_call();
			lent = 1;
		}
		struct timespec ts = {0, WAIT_NS};
		sweep = futex(&b->gen, FUTEX_WAIT, g, &ts) != 0 && errno == ETIMEDOUT;
	}
	if (lent)
		popmon_lewi_out_of_blocking_call();
	return POPMON_DLB_SUCCESS;
}

/* Attaches (attach 1) or detaches this process's member of barrier id:
 * the attached members after the change, or DLB_ERR_PERM when it already
 * was. A detach may complete a barrier the others wait in. */
static int set_attached(int id, int attach)
{
	int code = POPMON_DLB_ERR_NOCOMP;
	struct member *m = member_of(id, &code);
	if (!m)
		return code;
	struct barrier *b = &R->b[id];
	uint64_t w = atomic_load(&m->who);
	if ((w >> 32 == M_ATTACHED) == attach)
		return POPMON_DLB_ERR_PERM;
	if (attach)
		atomic_store(&m->arrived, 0);
	atomic_store(&m->who, who_of(w, attach ? M_ATTACHED : M_DETACHED));
	uint32_t g = atomic_load(&b->gen);
	if (!attach)
		try_complete(b, g, 0);
	return members(b, g, 0, NULL);
}

int popmon_barrier_attach(int id)
{
	return set_attached(id, 1);
}

int popmon_barrier_detach(int id)
{
	return set_attached(id, 0);
}

/* The named barrier's id: an existing one of that name (the lowest, when
 * two processes created it at once), else a free or abandoned entry taken
 * for it; -1 when none is left. */
static int find_or_create(const char *name)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int id = 1; id < POPMON_BARRIER_MAX; id++) {
			struct barrier *b = &R->b[id];
			if (atomic_load(&b->state) == B_NAMED && strncmp(b->name, name, sizeof b->name) == 0)
				return id;
		}
		for (int id = 1; id < POPMON_BARRIER_MAX; id++) {
			struct barrier *b = &R->b[id];
			uint32_t s = B_FREE;
			if (!atomic_compare_exchange_strong(&b->state, &s, B_CLAIMING))
				continue;
			snprintf(b->name, sizeof b->name, "%s", name);
			atomic_store(&b->state, B_NAMED);
			for (int k = 1; k < id; k++) { /* another process made it first */
				struct barrier *o = &R->b[k];
				if (atomic_load(&o->state) == B_NAMED && strncmp(o->name, name, sizeof o->name) == 0) {
					atomic_store(&b->state, B_FREE);
					return k;
				}
			}
			return id;
		}
		/* Full: free the named barriers without a live member. */
		for (int id = 1; id < POPMON_BARRIER_MAX; id++) {
			struct barrier *b = &R->b[id];
			uint32_t s = B_NAMED;
			if (members(b, atomic_load(&b->gen), 1, NULL) == 0 && atomic_load(&b->state) == B_NAMED) {
				int any = 0;
				for (int i = 0; i < POPMON_BARRIER_MEMBERS && !any; i++)
					any = atomic_load(&b->m[i].who) != 0;
				if (!any)
					atomic_compare_exchange_strong(&b->state, &s, B_FREE);
			}
		}
	}
	return -1;
}

int popmon_barrier_named(const char *name, int flags)
{
	if (!atomic_load(&started) || name == NULL || !*name || strlen(name) >= POPMON_BARRIER_NAME_MAX)
		return -1;
	int id = find_or_create(name);
	if (id < 0)
		return -1;
	if (!mine[id]) {
		int i = join(id);
		if (i < 0)
			return -1;
		mine[id] = i + 1;
	}
	lends[id] = popmon_dlb_barrier_lends(name, flags);
	return id;
}
