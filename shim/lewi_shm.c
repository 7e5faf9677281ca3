/* lewi_shm.c: the node-local CPU registry (lewi_shm.h). Lock-free: each CPU
 * is one 64-bit word changed by compare-and-swap, each process slot one
 * word claimed by compare-and-swap, so a process killed at any instruction
 * leaves no lock held, only entries the next toucher cleans. A robust mutex
 * would do too, but would leave the data it guarded half-changed on
 * EOWNERDEAD; one word per CPU is never half-changed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/process.h"
#include "lewi_shm.h"

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the registry needs lock-free 64-bit atomics");

/* "POPMLEW" and the layout's version: a registry of another layout is
 * refused (its size differs too). */
#define REG_MAGIC 0x504f504d4c455701ULL

/* A slot's word: pid (bits 0-31), state (32-33), generation (34-63). */
enum { SLOT_FREE = 0, SLOT_LIVE = 1, SLOT_DYING = 2 };

struct slot {
	_Atomic uint64_t word;
	_Atomic uint64_t start; /* the process's start time, 0 unknown */
	char pad[48];
};

struct reg {
	_Atomic uint64_t magic;
	_Atomic int ncpus; /* 1 + the highest CPU id ever registered */
	/* 1 once a process with --lewi-respect-cpuset=no attached: ended
	 * owners' CPUs become free, not disabled (popmon_lewi_shm_public). */
	_Atomic int public_cpus;
	char pad[48];
	/* A CPU's word: owner (bits 0-7), guest (8-15), state (16-17),
	 * version (32-63). All zero: disabled, nobody's. */
	_Atomic uint64_t cpu[POPMON_LEWI_MAX_CPUS];
	struct slot slot[POPMON_LEWI_MAX_SLOTS + 1];
};

static struct reg *R;

static inline int c_owner(uint64_t w) { return (int)(w & 0xff); }
static inline int c_guest(uint64_t w) { return (int)((w >> 8) & 0xff); }
static inline int c_state(uint64_t w) { return (int)((w >> 16) & 3); }
static inline uint64_t c_make(uint64_t old, int owner, int guest, int state)
{
	return (uint64_t)owner | (uint64_t)guest << 8 | (uint64_t)state << 16 | ((old >> 32) + 1) << 32;
}

static inline pid_t s_pid(uint64_t w) { return (pid_t)(w & 0xffffffffu); }
static inline int s_state(uint64_t w) { return (int)((w >> 32) & 3); }
static inline uint64_t s_gen(uint64_t w) { return w >> 34; }
static inline uint64_t s_make(pid_t pid, int state, uint64_t gen)
{
	return (uint64_t)(uint32_t)pid | (uint64_t)state << 32 | gen << 34;
}

static inline int cpu_ok(int cpu) { return R && cpu >= 0 && cpu < POPMON_LEWI_MAX_CPUS; }

/* The half of a CPU's word that holds owner, guest and state: what a
 * sleeping lender waits on (a futex is 32 bits). */
static inline uint32_t *c_futex(int cpu)
{
	return (uint32_t *)(void *)&R->cpu[cpu] + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

/* Wakes whoever sleeps on cpu's word (popmon_lewi_shm_wait_guest): its
 * guest changed. Shared between processes (no FUTEX_PRIVATE_FLAG). */
static void c_wake(int cpu)
{
	syscall(SYS_futex, c_futex(cpu), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void popmon_shm_registry_name(const char *kind, const char *key, char *buf, size_t n)
{
	char k[65];
	size_t i = 0;
	if (!key || !*key)
		key = "default";
	for (; key[i] && i < sizeof k - 1; i++) {
		unsigned char c = (unsigned char)key[i];
		k[i] = (isalnum(c) || c == '_' || c == '.' || c == '-') ? (char)c : '_';
	}
	k[i] = '\0';
	snprintf(buf, n, "/dev/shm/popmon-%s-%u-%s", kind, (unsigned)geteuid(), k);
}

void *popmon_shm_registry_map(const char *what, const char *name, size_t size, uint64_t magic, char *why,
			      size_t nwhy)
{
	/* open(2) on /dev/shm, as shm_open does (no -lrt on older C libraries). */
	int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(why, nwhy, "cannot open the %s registry %s: %s", what, name, strerror(errno));
		return NULL;
	}
	struct stat st;
	const char *bad = NULL;
	if (fstat(fd, &st) != 0)
		bad = "cannot be read";
	else if (st.st_uid != geteuid())
		bad = "belongs to another user";
	else if (!S_ISREG(st.st_mode))
		bad = "is not a plain shared-memory object";
	else if (st.st_mode & 077)
		bad = "is open to other users (mode not 0600)";
	else if (st.st_size == 0 && ftruncate(fd, (off_t)size) != 0)
		bad = "cannot be sized";
	else if (st.st_size != 0 && st.st_size != (off_t)size)
		bad = "has another layout (another popmon version)";
	if (bad) {
		snprintf(why, nwhy, "the %s registry %s %s", what, name, bad);
		close(fd);
		return NULL;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(why, nwhy, "cannot map the %s registry %s: %s", what, name, strerror(errno));
		return NULL;
	}
	/* All-zero is the empty registry: whoever comes first only stamps it. */
	_Atomic uint64_t *word = p;
	uint64_t m = 0;
	if (!atomic_compare_exchange_strong(word, &m, magic) && m != magic) {
		munmap(p, size);
		snprintf(why, nwhy, "the %s registry %s has another layout (another popmon version)", what, name);
		return NULL;
	}
	return p;
}

void popmon_lewi_shm_name(const char *key, char *buf, size_t n)
{
	popmon_shm_registry_name("lewi", key, buf, n);
}

int popmon_lewi_shm_attach(const char *key, char *why, size_t nwhy)
{
	if (R)
		return POPMON_DLB_SUCCESS;
	char name[128];
	popmon_lewi_shm_name(key, name, sizeof name);
	struct reg *r = popmon_shm_registry_map("LeWI", name, sizeof(struct reg), REG_MAGIC, why, nwhy);
	if (!r)
		return POPMON_DLB_ERR_NOSHMEM;
	R = r;
	return POPMON_DLB_SUCCESS;
}

int popmon_lewi_shm_alive(pid_t pid, uint64_t start)
{
	if (pid <= 0)
		return 0;
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && access("/proc/self/stat", F_OK) == 0)
			return 0;
		return kill(pid, 0) == 0 || errno == EPERM; /* no /proc */
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0; /* it went away between open and read */
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 1; /* unreadable: alive, never take a live one's CPUs */
	if (p[2] == 'Z' || p[2] == 'X' || p[2] == 'x')
		return 0;
	if (start && popmon_stat_start_time(buf) != start)
		return 0; /* the pid reused */
	return 1;
}

/* Removes slot s from every CPU word: its own CPUs become disabled and
 * nobody's (DLB's deregister with --lewi-respect-cpuset), those it was a
 * guest of go back to their owner (busy) or become idle. */
static void clean_entries(int s)
{
	for (int c = 0; c < POPMON_LEWI_MAX_CPUS; c++) {
		uint64_t w = atomic_load(&R->cpu[c]);
		for (;;) {
			int o = c_owner(w), g = c_guest(w), st = c_state(w);
			if (o != s && g != s)
				break;
			if (o == s) {
				o = 0;
				st = atomic_load(&R->public_cpus) ? POPMON_LEWI_LENT : POPMON_LEWI_DISABLED;
				if (g == s)
					g = 0;
			} else
				g = st == POPMON_LEWI_BUSY ? o : 0;
			if (atomic_compare_exchange_weak(&R->cpu[c], &w, c_make(w, o, g, st))) {
				if (o != 0 && g == 0)
					c_wake(c); /* its owner may sleep on it */
				break;
			}
		}
	}
}

/* Frees slot s held as DYING by cleaner (its word w). */
static void free_slot(int s, uint64_t w)
{
	atomic_store(&R->slot[s].start, 0);
	atomic_compare_exchange_strong(&R->slot[s].word, &w, s_make(0, SLOT_FREE, s_gen(w) + 1));
}

pid_t popmon_lewi_shm_pid(int slot)
{
	if (!R || slot < 1 || slot > POPMON_LEWI_MAX_SLOTS)
		return 0;
	uint64_t w = atomic_load(&R->slot[slot].word);
	return s_state(w) == SLOT_LIVE ? s_pid(w) : 0;
}

int popmon_lewi_shm_check(int slot, int me)
{
	if (!R || slot < 1 || slot > POPMON_LEWI_MAX_SLOTS || slot == me)
		return 0;
	struct slot *sl = &R->slot[slot];
	uint64_t w = atomic_load(&sl->word);
	int st = s_state(w);
	if (st == SLOT_FREE)
		return 0;
	uint64_t start = st == SLOT_LIVE ? atomic_load(&sl->start) : 0;
	if (popmon_lewi_shm_alive(s_pid(w), start))
		return 0; /* alive, or its cleaner is */
	/* Dead (or its cleaner died): whoever swaps the word cleans. */
	uint64_t mine = s_make(getpid(), SLOT_DYING, s_gen(w));
	if (!atomic_compare_exchange_strong(&sl->word, &w, mine))
		return 0;
	clean_entries(slot);
	free_slot(slot, mine);
	return 1;
}

int popmon_lewi_shm_sweep(int me)
{
	int n = 0;
	if (!R)
		return 0;
	for (int s = 1; s <= POPMON_LEWI_MAX_SLOTS; s++)
		if (s != me && s_state(atomic_load(&R->slot[s].word)) != SLOT_FREE)
			n += popmon_lewi_shm_check(s, me);
	return n;
}

void popmon_lewi_shm_deregister(int slot)
{
	if (!R || slot < 1 || slot > POPMON_LEWI_MAX_SLOTS)
		return;
	struct slot *sl = &R->slot[slot];
	uint64_t w = atomic_load(&sl->word);
	if (s_state(w) != SLOT_LIVE)
		return;
	uint64_t mine = s_make(s_pid(w), SLOT_DYING, s_gen(w));
	if (!atomic_compare_exchange_strong(&sl->word, &w, mine))
		return;
	clean_entries(slot);
	free_slot(slot, mine);
}

int popmon_lewi_shm_register(pid_t pid, const cpu_set_t *mask, int *slot)
{
	if (!R)
		return POPMON_DLB_ERR_NOSHMEM;
	popmon_lewi_shm_sweep(0);
	int s = 0;
	for (int i = 1; i <= POPMON_LEWI_MAX_SLOTS && !s; i++) {
		uint64_t w = atomic_load(&R->slot[i].word);
		if (s_state(w) == SLOT_FREE &&
		    atomic_compare_exchange_strong(&R->slot[i].word, &w, s_make(pid, SLOT_LIVE, s_gen(w))))
			s = i;
	}
	if (!s)
		return POPMON_DLB_ERR_NOMEM;
	atomic_store(&R->slot[s].start, popmon_proc_start_time(pid));
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, mask))
			continue;
		if (c >= POPMON_LEWI_MAX_CPUS) {
			popmon_lewi_shm_deregister(s);
			return POPMON_DLB_ERR_PERM;
		}
		uint64_t w = atomic_load(&R->cpu[c]);
		for (;;) {
			int o = c_owner(w), g = c_guest(w);
			if (o == s)
				break;
			if (o != 0) {
				if (popmon_lewi_shm_check(o, s)) {
					w = atomic_load(&R->cpu[c]);
					continue;
				}
				popmon_lewi_shm_deregister(s);
				return POPMON_DLB_ERR_PERM;
			}
			if (atomic_compare_exchange_weak(&R->cpu[c], &w, c_make(w, s, g ? g : s, POPMON_LEWI_BUSY)))
				break;
		}
	}
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET(c, mask)) {
			int n = atomic_load(&R->ncpus);
			while (n < c + 1 && !atomic_compare_exchange_weak(&R->ncpus, &n, c + 1))
				;
			break;
		}
	*slot = s;
	return POPMON_DLB_SUCCESS;
}

void popmon_lewi_shm_public(int ncpus)
{
	if (!R)
		return;
	atomic_store(&R->public_cpus, 1);
	if (ncpus > POPMON_LEWI_MAX_CPUS)
		ncpus = POPMON_LEWI_MAX_CPUS;
	for (int c = 0; c < ncpus; c++) {
		uint64_t w = atomic_load(&R->cpu[c]);
		while (c_owner(w) == 0 && c_guest(w) == 0 && c_state(w) == POPMON_LEWI_DISABLED &&
		       !atomic_compare_exchange_weak(&R->cpu[c], &w, c_make(w, 0, 0, POPMON_LEWI_LENT)))
			;
	}
	int n = atomic_load(&R->ncpus);
	while (n < ncpus && !atomic_compare_exchange_weak(&R->ncpus, &n, ncpus))
		;
}

int popmon_lewi_shm_update_ownership(int me, const cpu_set_t *mask)
{
	if (!R || me < 1 || me > POPMON_LEWI_MAX_SLOTS)
		return POPMON_DLB_ERR_NOSHMEM;
	int high = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, mask))
			high = c;
	if (high >= POPMON_LEWI_MAX_CPUS)
		return POPMON_DLB_ERR_PERM;
	int changed = 0;
	for (int c = 0; c < POPMON_LEWI_MAX_CPUS; c++) {
		int mine = c <= high && CPU_ISSET(c, mask);
		uint64_t w = atomic_load(&R->cpu[c]);
		for (;;) {
			int o = c_owner(w), g = c_guest(w);
			uint64_t n;
			if (mine && o != me)
				n = c_make(w, me, g ? g : me, POPMON_LEWI_BUSY);
			else if (!mine && o == me)
				n = c_make(w, 0, g == me ? 0 : g, POPMON_LEWI_DISABLED);
			else
				break;
			if (atomic_compare_exchange_weak(&R->cpu[c], &w, n)) {
				changed = 1;
				c_wake(c); /* a lender sleeping on it: not its CPU any more */
				break;
			}
		}
	}
	int n = atomic_load(&R->ncpus);
	while (n < high + 1 && !atomic_compare_exchange_weak(&R->ncpus, &n, high + 1))
		;
	return changed ? POPMON_DLB_SUCCESS : POPMON_DLB_NOUPDT;
}

int popmon_lewi_shm_ncpus(void)
{
	return R ? atomic_load_explicit(&R->ncpus, memory_order_relaxed) : 0;
}

int popmon_lewi_shm_cpu(int cpu, struct popmon_lewi_cpu *out)
{
	if (!cpu_ok(cpu))
		return -1;
	uint64_t w = atomic_load(&R->cpu[cpu]);
	out->owner = c_owner(w);
	out->guest = c_guest(w);
	out->state = c_state(w);
	return 0;
}

/* The operations: read, decide, swap; again when another changed the word. */

int popmon_lewi_shm_lend(int me, int cpu)
{
	if (!cpu_ok(cpu))
		return POPMON_DLB_ERR_PERM;
	uint64_t w = atomic_load(&R->cpu[cpu]);
	for (;;) {
		int o = c_owner(w), g = c_guest(w), st = c_state(w);
		if (st == POPMON_LEWI_DISABLED)
			return POPMON_DLB_SUCCESS;
		if (o == me)
			st = POPMON_LEWI_LENT;
		if (g == me)
			g = 0;
		if (st == c_state(w) && g == c_guest(w))
			return POPMON_DLB_SUCCESS;
		if (atomic_compare_exchange_weak(&R->cpu[cpu], &w, c_make(w, o, g, st))) {
			if (o != me && c_guest(w) == me)
				c_wake(cpu); /* a borrowed CPU back: its owner may sleep on it */
			return POPMON_DLB_SUCCESS;
		}
	}
}

void popmon_lewi_shm_wait_guest(int cpu, int guest, long ns)
{
	if (!cpu_ok(cpu) || ns <= 0)
		return;
	uint64_t w = atomic_load(&R->cpu[cpu]);
	if (c_guest(w) != guest)
		return;
	uint32_t seen = (uint32_t)w; /* owner, guest, state: c_futex's half */
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	/* EAGAIN (changed already), EINTR, ETIMEDOUT: the caller polls anyway. */
	syscall(SYS_futex, c_futex(cpu), FUTEX_WAIT, seen, &ts, NULL, 0);
}

/* The owner's half of reclaim and acquire: busy again; mine when idle. */
static int take_back(int me, int cpu)
{
	uint64_t w = atomic_load(&R->cpu[cpu]);
	for (int checked = 0;;) {
		if (c_owner(w) != me)
			return POPMON_DLB_ERR_PERM;
		int g = c_guest(w);
		int ret = g == me ? POPMON_DLB_NOUPDT : g == 0 ? POPMON_DLB_SUCCESS : POPMON_DLB_NOTED;
		uint64_t n = c_make(w, me, g == 0 ? me : g, POPMON_LEWI_BUSY);
		if ((n & 0xffffffffu) != (w & 0xffffffffu) && !atomic_compare_exchange_weak(&R->cpu[cpu], &w, n))
			continue;
		if (ret != POPMON_DLB_NOTED || checked)
			return ret;
		/* A guest in the way: if it is dead, the CPU is simply back. */
		checked = 1;
		if (!popmon_lewi_shm_check(g, me))
			return ret;
		w = atomic_load(&R->cpu[cpu]);
		if (c_owner(w) == me && c_guest(w) == me)
			return POPMON_DLB_SUCCESS; /* the dead guest's cleaning gave it back */
	}
}

int popmon_lewi_shm_reclaim(int me, int cpu)
{
	if (!cpu_ok(cpu) || c_owner(atomic_load(&R->cpu[cpu])) != me)
		return POPMON_DLB_ERR_PERM;
	return take_back(me, cpu);
}

int popmon_lewi_shm_borrow(int me, int cpu)
{
	if (!cpu_ok(cpu))
		return POPMON_DLB_ERR_PERM;
	uint64_t w = atomic_load(&R->cpu[cpu]);
	for (;;) {
		int o = c_owner(w), g = c_guest(w), st = c_state(w);
		if (st == POPMON_LEWI_DISABLED)
			return POPMON_DLB_ERR_PERM;
		if (g != 0 || (o != me && st != POPMON_LEWI_LENT))
			return POPMON_DLB_NOUPDT;
		if (atomic_compare_exchange_weak(&R->cpu[cpu], &w, c_make(w, o, me, o == me ? POPMON_LEWI_BUSY : st)))
			return POPMON_DLB_SUCCESS;
	}
}

int popmon_lewi_shm_acquire(int me, int cpu)
{
	if (!cpu_ok(cpu))
		return POPMON_DLB_ERR_PERM;
	for (int checked = 0;;) {
		uint64_t w = atomic_load(&R->cpu[cpu]);
		int o = c_owner(w), g = c_guest(w), st = c_state(w);
		if (g == me)
			return POPMON_DLB_NOUPDT;
		if (o == me)
			return take_back(me, cpu);
		int ret = popmon_lewi_shm_borrow(me, cpu);
		if (ret != POPMON_DLB_NOUPDT || checked || g == 0 || st != POPMON_LEWI_LENT)
			return ret;
		/* Lent, but a guest holds it: free if that guest is dead. */
		checked = 1;
		if (!popmon_lewi_shm_check(g, me))
			return ret;
	}
}

int popmon_lewi_shm_return(int me, int cpu)
{
	if (!cpu_ok(cpu))
		return POPMON_DLB_ERR_PERM;
	uint64_t w = atomic_load(&R->cpu[cpu]);
	for (;;) {
		int o = c_owner(w), g = c_guest(w), st = c_state(w);
		if (o == me || g != me || st == POPMON_LEWI_LENT)
			return POPMON_DLB_NOUPDT;
		/* Reclaimed (busy): the owner's again; disabled (no owner): idle. */
		if (atomic_compare_exchange_weak(&R->cpu[cpu], &w, c_make(w, o, st == POPMON_LEWI_BUSY ? o : 0, st)))
			return POPMON_DLB_SUCCESS;
	}
}
