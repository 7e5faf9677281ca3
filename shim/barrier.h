/* barrier.h: DLB's node barrier (DLB_Barrier, DLB_BarrierAttach/Detach,
 * the named barriers; docs/coming-from-dlb.md): every process of the node
 * that takes part waits until all of them reached the barrier, sleeping,
 * without MPI and without spinning. barrier.c; it calls the registries'
 * common part and LeWI (a process waiting in an unnamed barrier lends its
 * CPUs when LeWI is on and --lewi-barrier is not off).
 *
 * One POSIX shared-memory object per user and key
 * (/dev/shm/popmon-barrier-<uid>-<key>, mode 0600, refused otherwise) holds
 * POPMON_BARRIER_MAX barriers (0: the unnamed one) of POPMON_BARRIER_MEMBERS
 * members each. A member is a process (pid and start time, so that a
 * reused pid is not taken for it), attached or detached, and the
 * generation it last arrived for. A barrier's generation is a futex word:
 * the process that finds every attached member arrived moves it on and
 * wakes the others. No lock: a killed member is dropped by the next waiter
 * that times out (every 50 ms) and finds it dead. */
#ifndef POPMON_BARRIER_H
#define POPMON_BARRIER_H

#define POPMON_BARRIER_MAX 16
#define POPMON_BARRIER_MEMBERS 256
#define POPMON_BARRIER_NAME_MAX 64

/* Whether the barrier is asked for: --barrier (DLB's default yes) in
 * DLB_ARGS or DLB_Init's options, where DLB's interface is in use (loaded
 * as DLB, DLB_ARGS set, LeWI or DROM on, or DLB_Init called). */
int popmon_barrier_enabled(void);

/* Joins the unnamed barrier (DLB_Init; MPI_Init where DLB's interface is
 * in use): DLB_SUCCESS, DLB_NOUPDT when already in, DLB_ERR_NOCOMP when the
 * barrier is off, DLB_ERR_NOSHMEM (one popmon: line) when the registry
 * cannot be had. */
int popmon_barrier_start(void);

/* At MPI_Init: popmon_barrier_start where DLB's interface is in use
 * (DLB_ARGS set, loaded as DLB, LeWI or DROM asked for), as DLB joins its
 * MPI-intercepted processes; nothing otherwise. Quiet: a failure is said
 * (and returned) by the first barrier call. */
void popmon_barrier_mpi_init(void);

/* Leaves every barrier (DLB_Finalize, MPI_Finalize, exit); the calls below
 * then give DLB_ERR_NOCOMP. */
void popmon_barrier_stop(void);

/* DLB_Barrier (id 0) and DLB_BarrierNamed: waits for the barrier's other
 * members. DLB_SUCCESS; DLB_ERR_NOCOMP when not started; DLB_ERR_PERM when
 * this process is detached from it. */
int popmon_barrier_wait(int id);

/* DLB_BarrierAttach/Detach and their named forms: the number of attached
 * members after the change, or DLB_ERR_PERM (already attached, not
 * attached), DLB_ERR_NOCOMP. */
int popmon_barrier_attach(int id);
int popmon_barrier_detach(int id);

/* DLB_BarrierNamedRegister: the id (1..) of the barrier named name,
 * created if new, with this process attached to it; flags, DLB's
 * DLB_BARRIER_LEWI_*, say whether waiting in it lends the process's CPUs
 * (popmon_dlb_barrier_lends). -1 (NULL for DLB) when the barrier is off, the
 * name is empty or too long, or the table is full. */
int popmon_barrier_named(const char *name, int flags);


#endif /* POPMON_BARRIER_H */
