/* lewi.h: DLB's LeWI for this process (lewi.c) on the node's CPU registry
 * (lewi_shm.h): the semantics of DLB's LeWI calls (DLB_Lend, DLB_Reclaim,
 * DLB_Borrow, ... of <dlb.h>, which dlb_compat.c forwards here, with DLB's
 * return codes) and the two hooks the MPI and OpenMP sides call.
 *
 * LeWI is on with DLB_ARGS=--lewi, POPMON_LEWI=1 or popmon run/exec --lewi
 * (POPMON_LEWI_ARGS); its options: --lewi-keep-one-cpu, --lewi-mpi-calls,
 * --lewi-barrier, --lewi-max-parallelism, --shm-key (or POPMON_LEWI_KEY).
 * Off, every call returns DLB_ERR_NOLEWI. The automatic part (the
 * popmon_lewi_start ... popmon_lewi_parallel_end below) registers the
 * process at MPI_Init or its first parallel region, and is what the MPI
 * wrappers and the OpenMP side call (docs/lewi.md).
 *
 * The state is the process's (DLB's subprocess descriptor), not a thread's;
 * a child of fork starts unregistered. No call allocates memory. */
#ifndef POPMON_LEWI_H
#define POPMON_LEWI_H

#include <sched.h>
#include <stdint.h>

#include "base/threads.h"

/* Whether LeWI is asked for (DLB_ARGS --lewi, POPMON_LEWI). */
int popmon_lewi_enabled(void);

/* Registers this process's CPUs (mask; NULL: its affinity now) in the
 * registry: DLB_SUCCESS, DLB_ERR_NOLEWI (not asked for), DLB_ERR_INIT
 * (already), DLB_ERR_NOSHMEM, DLB_ERR_NOMEM, DLB_ERR_PERM (DLB_Init's). A
 * failure says why in one popmon: line. */
int popmon_lewi_init(const cpu_set_t *mask);

/* Gives the CPUs up (owned ones disabled, borrowed ones back): DLB_SUCCESS,
 * DLB_NOUPDT when not registered. */
int popmon_lewi_finalize(void);

/* Whether this process is registered (LeWI on and initialized). */
int popmon_lewi_ready(void);

/* The registry slot of this process (0 when not registered). */
int popmon_lewi_slot(void);

/* DLB's LeWI calls (<dlb.h>), same names without the prefix, same codes;
 * DLB_ERR_NOLEWI when LeWI is off, DLB_ERR_NOINIT when not registered. */
int popmon_lewi_lend(void);
int popmon_lewi_lend_cpu(int cpuid);
int popmon_lewi_lend_cpus(int ncpus);
int popmon_lewi_lend_cpu_mask(const cpu_set_t *mask);
int popmon_lewi_reclaim(void);
int popmon_lewi_reclaim_cpu(int cpuid);
int popmon_lewi_reclaim_cpus(int ncpus);
int popmon_lewi_reclaim_cpu_mask(const cpu_set_t *mask);
int popmon_lewi_acquire_cpu(int cpuid);
int popmon_lewi_acquire_cpus(int ncpus);
int popmon_lewi_acquire_cpu_mask(const cpu_set_t *mask);
int popmon_lewi_acquire_cpus_in_mask(int ncpus, const cpu_set_t *mask);
int popmon_lewi_borrow(void);
int popmon_lewi_borrow_cpu(int cpuid);
int popmon_lewi_borrow_cpus(int ncpus);
int popmon_lewi_borrow_cpu_mask(const cpu_set_t *mask);
int popmon_lewi_borrow_cpus_in_mask(int ncpus, const cpu_set_t *mask);
int popmon_lewi_return(void);
int popmon_lewi_return_cpu(int cpuid);
int popmon_lewi_return_cpu_mask(const cpu_set_t *mask);
int popmon_lewi_check_cpu_availability(int cpuid);
int popmon_lewi_set_max_parallelism(int max);
int popmon_lewi_unset_max_parallelism(void);

/* The MPI side's hooks: this process enters a blocking MPI call (it lends
 * its CPUs, all but its first one with --lewi-keep-one-cpu, and gives back
 * the CPUs it borrowed) and leaves it (it reclaims what it lent: DLB_NOTED
 * while a guest still runs on one, which that guest returns at its next
 * parallel region). Nested or concurrent calls from several threads lend at
 * the first entry and reclaim at the last exit. DLB's codes; DLB_NOUPDT when
 * not registered or nothing to do. */
int popmon_lewi_into_blocking_call(void);
int popmon_lewi_out_of_blocking_call(void);

/* The lending wait's sleep between two polls of a blocking call that lent
 * (after popmon_lewi_into_blocking_call). While another process runs on the
 * CPU it lent, it sleeps until that process gives the CPU back (it wakes it
 * then: the guest's own blocking call began or ended, which in a collective
 * is when this one can end too) or for at most
 * POPMON_LEWI_BORROWED_SLEEP_NS, and returns 1: polling more often would
 * only take the CPU from the guest. Otherwise it sleeps ns and returns 0. */
#define POPMON_LEWI_BORROWED_SLEEP_NS 1000000L
int popmon_lewi_lent_sleep(long ns);

/* A blocking call of the lending kinds begins (before its first poll): the
 * CPUs the process borrowed go back now, and their owners, sleeping in
 * their own blocking calls, are woken (popmon_lewi_lent_sleep). Its
 * threads run no region while it waits, and in a collective the owners
 * are waiting for this very call: woken now, they leave it with it instead
 * of a sleep later; kept, its next region would run a thread on a CPU its
 * owner is using again, and wait for it. Nothing to do (one atomic
 * exchange) when it borrowed nothing. */
void popmon_lewi_blocking_call_begins(void);

/* A blocking call ended without lending (it completed within its first
 * polls); what it borrowed since it began goes back as above. After any
 * blocking call's end (this, or leaving a lending one) the process's
 * parallel regions borrow nothing for 1 ms: the other ranks of the same
 * collective are leaving it too, and a CPU borrowed from one of them would
 * be reclaimed at once and shared for a whole region. */
void popmon_lewi_blocking_call_ended(void);

/* The OpenMP side's hook, before a parallel region: returns the CPUs its
 * owners reclaimed (and those of processes that died), borrows the idle lent
 * ones (within the maximum parallelism), and writes the CPUs the region may
 * use into cpus (at most max: its own busy CPUs first, then the borrowed
 * ones). Returns how many threads the region may use (at least 1), or 0 when
 * LeWI is not active in this process (the runtime's own choice stands). Dead
 * processes are looked for at most every 100 ms. */
int popmon_lewi_team(int *cpus, int max);

/* The OpenMP side's hook after a parallel region: the CPUs the region
 * borrowed stop counting as borrowed time (the next popmon_lewi_team does it
 * too, for a runtime without an end event). */
void popmon_lewi_team_end(void);

/* What LeWI moved in this process, in popmon_now() ticks (popmon_ticks_to_ns
 * converts) times CPUs, open intervals counted up to now (all 0 when it
 * never registered; kept after it deregistered). The DLB calls a program makes itself (DLB_Lend,
 * DLB_Borrow, ...) are not counted. */
struct popmon_lewi_totals {
	int own_cpus;         /* the own CPUs it registered */
	uint64_t lent;        /* own CPUs lent, from entering to leaving blocking calls (used or not) */
	uint64_t lent_caller; /* of lent, the CPU the lending thread ran on (plain ticks: its wait on no CPU of its own) */
	uint64_t borrowed;    /* other processes' CPUs in its parallel regions (popmon_lewi_team to _team_end) */
	int64_t own_delta;    /* its own CPUs' change by DROM over time (popmon_lewi_update_mask), against own_cpus */
};
void popmon_lewi_totals(struct popmon_lewi_totals *t);

/* Where LeWI also keeps its totals for readers outside the process (the
 * live file's, registered by core.c; NULL, or any pointer NULL: none):
 * *on is set to 1 when LeWI starts in the process, the others take
 * popmon_lewi_totals' closed intervals (without the open ones) each time a
 * lend, a borrowing region or an ownership change ends, so that a process
 * killed while running leaves what it had moved so far; own: its own CPUs
 * over time (base/process.h). */
struct popmon_lewi_words {
	uint32_t *on;
	uint64_t *lent, *lent_caller, *borrowed;
	struct popmon_own_words own;
};
void popmon_lewi_observe(const struct popmon_lewi_words *w);

/* DROM gave the process a new mask (drom.c, when it adopts one): its own CPUs
 * in the registry follow (popmon_lewi_shm_update_ownership: the new ones its,
 * taken from their owners, who give them back at their next region; the
 * others nobody's), and so do the CPUs its blocking calls lend and its own
 * CPU time. DLB_SUCCESS, DLB_NOUPDT (nothing changed in the registry, or
 * not registered), DLB_ERR_PERM (a CPU out of the registry's range). */
int popmon_lewi_update_mask(const cpu_set_t *mask);

/* ---- automatic LeWI (popmon run --lewi, DLB_ARGS=--lewi) ---- */

/* The blocking MPI calls that take LeWI's path now (POPMON_LEWI_CALLS_*
 * bits of base/dlbargs.h): 0 while LeWI is not asked for. Set when it is
 * asked for even if this process could not register (then nothing is lent,
 * but the call waits the same way: every rank must take the same path, a
 * nonblocking collective never matching a blocking one). The generated MPI
 * wrappers read it (one relaxed load and a branch per blocking call). */
extern int popmon_lewi_calls;

/* Registers the process (its affinity now) when LeWI is asked for; once,
 * at MPI_Init or at the first parallel region. A process a program already
 * registered with DLB_Init is taken as it is. */
void popmon_lewi_start(void);

/* Gives the CPUs up (MPI_Finalize, exit); the MPI calls stop lending. */
void popmon_lewi_stop(void);

/* Whether LeWI was on in this process at some point (automatic, or
 * registered by the program's DLB_Init): the measurement then has its lent
 * and borrowed CPU time. */
int popmon_lewi_used(void);

/* Whether the automatic LeWI is on in this process. */
int popmon_lewi_on(void);

/* The OpenMP side, on the encountering thread before a parallel region
 * forks (outermost: not inside another region): registers a process
 * without MPI at its first region, chooses the team's CPUs
 * (popmon_lewi_team) and returns its size (0: the runtime's own choice
 * stands); set_icv: also sets it with omp_set_num_threads (LLVM's libomp
 * reads it after OMPT's parallel_begin; GNU libgomp gets it as the
 * num_threads argument instead). */
int popmon_lewi_parallel_begin(int outermost, int set_icv);

/* In each thread of an outermost team at its implicit task's start: binds
 * team thread index to its CPU (a system call only when it changes). */
void popmon_lewi_implicit_begin(unsigned int index);

/* After an outermost parallel region (the encountering thread). */
void popmon_lewi_parallel_end(int outermost);

#endif /* POPMON_LEWI_H */
