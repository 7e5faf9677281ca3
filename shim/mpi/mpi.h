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

/* Entry of an intercepted MPI call. Nested calls (an MPI function the library
 * implements with other MPI functions, or Fortran bindings calling C ones)
 * are counted once, by the outermost wrapper. */
static inline void popmon_mpi_enter(void)
{
	struct popmon_thread *t = popmon_tls;
	if (__builtin_expect(t == NULL, 0)) {
		t = popmon_thread_slow();
		if (t == NULL)
			return;
	}
	if (t->mpi_depth++ == 0) {
		t->prev_state = t->state;
		popmon_switch(t, POPMON_ST_MPI, popmon_now());
	}
}

/* Exit of an intercepted MPI call fn (enum popmon_fn). */
static inline void popmon_mpi_leave(int fn)
{
	struct popmon_thread *t = popmon_tls;
	if (__builtin_expect(t == NULL, 0))
		return;
	if (--t->mpi_depth == 0) {
		uint64_t now = popmon_now();
		/* Tracing (trace.c): one load and a never-taken branch when off. */
		if (__builtin_expect(POPMON_LOAD(popmon_trace_on), 0))
			now = popmon_trace_call(t, fn, t->last, now);
		uint64_t d = popmon_account(t, now);
		popmon_ctr_hook(t, POPMON_ST_MPI, t->prev_state);
		POPMON_STORE(t->state, t->prev_state);
		POPMON_ADD(t->mpi_calls, 1);
		POPMON_ADD(t->fn_calls[fn], 1);
		POPMON_ADD(t->fn_ticks[fn], d);
	}
}

#endif /* POPMON_MPI_H */
