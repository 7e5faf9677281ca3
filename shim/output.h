/* output.h: the measurement file (output.c): the run record, writing it, and
 * the single-process path. */
#ifndef POPMON_OUTPUT_H
#define POPMON_OUTPUT_H

#include <stdint.h>
#include "gpu.h"
#include "ompt.h"
#include "reduce.h"

/* Fills rec with region idx's accounts (nanoseconds); returns its name. */
const char *popmon_region_rec(int idx, int cpus, struct popmon_region_rec *rec);

/* Fills rec's LeWI (popmon_lewi_totals) and DROM (popmon_drom_own) fields
 * for this process. */
struct popmon_proc_rec;
void popmon_proc_rec_dlb(struct popmon_proc_rec *rec);

struct popmon_proc_rec {
	int64_t rank, node, pid, cpus;
	char hostname[64];
	/* Hardware counters of the process: 0 unavailable (see ctr_reason),
	 * 1 read with read(), 2 with rdpmc; and the requested mode (0 off,
	 * 1 auto, 2 on). */
	int64_t ctr_method, ctr_mode;
	char ctr_reason[200];
	int64_t mpi_threads;  /* MPI threads' slots (CPUs beyond the OpenMP team) */
	int64_t affinity_cpus; /* hardware CPUs of the affinity mask (0: unknown) */
	/* LeWI (lewi.h, popmon_lewi_totals): on in this process, the own CPUs
	 * it registered, and the CPU time it lent in blocking MPI calls (of
	 * it, the lending thread's own CPU's), borrowed in parallel regions,
	 * and its own CPUs' change by DROM (ns). */
	int64_t lewi, lewi_own_cpus, lewi_lent_ns, lewi_lent_caller_ns, lewi_borrowed_ns, lewi_own_delta_ns;
	/* DROM (drom.h): registered in this process, the CPUs it registered,
	 * and its CPUs' change over time by the masks it adopted (ns). */
	int64_t drom, drom_own_cpus, drom_own_delta_ns;
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
	/* Summary form: LeWI's processes and their lent and borrowed CPU
	 * time, reduced (the full form sums procs' records instead). */
	int64_t lewi_processes, lewi_lent_ns, lewi_borrowed_ns;
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

/* Assembles the run record of both paths (the MPI path at rank 0,
 * mpi/mpi.c; the single-process path, popmon_write_single): run is zeroed,
 * then holds nprocs processes, nregions regions named names, the OpenMP
 * rows (merged over processes) and the GPU records (gpu, ngpu of them).
 * The path's own parts (processes' records or the summary, the counters
 * object, the call profile, the MPI library, warnings, alignment) are set
 * after. */
void popmon_run_assemble(struct popmon_run *run, int with_mpi, int nprocs, int nregions, const char *const *names,
			 const struct popmon_omp_row *rows, int nrows, const struct popmon_gpu_proc *gpu, int ngpu);

/* This process's GPU record, filled by popmon_gpu_finish (its one caller)
 * over a window: Global's (MPI_Init to MPI_Finalize) at MPI_Finalize, the
 * process's (start-up to now) in the single-process path, none at an exit
 * without MPI_Finalize (which only says what --gpu on must say). The record
 * is the process's one (static): the MPI path amends it before gathering. */
enum { POPMON_GPU_WINDOW_GLOBAL, POPMON_GPU_WINDOW_PROCESS, POPMON_GPU_WINDOW_EXIT };
struct popmon_gpu_proc *popmon_run_gpu(int window);

/* Writes the measurement file for run to the output chosen by the
 * environment (POPMON_OUTPUT / POPMON_SESSION / default name). */
void popmon_write_run(const struct popmon_run *run);
/* The non-MPI path: this process alone. */
void popmon_write_single(void);
/* This process could not be measured, for reason why (one sentence with
 * the fix): rank 0 prints it; under `popmon run` it is also left in the
 * session folder (unmeasured-HOST-PID.txt) for popmon to explain. */
void popmon_write_unmeasured(const char *why);

#endif /* POPMON_OUTPUT_H */
