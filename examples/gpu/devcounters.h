/* devcounters.h: the device-counter validation program (issue 24), shared by
 * the real CUDA program (gpu_counters.cu) and the fake-CUDA one
 * (fake/fake_counters.c), so that both run the same regions.
 *
 * Usage: gpu_counters [--reps N] [--inst-factor F]
 *                     (defaults N = 10 launches per region, F = 1)
 *
 * Each MPI rank uses device rank mod (number of devices) and runs, after a
 * warm-up outside the regions, four user regions one after the other, each
 * N / ranks launches of one kernel (synchronised at the end of the region,
 * inside it):
 *
 *   instr        a fixed loop of known length: its warp instructions follow
 *                from its code (on a GPU: cuobjdump --dump-sass shows the
 *                loop body; Nsight Compute counts them per launch);
 *   dram         a memory-bound copy of GPU_COUNTERS_BYTES between two
 *                arrays far larger than the L2 cache: it reads and writes
 *                that many DRAM bytes;
 *   occ_full     a loop kernel launched for full occupancy (blocks of 256
 *                threads, no shared memory: 8 blocks per SM);
 *   occ_quarter  the same kernel with blocks of 512 threads and enough
 *                dynamic shared memory that one block fits an SM: 16 of 64
 *                warps, an achieved occupancy of 0.25.
 *
 * Rank 0 prints "ok counters reps=N ranks=R", "time REGION MS" (the
 * region's wall time: the long-kernel loop of the overhead rows), and the
 * values the design fixes, as "expect REGION METRIC VALUE TOLERANCE" lines
 * (scripts/gpu-validate.sh compares them with the report): instructions
 * where the program knows them (the fake device: by design; a GPU: from
 * Nsight Compute instead), DRAM bytes within 2 %, the occupancies within
 * 0.03 (full: at least 0.6 on a GPU, whose tail blocks lower it), and, on
 * the fake device, the SM frequency (FAKECUDA_SM_MHZ) within 1 %.
 * --inst-factor multiplies the fake kernels' instructions (the scaling
 * study of internal/e2e/gpu_counters_test.go); a GPU ignores it.
 */
#ifndef POPMON_GPU_COUNTERS_PROGRAM_H
#define POPMON_GPU_COUNTERS_PROGRAM_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "popmon.h"

/** Bytes the dram kernel copies per launch (read, and written again). */
#define GPU_COUNTERS_BYTES (512.0 * 1024 * 1024)

enum { GC_INSTR, GC_DRAM, GC_OCC_FULL, GC_OCC_QUARTER, GC_KINDS };
enum { GC_WHAT_INSTRUCTIONS, GC_WHAT_DRAM_BYTES, GC_WHAT_OCCUPANCY, GC_WHAT_OCCUPANCY_MIN, GC_WHAT_SM_GHZ };

static const char *const gc_regions[GC_KINDS] = {"instr", "dram", "occ_full", "occ_quarter"};

/** What a CUDA stack does for the program. */
struct gc_ops {
	/** Chooses this rank's device; returns the number of devices (0: none). */
	int (*setup)(int rank);
	/** Context, buffers, one launch of each kernel (outside the regions). */
	void (*warm_up)(void);
	/** Launches one kernel of kind (asynchronously); factor: --inst-factor. */
	void (*launch)(int kind, double factor);
	/** cudaDeviceSynchronize. */
	void (*sync)(void);
	/** The designed per-launch value of what for kind (GC_WHAT_*; the SM
	 *  frequency: of the device), or < 0 when the design does not fix it. */
	double (*designed)(int kind, int what);
};

static inline double gc_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int gc_main(int argc, char **argv, const struct gc_ops *g)
{
	MPI_Init(&argc, &argv);
	int rank = 0, size = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long reps = 10;
	double factor = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
			reps = atol(argv[++i]);
		} else if (strcmp(argv[i], "--inst-factor") == 0 && i + 1 < argc) {
			factor = atof(argv[++i]);
		} else {
			if (rank == 0)
				fprintf(stderr, "usage: %s [--reps N] [--inst-factor F]\n", argv[0]);
			MPI_Finalize();
			return 2;
		}
	}
	if (reps < 1 || !(factor > 0)) {
		if (rank == 0)
			fprintf(stderr, "gpu_counters: --reps must be >= 1 and --inst-factor > 0\n");
		MPI_Finalize();
		return 2;
	}
	if (g->setup(rank) <= 0) {
		if (rank == 0)
			fprintf(stderr, "gpu_counters: no GPU device\n");
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	g->warm_up();
	long mine = reps / size > 0 ? reps / size : 1, total = mine * size;
	double ms[GC_KINDS];
	for (int k = 0; k < GC_KINDS; k++) {
		popmon_region_t r = popmon_region_register(gc_regions[k]);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = gc_now_ms();
		popmon_region_start(r);
		for (long i = 0; i < mine; i++)
			g->launch(k, factor);
		g->sync();
		popmon_region_stop(r);
		ms[k] = gc_now_ms() - t0;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0) {
		printf("ok counters reps=%ld ranks=%d\n", total, size);
		for (int k = 0; k < GC_KINDS; k++)
			printf("time %s %.3f\n", gc_regions[k], ms[k]);
		for (int k = 0; k < GC_KINDS; k++) {
			double v = g->designed(k, GC_WHAT_INSTRUCTIONS);
			if (v >= 0)
				printf("expect %s gpu_instructions %.10g %.10g\n", gc_regions[k], v * factor * total,
				       0.02 * v * factor * total);
			v = g->designed(k, GC_WHAT_DRAM_BYTES);
			if (v >= 0)
				printf("expect %s gpu_dram_bytes %.10g %.10g\n", gc_regions[k], v * total, 0.02 * v * total);
			v = g->designed(k, GC_WHAT_OCCUPANCY);
			if (v >= 0)
				printf("expect %s gpu_achieved_occupancy %.4f 0.03\n", gc_regions[k], v);
			v = g->designed(k, GC_WHAT_OCCUPANCY_MIN);
			if (v >= 0) /* at least v: expected (1 + v) / 2, tolerance (1 - v) / 2 */
				printf("expect %s gpu_achieved_occupancy %.4f %.4f\n", gc_regions[k], (1 + v) / 2,
				       (1 - v) / 2);
			v = g->designed(k, GC_WHAT_SM_GHZ);
			if (v >= 0)
				printf("expect %s gpu_sm_frequency_ghz %.6f %.6f\n", gc_regions[k], v, 0.01 * v);
		}
	}
	MPI_Finalize();
	return 0;
}

#endif /* POPMON_GPU_COUNTERS_PROGRAM_H */
