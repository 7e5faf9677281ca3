// gpu_pop_hip.cpp: the GPU validation scenarios V1-V10 (scenarios.h) on a
// real AMD GPU: gpu_pop.cu itself, built with hipcc, the CUDA runtime names
// it uses mapped to HIP's below. Usage, designed timelines and expected
// metrics: scenarios.h and examples/gpu/README.md; scripts/gpu-validate.sh
// --vendor amd builds and runs it.
//
//   hipcc -O2 --offload-arch=native -I../../shim -I. $(mpicxx --showme:compile)
//         -o gpu_pop_hip gpu_pop_hip.cpp $(mpicxx --showme:link)
//   mpirun -np 1 ./gpu_pop_hip V1    (V6 and V7: -np 2)
//
// What differs from the CUDA build (the #ifdef GPU_POP_AMD parts of
// gpu_pop.cu):
// - The kernels spin on wall_clock64(), a counter at the device's constant
//   wall-clock rate (hipDeviceAttributeWallClockRate, kHz; copied to each
//   device the program uses, before its first launch there), in place of
//   %globaltimer, and nap with __builtin_amdgcn_s_sleep(32) (about 2048
//   cycles, ~1 us) in place of __nanosleep(1000).
// - Every kernel is extern "C", so that rocprofiler-sdk's kernel symbols
//   name them as the expected values do (kernels:storm_kernel), not
//   _Z11spin_kernely.
// - Pinned host memory comes from hipHostMalloc (hipMallocHost is
//   deprecated).
// Everything else — streams, events, copies, threads, arguments, output — is
// gpu_pop.cu's, line for line. On AMD, host-to-device copies must run on
// the DMA (SDMA) engines as they do by default: with HSA_ENABLE_SDMA=0 they
// become blit kernels, device work rather than communication, and V4's and
// V5's values change.
//
// With hipcc on the NVIDIA platform (HIP_PLATFORM=nvidia) GPU_POP_AMD is not
// defined: the program is then gpu_pop.cu through HIP's CUDA headers (not
// tested).
#include <hip/hip_runtime.h>

#ifdef __HIP_PLATFORM_AMD__
#define GPU_POP_AMD 1
#endif
#define GPU_POP_HIP 1

#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaSetDevice hipSetDevice
#define cudaGetDevice hipGetDevice
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaMemGetInfo hipMemGetInfo
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMallocHost(ptr, size) hipHostMalloc((ptr), (size), hipHostMallocDefault)
#define cudaFreeHost hipHostFree
#define cudaMemset hipMemset
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaStream_t hipStream_t
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamDestroy hipStreamDestroy
#define cudaEvent_t hipEvent_t
#define cudaEventCreate hipEventCreate
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime

#include "gpu_pop.cu"
