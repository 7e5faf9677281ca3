/* fake_pop.c: the GPU validation scenarios V1-V7 (../scenarios.h) on the
 * fake CUDA stack (fakecuda.h), for popmon's end-to-end tests without a GPU.
 * Built by build.sh as OUTDIR/gpu_pop: same arguments and output as the real
 * CUDA program ../gpu_pop.cu.
 *
 * Host work sleeps (as examples/work.h), so ranks need no CPU of their own.
 * The copy takes GPU_POP_COPY_MS (default: the unit u) on the fake device.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "fakecuda.h"
#include "scenarios.h"
#include "work.h"

static double copy_ms;

int cuDeviceGetCount(int *count); /* the fake driver's */

static int setup(int rank)
{
	/* The first call initialises the driver, like cudart's first call. */
	int n = 0;
	if (fakecuda_set_device(0) != 0 || cuDeviceGetCount(&n) != 0 || n <= 0)
		return 0;
	fakecuda_set_device(rank % n);
	return n;
}

static double warm_up(double target_ms)
{
	const char *s = getenv("GPU_POP_COPY_MS");
	copy_ms = s ? atof(s) : target_ms;
	if (!(copy_ms > 0))
		copy_ms = target_ms;
	fakecuda_launch("warm_up", 1, 0);
	fakecuda_sync();
	return copy_ms;
}

static void kernel(double ms, int stream)
{
	fakecuda_launch("spin_kernel", ms, stream);
}

static void sync_device(void)
{
	fakecuda_sync();
}

static void copy(int async, int stream)
{
	/* About what a PCIe link moves in copy_ms: 25 bytes per ns. */
	fakecuda_memcpy((size_t)(copy_ms * 25e6), copy_ms, FAKECUDA_HTOD, async, stream, 0);
}

static void call(void)
{
	int d;
	fakecuda_get_device(&d);
}

static void empty_launch(void)
{
	fakecuda_launch("empty_kernel", 0, 0);
}

static int copy_hidden(void)
{
	return -1; /* the fake device runs the streams as designed */
}

static void kernel_on(int d, double ms)
{
	fakecuda_set_device(d);
	fakecuda_launch("spin_kernel", ms, 0);
}

static void sync_on(int d)
{
	fakecuda_set_device(d);
	fakecuda_sync();
}

int main(int argc, char **argv)
{
	const struct gpu_ops ops = { setup, warm_up, kernel, sync_device, copy, work_ms, call,
				     empty_launch, copy_hidden, kernel_on, sync_on };
	return gpu_pop_main(argc, argv, &ops);
}
