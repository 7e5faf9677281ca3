/* gpu_cupti_pm.h: NVIDIA device counters through CUPTI's PM sampling
 * (gpu_cupti_pm.c), for the CUPTI backend. */
#ifndef POPMON_GPU_CUPTI_PM_H
#define POPMON_GPU_CUPTI_PM_H

#include "gpu.h"

/* The CUPTI backend's device counters (gpu_cupti_pm.c): sampling starts
 * on the device of a context created (ctx: CUPTI's context), decodes at
 * flush and on its own thread, and fills its part of the record
 * at finish. cupti_version: cuptiGetVersion's value (what the reason names
 * when this CUPTI has no PM sampling). */
void popmon_cupti_pm_context(const struct popmon_gpu_backend *b, void *ctx, unsigned cupti_version);
void popmon_cupti_pm_flush(void);
void popmon_cupti_pm_finish(struct popmon_gpu_proc *out);

#endif /* POPMON_GPU_CUPTI_PM_H */
