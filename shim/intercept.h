/* intercept.h: which MPI calls reach libpopmon (intercept.c), and the loaded
 * objects. */
#ifndef POPMON_INTERCEPT_H
#define POPMON_INTERCEPT_H

#include <stddef.h>

#include "mpi_calls.h" /* GENERATED: POPMON_FN_COUNT, popmon_fn_names */

/* docs/library.md, "What is measured, what is refused". */
enum {
	POPMON_BYPASS_NONE = 0,
	POPMON_BYPASS_PROGRAM, /* the program defines MPI functions itself (PMPI wrappers) */
	POPMON_BYPASS_STATIC,  /* MPI is linked statically into the program */
	POPMON_BYPASS_PRELOAD, /* another library earlier in LD_PRELOAD wraps them */
};
struct popmon_intercept {
	int bypassed;      /* MPI functions whose calls never reach libpopmon */
	int kind;          /* POPMON_BYPASS_* */
	char names[200];   /* some of them, comma-separated */
	char reason[600];  /* one sentence for the report, with the fix */
};
/* MPI_Init: finds MPI functions whose calls resolve to another object. */
void popmon_intercept_check(void);
const struct popmon_intercept *popmon_intercept_result(void);
/* Loaded objects (intercept.c): the one holding address p, libpopmon, the
 * main program, and a short printable name of one. */
struct link_map;
struct link_map *popmon_object_of(const void *p);
struct link_map *popmon_self_object(void);
struct link_map *popmon_main_object(void);
void popmon_object_name(struct link_map *lm, char *out, size_t n);
/* Whether the program's own file defines PMPI_Init: MPI linked statically
 * (its MPI_Init never reaches the library). */
int popmon_program_mpi_static(void);

#endif /* POPMON_INTERCEPT_H */
