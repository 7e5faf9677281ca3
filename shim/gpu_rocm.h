/* gpu_rocm.h: the AMD backend of the GPU measurement (gpu_rocm.c:
 * rocprofiler-sdk). */
#ifndef POPMON_GPU_ROCM_H
#define POPMON_GPU_ROCM_H

#include <stdint.h>

#include "gpu.h"

/* The backend (gpu_backends.h lists it): its why answers when HIP was used
 * (no SDK, its error, its version), else leaves it to the default backend
 * (CUPTI's); its probe is its part of popmon doctor's. */
extern const struct popmon_gpu_ops popmon_gpu_rocm_ops;

/* The entry points rocprofiler-register and rocprofiler-sdk look for. */
struct popmon_rocp_configure_result;
struct popmon_rocp_configure_result *rocprofiler_configure(uint32_t version, const char *runtime_version,
							   uint32_t priority, void *client);
int rocprofiler_set_api_table(const char *name, uint64_t lib_version, uint64_t lib_instance, void **tables,
			      uint64_t num_tables);

#endif /* POPMON_GPU_ROCM_H */
