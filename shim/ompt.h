/* ompt.h: OpenMP through OMPT (ompt.c): the OpenMP object of the measurement
 * file, the parallel constructs' profile, the CPUs the runtime's teams add.
 * (The OMPT ABI itself is ompt_abi.h.) */
#ifndef POPMON_OMPT_H
#define POPMON_OMPT_H

#include <stddef.h>
#include <stdint.h>

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
/* The OpenMP runtime's teams may reach n threads (tool start, or a team
 * larger than before, accounted by its parallel-region instance from tick
 * until on): the process gains the CPUs it did not count, idle
 * (serialization) in every region until then. */
void popmon_cpus_grow_omp(int n, uint64_t until);
/* "module+0xaddress" of construct slot idx; 0 when empty. */
int popmon_omp_construct_name(int idx, char *out, size_t n);

#endif /* POPMON_OMPT_H */
