/* calls.c: which CUDA calls libpopmon times, on the fake stack (built by
 * build.sh as OUTDIR/gpu_calls when an MPI compiler is given).
 *
 * In region "work", one rank:
 *   - 20 000 cudaGetDevice calls: a trivial getter, no callback, host
 *     useful time (not GPU runtime time), not counted as GPU calls;
 *   - the driver API called directly, as Triton, CuPy and Numba do:
 *     cuLaunchKernel of a 100 ms kernel, 40 ms of host work, then
 *     cuCtxSynchronize, which waits the remaining ~60 ms: GPU runtime time;
 *   - the runtime API: cudaLaunchKernel of a 50 ms kernel and
 *     cudaDeviceSynchronize, which waits ~50 ms (the driver calls inside
 *     the runtime's are counted once).
 * So the region's GPU runtime time is ~110 ms in 4 calls, its useful time
 * ~40 ms plus the getters'; the kernel table holds drv_kernel (100 ms) and
 * rt_kernel (50 ms).
 *
 * `gpu_calls storm T N`: T threads, each on its own stream, launch N
 * kernels of 2 us in all (the pool's cap and lost-record tests).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda.h"
#include "popmon.h"

static void sleep_ms(double ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static long per_thread;

static void *launcher(void *arg)
{
	int stream = (int)(long)arg;
	for (long i = 0; i < per_thread; i++)
		fakecuda_launch("storm_kernel", 0.002, stream);
	fakecuda_stream_sync(stream);
	return NULL;
}

static int storm(int threads, long n)
{
	pthread_t t[7];
	per_thread = n / threads;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, launcher, (void *)(long)(i + 1)) != 0)
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("ok storm threads=%d launches=%ld\n", threads, per_thread * threads);
	return 0;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc == 4 && strcmp(argv[1], "storm") == 0) {
		int threads = atoi(argv[2]);
		long n = atol(argv[3]);
		if (threads < 1 || threads > 7 || n < threads) {
			fprintf(stderr, "usage: gpu_calls [storm THREADS(1-7) LAUNCHES]\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		fakecuda_set_device(0);
		int rc = storm(threads, n);
		MPI_Finalize();
		return rc;
	}
	fakecuda_set_device(0);
	fakecuda_launch("warm_up", 0, 0); /* context creation, before the region */
	fakecuda_sync();
	popmon_region_t work = popmon_region_register("work");
	popmon_region_start(work);
	int dev = -1;
	for (int i = 0; i < 20000; i++)
		fakecuda_get_device(&dev);
	fakecuda_drv_launch("drv_kernel", 100, 0);
	sleep_ms(40);
	fakecuda_drv_sync();
	fakecuda_launch("rt_kernel", 50, 0);
	fakecuda_sync();
	popmon_region_stop(work);
	printf("ok calls device=%d\n", dev);
	MPI_Finalize();
	return 0;
}
