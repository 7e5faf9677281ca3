/* drom_shm.c: the node's process-mask registry (drom_shm.h). Lock-free as
 * the LeWI registry (lewi_shm.c), whose open and liveness helpers it uses: one word
 * per CPU (its owner), one word per process slot, each changed by
 * compare-and-swap; a slot's current mask is written by its process only. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "base/process.h"
#include "drom_shm.h"
#include "lewi_shm.h"

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the registry needs lock-free 64-bit atomics");

enum { SLOT_FREE = 0, SLOT_LIVE = 1, SLOT_DYING = 2 };
enum { WORDS = POPMON_DROM_MAX_CPUS / 64 };

struct slot {
	_Atomic uint64_t word, start, flags, seq;
	_Atomic uint64_t cur[WORDS];
	_Atomic uint64_t stolen[WORDS];
	char pad[POPMON_DROM_SLOT_SIZE - 32 - 2 * 8 * WORDS];
};

struct reg {
	_Atomic uint64_t magic;
	_Atomic uint32_t ncpus;
	char pad[POPMON_DROM_OFF_CPUS - 12];
	_Atomic uint64_t cpu[POPMON_DROM_MAX_CPUS];
	struct slot slot[POPMON_DROM_MAX_SLOTS + 1];
};

_Static_assert(sizeof(struct slot) == POPMON_DROM_SLOT_SIZE, "slot layout");
_Static_assert(offsetof(struct reg, cpu) == POPMON_DROM_OFF_CPUS, "cpu offset");
_Static_assert(offsetof(struct reg, slot) == POPMON_DROM_OFF_SLOTS, "slot offset");
_Static_assert(sizeof(struct reg) == POPMON_DROM_SIZE, "registry size");
_Static_assert(offsetof(struct slot, cur) == 32 && offsetof(struct slot, stolen) == 160, "slot fields");

static struct reg *R;

static inline int c_owner(uint64_t w) { return (int)(w & 0xff); }
static inline uint64_t c_make(uint64_t old, int owner) { return (uint64_t)owner | ((old >> 32) + 1) << 32; }
static inline pid_t s_pid(uint64_t w) { return (pid_t)(w & 0xffffffffu); }
static inline int s_state(uint64_t w) { return (int)((w >> 32) & 3); }
static inline uint64_t s_gen(uint64_t w) { return w >> 34; }
static inline uint64_t s_make(pid_t pid, int state, uint64_t gen)
{
	return (uint64_t)(uint32_t)pid | (uint64_t)state << 32 | gen << 34;
}
static inline int slot_ok(int s) { return R && s >= 1 && s <= POPMON_DROM_MAX_SLOTS; }
static inline int bit(const _Atomic uint64_t *v, int c) { return (int)((atomic_load(&v[c / 64]) >> (c % 64)) & 1); }
static inline void bit_set(_Atomic uint64_t *v, int c) { atomic_fetch_or(&v[c / 64], 1ULL << (c % 64)); }
static inline void bit_clr(_Atomic uint64_t *v, int c) { atomic_fetch_and(&v[c / 64], ~(1ULL << (c % 64))); }
static inline int in(const cpu_set_t *m, int c) { return c < CPU_SETSIZE && CPU_ISSET(c, m); }

void popmon_drom_shm_name(const char *key, char *buf, size_t n)
{
	popmon_shm_registry_name("drom", key, buf, n);
}

int popmon_drom_shm_attached(void)
{
	return R != NULL;
}

int popmon_drom_shm_attach(const char *key, char *why, size_t nwhy)
{
	if (R)
		return POPMON_DLB_SUCCESS;
	char name[128];
	popmon_drom_shm_name(key, name, sizeof name);
	struct reg *r = popmon_shm_registry_map("DROM", name, sizeof(struct reg), POPMON_DROM_MAGIC, why, nwhy);
	if (!r)
		return POPMON_DLB_ERR_NOSHMEM;
	uint32_t n = (uint32_t)get_nprocs_conf(), o = atomic_load(&r->ncpus);
	if (n > POPMON_DROM_MAX_CPUS)
		n = POPMON_DROM_MAX_CPUS;
	while (o < n && !atomic_compare_exchange_weak(&r->ncpus, &o, n))
		;
	R = r;
	return POPMON_DLB_SUCCESS;
}

int popmon_drom_shm_ncpus(void)
{
	return R ? (int)atomic_load(&R->ncpus) : 0;
}

static void bump(int s)
{
	if (slot_ok(s))
		atomic_fetch_add(&R->slot[s].seq, 1);
}

/* Hands CPU c of slot s on: to the live slot that has it as stolen when
 * give_back, else free. */
static void release_cpu(int s, int c, int give_back)
{
	int to = 0;
	if (give_back)
		for (int o = 1; o <= POPMON_DROM_MAX_SLOTS && !to; o++)
			if (o != s && s_state(atomic_load(&R->slot[o].word)) == SLOT_LIVE && bit(R->slot[o].stolen, c))
				to = o;
	uint64_t w = atomic_load(&R->cpu[c]);
	while (c_owner(w) == s)
		if (atomic_compare_exchange_weak(&R->cpu[c], &w, c_make(w, to))) {
			if (to) {
				bit_clr(R->slot[to].stolen, c);
				bump(to);
			}
			break;
		}
}

/* Frees slot s held as DYING (its word w). */
static void free_slot(int s, uint64_t w, int give_back)
{
	struct slot *sl = &R->slot[s];
	give_back = give_back || (atomic_load(&sl->flags) & POPMON_DROM_RETURN_STOLEN);
	for (int c = 0; c < POPMON_DROM_MAX_CPUS; c++)
		if (c_owner(atomic_load(&R->cpu[c])) == s)
			release_cpu(s, c, give_back);
	for (int i = 0; i < WORDS; i++) {
		atomic_store(&sl->cur[i], 0);
		atomic_store(&sl->stolen[i], 0);
	}
	atomic_store(&sl->flags, 0);
	atomic_store(&sl->start, 0);
	atomic_fetch_add(&sl->seq, 1);
	atomic_compare_exchange_strong(&sl->word, &w, s_make(0, SLOT_FREE, s_gen(w) + 1));
}

/* Frees slot s when its process is dead; 1 when it did. */
static int check(int s, int me)
{
	if (!slot_ok(s) || s == me)
		return 0;
	struct slot *sl = &R->slot[s];
	uint64_t w = atomic_load(&sl->word);
	int st = s_state(w);
	if (st == SLOT_FREE)
		return 0;
	uint64_t start = st == SLOT_LIVE ? atomic_load(&sl->start) : 0;
	if (popmon_lewi_shm_alive(s_pid(w), start))
		return 0;
	uint64_t mine = s_make(getpid(), SLOT_DYING, s_gen(w));
	if (!atomic_compare_exchange_strong(&sl->word, &w, mine))
		return 0;
	free_slot(s, mine, 0);
	return 1;
}

int popmon_drom_shm_sweep(int me)
{
	int n = 0;
	if (!R)
		return 0;
	for (int s = 1; s <= POPMON_DROM_MAX_SLOTS; s++)
		if (s != me && s_state(atomic_load(&R->slot[s].word)) != SLOT_FREE)
			n += check(s, me);
	return n;
}

int popmon_drom_shm_find(pid_t pid)
{
	if (!R || pid <= 0)
		return 0;
	for (int s = 1; s <= POPMON_DROM_MAX_SLOTS; s++) {
		uint64_t w = atomic_load(&R->slot[s].word);
		if (s_state(w) == SLOT_LIVE && s_pid(w) == pid && !check(s, 0))
			return s;
	}
	return 0;
}

pid_t popmon_drom_shm_pid(int slot, int *prereg)
{
	if (prereg)
		*prereg = 0;
	if (!slot_ok(slot))
		return 0;
	uint64_t w = atomic_load(&R->slot[slot].word);
	if (s_state(w) != SLOT_LIVE)
		return 0;
	if (prereg)
		*prereg = (atomic_load(&R->slot[slot].flags) & POPMON_DROM_PREREGISTERED) != 0;
	return s_pid(w);
}

int popmon_drom_shm_masks(int slot, cpu_set_t *cur, cpu_set_t *fut)
{
	CPU_ZERO(cur);
	CPU_ZERO(fut);
	if (!slot_ok(slot))
		return 0;
	int dirty = 0;
	for (int c = 0; c < POPMON_DROM_MAX_CPUS; c++) {
		int f = c_owner(atomic_load(&R->cpu[c])) == slot, k = bit(R->slot[slot].cur, c);
		if (f)
			CPU_SET(c, fut);
		if (k)
			CPU_SET(c, cur);
		dirty |= f != k;
	}
	return dirty;
}

static int dirty(int slot)
{
	cpu_set_t a, b;
	return popmon_drom_shm_masks(slot, &a, &b);
}

/* Whether the CPUs of mask that others own can be taken from them now
 * (their owners dead are cleaned; one with a change pending refuses). */
static int stealable(int me, const cpu_set_t *mask)
{
	for (int c = 0; c < POPMON_DROM_MAX_CPUS; c++) {
		if (!in(mask, c))
			continue;
		int o = c_owner(atomic_load(&R->cpu[c]));
		if (o == 0 || o == me || check(o, me))
			continue;
		if (dirty(o))
			return 0;
	}
	for (int c = POPMON_DROM_MAX_CPUS; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, mask))
			return 0;
	return 1;
}

/* Makes c me's: stolen from its owner (marked so) or taken when free. */
static void take(int me, int c)
{
	uint64_t w = atomic_load(&R->cpu[c]);
	for (;;) {
		int o = c_owner(w);
		if (o == me)
			break;
		if (o)
			bump(o);
		if (atomic_compare_exchange_weak(&R->cpu[c], &w, c_make(w, me))) {
			if (o) {
				bit_set(R->slot[o].stolen, c);
				bump(o);
			}
			break;
		}
	}
	bit_clr(R->slot[me].stolen, c);
}

int popmon_drom_shm_set(int slot, const cpu_set_t *mask, int self)
{
	if (!slot_ok(slot))
		return POPMON_DLB_ERR_NOPROC;
	cpu_set_t cur, fut;
	if (popmon_drom_shm_masks(slot, &cur, &fut) && !(self && CPU_EQUAL(&fut, mask)))
		return POPMON_DLB_ERR_PDIRTY;
	if (!stealable(slot, mask))
		return POPMON_DLB_ERR_PERM;
	bump(slot);
	for (int c = 0; c < POPMON_DROM_MAX_CPUS; c++) {
		if (in(mask, c))
			take(slot, c);
		else if (c_owner(atomic_load(&R->cpu[c])) == slot)
			release_cpu(slot, c, 0);
	}
	bump(slot);
	return POPMON_DLB_SUCCESS;
}

pid_t popmon_drom_shm_owner(int cpu)
{
	if (!R || cpu < 0 || cpu >= POPMON_DROM_MAX_CPUS)
		return 0;
	return popmon_drom_shm_pid(c_owner(atomic_load(&R->cpu[cpu])), NULL);
}

uint64_t popmon_drom_shm_seq(int slot)
{
	return slot_ok(slot) ? atomic_load_explicit(&R->slot[slot].seq, memory_order_acquire) : 0;
}

int popmon_drom_shm_poll(int slot, uint64_t *seen, cpu_set_t *mask)
{
	if (!slot_ok(slot))
		return POPMON_DLB_ERR_NOPROC;
	struct slot *sl = &R->slot[slot];
	uint64_t seq = atomic_load_explicit(&sl->seq, memory_order_acquire);
	if (seq == *seen)
		return POPMON_DLB_NOUPDT;
	cpu_set_t cur;
	int d = popmon_drom_shm_masks(slot, &cur, mask);
	*seen = seq;
	if (!d)
		return POPMON_DLB_NOUPDT;
	for (int i = 0; i < WORDS; i++) {
		uint64_t v = 0;
		for (int b = 0; b < 64; b++)
			if (CPU_ISSET(i * 64 + b, mask))
				v |= 1ULL << b;
		atomic_store(&sl->cur[i], v);
	}
	return POPMON_DLB_SUCCESS;
}

int popmon_drom_shm_register(pid_t pid, pid_t preinit_pid, const cpu_set_t *mask, int preinit, int flags, int *slot,
			     cpu_set_t *out)
{
	if (!R)
		return POPMON_DLB_ERR_NOSHMEM;
	popmon_drom_shm_sweep(0);
	int s = popmon_drom_shm_find(pid), from = 0;
	if (!s && !preinit && preinit_pid > 0 && preinit_pid != pid) {
		/* DLB's --preinit-pid: the slot popmon taskset preregistered for
		 * itself before exec, which started this process (a launcher
		 * between). A process on exactly its CPUs takes the slot over
		 * (DLB's inheritance); one on some of them (a rank of the job)
		 * takes those CPUs from it into a slot of its own (DLB's
		 * "subset" case), and the slot goes when it has none left. */
		int p = popmon_drom_shm_find(preinit_pid);
		uint64_t w = p ? atomic_load(&R->slot[p].word) : 0;
		cpu_set_t pcur, pfut;
		if (p && (atomic_load(&R->slot[p].flags) & POPMON_DROM_PREREGISTERED)) {
			popmon_drom_shm_masks(p, &pcur, &pfut);
			if (!CPU_EQUAL(&pfut, mask))
				from = p;
			else if (atomic_compare_exchange_strong(&R->slot[p].word, &w, s_make(pid, SLOT_LIVE, s_gen(w)))) {
				atomic_store(&R->slot[p].start, popmon_proc_start_time(pid));
				s = p;
			}
		}
	}
	if (s) {
		if (preinit)
			return POPMON_DLB_ERR_INIT;
		/* DLB's inheritance: the slot's mask (pending change included)
		 * is the process's now. A live slot of this very pid that is not
		 * preregistered is this process before an exec (the start time
		 * matched): the image that registered it is gone, so it is taken
		 * over the same way. */
		atomic_fetch_and(&R->slot[s].flags, ~(uint64_t)POPMON_DROM_PREREGISTERED);
		cpu_set_t cur;
		uint64_t seen = 0;
		popmon_drom_shm_masks(s, &cur, out);
		popmon_drom_shm_poll(s, &seen, &cur);
		*slot = s;
		return CPU_EQUAL(out, mask) ? POPMON_DLB_SUCCESS : POPMON_DLB_NOTED;
	}
	if (!(flags & POPMON_DROM_STEAL_CPUS)) {
		for (int c = 0; c < CPU_SETSIZE; c++) {
			if (!CPU_ISSET(c, mask))
				continue;
			if (c >= POPMON_DROM_MAX_CPUS)
				return POPMON_DLB_ERR_PERM;
			int o = c_owner(atomic_load(&R->cpu[c]));
			if (o && o != from && !check(o, 0))
				return POPMON_DLB_ERR_PERM;
		}
	} else if (!stealable(0, mask))
		return POPMON_DLB_ERR_PERM;
	for (int i = 1; i <= POPMON_DROM_MAX_SLOTS && !s; i++) {
		uint64_t w = atomic_load(&R->slot[i].word);
		if (s_state(w) == SLOT_FREE &&
		    atomic_compare_exchange_strong(&R->slot[i].word, &w, s_make(pid, SLOT_DYING, s_gen(w))))
			s = i;
	}
	if (!s)
		return POPMON_DLB_ERR_NOMEM;
	struct slot *sl = &R->slot[s];
	atomic_store(&sl->start, popmon_proc_start_time(pid));
	atomic_store(&sl->flags, (preinit ? POPMON_DROM_PREREGISTERED : 0u) |
					 ((flags & POPMON_DROM_RETURN_STOLEN_FLAG) ? POPMON_DROM_RETURN_STOLEN : 0u));
	for (int i = 0; i < WORDS; i++) {
		uint64_t v = 0;
		for (int b = 0; b < 64; b++)
			if (CPU_ISSET(i * 64 + b, mask))
				v |= 1ULL << b;
		atomic_store(&sl->cur[i], v);
		atomic_store(&sl->stolen[i], 0);
	}
	/* Live (while DYING, a sweep of a dead registrant frees it). */
	atomic_store(&sl->word, s_make(pid, SLOT_LIVE, s_gen(atomic_load(&sl->word))));
	for (int c = 0; c < POPMON_DROM_MAX_CPUS; c++) {
		if (!in(mask, c))
			continue;
		if (flags & POPMON_DROM_STEAL_CPUS) {
			take(s, c);
			continue;
		}
		uint64_t w = atomic_load(&R->cpu[c]);
		for (;;) {
			int o = c_owner(w);
			if (o == s)
				break;
			if (o && o != from && !check(o, s)) {
				popmon_drom_shm_unregister(s, 0);
				return POPMON_DLB_ERR_PERM; /* taken meanwhile */
			}
			if (atomic_compare_exchange_weak(&R->cpu[c], &w, c_make(w, s))) {
				if (o && o == from) /* inherited: not pending there */
					bit_clr(R->slot[from].cur, c);
				break;
			}
		}
	}
	if (from) {
		cpu_set_t fcur, ffut;
		popmon_drom_shm_masks(from, &fcur, &ffut);
		if (CPU_COUNT(&ffut) == 0)
			popmon_drom_shm_unregister(from, 0);
	}
	*slot = s;
	*out = *mask;
	return POPMON_DLB_SUCCESS;
}

void popmon_drom_shm_unregister(int slot, int return_stolen)
{
	if (!slot_ok(slot))
		return;
	struct slot *sl = &R->slot[slot];
	uint64_t w = atomic_load(&sl->word);
	if (s_state(w) != SLOT_LIVE)
		return;
	uint64_t mine = s_make(s_pid(w), SLOT_DYING, s_gen(w));
	if (atomic_compare_exchange_strong(&sl->word, &w, mine))
		free_slot(slot, mine, return_stolen);
}

int popmon_drom_shm_recover(int slot)
{
	if (!slot_ok(slot))
		return POPMON_DLB_ERR_NOPROC;
	struct slot *sl = &R->slot[slot];
	int any = 0;
	for (int c = 0; c < POPMON_DROM_MAX_CPUS; c++) {
		if (!bit(sl->stolen, c))
			continue;
		any = 1;
		uint64_t w = atomic_load(&R->cpu[c]);
		int o = c_owner(w);
		if (o && check(o, slot))
			w = atomic_load(&R->cpu[c]), o = c_owner(w);
		if (o == 0 && atomic_compare_exchange_strong(&R->cpu[c], &w, c_make(w, slot)))
			bit_clr(sl->stolen, c);
	}
	bump(slot);
	return any ? POPMON_DLB_SUCCESS : POPMON_DLB_NOUPDT;
}

int popmon_drom_shm_pids(pid_t *list, int max)
{
	int n = 0;
	if (!R)
		return 0;
	popmon_drom_shm_sweep(0);
	for (int s = 1; s <= POPMON_DROM_MAX_SLOTS && n < max; s++) {
		pid_t p = popmon_drom_shm_pid(s, NULL);
		if (p)
			list[n++] = p;
	}
	return n;
}
