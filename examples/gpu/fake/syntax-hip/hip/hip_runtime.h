/* hip/hip_runtime.h: NOT the HIP runtime. The few declarations
 * ../../../gpu_pop_hip.cpp (through ../../../gpu_pop.cu) uses, written for
 * popmon's tests, so that clang can parse it as HIP (clang++ -x hip
 * -nogpuinc -nogpulib --offload-arch=gfx90a -fsyntax-only) on machines
 * without ROCm; see ../../README.md. Nothing built with it can run. */
#include <stddef.h>
#include <stdlib.h>

#define __HIP_PLATFORM_AMD__ 1

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __constant__ __attribute__((constant))

typedef int hipError_t;
enum { hipSuccess = 0 };
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
enum hipMemcpyKind { hipMemcpyHostToDevice = 1, hipMemcpyDeviceToDevice = 3 };
enum hipDeviceAttribute_t { hipDeviceAttributeWallClockRate = 10000 };
enum { hipStreamNonBlocking = 1, hipHostMallocDefault = 0 };

struct dim3 {
	unsigned x, y, z;
	__host__ __device__ dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

struct uint3 {
	unsigned x, y, z;
};
extern __device__ const uint3 threadIdx, blockIdx, blockDim;

extern "C" {
hipError_t hipGetDeviceCount(int *);
hipError_t hipSetDevice(int);
hipError_t hipGetDevice(int *);
hipError_t hipDeviceGetAttribute(int *, hipDeviceAttribute_t, int);
hipError_t hipFree(void *);
hipError_t hipMalloc(void **, size_t);
hipError_t hipHostMalloc(void **, size_t, unsigned);
hipError_t hipHostFree(void *);
hipError_t hipStreamCreateWithFlags(hipStream_t *, unsigned);
hipError_t hipStreamSynchronize(hipStream_t);
hipError_t hipStreamDestroy(hipStream_t);
hipError_t hipMemset(void *, int, size_t);
hipError_t hipEventCreate(hipEvent_t *);
hipError_t hipEventRecord(hipEvent_t, hipStream_t);
hipError_t hipEventSynchronize(hipEvent_t);
hipError_t hipEventElapsedTime(float *, hipEvent_t, hipEvent_t);
hipError_t hipMemcpyAsync(void *, const void *, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipMemcpy(void *, const void *, size_t, hipMemcpyKind);
hipError_t hipMemGetInfo(size_t *, size_t *);
hipError_t hipDeviceSynchronize(void);
hipError_t hipGetLastError(void);
const char *hipGetErrorString(hipError_t);
hipError_t __hipPushCallConfiguration(dim3, dim3, size_t = 0, hipStream_t = 0);
}
/* as hip-clang's: a symbol is named by itself, and taken by reference */
#define HIP_SYMBOL(X) X
template <class T>
hipError_t hipMemcpyToSymbol(const T &, const void *, size_t, size_t = 0, hipMemcpyKind = hipMemcpyHostToDevice);
__device__ long long int wall_clock64(void);
