/* acc_pop.c: a designed OpenACC program for popmon's OpenACC measurement
 * (the OpenACC Profiling Interface, shim/openacc.c): the host time in
 * compute constructs, enter/exit data and update is GPU runtime (offload)
 * time; device offload efficiency = U / (U + G).
 *
 *   mpicc -std=c11 -fopenacc -O1 -Ishim -Iexamples -o acc_pop acc_pop.c
 *   popmon run -- mpirun -np 2 ./acc_pop [REPS [UNIT_MS]]
 *
 * Each repetition, inside region "work": host work u (outside every
 * construct), then enter data, a compute construct whose body takes u/2,
 * update self and exit data. So U = u, G = u/2 (plus the data directives'
 * few microseconds): device offload efficiency 2/3, on every rank.
 *
 * The construct's body: with -DACC_POP_SLEEP (GCC's host fallback, CI) it
 * sleeps u/2 on the host; otherwise it is a device loop sized by a first,
 * unmeasured construct to take about u/2 wherever it runs (a GPU). Either
 * way the program also times every directive itself and rank 0 prints
 *   expect work device_offload_efficiency VALUE 0.02
 * from its own clocks (the designed 2/3 with the sleep), the format of
 * scripts/gpu-validate.sh. Not yet validated on a real GPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "popmon.h"
#include "work.h"

#define N 4096

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#ifndef ACC_POP_SLEEP
/* A device loop of `iters` sweeps over a (about u/2 once calibrated). */
static void device_loop(double *a, long iters)
{
#pragma acc parallel loop present(a[0:N])
	for (int i = 0; i < N; i++) {
		double x = a[i];
		for (long k = 0; k < iters; k++)
			x = x * 0.999999 + 1e-9;
		a[i] = x;
	}
}
#endif

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double vals[2] = {3, 100};
	if (parse_args(argc, argv, rank, "usage: acc_pop [REPS [UNIT_MS]]", 2, vals) != 0) {
		MPI_Finalize();
		return 2;
	}
	int reps = (int)vals[0];
	double u = vals[1];
	static double a[N];
#ifndef ACC_POP_SLEEP
	long iters = 1;
#endif
#ifndef ACC_POP_SLEEP
	/* Calibration outside the region: iterations for about u/2. */
#pragma acc enter data copyin(a[0:N])
	for (;;) {
		double t0 = now_ms();
		device_loop(a, iters);
		double dt = now_ms() - t0;
		if (dt >= u / 8 || iters > (1L << 40)) {
			iters = (long)((double)iters * (u / 2) / (dt > 0 ? dt : 1e-3));
			break;
		}
		iters *= 4;
	}
#pragma acc exit data delete(a[0:N])
#endif
	MPI_Barrier(MPI_COMM_WORLD);
	popmon_region_t work = popmon_region_register("work");
	double host = 0, offload = 0;
	popmon_region_start(work);
	for (int r = 0; r < reps; r++) {
		double t0 = now_ms();
		work_ms(u);
		double t1 = now_ms();
#pragma acc enter data copyin(a[0:N])
#ifdef ACC_POP_SLEEP
#pragma acc parallel num_gangs(1) present(a[0:N])
		{
			work_ms(u / 2);
			a[0] += 1;
		}
#else
		device_loop(a, iters);
#endif
#pragma acc update self(a[0:N])
#pragma acc exit data delete(a[0:N])
		double t2 = now_ms();
		host += t1 - t0;
		offload += t2 - t1;
	}
	popmon_region_stop(work);
	/* Ranks meet outside the region (the MPI wait is not U or G). */
	double mine[2] = {host, offload}, sum[2] = {0, 0};
	MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("ok acc_pop reps=%d unit_ms=%g a0=%g\n", reps, u, a[0]);
		printf("expect work device_offload_efficiency %.6f 0.02\n", sum[0] / (sum[0] + sum[1]));
	}
	MPI_Finalize();
	return 0;
}
