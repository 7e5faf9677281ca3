/* gpu_rocm.h: the AMD backend of the GPU measurement (gpu_rocm.c:
 * rocprofiler-sdk). */
#ifndef POPMON_GPU_ROCM_H
#define POPMON_GPU_ROCM_H

#include <stdint.h>

#include "gpu.h"

/* Finish of a process no backend measured: the rocprofiler-sdk backend
 * says why when HIP was used (1; no SDK, its error, its version), else 0
 * and the CUPTI backend says it (gpu_cupti.h). */
int popmon_gpu_rocm_why(struct popmon_gpu_proc *out, int mode);

/* The AMD backend (gpu_rocm.c): the entry points rocprofiler-register and
 * rocprofiler-sdk look for, and its part of popmon doctor's probe. */
struct popmon_rocp_configure_result;
struct popmon_rocp_configure_result *rocprofiler_configure(uint32_t version, const char *runtime_version,
							   uint32_t priority, void *client);
int rocprofiler_set_api_table(const char *name, uint64_t lib_version, uint64_t lib_instance, void **tables,
			      uint64_t num_tables);
void popmon_gpu_rocm_probe(void);

#endif /* POPMON_GPU_ROCM_H */
