// gpu_counters.cu: the device-counter validation program (devcounters.h) on
// a real NVIDIA GPU; scripts/gpu-validate.sh builds it, runs it under popmon
// and compares popmon's device counters with Nsight Compute's on the same
// kernels (ncu --launch-skip 4 --launch-count 4: the four region launches
// of `gpu_counters --reps 1`, after the four warm-up launches).
//
//   nvcc -O2 -arch=native -ccbin mpicxx -I../../shim -I. -o gpu_counters gpu_counters.cu
//   mpirun -np 1 ./gpu_counters
//
// - instr_kernel: each thread runs a dependent x = x*a + b chain of
//   GC_ITERS iterations (#pragma unroll 1: one FFMA, the counter's add, its
//   compare and the branch per iteration in the SASS; cuobjdump --dump-sass
//   shows the loop), 4 blocks of 256 threads per SM. Its instruction count
//   is taken from Nsight Compute (sm__inst_executed.sum), not assumed.
// - copy_kernel: float4 grid-stride copy between two arrays of
//   GPU_COUNTERS_BYTES (512 MiB, far above any L2): that many DRAM bytes
//   read and as many written per launch (designed: 2 x 512 MiB, 2 %).
// - occ_kernel: the FMA chain, launched for full occupancy (8 blocks of
//   256 threads per SM, no shared memory: at least 0.6 achieved, tails
//   included) and for a quarter (blocks of 512 threads with dynamic shared
//   memory above half of an SM's: one block, 16 warps, per SM; designed
//   16 / (max threads per SM / 32), 0.25 on Volta to Hopper).
#include <cuda_runtime.h>

#include "devcounters.h"

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "gpu_counters: %s: %s (line %d)\n", #call,        \
				cudaGetErrorString(e_), __LINE__);                        \
			MPI_Abort(MPI_COMM_WORLD, 1);                                     \
		}                                                                         \
	} while (0)

#define GC_ITERS (1 << 18)
#define OCC_ITERS (1 << 16)

__global__ void instr_kernel(float *out, float a, float b, int iters)
{
	float x = (float)threadIdx.x;
#pragma unroll 1
	for (int i = 0; i < iters; i++)
		x = x * a + b;
	if (x == 12345.678f) // never true: keeps the chain
		out[0] = x;
}

__global__ void occ_kernel(float *out, float a, float b, int iters)
{
	extern __shared__ float smem[];
	float x = (float)threadIdx.x;
#pragma unroll 1
	for (int i = 0; i < iters; i++)
		x = x * a + b;
	if (x == 12345.678f) {
		smem[threadIdx.x] = x;
		out[0] = smem[0];
	}
}

__global__ void copy_kernel(const float4 *in, float4 *out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i];
}

static int sms, max_threads;
static size_t quarter_smem;
static float *sink;
static float4 *src, *dst;
static cudaStream_t stream;

static int setup(int rank)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0)
		return 0;
	int dev = rank % n;
	CK(cudaSetDevice(dev));
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, dev));
	sms = p.multiProcessorCount;
	max_threads = p.maxThreadsPerMultiProcessor;
	// One 512-thread block per SM: more than half of an SM's shared memory.
	quarter_smem = p.sharedMemPerMultiprocessor / 2 + 1024;
	if (quarter_smem > p.sharedMemPerBlockOptin) {
		fprintf(stderr, "gpu_counters: the device cannot hold %zu bytes of shared memory per block\n",
			quarter_smem);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	CK(cudaFuncSetAttribute(occ_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)quarter_smem));
	return n;
}

static void launch(int kind, double factor);

static void warm_up(void)
{
	CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CK(cudaMalloc((void **)&sink, sizeof(float)));
	CK(cudaMalloc((void **)&src, (size_t)GPU_COUNTERS_BYTES));
	CK(cudaMalloc((void **)&dst, (size_t)GPU_COUNTERS_BYTES));
	CK(cudaMemset(src, 1, (size_t)GPU_COUNTERS_BYTES));
	for (int k = 0; k < GC_KINDS; k++) // one launch of each, in region order
		launch(k, 1);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
}

static void launch(int kind, double factor)
{
	(void)factor; // the fake's: a GPU's instructions follow from the code
	switch (kind) {
	case GC_INSTR:
		instr_kernel<<<sms * 4, 256, 0, stream>>>(sink, 0.999f, 0.001f, GC_ITERS);
		break;
	case GC_DRAM:
		copy_kernel<<<sms * 8, 256, 0, stream>>>(src, dst, (size_t)(GPU_COUNTERS_BYTES / sizeof(float4)));
		break;
	case GC_OCC_FULL:
		occ_kernel<<<sms * 8 * 4, 256, 0, stream>>>(sink, 0.999f, 0.001f, OCC_ITERS);
		break;
	case GC_OCC_QUARTER:
		occ_kernel<<<sms * 4, 512, quarter_smem, stream>>>(sink, 0.999f, 0.001f, OCC_ITERS);
		break;
	}
}

static void sync_device(void)
{
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
}

static double designed(int kind, int what)
{
	switch (what) {
	case GC_WHAT_DRAM_BYTES:
		return kind == GC_DRAM ? 2 * GPU_COUNTERS_BYTES : -1;
	case GC_WHAT_OCCUPANCY:
		return kind == GC_OCC_QUARTER ? 16.0 / (max_threads / 32) : -1;
	case GC_WHAT_OCCUPANCY_MIN:
		return kind == GC_OCC_FULL ? 0.6 : -1;
	}
	return -1; // instructions: Nsight Compute's; SM frequency: nvidia-smi's
}

int main(int argc, char **argv)
{
	const struct gc_ops ops = {setup, warm_up, launch, sync_device, designed};
	return gc_main(argc, argv, &ops);
}
