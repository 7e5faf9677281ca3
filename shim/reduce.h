/* reduce.h: the finalize reductions (reduce.c): one process's record of a
 * region, the summary form's combination of them, the OpenMP rows' merge. */
#ifndef POPMON_REDUCE_H
#define POPMON_REDUCE_H

#include <stdint.h>
#include "base/threads.h"
#include "gpu.h"
#include "gpu_counters.h"
#include "ompt.h"

/* One process's record of one region, in nanoseconds. */
struct popmon_region_rec {
	int64_t visits, cpus, elapsed_ns;
	int64_t t[POPMON_NSTATES];
	int64_t mpi_calls, omp_parallels, omp_tasks, gpu_calls;
	int64_t prim_useful, prim_mpi, prim_parallel, prim_serial_useful, par_useful, thr_useful_max;
	int64_t cycles, instructions; /* during useful time; 0 without counters */
	int64_t gpu_k[POPMON_GPU_DEVICES], gpu_a[POPMON_GPU_DEVICES]; /* by device ordinal */
	int64_t gpu_c[POPMON_GC_DEVICES][POPMON_GC_N];                 /* device counters, by ordinal */
	int64_t instr; /* popmon's own cost in the MPI calls (popmon_owncost_apply): neither useful nor MPI */
	int64_t threads; /* measured per thread (cpus 1): the threads that measured it; else 0 */
};
#define POPMON_REC_FIELDS (sizeof(struct popmon_region_rec) / sizeof(int64_t))

/* popmon's own cost per outermost MPI call (docs/library.md, "popmon's own
 * cost"), calibrated at MPI_Init on the process's own machine
 * (mpi/owncost.c) in clock ticks x 1024 (0 until then): [0] the part
 * between the call's two clock readings, which the accounts book as MPI
 * time, [1] the part before the first and after the second, which they book
 * as the time around the call (useful time as a rule). */
extern uint64_t popmon_owncost_ticks[2];

/* The same per call in nanoseconds. */
struct popmon_owncost {
	double in_ns, out_ns;
};

/* Moves popmon's own cost out of rec's MPI and useful time into its
 * instrumentation account (rec->instr): mpi_calls x c's costs, each part at
 * most what the account it comes from holds; the primary thread's accounts
 * (prim_mpi, prim_useful, prim_serial_useful) lose the same (MPI calls are
 * the primary thread's as a rule). The accounts' sum, and so the invariant
 * of POP-METRICS.md section 1 with instr among the accounts, is unchanged. */
void popmon_owncost_apply(struct popmon_region_rec *rec, const struct popmon_owncost *c);

/* reduce.c: the summary form's reduction (docs/library.md, "Finalize").
 * Every field combines associatively and commutatively (sums, minima and
 * maxima, extremes with the lowest rank on ties), so any reduction tree
 * gives the same result as a sequential pass over the processes. */
#define POPMON_HIST_BINS 20
enum {
	POPMON_SUM_VISITS, POPMON_SUM_ELAPSED, POPMON_SUM_USEFUL, POPMON_SUM_MPI, POPMON_SUM_MPI_WORKER_IDLE,
	POPMON_SUM_OMP_SERIALIZATION, POPMON_SUM_OMP_LOAD_IMBALANCE, POPMON_SUM_OMP_SCHEDULING,
	POPMON_SUM_GPU_RUNTIME, POPMON_SUM_MPI_CALLS, POPMON_SUM_OMP_PARALLELS, POPMON_SUM_OMP_TASKS,
	POPMON_SUM_GPU_CALLS, POPMON_SUM_CYCLES, POPMON_SUM_INSTRUCTIONS, POPMON_SUM_PRIM_USEFUL,
	POPMON_SUM_PRIM_MPI, POPMON_SUM_PRIM_PARALLEL, POPMON_SUM_PRIM_SERIAL_USEFUL, POPMON_SUM_PAR_USEFUL,
	POPMON_SUM_THR_USEFUL_MAX, POPMON_SUM_INSTR, POPMON_NSUM
};
extern const char *const popmon_sum_keys[POPMON_NSUM]; /* the accounts' JSON keys */
struct popmon_extreme {
	int64_t min, min_rank, max, max_rank;
};
struct popmon_region_sum {
	int64_t procs, nodes, cpus, max_cpus, elapsed_max, thr_useful_max;
	int64_t without_thr, multi_cpu, talp_derived, with_thr_useful;
	int64_t sum[POPMON_NSUM];
	double min_mpi_proc, min_mpi_node;
	double nonmpi_sum, nonmpi_max, nonmpi_w, par_w, ser_w, ser_idle;
	struct popmon_extreme useful, mpi;
	int64_t hist[2][POPMON_HIST_BINS]; /* useful, MPI */
};
/* The identity of the combination (no process). */
void popmon_sum_init(struct popmon_region_sum *s);
/* One process's contribution (rank: its world rank; with_counters: the
 * run has counters); a record without visits contributes nothing. */
void popmon_sum_proc(struct popmon_region_sum *s, const struct popmon_region_rec *x, int64_t rank,
		     int with_counters);
/* inout = in ⊕ inout. */
void popmon_sum_combine(const struct popmon_region_sum *in, struct popmon_region_sum *inout);
/* A node's term: mpi (Σ M+Mw over its visiting processes) and cpus. */
void popmon_sum_node(struct popmon_region_sum *s, double mpi, int64_t cpus);
/* Adds x's useful and MPI times to the histograms of ranges r (reduced). */
void popmon_sum_hist(struct popmon_region_sum *s, const struct popmon_region_sum *r,
		     const struct popmon_region_rec *x);
/* The histogram bin of v in [min, max] (measure.Distribution.Bin). */
int popmon_hist_bin(int64_t v, int64_t min, int64_t max);
/* Merges OpenMP rows by module and address in O(n log n); returns the
 * number of merged rows, first in rows. */
int popmon_omp_merge(struct popmon_omp_row *rows, int n);

#endif /* POPMON_REDUCE_H */
