/* fakehip.h: a fake HIP stack for testing AMD GPU measurement without a GPU.
 *
 * Written for popmon's tests from AMD's public ROCm documentation; no AMD
 * code or header is used. See README.md in this folder.
 *
 * Two libraries:
 *   libamdhip64.so         (fakehip.c) the "HIP runtime": a tiny API
 *                          (below) that applications call instead of HIP,
 *                          on simulated devices whose streams have
 *                          busy-until times, and, at the first call, the
 *                          registration that rocprofiler-register does for
 *                          the real runtime (a visible rocprofiler_configure
 *                          or ROCP_TOOL_LIBRARIES loads the SDK);
 *   librocprofiler-sdk.so  (fakesdk.c) the rocprofiler-sdk subset a tool
 *                          needs: registration, contexts, HIP runtime API
 *                          callback tracing, code object (kernel symbol)
 *                          callbacks, buffers with kernel dispatch and
 *                          memory copy records, agents, the timestamp.
 *
 * The runtime reports what happens to the SDK through the profiler
 * interface at the end of this file (the SDK fills it in when the runtime
 * registers its table with rocprofiler_set_api_table).
 */
#ifndef FAKEHIP_H
#define FAKEHIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the application-facing "runtime" API (think hipXxx) --------------- */

/** Number of streams per device (0 .. FAKEHIP_STREAMS-1). */
#define FAKEHIP_STREAMS 8

/** Copy directions: hipMemcpyKind's values, and a peer copy
 *  (hipMemcpyPeer). */
enum fakehip_copy_kind {
	FAKEHIP_HTOH = 0,
	FAKEHIP_HTOD = 1,
	FAKEHIP_DTOH = 2,
	FAKEHIP_DTOD = 3,
	FAKEHIP_PTOP = 10
};

/** Chooses the calling process's device (hipSetDevice); 0 or -1 (bad
 *  ordinal). */
int fakehip_set_device(int ordinal);

/** The calling process's device (hipGetDevice, a trivial getter) and the
 *  number of devices it sees (hipGetDeviceCount). */
int fakehip_get_device(int *ordinal);
int fakehip_get_device_count(int *count);

/** The last error (hipGetLastError, a trivial getter): always 0. */
int fakehip_get_last_error(void);

/** Launches a kernel `name` that runs `ms` milliseconds on `stream`
 *  (asynchronous, hipLaunchKernel). It starts when the stream is free. */
int fakehip_launch(const char *name, double ms, int stream);

/** The same through hipModuleLaunchKernel (as Triton and other JIT
 *  compilers launch). */
int fakehip_module_launch(const char *name, double ms, int stream);

/** A launch through hipExtLaunchKernel whose implementation calls
 *  hipLaunchKernel through the runtime's dispatch table, so that the two
 *  calls' callbacks nest (a test of a tool's per-thread depth; not a claim
 *  about how real HIP implements hipExtLaunchKernel). */
int fakehip_nested_launch(const char *name, double ms, int stream);

/** Blocks until every stream of the current device is idle
 *  (hipDeviceSynchronize). */
int fakehip_sync(void);

/** Blocks until `stream` is idle (hipStreamSynchronize). */
int fakehip_stream_sync(int stream);

/** A copy of `bytes` that takes `ms` on the device, on `stream`.
 *  async = 0: the call returns when the copy has ended (hipMemcpy);
 *  async = 1: it returns at once (hipMemcpyAsync). kind PTOP copies from
 *  device `peer` to the current one (hipMemcpyPeer[Async]); `peer` is
 *  ignored otherwise. Host-to-device, device-to-host and peer copies are
 *  done by the DMA engines (memory copy records); a device-to-device copy
 *  on one device is done by a blit kernel, "__amd_rocclr_copyBuffer" (a
 *  kernel dispatch record), as HIP does; a host-to-host copy has no device
 *  activity (a synchronous one takes `ms` on the host). */
int fakehip_memcpy(size_t bytes, double ms, int kind, int async, int stream, int peer);

/** A memset of `bytes` that takes `ms` on `stream` (hipMemsetAsync): a
 *  fill kernel, "__amd_rocclr_fillBufferAligned", as HIP does. */
int fakehip_memset(size_t bytes, double ms, int stream);

/** Device memory allocation and release (hipMalloc, hipFree): `ms` of
 *  host time inside the call, no device activity. */
int fakehip_malloc(size_t bytes, double ms);
int fakehip_free(double ms);

/* ---- the profiler interface between libamdhip64.so and the SDK --------- */

/** One device activity, as the runtime sees it. */
struct fakehip_activity {
	int what;              /* FAKEHIP_ACT_* */
	int device;            /* the machine's device (physical index) that runs it */
	int src_device;        /* copies: the source's device, -1: the host */
	int dst_device;        /* copies: the destination's device, -1: the host */
	uint64_t start, end;   /* SDK clock, ns */
	uint64_t bytes;
	const char *name;      /* kernels: the symbol, e.g. "k.kd" (valid for the process) */
	uint32_t stream;
	uint64_t correlation;  /* the API call's internal correlation id */
	uint64_t thread_id;    /* gettid() of the launching thread */
};
enum { FAKEHIP_ACT_KERNEL = 1, FAKEHIP_ACT_COPY = 2 };

/** Words of per-call state the runtime keeps for the SDK. */
#define FAKEHIP_API_STATE 8

/** What the SDK gives the runtime. All functions may be called from any
 *  thread; none is called with a runtime lock held. */
struct fakehip_profiler {
	/** The SDK's clock in ns (the simulation runs on it). */
	uint64_t (*now)(void);
	/** A new internal correlation id (one per API call). */
	uint64_t (*correlation)(void);
	/** An API call: op is the HIP runtime API operation id, phase 1
	 *  enter / 2 exit; state (one word per tracing context) is kept by
	 *  the runtime from enter to exit. */
	void (*api)(int32_t op, int32_t phase, uint64_t correlation, uint64_t state[FAKEHIP_API_STATE]);
	/** A code object with these kernel symbols was loaded for `device`
	 *  (before the first dispatch of any of them there). */
	void (*code_object)(int device, const char *const *symbols, int n);
	/** A device activity was queued (its record comes when it ends). */
	void (*activity)(const struct fakehip_activity *a);
};

/** What rocprofiler_set_api_table receives for "hip" (tables[0]). */
struct fakehip_table {
	uint64_t size; /* sizeof(struct fakehip_table) */
	const struct fakehip_profiler *_Atomic profiler; /* set by the SDK */
	int ndevices;  /* the machine's devices (FAKEHIP_DEVICES) */
};

#ifdef __cplusplus
}
#endif

#endif /* FAKEHIP_H */
