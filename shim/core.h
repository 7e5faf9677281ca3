/* core.h: cross-file declarations of libpopmon (off the hot path). */
#ifndef POPMON_CORE_H
#define POPMON_CORE_H

#include <stdint.h>
#include <stdio.h>

#include "gpu.h"
#include "gpu_counters.h"
#include "popmon_internal.h"

/* POPMON_VERSION, the version string written into measurement files, is
 * not defined here: the build passes it (internal/shimbuild,
 * -DPOPMON_VERSION from the Go constant popmon.Version), so that the
 * library and the popmon binary cannot disagree. */
#define POPMON_MAX_THREADS 4096
#define POPMON_MAX_REGIONS 4096
#define POPMON_NAME_MAX 128
#define POPMON_MAX_WARNINGS 32

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

/* Process state shared by the library's files. */
struct popmon_process {
	int inert;            /* launcher/shell or forked child: measure nothing */
	int dormant;          /* inert by its name only (POPMON_DORMANT_*): see popmon_wake */
	int mpi_initialized;  /* popmon_mpi_init_hook ran */
	uint64_t init_tick;   /* MPI_Init returned (Global started) */
	uint64_t fin_tick;    /* MPI_Finalize entered (Global ended) */
	int finalized;        /* the measurement was written (or given up) */
	int rank, size;       /* MPI_COMM_WORLD (0/1 without MPI) */
	int pid;
	uint64_t t0_tick;     /* calibration start */
	uint64_t t0_ns;       /* CLOCK_MONOTONIC at t0_tick */
	uint64_t epoch_ns;    /* CLOCK_REALTIME at t0_tick */
};
extern struct popmon_process popmon_proc;

/* core.c */
/* Starts the library up once (the constructor, or the first MPI call when
 * that comes first); a no-op afterwards and while start-up runs. */
void popmon_ensure_init(void);
/* A process inert by its name only does what only the application does:
 * it is measured from now on. A launcher's name (mpirun, orted, srun, ...)
 * wakes only by MPI_Init (POPMON_WAKE_MPI); a shell's or a utility's also by
 * GPU work or an OpenMP runtime's tool start (POPMON_WAKE_COMPUTE). A no-op
 * otherwise. */
enum { POPMON_DORMANT_LAUNCHER = 1, POPMON_DORMANT_UTILITY = 2 };
enum { POPMON_WAKE_MPI = 1, POPMON_WAKE_COMPUTE = 2 };
void popmon_wake(int by);
uint64_t popmon_monotonic_ns(void);
/* A tick and a CLOCK_MONOTONIC reading taken at the same moment. */
void popmon_clock_pair(uint64_t *tick, uint64_t *ns);
/* CLOCK_MONOTONIC nanoseconds of a tick of popmon_now(). */
int64_t popmon_tick_monotonic_ns(uint64_t tick);
/* The MPI rank the launcher's environment gives this process (before
 * MPI_Init too), or -1 when it names none; *size receives the job's size
 * (or 0). */
int popmon_env_rank(int *size);
/* Whether this process prints its warnings: rank 0 (or not an MPI rank);
 * the others' reach the measurement file through rank 0 at finalize. */
int popmon_warns_aloud(void);
/* Whether the program used MPI Sessions and never MPI_Init. */
int popmon_mpi_sessions_only(void);
double popmon_ns_per_tick(void);
uint64_t popmon_ticks_to_ns(uint64_t ticks);
/* Process-wide accounts at now; thr_useful (POPMON_DETAIL_THREADS entries,
 * may be NULL) receives each thread's useful time by table slot. */
void popmon_snapshot(uint64_t now, struct popmon_accounts *a, uint64_t *thr_useful);
/* The CPUs of the process (POP-METRICS.md §1): its largest OpenMP team (1
 * without OpenMP) plus its MPI threads (threads that are neither the primary
 * nor OpenMP threads and called MPI; docs/library.md, "Threads"). */
int popmon_cpus(void);
int popmon_omp_team_cpus(void);   /* the largest OpenMP team, at least 1 */
int popmon_mpi_thread_count(void); /* MPI threads' slots (live or vacant) */
/* The OpenMP runtime's teams may reach n threads (tool start, or a team
 * larger than before, accounted by its parallel-region instance from tick
 * until on): the process gains the CPUs it did not count, idle
 * (serialization) in every region until then. */
void popmon_cpus_grow_omp(int n, uint64_t until);
struct popmon_thread *popmon_thread_new(uint32_t kind, uint32_t state);
struct popmon_thread *popmon_thread_slot(int slot);
int popmon_thread_count(void);

/* ompt.c */
extern int popmon_omp_cpus;  /* the OpenMP runtime's max threads, 0 without OMPT */
void popmon_ompt_probe(void);  /* start-up: lets the OpenMP runtime initialise OMPT */
/* The openmp object of the measurement file: runtime, whether measured,
 * why not. Returns 0 when the program uses no OpenMP runtime. */
int popmon_openmp_info(const char **runtime, int *ompt, const char **reason, int *max_threads);
/* Per-construct profile rows for output: returns the number of rows. */
/* One OpenMP parallel construct's profile, keyed by its code address; the
 * table (POPMON_OMP_CONSTRUCTS slots) lives in the live file when there is
 * one. module and address (the construct's address in module's ELF file)
 * are filled once, when the construct is first seen. Times in ticks. */
enum { POPMON_OMP_CONSTRUCTS = 1024, POPMON_OMP_MODULE = 512 };
struct popmon_construct {
	const void *codeptr; /* 0 = empty slot */
	uint64_t executions, threads, wall, useful, imbalance, sync, limited, mgmt;
	uint64_t address;
	char module[POPMON_OMP_MODULE];
};
/* Moves the construct table to mem (POPMON_OMP_CONSTRUCTS slots, zeroed or
 * already holding the table), before any parallel region. */
void popmon_omp_place_table(struct popmon_construct *mem);
struct popmon_omp_row {
	char module[512];
	uint64_t address;
	int64_t executions, threads, wall_ns, useful_ns, imbalance_ns, sync_ns, limited_ns, mgmt_ns;
};
int popmon_omp_rows(struct popmon_omp_row **rows);
int popmon_warning_count(void);
const char *popmon_warning(int i);
void popmon_fn_totals(uint64_t *calls, uint64_t *ticks); /* POPMON_FN_COUNT each */
/* The threads' bytes (mpidata.c) summed: per enum popmon_dfn, sent,
 * received, then POPMON_SIZE_BINS histogram buckets. */
#define POPMON_DSUMS (POPMON_DFN_COUNT * (2 + POPMON_SIZE_BINS))
void popmon_dfn_totals(int64_t *out); /* POPMON_DSUMS */

/* intercept.c (docs/library.md, "What is measured, what is refused") */
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
/* Constructor: 1 when the program's MPI calls resolve to the MPI library
 * libpopmon was built against; else 0 and why (the library stays inert). */
int popmon_mpi_identity(char *why, size_t n);
/* Constructor, inert library: every exported C entry point jumps straight
 * to the MPI library's PMPI_ function (registers and stack untouched). */
void popmon_entry_passthrough(void);
/* Constructor: resolves popmon_chain (another PMPI tool after libpopmon). */
void popmon_chain_init(void);
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

/* regions.c */
int popmon_regions_init(void); /* 0, or -1 without memory for the table */
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

/* trace.c (MPI builds only, hence weak): a region visit ended, for the
 * trace when tracing. */
void popmon_trace_region(int idx, uint64_t start, uint64_t stop) __attribute__((weak));
/* trace.c (weak as above): an outermost OpenMP parallel region of team
 * threads ended; construct: its slot in the construct table, or -1. */
void popmon_trace_omp(uint64_t begin, uint64_t end, uint32_t team, int construct) __attribute__((weak));
/* ompt.c: "module+0xaddress" of construct slot idx; 0 when empty. */
int popmon_omp_construct_name(int idx, char *out, size_t n);

/* talp_api.c: frees what the runtime queries made (MPI_Finalize). */
void popmon_talp_finalize(void);

/* output.c */
/* One process's record of one region, in nanoseconds. */
struct popmon_region_rec {
	int64_t visits, cpus, elapsed_ns;
	int64_t t[POPMON_NSTATES];
	int64_t mpi_calls, omp_parallels, omp_tasks, gpu_calls;
	int64_t prim_useful, prim_mpi, prim_parallel, prim_serial_useful, par_useful, thr_useful_max;
	int64_t cycles, instructions; /* during useful time; 0 without counters */
	int64_t gpu_k[POPMON_GPU_DEVICES], gpu_a[POPMON_GPU_DEVICES]; /* by device ordinal */
	int64_t gpu_c[POPMON_GC_DEVICES][POPMON_GC_N];                 /* device counters, by ordinal */
};
#define POPMON_REC_FIELDS (sizeof(struct popmon_region_rec) / sizeof(int64_t))

/* Fills rec with region idx's accounts (nanoseconds); returns its name. */
const char *popmon_region_rec(int idx, int cpus, struct popmon_region_rec *rec);

struct popmon_proc_rec {
	int64_t rank, node, pid, cpus;
	char hostname[64];
	/* Hardware counters of the process: 0 unavailable (see ctr_reason),
	 * 1 read with read(), 2 with rdpmc; and the requested mode (0 off,
	 * 1 auto, 2 on). */
	int64_t ctr_method, ctr_mode;
	char ctr_reason[200];
	int64_t mpi_threads;  /* MPI threads' slots (CPUs beyond the OpenMP team) */
	int64_t bypass_kind;  /* POPMON_BYPASS_*: MPI calls that never reached the library */
	char bypass_reason[600];
};

struct popmon_fn_rec {
	int64_t calls, time_ns, min_ns, max_ns, max_rank;
	/* Calls that start transfers (has_bytes): bytes and size histogram. */
	int64_t has_bytes, bytes_sent, bytes_recv;
	int64_t hist[POPMON_SIZE_BINS];
};

struct popmon_run {
	int nprocs, nnodes, nregions;
	const char *const *region_names;   /* nregions */
	const struct popmon_proc_rec *procs; /* nprocs */
	const struct popmon_region_rec *recs; /* nprocs * nregions, [proc][region] */
	const struct popmon_fn_rec *fns;   /* POPMON_FN_COUNT, or NULL */
	const struct popmon_omp_row *omp_rows; /* merged over processes */
	int nomp_rows;
	int with_mpi;
	/* The "counters" object: the mode, whether every process measured
	 * them, how (method), or why not (reason). */
	const char *ctr_mode;
	int ctr_available;
	const char *ctr_method;
	char ctr_reason[256];
	char mpi_library[256];
	char mpi_standard[16];
	const char *thread_level;
	/* The job's size and, when some ranks did not carry the library (the
	 * file then has version 2 and an "incomplete" object), which ones and
	 * why. */
	int world_size;
	const char *missing;          /* "2-3,7", or NULL */
	const char *incomplete_reason;
	/* The MPI calls that never reached the library in some process (the
	 * first such process's reason), or NULL. */
	const char *bypass_reason;
	const char *bypass_names;
	int bypass_processes;
	/* Global's alignment across ranks (docs/library.md, "Finalize"): how far
	 * apart the ranks left MPI_Init and entered MPI_Finalize, in ns. */
	int aligned;
	int64_t start_skew_ns, end_skew_ns;
	/* GPU: each process's record (ngpu == nprocs), only the writer's
	 * (ngpu == 1: no process used CUDA), or none (ngpu == 0). */
	const struct popmon_gpu_proc *gpu;
	int ngpu;
	/* Warnings of every process, merged (rank 0 writes them). */
	const char *const *warnings;
	int nwarnings;
	/* Summary form (reduce.c): procs and recs are NULL, sums has one
	 * entry per region, cpus is the processes' total. */
	const struct popmon_region_sum *sums;
	int summary_limit;
	int64_t cpus;
};

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
	POPMON_SUM_THR_USEFUL_MAX, POPMON_NSUM
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

/* Writes the measurement file for run to the output chosen by the
 * environment (POPMON_OUTPUT / POPMON_SESSION / default name). */
void popmon_write_run(const struct popmon_run *run);
/* The non-MPI path: this process alone. */
void popmon_write_single(void);
/* This process could not be measured, for reason why (one sentence with
 * the fix): rank 0 prints it; under `popmon run` it is also left in the
 * session folder (unmeasured-HOST-PID.txt) for popmon to explain. */
void popmon_write_unmeasured(const char *why);

#endif /* POPMON_CORE_H */
