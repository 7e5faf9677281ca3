/* fake_pop.c: the GPU validation scenarios V1-V10 (../scenarios.h) on the
 * fake CUDA stack (fakecuda.h), for popmon's end-to-end tests without a GPU.
 * Built by build.sh as OUTDIR/gpu_pop: same arguments and output as the real
 * CUDA program ../gpu_pop.cu.
 *
 * With -DFAKE_HIP the same program runs on the fake HIP runtime of
 * ../fake_rocm (fakehip.h, libamdhip64.so), whose calls are those of the
 * fake CUDA runtime under other names: gpu_pop_hip, the fake counterpart of
 * ../gpu_pop_hip.cpp (scripts/gpu-validate.sh --vendor amd --fake and the
 * tests build it).
 *
 * Host work sleeps (as examples/work.h), so ranks need no CPU of their own.
 * The copy takes GPU_POP_COPY_MS (default: the unit u) on the fake device.
 * Host thread i of V9, V10 and the overhead loop uses stream i + 1 (the fake
 * runtime's streams are the process's, its calls thread-safe); the overhead
 * loop's tiny kernel lasts 2 us.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#ifdef FAKE_HIP
#include "fakehip.h"
#define fakecuda_set_device fakehip_set_device
#define fakecuda_get_device fakehip_get_device
#define fakecuda_launch fakehip_launch
#define fakecuda_sync fakehip_sync
#define fakecuda_stream_sync fakehip_stream_sync
#define fakecuda_memcpy fakehip_memcpy
#define FAKECUDA_HTOD FAKEHIP_HTOD
#define cuDeviceGetCount fakehip_get_device_count /* hipGetDeviceCount */
#else
#include "fakecuda.h"
#endif
#include "scenarios.h"
#include "work.h"

static double copy_ms;
static int device;

#ifndef FAKE_HIP
int cuDeviceGetCount(int *count); /* the fake driver's */
#endif

static int setup(int rank)
{
	/* The first call initialises the driver, like cudart's first call. */
	int n = 0;
	if (fakecuda_set_device(0) != 0 || cuDeviceGetCount(&n) != 0 || n <= 0)
		return 0;
	device = rank % n;
	fakecuda_set_device(device);
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

static void thread_begin(int i)
{
	(void)i;
	fakecuda_set_device(device); /* as cudaSetDevice in each thread */
}

static void thread_end(int i)
{
	(void)i;
}

static void thread_kernel(int i, double ms, int storm)
{
	fakecuda_launch(storm ? "storm_kernel" : "spin_kernel", ms, i + 1);
}

static void thread_tiny(int i)
{
	fakecuda_launch("tiny_kernel", 0.002, i + 1);
}

static void thread_sync(int i)
{
	fakecuda_stream_sync(i + 1);
}

#ifndef FAKE_HIP
static void nccl_kernel(double ms)
{
	fakecuda_launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL", ms, 0);
}

/* Peer copy from the next device (PtoP) when there is one, else a copy on
 * the device (DtoD). */
static void peer_copy(void)
{
	int n = 0;
	cuDeviceGetCount(&n);
	if (n >= 2)
		fakecuda_memcpy((size_t)(copy_ms * 25e6), copy_ms, FAKECUDA_PTOP, 0, 0, (device + 1) % n);
	else
		fakecuda_memcpy((size_t)(copy_ms * 25e6), copy_ms, FAKECUDA_DTOD, 0, 0, 0);
}

static void *device_buffer(size_t bytes)
{
	return fakecuda_malloc(bytes);
}
#else
#define nccl_kernel NULL
#define peer_copy NULL
#define device_buffer NULL
#endif

int main(int argc, char **argv)
{
	const struct gpu_ops ops = { setup, warm_up, kernel, sync_device, copy, work_ms, call,
				     empty_launch, copy_hidden, kernel_on, sync_on, thread_begin,
				     thread_end, thread_kernel, thread_tiny, thread_sync,
				     nccl_kernel, peer_copy, device_buffer,
				     1 /* warm-up kernels */, 1 /* exact durations */ };
	return gpu_pop_main(argc, argv, &ops);
}
