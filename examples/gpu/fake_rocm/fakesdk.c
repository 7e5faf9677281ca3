/* fakesdk.c: a fake librocprofiler-sdk.so for popmon's AMD GPU tests
 * (README.md).
 *
 * Implements, with rocprofiler-sdk's names, signatures, enum values and
 * layouts (fakerocp.h, written from the SDK's documentation), what a tool
 * needs to measure HIP programs:
 *   - registration: when the runtime registers ("hip", through
 *     rocprofiler_set_api_table) the SDK finds the tools — the libraries of
 *     ROCP_TOOL_LIBRARIES (':'-separated), then the rocprofiler_configure
 *     that dlsym(RTLD_DEFAULT) finds (a preloaded library's), then those of
 *     the other loaded objects —, calls each one's rocprofiler_configure
 *     (priority = how many before it), then each one's initialize; services
 *     can only be set up inside initialize; the SDK finalizes at exit
 *     (code objects unloaded, then the tools' finalize);
 *   - contexts; callback tracing of the HIP runtime API (enter and exit, on
 *     the calling thread, with the record layout of the version played) and
 *     of code objects (load and kernel symbol callbacks before a kernel's
 *     first dispatch on a device; unload at finalize, after which the
 *     names read "unloaded");
 *   - buffers of the size asked (two for LOSSLESS, one for DISCARD):
 *     kernel dispatch and memory copy records are written when the work
 *     ends, by the SDK's completion thread (the HSA runtime's signal
 *     handler in the real stack), and handed to the tool's buffer callback
 *     on a callback thread (the default one, or one created and assigned by
 *     the tool) when a buffer holds `watermark` bytes or is full, and by
 *     rocprofiler_flush_buffer, which returns once delivered; LOSSLESS: a
 *     full buffer makes the completion thread wait for the delivery; DISCARD:
 *     records that find no room are counted in drop_count (as the real SDK,
 *     whose DISCARD buffer has no second half, a DISCARD buffer drops every
 *     record after an odd number of deliveries until the next flush);
 *   - agents (one CPU, the machine's GPUs), the version, the timestamp
 *     (CLOCK_BOOTTIME, the SDK's clock), operation names.
 *
 * Environment (all optional):
 *   FAKEROCM_VERSION       the version played, "0.4.0" to "1.0.0" (default
 *                          1.0.0, ROCm 7.0): the client id, the callback
 *                          record, the memory copy record, the agent (UUID
 *                          from 0.6.0) and some status codes follow it
 *   FAKEROCM_OP_SHIFT      added to every HIP runtime API id a tool sees
 *                          (default 0): ids are not stable across ROCm
 *                          versions, names are
 *   FAKEROCM_SUSPENDED_MS  the SDK's clock runs this far ahead of
 *                          CLOCK_MONOTONIC (time the machine was suspended:
 *                          CLOCK_BOOTTIME counts it; default 0)
 *   FAKEROCM_TRACE=1       stderr lines for registration and deliveries
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fakehip.h"
#include "fakerocp.h"

#define EXPORT __attribute__((visibility("default")))

#define MAX_CLIENTS 8
#define MAX_CONTEXTS 16
#define API_CONTEXTS (FAKEHIP_API_STATE - 1) /* contexts that can trace the HIP API; the last word: a mask */
#define MAX_BUFFERS 16
#define MAX_THREADS 8
#define MAX_SYMBOLS 1024
#define MAX_AGENTS 17
#define NOPS (FRP_HIP_LAST + 4096) /* room for FAKEROCM_OP_SHIFT */

/* ---- state -------------------------------------------------------------- */

static int vmaj = 1, vmin, vpat, v1 = 1, v06 = 1, trace;
static uint32_t version_number = 10000;
static char version_string[96] = "1.0.0";
static int32_t op_shift;
static uint64_t suspended_ns;
static _Atomic int init_status; /* 0 none, -1 initialising, 1 done */
static _Atomic int fini_status; /* 0, -1 finalizing, 1 done */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* configuration, symbols */

struct client {
	frp_configure_t configure;
	frp_configure_result_t result;
	int has_result, finalized;
	union {
		frp_client0_t c0;
		frp_client1_t c1;
	} id;
};
static struct client clients[MAX_CLIENTS];
static int nclients, configuring_client = -1;

struct cb_service {
	void (*fn)(void);
	void *arg;
	uint8_t *ops; /* NULL: every operation */
};
struct context {
	int client;
	_Atomic int active;
	struct cb_service cb[FRP_CB_KIND_LAST];
	int buffer[FRP_BUF_KIND_LAST]; /* index + 1 */
	uint8_t *bops[FRP_BUF_KIND_LAST];
};
static struct context contexts[MAX_CONTEXTS];
static _Atomic int ncontexts;

struct half {
	uint8_t *mem;
	size_t used, n, cap;
	frp_header_t *hdr;
	frp_header_t **ptrs;
	int busy; /* handed to a callback thread */
};
struct buffer {
	int ctx;
	size_t size, watermark;
	int policy, thread;
	frp_buffer_cb_t cb;
	void *data;
	struct half half[2];
	unsigned idx;
	uint64_t drops;
	int too_small_said;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};
static struct buffer buffers[MAX_BUFFERS];
static _Atomic int nbuffers;
#define BUFFER_BASE 0x3a10u /* handles are not indices */

struct job {
	int buf, half;
};
struct cbthread {
	pthread_t t;
	int started, stop;
	_Atomic long tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job q[2 * MAX_BUFFERS];
	int head, n;
};
static struct cbthread threads[MAX_THREADS];
static int nthreads = 1; /* 0: the default */

static frp_thread_cb_t thread_pre, thread_post;
static int thread_libs;
static void *thread_data;

struct symbol {
	int device;
	const char *runtime_name; /* the runtime's pointer (the key) */
	char *name;               /* the SDK's copy, handed to tools */
	uint64_t kernel_id, code_object_id;
};
static struct symbol symbols[MAX_SYMBOLS];
static int nsymbols;
static uint64_t ncode_objects;

static frp_agent_info_t agents[MAX_AGENTS];
static char agent_names[MAX_AGENTS][3][48];
static int nagents, machine_devices = 1;

struct pending {
	struct fakehip_activity a;
	uint32_t mask; /* contexts active when it was queued */
};
static pthread_mutex_t pmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pcv = PTHREAD_COND_INITIALIZER;
static struct pending *heap; /* by end */
static size_t nheap, capheap;
static int completing, completion_stop, completion_started;
static pthread_t completion;
static _Atomic uint64_t correlations, dispatches;

/* ---- helpers ------------------------------------------------------------ */

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t now(void)
{
	return clock_ns(CLOCK_BOOTTIME) + suspended_ns;
}

static uint64_t tid_now(void)
{
	return (uint64_t)syscall(SYS_gettid);
}

static void say(const char *fmt, const char *a, long b)
{
	if (trace) {
		fprintf(stderr, "fakerocp: ");
		fprintf(stderr, fmt, a, b);
		fputc('\n', stderr);
	}
}

static void fatal(const char *what, const char *detail)
{
	fprintf(stderr, "fakerocp: FATAL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static int status(int code)
{
	return code;
}

static int on_callback_thread(void)
{
	long me = (long)tid_now();
	for (int i = 0; i < nthreads; i++)
		if (atomic_load(&threads[i].tid) == me)
			return 1;
	return 0;
}

static void read_env(void)
{
	const char *s = getenv("FAKEROCM_VERSION");
	if (s && *s) {
		int a, b, c;
		if (sscanf(s, "%d.%d.%d", &a, &b, &c) == 3 && a >= 0 && b >= 0 && c >= 0 && b < 100 && c < 100) {
			vmaj = a;
			vmin = b;
			vpat = c;
		}
	}
	v1 = vmaj >= 1;
	v06 = vmaj >= 1 || vmin >= 6;
	version_number = (uint32_t)(vmaj * 10000 + vmin * 100 + vpat);
	snprintf(version_string, sizeof version_string, "%d.%d.%d (fake rocprofiler-sdk for popmon's tests)", vmaj,
		 vmin, vpat);
	s = getenv("FAKEROCM_OP_SHIFT");
	long v = s ? strtol(s, NULL, 10) : 0;
	op_shift = (int32_t)(v >= 0 && v <= 4000 ? v : 0);
	s = getenv("FAKEROCM_SUSPENDED_MS");
	v = s ? strtol(s, NULL, 10) : 0;
	suspended_ns = v > 0 ? (uint64_t)v * 1000000ULL : 0;
	s = getenv("FAKEROCM_TRACE");
	trace = s && strcmp(s, "1") == 0;
	s = getenv("FAKEHIP_DEVICES");
	v = s ? strtol(s, NULL, 10) : 1;
	machine_devices = (int)(v >= 1 && v <= 16 ? v : 1);
}

/* ---- HIP runtime API operations ------------------------------------------ */

static const struct {
	int32_t id;
	const char *name;
} hip_ops[] = {
	{ FRP_HIP_hipDeviceSynchronize, "hipDeviceSynchronize" },
	{ FRP_HIP_hipExtLaunchKernel, "hipExtLaunchKernel" },
	{ FRP_HIP_hipFree, "hipFree" },
	{ FRP_HIP_hipGetDevice, "hipGetDevice" },
	{ FRP_HIP_hipGetDeviceCount, "hipGetDeviceCount" },
	{ FRP_HIP_hipGetLastError, "hipGetLastError" },
	{ FRP_HIP_hipLaunchKernel, "hipLaunchKernel" },
	{ FRP_HIP_hipMalloc, "hipMalloc" },
	{ FRP_HIP_hipMemcpy, "hipMemcpy" },
	{ FRP_HIP_hipMemcpyAsync, "hipMemcpyAsync" },
	{ FRP_HIP_hipMemcpyPeer, "hipMemcpyPeer" },
	{ FRP_HIP_hipMemcpyPeerAsync, "hipMemcpyPeerAsync" },
	{ FRP_HIP_hipMemsetAsync, "hipMemsetAsync" },
	{ FRP_HIP_hipModuleLaunchKernel, "hipModuleLaunchKernel" },
	{ FRP_HIP_hipSetDevice, "hipSetDevice" },
	{ FRP_HIP_hipStreamSynchronize, "hipStreamSynchronize" },
	/* more real ids (equal from 0.4.0 to 1.0.0), whose names a tool may
	 * look for; the fake runtime never calls them */
	{ 31, "hipCtxSynchronize" },
	{ 41, "hipDeviceGetAttribute" },
	{ 60, "hipDeviceReset" },
	{ 68, "hipDriverGetVersion" },
	{ 76, "hipEventCreate" },
	{ 78, "hipEventDestroy" },
	{ 79, "hipEventElapsedTime" },
	{ 80, "hipEventQuery" },
	{ 81, "hipEventRecord" },
	{ 82, "hipEventSynchronize" },
	{ 85, "hipExtLaunchMultiKernelMultiDevice" },
	{ 92, "hipFreeAsync" },
	{ 93, "hipFreeHost" },
	{ 105, "hipGetDevicePropertiesR0600" },
	{ 108, "hipGetErrorString" },
	{ 153, "hipGraphExecUpdate" },
	{ 159, "hipGraphInstantiate" },
	{ 160, "hipGraphInstantiateWithFlags" },
	{ 166, "hipGraphLaunch" },
	{ 185, "hipGraphUpload" },
	{ 193, "hipHostAlloc" },
	{ 194, "hipHostFree" },
	{ 197, "hipHostMalloc" },
	{ 198, "hipHostRegister" },
	{ 199, "hipHostUnregister" },
	{ 202, "hipInit" },
	{ 210, "hipLaunchByPtr" },
	{ 211, "hipLaunchCooperativeKernel" },
	{ 212, "hipLaunchCooperativeKernelMultiDevice" },
	{ 213, "hipLaunchHostFunc" },
	{ 219, "hipMallocAsync" },
	{ 222, "hipMallocManaged" },
	{ 224, "hipMallocPitch" },
	{ 260, "hipMemcpy2D" },
	{ 261, "hipMemcpy2DAsync" },
	{ 266, "hipMemcpy3D" },
	{ 267, "hipMemcpy3DAsync" },
	{ 270, "hipMemcpyDtoD" },
	{ 271, "hipMemcpyDtoDAsync" },
	{ 272, "hipMemcpyDtoH" },
	{ 273, "hipMemcpyDtoHAsync" },
	{ 275, "hipMemcpyFromSymbol" },
	{ 276, "hipMemcpyFromSymbolAsync" },
	{ 278, "hipMemcpyHtoD" },
	{ 279, "hipMemcpyHtoDAsync" },
	{ 285, "hipMemcpyToSymbol" },
	{ 286, "hipMemcpyToSymbolAsync" },
	{ 287, "hipMemcpyWithStream" },
	{ 288, "hipMemset" },
	{ 289, "hipMemset2D" },
	{ 291, "hipMemset3D" },
	{ 296, "hipMemsetD32" },
	{ 297, "hipMemsetD32Async" },
	{ 298, "hipMemsetD8" },
	{ 306, "hipModuleLaunchCooperativeKernel" },
	{ 307, "hipModuleLaunchCooperativeKernelMultiDevice" },
	{ 320, "hipPeekAtLastError" },
	{ 326, "hipRuntimeGetVersion" },
	{ 334, "hipStreamCreate" },
	{ 335, "hipStreamCreateWithFlags" },
	{ 337, "hipStreamDestroy" },
	{ 345, "hipStreamQuery" },
	{ 348, "hipStreamWaitEvent" },
	{ 388, "hipExtModuleLaunchKernel" },
	{ 389, "hipHccModuleLaunchKernel" },
};

/* The name of a (shifted) id; ids the fake does not know get a placeholder
 * (the real SDK names all of its ~477). */
static const char *hip_name(int32_t op, char *buf, size_t n)
{
	int32_t id = op - op_shift;
	if (id < 0 || id >= FRP_HIP_LAST)
		return NULL;
	for (size_t i = 0; i < sizeof hip_ops / sizeof hip_ops[0]; i++)
		if (hip_ops[i].id == id)
			return hip_ops[i].name;
	snprintf(buf, n, "hipFakeOperation%d", (int)id);
	return buf;
}

/* ---- registration ----------------------------------------------------- */

static void client_fini(int i)
{
	pthread_mutex_lock(&mu);
	int run = i >= 0 && i < nclients && clients[i].has_result && !clients[i].finalized;
	if (run)
		clients[i].finalized = 1;
	pthread_mutex_unlock(&mu);
	if (!run)
		return;
	for (int c = 0; c < atomic_load(&ncontexts); c++)
		if (contexts[c].client == i)
			atomic_store(&contexts[c].active, 0);
	if (clients[i].result.finalize)
		clients[i].result.finalize(clients[i].result.tool_data);
}

static void client_fini0(frp_client0_t id)
{
	client_fini((int)id.handle - 1);
}

static void client_fini1(frp_client1_t id)
{
	client_fini((int)id.handle - 1);
}

static void add_client(frp_configure_t fn, const char *where)
{
	if (!fn || nclients == MAX_CLIENTS)
		return;
	for (int i = 0; i < nclients; i++)
		if (clients[i].configure == fn)
			return; /* each configure function once */
	say("tool found (%s)%ld", where, 0);
	clients[nclients++].configure = fn;
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	void *h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
	if (h) {
		frp_configure_t fn = (frp_configure_t)(uintptr_t)dlsym(h, "rocprofiler_configure");
		if (fn)
			add_client(fn, info->dlpi_name);
		dlclose(h);
	}
	return 0;
}

static void find_tools(void)
{
	/* ROCP_TOOL_LIBRARIES: as the SDK parses it (':'-separated; with a
	 * ':' in it, what follows the last one is ignored). */
	const char *env = getenv("ROCP_TOOL_LIBRARIES");
	if (env && *env) {
		char *copy = strdup(env), *p = copy;
		int colon = strchr(env, ':') != NULL;
		while (p && *p) {
			char *sep = strchr(p, ':');
			if (!sep && colon)
				break;
			if (sep)
				*sep = 0;
			if (*p) {
				void *h = dlopen(p, RTLD_NOLOAD | RTLD_LAZY);
				if (!h)
					h = dlopen(p, RTLD_LOCAL | RTLD_LAZY);
				if (!h)
					fatal("[ROCP_TOOL_LIBRARIES] error dlopening", p);
				add_client((frp_configure_t)(uintptr_t)dlsym(h, "rocprofiler_configure"), p);
			}
			p = sep ? sep + 1 : NULL;
		}
		free(copy);
	}
	add_client((frp_configure_t)(uintptr_t)dlsym(RTLD_DEFAULT, "rocprofiler_configure"), "RTLD_DEFAULT");
	dl_iterate_phdr(scan_object, NULL);
}

static void *cbthread_main(void *arg);
static void *completion_main(void *arg);

static void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	if (thread_pre && (thread_libs & FRP_LIB_SDK))
		thread_pre(FRP_LIB_SDK, thread_data);
	if (pthread_create(t, NULL, fn, arg) != 0)
		fatal("cannot start a thread", NULL);
	if (thread_post && (thread_libs & FRP_LIB_SDK))
		thread_post(FRP_LIB_SDK, thread_data);
}

static void finalize(void);
static void build_agents(void);

static void initialize(void)
{
	read_env();
	build_agents();
	atomic_store(&init_status, -1);
	atexit(finalize);
	find_tools();
	for (int i = 0; i < nclients; i++) {
		void *id;
		if (v1) {
			clients[i].id.c1 = (frp_client1_t){ sizeof(frp_client1_t), NULL, (uint32_t)i + 1 };
			id = &clients[i].id.c1;
		} else {
			clients[i].id.c0 = (frp_client0_t){ NULL, (uint32_t)i + 1 };
			id = &clients[i].id.c0;
		}
		frp_configure_result_t *r = clients[i].configure(version_number, version_string, (uint32_t)i, id);
		if (r) {
			clients[i].result = *r;
			clients[i].has_result = 1;
		}
		say("configure of tool %s returned %ld", "", (long)(r != NULL));
	}
	void (*fini)(void) = v1 ? (void (*)(void))(uintptr_t)client_fini1 : (void (*)(void))(uintptr_t)client_fini0;
	int active = 0;
	for (int i = 0; i < nclients; i++) {
		if (!clients[i].has_result || !clients[i].result.initialize)
			continue;
		active++;
		configuring_client = i;
		/* The SDK ignores what initialize returns (the documentation says
		 * -1 disables the tool's contexts; the code, 0.4.0 to 1.0.0, does
		 * not look): a tool that fails stops its own contexts. */
		(void)clients[i].result.initialize(fini, clients[i].result.tool_data);
		configuring_client = -1;
	}
	if (active) {
		for (int i = 0; i < nthreads; i++) {
			threads[i].started = 1;
			start_thread(&threads[i].t, cbthread_main, &threads[i]);
		}
		completion_started = 1;
		start_thread(&completion, completion_main, NULL);
	}
	atomic_store(&init_status, 1);
}

static void on_api(int32_t op, int32_t phase, uint64_t correlation, uint64_t state[FAKEHIP_API_STATE]);
static void on_code_object(int device, const char *const *syms, int n);
static void on_activity(const struct fakehip_activity *a);
static uint64_t next_correlation(void)
{
	return atomic_fetch_add(&correlations, 1) + 1;
}

static const struct fakehip_profiler profiler = { now, next_correlation, on_api, on_code_object, on_activity };

EXPORT int rocprofiler_set_api_table(const char *name, uint64_t lib_version, uint64_t lib_instance, void **tables,
				     uint64_t ntables)
{
	(void)lib_version;
	(void)lib_instance;
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, initialize);
	if (name && strcmp(name, "hip") == 0 && tables && ntables >= 1 && tables[0]) {
		struct fakehip_table *t = tables[0];
		if (t->size >= sizeof(struct fakehip_table))
			atomic_store(&t->profiler, &profiler);
	}
	return 0;
}

EXPORT int rocprofiler_is_initialized(int *s)
{
	*s = atomic_load(&init_status);
	return FRP_OK;
}

EXPORT int rocprofiler_is_finalized(int *s)
{
	*s = atomic_load(&fini_status);
	return FRP_OK;
}

EXPORT int rocprofiler_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch)
{
	if (major)
		*major = (uint32_t)vmaj;
	if (minor)
		*minor = (uint32_t)vmin;
	if (patch)
		*patch = (uint32_t)vpat;
	return FRP_OK;
}

/* 1.0.0 on (the fake always has it). */
EXPORT int rocprofiler_get_version_triplet(uint32_t triplet[3])
{
	triplet[0] = (uint32_t)vmaj;
	triplet[1] = (uint32_t)vmin;
	triplet[2] = (uint32_t)vpat;
	return FRP_OK;
}

EXPORT int rocprofiler_get_timestamp(uint64_t *ts)
{
	*ts = now();
	return FRP_OK;
}

EXPORT int rocprofiler_get_thread_id(uint64_t *tid)
{
	*tid = tid_now();
	return FRP_OK;
}

EXPORT const char *rocprofiler_get_status_name(int s)
{
	switch (s) {
	case FRP_OK:
		return "ROCPROFILER_STATUS_SUCCESS";
	case FRP_ERROR:
		return "ROCPROFILER_STATUS_ERROR";
	case FRP_ERROR_CONTEXT_NOT_FOUND:
		return "ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND";
	case FRP_ERROR_BUFFER_NOT_FOUND:
		return "ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND";
	case FRP_ERROR_KIND_NOT_FOUND:
		return "ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND";
	case FRP_ERROR_OPERATION_NOT_FOUND:
		return "ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND";
	}
	if (s == FRP_ERROR_CONFIGURATION_LOCKED(v06))
		return "ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED";
	if (s == FRP_ERROR_SERVICE_ALREADY_CONFIGURED(v06))
		return "ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED";
	if (s == FRP_ERROR_INVALID_ARGUMENT(v06))
		return "ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT";
	if (s == FRP_ERROR_INCOMPATIBLE_ABI(v06))
		return "ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI";
	if (s == FRP_ERROR_FINALIZED(v06))
		return "ROCPROFILER_STATUS_ERROR_FINALIZED";
	if (s == FRP_ERROR_BUFFER_BUSY(v06))
		return "ROCPROFILER_STATUS_ERROR_BUFFER_BUSY";
	return NULL;
}

EXPORT const char *rocprofiler_get_status_string(int s)
{
	const char *n = rocprofiler_get_status_name(s);
	return n ? n + strlen("ROCPROFILER_STATUS_") : NULL;
}

EXPORT int rocprofiler_at_internal_thread_create(frp_thread_cb_t pre, frp_thread_cb_t post, int libs, void *data)
{
	thread_pre = pre;
	thread_post = post;
	thread_libs = libs;
	thread_data = data;
	return FRP_OK;
}

static int configuring(void)
{
	return atomic_load(&init_status) == -1;
}

/* ---- contexts ------------------------------------------------------------ */

static struct context *context_of(frp_context_t id)
{
	int i = (int)id.handle - 1;
	return i >= 0 && i < atomic_load(&ncontexts) ? &contexts[i] : NULL;
}

EXPORT int rocprofiler_create_context(frp_context_t *id)
{
	if (v06 && id->handle != 0)
		return status(13); /* ROCPROFILER_STATUS_ERROR_CONTEXT_ID_NOT_ZERO */
	id->handle = 0;
	if (!configuring())
		return status(FRP_ERROR_CONFIGURATION_LOCKED(v06));
	int n = atomic_load(&ncontexts);
	if (n == MAX_CONTEXTS)
		return status(FRP_ERROR);
	contexts[n].client = configuring_client;
	atomic_store(&ncontexts, n + 1);
	id->handle = (uint64_t)n + 1;
	return FRP_OK;
}

EXPORT int rocprofiler_start_context(frp_context_t id)
{
	struct context *c = context_of(id);
	if (!c)
		return status(FRP_ERROR_CONTEXT_NOT_FOUND);
	if (atomic_load(&fini_status) != 0)
		return status(FRP_ERROR_CONFIGURATION_LOCKED(v06));
	atomic_store(&c->active, 1);
	return FRP_OK;
}

EXPORT int rocprofiler_stop_context(frp_context_t id)
{
	struct context *c = context_of(id);
	if (!c)
		return status(FRP_ERROR_CONTEXT_NOT_FOUND);
	atomic_store(&c->active, 0);
	return FRP_OK;
}

EXPORT int rocprofiler_context_is_active(frp_context_t id, int *s)
{
	struct context *c = context_of(id);
	if (!c)
		return status(FRP_ERROR_CONTEXT_NOT_FOUND);
	*s = atomic_load(&c->active);
	return FRP_OK;
}

/* As the SDK does it: 1 for a valid context (the header's comment says the
 * opposite). */
EXPORT int rocprofiler_context_is_valid(frp_context_t id, int *s)
{
	*s = context_of(id) != NULL;
	return *s ? FRP_OK : status(FRP_ERROR_CONTEXT_NOT_FOUND);
}

/* ---- callback tracing ---------------------------------------------------- */

static int op_valid(int32_t kind, int32_t op)
{
	if (kind == FRP_CB_KIND_HIP_RUNTIME)
		return op >= op_shift && op < op_shift + FRP_HIP_LAST;
	if (kind == FRP_CB_KIND_CODE_OBJECT)
		return op == FRP_CODE_OBJECT_LOAD || op == FRP_CODE_OBJECT_KERNEL_SYMBOL;
	return 0;
}

EXPORT int rocprofiler_configure_callback_tracing_service(frp_context_t id, int32_t kind, const int32_t *ops,
							  size_t nops, void (*callback)(void), void *arg)
{
	if (!configuring())
		return status(FRP_ERROR_CONFIGURATION_LOCKED(v06));
	struct context *c = context_of(id);
	if (!c)
		return status(FRP_ERROR_CONTEXT_NOT_FOUND);
	if (kind != FRP_CB_KIND_HIP_RUNTIME && kind != FRP_CB_KIND_CODE_OBJECT)
		return status(kind > 0 && kind < FRP_CB_KIND_LAST ? 16 + v06 /* NOT_IMPLEMENTED */ :
								    FRP_ERROR_KIND_NOT_FOUND);
	if (c->cb[kind].fn)
		return status(FRP_ERROR_SERVICE_ALREADY_CONFIGURED(v06));
	if (!callback)
		return status(FRP_ERROR_INVALID_ARGUMENT(v06));
	uint8_t *set = NULL;
	if (ops && nops) {
		set = calloc(NOPS, 1);
		if (!set)
			return status(FRP_ERROR);
		for (size_t i = 0; i < nops; i++) {
			if (!op_valid(kind, ops[i]) || ops[i] >= NOPS) {
				free(set);
				return status(FRP_ERROR_OPERATION_NOT_FOUND);
			}
			set[ops[i]] = 1;
		}
	}
	c->cb[kind] = (struct cb_service){ callback, arg, set };
	return FRP_OK;
}

EXPORT int rocprofiler_query_callback_tracing_kind_operation_name(int32_t kind, int32_t op, const char **name,
								  uint64_t *len)
{
	static _Thread_local char buf[48];
	const char *n = NULL;
	if (kind == FRP_CB_KIND_HIP_RUNTIME)
		n = hip_name(op, buf, sizeof buf);
	else if (kind == FRP_CB_KIND_CODE_OBJECT)
		n = op == FRP_CODE_OBJECT_LOAD ? "CODE_OBJECT_LOAD" :
		    op == FRP_CODE_OBJECT_KERNEL_SYMBOL ? "CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER" : NULL;
	else
		return status(FRP_ERROR_KIND_NOT_FOUND);
	if (!n)
		return status(FRP_ERROR_OPERATION_NOT_FOUND);
	/* the real one hands out a string it keeps: so does the fake for the
	 * names it knows; placeholders are copied into one it keeps too */
	if (n == buf) {
		static char *kept[FRP_HIP_LAST];
		int32_t id = op - op_shift;
		pthread_mutex_lock(&mu);
		if (!kept[id])
			kept[id] = strdup(buf);
		n = kept[id] ? kept[id] : "hipFakeOperation";
		pthread_mutex_unlock(&mu);
	}
	if (name)
		*name = n;
	if (len)
		*len = strlen(n);
	return FRP_OK;
}

EXPORT int rocprofiler_iterate_callback_tracing_kind_operations(int32_t kind, frp_op_iter_t cb, void *data)
{
	if (kind == FRP_CB_KIND_HIP_RUNTIME) {
		for (int32_t id = 0; id < FRP_HIP_LAST; id++)
			if (cb(kind, id + op_shift, data) != 0)
				break;
	} else if (kind == FRP_CB_KIND_CODE_OBJECT) {
		if (cb(kind, FRP_CODE_OBJECT_LOAD, data) == 0)
			cb(kind, FRP_CODE_OBJECT_KERNEL_SYMBOL, data);
	} else if (kind <= 0 || kind >= FRP_CB_KIND_LAST) {
		return status(FRP_ERROR_KIND_NOT_FOUND);
	}
	return FRP_OK;
}

/* Calls a context's callback with the record layout of the version played. */
static void invoke(const struct context *c, int32_t kind, int32_t op, int32_t phase, void *payload,
		   frp_user_data_t *user, uint64_t correlation)
{
	const struct cb_service *s = &c->cb[kind];
	frp_context_t ctx = { (uint64_t)(c - contexts) + 1 };
	if (v1) {
		frp_cb_record1_t r = { ctx, tid_now(), correlation, { 0 }, 0, kind, op, phase, payload };
		((frp_cb1_t)(uintptr_t)s->fn)(r, user, s->arg);
	} else {
		frp_cb_record0_t r = { ctx, tid_now(), correlation, { 0 }, kind, op, phase, payload };
		((frp_cb0_t)(uintptr_t)s->fn)(r, user, s->arg);
	}
}

static void on_api(int32_t op, int32_t phase, uint64_t correlation, uint64_t state[FAKEHIP_API_STATE])
{
	if (atomic_load(&fini_status) > 0)
		return;
	int32_t sop = op + op_shift;
	frp_hip_api_data_t data = { sizeof data, { 0 } };
	int n = atomic_load(&ncontexts);
	uint64_t *entered = &state[API_CONTEXTS];
	for (int i = 0; i < n && i < API_CONTEXTS; i++) {
		const struct context *c = &contexts[i];
		if (!c->cb[FRP_CB_KIND_HIP_RUNTIME].fn)
			continue;
		if (c->cb[FRP_CB_KIND_HIP_RUNTIME].ops && !c->cb[FRP_CB_KIND_HIP_RUNTIME].ops[sop])
			continue;
		if (phase == FRP_PHASE_ENTER) {
			if (!atomic_load(&c->active))
				continue;
			*entered |= 1ULL << i;
		} else if (!(*entered & (1ULL << i))) {
			continue; /* the exit goes where the enter went */
		}
		invoke(c, FRP_CB_KIND_HIP_RUNTIME, sop, phase, &data, (frp_user_data_t *)&state[i], correlation);
	}
}

static uint64_t agent_handle(int node)
{
	return 0x9c5a0000ULL + (uint64_t)node * 0x1230ULL; /* opaque, not indices */
}

static void code_object_callbacks(int device, int first, int count, uint64_t co, int32_t phase)
{
	frp_code_object_t obj = { sizeof obj, co, agent_handle(1 + device), 0, "file:///fake/fakehip.co", 0x7f0000000000ULL,
				  0x10000, 0, 1 /* file */, 0, 0 };
	int n = atomic_load(&ncontexts);
	for (int i = 0; i < n; i++) {
		const struct context *c = &contexts[i];
		const struct cb_service *s = &c->cb[FRP_CB_KIND_CODE_OBJECT];
		if (!s->fn || !atomic_load(&c->active))
			continue;
		frp_user_data_t user = { 0 };
		if (phase == FRP_PHASE_ENTER && (!s->ops || s->ops[FRP_CODE_OBJECT_LOAD]))
			invoke(c, FRP_CB_KIND_CODE_OBJECT, FRP_CODE_OBJECT_LOAD, phase, &obj, &user, 0);
		for (int k = first; k < first + count; k++) {
			if (s->ops && !s->ops[FRP_CODE_OBJECT_KERNEL_SYMBOL])
				break;
			frp_kernel_symbol_t sym = { FRP_KSYM_SIZE(v06), symbols[k].kernel_id, co, symbols[k].name,
						    0x7f0000001000ULL + (uint64_t)k * 64, 64, 8, 0, 0, 16, 32, 0, 256,
						    0x7f0000002000ULL };
			frp_user_data_t u = { 0 };
			invoke(c, FRP_CB_KIND_CODE_OBJECT, FRP_CODE_OBJECT_KERNEL_SYMBOL, phase, &sym, &u, 0);
		}
		if (phase == FRP_PHASE_EXIT && (!s->ops || s->ops[FRP_CODE_OBJECT_LOAD]))
			invoke(c, FRP_CB_KIND_CODE_OBJECT, FRP_CODE_OBJECT_LOAD, phase, &obj, &user, 0);
	}
}

static void on_code_object(int device, const char *const *syms, int n)
{
	pthread_mutex_lock(&mu);
	int first = nsymbols, count = 0;
	uint64_t co = ++ncode_objects;
	for (int i = 0; i < n && nsymbols < MAX_SYMBOLS; i++, count++) {
		struct symbol *s = &symbols[nsymbols++];
		s->device = device;
		s->runtime_name = syms[i];
		s->name = strdup(syms[i]);
		s->kernel_id = (uint64_t)nsymbols; /* unique per device and code object */
		s->code_object_id = co;
	}
	pthread_mutex_unlock(&mu);
	code_object_callbacks(device, first, count, co, FRP_PHASE_ENTER);
}

/* ---- buffers ----------------------------------------------------------- */

static struct buffer *buffer_of(frp_buffer_t id, int *index)
{
	int i = (int)(id.handle - BUFFER_BASE);
	if (id.handle < BUFFER_BASE || i >= atomic_load(&nbuffers))
		return NULL;
	if (index)
		*index = i;
	return &buffers[i];
}

static int half_alloc(struct half *h, size_t size)
{
	h->mem = calloc(1, size);
	h->cap = size / 64 + 1;
	h->hdr = calloc(h->cap, sizeof *h->hdr);
	h->ptrs = calloc(h->cap, sizeof *h->ptrs);
	return h->mem && h->hdr && h->ptrs;
}

EXPORT int rocprofiler_create_buffer(frp_context_t ctx, size_t size, size_t watermark, int policy,
				     frp_buffer_cb_t callback, void *data, frp_buffer_t *id)
{
	if (!configuring())
		return status(FRP_ERROR_CONFIGURATION_LOCKED(v06));
	if (id->handle != 0 && buffer_of(*id, NULL))
		return status(FRP_ERROR_SERVICE_ALREADY_CONFIGURED(v06));
	if (!context_of(ctx))
		return status(FRP_ERROR_CONTEXT_NOT_FOUND);
	if (!callback || (policy != FRP_POLICY_DISCARD && policy != FRP_POLICY_LOSSLESS))
		return status(FRP_ERROR_INVALID_ARGUMENT(v06));
	int n = atomic_load(&nbuffers);
	if (n == MAX_BUFFERS)
		return status(FRP_ERROR_BUFFER_NOT_FOUND);
	struct buffer *b = &buffers[n];
	b->ctx = (int)ctx.handle - 1;
	b->size = size;
	b->watermark = watermark;
	b->policy = policy;
	b->cb = callback;
	b->data = data;
	b->thread = 0;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	if (!half_alloc(&b->half[0], size) || (policy == FRP_POLICY_LOSSLESS && !half_alloc(&b->half[1], size)))
		return status(FRP_ERROR);
	atomic_store(&nbuffers, n + 1);
	id->handle = BUFFER_BASE + (uint64_t)n;
	return FRP_OK;
}

EXPORT int rocprofiler_configure_buffer_tracing_service(frp_context_t ctx, int32_t kind, const int32_t *ops,
							size_t nops, frp_buffer_t buffer)
{
	if (!configuring())
		return status(FRP_ERROR_CONFIGURATION_LOCKED(v06));
	struct context *c = context_of(ctx);
	if (!c)
		return status(FRP_ERROR_CONTEXT_NOT_FOUND);
	int bi;
	if (!buffer_of(buffer, &bi))
		return status(FRP_ERROR_BUFFER_NOT_FOUND);
	if (kind != FRP_BUF_KIND_KERNEL_DISPATCH && kind != FRP_BUF_KIND_MEMORY_COPY)
		return status(kind > 0 && kind < FRP_BUF_KIND_LAST ? 16 + v06 /* NOT_IMPLEMENTED */ :
								     FRP_ERROR_KIND_NOT_FOUND);
	if (c->buffer[kind])
		return status(FRP_ERROR_SERVICE_ALREADY_CONFIGURED(v06));
	uint8_t *set = NULL;
	if (ops && nops) {
		set = calloc(8, 1);
		if (!set)
			return status(FRP_ERROR);
		for (size_t i = 0; i < nops; i++) {
			int lo = kind == FRP_BUF_KIND_MEMORY_COPY ? FRP_COPY_HOST_TO_HOST : FRP_DISPATCH_COMPLETE - 1;
			int hi = kind == FRP_BUF_KIND_MEMORY_COPY ? FRP_COPY_DEVICE_TO_DEVICE : FRP_DISPATCH_COMPLETE;
			if (ops[i] < lo || ops[i] > hi) {
				free(set);
				return status(FRP_ERROR_OPERATION_NOT_FOUND);
			}
			set[ops[i]] = 1;
		}
	}
	c->buffer[kind] = bi + 1;
	c->bops[kind] = set;
	return FRP_OK;
}

EXPORT int rocprofiler_create_callback_thread(frp_cb_thread_t *t)
{
	if (!configuring())
		return status(FRP_ERROR_CONFIGURATION_LOCKED(v06));
	if (nthreads == MAX_THREADS)
		return status(FRP_ERROR);
	t->handle = 0x7000 + (uint64_t)nthreads++;
	return FRP_OK;
}

EXPORT int rocprofiler_assign_callback_thread(frp_buffer_t buffer, frp_cb_thread_t t)
{
	if (!configuring())
		return status(FRP_ERROR_CONFIGURATION_LOCKED(v06));
	struct buffer *b = buffer_of(buffer, NULL);
	if (!b)
		return status(FRP_ERROR_BUFFER_NOT_FOUND);
	int i = (int)(t.handle - 0x7000);
	if (t.handle < 0x7000 || i <= 0 || i >= nthreads)
		return status(6); /* ROCPROFILER_STATUS_ERROR_THREAD_NOT_FOUND */
	b->thread = i;
	return FRP_OK;
}

/* Hands the buffer's current half to its callback thread and switches
 * halves (b->mu held). */
static void hand_over(struct buffer *b, int bi)
{
	int h = (int)(b->idx % 2);
	b->idx++;
	if (b->half[h].n == 0 || !b->half[h].mem)
		return;
	b->half[h].busy = 1;
	struct cbthread *t = &threads[b->thread];
	pthread_mutex_lock(&t->mu);
	t->q[(t->head + t->n) % (2 * MAX_BUFFERS)] = (struct job){ bi, h };
	t->n++;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

static int delivering(const struct buffer *b)
{
	return b->half[0].busy || b->half[1].busy;
}

/* Adds one record to buffer bi (the completion thread, or a flush). */
static void emplace(int bi, uint32_t kind, const void *rec, size_t size)
{
	struct buffer *b = &buffers[bi];
	size_t need = (size + 7) & ~(size_t)7;
	pthread_mutex_lock(&b->mu);
	for (;;) {
		struct half *h = &b->half[b->idx % 2];
		if (need > b->size) { /* the SDK logs it; the record is lost, not counted */
			if (!b->too_small_said)
				fprintf(stderr, "fakerocp: buffer %u too small (size=%zu) for a record of %zu bytes\n",
					BUFFER_BASE + bi, b->size, size);
			b->too_small_said = 1;
			pthread_mutex_unlock(&b->mu);
			return;
		}
		if (h->mem && !h->busy && h->used + need <= b->size && h->n < h->cap) {
			memcpy(h->mem + h->used, rec, size);
			h->hdr[h->n] = (frp_header_t){ FRP_CATEGORY_TRACING, kind, h->mem + h->used };
			h->ptrs[h->n] = &h->hdr[h->n];
			h->n++;
			h->used += need;
			break;
		}
		if (b->policy == FRP_POLICY_DISCARD) {
			b->drops++;
			pthread_mutex_unlock(&b->mu);
			return;
		}
		/* LOSSLESS: hand the full half over, or wait for the other's
		 * delivery */
		if (!h->busy && !delivering(b))
			hand_over(b, bi);
		else
			pthread_cond_wait(&b->cv, &b->mu);
	}
	struct half *h = &b->half[b->idx % 2];
	if (h->used >= b->watermark && !delivering(b))
		hand_over(b, bi); /* an asynchronous flush; skipped while one is delivered */
	pthread_mutex_unlock(&b->mu);
}

static void *cbthread_main(void *arg)
{
	struct cbthread *t = arg;
	atomic_store(&t->tid, (long)tid_now());
	pthread_mutex_lock(&t->mu);
	for (;;) {
		while (t->n == 0 && !t->stop)
			pthread_cond_wait(&t->cv, &t->mu);
		if (t->n == 0)
			break;
		struct job j = t->q[t->head];
		t->head = (t->head + 1) % (2 * MAX_BUFFERS);
		t->n--;
		pthread_mutex_unlock(&t->mu);
		struct buffer *b = &buffers[j.buf];
		struct half *h = &b->half[j.half];
		pthread_mutex_lock(&b->mu);
		uint64_t drops = b->drops;
		pthread_mutex_unlock(&b->mu);
		if (trace)
			fprintf(stderr, "fakerocp: delivering %zu records of buffer %u\n", h->n, BUFFER_BASE + j.buf);
		b->cb((frp_context_t){ (uint64_t)b->ctx + 1 }, (frp_buffer_t){ BUFFER_BASE + (uint64_t)j.buf },
		      h->ptrs, h->n, b->data, drops);
		pthread_mutex_lock(&b->mu);
		memset(h->mem, 0xa5, h->used); /* reused: a tool must not keep pointers */
		h->used = h->n = 0;
		h->busy = 0;
		pthread_cond_broadcast(&b->cv);
		pthread_mutex_unlock(&b->mu);
		pthread_mutex_lock(&t->mu);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

/* ---- device activity --------------------------------------------------- */

static uint64_t kernel_id_of(int device, const char *name)
{
	uint64_t id = 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nsymbols && !id; i++)
		if (symbols[i].device == device && symbols[i].runtime_name == name)
			id = symbols[i].kernel_id;
	pthread_mutex_unlock(&mu);
	return id;
}

static void complete(const struct pending *p)
{
	const struct fakehip_activity *a = &p->a;
	uint32_t kind = a->what == FAKEHIP_ACT_KERNEL ? FRP_BUF_KIND_KERNEL_DISPATCH : FRP_BUF_KIND_MEMORY_COPY;
	int n = atomic_load(&ncontexts);
	for (int i = 0; i < n; i++) {
		const struct context *c = &contexts[i];
		if (!(p->mask & (1u << i)) || !c->buffer[kind])
			continue;
		if (kind == FRP_BUF_KIND_KERNEL_DISPATCH) {
			if (c->bops[kind] && !c->bops[kind][FRP_DISPATCH_COMPLETE])
				continue;
			frp_kernel_rec_t r;
			memset(&r, 0, sizeof r);
			r.size = sizeof r;
			r.kind = kind;
			r.op = FRP_DISPATCH_COMPLETE;
			r.corr_internal = a->correlation;
			r.tid = a->thread_id;
			r.start = a->start;
			r.end = a->end;
			r.info.size = offsetof(frp_dispatch_info_t, spare);
			r.info.agent.handle = agent_handle(1 + a->device);
			r.info.queue = 0x51000 + (uint64_t)a->device * 16 + a->stream;
			r.info.kernel_id = kernel_id_of(a->device, a->name);
			r.info.dispatch_id = atomic_fetch_add(&dispatches, 1) + 1;
			r.info.workgroup[0] = r.info.grid[0] = 64;
			r.info.workgroup[1] = r.info.workgroup[2] = r.info.grid[1] = r.info.grid[2] = 1;
			emplace(c->buffer[kind] - 1, kind, &r, sizeof r);
		} else {
			int op = a->src_device < 0 ? FRP_COPY_HOST_TO_DEVICE :
				 a->dst_device < 0 ? FRP_COPY_DEVICE_TO_HOST : FRP_COPY_DEVICE_TO_DEVICE;
			if (c->bops[kind] && !c->bops[kind][op])
				continue;
			frp_copy_rec_t r;
			memset(&r, 0, sizeof r);
			r.size = FRP_COPY_REC_SIZE(v1);
			r.kind = kind;
			r.op = (uint32_t)op;
			r.corr_internal = a->correlation;
			r.tid = a->thread_id;
			r.start = a->start;
			r.end = a->end;
			r.dst.handle = agent_handle(a->dst_device < 0 ? 0 : 1 + a->dst_device);
			r.src.handle = agent_handle(a->src_device < 0 ? 0 : 1 + a->src_device);
			r.bytes = a->bytes;
			r.dst_address = 0x7e0000000000ULL;
			r.src_address = 0x7d0000000000ULL;
			emplace(c->buffer[kind] - 1, kind, &r, r.size);
		}
	}
}

static void heap_push(const struct pending *p)
{
	if (nheap == capheap) {
		size_t cap = capheap ? 2 * capheap : 1024;
		struct pending *h = realloc(heap, cap * sizeof *h);
		if (!h)
			fatal("out of memory", NULL);
		heap = h;
		capheap = cap;
	}
	size_t i = nheap++;
	while (i > 0 && heap[(i - 1) / 2].a.end > p->a.end) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = *p;
}

static struct pending heap_pop(void)
{
	struct pending top = heap[0], last = heap[--nheap];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		uint64_t e = last.a.end;
		if (l < nheap && heap[l].a.end < e)
			m = l, e = heap[l].a.end;
		if (r < nheap && heap[r].a.end < e)
			m = r;
		if (m == i)
			break;
		heap[i] = heap[m];
		i = m;
	}
	if (nheap)
		heap[i] = last;
	return top;
}

static void on_activity(const struct fakehip_activity *a)
{
	uint32_t mask = 0;
	uint32_t kind = a->what == FAKEHIP_ACT_KERNEL ? FRP_BUF_KIND_KERNEL_DISPATCH : FRP_BUF_KIND_MEMORY_COPY;
	int n = atomic_load(&ncontexts);
	for (int i = 0; i < n; i++)
		if (contexts[i].buffer[kind] && atomic_load(&contexts[i].active))
			mask |= 1u << i;
	if (!mask || atomic_load(&fini_status) != 0)
		return;
	struct pending p = { *a, mask };
	pthread_mutex_lock(&pmu);
	heap_push(&p);
	pthread_cond_signal(&pcv);
	pthread_mutex_unlock(&pmu);
}

/* Completes the pending activities that have ended by t (pmu held on entry
 * and exit). */
static void complete_until(uint64_t t)
{
	while (nheap && heap[0].a.end <= t) {
		struct pending p = heap_pop();
		completing++;
		pthread_mutex_unlock(&pmu);
		complete(&p);
		pthread_mutex_lock(&pmu);
		completing--;
		pthread_cond_broadcast(&pcv);
	}
}

static void *completion_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pmu);
	while (!completion_stop) {
		uint64_t t = now();
		complete_until(t);
		if (completion_stop)
			break;
		if (!nheap) {
			pthread_cond_wait(&pcv, &pmu);
			continue;
		}
		uint64_t wait = heap[0].a.end - t;
		if (wait > 100000000ULL)
			wait = 100000000ULL;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + wait;
		ts.tv_sec += (time_t)(ns / 1000000000ULL);
		ts.tv_nsec = (long)(ns % 1000000000ULL);
		pthread_cond_timedwait(&pcv, &pmu, &ts);
	}
	pthread_mutex_unlock(&pmu);
	return NULL;
}

/* Every activity that has ended is in its buffers. */
static void drain_ended(void)
{
	pthread_mutex_lock(&pmu);
	complete_until(now());
	while (completing)
		pthread_cond_wait(&pcv, &pmu);
	pthread_mutex_unlock(&pmu);
}

EXPORT int rocprofiler_flush_buffer(frp_buffer_t id)
{
	if (atomic_load(&fini_status) > 0)
		return status(FRP_ERROR_FINALIZED(v06));
	int bi;
	struct buffer *b = buffer_of(id, &bi);
	if (!b)
		return status(FRP_ERROR_BUFFER_NOT_FOUND);
	if (on_callback_thread())
		fatal("rocprofiler_flush_buffer called from a buffer callback (the real SDK deadlocks)", NULL);
	drain_ended();
	pthread_mutex_lock(&b->mu);
	while (delivering(b))
		pthread_cond_wait(&b->cv, &b->mu);
	hand_over(b, bi); /* as the real flush: the halves switch even when empty */
	while (delivering(b))
		pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
	return FRP_OK;
}

EXPORT int rocprofiler_destroy_buffer(frp_buffer_t id)
{
	return buffer_of(id, NULL) ? FRP_OK : status(FRP_ERROR_BUFFER_NOT_FOUND);
}

/* ---- agents ---------------------------------------------------------- */

static int listed(const char *env, int index, uint64_t uuid, int *found)
{
	const char *s = getenv(env);
	*found = s != NULL;
	if (!s)
		return 1;
	while (*s) {
		char *end;
		if (strncmp(s, "GPU-", 4) == 0) {
			if (strtoull(s + 4, &end, 16) == uuid)
				return 1;
		} else if (strtol(s, &end, 10) == index && end != s) {
			return 1;
		}
		if (end == s)
			break;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static void build_agents(void)
{
	nagents = 1 + machine_devices;
	for (int i = 0; i < nagents; i++) {
		frp_agent_info_t *a = &agents[i];
		memset(a, 0, sizeof *a);
		a->size = FRP_AGENT_SIZE(v06);
		a->id.handle = agent_handle(i);
		a->node_id = (uint32_t)i;
		a->logical_node_id = i;
		a->vendor_name = "AMD";
		if (i == 0) {
			a->type = FRP_AGENT_CPU;
			a->cpu_cores = 16;
			a->logical_node_type_id = 0;
			a->name = a->product_name = a->model_name = "Fake CPU";
			continue;
		}
		int d = i - 1;
		a->type = FRP_AGENT_GPU;
		a->logical_node_type_id = d;
		a->simds = 1216;
		a->cus = 304;
		a->wavefront = 64;
		a->gfx_target = 90402;
		a->vendor_id = 0x1002;
		a->device_id = 0x74a1;
		a->location_id = (uint32_t)((0xc1 + d) << 8); /* bus c1+d, device 0, function 0 */
		a->domain = 0;
		a->gpu_id = 0x4000u + (uint64_t)d * 0x111u;
		snprintf(agent_names[i][0], sizeof agent_names[i][0], "gfx942");
		snprintf(agent_names[i][1], sizeof agent_names[i][1], "Fake AMD GPU %d", d);
		snprintf(agent_names[i][2], sizeof agent_names[i][2], "fake%d", d);
		a->name = agent_names[i][0];
		a->product_name = agent_names[i][1];
		a->model_name = agent_names[i][2];
		if (v06) {
			uint64_t uuid = 0x66616b6568697000ULL | (uint64_t)d;
			a->uuid = uuid;
			int set_rocr, set_hip;
			int hsa = listed("ROCR_VISIBLE_DEVICES", d, uuid, &set_rocr);
			int hip = hsa && listed("HIP_VISIBLE_DEVICES", d, uuid, &set_hip);
			a->visibility = (uint32_t)(hsa | (hip << 1) | (hip << 2) | (hip << 3));
		}
	}
}

EXPORT int rocprofiler_query_available_agents(uint32_t version, frp_agents_cb_t cb, size_t agent_size, void *data)
{
	if (version != FRP_AGENT_INFO_VERSION_0)
		return status(FRP_ERROR_INVALID_ARGUMENT(v06));
	if (agent_size > FRP_AGENT_SIZE(v06))
		return status(FRP_ERROR_INCOMPATIBLE_ABI(v06));
	if (!nagents) {
		read_env();
		build_agents();
	}
	const void *list[MAX_AGENTS];
	for (int i = 0; i < nagents; i++)
		list[i] = &agents[i];
	return cb(version, list, (size_t)nagents, data);
}

/* ---- finalization ------------------------------------------------------ */

static void finalize(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&fini_status, &expected, -1))
		return;
	drain_ended(); /* work still running at exit gets no record */
	/* code objects unload, then the tools finalize (they may flush) */
	pthread_mutex_lock(&mu);
	int n = nsymbols;
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < n;) {
		int j = i;
		while (j < n && symbols[j].code_object_id == symbols[i].code_object_id)
			j++;
		code_object_callbacks(symbols[i].device, i, j - i, symbols[i].code_object_id, FRP_PHASE_EXIT);
		i = j;
	}
	for (int i = 0; i < nclients; i++)
		client_fini(i);
	for (int c = 0; c < atomic_load(&ncontexts); c++)
		atomic_store(&contexts[c].active, 0);
	if (completion_started) {
		pthread_mutex_lock(&pmu);
		completion_stop = 1;
		pthread_cond_broadcast(&pcv);
		pthread_mutex_unlock(&pmu);
		pthread_join(completion, NULL);
	}
	for (int i = 0; i < nthreads; i++) {
		if (!threads[i].started)
			continue;
		pthread_mutex_lock(&threads[i].mu);
		threads[i].stop = 1;
		pthread_cond_signal(&threads[i].cv);
		pthread_mutex_unlock(&threads[i].mu);
		pthread_join(threads[i].t, NULL);
	}
	for (int i = 0; i < n; i++) /* unloaded: a tool must have copied them */
		for (size_t k = 0, len = strlen(symbols[i].name); k < len; k++)
			symbols[i].name[k] = "unloaded-"[k % 9];
	atomic_store(&fini_status, 1);
}

__attribute__((constructor)) static void setup(void)
{
	for (int i = 0; i < MAX_THREADS; i++) {
		pthread_mutex_init(&threads[i].mu, NULL);
		pthread_cond_init(&threads[i].cv, NULL);
	}
	read_env();
}
