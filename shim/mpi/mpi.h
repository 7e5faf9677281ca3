/* mpi.h: the MPI path (mpi.c): MPI_Init and MPI_Finalize's hooks, and every
 * intercepted call's entry and exit (the hot path, inline). */
#ifndef POPMON_MPI_H
#define POPMON_MPI_H

#include <stdint.h>
#include "base/clock.h"
#include "base/threads.h"
#include "counters.h"
#include "mpi/trace.h"

/* Hooks called by the generated wrappers. */
void popmon_mpi_pre_init_hook(void); /* before PMPI_Init[_thread] */
void popmon_mpi_init_hook(void);     /* after a successful PMPI_Init[_thread] */
void popmon_mpi_finalize_hook(void); /* before PMPI_Finalize */

/* The hot path of every C wrapper, inlined into it (docs/library.md,
 * "Own cost"): one thread-local load for the whole call (the record found
 * at the entry is handed to the exit), one clock read at each end, the
 * record's fields loaded once, before the live file's seq is made odd;
 * everything rare (the thread's first call, nested calls' exit, tracing,
 * counters, the idle workers' charge) behind one predicted branch each,
 * out of line. */

/* Entry proper of the outermost call on t's thread. */
static inline __attribute__((always_inline)) void popmon_mpi_enter_top(struct popmon_thread *t)
{
	uint32_t st = t->state;
	t->prev_state = st;
	uint64_t now = popmon_now_ordered();
	popmon_ctr_hook(t, st, POPMON_ST_MPI);
	popmon_account(t, now);
	POPMON_STORE(t->state, POPMON_ST_MPI);
}

/* Exit proper of the outermost call fn (enum popmon_fn) on t's thread. */
static inline __attribute__((always_inline)) void popmon_mpi_leave_top(struct popmon_thread *t, int fn)
{
	uint64_t now = popmon_now();
	/* Tracing (trace.c): one load and a never-taken branch when off. */
	if (__builtin_expect(POPMON_LOAD(popmon_trace_on), 0))
		now = popmon_trace_call(t, fn, t->last, now);
	uint32_t prev = t->prev_state;
	uint64_t d = popmon_account(t, now);
	popmon_ctr_hook(t, POPMON_ST_MPI, prev);
	POPMON_STORE(t->state, prev);
	POPMON_ADD(t->mpi_calls, 1);
	POPMON_ADD(t->fn_calls[fn], 1);
	POPMON_ADD(t->fn_ticks[fn], d);
}

/* The entry's rare case, out of line: the thread's first MPI call (or a
 * call the library does not measure: NULL). */
static __attribute__((noinline, cold, unused)) struct popmon_thread *popmon_mpi_enter_first(void)
{
	struct popmon_thread *t = popmon_thread_slow();
	if (t != NULL && t->mpi_depth++ == 0)
		popmon_mpi_enter_top(t);
	return t;
}

/* Exit of a call whose entry found no record, out of line: the record
 * (if any) as it is now. */
static __attribute__((noinline, cold, unused)) void popmon_mpi_leave_late(int fn)
{
	struct popmon_thread *t = popmon_tls;
	if (t != NULL && --t->mpi_depth == 0)
		popmon_mpi_leave_top(t, fn);
}

/* Entry of an intercepted MPI call: returns the calling thread's record,
 * for popmon_mpi_leave_t (NULL: none). Nested calls (an MPI function the
 * library implements with other MPI functions, or Fortran bindings
 * calling C ones) are counted once, by the outermost wrapper. */
static inline __attribute__((always_inline)) struct popmon_thread *popmon_mpi_enter_t(void)
{
	struct popmon_thread *t = popmon_tls;
	if (__builtin_expect(t == NULL, 0))
		return popmon_mpi_enter_first();
	uint32_t depth = t->mpi_depth;
	t->mpi_depth = depth + 1;
	if (__builtin_expect(depth == 0, 1))
		popmon_mpi_enter_top(t);
	return t;
}

/* Exit of an intercepted MPI call fn (enum popmon_fn); t is what its
 * popmon_mpi_enter_t returned. */
static inline __attribute__((always_inline)) void popmon_mpi_leave_t(struct popmon_thread *t, int fn)
{
	if (__builtin_expect(t == NULL, 0)) {
		popmon_mpi_leave_late(fn);
		return;
	}
	uint32_t depth = t->mpi_depth - 1;
	t->mpi_depth = depth;
	if (__builtin_expect(depth == 0, 1))
		popmon_mpi_leave_top(t, fn);
}

/* The same entry and exit without the record in between (the Fortran
 * wrappers, whose calls are rarer: one out-of-line copy each). */
static inline void popmon_mpi_enter(void)
{
	(void)popmon_mpi_enter_t();
}

static inline void popmon_mpi_leave(int fn)
{
	popmon_mpi_leave_t(popmon_tls, fn);
}

#endif /* POPMON_MPI_H */
