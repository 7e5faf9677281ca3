/* scenarios.h: the GPU validation scenarios V1-V10 (research gpu.md §5, issue
 * 22), shared by the real CUDA program (gpu_pop.cu) and the fake-CUDA one
 * (fake/fake_pop.c), so that both run exactly the same timelines.
 *
 * Usage: gpu_pop MODE [REPS [UNIT_MS]]    (MODE V1 ... V8, V10 ... V13; defaults 3
 *                                          repetitions, u = 100 ms)
 *        gpu_pop V9 [--launches N] [--threads T] [--kernel-us D]
 *                                         (defaults N = 1000000, T = 1,
 *                                          D = 2; 1 rank)
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
 *   V9 launch storm   (1 rank, once, not REPS times) T host threads (the
 *                     primary and T-1 more; T = 1 ... 7), each on its own
 *                     non-blocking stream, launch N kernels of D us in all
 *                     (thread i: N/T, the first N mod T threads one more)
 *                     and wait for their streams (a full launch queue holds
 *                     a thread back meanwhile, on a GPU as on the fake)
 *   V10 threads       4 host threads (the primary is thread 0), each on its
 *                     own stream; per repetition, after a barrier of all
 *                     four: thread i works i*u/4 on the host, launches a
 *                     kernel u/2 on its stream, waits for it -> barrier ->
 *                     the primary works 3u/4 on the host (the others wait
 *                     at the next repetition's barrier). The kernels cover
 *                     [0, u/2], [u/4, 3u/4], [u/2, u], [3u/4, 5u/4]: the
 *                     device is busy 5u/4 of 2u (union; the sum is 2u)
 *   V11 NCCL-like     kernel u -> sync -> an NCCL kernel (named
 *                     ncclDevKernel_*: device communication, not
 *                     computation) of u -> sync -> host u
 *   V12 peer copy     kernel u -> sync -> synchronous device-to-device copy
 *                     c (PtoP between two devices, DtoD on one) -> host u
 *   V13 CUDA-aware MPI 2 ranks, each with a device buffer (cudaMalloc):
 *                     kernel u -> sync; rank 1 works u on the host and
 *                     sends its buffer, rank 0 receives into its buffer
 *                     (waits u inside MPI_Recv: a CUDA-aware MPI moving
 *                     device memory, device communication) -> MPI_Barrier.
 *                     Needs an MPI that takes device pointers.
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
 *   V10   2u      0.75      0.75      0.625      1       1         0.625
 *   V11   3u      1/3       1/3       1/3        1       0.50      2/3
 *   V12   2u+c    u/(2u+c)  u/(2u+c)  u/(2u+c)   1       u/(u+c)   (u+c)/(2u+c)
 *   V13   2u      -         -         N=2: 0.50  1       0.50      1
 *                                     (device metrics only; N=1: gpu PE 1)
 *
 * MPI: one rank: 1, 1, 1; V6 and V7: MPI PE = LB = LB in = 0.875, comm
 * efficiency = LB out = 1 (one node). V10: host metrics are the primary
 * thread's (the other threads call neither MPI nor OpenMP: not CPUs of the
 * model); it spends u/2 waiting for its kernel (G) and 3u/2 useful (its
 * waits at the barriers included).
 *
 * V9 expects no POP efficiency but what the measurement must hold exactly:
 * every kernel recorded (kernels:storm_kernel = N), none lost
 * (gpu_records_lost = dropped + rejected records = 0), the kernels' own
 * durations summed (kernel_s:storm_kernel: N*D exactly on the fake device,
 * a band on a GPU, whose spin overshoots), and the device useful time of
 * region "work" against that sum (useful_ratio:storm_kernel): 1 with
 * one thread (one stream: the kernels never overlap, their union is their
 * sum; ± 1e-6 on the fake, 1e-4 on a GPU), between 1/T and 1 with T threads
 * (T streams run concurrently); and
 * gpu_load_balance = gpu_communication_efficiency = 1. Region "run" stands
 * for the whole run (the kernel table and the gpu object of the
 * measurement); scripts/gpu-validate.sh --compare computes these values.
 *
 * After the run rank 0 prints "ok MODE ..." and one line per expected value,
 *   expect REGION METRIC VALUE TOLERANCE
 * (tolerances of POP-METRICS.md §8: 0.02 for efficiencies, 10 % of the
 * value for times), which scripts/gpu-validate.sh compares with the report.
 * With POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK=1 every rank counts as its
 * own device (popmon's test switch), so N = ranks.
 *
 * Mode "overhead": N cheap runtime calls (cudaGetDevice), then N empty
 * kernel launches and one synchronisation, then a launch-bound loop: N tiny
 * elementwise kernels on the primary thread's stream, waiting for the
 * stream every 100 launches; rank 0 prints
 *   overhead call_ns=X launch_ns=Y loop_ns=Z kernels=K
 * (mean wall time per call, per launch and per loop launch; K: kernels the
 * program launched in all, warm-up included, which a tool should record).
 */
#ifndef POPMON_GPU_SCENARIOS_H
#define POPMON_GPU_SCENARIOS_H

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "popmon.h"

/** Host threads of V9 at most (the fake device's streams 1 ... 7 are the
 *  threads'; stream 0 is the scenarios'). */
#define GPU_POP_MAX_THREADS 7
/** V10's host threads. */
#define GPU_POP_V10_THREADS 4
/** Overhead loop: the primary waits for its stream every this many. */
#define GPU_POP_LOOP_SYNC 100

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
	/** Host thread i (0: the primary thread; 0 <= i < GPU_POP_MAX_THREADS)
	 *  of V9, V10 and the overhead loop, each on its own stream: called by
	 *  thread i itself before it launches (the rank's device made current,
	 *  the thread's non-blocking stream created), and when it is done. */
	void (*thread_begin)(int i);
	void (*thread_end)(int i);
	/** Launches on thread i's stream a kernel of ms: storm_kernel (V9,
	 *  storm = 1) or spin_kernel (V10); or a tiny elementwise kernel
	 *  (tiny_kernel, the overhead loop). No error check per launch. */
	void (*thread_kernel)(int i, double ms, int storm);
	void (*thread_tiny)(int i);
	/** cudaStreamSynchronize of thread i's stream. */
	void (*thread_sync)(int i);
	/** V11: a kernel of ms named as NCCL names its kernels
	 *  (ncclDevKernel_...), on stream 0. */
	void (*nccl_kernel)(double ms);
	/** V12: a synchronous device-to-device copy of the calibrated time c
	 *  (to another device when there is one: peer, else on the device). */
	void (*peer_copy)(void);
	/** V13: device memory of bytes on the rank's device (cudaMalloc). */
	void *(*device_buffer)(size_t bytes);
	/** Kernels warm_up launches (the overhead mode's count includes them). */
	int warm_up_kernels;
	/** 1 when kernels last exactly the time asked (the fake device). */
	int exact_durations;
};

static inline double gpu_pop_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One expected value: "expect REGION METRIC VALUE TOL" on rank 0's stdout
 * (region "run": the whole run's tables). */
static inline void gpu_pop_expect_in(const char *region, const char *metric, double value, double tol)
{
	printf("expect %s %s %.10g %.10g\n", region, metric, value, tol);
}

static inline void gpu_pop_expect(const char *metric, double value, double tol)
{
	gpu_pop_expect_in("work", metric, value, tol);
}

static inline int gpu_pop_mode(const char *s)
{
	if (strcmp(s, "overhead") == 0)
		return 0;
	if (strcmp(s, "V10") == 0)
		return 10;
	if (strcmp(s, "V11") == 0)
		return 11;
	if (strcmp(s, "V12") == 0)
		return 12;
	if (strcmp(s, "V13") == 0)
		return 13;
	if (s[0] == 'V' && s[1] >= '1' && s[1] <= '9' && s[2] == '\0')
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
	case 10: /* primary: U = 3u/2, G = u/2; device busy 5u/4 */
		pe = off = 0.75;
		gpe = gorch = 1.25 * u / t;
		break;
	}
	if (mode == 13) { /* device metrics only: the host's are the MPI wait's */
		gpu_pop_expect("elapsed_s", reps * t / 1e3, 0.1 * reps * t / 1e3);
		gpu_pop_expect("gpu_parallel_efficiency", ndev >= 2 ? 0.5 : 1, 0.02);
		gpu_pop_expect("gpu_load_balance", 1, 0.02);
		gpu_pop_expect("gpu_communication_efficiency", 0.5, 0.02);
		gpu_pop_expect("gpu_orchestration_efficiency", 1, 0.02);
		return;
	}
	switch (mode) {
	case 11: /* Gu = u (the NCCL kernel is Gc), G = 2u */
		t = 3 * u;
		pe = off = gpe = 1.0 / 3;
		gcomm = 0.5;
		gorch = 2.0 / 3;
		break;
	case 12:
		t = 2 * u + c;
		pe = off = gpe = u / t;
		gcomm = u / (u + c);
		gorch = (u + c) / t;
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

/* V9's expected values: n launches of d_us from t threads. */
static inline void gpu_pop_expected_storm(long n, int t, double d_us, int exact)
{
	double sum = (double)n * d_us / 1e6; /* s */
	gpu_pop_expect_in("run", "kernels:storm_kernel", (double)n, 0);
	gpu_pop_expect_in("run", "gpu_records_lost", 0, 0);
	if (exact) {
		gpu_pop_expect_in("run", "kernel_s:storm_kernel", sum, 1e-9);
	} else {
		/* A spin on %globaltimer ends within its resolution (up to 1 us
		 * on some GPUs) of D, and a kernel's record also covers its
		 * start and end on the device (a few us for a tiny kernel). */
		double lo = sum / 2, hi = (double)n * (d_us + 10) / 1e6;
		gpu_pop_expect_in("run", "kernel_s:storm_kernel", (lo + hi) / 2, (hi - lo) / 2);
	}
	if (t == 1) /* exact on the fake; on a GPU, 0.01 % for timestamps that touch */
		gpu_pop_expect("useful_ratio:storm_kernel", 1, exact ? 1e-6 : 1e-4);
	else /* the union of t streams' kernels: between the longest stream and the sum */
		gpu_pop_expect("useful_ratio:storm_kernel", (1 + 1.0 / t) / 2, (1 - 1.0 / t) / 2 + 1e-6);
	gpu_pop_expect("gpu_load_balance", 1, 0.02);
	gpu_pop_expect("gpu_communication_efficiency", 1, 0.02);
}

/* V13's device buffer and its size (an eager message on both MPIs). */
#define GPU_POP_V13_BYTES 1024
static void *gpu_pop_dbuf;

/* One repetition of mode. */
static inline void gpu_pop_once(const struct gpu_ops *g, int mode, int rank, double u)
{
	switch (mode) {
	case 13:
		g->kernel(u, 0);
		g->sync();
		if (rank == 1) {
			g->host(u);
			MPI_Send(gpu_pop_dbuf, GPU_POP_V13_BYTES, MPI_BYTE, 0, 13, MPI_COMM_WORLD);
		} else {
			MPI_Recv(gpu_pop_dbuf, GPU_POP_V13_BYTES, MPI_BYTE, 1, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		break;
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
	case 11:
		g->kernel(u, 0);
		g->sync();
		g->nccl_kernel(u);
		g->sync();
		g->host(u);
		break;
	case 12:
		g->kernel(u, 0);
		g->sync();
		g->peer_copy();
		g->host(u);
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

/* ---- V9 and V10: several host threads ---------------------------------- */

/* What the threads of V9 and V10 share. Barriers: ready (every thread has
 * its stream; the primary then opens the region), go (per repetition), done
 * (per repetition: every thread's kernels have ended). */
struct gpu_pop_team {
	const struct gpu_ops *g;
	int mode, threads;
	long reps, launches;
	double u, kernel_ms;
	pthread_barrier_t ready, go, done;
};

struct gpu_pop_member {
	struct gpu_pop_team *team;
	int index;
};

/* Thread i's launches in V9: N/T, the first N mod T threads one more. */
static inline long gpu_pop_share(const struct gpu_pop_team *tm, int i)
{
	return tm->launches / tm->threads + (i < tm->launches % tm->threads);
}

/* Thread i's part of one repetition (between go and done). */
static inline void gpu_pop_part(struct gpu_pop_team *tm, int i)
{
	const struct gpu_ops *g = tm->g;
	if (tm->mode == 9) {
		long n = gpu_pop_share(tm, i);
		for (long k = 0; k < n; k++)
			g->thread_kernel(i, tm->kernel_ms, 1);
		g->thread_sync(i);
	} else { /* V10 */
		g->host(i * tm->u / 4);
		g->thread_kernel(i, tm->u / 2, 0);
		g->thread_sync(i);
	}
}

static inline void *gpu_pop_worker(void *arg)
{
	struct gpu_pop_member *m = (struct gpu_pop_member *)arg;
	struct gpu_pop_team *tm = m->team;
	tm->g->thread_begin(m->index);
	pthread_barrier_wait(&tm->ready);
	for (long r = 0; r < tm->reps; r++) {
		pthread_barrier_wait(&tm->go);
		gpu_pop_part(tm, m->index);
		pthread_barrier_wait(&tm->done);
	}
	tm->g->thread_end(m->index);
	return NULL;
}

/* Runs V9 or V10 inside region "work"; returns 0, or 1 when a thread could
 * not be started. */
static inline int gpu_pop_team_run(struct gpu_pop_team *tm, popmon_region_t work)
{
	pthread_t tid[GPU_POP_MAX_THREADS];
	struct gpu_pop_member mem[GPU_POP_MAX_THREADS];
	pthread_barrier_init(&tm->ready, NULL, (unsigned)tm->threads);
	pthread_barrier_init(&tm->go, NULL, (unsigned)tm->threads);
	pthread_barrier_init(&tm->done, NULL, (unsigned)tm->threads);
	tm->g->thread_begin(0);
	for (int i = 1; i < tm->threads; i++) {
		mem[i].team = tm;
		mem[i].index = i;
		if (pthread_create(&tid[i], NULL, gpu_pop_worker, &mem[i]) != 0) {
			fprintf(stderr, "gpu_pop: cannot start thread %d\n", i);
			MPI_Abort(MPI_COMM_WORLD, 1);
			return 1;
		}
	}
	pthread_barrier_wait(&tm->ready);
	popmon_region_start(work);
	for (long r = 0; r < tm->reps; r++) {
		pthread_barrier_wait(&tm->go);
		gpu_pop_part(tm, 0);
		pthread_barrier_wait(&tm->done);
		if (tm->mode == 10)
			tm->g->host(0.75 * tm->u);
	}
	popmon_region_stop(work);
	for (int i = 1; i < tm->threads; i++)
		pthread_join(tid[i], NULL);
	tm->g->thread_end(0);
	pthread_barrier_destroy(&tm->ready);
	pthread_barrier_destroy(&tm->go);
	pthread_barrier_destroy(&tm->done);
	return 0;
}

/* ---- overhead ---------------------------------------------------------- */

static inline void gpu_pop_overhead(const struct gpu_ops *g, long n, int rank)
{
	g->thread_begin(0);
	g->thread_tiny(0); /* the loop's kernel loaded before it is timed */
	g->thread_sync(0);
	double t0 = gpu_pop_now_ms();
	for (long i = 0; i < n; i++)
		g->call();
	double t1 = gpu_pop_now_ms();
	for (long i = 0; i < n; i++)
		g->empty_launch();
	g->sync();
	double t2 = gpu_pop_now_ms();
	for (long i = 1; i <= n; i++) {
		g->thread_tiny(0);
		if (i % GPU_POP_LOOP_SYNC == 0)
			g->thread_sync(0);
	}
	g->thread_sync(0);
	double t3 = gpu_pop_now_ms();
	g->thread_end(0);
	if (rank == 0)
		printf("overhead call_ns=%.1f launch_ns=%.1f loop_ns=%.1f kernels=%ld\n",
		       (t1 - t0) * 1e6 / (double)n, (t2 - t1) * 1e6 / (double)n,
		       (t3 - t2) * 1e6 / (double)n, g->warm_up_kernels + 1 + 2 * n);
}

/* ---- the program ------------------------------------------------------- */

static inline int gpu_pop_usage(const char *argv0, int rank)
{
	if (rank == 0)
		fprintf(stderr,
			"usage: %s V1|V2|V3|V4|V5|V6|V7|V8|V10|V11|V12|V13 [REPS [UNIT_MS]] | "
			"V9 [--launches N] [--threads T] [--kernel-us D] | overhead [N]\n",
			argv0);
	return 2;
}

/* Reads a number of [lo, hi] (an integer when integral: 1000000 or 1e6)
 * into *v: 0, or -1. */
static inline int gpu_pop_number(const char *s, double lo, double hi, int integral, double *v)
{
	char *end;
	double x = strtod(s, &end);
	if (end == s || *end || !(x >= lo && x <= hi) || (integral && (double)(long)x != x))
		return -1;
	*v = x;
	return 0;
}

/* The whole program: MPI, device choice, warm-up, the measured region. */
static inline int gpu_pop_main(int argc, char **argv, const struct gpu_ops *g)
{
	MPI_Init(&argc, &argv);
	int rank, size, rc = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int mode = argc >= 2 ? gpu_pop_mode(argv[1]) : -1;
	double reps = mode == 0 ? 100000 : mode == 9 ? 1 : 3, u = 100;
	double launches = 1000000, threads = mode == 10 ? GPU_POP_V10_THREADS : 1, kernel_us = 2;
	int npos = 0, maxpos = mode == 0 ? 1 : mode == 9 ? 0 : 2;
	if (mode < 0)
		rc = gpu_pop_usage(argv[0], rank);
	for (int i = 2; rc == 0 && i < argc; i++) {
		const char *a = argv[i];
		int opt = mode == 9 && i + 1 < argc;
		if (opt && strcmp(a, "--launches") == 0)
			rc = gpu_pop_number(argv[++i], 1, 1e9, 1, &launches);
		else if (opt && strcmp(a, "--threads") == 0)
			rc = gpu_pop_number(argv[++i], 1, GPU_POP_MAX_THREADS, 1, &threads);
		else if (opt && strcmp(a, "--kernel-us") == 0)
			rc = gpu_pop_number(argv[++i], 0, 1e6, 0, &kernel_us);
		else if (npos >= maxpos)
			rc = -1;
		else if (npos++ == 0)
			rc = gpu_pop_number(a, 1, 100000000, 1, &reps);
		else
			rc = gpu_pop_number(a, 1, 100000, 0, &u);
		if (rc != 0)
			rc = gpu_pop_usage(argv[0], rank);
	}
	if (rc == 0 && (mode == 6 || mode == 7 || mode == 13) && size != 2) {
		if (rank == 0)
			fprintf(stderr, "%s: V%d needs 2 ranks, not %d\n", argv[0], mode, size);
		rc = 2;
	}
	if (rc == 0 && mode == 9 && size != 1) {
		if (rank == 0)
			fprintf(stderr, "%s: V9 needs 1 rank, not %d\n", argv[0], size);
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
	if (mode == 13 && (gpu_pop_dbuf = g->device_buffer(GPU_POP_V13_BYTES)) == NULL) {
		fprintf(stderr, "%s: rank %d: no device memory for V13\n", argv[0], rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (mode == 8) { /* device 1's context, outside the region */
		g->kernel_on(1, 1);
		g->sync_on(1);
		g->sync_on(0);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (mode == 0) {
		gpu_pop_overhead(g, (long)reps, rank);
		MPI_Finalize();
		return 0;
	}
	popmon_region_t work = popmon_region_register("work");
	if (mode == 9 || mode == 10) {
		struct gpu_pop_team tm;
		memset(&tm, 0, sizeof tm);
		tm.g = g;
		tm.mode = mode;
		tm.threads = (int)threads;
		tm.reps = (long)reps;
		tm.launches = (long)launches;
		tm.u = u;
		tm.kernel_ms = kernel_us / 1e3;
		rc = gpu_pop_team_run(&tm, work);
	} else {
		popmon_region_start(work);
		for (long i = 0; i < (long)reps; i++)
			gpu_pop_once(g, mode, rank, u);
		popmon_region_stop(work);
	}
	int hidden = mode == 5 ? g->copy_hidden() : -1;
	if (hidden == 0) {
		fprintf(stderr, "%s: V5: the copy was not hidden under the kernel\n", argv[0]);
		rc = 1;
	}
	const char *distinct = getenv("POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK");
	int used = distinct && strcmp(distinct, "1") == 0 ? size : (ndev < size ? ndev : size);
	if (mode == 8)
		used = 2;
	if (rank == 0 && mode == 9) {
		printf("ok V9 launches=%ld threads=%d kernel_us=%g ranks=%d devices=%d\n", (long)launches,
		       (int)threads, kernel_us, size, used);
		gpu_pop_expected_storm((long)launches, (int)threads, kernel_us, g->exact_durations);
	} else if (rank == 0) {
		printf("ok V%d reps=%ld unit_ms=%g copy_ms=%.3f ranks=%d devices=%d\n", mode, (long)reps,
		       u, c, size, used);
		gpu_pop_expected(mode, (int)reps, u, c, size, used);
	}
	MPI_Finalize();
	return rc;
}

#endif /* POPMON_GPU_SCENARIOS_H */
