/* gpu_rocm.c: the AMD backend of GPU measurement: rocprofiler-sdk (ROCm >=
 * 6.2), found at run time (gpu.h, gpu_rocm_abi.h).
 *
 * Registration. The HIP runtime asks rocprofiler-register for tools when it
 * starts: a visible rocprofiler_configure (this library's, preloaded) makes
 * it load rocprofiler-sdk and call its rocprofiler_set_api_table, which
 * configures the tools. A HIP program on a machine without the SDK would be
 * aborted by the register (a tool is visible, no SDK loads), so this
 * library also defines rocprofiler_set_api_table, which the register finds
 * first: it forwards to the real SDK when one can be loaded, and otherwise
 * answers success with no tool (the program runs unmeasured, and the
 * measurement says why). Nothing here runs in a process that never starts
 * the HIP runtime.
 *
 * Host: the SDK's HIP runtime API callback tracing, enabled for the calls
 * whose time matters (mapped by name at run time: the SDK's operation ids
 * follow the HIP dispatch table of its build), handed to the layer's
 * popmon_gpu_api (a per-thread depth: nested calls count once).
 *
 * Device: one LOSSLESS buffer of the SDK's (fixed memory: twice its size)
 * with kernel dispatch and memory copy records, delivered on the SDK's
 * callback thread and decoded there at once into the layer's accounts
 * (the records are valid only during the callback). The SDK's clock is
 * CLOCK_BOOTTIME: an offset to CLOCK_MONOTONIC is calibrated once. Kernel
 * names come from the code object callbacks (kernel id -> symbol, ".kd"
 * stripped); the HIP runtime's own blit kernels for memsets and device
 * copies are counted as a memset and a device-to-device copy.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "gpu.h"
#include "gpu_mode.h"
#include "gpu_counters.h"
#include "gpu_rocm.h"
#include "live.h"
#include "gpu_rocm_abi.h"

const struct popmon_rocm_backend *popmon_rocm_backend;
static struct popmon_rocm_backend real;

static uint32_t sdk_version;
static int layout_v1; /* 1.0 layouts of the callback record */
static int64_t hip_version;
static popmon_rocp_context_id ctx;
static popmon_rocp_buffer_id buf;
static int64_t clock_offset; /* added to the SDK's CLOCK_BOOTTIME stamps */
static uint64_t lost, rejected, drop_seen;
static int configured; /* rocprofiler_configure ran */
static int active;     /* this backend measures */
static int closed;     /* the SDK finalized: no more flushes */
static int failed;
static char reason[256];

/* GPU agents: the SDK's handle -> the device ordinal. */
#define MAX_AGENTS 64
static struct {
	uint64_t handle;
	int ordinal;
} agents[MAX_AGENTS];
static int nagents;

/* Kernel names by kernel id (open addressing, fixed memory). */
#define KNAMES 4096
static struct {
	uint64_t id;
	int used;
	char name[POPMON_GPU_NAME];
} knames[KNAMES];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------ reasons */

enum {
	WHY_NO_SDK = 0, /* HIP used, no rocprofiler-sdk */
	WHY_VERSION,    /* an SDK version whose layouts were not checked */
	WHY_SDK_ERROR,  /* an SDK call failed (detail: the call) */
	WHY_OTHER,      /* another backend measures */
	WHY_OFF,
};

static void rocm_reason(char *out, size_t n, int why, const char *detail, int status)
{
	switch (why) {
	case WHY_NO_SDK:
		snprintf(out, n, "the program used HIP but no rocprofiler-sdk was found: install rocprofiler-sdk "
			 "(ROCm 6.2 or newer) to measure AMD GPUs");
		return;
	case WHY_VERSION:
		snprintf(out, n, "rocprofiler-sdk %s is not a version libpopmon knows (0.4.0 to 1.x): AMD GPUs not "
			 "measured", detail);
		return;
	case WHY_SDK_ERROR:
		snprintf(out, n, "rocprofiler-sdk failed (%.60s: status %d): AMD GPUs not measured; popmon doctor "
			 "shows the ROCm setup", detail, status);
		return;
	case WHY_OTHER:
		snprintf(out, n, "another GPU backend already measures this process's devices: rocprofiler-sdk's "
			 "records are not counted twice");
		return;
	case WHY_OFF:
		snprintf(out, n, "GPU measurement is off (--gpu off or POPMON_GPU=off); use --gpu auto to measure it");
		return;
	}
}

static void fail_with(int why, const char *detail, int status)
{
	failed = 1;
	rocm_reason(reason, sizeof reason, why, detail, status);
	if (why == WHY_OTHER) /* whatever the mode: device work goes uncounted */
		popmon_warn_once("gpu-both", "this process uses CUDA and HIP: its GPUs are measured through CUPTI "
				 "only, HIP's calls and device work are not measured");
	else if (popmon_gpu_mode() == 2)
		popmon_warn_once("gpu", "GPU measurement requested but %s", reason);
}

/* ------------------------------------------------------------------ records */

static int agent_ordinal(uint64_t handle)
{
	for (int i = 0; i < nagents; i++)
		if (agents[i].handle == handle)
			return agents[i].ordinal;
	return -1;
}

static const char *kernel_name(uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;
	for (int p = 0; p < KNAMES; p++) {
		size_t i = (size_t)((h + (uint64_t)p) % KNAMES);
		if (!__atomic_load_n(&knames[i].used, __ATOMIC_ACQUIRE))
			return NULL;
		if (knames[i].id == id)
			return knames[i].name;
	}
	return NULL;
}

static void kernel_symbol(uint64_t id, const char *name)
{
	if (!name)
		return;
	pthread_mutex_lock(&names_lock);
	uint64_t h = id * 0x9e3779b97f4a7c15ull;
	for (int p = 0; p < KNAMES; p++) {
		size_t i = (size_t)((h + (uint64_t)p) % KNAMES);
		if (knames[i].used && knames[i].id != id)
			continue;
		if (!knames[i].used) {
			knames[i].id = id;
			snprintf(knames[i].name, sizeof knames[i].name, "%s", name);
			size_t l = strlen(knames[i].name);
			if (l > 3 && strcmp(knames[i].name + l - 3, ".kd") == 0)
				knames[i].name[l - 3] = '\0';
			__atomic_store_n(&knames[i].used, 1, __ATOMIC_RELEASE);
		}
		break;
	}
	pthread_mutex_unlock(&names_lock);
}

/* The HIP runtime's own kernels for memsets and device copies. */
static int blit(const char *name)
{
	if (!name || strncmp(name, "__amd_rocclr_", 13) != 0)
		return 0;
	if (strncmp(name + 13, "fillBuffer", 10) == 0 || strncmp(name + 13, "fillImage", 9) == 0)
		return POPMON_GPU_SET;
	if (strncmp(name + 13, "copy", 4) == 0)
		return POPMON_GPU_COPY;
	return 0;
}

/* Under the GPU lock: one record, in the SDK's clock, into the accounts. */
static void account(struct popmon_gpu_record *r, uint64_t lo, uint64_t hi)
{
	if (r->start == 0 || r->end == 0)
		return;
	if (r->end < r->start || r->start < lo || r->end > hi) {
		rejected++;
		return;
	}
	r->start = (uint64_t)((int64_t)r->start + clock_offset);
	r->end = (uint64_t)((int64_t)r->end + clock_offset);
	popmon_gpu_account_locked(r);
}

static void buffer_callback(popmon_rocp_context_id context, popmon_rocp_buffer_id buffer,
			    struct popmon_rocp_record_header **headers, size_t count, void *data, uint64_t drop_count)
{
	(void)context;
	(void)buffer;
	(void)data;
	uint64_t now = popmon_monotonic_ns();
	uint64_t lo = popmon_proc.t0_ns > 1000000000ull ? popmon_proc.t0_ns - 1000000000ull : 0;
	uint64_t hi = now + 1000000000ull;
	lo = (uint64_t)((int64_t)lo - clock_offset);
	hi = (uint64_t)((int64_t)hi - clock_offset);
	pthread_mutex_lock(&popmon_gpu_lock);
	for (size_t i = 0; headers && i < count; i++) {
		const struct popmon_rocp_record_header *h = headers[i];
		if (!h || h->category != POPMON_ROCP_CATEGORY_TRACING || !h->payload)
			continue;
		struct popmon_gpu_record r;
		memset(&r, 0, sizeof r);
		if (h->kind == POPMON_ROCP_BUF_KERNEL_DISPATCH) {
			const struct popmon_rocp_kernel_dispatch_record *k = h->payload;
			if (k->size < sizeof *k)
				continue;
			int dev = agent_ordinal(k->info.agent.handle);
			if (dev < 0 || dev >= POPMON_GPU_DEVICES) {
				rejected++;
				continue;
			}
			r.device = (uint32_t)dev;
			r.start = k->start;
			r.end = k->end;
			r.name = kernel_name(k->info.kernel_id);
			int b = blit(r.name);
			if (b == POPMON_GPU_SET) {
				r.cls = POPMON_GPU_SET;
				r.copy = POPMON_GPU_CP_SET;
			} else if (b == POPMON_GPU_COPY) {
				r.cls = POPMON_GPU_COPY;
				r.copy = POPMON_GPU_CP_DTOD;
			} else {
				r.cls = POPMON_GPU_KERNEL;
			}
		} else if (h->kind == POPMON_ROCP_BUF_MEMORY_COPY) {
			const struct popmon_rocp_memory_copy_record *c = h->payload;
			if (c->size < sizeof *c)
				continue;
			int dev;
			switch (c->operation) {
			case POPMON_ROCP_COPY_HTOD:
				dev = agent_ordinal(c->dst_agent.handle);
				r.copy = POPMON_GPU_CP_HTOD;
				break;
			case POPMON_ROCP_COPY_DTOH:
				dev = agent_ordinal(c->src_agent.handle);
				r.copy = POPMON_GPU_CP_DTOH;
				break;
			case POPMON_ROCP_COPY_DTOD: {
				int s = agent_ordinal(c->src_agent.handle);
				dev = agent_ordinal(c->dst_agent.handle);
				r.copy = s >= 0 && s != dev ? POPMON_GPU_CP_PTOP : POPMON_GPU_CP_DTOD;
				break;
			}
			default:
				continue; /* host to host: no device */
			}
			if (dev < 0 || dev >= POPMON_GPU_DEVICES) {
				rejected++;
				continue;
			}
			r.cls = POPMON_GPU_COPY;
			r.device = (uint32_t)dev;
			r.start = c->start;
			r.end = c->end;
			r.bytes = c->bytes;
		} else {
			continue;
		}
		account(&r, lo, hi);
	}
	if (drop_count > drop_seen) { /* cumulative */
		lost += drop_count - drop_seen;
		drop_seen = drop_count;
	}
	popmon_gpu_publish_locked(now);
	pthread_mutex_unlock(&popmon_gpu_lock);
}

/* ------------------------------------------------------------------ callbacks */

static void api(int32_t kind, int32_t phase)
{
	if (kind != POPMON_ROCP_CB_HIP_RUNTIME_API)
		return;
	if (phase == POPMON_ROCP_PHASE_ENTER)
		popmon_gpu_api(popmon_tls, POPMON_CUPTI_API_ENTER, popmon_now());
	else if (phase == POPMON_ROCP_PHASE_EXIT)
		popmon_gpu_api(popmon_tls, POPMON_CUPTI_API_EXIT, popmon_now());
}

static void code_object(int32_t operation, int32_t phase, const void *payload)
{
	if (operation != POPMON_ROCP_CODE_OBJECT_KERNEL_SYMBOL || phase != POPMON_ROCP_PHASE_ENTER || !payload)
		return;
	const struct popmon_rocp_kernel_symbol *s = payload;
	kernel_symbol(s->kernel_id, s->kernel_name);
}

/* The callback record is passed by value, in the layout of the version. */
static void callback_v0(struct popmon_rocp_callback_record_v0 r, popmon_rocp_user_data *ud, void *arg)
{
	(void)ud;
	(void)arg;
	if (r.kind == POPMON_ROCP_CB_CODE_OBJECT)
		code_object(r.operation, r.phase, r.payload);
	else
		api(r.kind, r.phase);
}

static void callback_v1(struct popmon_rocp_callback_record_v1 r, popmon_rocp_user_data *ud, void *arg)
{
	(void)ud;
	(void)arg;
	if (r.kind == POPMON_ROCP_CB_CODE_OBJECT)
		code_object(r.operation, r.phase, r.payload);
	else
		api(r.kind, r.phase);
}

/* ------------------------------------------------------------------ set-up */

/* The HIP calls whose time matters: launches, graphs, synchronisation,
 * copies and memsets, set-up and allocation. Not the getters, the queries
 * (hipStreamQuery, hipEventQuery) or error calls. */
static int timed(const char *n)
{
	static const char *const prefixes[] = {"hipMemcpy", "hipMemset", "hipDrvMemcpy", "hipGraphLaunch",
						"hipGraphInstantiate", "hipGraphExecUpdate", "hipGraphUpload"};
	static const char *const names[] = {
		"hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel",
		"hipLaunchCooperativeKernel", "hipLaunchCooperativeKernelMultiDevice",
		"hipModuleLaunchCooperativeKernel", "hipLaunchKernelExC", "hipDrvLaunchKernelEx",
		"hipExtLaunchMultiKernelMultiDevice", "hipLaunchHostFunc", "hipHccModuleLaunchKernel",
		"hipLaunchByPtr", "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize",
		"hipStreamWaitEvent", "hipCtxSynchronize", "hipSetDevice", "hipInit", "hipDeviceReset",
		"hipMalloc", "hipFree", "hipHostMalloc", "hipHostFree", "hipMallocHost", "hipFreeHost",
		"hipHostAlloc", "hipMallocManaged", "hipMallocPitch", "hipMalloc3D", "hipMallocArray",
		"hipFreeArray", "hipHostRegister", "hipHostUnregister", "hipExtMallocWithFlags",
		"hipModuleLoad", "hipModuleLoadData", "hipModuleLoadDataEx",
	};
	if (!n)
		return 0;
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(n, names[i]) == 0)
			return 1;
	return 0;
}

#define MAX_OPS 1024
static int32_t ops[MAX_OPS];
static size_t nops;

static int each_operation(int32_t kind, int32_t operation, void *data)
{
	const struct popmon_rocm_backend *b = data;
	const char *name = NULL;
	uint64_t len = 0;
	if (b->operation_name(kind, operation, &name, &len) == POPMON_ROCP_SUCCESS && timed(name) &&
	    nops < MAX_OPS)
		ops[nops++] = operation;
	return 0;
}

struct agent_list {
	int n;
	char uuid[POPMON_GPU_DEVICES][48];
	char name[POPMON_GPU_DEVICES][96];
	int count;
};

static int each_agents(uint32_t version, const void **list, size_t count, void *data)
{
	(void)version;
	struct agent_list *al = data;
	char host[64] = "";
	gethostname(host, sizeof host - 1);
	/* The GPU agents HIP sees (0.6.0 marks them; older SDKs: all), in
	 * the order of their index among GPUs: HIP's device ordinals. */
	int marked = 0;
	for (size_t i = 0; i < count; i++) {
		const struct popmon_rocp_agent *a = list[i];
		if (a && a->type == POPMON_ROCP_AGENT_GPU && a->size >= POPMON_ROCP_AGENT_SIZE_UUID &&
		    (a->visibility & 2))
			marked = 1;
	}
	for (int want = 0; want < MAX_AGENTS; want++) {
		const struct popmon_rocp_agent *pick = NULL;
		int best = INT_MAX;
		for (size_t i = 0; i < count; i++) {
			const struct popmon_rocp_agent *a = list[i];
			if (!a || a->type != POPMON_ROCP_AGENT_GPU || agent_ordinal(a->id.handle) >= 0)
				continue;
			if (marked && !(a->size >= POPMON_ROCP_AGENT_SIZE_UUID && (a->visibility & 2)))
				continue;
			if (a->logical_node_type_id < best) {
				best = a->logical_node_type_id;
				pick = a;
			}
		}
		if (!pick)
			break;
		int ord = nagents;
		agents[nagents].handle = pick->id.handle;
		agents[nagents].ordinal = ord;
		nagents++;
		if (ord < POPMON_GPU_DEVICES) {
			if (pick->size >= POPMON_ROCP_AGENT_SIZE_UUID && pick->uuid)
				snprintf(al->uuid[ord], sizeof al->uuid[ord], "GPU-%016llx",
					 (unsigned long long)pick->uuid);
			else
				snprintf(al->uuid[ord], sizeof al->uuid[ord], "AMD-node-%u@%.30s", pick->node_id, host);
			snprintf(al->name[ord], sizeof al->name[ord], "%.95s",
				 pick->product_name && *pick->product_name ? pick->product_name
				 : pick->name				 ? pick->name
									 : "");
			al->n = ord + 1;
		}
	}
	al->count = nagents;
	return 0;
}

#define RESOLVE(h, field, name)                       \
	do {                                          \
		void *p_ = dlsym((h), (name));        \
		memcpy(&real.field, &p_, sizeof p_); \
	} while (0)

/* The SDK's entry points, from the library that holds the function it gave
 * (it is loaded: it called us). */
static const struct popmon_rocm_backend *resolve(popmon_rocp_fn from)
{
	if (popmon_rocm_backend)
		return popmon_rocm_backend;
	void *h = NULL;
	Dl_info info;
	union {
		popmon_rocp_fn f;
		void *p;
	} u = {.f = from};
	if (from && dladdr(u.p, &info) && info.dli_fname)
		h = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
	if (!h)
		h = RTLD_DEFAULT;
	RESOLVE(h, get_version, "rocprofiler_get_version");
	RESOLVE(h, get_timestamp, "rocprofiler_get_timestamp");
	RESOLVE(h, status_string, "rocprofiler_get_status_string");
	RESOLVE(h, create_context, "rocprofiler_create_context");
	RESOLVE(h, start_context, "rocprofiler_start_context");
	RESOLVE(h, stop_context, "rocprofiler_stop_context");
	RESOLVE(h, context_is_valid, "rocprofiler_context_is_valid");
	RESOLVE(h, configure_callback_tracing, "rocprofiler_configure_callback_tracing_service");
	RESOLVE(h, iterate_operations, "rocprofiler_iterate_callback_tracing_kind_operations");
	RESOLVE(h, operation_name, "rocprofiler_query_callback_tracing_kind_operation_name");
	RESOLVE(h, create_buffer, "rocprofiler_create_buffer");
	RESOLVE(h, configure_buffer_tracing, "rocprofiler_configure_buffer_tracing_service");
	RESOLVE(h, flush_buffer, "rocprofiler_flush_buffer");
	RESOLVE(h, query_agents, "rocprofiler_query_available_agents");
	RESOLVE(h, create_callback_thread, "rocprofiler_create_callback_thread");
	RESOLVE(h, assign_callback_thread, "rocprofiler_assign_callback_thread");
	RESOLVE(h, is_finalized, "rocprofiler_is_finalized");
	if (!real.get_version || !real.get_timestamp || !real.create_context || !real.start_context ||
	    !real.configure_callback_tracing || !real.iterate_operations || !real.operation_name ||
	    !real.create_buffer || !real.configure_buffer_tracing || !real.flush_buffer || !real.query_agents)
		return NULL;
	return &real;
}

static void rocm_flush(int final);
static void rocm_measured(struct popmon_gpu_proc *out);
static int rocm_why(struct popmon_gpu_proc *out, int mode);
static void rocm_probe(void);
const struct popmon_gpu_ops popmon_gpu_rocm_ops = {.vendor = POPMON_GPU_VENDOR_AMD,
						   .name = "rocprofiler-sdk",
						   .vendor_name = "amd",
						   .version_key = "rocprofiler_sdk_version",
						   .runtime_key = "hip_runtime_version",
						   .probe = rocm_probe,
						   .why = rocm_why,
						   .flush = rocm_flush,
						   .measured = rocm_measured};

/* The live file's partial measurement: the SDK has no flush period. */
static void *flusher(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec ts = {1, 0};
		nanosleep(&ts, NULL);
		if (__atomic_load_n(&closed, __ATOMIC_ACQUIRE))
			return NULL;
		popmon_gpu_flush();
	}
	return NULL;
}

/* Sets everything up (inside the tool's initialize): 0, or the status of
 * the failing call with its name in *call. */
static int setup(const struct popmon_rocm_backend *b, const char **call)
{
	int rc;
	uint32_t maj = 0, min = 0, pat = 0;
	*call = "rocprofiler_get_version";
	if ((rc = b->get_version(&maj, &min, &pat)) != POPMON_ROCP_SUCCESS)
		return rc;
	*call = "rocprofiler_get_timestamp";
	if (popmon_gpu_calibrate(b->get_timestamp, &clock_offset) != 0)
		return POPMON_ROCP_ERROR;
	int (*hipver)(int *);
	void *f = dlsym(RTLD_DEFAULT, "hipRuntimeGetVersion");
	memcpy(&hipver, &f, sizeof f);
	int hv = 0;
	if (hipver && hipver(&hv) == 0)
		hip_version = hv;
	*call = "rocprofiler_query_available_agents";
	static struct agent_list al;
	if ((rc = b->query_agents(POPMON_ROCP_AGENT_INFO_VERSION_0, each_agents, POPMON_ROCP_AGENT_SIZE_MIN, &al)) !=
	    POPMON_ROCP_SUCCESS)
		return rc;
	popmon_gpu_set_devices(al.count, al.n, al.uuid, al.name);
	*call = "rocprofiler_create_context";
	ctx.handle = 0;
	if ((rc = b->create_context(&ctx)) != POPMON_ROCP_SUCCESS)
		return rc;
	*call = "rocprofiler_iterate_callback_tracing_kind_operations";
	nops = 0;
	if ((rc = b->iterate_operations(POPMON_ROCP_CB_HIP_RUNTIME_API, each_operation, (void *)b)) !=
	    POPMON_ROCP_SUCCESS)
		return rc;
	popmon_rocp_fn cb;
	if (layout_v1) {
		popmon_rocp_callback_v1 f1 = callback_v1;
		memcpy(&cb, &f1, sizeof cb);
	} else {
		popmon_rocp_callback_v0 f0 = callback_v0;
		memcpy(&cb, &f0, sizeof cb);
	}
	*call = "rocprofiler_configure_callback_tracing_service";
	if (nops && (rc = b->configure_callback_tracing(ctx, POPMON_ROCP_CB_HIP_RUNTIME_API, ops, nops, cb, NULL)) !=
			    POPMON_ROCP_SUCCESS)
		return rc;
	static const int32_t symbol[] = {POPMON_ROCP_CODE_OBJECT_KERNEL_SYMBOL};
	if ((rc = b->configure_callback_tracing(ctx, POPMON_ROCP_CB_CODE_OBJECT, symbol, 1, cb, NULL)) !=
	    POPMON_ROCP_SUCCESS)
		return rc;
	*call = "rocprofiler_create_buffer";
	buf.handle = 0;
	if ((rc = b->create_buffer(ctx, 4u << 20, 1u << 20, POPMON_ROCP_POLICY_LOSSLESS, buffer_callback, NULL,
				   &buf)) != POPMON_ROCP_SUCCESS)
		return rc;
	*call = "rocprofiler_configure_buffer_tracing_service";
	if ((rc = b->configure_buffer_tracing(ctx, POPMON_ROCP_BUF_KERNEL_DISPATCH, NULL, 0, buf)) !=
		    POPMON_ROCP_SUCCESS ||
	    (rc = b->configure_buffer_tracing(ctx, POPMON_ROCP_BUF_MEMORY_COPY, NULL, 0, buf)) != POPMON_ROCP_SUCCESS)
		return rc;
	if (b->create_callback_thread && b->assign_callback_thread) {
		popmon_rocp_callback_thread th = {0};
		if (b->create_callback_thread(&th) == POPMON_ROCP_SUCCESS)
			b->assign_callback_thread(buf, th);
	}
	*call = "rocprofiler_context_is_valid";
	int valid = 1;
	if (b->context_is_valid && b->context_is_valid(ctx, &valid) == POPMON_ROCP_SUCCESS && valid != 1)
		return POPMON_ROCP_ERROR_CONTEXT_NOT_FOUND;
	*call = "rocprofiler_start_context";
	return b->start_context(ctx);
}

static const struct popmon_rocm_backend *backend;

static int tool_initialize(popmon_rocp_fn client_finalize, void *tool_data)
{
	(void)tool_data;
	backend = resolve(client_finalize);
	if (!backend) {
		fail_with(WHY_SDK_ERROR, "resolving the SDK's entry points", -1);
		return -1;
	}
	const char *call = "";
	int rc = setup(backend, &call);
	if (rc != POPMON_ROCP_SUCCESS) {
		if (backend->stop_context && ctx.handle)
			backend->stop_context(ctx); /* the SDK ignores what initialize returns */
		fail_with(WHY_SDK_ERROR, call, rc);
		return -1;
	}
	if (popmon_gpu_activate(&popmon_gpu_rocm_ops) != 0) {
		backend->stop_context(ctx);
		fail_with(WHY_OTHER, NULL, 0);
		return -1;
	}
	__atomic_store_n(&active, 1, __ATOMIC_RELEASE);
	if (popmon_live)
		popmon_helper_thread(flusher);
	return 0;
}

static void tool_finalize(void *tool_data)
{
	(void)tool_data;
	if (__atomic_load_n(&active, __ATOMIC_ACQUIRE))
		popmon_gpu_flush(); /* records left in the buffer are delivered only so */
	__atomic_store_n(&closed, 1, __ATOMIC_RELEASE);
}

/* The symbol the SDK looks for in every loaded object. */
__attribute__((visibility("default"))) struct popmon_rocp_configure_result *
rocprofiler_configure(uint32_t version, const char *runtime_version, uint32_t priority, void *client)
{
	(void)runtime_version;
	(void)priority;
	(void)client; /* its layout differs by version: never touched */
	static struct popmon_rocp_configure_result result = {sizeof result, tool_initialize, tool_finalize, NULL};
	popmon_wake(POPMON_WAKE_COMPUTE); /* a HIP program named like a utility */
	if (popmon_proc.inert || __atomic_exchange_n(&configured, 1, __ATOMIC_ACQ_REL))
		return NULL;
	int mode = popmon_gpu_mode();
	if (popmon_live)
		__atomic_store_n(&popmon_live->gpu_mode, (uint32_t)mode + 1, __ATOMIC_RELEASE);
	if (mode == 0)
		return NULL;
	if (__atomic_load_n(&popmon_gpu_active, __ATOMIC_ACQUIRE)) {
		fail_with(WHY_OTHER, NULL, 0);
		return NULL;
	}
	sdk_version = version;
	if (version < POPMON_ROCP_VERSION_MIN || version >= POPMON_ROCP_VERSION_END) {
		char v[32];
		snprintf(v, sizeof v, "%u.%u.%u", version / 10000, version / 100 % 100, version % 100);
		fail_with(WHY_VERSION, v, 0);
		return NULL;
	}
	layout_v1 = version >= POPMON_ROCP_VERSION_1_0;
	return &result;
}

/* ------------------------------------------------------------------ registration */

typedef int (*set_api_table_fn)(const char *, uint64_t, uint64_t, void **, uint64_t);
static int sdk_missing;

/* rocprofiler-register hands the runtime's dispatch tables to the SDK
 * through this: the real SDK's when one loads (this library's definition,
 * preloaded, is found first), else success with no tool, where the
 * register would abort the program. */
__attribute__((visibility("default"))) int rocprofiler_set_api_table(const char *name, uint64_t lib_version,
								    uint64_t lib_instance, void **tables,
								    uint64_t num_tables)
{
	static set_api_table_fn fn;
	void *caller = __builtin_return_address(0);
	if (!fn) {
		/* --gpu off and no other tool: the SDK is not even loaded. */
		const char *others = getenv("ROCP_TOOL_LIBRARIES");
		if (popmon_gpu_mode() == 0 && !(others && *others) && !dlsym(RTLD_NEXT, "rocprofiler_configure"))
			return 0;
		void *h = NULL;
		const char *env = getenv("ROCPROFILER_REGISTER_LIBRARY");
		if (env && *env)
			h = dlopen(env, RTLD_NOW | RTLD_GLOBAL);
		if (!h)
			h = dlopen("librocprofiler-sdk.so", RTLD_NOW | RTLD_GLOBAL);
		Dl_info info;
		if (!h && dladdr(caller, &info) && info.dli_fname) {
			char path[PATH_MAX];
			snprintf(path, sizeof path, "%s", info.dli_fname);
			char *slash = strrchr(path, '/');
			if (slash) {
				snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "%s", "librocprofiler-sdk.so");
				h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
			}
		}
		void *p = h ? dlsym(h, "rocprofiler_set_api_table") : NULL;
		union {
			set_api_table_fn f;
			void *p;
		} self = {.f = rocprofiler_set_api_table};
		if (!p || p == self.p) {
			__atomic_store_n(&sdk_missing, 1, __ATOMIC_RELEASE);
			return 0;
		}
		memcpy(&fn, &p, sizeof p);
	}
	return fn(name, lib_version, lib_instance, tables, num_tables);
}

/* ------------------------------------------------------------------ layer */

static void rocm_flush(int final)
{
	(void)final; /* rocprofiler_flush_buffer hands back every record it holds */
	if (backend && !__atomic_load_n(&closed, __ATOMIC_ACQUIRE))
		backend->flush_buffer(buf);
}

static void rocm_measured(struct popmon_gpu_proc *out)
{
	pthread_mutex_lock(&popmon_gpu_lock);
	out->cupti_version = sdk_version;
	out->driver_version = hip_version;
	out->dropped = (int64_t)lost;
	out->rejected = (int64_t)rejected;
	out->calibrated = 1;
	pthread_mutex_unlock(&popmon_gpu_lock);
	if (popmon_gpu_counters_mode()) { /* rocprofiler-sdk's counter collection is not used yet */
		out->ctr_status = POPMON_GPU_UNMEASURED;
		snprintf(out->ctr_reason, sizeof out->ctr_reason, "%s",
			 "device counters are read on NVIDIA GPUs only: AMD GPUs have no device computational metrics yet");
	}
	if (lost)
		popmon_warn_once("gpu-dropped", "rocprofiler-sdk dropped %llu GPU activity records; device times are "
				 "lower bounds", (unsigned long long)lost);
	if (out->rejected)
		popmon_warn_once("gpu-rejected", "GPU activity records with implausible times or devices were "
				 "rejected (an unknown rocprofiler-sdk record layout?): device times are lower bounds");
}

/* Whether the HIP runtime is loaded in the process. */
static int hip_loaded(void)
{
	static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
					    "libamdhip64.so.5"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		void *h = dlopen(names[i], RTLD_NOLOAD | RTLD_LAZY);
		if (h) {
			dlclose(h);
			return 1;
		}
	}
	return 0;
}

static int rocm_why(struct popmon_gpu_proc *out, int mode)
{
	if (failed) {
		out->status = POPMON_GPU_UNMEASURED;
		out->vendor = POPMON_GPU_VENDOR_AMD;
		out->cupti_version = sdk_version;
		snprintf(out->reason, sizeof out->reason, "%s", reason);
		return 1;
	}
	if (mode == 0 || !hip_loaded())
		return 0; /* CUPTI's answer: off, or neither CUDA nor HIP */
	if (__atomic_load_n(&configured, __ATOMIC_ACQUIRE) && !__atomic_load_n(&sdk_missing, __ATOMIC_ACQUIRE))
		return 0;
	out->status = POPMON_GPU_UNMEASURED;
	out->vendor = POPMON_GPU_VENDOR_AMD;
	rocm_reason(out->reason, sizeof out->reason, WHY_NO_SDK, NULL, 0);
	if (mode == 2)
		popmon_warn_once("gpu", "GPU measurement requested but %s", out->reason);
	return 1;
}

/* ------------------------------------------------------------------ doctor */

static void rocm_probe(void)
{
	static const char *const hips[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
					   "libamdhip64.so.5"};
	void *h = NULL;
	for (size_t i = 0; i < sizeof hips / sizeof hips[0] && !h; i++)
		h = dlopen(hips[i], RTLD_LAZY | RTLD_LOCAL);
	Dl_info info;
	void *f = h ? dlsym(h, "hipRuntimeGetVersion") : NULL;
	printf("hip_runtime=%s\n", f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "");
	int (*ver)(int *);
	memcpy(&ver, &f, sizeof f);
	int v = 0;
	if (ver && ver(&v) == 0)
		printf("hip_runtime_version=%d\n", v);
	const char *env = getenv("ROCPROFILER_REGISTER_LIBRARY");
	void *s = dlopen(env && *env ? env : "librocprofiler-sdk.so", RTLD_LAZY | RTLD_LOCAL);
	f = s ? dlsym(s, "rocprofiler_get_version") : NULL;
	printf("rocprofiler_sdk=%s\n", f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "");
	int (*sv)(uint32_t *, uint32_t *, uint32_t *);
	memcpy(&sv, &f, sizeof f);
	uint32_t a = 0, b = 0, c = 0;
	if (sv && sv(&a, &b, &c) == 0)
		printf("rocprofiler_sdk_version=%u\n", POPMON_ROCP_VERSION(a, b, c));
	const char *tools = getenv("ROCP_TOOL_LIBRARIES");
	printf("rocp_tool_libraries=%s\n", tools ? tools : "");
	fflush(stdout);
}
