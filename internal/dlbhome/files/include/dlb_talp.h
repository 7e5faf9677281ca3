/* dlb_talp.h: DLB 3.7's TALP API, written for popmon's DLB-compatible prefix
 * (`popmon dlb-home`) from DLB's documented interface (popmon's
 * examples/dlbstub/dlb_talp.h, the same declarations): the names, values and
 * the RELEASED DLB 3.6/3.7 structure layouts, so a program built against it
 * runs with DLB too. popmon implements every call (docs/library.md). */
#ifndef DLB_API_TALP_H
#define DLB_API_TALP_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/** The implicit region that spans MPI_Init .. MPI_Finalize. */
#define DLB_GLOBAL_REGION_NAME "Global"
/** Handle of the implicit global region (accepted by every function). */
#define DLB_GLOBAL_REGION NULL
/** Deprecated spellings of DLB_GLOBAL_REGION. */
#define DLB_MPI_REGION NULL
#define DLB_IMPLICIT_REGION NULL
/** The most recently started region that is still open. */
#define DLB_LAST_OPEN_REGION (void *)1

enum { DLB_MONITOR_NAME_MAX = 128 };

#include "dlb_errors.h"

/** A monitoring region as TALP exposes it (times in nanoseconds). */
typedef struct dlb_monitor_t {
	const char *name;                /**< region name */
	int num_cpus;                    /**< CPUs of the process */
	float avg_cpus;                  /**< average CPUs over the region */
	int64_t cycles;                  /**< useful cycles (hardware counters) */
	int64_t instructions;            /**< useful instructions (hardware counters) */
	int num_measurements;            /**< completed start/stop pairs */
	int num_resets;                  /**< times reset */
	int64_t num_mpi_calls;           /**< MPI calls inside the region */
	int64_t num_omp_parallels;       /**< OpenMP parallel regions */
	int64_t num_omp_tasks;           /**< OpenMP tasks */
	int64_t num_gpu_runtime_calls;   /**< GPU runtime calls */
	int64_t start_time;              /**< absolute time of the last start */
	int64_t stop_time;               /**< absolute time of the last stop */
	int64_t elapsed_time;            /**< accumulated elapsed time */
	int64_t useful_time;             /**< accumulated useful CPU time */
	int64_t mpi_time;                /**< accumulated CPU time in MPI */
	int64_t omp_load_imbalance_time; /**< OpenMP load imbalance */
	int64_t omp_scheduling_time;     /**< OpenMP scheduling */
	int64_t omp_serialization_time;  /**< OpenMP serialization */
	int64_t gpu_runtime_time;        /**< host time in the GPU runtime */
	int64_t gpu_useful_time;         /**< device time running kernels */
	int64_t gpu_communication_time;  /**< device time copying */
	int64_t gpu_inactive_time;       /**< device time idle */
	void *_data;                     /**< internal */
} dlb_monitor_t;

/** POP metrics of a region over all processes (DLB_TALP_CollectPOPMetrics):
 *  the layout of the RELEASED DLB 3.6/3.7 (384 bytes on x86-64). */
typedef struct dlb_pop_metrics_t {
	char name[DLB_MONITOR_NAME_MAX];   /**< region name */
	int num_cpus;                      /**< CPUs of the processes taking part */
	int num_mpi_ranks;                 /**< processes taking part */
	int num_nodes;                     /**< nodes */
	float avg_cpus;                    /**< CPUs (average over the region) */
	int num_gpus;                      /**< GPUs */
	double cycles;                     /**< useful cycles */
	double instructions;               /**< useful instructions */
	int64_t num_measurements;          /**< visits */
	int64_t num_mpi_calls;             /**< MPI calls */
	int64_t num_omp_parallels;         /**< OpenMP parallel regions */
	int64_t num_omp_tasks;             /**< OpenMP tasks */
	int64_t num_gpu_runtime_calls;     /**< GPU runtime calls */
	int64_t elapsed_time;              /**< elapsed time, ns */
	int64_t useful_time;               /**< useful time of all CPUs, ns */
	int64_t mpi_time;                  /**< MPI time of all CPUs, ns */
	int64_t omp_load_imbalance_time;   /**< ns */
	int64_t omp_scheduling_time;       /**< ns */
	int64_t omp_serialization_time;    /**< ns */
	int64_t gpu_runtime_time;          /**< ns */
	double min_mpi_normd_proc;         /**< least MPI time per CPU of a process, ns */
	double min_mpi_normd_node;         /**< least MPI time per CPU of a node, ns */
	int64_t gpu_useful_time;           /**< ns */
	int64_t gpu_communication_time;    /**< ns */
	int64_t gpu_inactive_time;         /**< ns */
	int64_t max_gpu_useful_time;       /**< ns */
	int64_t max_gpu_active_time;       /**< ns */
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
} dlb_pop_metrics_t;

/** POP metrics of a region over the processes of one node (184 bytes). */
typedef struct dlb_node_metrics_t {
	char name[DLB_MONITOR_NAME_MAX];
	int node_id;
	int processes_per_node;
	int64_t total_useful_time;  /**< ns */
	int64_t total_mpi_time;     /**< ns */
	int64_t max_useful_time;    /**< ns */
	int64_t max_mpi_time;       /**< ns */
	float parallel_efficiency;
	float communication_efficiency;
	float load_balance;
} dlb_node_metrics_t;

/** One process's times of a region (24 bytes). */
typedef struct dlb_node_times_t {
	pid_t pid;
	int64_t mpi_time;    /**< ns */
	int64_t useful_time; /**< ns */
} dlb_node_times_t;

#ifdef __cplusplus
extern "C" {
#endif

/** The implicit global region, or NULL when TALP is not enabled. */
dlb_monitor_t *DLB_MonitoringRegionGetGlobal(void);
/** Registers (or looks up) a region; NULL when TALP is not enabled. */
dlb_monitor_t *DLB_MonitoringRegionRegister(const char *name);
/** Discards what a region has accumulated. */
int DLB_MonitoringRegionReset(dlb_monitor_t *handle);
/** Starts a region (DLB_NOUPDT if already open). */
int DLB_MonitoringRegionStart(dlb_monitor_t *handle);
/** Stops a region (DLB_NOUPDT if not open). */
int DLB_MonitoringRegionStop(dlb_monitor_t *handle);
/** Prints this process's data of a region to stderr. */
int DLB_MonitoringRegionReport(const dlb_monitor_t *handle);
int DLB_MonitoringRegionsUpdate(void);
dlb_monitor_t *DLB_MonitoringRegionGetImplicit(void) __attribute__((deprecated("DLB_MonitoringRegionGetGlobal")));
const dlb_monitor_t *DLB_MonitoringRegionGetMPIRegion(void)
	__attribute__((deprecated("DLB_MonitoringRegionGetGlobal")));

/* Runtime queries (first party, MPI collective over all ranks / the node). */
/** POP metrics of a region over all processes (NULL: the global region). */
int DLB_TALP_CollectPOPMetrics(dlb_monitor_t *monitor, dlb_pop_metrics_t *pop_metrics);
/** POP metrics of a region over the processes of this node. */
int DLB_TALP_CollectPOPNodeMetrics(dlb_monitor_t *monitor, dlb_node_metrics_t *node_metrics);
int DLB_TALP_CollectNodeMetrics(dlb_monitor_t *monitor, dlb_node_metrics_t *node_metrics)
	__attribute__((deprecated("DLB_TALP_CollectPOPNodeMetrics")));

/* Third party: a monitoring process on the node. */
/** Connects to the node's TALP data. */
int DLB_TALP_Attach(void);
/** Disconnects. */
int DLB_TALP_Detach(void);
/** CPUs of the node. */
int DLB_TALP_GetNumCPUs(int *ncpus);
/** Process ids of the node's measured processes. */
int DLB_TALP_GetPidList(int *pidlist, int *nelems, int max_len);
/** MPI and useful time (seconds) of process pid's global region (0: self). */
int DLB_TALP_GetTimes(int pid, double *mpi_time, double *useful_time);
/** Times of every process of the node with region name (NULL: global). */
int DLB_TALP_GetNodeTimes(const char *name, dlb_node_times_t *node_times_list, int *nelems, int max_len);
/** POP metrics of region name (NULL: global) over the node's processes. */
int DLB_TALP_QueryPOPNodeMetrics(const char *name, dlb_node_metrics_t *node_metrics);

#ifdef __cplusplus
}
#endif

#endif /* DLB_API_TALP_H */
