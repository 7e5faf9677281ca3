/* gpu_mode.c: the modes of the GPU measurement (gpu_mode.h). */
#include "base/env.h"
#include "gpu_mode.h"

const char *const popmon_gpu_mode_names[3] = {"off", "auto", "on"};

int popmon_gpu_mode(void)
{
	return popmon_env_mode("POPMON_GPU", 1);
}

int popmon_gpu_counters_mode(void)
{
	static int mode = -1;
	int m = __atomic_load_n(&mode, __ATOMIC_RELAXED);
	if (m >= 0)
		return m;
	m = popmon_env_mode("POPMON_GPU_COUNTERS", 1);
	if (popmon_gpu_mode() == 0)
		m = 0;
	__atomic_store_n(&mode, m, __ATOMIC_RELAXED);
	return m;
}
