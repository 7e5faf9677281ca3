/* regions.h: user regions (regions.c): popmon's and DLB/TALP's region API,
 * each region's accounts, the region lock. */
#ifndef POPMON_REGIONS_H
#define POPMON_REGIONS_H

#include <stddef.h>
#include <stdint.h>
#include "accounts.h"
#include "base/threads.h"

#define POPMON_MAX_REGIONS 4096
#define POPMON_NAME_MAX 128

/* A thread's place in the OpenMP teams (0 outside nested teams): ompt.c's
 * popmon_omp_position, which start-up hands down. */
typedef uint64_t popmon_position_fn(const struct popmon_thread *t);
/* 0, or -1 without memory for the table. */
int popmon_regions_init(popmon_position_fn *position);
/* The region table's part of the live file's layout (live.h). */
struct popmon_live_header;
void popmon_regions_layout(struct popmon_live_header *h);
/* The observer of the whole-process visits closed (region idx from tick
 * start to stop), which a file above hands down when it starts (the MPI
 * trace): the regions know no consumer. One at a time; NULL for none. */
typedef void popmon_region_closed_fn(int idx, uint64_t start, uint64_t stop);
void popmon_regions_observe(popmon_region_closed_fn *fn);
/* The region lock: every snapshot of the accounts that regions keep is
 * taken under it, so CPUs join the process under it too. */
void popmon_regions_lock(void);
void popmon_regions_unlock(void);
/* Under the lock: the process gains k CPUs that did not exist before tick
 * until; each region's time until then becomes their serialization (MPI
 * worker idle while the primary thread was inside MPI). */
void popmon_regions_grow_locked(uint32_t k, uint64_t until);
/* Under the lock: the calling thread t becomes an MPI thread born at birth,
 * in a new slot (is_new: one more CPU, idle in each region before birth) or
 * in a vacant one (idle until birth); regions opened after birth must not
 * count its work before they opened. */
void popmon_regions_adopt_locked(struct popmon_thread *t, uint64_t birth, int is_new);
void popmon_regions_restart_global(uint64_t now); /* discard and reopen Global */
void popmon_regions_close_all(uint64_t now);
int popmon_region_count(void);
/* Region i's name and, converted to nanoseconds, accounts; returns 0 when
 * the region was never visited (nothing to report). */
int popmon_region_get(int i, const char **name, uint64_t *visits, uint64_t *elapsed_ns,
		      struct popmon_accounts *ns);
int popmon_region_find(const char *name); /* index or -1 */
/* The threads that measured region i when popmon_region_get reports its
 * per-thread measurements (it was started inside OpenMP parallel regions
 * only: one CPU, elapsed time summed over the measurements); else 0. */
int popmon_region_threads(int i);
/* Region i's name and accounts so far (nanoseconds), an open visit counted
 * up to now without closing it; returns 1 when it was visited or is open,
 * 0 when not, -1 for no such region. Takes the region lock. */
int popmon_region_sofar(int i, char name[POPMON_NAME_MAX], uint64_t *visits, uint64_t *elapsed_ns,
			struct popmon_accounts *ns);
/* The region index of a DLB/popmon handle (NULL: Global), or -1. */
int popmon_region_of_handle(const void *h);
/* A Fortran string of len characters (trailing blanks dropped) as a C
 * string in out (n bytes). */
void popmon_fortran_name(char *out, size_t n, const char *s, int len);

#endif /* POPMON_REGIONS_H */
