/* drom_shm.h: the node-local process-mask registry DROM works on
 * (drom_shm.c): DLB's shmem_procinfo without its lock. It calls only the
 * LeWI registry's liveness helpers (lewi_shm.h), nothing else of popmon's.
 *
 * One POSIX shared-memory object per user and key
 * (/dev/shm/popmon-drom-<uid>-<key>, mode 0600, owned by the user: anything
 * else is refused), of a fixed layout that internal/drom (popmon taskset)
 * reads and writes too; the offsets below are the format's one definition
 * (internal/drom's constants are tested against them):
 *
 *   header (64 bytes): magic u64 @0 ("POPMDRO" + version 1), ncpus u32 @8
 *     (the node's CPUs, the largest get_nprocs_conf of whoever attached)
 *   cpu[1024] u64 @64: the CPU's owner slot (bits 0-7, 0: free) and a
 *     version (bits 32-63, one more at every change)
 *   slot[256] @8256, 320 bytes each (slot 0 unused):
 *     word u64 @0: pid (bits 0-31), state (32-33: 0 free, 1 live, 2 being
 *       freed), generation (34-63)
 *     start u64 @8: the process's start time (/proc/PID/stat field 22)
 *     flags u64 @16: bit 0 preregistered (DLB_DROM_PreInit), bit 1 return
 *       stolen CPUs when it ends (DLB_RETURN_STOLEN)
 *     seq u64 @24: one more before and after each change of its CPUs by
 *       someone else (the process's cheap "anything new?" check)
 *     cur[16] u64 @32: its current mask (1024 bits), written by the process
 *       when it adopts a new one, and at registration
 *     stolen[16] u64 @160: the CPUs others took from it
 *
 * A process's future mask (DLB's future_process_mask) is the set of CPUs
 * whose owner is its slot; it is dirty (a new mask pending) while that
 * differs from cur. Every change is a compare-and-swap of one word: no lock,
 * so a killed process leaves none held, only entries the next toucher
 * cleans (its CPUs become free, or go back to those it stole them from with
 * DLB_RETURN_STOLEN). Setting a mask of several CPUs is several swaps: two
 * tools changing the same CPUs at the same instant leave each CPU with one
 * owner, the last one's. */
#ifndef POPMON_DROM_SHM_H
#define POPMON_DROM_SHM_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define POPMON_DROM_MAX_CPUS 1024
#define POPMON_DROM_MAX_SLOTS 255
#define POPMON_DROM_MAGIC 0x504f504d44524f01ULL
#define POPMON_DROM_OFF_CPUS 64
#define POPMON_DROM_OFF_SLOTS 8256
#define POPMON_DROM_SLOT_SIZE 320
#define POPMON_DROM_SIZE (POPMON_DROM_OFF_SLOTS + (POPMON_DROM_MAX_SLOTS + 1) * POPMON_DROM_SLOT_SIZE)
#define POPMON_DROM_PREREGISTERED 1u
#define POPMON_DROM_RETURN_STOLEN 2u

/* DLB's codes lewi_shm.h does not name (<dlb_errors.h>). */
enum { POPMON_DLB_ERR_PDIRTY = -7, POPMON_DLB_ERR_TIMEOUT = -9 };

/* DLB's DROM flags (<dlb_types.h>). */
enum {
	POPMON_DROM_FLAGS_NONE = 0, POPMON_DROM_STEAL_CPUS = 1, POPMON_DROM_RETURN_STOLEN_FLAG = 2,
	POPMON_DROM_SYNC_QUERY = 4, POPMON_DROM_SYNC_NOW = 8, POPMON_DROM_NO_SYNC = 16,
};

/* Maps the registry of this user and key (NULL or "": "default"; characters
 * other than [A-Za-z0-9_.-] become '_', at most 64) once per process.
 * DLB_SUCCESS, or DLB_ERR_NOSHMEM with why (one sentence). */
int popmon_drom_shm_attach(const char *key, char *why, size_t nwhy);
int popmon_drom_shm_attached(void);

/* The object's name for key, into buf. */
void popmon_drom_shm_name(const char *key, char *buf, size_t n);

/* The live slot of pid (dead ones are cleaned on the way), 0 none. */
int popmon_drom_shm_find(pid_t pid);

/* Registers pid with mask (DLB's shmem_procinfo init, and PreInit with
 * preinit set: the slot is preregistered for a process that will start).
 * A preregistered slot of pid is inherited (DLB_NOTED when its mask is not
 * mask: *out is what it holds now, to adopt), and so is pid's own live slot
 * (registered before an exec) and the preregistered slot of preinit_pid
 * (> 0: the tool that started this process through a launcher) by a
 * process on exactly its CPUs; a process on some of them takes those from
 * it (the slot goes when it has none left). Without DLB_STEAL_CPUS, a CPU
 * of another live process is DLB_ERR_PERM (nothing registered); with it, it
 * is taken (DLB_ERR_PERM when that process has a change pending). Codes:
 * DLB_SUCCESS, DLB_NOTED, DLB_ERR_INIT (preinit: pid registered already),
 * DLB_ERR_NOMEM (no free slot), DLB_ERR_PERM, DLB_ERR_NOSHMEM. */
int popmon_drom_shm_register(pid_t pid, pid_t preinit_pid, const cpu_set_t *mask, int preinit, int flags, int *slot,
			     cpu_set_t *out);

/* Frees slot: its CPUs become free, or go back to the processes they were
 * stolen from with return_stolen (or the slot's own flag). */
void popmon_drom_shm_unregister(int slot, int return_stolen);

/* The slot's pid (0 when free), whether it is preregistered. */
pid_t popmon_drom_shm_pid(int slot, int *prereg);

/* The slot's current and future masks; returns whether it is dirty. */
int popmon_drom_shm_masks(int slot, cpu_set_t *cur, cpu_set_t *fut);

/* DLB's set_new_mask: slot's future mask becomes mask, CPUs of other live
 * processes stolen (they become dirty), CPUs not in mask freed. DLB_SUCCESS,
 * DLB_ERR_PDIRTY (slot has a change pending; for self, the caller's own
 * slot, unless mask is that change),
 * DLB_ERR_PERM (a CPU's owner has a change pending, or a CPU out of
 * range: nothing changed). */
int popmon_drom_shm_set(int slot, const cpu_set_t *mask, int self);

/* The process side: a new mask? The cheap check is one load of the slot's
 * seq against *seen. DLB_SUCCESS with the new mask in *mask (now current),
 * DLB_NOUPDT when nothing is pending. */
int popmon_drom_shm_poll(int slot, uint64_t *seen, cpu_set_t *mask);

/* The pid of the live process that owns cpu (0: free or out of range). */
pid_t popmon_drom_shm_owner(int cpu);

/* The slot's change counter (the cheap check's load). */
uint64_t popmon_drom_shm_seq(int slot);

/* DLB_DROM_RecoverStolenCpus: the slot's stolen CPUs that are free now are
 * its again. DLB_SUCCESS (it had stolen CPUs), DLB_NOUPDT (none). */
int popmon_drom_shm_recover(int slot);

/* The live slots' pids (max at most); their number. */
int popmon_drom_shm_pids(pid_t *list, int max);

/* Checks every slot but me for liveness and frees the dead ones; their
 * number. */
int popmon_drom_shm_sweep(int me);

/* The node's CPUs as the registry knows them (0 not attached). */
int popmon_drom_shm_ncpus(void);

#endif /* POPMON_DROM_SHM_H */
