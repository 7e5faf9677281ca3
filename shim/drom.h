/* drom.h: DLB's DROM for this process and for tools (drom.c) on the node's
 * process-mask registry (drom_shm.h): the process side (registration at
 * start-up, the check before each parallel region and at DLB_PollDROM that
 * adopts a new mask: thread affinity and the OpenMP team size) and DLB's
 * DROM calls (<dlb_drom.h>, which dlb_compat.c forwards here, with DLB's
 * return codes). DROM is on in a process with DLB_ARGS=--drom or
 * POPMON_DROM=1 (popmon run --drom); the registry's key is POPMON_DROM_KEY,
 * else DLB_ARGS' --shm-key. The administrator calls (DLB_DROM_*) work
 * without it. docs/drom.md. */
#ifndef POPMON_DROM_H
#define POPMON_DROM_H

#include <sched.h>
#include <stdint.h>

#include "base/threads.h"

/* Whether DROM is asked for in this process. */
int popmon_drom_enabled(void);

/* Registers this process (its affinity now) when DROM is asked for; a
 * failure says why in one popmon: line and leaves DROM off. Idempotent. */
void popmon_drom_start(void);

/* Gives the CPUs up (at exit; a dead process's are freed by the next
 * toucher). */
void popmon_drom_stop(void);

/* Its own CPUs over time, once it registered (1; 0 never): the CPUs it
 * registered (*own_cpus) and how much CPU time its CPUs differed from them
 * since, as masks were adopted (*delta, popmon_now() ticks x CPUs, signed). */
int popmon_drom_own(int *own_cpus, int64_t *delta);

/* Where DROM also keeps its own CPUs for readers outside the process (the
 * live file's, registered by core.c; NULL, or any pointer NULL: none): *on
 * is set to 1 once it registered; *own_cpus the CPUs it registered,
 * *own_delta their change up to the tick *own_since (as popmon_drom_own's
 * delta), since which it has had *own_now, each time they change. */
struct popmon_drom_words {
	uint32_t *on;
	struct popmon_own_words own;
};
void popmon_drom_observe(const struct popmon_drom_words *w);

/* Before a parallel region (OMPT's parallel_begin, the GOMP_parallel*
 * wrappers): when a tool set a new mask, adopts it (every thread's affinity,
 * omp_set_num_threads, the live file's CPUs). One atomic load otherwise. */
void popmon_drom_parallel_begin(void);

/* The program's set_process_mask callback (DLB_CallbackSet), called by
 * DLB_PollDROM_Update and a process's own DLB_DROM_SetProcessMask after
 * the new mask is adopted, as DLB calls it; NULL none. */
void popmon_drom_mask_hook(void (*fn)(const cpu_set_t *));

/* DLB's calls (<dlb.h>, <dlb_drom.h>), same names without the prefix. */
int popmon_drom_poll(int *ncpus, cpu_set_t *mask);
int popmon_drom_poll_update(void);
int popmon_drom_attach(void);
int popmon_drom_detach(void);
int popmon_drom_get_num_cpus(int *ncpus);
int popmon_drom_get_pid_list(int *pidlist, int *nelems, int max_len);
int popmon_drom_get_process_mask(int pid, cpu_set_t *mask, int flags);
int popmon_drom_set_process_mask(int pid, const cpu_set_t *mask, int flags);
int popmon_drom_set_process_mask_str(int pid, const char *mask, int flags);
int popmon_drom_preinit(int pid, const cpu_set_t *mask, int flags, char ***next_environ);
int popmon_drom_post_finalize(int pid, int flags);
int popmon_drom_recover_stolen_cpus(int pid);

/* Parses a CPU list as DLB does ("0,5-7", "0xE1", "0b11100001") into mask;
 * 0, or -1 when it is not one. */
int popmon_drom_parse_mask(const char *s, cpu_set_t *mask);

#endif /* POPMON_DROM_H */
