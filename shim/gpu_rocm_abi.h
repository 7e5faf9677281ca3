/* gpu_rocm_abi.h: the part of AMD's rocprofiler-sdk that libpopmon uses.
 *
 * Written for popmon from the SDK's public documentation and headers
 * (nothing is copied; no ROCm header is needed to build libpopmon). Every
 * layout below was compared, field by field, with the structs of the public
 * headers of rocprofiler-sdk 0.4.0 (ROCm 6.2.0, tag rocm-6.2.0), 0.5.0
 * (ROCm 6.3, amd-mainline of 2024-10), 0.6.0 (ROCm 6.4, ROCm/rocm-systems
 * of 2025-02-12), 1.0.0 (ROCm 7.0, release/rocm-rel-7.0 of 2025-08-08) and
 * 1.0.0 as on develop (2025-08-09), x86-64 LP64: include/rocprofiler-sdk/
 * registration.h, fwd.h, context.h, buffer.h, callback_tracing.h,
 * buffer_tracing.h, agent.h, internal_threading.h, rocprofiler.h and
 * hip/runtime_api_id.h. The _Static_asserts hold the offsets libpopmon
 * reads.
 *
 * What differs between those versions, and how a tool copes:
 *  - 1.0.0 put a `size` before the client id's `name` (popmon_rocp_client_v0
 *    / _v1): a tool that writes the name must know which; libpopmon need not
 *    touch it.
 *  - 1.0.0 added an `ancestor` to the correlation id, so the callback
 *    tracing record (passed by value) grew from 56 to 64 bytes and its kind,
 *    operation, phase and payload moved by 8 (popmon_rocp_callback_record_v0
 *    / _v1): a tool registers the callback of the layout of the version
 *    rocprofiler_configure is given.
 *  - 1.0.0 appended the source and destination addresses to the memory copy
 *    record (80 -> 96 bytes); the prefix read here did not move.
 *  - 0.6.0 put a runtime-visibility word where a padding word was and
 *    appended the device UUID to the agent (296 -> 304 bytes; 312 on develop
 *    after 2025-07, where the UUID became 16 bytes); its first 8 bytes hold
 *    the KFD unique id in both forms. The agent's own `size` says whether
 *    the UUID is there.
 *  - Status codes after ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND (5)
 *    shifted by one in 0.6.0: only the stable ones are named here.
 *  - HIP runtime API operation ids are the SDK's enum order, generated from
 *    the HIP dispatch table: the ids of the calls libpopmon cares about have
 *    been equal from 0.4.0 to 1.0.0, but the tail (calls added by HIP table
 *    "step" versions) moved between 0.4.0 and 0.5.0 and depends on the HIP
 *    the SDK was built with. A tool maps names to ids at run time
 *    (iterate_operations + query_operation_name); the ids below are for
 *    tests and documentation only.
 * Function signatures of the entry points in popmon_rocm_backend are the
 * same in all five (const-ness and an int32_t/uint32_t operation aside).
 *
 * Clock: rocprofiler_get_timestamp and every record's timestamps are
 * CLOCK_BOOTTIME nanoseconds in all these versions (the SDK's default clock;
 * kernel and copy times come from the HSA runtime's system-clock domain,
 * also CLOCK_BOOTTIME). libpopmon's accounts are CLOCK_MONOTONIC: the two
 * differ by the time the machine was suspended, so a tool calibrates.
 */
#ifndef POPMON_GPU_ROCM_ABI_H
#define POPMON_GPU_ROCM_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The version number rocprofiler_configure receives. */
#define POPMON_ROCP_VERSION(major, minor, patch) ((major) * 10000u + (minor) * 100u + (patch))
/* Oldest and first unknown versions whose layouts were checked (above). */
#define POPMON_ROCP_VERSION_MIN POPMON_ROCP_VERSION(0, 4, 0)
#define POPMON_ROCP_VERSION_END POPMON_ROCP_VERSION(2, 0, 0)
/* First version with the 1.0 layouts (client id, callback record). */
#define POPMON_ROCP_VERSION_1_0 POPMON_ROCP_VERSION(1, 0, 0)

/* rocprofiler_status_t values that have not moved (0.4.0 to 1.0.0). */
enum {
	POPMON_ROCP_SUCCESS = 0,
	POPMON_ROCP_ERROR = 1,
	POPMON_ROCP_ERROR_CONTEXT_NOT_FOUND = 2,
	POPMON_ROCP_ERROR_BUFFER_NOT_FOUND = 3,
	POPMON_ROCP_ERROR_KIND_NOT_FOUND = 4,
	POPMON_ROCP_ERROR_OPERATION_NOT_FOUND = 5,
};

/* Callback phases (rocprofiler_callback_phase_t). */
enum {
	POPMON_ROCP_PHASE_NONE = 0,
	POPMON_ROCP_PHASE_ENTER = 1, /* also: code object load */
	POPMON_ROCP_PHASE_EXIT = 2,  /* also: code object unload */
};

/* Callback tracing kinds (rocprofiler_callback_tracing_kind_t). */
enum {
	POPMON_ROCP_CB_HIP_RUNTIME_API = 5,
	POPMON_ROCP_CB_HIP_COMPILER_API = 6,
	POPMON_ROCP_CB_CODE_OBJECT = 10,
};

/* Code object operations (rocprofiler_code_object_operation_t). */
enum {
	POPMON_ROCP_CODE_OBJECT_LOAD = 1,
	POPMON_ROCP_CODE_OBJECT_KERNEL_SYMBOL = 2, /* DEVICE_KERNEL_SYMBOL_REGISTER */
};

/* Buffer tracing kinds (rocprofiler_buffer_tracing_kind_t) and the record
 * category (rocprofiler_buffer_category_t). */
enum {
	POPMON_ROCP_BUF_MEMORY_COPY = 10,
	POPMON_ROCP_BUF_KERNEL_DISPATCH = 11,
	POPMON_ROCP_CATEGORY_TRACING = 1,
};

/* Memory copy operations: the copy's direction. */
enum {
	POPMON_ROCP_COPY_NONE = 0,
	POPMON_ROCP_COPY_HTOH = 1,
	POPMON_ROCP_COPY_HTOD = 2,
	POPMON_ROCP_COPY_DTOH = 3,
	POPMON_ROCP_COPY_DTOD = 4,
};

/* Kernel dispatch operations: buffered records carry COMPLETE. */
enum {
	POPMON_ROCP_DISPATCH_ENQUEUE = 1,
	POPMON_ROCP_DISPATCH_COMPLETE = 2,
};

/* Buffer policies (rocprofiler_buffer_policy_t). LOSSLESS: the SDK keeps a
 * second buffer and, when both are full, the thread that adds a record
 * waits for the callback; DISCARD: one buffer, records that do not fit are
 * dropped and counted (the buffer callback's drop_count, cumulative). */
enum {
	POPMON_ROCP_POLICY_DISCARD = 1,
	POPMON_ROCP_POLICY_LOSSLESS = 2,
};

/* Agents (rocprofiler_agent_type_t, rocprofiler_agent_version_t). */
enum {
	POPMON_ROCP_AGENT_CPU = 1,
	POPMON_ROCP_AGENT_GPU = 2,
	POPMON_ROCP_AGENT_INFO_VERSION_0 = 1,
};

/* Libraries for rocprofiler_at_internal_thread_create. */
enum {
	POPMON_ROCP_LIBRARY = 1,
	POPMON_ROCP_HSA_LIBRARY = 2,
	POPMON_ROCP_HIP_LIBRARY = 4,
};

/* HIP runtime API operation ids of rocprofiler-sdk 0.4.0 to 1.0.0 (equal in
 * all five for these calls). For tests and documentation: libpopmon maps
 * names at run time. */
enum {
	POPMON_ROCP_HIP_NONE = -1,
	POPMON_ROCP_HIP_hipDeviceSynchronize = 66,
	POPMON_ROCP_HIP_hipExtLaunchKernel = 84,
	POPMON_ROCP_HIP_hipFree = 90,
	POPMON_ROCP_HIP_hipGetDevice = 102,
	POPMON_ROCP_HIP_hipGetDeviceCount = 103,
	POPMON_ROCP_HIP_hipGetLastError = 109,
	POPMON_ROCP_HIP_hipHostMalloc = 197,
	POPMON_ROCP_HIP_hipLaunchKernel = 214,
	POPMON_ROCP_HIP_hipMalloc = 215,
	POPMON_ROCP_HIP_hipMemcpy = 259,
	POPMON_ROCP_HIP_hipMemcpyAsync = 268,
	POPMON_ROCP_HIP_hipMemcpyPeer = 282,
	POPMON_ROCP_HIP_hipMemcpyPeerAsync = 283,
	POPMON_ROCP_HIP_hipMemset = 288,
	POPMON_ROCP_HIP_hipMemsetAsync = 293,
	POPMON_ROCP_HIP_hipModuleLaunchKernel = 308,
	POPMON_ROCP_HIP_hipSetDevice = 327,
	POPMON_ROCP_HIP_hipStreamSynchronize = 346,
	POPMON_ROCP_HIP_hipStreamWaitEvent = 348,
};

/* ------------------------------------------------------------------ handles */

typedef struct {
	uint64_t handle;
} popmon_rocp_context_id;
typedef struct {
	uint64_t handle;
} popmon_rocp_buffer_id;
typedef struct {
	uint64_t handle;
} popmon_rocp_agent_id;
typedef struct {
	uint64_t handle;
} popmon_rocp_callback_thread;

/* rocprofiler_user_data_t: kept by the SDK between a call's enter and exit
 * callbacks. */
typedef union {
	uint64_t value;
	void *ptr;
} popmon_rocp_user_data;

/* Any function pointer, where the SDK's type depends on the version. */
typedef void (*popmon_rocp_fn)(void);

/* ------------------------------------------------------------------ registration */

/* rocprofiler_client_id_t, which rocprofiler_configure receives a pointer
 * to and the client-finalize function takes by value. */
struct popmon_rocp_client_v0 { /* 0.4.0 to 0.6.0 */
	const char *name;
	uint32_t handle;
};
struct popmon_rocp_client_v1 { /* 1.0.0 */
	size_t size;
	const char *name;
	uint32_t handle;
};
typedef void (*popmon_rocp_client_finalize_v0)(struct popmon_rocp_client_v0 client);
typedef void (*popmon_rocp_client_finalize_v1)(struct popmon_rocp_client_v1 client);

/* The tool's initialize receives the client-finalize function (type by
 * version, above) and tool_data; it returns 0, or -1 to say that it failed
 * (the SDK then ignores the tool's contexts). */
typedef int (*popmon_rocp_tool_initialize)(popmon_rocp_fn client_finalize, void *tool_data);
typedef void (*popmon_rocp_tool_finalize)(void *tool_data);

/* rocprofiler_tool_configure_result_t: what rocprofiler_configure returns
 * (NULL: the tool declines). `size` is sizeof this struct. */
struct popmon_rocp_configure_result {
	size_t size;
	popmon_rocp_tool_initialize initialize;
	popmon_rocp_tool_finalize finalize;
	void *tool_data;
};

/* The symbol a tool exports (version: POPMON_ROCP_VERSION of the SDK;
 * priority: how many tools were configured before this one; client: a
 * popmon_rocp_client_v0 or _v1 by version). */
typedef struct popmon_rocp_configure_result *(*popmon_rocp_configure_fn)(uint32_t version,
									    const char *runtime_version,
									    uint32_t priority, void *client);

/* ------------------------------------------------------------------ callback tracing */

struct popmon_rocp_correlation_v0 { /* rocprofiler_correlation_id_t, 0.4.0 to 0.6.0 */
	uint64_t internal;
	popmon_rocp_user_data external;
};
struct popmon_rocp_correlation_v1 { /* 1.0.0 */
	uint64_t internal;
	popmon_rocp_user_data external;
	uint64_t ancestor;
};

/* rocprofiler_callback_tracing_record_t, passed BY VALUE to the callback:
 * a callback must be declared with the layout of the running version. */
struct popmon_rocp_callback_record_v0 {
	popmon_rocp_context_id context;
	uint64_t thread_id; /* gettid() of the calling thread */
	struct popmon_rocp_correlation_v0 correlation;
	int32_t kind;      /* POPMON_ROCP_CB_* */
	int32_t operation; /* HIP runtime API id, code object operation, ... */
	int32_t phase;     /* POPMON_ROCP_PHASE_* */
	void *payload;     /* kind-specific data (below) */
};
struct popmon_rocp_callback_record_v1 {
	popmon_rocp_context_id context;
	uint64_t thread_id;
	struct popmon_rocp_correlation_v1 correlation;
	int32_t kind;
	int32_t operation;
	int32_t phase;
	void *payload;
};
typedef void (*popmon_rocp_callback_v0)(struct popmon_rocp_callback_record_v0 record, popmon_rocp_user_data *user_data,
					void *callback_arg);
typedef void (*popmon_rocp_callback_v1)(struct popmon_rocp_callback_record_v1 record, popmon_rocp_user_data *user_data,
					void *callback_arg);

/* The payload of a CODE_OBJECT / KERNEL_SYMBOL callback (phase LOAD): the
 * prefix read (the struct is 72 bytes in 0.4.0 and 0.5.0, 88 from 0.6.0).
 * kernel_name is the symbol's mangled name, usually with a ".kd" suffix;
 * it is valid until the code object is unloaded (copy it). */
struct popmon_rocp_kernel_symbol {
	uint64_t size;
	uint64_t kernel_id; /* as in the dispatch record */
	uint64_t code_object_id;
	const char *kernel_name;
};

/* The payload of a HIP_RUNTIME_API callback starts with its size (the
 * arguments follow; libpopmon does not read them). */
struct popmon_rocp_hip_api_data {
	uint64_t size;
};

/* Callbacks of iterate_operations: return 0 to go on, non-zero to stop. */
typedef int (*popmon_rocp_operation_cb)(int32_t kind, int32_t operation, void *data);

/* ------------------------------------------------------------------ buffer tracing */

/* rocprofiler_record_header_t: the buffer callback receives an array of
 * pointers to these; payload points to the record, valid only during the
 * callback (the SDK reuses the buffer when it returns). */
struct popmon_rocp_record_header {
	uint32_t category; /* POPMON_ROCP_CATEGORY_TRACING */
	uint32_t kind;     /* POPMON_ROCP_BUF_* */
	void *payload;
};

/* drop_count: records dropped from this buffer so far (DISCARD policy). */
typedef void (*popmon_rocp_buffer_callback)(popmon_rocp_context_id context, popmon_rocp_buffer_id buffer,
					    struct popmon_rocp_record_header **headers, size_t count, void *data,
					    uint64_t drop_count);

struct popmon_rocp_dim3 {
	uint32_t x, y, z;
};

/* rocprofiler_kernel_dispatch_info_t (128 bytes in every version). */
struct popmon_rocp_dispatch_info {
	uint64_t size;
	popmon_rocp_agent_id agent; /* the GPU that ran the kernel */
	uint64_t queue;
	uint64_t kernel_id; /* the kernel symbol (POPMON_ROCP_CODE_OBJECT_KERNEL_SYMBOL) */
	uint64_t dispatch_id;
	uint32_t private_segment_size;
	uint32_t group_segment_size;
	struct popmon_rocp_dim3 workgroup_size;
	struct popmon_rocp_dim3 grid_size;
	uint8_t reserved[56];
};

/* rocprofiler_buffer_tracing_kernel_dispatch_record_t (184 bytes in every
 * version). start and end: CLOCK_BOOTTIME ns. */
struct popmon_rocp_kernel_dispatch_record {
	uint64_t size;
	uint32_t kind;      /* POPMON_ROCP_BUF_KERNEL_DISPATCH */
	uint32_t operation; /* POPMON_ROCP_DISPATCH_COMPLETE */
	struct popmon_rocp_correlation_v0 correlation; /* async correlation id: 16 bytes in every version */
	uint64_t thread_id; /* the thread that launched it */
	uint64_t start, end;
	struct popmon_rocp_dispatch_info info;
};

/* rocprofiler_buffer_tracing_memory_copy_record_t: the prefix of every
 * version (80 bytes; 1.0.0 appends dst and src addresses: 96). */
struct popmon_rocp_memory_copy_record {
	uint64_t size;
	uint32_t kind;      /* POPMON_ROCP_BUF_MEMORY_COPY */
	uint32_t operation; /* POPMON_ROCP_COPY_*: the direction */
	struct popmon_rocp_correlation_v0 correlation;
	uint64_t thread_id;
	uint64_t start, end;
	popmon_rocp_agent_id dst_agent, src_agent;
	uint64_t bytes;
};

/* ------------------------------------------------------------------ agents */

/* rocprofiler_agent_v0_t as far as libpopmon reads it (the fields between
 * are counts and properties it does not need). 0.4.0 and 0.5.0 end at
 * visibility (a padding word there); uuid exists when size >= 304. */
struct popmon_rocp_agent {
	uint64_t size; /* sizeof the SDK's agent struct */
	popmon_rocp_agent_id id;
	uint32_t type; /* POPMON_ROCP_AGENT_* */
	uint8_t pad0[108 - 20];
	uint32_t location_id; /* PCI bus << 8 | device << 3 | function */
	uint32_t domain;      /* PCI domain */
	uint8_t pad1[192 - 116];
	uint64_t gpu_id; /* the KFD's id of the GPU */
	uint8_t pad2[248 - 200];
	const char *name;         /* e.g. "gfx942" */
	const char *vendor_name;  /* "AMD" */
	const char *product_name; /* marketing name */
	const char *model_name;
	uint32_t node_id;              /* KFD topology node (CPUs and GPUs) */
	int32_t logical_node_id;       /* 0..N-1 over all agents */
	int32_t logical_node_type_id;  /* 0..N-1 over the agents of this type */
	uint32_t visibility;           /* 0.6.0: bit 0 HSA, bit 1 HIP (runtime visibility) */
	uint64_t uuid;                 /* 0.6.0: the KFD unique id (0: none); "GPU-%016llx" as ROCm prints it */
};
/* The agent size to ask for: accepted by every version (the SDK refuses a
 * size larger than its own). */
#define POPMON_ROCP_AGENT_SIZE_MIN 296
#define POPMON_ROCP_AGENT_SIZE_UUID 304

typedef int (*popmon_rocp_agents_cb)(uint32_t version, const void **agents, size_t count, void *data);

/* ------------------------------------------------------------------ checks */

#define POPMON_ROCP_AT(T, f, off) _Static_assert(offsetof(T, f) == (off), #T "." #f " is at " #off)
POPMON_ROCP_AT(struct popmon_rocp_client_v0, name, 0);
POPMON_ROCP_AT(struct popmon_rocp_client_v0, handle, 8);
POPMON_ROCP_AT(struct popmon_rocp_client_v1, name, 8);
POPMON_ROCP_AT(struct popmon_rocp_client_v1, handle, 16);
POPMON_ROCP_AT(struct popmon_rocp_configure_result, initialize, 8);
POPMON_ROCP_AT(struct popmon_rocp_configure_result, finalize, 16);
POPMON_ROCP_AT(struct popmon_rocp_configure_result, tool_data, 24);
_Static_assert(sizeof(struct popmon_rocp_configure_result) == 32, "configure result: 32 bytes");
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v0, thread_id, 8);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v0, correlation, 16);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v0, kind, 32);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v0, operation, 36);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v0, phase, 40);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v0, payload, 48);
_Static_assert(sizeof(struct popmon_rocp_callback_record_v0) == 56, "callback record 0.x: 56 bytes");
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v1, thread_id, 8);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v1, correlation, 16);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v1, kind, 40);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v1, operation, 44);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v1, phase, 48);
POPMON_ROCP_AT(struct popmon_rocp_callback_record_v1, payload, 56);
_Static_assert(sizeof(struct popmon_rocp_callback_record_v1) == 64, "callback record 1.0: 64 bytes");
POPMON_ROCP_AT(struct popmon_rocp_kernel_symbol, kernel_id, 8);
POPMON_ROCP_AT(struct popmon_rocp_kernel_symbol, kernel_name, 24);
POPMON_ROCP_AT(struct popmon_rocp_record_header, kind, 4);
POPMON_ROCP_AT(struct popmon_rocp_record_header, payload, 8);
_Static_assert(sizeof(struct popmon_rocp_dispatch_info) == 128, "dispatch info: 128 bytes");
POPMON_ROCP_AT(struct popmon_rocp_dispatch_info, agent, 8);
POPMON_ROCP_AT(struct popmon_rocp_dispatch_info, kernel_id, 24);
POPMON_ROCP_AT(struct popmon_rocp_kernel_dispatch_record, kind, 8);
POPMON_ROCP_AT(struct popmon_rocp_kernel_dispatch_record, operation, 12);
POPMON_ROCP_AT(struct popmon_rocp_kernel_dispatch_record, thread_id, 32);
POPMON_ROCP_AT(struct popmon_rocp_kernel_dispatch_record, start, 40);
POPMON_ROCP_AT(struct popmon_rocp_kernel_dispatch_record, end, 48);
POPMON_ROCP_AT(struct popmon_rocp_kernel_dispatch_record, info, 56);
_Static_assert(sizeof(struct popmon_rocp_kernel_dispatch_record) == 184, "kernel dispatch record: 184 bytes");
POPMON_ROCP_AT(struct popmon_rocp_memory_copy_record, kind, 8);
POPMON_ROCP_AT(struct popmon_rocp_memory_copy_record, operation, 12);
POPMON_ROCP_AT(struct popmon_rocp_memory_copy_record, thread_id, 32);
POPMON_ROCP_AT(struct popmon_rocp_memory_copy_record, start, 40);
POPMON_ROCP_AT(struct popmon_rocp_memory_copy_record, end, 48);
POPMON_ROCP_AT(struct popmon_rocp_memory_copy_record, dst_agent, 56);
POPMON_ROCP_AT(struct popmon_rocp_memory_copy_record, src_agent, 64);
POPMON_ROCP_AT(struct popmon_rocp_memory_copy_record, bytes, 72);
_Static_assert(sizeof(struct popmon_rocp_memory_copy_record) == 80, "memory copy record prefix: 80 bytes");
POPMON_ROCP_AT(struct popmon_rocp_agent, id, 8);
POPMON_ROCP_AT(struct popmon_rocp_agent, type, 16);
POPMON_ROCP_AT(struct popmon_rocp_agent, location_id, 108);
POPMON_ROCP_AT(struct popmon_rocp_agent, domain, 112);
POPMON_ROCP_AT(struct popmon_rocp_agent, gpu_id, 192);
POPMON_ROCP_AT(struct popmon_rocp_agent, name, 248);
POPMON_ROCP_AT(struct popmon_rocp_agent, product_name, 264);
POPMON_ROCP_AT(struct popmon_rocp_agent, node_id, 280);
POPMON_ROCP_AT(struct popmon_rocp_agent, logical_node_id, 284);
POPMON_ROCP_AT(struct popmon_rocp_agent, logical_node_type_id, 288);
POPMON_ROCP_AT(struct popmon_rocp_agent, visibility, 292);
POPMON_ROCP_AT(struct popmon_rocp_agent, uuid, POPMON_ROCP_AGENT_SIZE_MIN);
_Static_assert(sizeof(struct popmon_rocp_agent) == POPMON_ROCP_AGENT_SIZE_UUID, "agent: 304 bytes with the UUID");
#undef POPMON_ROCP_AT

/* ------------------------------------------------------------------ entry points */

/* The SDK's entry points libpopmon calls, by their rocprofiler names (all
 * return a rocprofiler_status_t: 0 success). The real table is filled with
 * dlsym from the SDK that called rocprofiler_configure (it is loaded by
 * then); tests install their own. Optional entries may be NULL. Services
 * (contexts, buffers, tracing, callback threads) can only be set up inside
 * the tool's initialize; flush, get_timestamp and the queries at any time
 * before the SDK finalizes. */
struct popmon_rocm_backend {
	int (*get_version)(uint32_t *major, uint32_t *minor, uint32_t *patch); /* rocprofiler_get_version */
	int (*get_timestamp)(uint64_t *ns);                                    /* rocprofiler_get_timestamp */
	const char *(*status_string)(int status); /* rocprofiler_get_status_string (optional) */
	/* rocprofiler_create_context: *context must be {0} on entry (0.6.0
	 * refuses anything else) */
	int (*create_context)(popmon_rocp_context_id *context);
	int (*start_context)(popmon_rocp_context_id context);   /* rocprofiler_start_context */
	int (*stop_context)(popmon_rocp_context_id context);    /* rocprofiler_stop_context */
	/* rocprofiler_context_is_valid: *valid is 1 for a valid context (so
	 * the SDK's code, 0.4.0 to 1.0.0; its header comment says nonzero
	 * means invalid) */
	int (*context_is_valid)(popmon_rocp_context_id context, int *valid);
	/* rocprofiler_configure_callback_tracing_service: operations NULL:
	 * all of the kind; callback a popmon_rocp_callback_v0 or _v1 by version. */
	int (*configure_callback_tracing)(popmon_rocp_context_id context, int32_t kind, const int32_t *operations,
					  size_t count, popmon_rocp_fn callback, void *callback_arg);
	/* rocprofiler_iterate_callback_tracing_kind_operations */
	int (*iterate_operations)(int32_t kind, popmon_rocp_operation_cb cb, void *data);
	/* rocprofiler_query_callback_tracing_kind_operation_name (name: a
	 * string the SDK keeps) */
	int (*operation_name)(int32_t kind, int32_t operation, const char **name, uint64_t *length);
	/* rocprofiler_create_buffer: size and watermark in bytes (the callback
	 * runs when a buffer holds watermark bytes; 0: at every record);
	 * *buffer must be {0} on entry. */
	int (*create_buffer)(popmon_rocp_context_id context, size_t size, size_t watermark, int32_t policy,
			     popmon_rocp_buffer_callback callback, void *data, popmon_rocp_buffer_id *buffer);
	/* rocprofiler_configure_buffer_tracing_service (operations NULL: all) */
	int (*configure_buffer_tracing)(popmon_rocp_context_id context, int32_t kind, const int32_t *operations,
					size_t count, popmon_rocp_buffer_id buffer);
	/* rocprofiler_flush_buffer: returns when the buffer's callback has
	 * run on the SDK's thread for every record held (never call it from
	 * the buffer callback or holding a lock that callback takes). */
	int (*flush_buffer)(popmon_rocp_buffer_id buffer);
	/* rocprofiler_query_available_agents (version
	 * POPMON_ROCP_AGENT_INFO_VERSION_0, agent_size
	 * POPMON_ROCP_AGENT_SIZE_MIN): cb runs once, on the calling thread. */
	int (*query_agents)(uint32_t version, popmon_rocp_agents_cb cb, size_t agent_size, void *data);
	/* rocprofiler_create_callback_thread, rocprofiler_assign_callback_thread
	 * (both experimental; optional) */
	int (*create_callback_thread)(popmon_rocp_callback_thread *thread);
	int (*assign_callback_thread)(popmon_rocp_buffer_id buffer, popmon_rocp_callback_thread thread);
	/* rocprofiler_is_finalized (optional): *status 1 finalized, -1 finalizing */
	int (*is_finalized)(int *status);
};

#endif /* POPMON_GPU_ROCM_ABI_H */
