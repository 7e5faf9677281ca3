/* gpu_backends.c: the table of GPU backends (gpu_backends.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_backends.h"
#include "gpu_cupti.h"
#include "gpu_rocm.h"

const struct popmon_gpu_ops *const popmon_gpu_backends[] = {
	&popmon_gpu_cupti_ops, /* the default */
	&popmon_gpu_rocm_ops,
	NULL,
};

const struct popmon_gpu_ops *popmon_gpu_backend_of(int64_t vendor)
{
	for (int i = 0; popmon_gpu_backends[i]; i++)
		if (popmon_gpu_backends[i]->vendor == vendor)
			return popmon_gpu_backends[i];
	return popmon_gpu_backends[0];
}

void popmon_gpu_backends_probe(void)
{
	for (int i = 0; popmon_gpu_backends[i]; i++)
		popmon_gpu_backends[i]->probe();
}

void popmon_gpu_finish(struct popmon_gpu_proc *out, uint64_t g0_ns, uint64_t g1_ns, int rank)
{
	if (!popmon_gpu_finish_measured(out, g0_ns, g1_ns)) {
		int mode = (int)out->mode, said = 0;
		for (int i = 1; popmon_gpu_backends[i] && !said; i++)
			said = popmon_gpu_backends[i]->why(out, mode);
		if (!said)
			popmon_gpu_backends[0]->why(out, mode);
	}
	const char *distinct = getenv("POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK");
	if (distinct && strcmp(distinct, "1") == 0 && rank >= 0) {
		for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
			size_t l = strlen(out->dev[d].uuid);
			snprintf(out->dev[d].uuid + l, sizeof out->dev[d].uuid - l, "-r%d", rank);
		}
	}
}
