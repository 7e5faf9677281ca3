/* dispatch.h: where MPI calls go (dispatch.c): the dispatch tables, the
 * program's MPI library, another PMPI tool after libpopmon. */
#ifndef POPMON_DISPATCH_H
#define POPMON_DISPATCH_H

#include <stddef.h>
#include "mpi_calls.h" /* GENERATED: POPMON_FN_COUNT, POPMON_REAL_COUNT */

/* Dispatch tables (dispatch.c, mpi_wrappers.c): where each exported C
 * entry point MPI_X jumps (its wrapper, or the program's MPI when the
 * library is inert), what each wrapper calls next (another PMPI tool's
 * MPI_X or the MPI library's PMPI_X), and where the PMPI_ and pass-through
 * stubs jump (the program's MPI; popmon_lazy_real until resolved). */
extern void *popmon_entry[POPMON_FN_COUNT] __attribute__((visibility("hidden")));
extern void *popmon_next[POPMON_FN_COUNT] __attribute__((visibility("hidden")));
extern void *popmon_real[POPMON_REAL_COUNT] __attribute__((visibility("hidden")));
extern void *popmon_chain[POPMON_FN_COUNT];
void popmon_lazy_real(void) __attribute__((visibility("hidden")));
void *popmon_resolve_real(unsigned slot) __attribute__((visibility("hidden")));
void *popmon_resolve_next(int id);
/* The program's MPI library's PMPI_ function of id. */
void *popmon_real_fn(int id);

/* What the wrapper of id calls: one load and a never-taken branch. */
static inline __attribute__((always_inline)) void *popmon_next_fn(int id)
{
	void *f = __atomic_load_n(&popmon_next[id], __ATOMIC_RELAXED);
	return __builtin_expect(f != NULL, 1) ? f : popmon_resolve_next(id);
}

/* Resolves the first of a NULL-terminated list of symbol names in the
 * libraries loaded after libpopmon (dlsym(RTLD_NEXT)). Returns NULL when none
 * exists. Used by the Fortran pass-through wrappers, once per function. */
void *popmon_dlsym_next(const char *const *names);

/* Constructor: 1 when the program's MPI calls resolve to the MPI library
 * libpopmon was built against; else 0 and why (the library stays inert). */
int popmon_mpi_identity(char *why, size_t n);
/* Constructor, inert library: every exported C entry point jumps straight
 * to the MPI library's PMPI_ function (registers and stack untouched). */
void popmon_entry_passthrough(void);
/* Constructor: resolves popmon_chain (another PMPI tool after libpopmon). */
void popmon_chain_init(void);

#endif /* POPMON_DISPATCH_H */
