// gpu_pop.cu: the GPU validation scenarios V1-V10 (scenarios.h) on a real
// NVIDIA GPU. Usage, designed timelines and expected metrics: scenarios.h
// and examples/gpu/README.md; scripts/gpu-validate.sh builds and runs it.
//
//   nvcc -O2 -arch=native -ccbin mpicxx -I../../shim -I. -o gpu_pop gpu_pop.cu
//   mpirun -np 1 ./gpu_pop V1        (V6 and V7: -np 2)
//
// - The kernel is <<<1,1>>> and spins until %globaltimer has advanced by the
//   requested time, with __nanosleep(1000) in the loop: its wall-clock
//   duration is deterministic (also when time-sliced with another process),
//   unlike clock64() (SM cycles vary with boost clocks) or __nanosleep alone
//   (sleeps anywhere in [0, 2t]). Needs compute capability 7.0 or newer.
// - Host work spins on clock_gettime.
// - Copies are host-to-device from pinned memory (cudaMallocHost), sized at
//   warm-up for about u ms; the program reports the measured mean c.
// - Two non-blocking streams: "stream 0" and "stream 1" of scenarios.h (the
//   legacy default stream would serialise V5's kernel and copy).
// - Warm-up (context creation, one launch, copy calibration) happens before
//   the measured user region "work".
// - V5 checks with CUDA events that the copy ended before the kernel.
// - V8 (2 GPUs, 1 rank) launches on each device's default stream; device
//   1's context is created before the measured region.
// - V9, V10 and the overhead loop: host thread i (POSIX threads; 0 is the
//   primary) calls cudaSetDevice with the rank's device and creates its own
//   non-blocking stream (cudaStreamCreateWithFlags) before it launches.
//   V9's storm_kernel spins on %globaltimer without __nanosleep (a few us);
//   V10 uses spin_kernel; the loop's tiny_kernel is an elementwise
//   x = x/2 + 1 over 1024 floats (4 blocks of 256 threads). Launches are not
//   checked one by one (cudaGetLastError would double the runtime calls of
//   a storm): the thread's last error is checked when it ends.
//
// gpu_pop_hip.cpp builds this file for AMD GPUs with hipcc (GPU_POP_HIP:
// the CUDA names mapped to HIP); the #ifdef GPU_POP_AMD parts are what differs
// there. Built with nvcc, none of them is seen.
#ifndef GPU_POP_HIP
#include <cuda_runtime.h>
#endif

#include "scenarios.h"

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "gpu_pop: %s: %s (line %d)\n", #call,             \
				cudaGetErrorString(e_), __LINE__);                        \
			MPI_Abort(MPI_COMM_WORLD, 1);                                     \
		}                                                                         \
	} while (0)

#ifdef GPU_POP_AMD
// AMD: wall_clock64() counts at a constant rate, the device's
// hipDeviceAttributeWallClockRate (kHz), which wall_clock_rate() copies to
// each device the program uses before its first launch there. ns from ticks
// without overflow: t / k * 10^6 + (t mod k) * 10^6 / k.
__constant__ unsigned long long wall_khz;

__device__ static inline unsigned long long globaltimer(void)
{
	unsigned long long t = (unsigned long long)wall_clock64(), k = wall_khz;
	return t / k * 1000000ULL + t % k * 1000000ULL / k;
}

// s_sleep N sleeps about 64 N cycles: 32, about 1 us at 2 GHz.
#define NAP() __builtin_amdgcn_s_sleep(32)
#define KERNEL extern "C" __global__
#else
__device__ static inline unsigned long long globaltimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

#define NAP() __nanosleep(1000)
#define KERNEL __global__
#endif

KERNEL void spin_kernel(unsigned long long ns)
{
	unsigned long long t0 = globaltimer();
	while (globaltimer() - t0 < ns)
		NAP();
}

// extern "C": CUPTI's record names it storm_kernel, the name V9's expected
// values use (kernels:storm_kernel), not the mangled _Z12storm_kernely (on
// AMD every kernel is extern "C": KERNEL).
extern "C" __global__ void storm_kernel(unsigned long long ns)
{
	unsigned long long t0 = globaltimer();
	while (globaltimer() - t0 < ns)
		;
}

// V11: named as NCCL names its kernels (ncclDevKernel_*), so that popmon
// counts it as device communication; extern "C" so that the record carries
// the plain name (a mangled one, as on AMD, is recognised too).
extern "C" __global__ void ncclDevKernel_popmon_spin(unsigned long long ns)
{
	unsigned long long t0 = globaltimer();
	while (globaltimer() - t0 < ns)
		NAP();
}

KERNEL void empty_kernel(void)
{
}

KERNEL void tiny_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

enum { TINY_N = 1024 };

static cudaStream_t streams[2];
static void *host_buf, *dev_buf;
static size_t copy_bytes;
static double copy_ms_measured; // c, from warm_up
static cudaEvent_t k_start, k_end, c_end, e0, e1;
static int device;
static cudaStream_t tstreams[GPU_POP_MAX_THREADS];
static float *tiny_buf[GPU_POP_MAX_THREADS];

#ifdef GPU_POP_AMD
// Copies device d's wall-clock rate to its wall_khz, once (d is current).
static void wall_clock_rate(int d)
{
	static char done[256];
	if (d < 256 && done[d])
		return;
	int khz = 0;
	CK(hipDeviceGetAttribute(&khz, hipDeviceAttributeWallClockRate, d));
	if (khz <= 0) {
		fprintf(stderr, "gpu_pop: device %d: wall clock rate %d kHz\n", d, khz);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	unsigned long long k = (unsigned long long)khz;
	CK(hipMemcpyToSymbol(HIP_SYMBOL(wall_khz), &k, sizeof k));
	if (d < 256)
		done[d] = 1;
}
#endif

static int setup(int rank)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0)
		return 0;
	device = rank % n;
	CK(cudaSetDevice(device));
#ifdef GPU_POP_AMD
	wall_clock_rate(device);
#endif
	return n;
}

// Mean time of reps host-to-device copies of bytes, in ms.
static double time_copies(size_t bytes, int reps)
{
	CK(cudaEventRecord(e0, streams[0]));
	for (int i = 0; i < reps; i++)
		CK(cudaMemcpyAsync(dev_buf, host_buf, bytes, cudaMemcpyHostToDevice, streams[0]));
	CK(cudaEventRecord(e1, streams[0]));
	CK(cudaEventSynchronize(e1));
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, e0, e1));
	return ms / reps;
}

static double warm_up(double target_ms)
{
	CK(cudaFree(0)); // creates the context
	for (int s = 0; s < 2; s++)
		CK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
	cudaEvent_t *evs[] = { &k_start, &k_end, &c_end, &e0, &e1 };
	for (cudaEvent_t *e : evs)
		CK(cudaEventCreate(e));
	spin_kernel<<<1, 1, 0, streams[0]>>>(1000000ULL);
	CK(cudaGetLastError());
	empty_kernel<<<1, 1, 0, streams[0]>>>();
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());

	// Calibrate: bandwidth from a 64 MiB copy, then the size for target_ms,
	// at most 8 GiB and half the free device memory.
	size_t probe = 64u << 20, free_b = 0, total_b = 0;
	CK(cudaMallocHost(&host_buf, probe));
	CK(cudaMalloc(&dev_buf, probe));
	time_copies(probe, 1);
	double bw = (double)probe / time_copies(probe, 3); // bytes per ms
	CK(cudaFreeHost(host_buf));
	CK(cudaFree(dev_buf));
	CK(cudaMemGetInfo(&free_b, &total_b));
	double want = bw * target_ms, cap = (double)free_b / 2;
	if (cap > 8.0 * (1u << 30))
		cap = 8.0 * (1u << 30);
	copy_bytes = (size_t)(want < cap ? want : cap) & ~(size_t)4095;
	CK(cudaMallocHost(&host_buf, copy_bytes));
	CK(cudaMalloc(&dev_buf, copy_bytes));
	memset(host_buf, 1, copy_bytes);
	time_copies(copy_bytes, 1);
	copy_ms_measured = time_copies(copy_bytes, 3);
	return copy_ms_measured;
}

static void kernel(double ms, int stream)
{
	if (stream == 0)
		CK(cudaEventRecord(k_start, streams[0]));
	spin_kernel<<<1, 1, 0, streams[stream]>>>((unsigned long long)(ms * 1e6));
	if (stream == 0)
		CK(cudaEventRecord(k_end, streams[0]));
}

static void sync_device(void)
{
	CK(cudaDeviceSynchronize());
}

static void copy(int async, int stream)
{
	if (!async) {
		CK(cudaMemcpy(dev_buf, host_buf, copy_bytes, cudaMemcpyHostToDevice));
		return;
	}
	CK(cudaMemcpyAsync(dev_buf, host_buf, copy_bytes, cudaMemcpyHostToDevice, streams[stream]));
	CK(cudaEventRecord(c_end, streams[stream]));
}

static void host(double ms)
{
	double end = gpu_pop_now_ms() + ms;
	while (gpu_pop_now_ms() < end)
		;
}

static void call(void)
{
	int d;
	cudaGetDevice(&d);
}

static void empty_launch(void)
{
	empty_kernel<<<1, 1, 0, streams[0]>>>();
}

static int copy_hidden(void)
{
	float to_copy_end = 0, to_kernel_end = 0;
	CK(cudaEventElapsedTime(&to_copy_end, k_start, c_end));
	CK(cudaEventElapsedTime(&to_kernel_end, k_start, k_end));
	return to_copy_end <= to_kernel_end;
}

static void kernel_on(int d, double ms)
{
	CK(cudaSetDevice(d));
#ifdef GPU_POP_AMD
	wall_clock_rate(d); // V8's device 1: at its first launch, before the region
#endif
	spin_kernel<<<1, 1>>>((unsigned long long)(ms * 1e6));
}

static void sync_on(int d)
{
	CK(cudaSetDevice(d));
	CK(cudaDeviceSynchronize());
}

static void thread_begin(int i)
{
	CK(cudaSetDevice(device));
	CK(cudaStreamCreateWithFlags(&tstreams[i], cudaStreamNonBlocking));
	CK(cudaMalloc((void **)&tiny_buf[i], TINY_N * sizeof(float)));
	CK(cudaMemset(tiny_buf[i], 0, TINY_N * sizeof(float)));
}

static void thread_end(int i)
{
	CK(cudaGetLastError()); // a launch that failed, in this thread
	CK(cudaStreamSynchronize(tstreams[i]));
	CK(cudaStreamDestroy(tstreams[i]));
	CK(cudaFree(tiny_buf[i]));
}

static void thread_kernel(int i, double ms, int storm)
{
	unsigned long long ns = (unsigned long long)(ms * 1e6 + 0.5);
	if (storm)
		storm_kernel<<<1, 1, 0, tstreams[i]>>>(ns);
	else
		spin_kernel<<<1, 1, 0, tstreams[i]>>>(ns);
}

static void thread_tiny(int i)
{
	tiny_kernel<<<TINY_N / 256, 256, 0, tstreams[i]>>>(tiny_buf[i], TINY_N);
}

static void thread_sync(int i)
{
	CK(cudaStreamSynchronize(tstreams[i]));
}

static void nccl_kernel(double ms)
{
	ncclDevKernel_popmon_spin<<<1, 1, 0, streams[0]>>>((unsigned long long)(ms * 1e6));
}

// V12: device-to-device copies of the copy buffer, one after the other,
// until the calibrated copy time c has passed (a DtoD copy is much faster
// than the host-to-device one c was calibrated with); the gaps between
// them are a few us each. cudaMemcpy does not wait for a device-to-device
// copy: each is waited for (cudaDeviceSynchronize), else the loop queues
// copies for c while the device runs them for far longer (an H200 ran
// 550 of 5.5 GB, 1.4 s, per 100 ms of queueing).
static void peer_copy(void)
{
	static void *dev_buf2;
	if (!dev_buf2)
		CK(cudaMalloc(&dev_buf2, copy_bytes));
	double t0 = gpu_pop_now_ms();
	do {
		CK(cudaMemcpy(dev_buf2, dev_buf, copy_bytes, cudaMemcpyDeviceToDevice));
		CK(cudaDeviceSynchronize());
	} while (gpu_pop_now_ms() - t0 < copy_ms_measured);
}

// V13: a device buffer that MPI moves (a CUDA-aware MPI only).
static void *device_buffer(size_t bytes)
{
	void *p = NULL;
	return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

int main(int argc, char **argv)
{
	const struct gpu_ops ops = { setup, warm_up, kernel, sync_device, copy, host, call,
				     empty_launch, copy_hidden, kernel_on, sync_on, thread_begin,
				     thread_end, thread_kernel, thread_tiny, thread_sync,
				     nccl_kernel, peer_copy, device_buffer,
				     2 /* warm-up kernels */, 0 /* durations not exact */ };
	return gpu_pop_main(argc, argv, &ops);
}
