/* fakecuda.h: a fake CUDA stack for testing GPU measurement without a GPU.
 *
 * Written for popmon's tests from the public CUDA/CUPTI documentation; no
 * NVIDIA code or header is used. See README.md in this folder.
 *
 * Two libraries:
 *   libcuda.so.1  (fakecuda.c)  the "driver": cuInit with the injection hook
 *                 (CUDA_INJECTION64_PATH), a few device queries, and a tiny
 *                 "runtime" API (below) that applications call instead of
 *                 CUDA: kernels, copies, memsets and synchronisation on
 *                 simulated devices whose streams have busy-until times;
 *   libcupti.so   (fakecupti.c) the CUPTI subset popmon uses: callbacks
 *                 around every runtime call and activity records for every
 *                 kernel, copy and memset, timestamped with the clock the
 *                 tool registered.
 *
 * The driver reports what happens to the CUPTI library through the tool
 * interface at the end of this file (libcupti attaches itself when loaded).
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the application-facing "runtime" API (think cudaXxx) ------------- */

/** Number of streams per device (0 .. FAKECUDA_STREAMS-1). */
#define FAKECUDA_STREAMS 8

/** Copy directions, with CUPTI's memcpy kind numbers. */
enum fakecuda_copy_kind {
	FAKECUDA_HTOD = 1,
	FAKECUDA_DTOH = 2,
	FAKECUDA_DTOD = 8,
	FAKECUDA_HTOH = 9,
	FAKECUDA_PTOP = 10
};

/** Chooses the calling process's device (cudaSetDevice); 0 or -1 (bad
 *  ordinal). The context is created by the next call on that device. */
int fakecuda_set_device(int ordinal);

/** Launches a kernel `name` that runs `ms` milliseconds on `stream`
 *  (asynchronous, cudaLaunchKernel). It starts when the stream is free. */
int fakecuda_launch(const char *name, double ms, int stream);

/** Blocks until every stream of the current device is idle
 *  (cudaDeviceSynchronize). */
int fakecuda_sync(void);

/** Blocks until `stream` is idle (cudaStreamSynchronize). */
int fakecuda_stream_sync(int stream);

/** A copy of `bytes` that takes `ms` on the device, on `stream`.
 *  async = 0: the call returns when the copy has ended (cudaMemcpy);
 *  async = 1: it returns at once (cudaMemcpyAsync). kind PTOP copies from
 *  device `peer` (cudaMemcpyPeer); `peer` is ignored otherwise. */
int fakecuda_memcpy(size_t bytes, double ms, int kind, int async, int stream, int peer);

/** A memset of `bytes` that takes `ms` on `stream` (cudaMemsetAsync). */
int fakecuda_memset(size_t bytes, double ms, int stream);

/** What a kernel does to the device's performance counters (the fake's
 *  PM sampling reads them, in proportion of time, from the samples its
 *  run overlaps): warp instructions executed in all, the fraction of the
 *  SMs it keeps active, its achieved occupancy (warps active per active SM
 *  cycle over the most an SM holds) and the DRAM bytes it reads and
 *  writes. fakecuda_launch's kernels keep every SM active at occupancy
 *  0.5 and execute one warp instruction per active SM cycle, no DRAM. */
struct fakecuda_counters {
	double instructions, sm_fraction, occupancy, dram_read, dram_write;
};

/** fakecuda_launch with designed counters (c NULL: the defaults). */
int fakecuda_launch_counted(const char *name, double ms, int stream, const struct fakecuda_counters *c);

/** The simulated device's SMs (FAKECUDA_SMS, default 132), SM clock in
 *  MHz (FAKECUDA_SM_MHZ, default 1755) and the most warps an SM holds
 *  (64: 2048 threads). */
int fakecuda_sms(void);
double fakecuda_sm_mhz(void);
#define FAKECUDA_MAX_WARPS 64

/** Device memory of `bytes` on the current device (cudaMalloc): host
 *  memory underneath, which MPI can move, known to cuPointerGetAttribute
 *  as device memory (CUDA-aware MPI); NULL when out of slots (64). */
void *fakecuda_malloc(size_t bytes);

/** A cheap runtime call that does no device work (cudaGetDevice). */
int fakecuda_get_device(int *ordinal);

/** The driver API called directly, as Triton, CuPy and Numba do: a kernel
 *  launch (cuLaunchKernel) and a context synchronisation (cuCtxSynchronize),
 *  with DRIVER callbacks only. */
int fakecuda_drv_launch(const char *name, double ms, int stream);
int fakecuda_drv_sync(void);

/* ---- the tool interface between libcuda.so.1 and libcupti.so ----------- */

/** One device activity, as the driver sees it. */
struct fakecuda_activity {
	int what; /* FAKECUDA_ACT_* */
	int copy_kind; /* enum fakecuda_copy_kind (copies) */
	uint64_t start, end; /* tool clock, ns */
	uint32_t device, src_device, context_id, stream, correlation;
	uint64_t bytes;
	const char *name; /* kernels: valid for the life of the process */
	struct fakecuda_counters counters; /* kernels: what they count */
};
enum { FAKECUDA_ACT_KERNEL = 1, FAKECUDA_ACT_MEMCPY, FAKECUDA_ACT_MEMSET };

/** What libcupti gives the driver. All functions may be called from any
 *  thread; none is called with a driver lock held. */
struct fakecuda_tool {
	/** The activity clock in ns (the registered timestamp callback, or
	 *  CLOCK_REALTIME as CUPTI's default). */
	uint64_t (*now)(void);
	/** An API callback: domain 1 driver / 2 runtime, site 0 enter / 1 exit. */
	void (*api)(uint32_t domain, uint32_t cbid, const char *name, uint32_t site,
		    uint32_t correlation, void *context);
	/** A resource callback (domain 3): 1 context created, 2 destroy starting. */
	void (*resource)(uint32_t cbid, void *context);
	/** A device activity to record (kept until it has ended and is flushed). */
	void (*activity)(const struct fakecuda_activity *a);
};

/** Called by libcupti when it is loaded (NULL detaches). */
void fakecuda_attach_tool(const struct fakecuda_tool *tool);

#ifdef __cplusplus
}
#endif

#endif /* FAKECUDA_H */
