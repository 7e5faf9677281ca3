/* cuda_runtime.h: NOT the CUDA runtime. The few declarations gpu_pop.cu and
 * gpu_counters.cu use,
 * written for popmon's tests, so that clang can parse gpu_pop.cu
 * (clang++ -x cuda -nocudainc -nocudalib -fsyntax-only) on machines without
 * the CUDA toolkit; see ../README.md. Nothing built with it can run. */
#include <stddef.h>
#include <stdlib.h>

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

typedef int cudaError_t;
enum { cudaSuccess = 0 };
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToDevice = 3 };
enum { cudaStreamNonBlocking = 1 };

struct dim3 {
	unsigned x, y, z;
	__host__ __device__ dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

struct uint3 {
	unsigned x, y, z;
};
extern __device__ const uint3 threadIdx, blockIdx, blockDim, gridDim;

struct float4 {
	float x, y, z, w;
};
struct cudaDeviceProp {
	int multiProcessorCount, maxThreadsPerMultiProcessor;
	size_t sharedMemPerMultiprocessor, sharedMemPerBlockOptin;
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <class T> cudaError_t cudaFuncSetAttribute(T *, cudaFuncAttribute, int);

extern "C" {
cudaError_t cudaGetDeviceCount(int *);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *, int);
cudaError_t cudaSetDevice(int);
cudaError_t cudaGetDevice(int *);
cudaError_t cudaFree(void *);
cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaMallocHost(void **, size_t);
cudaError_t cudaFreeHost(void *);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *, unsigned);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaStreamDestroy(cudaStream_t);
cudaError_t cudaMemset(void *, int, size_t);
cudaError_t cudaEventCreate(cudaEvent_t *);
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t);
cudaError_t cudaEventSynchronize(cudaEvent_t);
cudaError_t cudaEventElapsedTime(float *, cudaEvent_t, cudaEvent_t);
cudaError_t cudaMemcpyAsync(void *, const void *, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemcpy(void *, const void *, size_t, cudaMemcpyKind);
cudaError_t cudaMemGetInfo(size_t *, size_t *);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorString(cudaError_t);
int cudaConfigureCall(dim3, dim3, size_t = 0, cudaStream_t = 0);
}
__device__ void __nanosleep(unsigned);
