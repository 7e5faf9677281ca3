/* popmon.h: the popmon region API for C and C++.
 *
 * Mark parts of a program as named regions; popmon reports the POP metrics of
 * every region next to the implicit "Global" one:
 *
 *     #include <popmon.h>
 *     popmon_region_t solve = popmon_region_register("solve");
 *     popmon_region_start(solve);
 *     ... work ...
 *     popmon_region_stop(solve);
 *
 * Nothing needs to be linked: the functions below resolve at run time to the
 * measurement library that `popmon run` / `popmon exec` preloads. Without it
 * (the program started normally) every call is a cheap no-op, so
 * instrumented programs need no second build.
 *
 * Semantics (the same as DLB/TALP's monitoring regions):
 *  - register returns the same handle for the same name; "Global" (any case)
 *    is refused (one warning line; a handle whose calls do nothing): the
 *    implicit whole-run region is popmon_region_global(); NULL or ""
 *    registers a new anonymous region each time.
 *  - regions are per process, may nest and overlap, and may be started and
 *    stopped many times (each start/stop pair is one visit);
 *  - start of an open region, stop of a closed one, and unknown handles are
 *    misuse: the call returns POPMON_NOUPDT or POPMON_ERR_NOENT and the
 *    library prints one warning line, once per kind of misuse;
 *  - POPMON_REGION_GLOBAL names the implicit region, POPMON_REGION_LAST the
 *    most recently started region still open (for stop).
 *  - the number of regions is bounded (4096 per process); registrations past
 *    that return a handle that counts nothing (and one warning).
 *
 * The handle points to a structure laid out like DLB 3.6's dlb_monitor_t, so
 * code written for TALP that reads handle fields keeps working.
 */
#ifndef POPMON_H
#define POPMON_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle of a region. */
typedef struct popmon_region *popmon_region_t;

/** The implicit whole-run region. */
#define POPMON_REGION_GLOBAL ((popmon_region_t)0)
/** The most recently started region that is still open (stop only). */
#define POPMON_REGION_LAST ((popmon_region_t)1)

/** Return codes. */
enum {
	POPMON_SUCCESS = 0,     /**< done */
	POPMON_NOUPDT = 2,      /**< nothing to do (already open / not open) */
	POPMON_ERR_NOENT = -11, /**< unknown handle */
	POPMON_ERR_NOTMEASURED = -16, /**< the program runs without popmon */
	POPMON_ERR_NOINIT = -2,  /**< MPI is not initialized (or finalized): no collective query */
	POPMON_ERR_TIMEOUT = -9, /**< a collective query that not every rank called in time (POPMON_QUERY_TIMEOUT) */
	POPMON_ERR_UNKNOWN = -1  /**< a bad argument (window, size of the structure) */
};

/** Windows of popmon_metrics(): since the region was registered (or reset),
 *  or since this process's previous POPMON_WINDOW_SINCE_LAST call for the same
 *  region (the collective and the local call each keep their own; the first
 *  call's window starts at the registration). */
enum { POPMON_WINDOW_RUN = 0, POPMON_WINDOW_SINCE_LAST = 1 };

/** popmon_metrics.flags: what popmon's report of the same accounts shows. */
enum {
	POPMON_METRICS_OPENMP = 1, /**< OpenMP was measured: the omp_* metrics are in the report */
	POPMON_METRICS_GPU = 2     /**< GPU runtime time: device_offload_efficiency is in the report */
};

#define POPMON_METRICS_VERSION 1

/** The POP metrics of a region (model talp, docs/metrics.md), as popmon's
 *  report computes them from the same accounts. Set `size` to
 *  sizeof(struct popmon_metrics) before the call: the library fills at most
 *  that many bytes (later versions only append fields). Times are in
 *  nanoseconds, summed over the processes taking part (elapsed: the largest);
 *  an efficiency whose denominator is 0 (nothing measured yet) is 0. */
struct popmon_metrics {
	uint32_t size;    /**< set by the caller */
	uint32_t version; /**< POPMON_METRICS_VERSION of the library that filled it */
	char region[128];
	int32_t window;    /**< POPMON_WINDOW_* */
	int32_t processes; /**< processes that visited the region in the window */
	int32_t nodes;
	int32_t cpus;      /**< CPUs of those processes */
	uint32_t flags;    /**< POPMON_METRICS_* */
	int32_t reserved;
	int64_t visits, elapsed_ns, useful_ns, mpi_ns, mpi_worker_idle_ns, omp_serialization_ns,
		omp_load_imbalance_ns, omp_scheduling_ns, gpu_runtime_ns, mpi_calls;
	double parallel_efficiency, mpi_parallel_efficiency, mpi_communication_efficiency,
		mpi_load_balance, mpi_load_balance_in, mpi_load_balance_out, omp_parallel_efficiency,
		omp_serialization_efficiency, omp_load_balance, omp_scheduling_efficiency,
		device_offload_efficiency;
};

/* Implemented by libpopmon; weak so that programs link and run without it. */
#ifdef POPMON_BUILDING_LIBRARY
#define POPMON_WEAK_
#else
#define POPMON_WEAK_ __attribute__((weak))
#endif
popmon_region_t popmon_api_region_register(const char *name) POPMON_WEAK_;
popmon_region_t popmon_api_region_global(void) POPMON_WEAK_;
int popmon_api_region_start(popmon_region_t region) POPMON_WEAK_;
int popmon_api_region_stop(popmon_region_t region) POPMON_WEAK_;
int popmon_api_region_reset(popmon_region_t region) POPMON_WEAK_;
int popmon_api_region_report(popmon_region_t region) POPMON_WEAK_;
int popmon_api_measured(void) POPMON_WEAK_;
int popmon_api_metrics(const char *region, int window, struct popmon_metrics *m) POPMON_WEAK_;
int popmon_api_metrics_local(const char *region, int window, struct popmon_metrics *m) POPMON_WEAK_;

#ifndef POPMON_BUILDING_LIBRARY
/** Registers (or looks up) the region called name; NULL when not measured. */
static inline popmon_region_t popmon_region_register(const char *name)
{
	return popmon_api_region_register ? popmon_api_region_register(name) : (popmon_region_t)0;
}

/** The implicit whole-run region "Global"; NULL when not measured. */
static inline popmon_region_t popmon_region_global(void)
{
	return popmon_api_region_global ? popmon_api_region_global() : (popmon_region_t)0;
}

/** Starts (opens) a region: a new visit begins. */
static inline int popmon_region_start(popmon_region_t region)
{
	return popmon_api_region_start ? popmon_api_region_start(region) : POPMON_ERR_NOTMEASURED;
}

/** Stops (closes) a region: the visit's times are added to the region. */
static inline int popmon_region_stop(popmon_region_t region)
{
	return popmon_api_region_stop ? popmon_api_region_stop(region) : POPMON_ERR_NOTMEASURED;
}

/** Discards what a region has accumulated so far (an open region stays open). */
static inline int popmon_region_reset(popmon_region_t region)
{
	return popmon_api_region_reset ? popmon_api_region_reset(region) : POPMON_ERR_NOTMEASURED;
}

/** Prints this process's accounts of a region to stderr. */
static inline int popmon_region_report(popmon_region_t region)
{
	return popmon_api_region_report ? popmon_api_region_report(region) : POPMON_ERR_NOTMEASURED;
}

/** 1 when the program runs under popmon, 0 otherwise. */
static inline int popmon_measured(void)
{
	return popmon_api_measured ? popmon_api_measured() : 0;
}
/** The POP metrics of region (NULL: "Global") over all ranks, in window
 *  (POPMON_WINDOW_*). Collective over MPI_COMM_WORLD: every rank must call
 *  it, in the same order as its other collective popmon_metrics calls (one
 *  reduction of a fixed size; a rank that does not know the region takes
 *  part with nothing). Returns POPMON_SUCCESS, POPMON_ERR_NOENT when no rank
 *  visited the region in the window, POPMON_ERR_TIMEOUT when not every rank
 *  called it within POPMON_QUERY_TIMEOUT seconds (default 5; later calls
 *  then fail at once), POPMON_ERR_NOINIT outside
 *  MPI_Init..MPI_Finalize, POPMON_ERR_NOTMEASURED without popmon. A process
 *  that never initializes MPI and that no launcher started as a rank is a
 *  job of its own: it gets its own metrics (popmon_metrics_local's). */
static inline int popmon_metrics(const char *region, int window, struct popmon_metrics *m)
{
	return popmon_api_metrics ? popmon_api_metrics(region, window, m) : POPMON_ERR_NOTMEASURED;
}

/** The same for the calling process alone: not collective, no MPI call. */
static inline int popmon_metrics_local(const char *region, int window, struct popmon_metrics *m)
{
	return popmon_api_metrics_local ? popmon_api_metrics_local(region, window, m) : POPMON_ERR_NOTMEASURED;
}
#endif /* POPMON_BUILDING_LIBRARY */

#ifdef __cplusplus
}
#endif

#endif /* POPMON_H */
