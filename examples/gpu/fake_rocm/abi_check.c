/* abi_check.c: libpopmon's reading of the rocprofiler-sdk ABI
 * (shim/gpu_rocm_abi.h) against the fake SDK's own (fakerocp.h).
 *
 * Both were written from the SDK's documentation, separately; a misreading
 * in one of them fails to compile here (every check is a _Static_assert),
 * and the program prints "ok". Which of the two is right is checked against
 * the real headers (the comment of shim/gpu_rocm_abi.h says which).
 */
#include <stddef.h>
#include <stdio.h>

#include "fakerocp.h"
#include "gpu_rocm_abi.h"

#define SAME(a, b) _Static_assert((a) == (b), #a " == " #b)
#define FIELD(pt, pf, ft, ff)                                                             \
	SAME(offsetof(pt, pf), offsetof(ft, ff));                                         \
	SAME(sizeof(((pt *)0)->pf), sizeof(((ft *)0)->ff))

/* registration */
SAME(sizeof(struct popmon_rocp_configure_result), sizeof(frp_configure_result_t));
FIELD(struct popmon_rocp_configure_result, initialize, frp_configure_result_t, initialize);
FIELD(struct popmon_rocp_configure_result, finalize, frp_configure_result_t, finalize);
FIELD(struct popmon_rocp_configure_result, tool_data, frp_configure_result_t, tool_data);
SAME(sizeof(struct popmon_rocp_client_v0), sizeof(frp_client0_t));
FIELD(struct popmon_rocp_client_v0, name, frp_client0_t, name);
FIELD(struct popmon_rocp_client_v0, handle, frp_client0_t, handle);
SAME(sizeof(struct popmon_rocp_client_v1), sizeof(frp_client1_t));
FIELD(struct popmon_rocp_client_v1, size, frp_client1_t, size);
FIELD(struct popmon_rocp_client_v1, name, frp_client1_t, name);
FIELD(struct popmon_rocp_client_v1, handle, frp_client1_t, handle);

/* callback records, both layouts */
SAME(sizeof(struct popmon_rocp_callback_record_v0), sizeof(frp_cb_record0_t));
FIELD(struct popmon_rocp_callback_record_v0, context, frp_cb_record0_t, ctx);
FIELD(struct popmon_rocp_callback_record_v0, thread_id, frp_cb_record0_t, tid);
FIELD(struct popmon_rocp_callback_record_v0, correlation.internal, frp_cb_record0_t, corr_internal);
FIELD(struct popmon_rocp_callback_record_v0, kind, frp_cb_record0_t, kind);
FIELD(struct popmon_rocp_callback_record_v0, operation, frp_cb_record0_t, op);
FIELD(struct popmon_rocp_callback_record_v0, phase, frp_cb_record0_t, phase);
FIELD(struct popmon_rocp_callback_record_v0, payload, frp_cb_record0_t, payload);
SAME(sizeof(struct popmon_rocp_callback_record_v1), sizeof(frp_cb_record1_t));
FIELD(struct popmon_rocp_callback_record_v1, context, frp_cb_record1_t, ctx);
FIELD(struct popmon_rocp_callback_record_v1, thread_id, frp_cb_record1_t, tid);
FIELD(struct popmon_rocp_callback_record_v1, correlation.internal, frp_cb_record1_t, corr_internal);
FIELD(struct popmon_rocp_callback_record_v1, correlation.ancestor, frp_cb_record1_t, corr_ancestor);
FIELD(struct popmon_rocp_callback_record_v1, kind, frp_cb_record1_t, kind);
FIELD(struct popmon_rocp_callback_record_v1, operation, frp_cb_record1_t, op);
FIELD(struct popmon_rocp_callback_record_v1, phase, frp_cb_record1_t, phase);
FIELD(struct popmon_rocp_callback_record_v1, payload, frp_cb_record1_t, payload);
FIELD(struct popmon_rocp_kernel_symbol, size, frp_kernel_symbol_t, size);
FIELD(struct popmon_rocp_kernel_symbol, kernel_id, frp_kernel_symbol_t, kernel_id);
FIELD(struct popmon_rocp_kernel_symbol, code_object_id, frp_kernel_symbol_t, code_object_id);
FIELD(struct popmon_rocp_kernel_symbol, kernel_name, frp_kernel_symbol_t, kernel_name);
FIELD(struct popmon_rocp_hip_api_data, size, frp_hip_api_data_t, size);

/* buffer records */
SAME(sizeof(struct popmon_rocp_record_header), sizeof(frp_header_t));
FIELD(struct popmon_rocp_record_header, category, frp_header_t, category);
FIELD(struct popmon_rocp_record_header, kind, frp_header_t, kind);
FIELD(struct popmon_rocp_record_header, payload, frp_header_t, payload);
SAME(sizeof(struct popmon_rocp_kernel_dispatch_record), sizeof(frp_kernel_rec_t));
FIELD(struct popmon_rocp_kernel_dispatch_record, size, frp_kernel_rec_t, size);
FIELD(struct popmon_rocp_kernel_dispatch_record, kind, frp_kernel_rec_t, kind);
FIELD(struct popmon_rocp_kernel_dispatch_record, operation, frp_kernel_rec_t, op);
FIELD(struct popmon_rocp_kernel_dispatch_record, thread_id, frp_kernel_rec_t, tid);
FIELD(struct popmon_rocp_kernel_dispatch_record, start, frp_kernel_rec_t, start);
FIELD(struct popmon_rocp_kernel_dispatch_record, end, frp_kernel_rec_t, end);
FIELD(struct popmon_rocp_kernel_dispatch_record, info.agent, frp_kernel_rec_t, info.agent);
FIELD(struct popmon_rocp_kernel_dispatch_record, info.kernel_id, frp_kernel_rec_t, info.kernel_id);
FIELD(struct popmon_rocp_kernel_dispatch_record, info.dispatch_id, frp_kernel_rec_t, info.dispatch_id);
SAME(sizeof(struct popmon_rocp_memory_copy_record), offsetof(frp_copy_rec_t, dst_address));
FIELD(struct popmon_rocp_memory_copy_record, size, frp_copy_rec_t, size);
FIELD(struct popmon_rocp_memory_copy_record, kind, frp_copy_rec_t, kind);
FIELD(struct popmon_rocp_memory_copy_record, operation, frp_copy_rec_t, op);
FIELD(struct popmon_rocp_memory_copy_record, thread_id, frp_copy_rec_t, tid);
FIELD(struct popmon_rocp_memory_copy_record, start, frp_copy_rec_t, start);
FIELD(struct popmon_rocp_memory_copy_record, end, frp_copy_rec_t, end);
FIELD(struct popmon_rocp_memory_copy_record, dst_agent, frp_copy_rec_t, dst);
FIELD(struct popmon_rocp_memory_copy_record, src_agent, frp_copy_rec_t, src);
FIELD(struct popmon_rocp_memory_copy_record, bytes, frp_copy_rec_t, bytes);

/* agents */
SAME(POPMON_ROCP_AGENT_SIZE_MIN, offsetof(frp_agent_info_t, uuid));
SAME(POPMON_ROCP_AGENT_SIZE_UUID, sizeof(frp_agent_info_t));
FIELD(struct popmon_rocp_agent, size, frp_agent_info_t, size);
FIELD(struct popmon_rocp_agent, id, frp_agent_info_t, id);
FIELD(struct popmon_rocp_agent, type, frp_agent_info_t, type);
FIELD(struct popmon_rocp_agent, location_id, frp_agent_info_t, location_id);
FIELD(struct popmon_rocp_agent, domain, frp_agent_info_t, domain);
FIELD(struct popmon_rocp_agent, gpu_id, frp_agent_info_t, gpu_id);
FIELD(struct popmon_rocp_agent, name, frp_agent_info_t, name);
FIELD(struct popmon_rocp_agent, vendor_name, frp_agent_info_t, vendor_name);
FIELD(struct popmon_rocp_agent, product_name, frp_agent_info_t, product_name);
FIELD(struct popmon_rocp_agent, model_name, frp_agent_info_t, model_name);
FIELD(struct popmon_rocp_agent, node_id, frp_agent_info_t, node_id);
FIELD(struct popmon_rocp_agent, logical_node_id, frp_agent_info_t, logical_node_id);
FIELD(struct popmon_rocp_agent, logical_node_type_id, frp_agent_info_t, logical_node_type_id);
FIELD(struct popmon_rocp_agent, visibility, frp_agent_info_t, visibility);
FIELD(struct popmon_rocp_agent, uuid, frp_agent_info_t, uuid);

/* values */
SAME(POPMON_ROCP_SUCCESS, FRP_OK);
SAME(POPMON_ROCP_ERROR_CONTEXT_NOT_FOUND, FRP_ERROR_CONTEXT_NOT_FOUND);
SAME(POPMON_ROCP_ERROR_BUFFER_NOT_FOUND, FRP_ERROR_BUFFER_NOT_FOUND);
SAME(POPMON_ROCP_ERROR_KIND_NOT_FOUND, FRP_ERROR_KIND_NOT_FOUND);
SAME(POPMON_ROCP_ERROR_OPERATION_NOT_FOUND, FRP_ERROR_OPERATION_NOT_FOUND);
SAME(POPMON_ROCP_PHASE_ENTER, FRP_PHASE_ENTER);
SAME(POPMON_ROCP_PHASE_EXIT, FRP_PHASE_EXIT);
SAME(POPMON_ROCP_CB_HIP_RUNTIME_API, FRP_CB_KIND_HIP_RUNTIME);
SAME(POPMON_ROCP_CB_CODE_OBJECT, FRP_CB_KIND_CODE_OBJECT);
SAME(POPMON_ROCP_CODE_OBJECT_LOAD, FRP_CODE_OBJECT_LOAD);
SAME(POPMON_ROCP_CODE_OBJECT_KERNEL_SYMBOL, FRP_CODE_OBJECT_KERNEL_SYMBOL);
SAME(POPMON_ROCP_BUF_MEMORY_COPY, FRP_BUF_KIND_MEMORY_COPY);
SAME(POPMON_ROCP_BUF_KERNEL_DISPATCH, FRP_BUF_KIND_KERNEL_DISPATCH);
SAME(POPMON_ROCP_CATEGORY_TRACING, FRP_CATEGORY_TRACING);
SAME(POPMON_ROCP_COPY_HTOH, FRP_COPY_HOST_TO_HOST);
SAME(POPMON_ROCP_COPY_HTOD, FRP_COPY_HOST_TO_DEVICE);
SAME(POPMON_ROCP_COPY_DTOH, FRP_COPY_DEVICE_TO_HOST);
SAME(POPMON_ROCP_COPY_DTOD, FRP_COPY_DEVICE_TO_DEVICE);
SAME(POPMON_ROCP_DISPATCH_COMPLETE, FRP_DISPATCH_COMPLETE);
SAME(POPMON_ROCP_POLICY_DISCARD, FRP_POLICY_DISCARD);
SAME(POPMON_ROCP_POLICY_LOSSLESS, FRP_POLICY_LOSSLESS);
SAME(POPMON_ROCP_AGENT_CPU, FRP_AGENT_CPU);
SAME(POPMON_ROCP_AGENT_GPU, FRP_AGENT_GPU);
SAME(POPMON_ROCP_AGENT_INFO_VERSION_0, FRP_AGENT_INFO_VERSION_0);
SAME(POPMON_ROCP_LIBRARY, FRP_LIB_SDK);
SAME(POPMON_ROCP_HIP_hipDeviceSynchronize, FRP_HIP_hipDeviceSynchronize);
SAME(POPMON_ROCP_HIP_hipExtLaunchKernel, FRP_HIP_hipExtLaunchKernel);
SAME(POPMON_ROCP_HIP_hipFree, FRP_HIP_hipFree);
SAME(POPMON_ROCP_HIP_hipGetDevice, FRP_HIP_hipGetDevice);
SAME(POPMON_ROCP_HIP_hipGetDeviceCount, FRP_HIP_hipGetDeviceCount);
SAME(POPMON_ROCP_HIP_hipGetLastError, FRP_HIP_hipGetLastError);
SAME(POPMON_ROCP_HIP_hipLaunchKernel, FRP_HIP_hipLaunchKernel);
SAME(POPMON_ROCP_HIP_hipMalloc, FRP_HIP_hipMalloc);
SAME(POPMON_ROCP_HIP_hipMemcpy, FRP_HIP_hipMemcpy);
SAME(POPMON_ROCP_HIP_hipMemcpyAsync, FRP_HIP_hipMemcpyAsync);
SAME(POPMON_ROCP_HIP_hipMemcpyPeer, FRP_HIP_hipMemcpyPeer);
SAME(POPMON_ROCP_HIP_hipMemcpyPeerAsync, FRP_HIP_hipMemcpyPeerAsync);
SAME(POPMON_ROCP_HIP_hipMemsetAsync, FRP_HIP_hipMemsetAsync);
SAME(POPMON_ROCP_HIP_hipModuleLaunchKernel, FRP_HIP_hipModuleLaunchKernel);
SAME(POPMON_ROCP_HIP_hipSetDevice, FRP_HIP_hipSetDevice);
SAME(POPMON_ROCP_HIP_hipStreamSynchronize, FRP_HIP_hipStreamSynchronize);

int main(void)
{
	puts("ok");
	return 0;
}
