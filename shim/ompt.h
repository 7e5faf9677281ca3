/* ompt.h: OpenMP through OMPT (ompt.c): the OpenMP object of the measurement
 * file, the parallel constructs' profile, the CPUs the runtime's teams add.
 * (The OMPT ABI itself is ompt_abi.h.) */
#ifndef POPMON_OMPT_H
#define POPMON_OMPT_H

#include <stddef.h>
#include <stdint.h>

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
 * already holding the table: the live file's, popmon_live_constructs),
 * before any parallel region. */
void popmon_omp_place_table(struct popmon_construct *mem);
/* The construct table's part of the live file's layout (live.h). */
struct popmon_live_header;
void popmon_omp_layout(struct popmon_live_header *h);
/* The observer of the outermost parallel regions closed (from tick begin
 * to end, team threads, construct slot or -1), which a file above hands
 * down when it starts (the MPI trace): the OpenMP accounting knows no
 * consumer. One at a time; NULL for none. */
typedef void popmon_omp_closed_fn(uint64_t begin, uint64_t end, uint32_t team, int construct);
void popmon_omp_observe(popmon_omp_closed_fn *fn);
struct popmon_omp_row {
	char module[512];
	uint64_t address;
	int64_t executions, threads, wall_ns, useful_ns, imbalance_ns, sync_ns, limited_ns, mgmt_ns;
};
int popmon_omp_rows(struct popmon_omp_row **rows);
/* The OpenMP runtime's teams may reach n threads (tool start, a team
 * larger than before, or nested teams holding more threads at once than
 * before, accounted by its parallel-region instance from tick until on):
 * the process gains the CPUs it did not count, idle (serialization) in
 * every region until then. */
int popmon_cpus_grow_omp(int n, uint64_t until); /* returns the CPUs gained */
/* "module+0xaddress" of construct slot idx; 0 when empty. */
int popmon_omp_construct_name(int idx, char *out, size_t n);

/* ------------------------------------------------------------------
 * The OpenMP events, runtime-neutral: OMPT's callbacks (this file) and the
 * wrappers of GNU libgomp's entry points (gomp.c) both report through these,
 * so both runtimes feed the same accounts (ompt.c's header comment). t is
 * the calling thread's record (NULL: nothing is done).
 */
struct popmon_thread;
#define POPMON_OMP_BY_OMPT "OMPT"
#define POPMON_OMP_BY_GOMP "GOMP interposition"
/* The runtime is measured from now on (runtime: its name, NULL to keep the
 * one known; how: POPMON_OMP_BY_*): the process gains the runtime's CPUs
 * and the primary starts charging its idle workers. Once. */
void popmon_omp_measured_by(const char *runtime, const char *how);
/* The runtime is there but not measured (--openmp=off). */
void popmon_omp_off(const char *runtime);
/* How OpenMP was measured ("" when it was not). */
const char *popmon_openmp_method(void);
/* t encounters a parallel region of requested threads at codeptr (its
 * return address): the instance to pass to the team's implicit tasks and
 * to popmon_omp_parallel_end, NULL for a nested (or unaccounted) one. */
void *popmon_omp_parallel_begin(struct popmon_thread *t, unsigned int requested, const void *codeptr);
/* t begins its implicit task index of a team of n in instance inst (NULL:
 * nothing); 1 when accounted (then end it with popmon_omp_implicit_end). */
int popmon_omp_implicit_begin(struct popmon_thread *t, void *inst, unsigned int n, unsigned int index);
/* t's implicit task ended; mark_end: the end is the task's (OMPT), not
 * before the join barrier (the encountering thread in gomp.c). */
void popmon_omp_implicit_end(struct popmon_thread *t, int mark_end);
/* The team has joined: t (the encountering thread) closes the instance
 * (NULL: a nested region's end). */
void popmon_omp_parallel_end(struct popmon_thread *t, void *inst);
/* t waits (barrier, taskwait, taskgroup, critical, lock, ordered) until
 * popmon_omp_wait_end; synchronization says whether the wait is an explicit
 * one (ompP's synchronization category) rather than an implicit barrier.
 * Explicit tasks run inside a wait are not part of it. */
void popmon_omp_wait_begin(struct popmon_thread *t, int synchronization);
void popmon_omp_wait_end(struct popmon_thread *t);
/* An explicit task was created by t; one begins (begin 1) or stops running
 * on t (begin 0). */
void popmon_omp_task_created(struct popmon_thread *t);
/* Where t runs in the teams as OpenMP numbers their threads (a hash of its
 * index in each enclosing team, a team's thread 0 being the thread that
 * encountered it): equal for the same place in the same nesting however
 * the runtime assigns its pool's threads; 0 for the initial thread's place
 * (and outside parallel regions). */
uint64_t popmon_omp_position(const struct popmon_thread *t);
void popmon_omp_task_run(struct popmon_thread *t, int begin);

#endif /* POPMON_OMPT_H */
