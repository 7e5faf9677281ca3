/* dlb_compat.c: the rest of DLB 3.7's C API (<dlb.h>, <dlb_drom.h>), so that a
 * program built against DLB's headers and -ldlb links and runs against
 * libpopmon (the prefix of `popmon dlb-home`). popmon implements TALP
 * (regions.c, talp_api.c), LeWI's calls (lewi.c, on with DLB_ARGS=--lewi or
 * POPMON_LEWI=1; off, they return DLB_ERR_NOLEWI as DLB does) and DROM's
 * (drom.c: the DLB_DROM_* administrator calls always; DLB_PollDROM in a
 * process with DLB_ARGS=--drom or POPMON_DROM=1, else DLB_ERR_NOCOMP). Only
 * compatibility names are exported here. docs/coming-from-dlb.md lists
 * every call. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "barrier.h"
#include "base/dlbargs.h"
#include "base/process.h"
#include "drom.h"
#include "lewi.h"
#include "talp_api.h"

/* DLB 3.7's return codes (<dlb_errors.h>). */
enum {
	DLB_NOUPDT = 2, DLB_NOTED = 1, DLB_SUCCESS = 0, DLB_ERR_UNKNOWN = -1, DLB_ERR_NOINIT = -2,
	DLB_ERR_INIT = -3, DLB_ERR_DISBLD = -4, DLB_ERR_NOSHMEM = -5, DLB_ERR_NOPROC = -6, DLB_ERR_PDIRTY = -7,
	DLB_ERR_PERM = -8, DLB_ERR_TIMEOUT = -9, DLB_ERR_NOCBK = -10, DLB_ERR_NOENT = -11, DLB_ERR_NOCOMP = -12,
	DLB_ERR_REQST = -13, DLB_ERR_NOMEM = -14, DLB_ERR_NOPOL = -15, DLB_ERR_NOTALP = -16, DLB_ERR_NOLEWI = -17,
};

/* DLB_Init once: a second call is DLB_ERR_INIT, DLB_Finalize undoes it. */
static int initialized;
/* Callbacks kept for DLB_CallbackGet; DROM invokes set_process_mask (3). */
static void (*callbacks[10])(void);
static void *callback_args[10];

/* The prototypes (exported names; no header of ours declares them). */
int DLB_Init(int ncpus, const void *mask, const char *dlb_args);
int DLB_Finalize(void);
int DLB_PreInit(const void *mask, char ***next_environ);
int DLB_Enable(void);
int DLB_Disable(void);
int DLB_SetMaxParallelism(int max);
int DLB_UnsetMaxParallelism(void);
int DLB_CallbackSet(int which, void (*callback)(void), void *arg);
int DLB_CallbackGet(int which, void (**callback)(void), void **arg);
int DLB_Lend(void);
int DLB_LendCpu(int cpuid);
int DLB_LendCpus(int ncpus);
int DLB_LendCpuMask(const void *mask);
int DLB_Reclaim(void);
int DLB_ReclaimCpu(int cpuid);
int DLB_ReclaimCpus(int ncpus);
int DLB_ReclaimCpuMask(const void *mask);
int DLB_AcquireCpu(int cpuid);
int DLB_AcquireCpus(int ncpus);
int DLB_AcquireCpuMask(const void *mask);
int DLB_AcquireCpusInMask(int ncpus, const void *mask);
int DLB_Borrow(void);
int DLB_BorrowCpu(int cpuid);
int DLB_BorrowCpus(int ncpus);
int DLB_BorrowCpuMask(const void *mask);
int DLB_BorrowCpusInMask(int ncpus, const void *mask);
int DLB_Return(void);
int DLB_ReturnCpu(int cpuid);
int DLB_ReturnCpuMask(const void *mask);
int DLB_PollDROM(int *ncpus, void *mask);
int DLB_PollDROM_Update(void);
int DLB_CheckCpuAvailability(int cpuid);
int DLB_Barrier(void);
int DLB_BarrierAttach(void);
int DLB_BarrierDetach(void);
void *DLB_BarrierNamedRegister(const char *barrier_name, int flags);
void *DLB_BarrierNamedGet(const char *barrier_name, int flags);
int DLB_BarrierNamed(void *barrier);
int DLB_BarrierNamedAttach(void *barrier);
int DLB_BarrierNamedDetach(void *barrier);
int DLB_SetVariable(const char *variable, const char *value);
int DLB_GetVariable(const char *variable, char *value);
int DLB_PrintVariables(int print_extended);
int DLB_PrintShmem(int num_columns, int print_flags);
const char *DLB_Strerror(int errnum);
int DLB_SetObserverRole(bool thread_is_observer);
int DLB_GetVersion(int *major, int *minor, int *patch);
int DLB_GetGPUAffinity(char *buffer, size_t buffer_size, bool full_uuid);
int DLB_AutoSizerStart(void);
int DLB_AutoSizerEnd(void);
int DLB_DROM_Attach(void);
int DLB_DROM_Detach(void);
int DLB_DROM_GetNumCpus(int *ncpus);
int DLB_DROM_GetPidList(int *pidlist, int *nelems, int max_len);
int DLB_DROM_GetProcessMask(int pid, void *mask, int flags);
int DLB_DROM_SetProcessMask(int pid, const void *mask, int flags);
int DLB_DROM_SetProcessMaskStr(int pid, const char *mask, int flags);
int DLB_DROM_PreInit(int pid, const void *mask, int flags, char ***next_environ);
int DLB_DROM_PostFinalize(int pid, int flags);
int DLB_DROM_RecoverStolenCpus(int pid);
int DLB_TALP_CollectNodeMetrics(void *monitor, struct dlb_node_metrics_compat *node_metrics);
int DLB_TALP_CollectPOPNodeMetrics(void *monitor, struct dlb_node_metrics_compat *metrics);

/* ---------------------------------------------------------------- general */

int DLB_Init(int ncpus, const void *mask, const char *dlb_args)
{
	(void)ncpus;
	if (initialized)
		return DLB_ERR_INIT;
	initialized = 1;
	/* DLB's options given here (--lewi, --drom, their settings) act as if
	 * in DLB_ARGS; TALP measures by DLB_ARGS or popmon run, from load. */
	popmon_dlb_args_add(dlb_args);
	popmon_barrier_start(); /* --barrier (DLB's default): the node barrier */
	popmon_drom_start(); /* DLB_ARGS=--drom: registered (if not yet) */
	/* LeWI (DLB_ARGS=--lewi): this process's CPUs (mask, else its
	 * affinity) into the node's registry; its error is DLB_Init's. */
	if (popmon_lewi_enabled())
		return popmon_lewi_init((const cpu_set_t *)mask);
	return DLB_SUCCESS;
}

int DLB_Finalize(void)
{
	if (!initialized)
		return DLB_ERR_NOINIT;
	initialized = 0;
	popmon_barrier_stop();
	popmon_lewi_finalize();
	return DLB_SUCCESS;
}

int DLB_PreInit(const void *mask, char ***next_environ)
{
	(void)mask;
	(void)next_environ;
	return DLB_ERR_NOCOMP;
}

int DLB_Enable(void)
{
	return DLB_SUCCESS;
}

int DLB_Disable(void)
{
	return DLB_SUCCESS;
}

int DLB_SetObserverRole(bool thread_is_observer)
{
	(void)thread_is_observer;
	return DLB_SUCCESS;
}

/* dlb_callback_set_process_mask (3), called when DROM gives this process
 * a new mask at DLB_PollDROM_Update (drom.c). */
static void call_process_mask(const cpu_set_t *mask)
{
	void (*fn)(void) = callbacks[3];
	if (fn)
		((void (*)(const void *, void *))fn)(mask, callback_args[3]);
}

int DLB_CallbackSet(int which, void (*callback)(void), void *arg)
{
	if (which < 1 || which > 9)
		return DLB_ERR_NOCBK;
	callbacks[which] = callback;
	callback_args[which] = arg;
	if (which == 3)
		popmon_drom_mask_hook(callback ? call_process_mask : NULL);
	return DLB_SUCCESS;
}

int DLB_CallbackGet(int which, void (**callback)(void), void **arg)
{
	if (which < 1 || which > 9)
		return DLB_ERR_NOCBK;
	if (callback)
		*callback = callbacks[which];
	if (arg)
		*arg = callback_args[which];
	return DLB_SUCCESS;
}

int DLB_SetVariable(const char *variable, const char *value)
{
	(void)variable;
	(void)value;
	return DLB_ERR_NOCOMP; /* DLB_ARGS is read once, at start-up */
}

int DLB_GetVariable(const char *variable, char *value)
{
	(void)variable;
	(void)value;
	return DLB_ERR_NOCOMP;
}

int DLB_PrintVariables(int print_extended)
{
	popmon_dlb_help(stderr, print_extended ? 2 : 1);
	return DLB_SUCCESS;
}

int DLB_PrintShmem(int num_columns, int print_flags)
{
	(void)num_columns;
	(void)print_flags;
	return DLB_ERR_NOCOMP;
}

const char *DLB_Strerror(int errnum)
{
	switch (errnum) {
	case DLB_NOUPDT: return "The requested operation does not need any action";
	case DLB_NOTED: return "The operation cannot be performed now, but it has been attended";
	case DLB_SUCCESS: return "Success";
	case DLB_ERR_UNKNOWN: return "Unknown error";
	case DLB_ERR_NOINIT: return "DLB has not been initialized";
	case DLB_ERR_INIT: return "DLB is already initialized";
	case DLB_ERR_DISBLD: return "DLB is disabled";
	case DLB_ERR_NOSHMEM: return "DLB cannot find a shared memory";
	case DLB_ERR_NOPROC: return "DLB cannot find the requested process";
	case DLB_ERR_PDIRTY: return "DLB cannot update the target process, another operation still in process";
	case DLB_ERR_PERM: return "DLB cannot acquire the requested resource";
	case DLB_ERR_TIMEOUT: return "The operation has timed out";
	case DLB_ERR_NOCBK: return "The callback is not defined and cannot be invoked";
	case DLB_ERR_NOENT: return "The entry does not exist";
	case DLB_ERR_NOCOMP: return "The operation is not compatible with the configured DLB options";
	case DLB_ERR_REQST: return "DLB cannot take more requests for a specific resource";
	case DLB_ERR_NOMEM: return "DLB cannot allocate more processes into the shared memory";
	case DLB_ERR_NOPOL: return "The operation is not defined in the current policy";
	case DLB_ERR_NOTALP: return "TALP is not initialized";
	case DLB_ERR_NOLEWI: return "LeWI is not initialized";
	default: return "unknown errnum";
	}
}

int DLB_GetVersion(int *major, int *minor, int *patch)
{
	if (major)
		*major = 3;
	if (minor)
		*minor = 7;
	if (patch)
		*patch = 0;
	return DLB_SUCCESS;
}

int DLB_GetGPUAffinity(char *buffer, size_t buffer_size, bool full_uuid)
{
	(void)buffer;
	(void)buffer_size;
	(void)full_uuid;
	return DLB_ERR_NOCOMP;
}

int DLB_AutoSizerStart(void)
{
	return DLB_ERR_NOCOMP;
}

int DLB_AutoSizerEnd(void)
{
	return DLB_ERR_NOCOMP;
}

/* ---------------------------------------------------------------- LeWI */

/* lewi.c's, with DLB's names: DLB_ERR_NOLEWI when LeWI is off (DLB_ARGS
 * without --lewi, no POPMON_LEWI), DLB_ERR_NOINIT before DLB_Init. */
#define LEWI0(f, g) \
	int f(void) { return g(); }
#define LEWI1(f, T, a, g) \
	int f(T a) { return g(a); }
#define LEWIM(f, g) \
	int f(const void *mask) { return g((const cpu_set_t *)mask); }
#define LEWI2M(f, g) \
	int f(int ncpus, const void *mask) { return g(ncpus, (const cpu_set_t *)mask); }

LEWI1(DLB_SetMaxParallelism, int, max, popmon_lewi_set_max_parallelism)
LEWI0(DLB_UnsetMaxParallelism, popmon_lewi_unset_max_parallelism)
LEWI0(DLB_Lend, popmon_lewi_lend)
LEWI1(DLB_LendCpu, int, cpuid, popmon_lewi_lend_cpu)
LEWI1(DLB_LendCpus, int, ncpus, popmon_lewi_lend_cpus)
LEWIM(DLB_LendCpuMask, popmon_lewi_lend_cpu_mask)
LEWI0(DLB_Reclaim, popmon_lewi_reclaim)
LEWI1(DLB_ReclaimCpu, int, cpuid, popmon_lewi_reclaim_cpu)
LEWI1(DLB_ReclaimCpus, int, ncpus, popmon_lewi_reclaim_cpus)
LEWIM(DLB_ReclaimCpuMask, popmon_lewi_reclaim_cpu_mask)
LEWI1(DLB_AcquireCpu, int, cpuid, popmon_lewi_acquire_cpu)
LEWI1(DLB_AcquireCpus, int, ncpus, popmon_lewi_acquire_cpus)
LEWIM(DLB_AcquireCpuMask, popmon_lewi_acquire_cpu_mask)
LEWI2M(DLB_AcquireCpusInMask, popmon_lewi_acquire_cpus_in_mask)
LEWI0(DLB_Borrow, popmon_lewi_borrow)
LEWI1(DLB_BorrowCpu, int, cpuid, popmon_lewi_borrow_cpu)
LEWI1(DLB_BorrowCpus, int, ncpus, popmon_lewi_borrow_cpus)
LEWIM(DLB_BorrowCpuMask, popmon_lewi_borrow_cpu_mask)
LEWI2M(DLB_BorrowCpusInMask, popmon_lewi_borrow_cpus_in_mask)
LEWI0(DLB_Return, popmon_lewi_return)
LEWI1(DLB_ReturnCpu, int, cpuid, popmon_lewi_return_cpu)
LEWIM(DLB_ReturnCpuMask, popmon_lewi_return_cpu_mask)
LEWI1(DLB_CheckCpuAvailability, int, cpuid, popmon_lewi_check_cpu_availability)

/* ---------------------------------------------------------------- DROM, barriers */

#define NOCOMP0(f) \
	int f(void) { return DLB_ERR_NOCOMP; }
#define NOCOMP1(f, T, a) \
	int f(T a) { (void)a; return DLB_ERR_NOCOMP; }
#define NOCOMP2(f, T, a, U, b) \
	int f(T a, U b) { (void)a; (void)b; return DLB_ERR_NOCOMP; }
#define NOCOMP3(f, T, a, U, b, V, c) \
	int f(T a, U b, V c) { (void)a; (void)b; (void)c; return DLB_ERR_NOCOMP; }

/* The node barrier: barrier.c's, with DLB's names and codes. A named
 * barrier's handle is the address of its id's byte in handles: only ever
 * compared, never read through, so a stray pointer is DLB_ERR_NOCOMP. */
static char handles[POPMON_BARRIER_MAX];

static int handle_id(const void *barrier)
{
	const char *p = barrier;
	for (int id = 1; id < POPMON_BARRIER_MAX; id++)
		if (p == &handles[id])
			return id;
	return -1;
}

int DLB_Barrier(void) { return popmon_barrier_wait(0); }
int DLB_BarrierAttach(void) { return popmon_barrier_attach(0); }
int DLB_BarrierDetach(void) { return popmon_barrier_detach(0); }
int DLB_BarrierNamed(void *barrier) { return popmon_barrier_wait(handle_id(barrier)); }
int DLB_BarrierNamedAttach(void *barrier) { return popmon_barrier_attach(handle_id(barrier)); }
int DLB_BarrierNamedDetach(void *barrier) { return popmon_barrier_detach(handle_id(barrier)); }
/* DROM: drom.c's, with DLB's names and codes (docs/drom.md). */
int DLB_PollDROM(int *ncpus, void *mask) { return popmon_drom_poll(ncpus, (cpu_set_t *)mask); }
int DLB_PollDROM_Update(void) { return popmon_drom_poll_update(); }
int DLB_DROM_Attach(void) { return popmon_drom_attach(); }
int DLB_DROM_Detach(void) { return popmon_drom_detach(); }
int DLB_DROM_GetNumCpus(int *ncpus) { return popmon_drom_get_num_cpus(ncpus); }
int DLB_DROM_GetPidList(int *pidlist, int *nelems, int max_len)
{
	return popmon_drom_get_pid_list(pidlist, nelems, max_len);
}
int DLB_DROM_GetProcessMask(int pid, void *mask, int flags)
{
	return popmon_drom_get_process_mask(pid, (cpu_set_t *)mask, flags);
}
int DLB_DROM_SetProcessMask(int pid, const void *mask, int flags)
{
	return popmon_drom_set_process_mask(pid, (const cpu_set_t *)mask, flags);
}
int DLB_DROM_SetProcessMaskStr(int pid, const char *mask, int flags)
{
	return popmon_drom_set_process_mask_str(pid, mask, flags);
}
int DLB_DROM_PreInit(int pid, const void *mask, int flags, char ***next_environ)
{
	return popmon_drom_preinit(pid, (const cpu_set_t *)mask, flags, next_environ);
}
int DLB_DROM_PostFinalize(int pid, int flags) { return popmon_drom_post_finalize(pid, flags); }
int DLB_DROM_RecoverStolenCpus(int pid) { return popmon_drom_recover_stolen_cpus(pid); }

/* flags: DLB_BARRIER_LEWI_OFF (0), _ON (1), _RUNTIME (2: lends when
 * --lewi-barrier-select names it). */
void *DLB_BarrierNamedRegister(const char *barrier_name, int flags)
{
	int id = popmon_barrier_named(barrier_name, flags);
	return id > 0 ? &handles[id] : NULL;
}

void *DLB_BarrierNamedGet(const char *barrier_name, int flags)
{
	return DLB_BarrierNamedRegister(barrier_name, flags);
}

/* ---------------------------------------------------------------- TALP */

/* DLB's deprecated name of DLB_TALP_CollectPOPNodeMetrics. */
int DLB_TALP_CollectNodeMetrics(void *monitor, struct dlb_node_metrics_compat *node_metrics)
{
	return DLB_TALP_CollectPOPNodeMetrics(monitor, node_metrics);
}
