/* accounts.h: the process's time accounts at a moment (accounts.c): every
 * thread's record summed, the intervals in progress included, and the GPU
 * devices' busy time. */
#ifndef POPMON_ACCOUNTS_H
#define POPMON_ACCOUNTS_H

#include <stdint.h>

#include "base/threads.h"
#include "gpu.h"
#include "gpu_counters.h"

/* Process-wide time accounts of the accounted threads (ticks or, after
 * conversion, nanoseconds) plus counts. */
struct popmon_accounts {
	uint64_t t[POPMON_NSTATES];
	uint64_t mpi_calls;
	uint64_t omp_parallels;
	uint64_t omp_tasks;
	uint64_t gpu_calls;
	uint64_t x[POPMON_NEXTRA];
	uint64_t prim_useful;    /* the primary thread's own useful time */
	uint64_t prim_mpi;       /* the primary thread's own MPI time */
	uint64_t thr_useful_max; /* largest useful time of one thread (regions fill it) */
	uint64_t ctr[POPMON_CTR_N]; /* cycles, instructions during useful time (not converted) */
	/* Per GPU device ordinal (gpu.h): union of kernel intervals (K) and
	 * of kernels, copies and memsets (A), in nanoseconds (not ticks). */
	uint64_t gpu_k[POPMON_GPU_DEVICES];
	uint64_t gpu_a[POPMON_GPU_DEVICES];
	/* Device counters per device ordinal (gpu_counters.h), cumulative. */
	uint64_t gpu_c[POPMON_GC_DEVICES][POPMON_GC_N];
};

/* Threads whose useful time regions track one by one (for the largest). */
#define POPMON_DETAIL_THREADS 256

/* Process-wide accounts at now; thr_useful (POPMON_DETAIL_THREADS entries,
 * may be NULL) receives each thread's useful time by table slot. */
void popmon_snapshot(uint64_t now, struct popmon_accounts *a, uint64_t *thr_useful);

/* The accounts' part of the live file's layout (live.h). */
struct popmon_live_header;
void popmon_accounts_layout(struct popmon_live_header *h);

#endif /* POPMON_ACCOUNTS_H */
