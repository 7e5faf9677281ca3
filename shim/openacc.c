/* openacc.c: OpenACC through the OpenACC Profiling Interface (openacc.h).
 *
 * Each start event opens a span of the calling thread, each end event closes
 * it; the thread's outermost span is GPU runtime time (popmon_gpu_api, as a
 * CUDA API call's): host time in compute constructs, enter and exit data,
 * update and wait is the offload's cost on the host (device offload
 * efficiency), as DLB's TALP counts it. Per-thread depth only: no lock, no
 * allocation, no system call on the event path.
 */
#include <stddef.h>

#include "base/clock.h"
#include "base/process.h"
#include "base/threads.h"
#include "gpu.h"
#include "gpu_mode.h"
#include "openacc.h"

/* Open OpenACC spans of this thread (an end without its start, from before
 * libpopmon registered, is ignored). */
static __thread int acc_depth __attribute__((tls_model("initial-exec")));

static void acc_start(struct popmon_acc_prof_info *info, void *event_info, void *api_info)
{
	(void)info;
	(void)event_info;
	(void)api_info;
	if (acc_depth++ == 0)
		popmon_gpu_api(popmon_tls, POPMON_CUPTI_API_ENTER, popmon_now());
}

static void acc_end(struct popmon_acc_prof_info *info, void *event_info, void *api_info)
{
	(void)info;
	(void)event_info;
	(void)api_info;
	if (acc_depth == 0)
		return;
	if (--acc_depth == 0)
		popmon_gpu_api(popmon_tls, POPMON_CUPTI_API_EXIT, popmon_now());
}

void acc_register_library(popmon_acc_prof_reg reg, popmon_acc_prof_reg unreg, popmon_acc_prof_lookup lookup)
{
	(void)unreg;
	(void)lookup;
	popmon_ensure_init();
	if (!reg || popmon_proc.inert || popmon_gpu_mode() == 0)
		return;
	static const int pairs[][2] = {
		{POPMON_ACC_EV_COMPUTE_CONSTRUCT_START, POPMON_ACC_EV_COMPUTE_CONSTRUCT_END},
		{POPMON_ACC_EV_ENTER_DATA_START, POPMON_ACC_EV_ENTER_DATA_END},
		{POPMON_ACC_EV_EXIT_DATA_START, POPMON_ACC_EV_EXIT_DATA_END},
		{POPMON_ACC_EV_UPDATE_START, POPMON_ACC_EV_UPDATE_END},
		{POPMON_ACC_EV_WAIT_START, POPMON_ACC_EV_WAIT_END},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		reg(pairs[i][0], acc_start, POPMON_ACC_REG);
		reg(pairs[i][1], acc_end, POPMON_ACC_REG);
	}
}
