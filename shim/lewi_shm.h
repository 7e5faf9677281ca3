/* lewi_shm.h: the node-local CPU registry LeWI works on (lewi_shm.c), a leaf
 * of the subsystems: it calls nothing of popmon's but the bottom layer.
 *
 * One POSIX shared-memory object per user and key
 * (/dev/shm/popmon-lewi-<uid>-<key>, mode 0600, owned by the user: anything
 * else is refused), of a fixed layout:
 * a table of process slots and one 64-bit word per CPU holding the CPU's
 * owner (a slot), its guest (the slot using it now) and its state from the
 * owner's side (DLB's CPU_DISABLED, CPU_BUSY, CPU_LENT), with a version
 * counter against ABA. Every change is one compare-and-swap of one word:
 * there is no lock, so a killed process can leave none held; it can leave
 * its slot and its CPU entries, which whoever touches the registry next
 * cleans (its CPUs go back: popmon_lewi_shm_sweep and popmon_lewi_shm_check).
 * A process is dead when /proc/PID/stat is gone or says zombie, or names
 * another start time (popmon_proc_start_time of base/process.h: the pid
 * reused); without /proc, kill(PID, 0).
 *
 * The per-CPU operations are DLB's shmem_cpuinfo ones in polling mode (no
 * request queues) and return DLB's codes (DLB_SUCCESS, DLB_NOUPDT,
 * DLB_NOTED, DLB_ERR_PERM, ...; <dlb_errors.h>' values). None allocates;
 * none makes a system call but the liveness checks (sweep, check),
 * attach/register/deregister, the lender's wait (wait_guest) and a guest's
 * wake-up of its owner when it gives a CPU back (lend of a borrowed CPU:
 * one futex wake). */
#ifndef POPMON_LEWI_SHM_H
#define POPMON_LEWI_SHM_H

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

/* The registry's sizes: CPU ids 0..POPMON_LEWI_MAX_CPUS-1, slots
 * 1..POPMON_LEWI_MAX_SLOTS (0 is nobody). */
#define POPMON_LEWI_MAX_CPUS 1024
#define POPMON_LEWI_MAX_SLOTS 255

/* A CPU's state from its owner's side (DLB's cpu_state_t). */
enum { POPMON_LEWI_DISABLED = 0, POPMON_LEWI_BUSY = 1, POPMON_LEWI_LENT = 2 };

/* DLB's return codes (<dlb_errors.h>). */
enum {
	POPMON_DLB_NOUPDT = 2, POPMON_DLB_NOTED = 1, POPMON_DLB_SUCCESS = 0, POPMON_DLB_ERR_UNKNOWN = -1,
	POPMON_DLB_ERR_NOINIT = -2, POPMON_DLB_ERR_INIT = -3, POPMON_DLB_ERR_DISBLD = -4,
	POPMON_DLB_ERR_NOSHMEM = -5, POPMON_DLB_ERR_NOPROC = -6, POPMON_DLB_ERR_PERM = -8,
	POPMON_DLB_ERR_NOCOMP = -12, POPMON_DLB_ERR_NOMEM = -14, POPMON_DLB_ERR_NOPOL = -15,
	POPMON_DLB_ERR_NOLEWI = -17,
};

/* One CPU as read at a moment. */
struct popmon_lewi_cpu {
	int owner, guest; /* slots, 0 nobody */
	int state;        /* POPMON_LEWI_* */
};

/* Maps the registry of this user and key (NULL or "": "default"; characters
 * other than [A-Za-z0-9_.-] become '_', at most 64) once per process; a
 * child of fork keeps its parent's mapping. DLB_SUCCESS, or
 * DLB_ERR_NOSHMEM with why (one sentence) in why. */
int popmon_lewi_shm_attach(const char *key, char *why, size_t nwhy);

/* The object's name for key (as attach opens it), into buf. */
void popmon_lewi_shm_name(const char *key, char *buf, size_t n);

/* The node registries' common part (LeWI's here, DROM's in drom_shm.c).
 * The name of kind's object for key: /dev/shm/popmon-KIND-EUID-KEY (KEY
 * as attach says), into buf. */
void popmon_shm_registry_name(const char *kind, const char *key, char *buf, size_t n);
/* Opens (creating it, 0600) the object name of size bytes whose first
 * 64-bit word is its layout's magic, refuses a hostile one (another
 * user's, open to others, not a plain file, another size or magic), maps
 * it and stamps the magic into an all-zero one: the mapping, or NULL with
 * one sentence in why ("the WHAT registry NAME ..."). */
void *popmon_shm_registry_map(const char *what, const char *name, size_t size, uint64_t magic, char *why,
			      size_t nwhy);

/* Takes a free slot for process pid and registers the CPUs of mask as its
 * own (owner and guest it, busy); dead processes' entries are cleaned first.
 * DLB_SUCCESS and *slot; DLB_ERR_NOSHMEM (not attached), DLB_ERR_NOMEM (no
 * free slot), DLB_ERR_PERM (a CPU of mask is another live process's, or out
 * of range: nothing registered). */
int popmon_lewi_shm_register(pid_t pid, const cpu_set_t *mask, int *slot);

/* Makes mask slot me's own CPUs (DLB's shmem_cpuinfo__update_ownership): a
 * CPU of mask it did not own becomes its, busy (stolen from a live owner,
 * whose thread there stays its guest until it returns it at its next
 * region); a CPU it owned outside mask becomes disabled and nobody's (a
 * guest there keeps it until it returns it). DLB_SUCCESS when a CPU
 * changed, DLB_NOUPDT when none did, DLB_ERR_NOSHMEM (not attached),
 * DLB_ERR_PERM (a CPU of mask out of range: nothing changed). */
int popmon_lewi_shm_update_ownership(int me, const cpu_set_t *mask);

/* --lewi-respect-cpuset=no (DLB's !respect_cpuset): CPUs 0..ncpus-1 that no
 * process owns (disabled, nobody's) become free (lent by nobody: any
 * process may borrow them), and from now on the CPUs of a process that
 * ends or dies become free instead of disabled, whoever cleans them (the
 * registry keeps this). */
void popmon_lewi_shm_public(int ncpus);

/* Gives slot's CPUs up (DLB's deregister: owned CPUs become disabled and
 * nobody's, borrowed ones go back) and frees the slot. */
void popmon_lewi_shm_deregister(int slot);

/* The per-CPU operations of slot me on cpu, as DLB's (lend_cpu, reclaim_cpu,
 * acquire_cpu, borrow_cpu, return_cpu in polling mode). Lend: DLB_SUCCESS
 * (or DLB_ERR_PERM out of range). Reclaim: DLB_SUCCESS (was idle, now mine),
 * DLB_NOTED (a guest still runs there: it returns it), DLB_NOUPDT (mine
 * already), DLB_ERR_PERM (not mine). Acquire: reclaim when mine, borrow when
 * lent and idle; DLB_NOUPDT when guest already or busy elsewhere,
 * DLB_ERR_PERM when disabled. Borrow: DLB_SUCCESS, DLB_NOUPDT (not
 * available), DLB_ERR_PERM (disabled). Return: DLB_SUCCESS when I was the
 * guest of a CPU its owner reclaimed (or that has no owner any more),
 * DLB_NOUPDT otherwise. Reclaim and acquire check a guest in the way for
 * liveness first (a dead guest's CPU is simply taken back). */
int popmon_lewi_shm_lend(int me, int cpu);
int popmon_lewi_shm_reclaim(int me, int cpu);
int popmon_lewi_shm_acquire(int me, int cpu);
int popmon_lewi_shm_borrow(int me, int cpu);
int popmon_lewi_shm_return(int me, int cpu);

/* Sleeps while guest is cpu's guest, for at most ns: until the word
 * changes (a futex on it, shared between processes; woken at once when
 * the guest gives the CPU back with popmon_lewi_shm_lend) or the time is up.
 * Returns at once when guest is not the guest any more. */
void popmon_lewi_shm_wait_guest(int cpu, int guest, long ns);

/* 1 + the highest CPU id any process registered (0 none): the CPUs worth
 * looking at. */
int popmon_lewi_shm_ncpus(void);

/* Reads cpu's word (0 on success, -1 out of range or not attached). */
int popmon_lewi_shm_cpu(int cpu, struct popmon_lewi_cpu *out);

/* The pid of a live slot (0 when free or being cleaned). */
pid_t popmon_lewi_shm_pid(int slot);

/* Checks slot's process for liveness and, dead, cleans its entries: its own
 * CPUs become disabled and nobody's, the CPUs it was a guest of go back to
 * their owners (busy) or idle (lent). Returns 1 when it cleaned, 0 otherwise.
 * me (may be 0) is never checked. */
int popmon_lewi_shm_check(int slot, int me);

/* popmon_lewi_shm_check on every slot but me; the number cleaned. */
int popmon_lewi_shm_sweep(int me);

/* Whether process pid, started at start (clock ticks since boot, /proc's
 * field 22; 0: not compared), is alive (zombies are not). */
int popmon_lewi_shm_alive(pid_t pid, uint64_t start);

#endif /* POPMON_LEWI_SHM_H */
