/* fakerocp.h: the fake rocprofiler-sdk's own declarations of the SDK's ABI.
 *
 * Written for popmon's tests from the rocprofiler-sdk documentation
 * (registration, contexts, callback and buffer tracing, agents); no AMD code
 * or header is used. Deliberately independent of libpopmon's declarations
 * (shim/gpu_rocm_abi.h), so that a misreading in one is not silently shared:
 * abi_check.c compares the two.
 *
 * Layouts by SDK version (FAKEROCM_VERSION): 0.x is rocprofiler-sdk 0.4.0
 * to 0.6.0 (ROCm 6.2 to 6.4), 1.x is 1.0.0 (ROCm 7.0).
 */
#ifndef FAKEROCP_H
#define FAKEROCP_H

#include <stddef.h>
#include <stdint.h>

/* rocprofiler_status_t: the values the fake returns (stable ones). */
#define FRP_OK 0
#define FRP_ERROR 1
#define FRP_ERROR_CONTEXT_NOT_FOUND 2
#define FRP_ERROR_BUFFER_NOT_FOUND 3
#define FRP_ERROR_KIND_NOT_FOUND 4
#define FRP_ERROR_OPERATION_NOT_FOUND 5
/* These moved by one in 0.6.0 (a status was inserted before them): the
 * fake answers with the numbering of the version it plays. */
#define FRP_ERROR_BUFFER_BUSY(v06) ((v06) ? 14 : 13)
#define FRP_ERROR_SERVICE_ALREADY_CONFIGURED(v06) ((v06) ? 15 : 14)
#define FRP_ERROR_CONFIGURATION_LOCKED(v06) ((v06) ? 16 : 15)
#define FRP_ERROR_INCOMPATIBLE_ABI(v06) ((v06) ? 18 : 17)
#define FRP_ERROR_INVALID_ARGUMENT(v06) ((v06) ? 19 : 18)
#define FRP_ERROR_FINALIZED(v06) ((v06) ? 21 : 20)

/* Phases, kinds, operations. */
#define FRP_PHASE_NONE 0
#define FRP_PHASE_ENTER 1
#define FRP_PHASE_EXIT 2
#define FRP_CB_KIND_HIP_RUNTIME 5
#define FRP_CB_KIND_CODE_OBJECT 10
#define FRP_CB_KIND_LAST 16 /* kinds are below this */
#define FRP_CODE_OBJECT_LOAD 1
#define FRP_CODE_OBJECT_KERNEL_SYMBOL 2
#define FRP_BUF_KIND_MEMORY_COPY 10
#define FRP_BUF_KIND_KERNEL_DISPATCH 11
#define FRP_BUF_KIND_LAST 32
#define FRP_CATEGORY_TRACING 1
#define FRP_COPY_HOST_TO_HOST 1
#define FRP_COPY_HOST_TO_DEVICE 2
#define FRP_COPY_DEVICE_TO_HOST 3
#define FRP_COPY_DEVICE_TO_DEVICE 4
#define FRP_DISPATCH_COMPLETE 2
#define FRP_POLICY_DISCARD 1
#define FRP_POLICY_LOSSLESS 2
#define FRP_AGENT_CPU 1
#define FRP_AGENT_GPU 2
#define FRP_AGENT_INFO_VERSION_0 1
#define FRP_LIB_SDK 1

typedef struct { uint64_t handle; } frp_context_t;
typedef struct { uint64_t handle; } frp_buffer_t;
typedef struct { uint64_t handle; } frp_agent_t;
typedef struct { uint64_t handle; } frp_cb_thread_t;
typedef union { uint64_t value; void *ptr; } frp_user_data_t;

/* The client id: 0.x {name, handle}; 1.x {size, name, handle}. */
typedef struct { const char *name; uint32_t handle; } frp_client0_t;
typedef struct { size_t size; const char *name; uint32_t handle; } frp_client1_t;
typedef void (*frp_client_fini0_t)(frp_client0_t);
typedef void (*frp_client_fini1_t)(frp_client1_t);

typedef int (*frp_tool_init_t)(void (*client_fini)(void), void *tool_data);
typedef void (*frp_tool_fini_t)(void *tool_data);
typedef struct {
	size_t size;
	frp_tool_init_t initialize;
	frp_tool_fini_t finalize;
	void *tool_data;
} frp_configure_result_t;
typedef frp_configure_result_t *(*frp_configure_t)(uint32_t version, const char *version_string,
						   uint32_t priority, void *client);

/* The callback tracing record, passed by value; 1.x's correlation id has a
 * third word (the ancestor). */
typedef struct {
	frp_context_t ctx;
	uint64_t tid;
	uint64_t corr_internal;
	frp_user_data_t corr_external;
	int32_t kind, op, phase;
	void *payload;
} frp_cb_record0_t;
typedef struct {
	frp_context_t ctx;
	uint64_t tid;
	uint64_t corr_internal;
	frp_user_data_t corr_external;
	uint64_t corr_ancestor;
	int32_t kind, op, phase;
	void *payload;
} frp_cb_record1_t;
typedef void (*frp_cb0_t)(frp_cb_record0_t record, frp_user_data_t *user, void *arg);
typedef void (*frp_cb1_t)(frp_cb_record1_t record, frp_user_data_t *user, void *arg);
typedef int (*frp_op_iter_t)(int32_t kind, int32_t op, void *data);

/* Payloads of callbacks. HIP API: the size comes first (the arguments,
 * which the fake does not fill, follow). Kernel symbol: 72 bytes before
 * 0.6.0, 88 since. Code object load: 88 bytes. */
typedef struct { uint64_t size; uint8_t args[64]; } frp_hip_api_data_t;
typedef struct {
	uint64_t size, kernel_id, code_object_id;
	const char *kernel_name;
	uint64_t kernel_object;
	uint32_t kernarg_size, kernarg_align, group_size, private_size, sgprs, vgprs, accum_vgprs;
	int64_t entry_offset;
	uint64_t kernel_address; /* 0.6.0 on */
} frp_kernel_symbol_t;
typedef struct {
	uint64_t size, code_object_id, agent, hsa_agent;
	const char *uri;
	uint64_t load_base, load_size;
	int64_t load_delta;
	uint32_t storage_type;
	uint64_t memory_base, memory_size;
} frp_code_object_t;

/* Buffer records. */
typedef struct {
	uint32_t category, kind;
	void *payload;
} frp_header_t;
typedef void (*frp_buffer_cb_t)(frp_context_t ctx, frp_buffer_t buffer, frp_header_t **headers, size_t n,
				void *data, uint64_t drops);
typedef struct {
	uint64_t size;
	frp_agent_t agent;
	uint64_t queue, kernel_id, dispatch_id;
	uint32_t private_segment, group_segment;
	uint32_t workgroup[3], grid[3];
	uint8_t spare[56];
} frp_dispatch_info_t;
typedef struct {
	uint64_t size;
	uint32_t kind, op;
	uint64_t corr_internal;
	frp_user_data_t corr_external;
	uint64_t tid, start, end;
	frp_dispatch_info_t info;
} frp_kernel_rec_t;
typedef struct {
	uint64_t size;
	uint32_t kind, op;
	uint64_t corr_internal;
	frp_user_data_t corr_external;
	uint64_t tid, start, end;
	frp_agent_t dst, src;
	uint64_t bytes;
	uint64_t dst_address, src_address; /* 1.x only: the 0.x record ends before them */
} frp_copy_rec_t;
#define FRP_COPY_REC_SIZE(v1) ((v1) ? sizeof(frp_copy_rec_t) : offsetof(frp_copy_rec_t, dst_address))
#define FRP_KSYM_SIZE(v06) ((v06) ? sizeof(frp_kernel_symbol_t) : offsetof(frp_kernel_symbol_t, kernel_address))

/* The agent (rocprofiler_agent_v0_t): the fields the fake fills, at their
 * documented places; the others stay zero. 0.4/0.5: 296 bytes; 0.6.0 and
 * 1.0.0 (ROCm 7.0): 304 with an 8-byte UUID; 1.0.0 after 2025-07: 312 with
 * 16 bytes (the fake plays the 304-byte form for 0.6 and 1.x). */
typedef struct {
	uint64_t size;
	frp_agent_t id;
	uint32_t type;
	uint32_t cpu_cores, simds, mem_banks, caches, io_links, cpu_core_base, simd_base, waves_per_simd,
		lds_kb, gds_kb, gws, wavefront, xccs, cus, arrays, shader_banks, arrays_per_engine,
		cus_per_array, simds_per_cu, scratch_slots, gfx_target;
	uint16_t vendor_id, device_id;
	uint32_t location_id, domain, drm_minor, sdma, sdma_xgmi, sdma_queues, cp_queues, clk_cpu, clk_gpu;
	uint32_t sdma_fw, fw, capability, cus_per_engine, waves_per_cu, family, wg_max, grid_max;
	uint64_t local_mem, hive_id, gpu_id;
	uint32_t wg_max_dim[3], grid_max_dim[3];
	const void *mem_bank_list, *cache_list, *io_link_list;
	const char *name, *vendor_name, *product_name, *model_name;
	uint32_t node_id;
	int32_t logical_node_id, logical_node_type_id;
	uint32_t visibility; /* 0.6.0 on; padding before */
	uint64_t uuid;       /* 0.6.0 on: the KFD unique id */
} frp_agent_info_t;
#define FRP_AGENT_SIZE(v06) ((v06) ? sizeof(frp_agent_info_t) : offsetof(frp_agent_info_t, uuid))
typedef int (*frp_agents_cb_t)(uint32_t version, const void **agents, size_t n, void *data);

typedef void (*frp_thread_cb_t)(int libs, void *data);

_Static_assert(sizeof(frp_cb_record0_t) == 56 && offsetof(frp_cb_record0_t, payload) == 48, "0.x callback record");
_Static_assert(sizeof(frp_cb_record1_t) == 64 && offsetof(frp_cb_record1_t, payload) == 56, "1.x callback record");
_Static_assert(sizeof(frp_kernel_rec_t) == 184 && offsetof(frp_kernel_rec_t, info) == 56, "kernel dispatch record");
_Static_assert(sizeof(frp_copy_rec_t) == 96 && offsetof(frp_copy_rec_t, bytes) == 72, "memory copy record");
_Static_assert(sizeof(frp_kernel_symbol_t) == 88 && offsetof(frp_kernel_symbol_t, kernel_address) == 80, "symbol");
_Static_assert(sizeof(frp_code_object_t) == 88, "code object");
_Static_assert(offsetof(frp_agent_info_t, location_id) == 108 && offsetof(frp_agent_info_t, gpu_id) == 192,
	       "agent: PCI location and KFD id");
_Static_assert(offsetof(frp_agent_info_t, name) == 248 && offsetof(frp_agent_info_t, node_id) == 280 &&
		       offsetof(frp_agent_info_t, uuid) == 296 && sizeof(frp_agent_info_t) == 304,
	       "agent: names, nodes, UUID");

/* HIP runtime API operation ids the fake runtime calls, with the values of
 * rocprofiler-sdk 1.0.0 (ROCm 7.0) — equal for these calls from 0.4.0 on.
 * FAKEROCM_OP_SHIFT adds a constant to every id the SDK shows a tool (names
 * stay), to check that a tool maps names at run time. */
#define FRP_HIP_hipDeviceSynchronize 66
#define FRP_HIP_hipExtLaunchKernel 84
#define FRP_HIP_hipFree 90
#define FRP_HIP_hipGetDevice 102
#define FRP_HIP_hipGetDeviceCount 103
#define FRP_HIP_hipGetLastError 109
#define FRP_HIP_hipLaunchKernel 214
#define FRP_HIP_hipMalloc 215
#define FRP_HIP_hipMemcpy 259
#define FRP_HIP_hipMemcpyAsync 268
#define FRP_HIP_hipMemcpyPeer 282
#define FRP_HIP_hipMemcpyPeerAsync 283
#define FRP_HIP_hipMemsetAsync 293
#define FRP_HIP_hipModuleLaunchKernel 308
#define FRP_HIP_hipSetDevice 327
#define FRP_HIP_hipStreamSynchronize 346
#define FRP_HIP_LAST 477 /* 1.0.0's count of HIP runtime API operations */

#endif /* FAKEROCP_H */
