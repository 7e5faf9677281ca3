/* dlbargs.h: DLB_ARGS, DLB's option string, parsed in one place (dlbargs.c),
 * the bottom layer. The library reads it when it is loaded as DLB (the
 * prefix `popmon dlb-home` lays out: lib/libdlb*.so) or preloaded by hand
 * with DLB_ARGS set; docs/coming-from-dlb.md lists what each option does. */
#ifndef POPMON_DLBARGS_H
#define POPMON_DLBARGS_H

#include <stdio.h>

/* The output formats of --talp-output-file, by extension as DLB: .json,
 * .csv, anything else plain text; none: the summary on stderr. */
enum { POPMON_DLB_OUT_NONE = 0, POPMON_DLB_OUT_JSON, POPMON_DLB_OUT_CSV, POPMON_DLB_OUT_TEXT };

/* --lewi-mpi-calls' kinds of blocking MPI calls, as bits. */
enum { POPMON_LEWI_CALLS_BARRIER = 1, POPMON_LEWI_CALLS_COLLECTIVE = 2, POPMON_LEWI_CALLS_P2P = 4 };

struct popmon_dlb_args {
	int parsed;   /* popmon_dlb_args_parse ran */
	int set;      /* DLB_ARGS is set and not empty */
	int talp;     /* --talp with a component other than none */
	int mpi, openmp, gpu, hwc; /* --talp's components (default: all) */
	int summary_pop;           /* --talp-summary has pop-metrics (default) */
	int external_profiler;     /* --talp-external-profiler */
	int verbose, quiet, silent;
	int format;                /* POPMON_DLB_OUT_* */
	char output[4096];         /* --talp-output-file, tokens %h %p %j %% expanded */
	/* --talp-region-select: include (1) or exclude (0) the regions listed;
	 * "all" and "global" as DLB. */
	int select_set, select_include, select_all, select_global;
	char select[1024]; /* the list, ",a,b," (delimited, for lookups) */
	/* LeWI (lewi.c): --lewi, --lewi-keep-one-cpu, --lewi-max-parallelism
	 * (0: none), --lewi-mpi-calls (POPMON_LEWI_CALLS_* bits; default
	 * all), --shm-key
	 * (the registry's key, "" the default). Also read from
	 * POPMON_LEWI_ARGS (popmon run/exec --lewi's options). */
	int lewi, lewi_keep_one_cpu, lewi_max_parallelism, lewi_mpi_calls;
	/* --lewi-respect-cpuset (default yes; no: the CPUs of the node no
	 * process registered are free for any to borrow, and a process's CPUs
	 * stay so after it ends). */
	int lewi_respect_cpuset;
	/* --lewi-affinity=nearby-only: borrow only CPUs of the NUMA nodes of
	 * its own (auto, mask, nearby-first: those first, then the rest). */
	int lewi_nearby_only;
	char shm_key[128];
	/* DROM (drom.c): --drom; the registry's key is --shm-key too. */
	int drom;
	/* The node barrier (barrier.c): --barrier (default yes), and whether
	 * a process waiting in DLB_Barrier lends its CPUs (--lewi-barrier,
	 * default yes; not read when --lewi-barrier-select names barriers:
	 * those whose waits lend, "default" for DLB_Barrier's own, comma
	 * separated). */
	int barrier, lewi_barrier;
	char lewi_barrier_select[256];
};

extern struct popmon_dlb_args popmon_dlb;

/* Whether waits in the node barrier name lend the process's CPUs, as DLB's
 * parse_lewi_barrier: DLB_Barrier's own ("default") with --lewi-barrier
 * and no --lewi-barrier-select, or when the selection names "default"; a
 * named one registered with flags DLB_BARRIER_LEWI_ON (1) always, _OFF (0)
 * never, _RUNTIME (2) when the selection names it. */
int popmon_dlb_barrier_lends(const char *name, int flags);

/* Parses DLB_ARGS once (later calls do nothing). Options popmon does not act
 * on, unknown ones and bad values are named in one `popmon:` line. */
void popmon_dlb_args_parse(void);

/* DLB_Init's dlb_args: more options in DLB_ARGS' form, parsed after it (as
 * DLB appends them), with their own `popmon:` line. What starts at load
 * (TALP's measurement, its output) is decided by then; LeWI's and DROM's
 * options act from here. */
void popmon_dlb_args_add(const char *args);

/* Whether a region of this name is measured under --talp-region-select
 * (always 1 without it). The global region is "Global" (any case). */
int popmon_dlb_region_selected(const char *name);

/* `dlb -h` (level 1) and `dlb -hh` (level 2): DLB's TALP options, what popmon
 * does with each and the current values from DLB_ARGS, on f. */
void popmon_dlb_help(FILE *f, int level);

/* Whether this library was loaded under one of DLB's names (libdlb*.so, the
 * prefix of `popmon dlb-home`): then, as DLB, it measures only with --talp
 * (or under popmon run / popmon exec). */
int popmon_dlb_loaded_as(void);

/* `dlb --affinity` (`-l`, `-a`): the process's CPUs, as DLB prints them. */
void popmon_dlb_affinity(FILE *f);

#endif /* POPMON_DLBARGS_H */
