/* fakecuda.c: a fake libcuda.so.1 for popmon's GPU tests (see README.md).
 *
 * The driver part: cuInit (with CUDA's injection hook: it dlopens
 * $CUDA_INJECTION64_PATH and calls its InitializeInjection), the device
 * queries popmon makes, and a tiny "runtime" (fakecuda.h) that simulates
 * devices: every stream of a device has a busy-until time; a kernel, copy or
 * memset starts when its stream is free (streams run concurrently, like a
 * GPU's copy engines next to its SMs) and lasts the time the caller gives.
 * Synchronisation really sleeps until the device is idle, so host time
 * inside the "runtime" is real wall-clock time.
 *
 * Every runtime call fires, through libcupti's tool interface, a RUNTIME
 * callback at entry and exit with a nested DRIVER callback pair inside it,
 * as cudart calling the driver does. Like the real stack, the very first
 * call of a process initialises the driver (and so the injected tool)
 * inside the call: its ENTER callback is not seen, its EXIT is.
 *
 * Environment (all optional):
 *   FAKECUDA_DEVICES         number of devices, 1..16 (default 1); devices
 *                            are the same in every process (the same UUID
 *                            for the same device), so processes choosing the
 *                            same device share a GPU
 *   CUDA_VISIBLE_DEVICES     as CUDA's: the devices the process sees, as
 *                            ordinals 0, 1, ... (none: all)
 *   FAKECUDA_DRIVER_VERSION  cuDriverGetVersion's answer (default 13000)
 *   FAKECUDA_CTX_MS          time context creation takes (default 0)
 *   FAKECUDA_TRACE=1         one stderr line per device activity
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda.h"

/* CUresult values used here (from the driver API documentation). */
enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201
};

/* Callback ids fired: CUPTI's (cupti_runtime_cbid.h, cupti_driver_cbid.h),
 * so that a tool enabling callbacks one id at a time sees what it would on
 * a real stack. cuCtxGetDevice's id is illustrative (a trivial getter: no
 * tool should enable it). */
enum {
	RT_MEMCPY = 31, RT_MEMCPY_ASYNC = 41, RT_MEMSET_ASYNC = 51, RT_GET_DEVICE = 17,
	RT_SET_DEVICE = 16, RT_STREAM_SYNC = 131, RT_DEVICE_SYNC = 165, RT_LAUNCH = 211,
	DRV_MEMCPY = 305, DRV_MEMCPY_ASYNC = 306, DRV_MEMSET_ASYNC = 216, DRV_CTX_SYNC = 17,
	DRV_STREAM_SYNC = 126, DRV_LAUNCH = 307, DRV_CTX_GET_DEVICE = 15,
	RT_MALLOC = 20, DRV_MEM_ALLOC = 243
};

#define MAX_DEVICES 16
#define LAUNCH_LATENCY_NS 5000ULL
/* A stream holds at most this many queued operations' worth of work, as a
 * GPU's launch queue does: a launch past it blocks until there is room. */
#define QUEUE_DEPTH 1024

struct device {
	int has_context; /* created by the first call on the device */
	uint32_t context_id;
	uint64_t busy[FAKECUDA_STREAMS]; /* tool clock, ns */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int init_state; /* 0 none, 1 injecting, 2 done */
static struct device devices[MAX_DEVICES];
static int ndevices = 1, driver_version = 13000, current, trace;
static int physical[MAX_DEVICES]; /* ordinal -> device of the machine */
static double ctx_ms;
static _Atomic(const struct fakecuda_tool *) the_tool;
static _Atomic uint32_t correlations;

void fakecuda_attach_tool(const struct fakecuda_tool *tool)
{
	atomic_store(&the_tool, tool);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The clock activity timestamps come from: the tool's, as CUPTI's records. */
static uint64_t now_ns(void)
{
	const struct fakecuda_tool *t = atomic_load(&the_tool);
	return t ? t->now() : realtime_ns();
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Sleeps until the tool clock reads at least t. */
static void sleep_until(uint64_t t)
{
	for (uint64_t n = now_ns(); n < t; n = now_ns())
		sleep_ns(t - n);
}

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	long v = strtol(s, &end, 10);
	return (*end || v < lo || v > hi) ? def : v;
}

static void destroy_contexts(void)
{
	const struct fakecuda_tool *t = atomic_load(&the_tool);
	for (int d = 0; d < ndevices; d++)
		if (devices[d].has_context && t)
			t->resource(2, &devices[d]); /* CONTEXT_DESTROY_STARTING */
}

typedef int (*injection_fn)(void);

int cuInit(unsigned int flags)
{
	(void)flags;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&init_state, &expected, 1))
		return CUDA_SUCCESS; /* done, or being done by this very call chain */
	ndevices = (int)env_long("FAKECUDA_DEVICES", 1, 1, MAX_DEVICES);
	for (int d = 0; d < ndevices; d++)
		physical[d] = d;
	/* CUDA_VISIBLE_DEVICES: a comma-separated list of the machine's
	 * devices; the process sees them as ordinals 0, 1, ... */
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	if (vis) {
		int n = 0;
		for (char *end; *vis && n < MAX_DEVICES; vis = *end == ',' ? end + 1 : end) {
			long v = strtol(vis, &end, 10);
			if (end == vis || v < 0 || v >= ndevices)
				break; /* as CUDA: the list ends at the first invalid entry */
			physical[n++] = (int)v;
		}
		ndevices = n;
	}
	driver_version = (int)env_long("FAKECUDA_DRIVER_VERSION", 13000, 1, 1000000);
	ctx_ms = (double)env_long("FAKECUDA_CTX_MS", 0, 0, 100000);
	trace = env_long("FAKECUDA_TRACE", 0, 0, 1) == 1;
	for (int d = 0; d < ndevices; d++)
		devices[d].context_id = (uint32_t)d + 1;
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj) {
		void *h = dlopen(inj, RTLD_NOW);
		injection_fn fn = h ? (injection_fn)(uintptr_t)dlsym(h, "InitializeInjection") : NULL;
		if (fn)
			fn();
		else if (trace)
			fprintf(stderr, "fakecuda: injection %s not usable: %s\n", inj, dlerror());
	}
	atexit(destroy_contexts); /* as cudart's exit handler destroys contexts */
	atomic_store(&init_state, 2);
	return CUDA_SUCCESS;
}

static int initialised(void)
{
	return atomic_load(&init_state) != 0;
}

int cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = driver_version;
	return CUDA_SUCCESS;
}

#define NO_DEVICE INT_MIN

/* The driver's checks of a query: an output pointer (ok), initialisation,
 * and a device ordinal (NO_DEVICE: none to check). */
static int query(int ok, int device)
{
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	if (!initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (device != NO_DEVICE && (device < 0 || device >= ndevices))
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

int cuDeviceGetCount(int *count)
{
	int rc = query(count != NULL, NO_DEVICE);
	if (rc == CUDA_SUCCESS)
		*count = ndevices;
	return rc;
}

int cuDeviceGet(int *device, int ordinal)
{
	int rc = query(device != NULL, ordinal);
	if (rc == CUDA_SUCCESS)
		*device = ordinal;
	return rc;
}

/* 16 bytes: "fakecuda", then zeros, the ordinal in the last byte. */
int cuDeviceGetUuid(unsigned char *uuid, int device)
{
	int rc = query(uuid != NULL, device);
	if (rc == CUDA_SUCCESS) {
		memset(uuid, 0, 16);
		memcpy(uuid, "fakecuda", 8);
		uuid[15] = (unsigned char)physical[device];
	}
	return rc;
}

int cuDeviceGetUuid_v2(unsigned char *uuid, int device)
{
	return cuDeviceGetUuid(uuid, device);
}

int cuDeviceGetName(char *name, int len, int device)
{
	int rc = query(name != NULL && len > 0, device);
	if (rc == CUDA_SUCCESS)
		snprintf(name, (size_t)len, "Fake GPU %d", physical[device]);
	return rc;
}

int cuCtxGetDevice(int *device)
{
	int rc = query(device != NULL, NO_DEVICE);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&mu);
	int has = devices[current].has_context;
	*device = current;
	pthread_mutex_unlock(&mu);
	return has ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* The context stack of the calling thread (cuCtxPushCurrent/PopCurrent):
 * a pushed context makes its device current for cuCtxGetDevice. */
static __thread int pushed = -1, saved_current;

int cuCtxPushCurrent_v2(void *ctx)
{
	int rc = query(ctx != NULL, NO_DEVICE);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&mu);
	int d = (int)((struct device *)ctx - devices);
	if (d < 0 || d >= ndevices) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	saved_current = current;
	pushed = d;
	current = d;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

int cuCtxPopCurrent_v2(void **ctx)
{
	pthread_mutex_lock(&mu);
	if (pushed < 0) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (ctx)
		*ctx = &devices[pushed];
	current = saved_current;
	pushed = -1;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

/* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT (16) and
 * MAX_THREADS_PER_MULTIPROCESSOR (39); others are not simulated. */
int cuDeviceGetAttribute(int *value, int attr, int device)
{
	int rc = query(value != NULL, device);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (attr == 16)
		*value = fakecuda_sms();
	else if (attr == 39)
		*value = FAKECUDA_MAX_WARPS * 32;
	else
		return 1; /* CUDA_ERROR_INVALID_VALUE */
	return CUDA_SUCCESS;
}

/* ---- the runtime ------------------------------------------------------ */

struct call {
	uint32_t rt_cbid, drv_cbid, correlation;
	const char *rt_name, *drv_name;
	void *context;
};

/* Enters a runtime call: RUNTIME ENTER, lazy driver initialisation and
 * context creation (inside the call, as cudart does), DRIVER ENTER. */
static void call_begin(struct call *c)
{
	c->correlation = atomic_fetch_add(&correlations, 1) + 1;
	const struct fakecuda_tool *t = atomic_load(&the_tool);
	pthread_mutex_lock(&mu);
	c->context = devices[current].has_context ? &devices[current] : NULL;
	pthread_mutex_unlock(&mu);
	if (t)
		t->api(2, c->rt_cbid, c->rt_name, 0, c->correlation, c->context);
	if (!initialised())
		cuInit(0);
	pthread_mutex_lock(&mu);
	struct device *d = &devices[current];
	int create = !d->has_context;
	d->has_context = 1;
	pthread_mutex_unlock(&mu);
	c->context = d;
	t = atomic_load(&the_tool);
	if (create) {
		if (ctx_ms > 0)
			sleep_ns((uint64_t)(ctx_ms * 1e6));
		if (t)
			t->resource(1, d); /* CONTEXT_CREATED */
	}
	if (t && c->drv_cbid)
		t->api(1, c->drv_cbid, c->drv_name, 0, c->correlation, c->context);
}

static void call_end(const struct call *c)
{
	const struct fakecuda_tool *t = atomic_load(&the_tool);
	if (t && c->drv_cbid)
		t->api(1, c->drv_cbid, c->drv_name, 1, c->correlation, c->context);
	if (t)
		t->api(2, c->rt_cbid, c->rt_name, 1, c->correlation, c->context);
}

static int bad_stream(int stream)
{
	return stream < 0 || stream >= FAKECUDA_STREAMS;
}

/* Queues an activity of ms on stream of the current device and returns its
 * end on the tool clock. */
static uint64_t enqueue(struct fakecuda_activity *a, double ms, int stream)
{
	uint64_t dur = (uint64_t)(ms * 1e6 + 0.5);
	uint64_t room = QUEUE_DEPTH * (dur > 1000 ? dur : 1000);
	for (;;) { /* a full launch queue blocks the call */
		pthread_mutex_lock(&mu);
		uint64_t busy = devices[current].busy[stream];
		pthread_mutex_unlock(&mu);
		uint64_t n = now_ns();
		if (busy <= n + room)
			break;
		sleep_ns(busy - n - room + room / 8);
	}
	uint64_t t0 = now_ns() + LAUNCH_LATENCY_NS;
	pthread_mutex_lock(&mu);
	struct device *d = &devices[current];
	uint64_t start = d->busy[stream] > t0 ? d->busy[stream] : t0;
	uint64_t end = start + dur;
	d->busy[stream] = end;
	a->device = (uint32_t)current;
	a->context_id = d->context_id;
	pthread_mutex_unlock(&mu);
	a->start = start;
	a->end = end;
	a->stream = (uint32_t)stream;
	const struct fakecuda_tool *t = atomic_load(&the_tool);
	if (t)
		t->activity(a);
	if (trace)
		fprintf(stderr, "fakecuda: device %u stream %d %s %.3f ms [%llu, %llu]\n", a->device,
			stream, a->name ? a->name : "copy/set", ms, (unsigned long long)start,
			(unsigned long long)end);
	return end;
}

int fakecuda_set_device(int ordinal)
{
	struct call c = { RT_SET_DEVICE, 0, 0, "cudaSetDevice", NULL, NULL };
	c.correlation = atomic_fetch_add(&correlations, 1) + 1;
	const struct fakecuda_tool *t = atomic_load(&the_tool);
	if (t)
		t->api(2, c.rt_cbid, c.rt_name, 0, c.correlation, NULL);
	if (!initialised())
		cuInit(0); /* the first call of a process initialises the driver */
	int rc = -1;
	pthread_mutex_lock(&mu);
	if (ordinal >= 0 && ordinal < ndevices) {
		current = ordinal;
		rc = 0;
	}
	pthread_mutex_unlock(&mu);
	t = atomic_load(&the_tool);
	if (t)
		t->api(2, c.rt_cbid, c.rt_name, 1, c.correlation, NULL);
	return rc;
}

/* Kernel names live as long as the process (records point to them). */
static const char *intern(const char *name)
{
	static const char *names[64];
	static int n;
	if (!name)
		name = "fake_kernel";
	pthread_mutex_lock(&mu);
	const char *r = NULL;
	for (int i = 0; i < n && !r; i++)
		if (strcmp(names[i], name) == 0)
			r = names[i];
	if (!r && n < 64)
		r = names[n++] = strdup(name);
	pthread_mutex_unlock(&mu);
	return r ? r : "fake_kernel";
}

int fakecuda_sms(void)
{
	return (int)env_long("FAKECUDA_SMS", 132, 1, 100000);
}

double fakecuda_sm_mhz(void)
{
	return (double)env_long("FAKECUDA_SM_MHZ", 1755, 1, 100000);
}

/* The counters of a kernel of ms without designed ones: every SM active,
 * occupancy 0.5, one warp instruction per active SM cycle, no DRAM. */
static struct fakecuda_counters default_counters(double ms)
{
	struct fakecuda_counters c = { ms * 1e3 * fakecuda_sm_mhz() * fakecuda_sms(), 1.0, 0.5, 0, 0 };
	return c;
}

int fakecuda_launch(const char *name, double ms, int stream)
{
	return fakecuda_launch_counted(name, ms, stream, NULL);
}

int fakecuda_launch_counted(const char *name, double ms, int stream, const struct fakecuda_counters *k)
{
	if (bad_stream(stream) || !(ms >= 0))
		return -1;
	struct call c = { RT_LAUNCH, DRV_LAUNCH, 0, "cudaLaunchKernel", "cuLaunchKernel", NULL };
	call_begin(&c);
	struct fakecuda_activity a = { .what = FAKECUDA_ACT_KERNEL, .name = intern(name),
				       .correlation = c.correlation, .counters = k ? *k : default_counters(ms) };
	enqueue(&a, ms, stream);
	call_end(&c);
	return 0;
}

static uint64_t busy_until(int stream)
{
	pthread_mutex_lock(&mu);
	uint64_t t = 0;
	for (int s = 0; s < FAKECUDA_STREAMS; s++)
		if ((stream < 0 || s == stream) && devices[current].busy[s] > t)
			t = devices[current].busy[s];
	pthread_mutex_unlock(&mu);
	return t;
}

int fakecuda_sync(void)
{
	struct call c = { RT_DEVICE_SYNC, DRV_CTX_SYNC, 0, "cudaDeviceSynchronize", "cuCtxSynchronize",
			  NULL };
	call_begin(&c);
	sleep_until(busy_until(-1));
	call_end(&c);
	return 0;
}

int fakecuda_stream_sync(int stream)
{
	if (bad_stream(stream))
		return -1;
	struct call c = { RT_STREAM_SYNC, DRV_STREAM_SYNC, 0, "cudaStreamSynchronize",
			  "cuStreamSynchronize", NULL };
	call_begin(&c);
	sleep_until(busy_until(stream));
	call_end(&c);
	return 0;
}

int fakecuda_memcpy(size_t bytes, double ms, int kind, int async, int stream, int peer)
{
	if (bad_stream(stream) || !(ms >= 0))
		return -1;
	if (kind != FAKECUDA_HTOD && kind != FAKECUDA_DTOH && kind != FAKECUDA_DTOD &&
	    kind != FAKECUDA_HTOH && kind != FAKECUDA_PTOP)
		return -1;
	struct call c = { async ? RT_MEMCPY_ASYNC : RT_MEMCPY, async ? DRV_MEMCPY_ASYNC : DRV_MEMCPY,
			  0, async ? "cudaMemcpyAsync" : "cudaMemcpy",
			  async ? "cuMemcpyAsync" : "cuMemcpy", NULL };
	call_begin(&c);
	struct fakecuda_activity a = { .what = FAKECUDA_ACT_MEMCPY, .copy_kind = kind,
				       .bytes = bytes, .correlation = c.correlation };
	if (kind == FAKECUDA_PTOP)
		a.src_device = (uint32_t)(peer >= 0 && peer < ndevices ? peer : 0);
	uint64_t end = enqueue(&a, ms, stream);
	if (!async)
		sleep_until(end);
	call_end(&c);
	return 0;
}

int fakecuda_memset(size_t bytes, double ms, int stream)
{
	if (bad_stream(stream) || !(ms >= 0))
		return -1;
	struct call c = { RT_MEMSET_ASYNC, DRV_MEMSET_ASYNC, 0, "cudaMemsetAsync", "cuMemsetD8Async",
			  NULL };
	call_begin(&c);
	struct fakecuda_activity a = { .what = FAKECUDA_ACT_MEMSET, .bytes = bytes,
				       .correlation = c.correlation };
	enqueue(&a, ms, stream);
	call_end(&c);
	return 0;
}

int fakecuda_get_device(int *ordinal)
{
	struct call c = { RT_GET_DEVICE, DRV_CTX_GET_DEVICE, 0, "cudaGetDevice", "cuCtxGetDevice",
			  NULL };
	call_begin(&c);
	pthread_mutex_lock(&mu);
	if (ordinal)
		*ordinal = current;
	pthread_mutex_unlock(&mu);
	call_end(&c);
	return 0;
}

/* ---- the driver API, called directly (Triton, CuPy, Numba) -------------- */

/* A driver-only call: DRIVER callbacks, no RUNTIME ones. */
static void drv_begin(struct call *c)
{
	c->rt_cbid = 0;
	c->correlation = atomic_fetch_add(&correlations, 1) + 1;
	if (!initialised())
		cuInit(0);
	pthread_mutex_lock(&mu);
	struct device *d = &devices[current];
	int create = !d->has_context;
	d->has_context = 1;
	pthread_mutex_unlock(&mu);
	c->context = d;
	const struct fakecuda_tool *t = atomic_load(&the_tool);
	if (create && t)
		t->resource(1, d);
	if (t)
		t->api(1, c->drv_cbid, c->drv_name, 0, c->correlation, c->context);
}

static void drv_end(const struct call *c)
{
	const struct fakecuda_tool *t = atomic_load(&the_tool);
	if (t)
		t->api(1, c->drv_cbid, c->drv_name, 1, c->correlation, c->context);
}

int fakecuda_drv_launch(const char *name, double ms, int stream)
{
	if (bad_stream(stream) || !(ms >= 0))
		return -1;
	struct call c = { 0, DRV_LAUNCH, 0, NULL, "cuLaunchKernel", NULL };
	drv_begin(&c);
	struct fakecuda_activity a = { .what = FAKECUDA_ACT_KERNEL, .name = intern(name),
				       .correlation = c.correlation, .counters = default_counters(ms) };
	enqueue(&a, ms, stream);
	drv_end(&c);
	return 0;
}

int fakecuda_drv_sync(void)
{
	struct call c = { 0, DRV_CTX_SYNC, 0, NULL, "cuCtxSynchronize", NULL };
	drv_begin(&c);
	sleep_until(busy_until(-1));
	drv_end(&c);
	return 0;
}

/* ---- device memory (cudaMalloc) and pointer queries ------------------- */

/* The fake's "device memory" is host memory (so that an MPI library can
 * move it, as a CUDA-aware MPI moves real device memory), remembered with
 * its device so that cuPointerGetAttribute can answer. */
#define MAX_ALLOCATIONS 64
static struct {
	char *p;
	size_t n;
	int device;
} allocations[MAX_ALLOCATIONS];
static int nallocations;

void *fakecuda_malloc(size_t bytes)
{
	struct call c = { RT_MALLOC, DRV_MEM_ALLOC, 0, "cudaMalloc", "cuMemAlloc_v2", NULL };
	call_begin(&c);
	char *p = bytes ? calloc(1, bytes) : NULL;
	pthread_mutex_lock(&mu);
	if (p && nallocations < MAX_ALLOCATIONS) {
		allocations[nallocations].p = p;
		allocations[nallocations].n = bytes;
		allocations[nallocations].device = current;
		nallocations++;
	} else {
		free(p);
		p = NULL;
	}
	pthread_mutex_unlock(&mu);
	call_end(&c);
	return p;
}

/* CUpointer_attribute MEMORY_TYPE (2: CUmemorytype, 1 host, 2 device) and
 * DEVICE_ORDINAL (9); CUDA_ERROR_INVALID_VALUE for memory the driver does
 * not know, as for plain host memory on a real driver. No callback: a
 * trivial query. */
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr)
{
	const char *q = (const char *)(uintptr_t)ptr;
	int found = -1;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nallocations; i++)
		if (q >= allocations[i].p && q < allocations[i].p + allocations[i].n)
			found = allocations[i].device;
	pthread_mutex_unlock(&mu);
	if (found < 0 || !data)
		return CUDA_ERROR_INVALID_VALUE;
	if (attribute == 2)
		*(unsigned int *)data = 2;
	else if (attribute == 9)
		*(int *)data = found;
	else
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}
