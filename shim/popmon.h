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
 *    is the implicit whole-run region; NULL or "" registers a new anonymous
 *    region each time; the name "all" (any case) is reserved (returns NULL).
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
	POPMON_ERR_NOTMEASURED = -16 /**< the program runs without popmon */
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
#endif /* POPMON_BUILDING_LIBRARY */

#ifdef __cplusplus
}
#endif

#endif /* POPMON_H */
