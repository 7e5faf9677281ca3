/* openacc.h: OpenACC through the OpenACC Profiling Interface (openacc.c).
 *
 * An OpenACC runtime (NVHPC's, GCC's libgomp) loads the library named by
 * ACC_PROFLIB (`popmon run` sets it to libpopmon, internal/launch) and calls
 * its acc_register_library, through which libpopmon registers callbacks for
 * the host side of offloading: compute constructs, enter and exit data,
 * update and wait. The outermost of these events on a thread is GPU runtime
 * time (POPMON_ST_GPU_RUNTIME, through popmon_gpu_api: only useful time
 * becomes it, and a CUDA call inside, as NVHPC's runtime makes, nests and
 * counts once); device work still comes from the GPU backend's activity
 * records. Not yet validated on a real GPU (CI: GCC's host fallback).
 *
 * The types are written for popmon from the OpenACC specification (3.x,
 * chapter 5 "Profiling and Error Callback Interface"): no vendor header is
 * used. Only the prefix libpopmon reads is declared.
 */
#ifndef POPMON_OPENACC_H
#define POPMON_OPENACC_H

/* acc_event_t: the events libpopmon registers (their spec values). */
enum {
	POPMON_ACC_EV_ENTER_DATA_START = 10,
	POPMON_ACC_EV_ENTER_DATA_END = 11,
	POPMON_ACC_EV_EXIT_DATA_START = 12,
	POPMON_ACC_EV_EXIT_DATA_END = 13,
	POPMON_ACC_EV_UPDATE_START = 14,
	POPMON_ACC_EV_UPDATE_END = 15,
	POPMON_ACC_EV_COMPUTE_CONSTRUCT_START = 16,
	POPMON_ACC_EV_COMPUTE_CONSTRUCT_END = 17,
	POPMON_ACC_EV_WAIT_START = 24,
	POPMON_ACC_EV_WAIT_END = 25,
};
/* acc_register_t */
enum { POPMON_ACC_REG = 0 };

/* acc_prof_info: its first member, the event (an acc_event_t, an int). */
struct popmon_acc_prof_info {
	int event_type;
	int valid_bytes;
	int version;
};
typedef void (*popmon_acc_prof_callback)(struct popmon_acc_prof_info *info, void *event_info, void *api_info);
/* acc_prof_reg: acc_prof_register and acc_prof_unregister. */
typedef void (*popmon_acc_prof_reg)(int event, popmon_acc_prof_callback cb, int reg);
typedef void (*popmon_acc_query_fn)(void);
typedef popmon_acc_query_fn (*popmon_acc_prof_lookup)(const char *name);

/* The spec's entry point, exported under its name (a compatibility name):
 * registers libpopmon's callbacks. */
void acc_register_library(popmon_acc_prof_reg reg, popmon_acc_prof_reg unreg, popmon_acc_prof_lookup lookup);

#endif /* POPMON_OPENACC_H */
