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
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "fakecuda.h"
#include "popmon.h"

static void sleep_ms(double ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
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
