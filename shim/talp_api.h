/* talp_api.h: the runtime query API (docs/library.md, "Runtime query API"):
 * DLB/TALP's released structure layouts, and the sums every query reduces.
 *
 * The DLB structures mirror the RELEASED DLB 3.6/3.7 <dlb_talp.h> (x86-64:
 * dlb_pop_metrics_t 384 bytes, dlb_node_metrics_t 184, dlb_node_times_t 24);
 * DLB's development head inserts fields and breaks that layout, so these
 * are fixed here and checked by shim/test/talp_layout_test.c.
 */
#ifndef POPMON_TALP_API_H
#define POPMON_TALP_API_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "popmon.h"

struct dlb_pop_metrics_compat {
	char name[128];
	int num_cpus;
	int num_mpi_ranks;
	int num_nodes;
	float avg_cpus;
	int num_gpus;
	double cycles;
	double instructions;
	int64_t num_measurements;
	int64_t num_mpi_calls;
	int64_t num_omp_parallels;
	int64_t num_omp_tasks;
	int64_t num_gpu_runtime_calls;
	int64_t elapsed_time;
	int64_t useful_time;
	int64_t mpi_time;
	int64_t omp_load_imbalance_time;
	int64_t omp_scheduling_time;
	int64_t omp_serialization_time;
	int64_t gpu_runtime_time;
	double min_mpi_normd_proc;
	double min_mpi_normd_node;
	int64_t gpu_useful_time;
	int64_t gpu_communication_time;
	int64_t gpu_inactive_time;
	int64_t max_gpu_useful_time;
	int64_t max_gpu_active_time;
	float parallel_efficiency;
	float mpi_parallel_efficiency;
	float mpi_communication_efficiency;
	float mpi_load_balance;
	float mpi_load_balance_in;
	float mpi_load_balance_out;
	float omp_parallel_efficiency;
	float omp_load_balance;
	float omp_scheduling_efficiency;
	float omp_serialization_efficiency;
	float device_offload_efficiency;
	float gpu_parallel_efficiency;
	float gpu_load_balance;
	float gpu_communication_efficiency;
	float gpu_orchestration_efficiency;
};

struct dlb_node_metrics_compat {
	char name[128];
	int node_id;
	int processes_per_node;
	int64_t total_useful_time;
	int64_t total_mpi_time;
	int64_t max_useful_time;
	int64_t max_mpi_time;
	float parallel_efficiency;
	float communication_efficiency;
	float load_balance;
};

struct dlb_node_times_compat {
	pid_t pid;
	int64_t mpi_time;
	int64_t useful_time;
};

#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct dlb_pop_metrics_compat) == 384, "dlb_pop_metrics_t of DLB 3.6/3.7");
_Static_assert(offsetof(struct dlb_pop_metrics_compat, num_cpus) == 128, "num_cpus");
_Static_assert(offsetof(struct dlb_pop_metrics_compat, elapsed_time) == 208, "elapsed_time");
_Static_assert(offsetof(struct dlb_pop_metrics_compat, useful_time) == 216, "useful_time");
_Static_assert(offsetof(struct dlb_pop_metrics_compat, parallel_efficiency) == 320, "parallel_efficiency");
_Static_assert(offsetof(struct dlb_pop_metrics_compat, mpi_load_balance) == 332, "mpi_load_balance");
_Static_assert(sizeof(struct dlb_node_metrics_compat) == 184, "dlb_node_metrics_t of DLB 3.6/3.7");
_Static_assert(offsetof(struct dlb_node_metrics_compat, total_useful_time) == 136, "total_useful_time");
_Static_assert(offsetof(struct dlb_node_metrics_compat, parallel_efficiency) == 168, "parallel_efficiency");
_Static_assert(sizeof(struct dlb_node_times_compat) == 24, "dlb_node_times_t");
#endif

/* One process's contribution to a query: the process's record of one
 * region (nanoseconds, the fields model talp reads: pop/talp.go). */
struct popmon_talp_proc {
	int present; /* visited or open: the process takes part */
	double cpus, elapsed;
	double u, mpi, mw, iser, ilb, isch, g;
	double visits, mpi_calls, omp_parallels, omp_tasks, gpu_calls, cycles, instructions;
	double prim_mpi; /* the primary thread's MPI time (windows: CPUs that join) */
	int omp_runtime, ompt, omp_hint; /* OpenMP runtime used; OMPT active; OpenMP seen */
};

/* The sums a query reduces (one fixed-size vector of doubles: sums first,
 * then maxima; minima are kept negated as maxima), so that one reduction
 * with one operation carries everything. */
enum {
	POPMON_TS_PROCS = 0, POPMON_TS_NODES, POPMON_TS_CPUS, POPMON_TS_U, POPMON_TS_MPI, POPMON_TS_MW,
	POPMON_TS_ISER, POPMON_TS_ILB, POPMON_TS_ISCH, POPMON_TS_G, POPMON_TS_VISITS, POPMON_TS_MPI_CALLS,
	POPMON_TS_OMP_PARALLELS, POPMON_TS_OMP_TASKS, POPMON_TS_GPU_CALLS, POPMON_TS_CYCLES,
	POPMON_TS_INSTRUCTIONS,
	POPMON_TS_NSUM, /* maxima from here */
	POPMON_TS_ELAPSED = POPMON_TS_NSUM, POPMON_TS_MAX_U, POPMON_TS_MAX_M, POPMON_TS_NEG_MIN_PROC,
	POPMON_TS_NEG_MIN_NODE, POPMON_TS_OMP_RUNTIME, POPMON_TS_OMPT, POPMON_TS_OMP_HINT,
	POPMON_TS_HASH, POPMON_TS_NEG_HASH, /* the region's name hash: ranks asking for different regions */
	POPMON_TS_N
};

/* The identity of the reduction: 0 for sums, -inf for maxima. */
void popmon_talp_sums_zero(double s[POPMON_TS_N]);
/* Adds process p (node_mpi/node_cpus: its node's sums of M + Mw and of
 * CPUs over the processes present, for the node minimum; node_share: 1 /
 * the processes present on its node, so that nodes sum up) into s. */
void popmon_talp_sums_add(double s[POPMON_TS_N], const struct popmon_talp_proc *p, double node_mpi,
			  double node_cpus, double node_share);
/* Combines b into a (the reduction's operation). */
void popmon_talp_sums_merge(double a[POPMON_TS_N], const double b[POPMON_TS_N]);
/* Model talp (pop/talp.go) of the sums, into m (all but size, version,
 * region and window). Returns 0, or POPMON_ERR_NOENT when no process took
 * part. */
int popmon_talp_compute(const double s[POPMON_TS_N], struct popmon_metrics *m);
/* The DLB structures of the sums and their metrics. */
void popmon_talp_fill_dlb(const double s[POPMON_TS_N], const struct popmon_metrics *m, const char *name,
			  struct dlb_pop_metrics_compat *out);
void popmon_talp_fill_node(const double s[POPMON_TS_N], const struct popmon_metrics *m, const char *name,
			   int node_id, struct dlb_node_metrics_compat *out);

/* Starts the queries' own duplicate of MPI_COMM_WORLD (MPI_Init). */
void popmon_talp_mpi_init(void);
/* Frees what the runtime queries made (MPI_Finalize). */
void popmon_talp_finalize(void);

#endif /* POPMON_TALP_API_H */
