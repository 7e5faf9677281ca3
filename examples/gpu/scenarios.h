/* scenarios.h: the GPU validation scenarios V1-V7 (research gpu.md §5), shared
 * by the real CUDA program (gpu_pop.cu) and the fake-CUDA one
 * (fake/fake_pop.c), so that both run exactly the same timelines.
 *
 * Usage: gpu_pop MODE [REPS [UNIT_MS]]    (MODE V1 ... V8; defaults 3
 *                                          repetitions, u = 100 ms)
 *        gpu_pop overhead [N]             (default N = 100000)
 *
 * Each repetition of a mode, inside the user region "work" (warm-up,
 * context creation and copy calibration stay outside it, in Global):
 *
 *   V1 offload-sync   kernel u -> cudaDeviceSynchronize -> host u
 *   V2 overlap        kernel 2u launched; host 2u meanwhile; sync (~0)
 *   V3 orchestration  kernel u/2 -> sync -> host 3u/2
 *   V4 communication  synchronous H2D copy c -> kernel u -> sync -> host u
 *   V5 hidden copy    kernel 2u on stream 0; async H2D copy c on stream 1
 *                     (c <= 2u, hidden under the kernel) -> sync -> host 2u
 *   V6 GPU imbalance  2 ranks: kernel u (rank 0) or u/2 (rank 1) -> sync ->
 *                     host u -> MPI_Barrier
 *   V7 CPU imbalance  2 ranks: kernel u -> sync -> host u (rank 0) or u/2
 *                     (rank 1) -> MPI_Barrier
 *   V8 two GPUs, one process (needs 2 devices, 1 rank): kernel u on device 0
 *                     and u/2 on device 1 -> sync device 1 -> sync device 0
 *                     -> host u (DLB takes device maxima per process here)
 *
 * Rank r uses device r mod (number of devices). c is the copy time measured
 * by the program (the real one sizes its pinned copy for c ~ u).
 *
 * Expected metrics (model talp, one CPU per rank, region "work"; N devices
 * in use, counted once when shared: max-merge):
 *
 *   mode  T       PE        offload   gpu PE     gpu LB  gpu comm  gpu orch
 *   V1    2u      0.50      0.50      0.50       1       1         0.50
 *   V2    2u      1         1         1          1       1         1
 *   V3    2u      0.75      0.75      0.25       1       1         0.25
 *   V4    2u+c    u/(2u+c)  u/(2u+c)  u/(2u+c)   1       u/(u+c)   (u+c)/(2u+c)
 *   V5    4u      0.50      0.50      0.50       1       1         0.50
 *   V6    2u      0.50      4/7       N=2: 0.375 0.75    1         0.50
 *                                     N=1: 0.50  1       1         0.50
 *   V7    2u      0.375     3/7       0.50       1       1         0.50
 *   V8    2u      0.50      0.50      0.375      0.75    1         0.50
 *
 * MPI: one rank: 1, 1, 1; V6 and V7: MPI PE = LB = LB in = 0.875, comm
 * efficiency = LB out = 1 (one node).
 *
 * After the run rank 0 prints "ok MODE ..." and one line per expected value,
 *   expect REGION METRIC VALUE TOLERANCE
 * (tolerances of POP-METRICS.md §8: 0.02 for efficiencies, 10 % of the
 * value for times), which scripts/gpu-validate.sh compares with the report.
 * With POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK=1 every rank counts as its
 * own device (popmon's test switch), so N = ranks.
 *
 * Mode "overhead": N cheap runtime calls (cudaGetDevice), then N empty
 * kernel launches and one synchronisation; rank 0 prints
 *   overhead call_ns=X launch_ns=Y
 * (mean wall time per call and per launch).
 */
#ifndef POPMON_GPU_SCENARIOS_H
#define POPMON_GPU_SCENARIOS_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "popmon.h"

/** What a CUDA stack does for the scenarios (all times in ms). */
struct gpu_ops {
	/** Chooses this rank's device among those present; returns the number
	 *  of devices, or 0 when there is none. */
	int (*setup)(int rank);
	/** Warm-up outside the measured region: context, one launch, and the
	 *  copy calibration for a copy of about target_ms; returns c in ms. */
	double (*warm_up)(double target_ms);
	/** Launches a kernel that runs ms on stream (0 or 1), asynchronously. */
	void (*kernel)(double ms, int stream);
	/** cudaDeviceSynchronize. */
	void (*sync)(void);
	/** One host-to-device copy of the calibrated size on stream;
	 *  synchronous (cudaMemcpy) or not (cudaMemcpyAsync). */
	void (*copy)(int async, int stream);
	/** Host work of ms (wall clock, outside CUDA and MPI). */
	void (*host)(double ms);
	/** A cheap runtime call, and an empty kernel launch (overhead mode). */
	void (*call)(void);
	void (*empty_launch)(void);
	/** V5's own check, from the program's timings: did the copy end before
	 *  the kernel? 1 yes, 0 no, -1 not checked. */
	int (*copy_hidden)(void);
	/** V8: a kernel of ms on device d (its default stream), and
	 *  cudaDeviceSynchronize on device d; both leave d current. */
	void (*kernel_on)(int d, double ms);
	void (*sync_on)(int d);
};

static inline double gpu_pop_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One expected value: "expect work METRIC VALUE TOL" on rank 0's stdout. */
static inline void gpu_pop_expect(const char *metric, double value, double tol)
{
	printf("expect work %s %.6g %.6g\n", metric, value, tol);
}

static inline int gpu_pop_mode(const char *s)
{
	if (strcmp(s, "overhead") == 0)
		return 0;
	if (s[0] == 'V' && s[1] >= '1' && s[1] <= '8' && s[2] == '\0')
		return s[1] - '0';
	return -1;
}

/* Prints the expected values of mode (see the table above). */
static inline void gpu_pop_expected(int mode, int reps, double u, double c, int ranks, int ndev)
{
	double t = 2 * u, pe = 0, off = 0, gpe = 0, glb = 1, gcomm = 1, gorch = 0;
	switch (mode) {
	case 1:
		pe = off = gpe = gorch = 0.5;
		break;
	case 2:
		pe = off = gpe = gorch = 1;
		break;
	case 3:
		pe = off = 0.75;
		gpe = gorch = 0.25;
		break;
	case 4:
		t = 2 * u + c;
		pe = off = gpe = u / t;
		gcomm = u / (u + c);
		gorch = (u + c) / t;
		break;
	case 5:
		t = 4 * u;
		pe = off = gpe = gorch = 0.5;
		break;
	case 6: /* U = u, u; G = u, u/2 */
		pe = 0.5;
		off = 2 * u / (2 * u + 1.5 * u);
		gpe = ndev >= 2 ? 1.5 * u / (t * 2) : 0.5;
		glb = ndev >= 2 ? 0.75 : 1;
		gorch = 0.5;
		break;
	case 7: /* U = u, u/2; G = u, u */
		pe = 1.5 * u / (2 * t);
		off = 1.5 * u / (1.5 * u + 2 * u);
		gpe = gorch = 0.5;
		break;
	case 8: /* one process, Gu = u and u/2 on two devices */
		pe = off = gorch = 0.5;
		gpe = 1.5 * u / (t * 2);
		glb = 0.75;
		break;
	}
	double mpi = ranks == 2 ? 0.875 : 1;
	gpu_pop_expect("elapsed_s", reps * t / 1e3, 0.1 * reps * t / 1e3);
	gpu_pop_expect("parallel_efficiency", pe, 0.02);
	gpu_pop_expect("mpi_parallel_efficiency", mpi, 0.02);
	gpu_pop_expect("mpi_load_balance", mpi, 0.02);
	gpu_pop_expect("mpi_communication_efficiency", 1, 0.02);
	gpu_pop_expect("device_offload_efficiency", off, 0.02);
	gpu_pop_expect("gpu_parallel_efficiency", gpe, 0.02);
	gpu_pop_expect("gpu_load_balance", glb, 0.02);
	gpu_pop_expect("gpu_communication_efficiency", gcomm, 0.02);
	gpu_pop_expect("gpu_orchestration_efficiency", gorch, 0.02);
}

/* One repetition of mode. */
static inline void gpu_pop_once(const struct gpu_ops *g, int mode, int rank, double u)
{
	switch (mode) {
	case 1:
		g->kernel(u, 0);
		g->sync();
		g->host(u);
		break;
	case 2:
		g->kernel(2 * u, 0);
		g->host(2 * u);
		g->sync();
		break;
	case 3:
		g->kernel(u / 2, 0);
		g->sync();
		g->host(1.5 * u);
		break;
	case 4:
		g->copy(0, 0);
		g->kernel(u, 0);
		g->sync();
		g->host(u);
		break;
	case 5:
		g->kernel(2 * u, 0);
		g->copy(1, 1);
		g->sync();
		g->host(2 * u);
		break;
	case 6:
		g->kernel(rank == 0 ? u : u / 2, 0);
		g->sync();
		g->host(u);
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case 7:
		g->kernel(u, 0);
		g->sync();
		g->host(rank == 0 ? u : u / 2);
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case 8:
		g->kernel_on(0, u);
		g->kernel_on(1, u / 2);
		g->sync_on(1);
		g->sync_on(0);
		g->host(u);
		break;
	}
}

static inline int gpu_pop_usage(const char *argv0, int rank)
{
	if (rank == 0)
		fprintf(stderr, "usage: %s V1|V2|V3|V4|V5|V6|V7|V8 [REPS [UNIT_MS]] | overhead [N]\n",
			argv0);
	return 2;
}

/* The whole program: MPI, device choice, warm-up, the measured region. */
static inline int gpu_pop_main(int argc, char **argv, const struct gpu_ops *g)
{
	MPI_Init(&argc, &argv);
	int rank, size, rc = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int mode = argc >= 2 ? gpu_pop_mode(argv[1]) : -1;
	long reps = mode == 0 ? 100000 : 3;
	double u = 100;
	char *end;
	if (mode < 0 || argc > (mode == 0 ? 3 : 4))
		rc = gpu_pop_usage(argv[0], rank);
	if (rc == 0 && argc >= 3) {
		reps = strtol(argv[2], &end, 10);
		if (*end || reps < 1 || reps > 100000000)
			rc = gpu_pop_usage(argv[0], rank);
	}
	if (rc == 0 && argc >= 4) {
		u = strtod(argv[3], &end);
		if (*end || !(u >= 1 && u <= 100000))
			rc = gpu_pop_usage(argv[0], rank);
	}
	if (rc == 0 && (mode == 6 || mode == 7) && size != 2) {
		if (rank == 0)
			fprintf(stderr, "%s: V%d needs 2 ranks, not %d\n", argv[0], mode, size);
		rc = 2;
	}
	int ndev = rc == 0 ? g->setup(rank) : 0;
	if (rc == 0 && ndev <= 0) {
		fprintf(stderr, "%s: rank %d: no GPU\n", argv[0], rank);
		rc = 1;
	}
	if (rc == 0 && mode == 8 && (ndev < 2 || size != 1)) {
		if (rank == 0)
			fprintf(stderr, "%s: V8 needs 1 rank and 2 GPUs, not %d and %d\n", argv[0], size,
				ndev);
		rc = 2;
	}
	if (rc != 0) {
		MPI_Finalize();
		return rc;
	}
	double c = g->warm_up(u);
	if (mode == 8) { /* device 1's context, outside the region */
		g->kernel_on(1, 1);
		g->sync_on(1);
		g->sync_on(0);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (mode == 0) {
		double t0 = gpu_pop_now_ms();
		for (long i = 0; i < reps; i++)
			g->call();
		double t1 = gpu_pop_now_ms();
		for (long i = 0; i < reps; i++)
			g->empty_launch();
		g->sync();
		double t2 = gpu_pop_now_ms();
		if (rank == 0)
			printf("overhead call_ns=%.1f launch_ns=%.1f\n", (t1 - t0) * 1e6 / (double)reps,
			       (t2 - t1) * 1e6 / (double)reps);
		MPI_Finalize();
		return 0;
	}
	popmon_region_t work = popmon_region_register("work");
	popmon_region_start(work);
	for (long i = 0; i < reps; i++)
		gpu_pop_once(g, mode, rank, u);
	popmon_region_stop(work);
	int hidden = mode == 5 ? g->copy_hidden() : -1;
	if (hidden == 0) {
		fprintf(stderr, "%s: V5: the copy was not hidden under the kernel\n", argv[0]);
		rc = 1;
	}
	const char *distinct = getenv("POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK");
	int used = distinct && strcmp(distinct, "1") == 0 ? size : (ndev < size ? ndev : size);
	if (mode == 8)
		used = 2;
	if (rank == 0) {
		printf("ok V%d reps=%ld unit_ms=%g copy_ms=%.3f ranks=%d devices=%d\n", mode, reps, u, c,
		       size, used);
		gpu_pop_expected(mode, (int)reps, u, c, size, used);
	}
	MPI_Finalize();
	return rc;
}

#endif /* POPMON_GPU_SCENARIOS_H */
