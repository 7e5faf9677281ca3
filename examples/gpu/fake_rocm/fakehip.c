/* fakehip.c: a fake libamdhip64.so for popmon's AMD GPU tests (README.md).
 *
 * A tiny "HIP runtime" (fakehip.h) on simulated devices: every stream of a
 * device has a busy-until time; a kernel or copy starts when its stream is
 * free (streams run concurrently, like a GPU's DMA engines next to its
 * compute units) and lasts the time the caller gives. Synchronisation
 * really sleeps until the work has ended, so host time inside the runtime is
 * real wall-clock time. Time is the SDK's clock (CLOCK_BOOTTIME).
 *
 * Registration, as the real runtime does through rocprofiler-register: the
 * first call of a process, before its own work, looks for a tool (a
 * rocprofiler_configure visible through dlsym(RTLD_DEFAULT), which a
 * preloaded library is; or ROCP_TOOL_LIBRARIES / ROCPROFILER_REGISTER_LIBRARY
 * set); with one, it loads librocprofiler-sdk.so (ROCPROFILER_REGISTER_LIBRARY,
 * else by name, else from this library's folder) and hands it the runtime's
 * table through rocprofiler_set_api_table("hip", ...), inside which the SDK
 * configures and initialises the tools. As the real rocprofiler-register,
 * it aborts the process when a tool is visible but no SDK can be loaded.
 * So the first call's enter callback is seen (the table is wrapped before
 * the call goes through it), and the runtime's initialisation
 * (FAKEHIP_INIT_MS) is inside that call.
 *
 * Environment (all optional):
 *   FAKEHIP_DEVICES        the machine's devices, 1..16 (default 1); the same
 *                          in every process (device d has the KFD unique id
 *                          0x66616b65686970dd, "fakehip" then d), so
 *                          processes choosing the same device share a GPU
 *   ROCR_VISIBLE_DEVICES   the machine's devices the runtime sees (indices or
 *                          GPU-<unique id>), in that order
 *   HIP_VISIBLE_DEVICES    indices into those (CUDA_VISIBLE_DEVICES when
 *                          unset, as HIP)
 *   FAKEHIP_INIT_MS        time the runtime's initialisation takes inside
 *                          the first call (default 0)
 *   FAKEHIP_NO_SDK=1       behave as if librocprofiler-sdk.so were not
 *                          installed
 *   FAKEHIP_TRACE=1        one stderr line per device activity
 *   FAKEHIP_RUNTIME_VERSION  hipRuntimeGetVersion's answer (default 60443482)
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
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fakehip.h"
#include "fakerocp.h" /* the HIP runtime API operation ids */

#define MAX_DEVICES 16
#define LAUNCH_LATENCY_NS 5000ULL
/* A stream holds at most this many queued operations' worth of work, as a
 * GPU's queue does: a launch past it blocks until there is room. */
#define QUEUE_DEPTH 1024
#define MAX_NAMES 256
/* The runtime's own kernels for copies and memsets (HIP's blit kernels). */
#define BLIT_COPY "__amd_rocclr_copyBuffer.kd"
#define BLIT_FILL "__amd_rocclr_fillBufferAligned.kd"

struct device {
	int initialised; /* the runtime set it up (first use in this process) */
	uint64_t busy[FAKEHIP_STREAMS]; /* SDK clock, ns */
	unsigned char loaded[MAX_NAMES]; /* kernel symbols loaded for it */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int init_state; /* 0 none, 1 initialising, 2 done */
static struct device devices[MAX_DEVICES]; /* by the machine's index */
static int machine_devices = 1, nvisible = 1, trace;
static int visible[MAX_DEVICES]; /* ordinal -> machine device */
static double init_ms;
static _Thread_local int current; /* hipSetDevice is per thread */
static struct fakehip_table table = { sizeof(struct fakehip_table), NULL, 1 };
static const char *names[MAX_NAMES];
static int nnames;

static uint64_t boottime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const struct fakehip_profiler *prof(void)
{
	return atomic_load(&table.profiler);
}

/* The simulation's clock: the SDK's, or CLOCK_BOOTTIME (the SDK's clock)
 * without one. */
static uint64_t now_ns(void)
{
	const struct fakehip_profiler *p = prof();
	return p ? p->now() : boottime_ns();
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL), .tv_nsec = (long)(ns % 1000000000ULL) };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

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

static uint64_t unique_id(int machine_device)
{
	return 0x66616b6568697000ULL | (uint64_t)machine_device; /* "fakehip", d */
}

/* Parses a visible-devices list: indices into `of` (n entries), or, when
 * uuids, GPU-<unique id> tokens too; the list ends at the first bad entry,
 * as the runtimes do. Returns the count. */
static int parse_visible(const char *s, const int *of, int n, int uuids, int *out)
{
	int k = 0;
	while (*s && k < MAX_DEVICES) {
		char *end;
		int found = -1;
		if (uuids && strncmp(s, "GPU-", 4) == 0) {
			unsigned long long id = strtoull(s + 4, &end, 16);
			for (int i = 0; i < n; i++)
				if (unique_id(of[i]) == id)
					found = i;
		} else {
			long v = strtol(s, &end, 10);
			if (end != s && v >= 0 && v < n)
				found = (int)v;
		}
		if (found < 0 || (*end && *end != ','))
			break;
		out[k++] = of[found];
		s = *end ? end + 1 : end;
	}
	return k;
}

/* ---- registration (rocprofiler-register's part) ------------------------ */

typedef int (*set_api_table_fn)(const char *name, uint64_t lib_version, uint64_t lib_instance, void **tables,
				uint64_t ntables);

static int env_true(const char *name, int def)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	return !(strcmp(s, "0") == 0 || strcasecmp(s, "false") == 0 || strcasecmp(s, "off") == 0 ||
		 strcasecmp(s, "no") == 0);
}

static void *open_sdk(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOLOAD | RTLD_LAZY);
	if (!h)
		h = dlopen(lib, RTLD_GLOBAL | RTLD_LAZY);
	if (!h && !strchr(lib, '/')) { /* this library's folder */
		Dl_info info;
		if (dladdr((void *)&open_sdk, &info) && info.dli_fname) {
			char path[PATH_MAX];
			snprintf(path, sizeof path, "%s", info.dli_fname);
			char *slash = strrchr(path, '/');
			if (slash) {
				snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "%s", lib);
				h = dlopen(path, RTLD_GLOBAL | RTLD_LAZY);
			}
		}
	}
	return h;
}

static void register_runtime(void)
{
	/* ROCm 7.0's rocprofiler-register can be switched off. */
	if (!env_true("ROCPROFILER_REGISTER_ENABLED", 1))
		return;
	const char *tools = getenv("ROCP_TOOL_LIBRARIES");
	const char *reglib = getenv("ROCPROFILER_REGISTER_LIBRARY");
	int force = env_true("ROCPROFILER_REGISTER_FORCE_LOAD", (reglib && *reglib) || (tools && *tools));
	if (!dlsym(RTLD_DEFAULT, "rocprofiler_configure") && !force)
		return; /* no tool: the SDK is never loaded */
	const char *lib = reglib && *reglib ? reglib : "librocprofiler-sdk.so";
	/* A rocprofiler_set_api_table already visible (a preloaded library's)
	 * is used first, as rocprofiler-register does; FAKEHIP_NO_SDK=1 only
	 * makes the SDK library itself impossible to load. */
	set_api_table_fn set = (set_api_table_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "rocprofiler_set_api_table");
	if (!set && !env_true("FAKEHIP_NO_SDK", 0)) {
		void *h = open_sdk(lib);
		if (h)
			set = (set_api_table_fn)(uintptr_t)dlsym(h, "rocprofiler_set_api_table");
	}
	if (!set) { /* glog's FATAL, as rocprofiler-register's */
		fprintf(stderr, "F0000 00:00:00.000000 %d rocprofiler_register.cpp:0] rocprofiler_set_api_table not "
				"found. Tried to dlopen %s\n*** Check failure stack trace: ***\n",
			(int)getpid(), lib);
		abort();
	}
	void *tables[1] = { &table };
	set("hip", 70000000, 0, tables, 1);
}

static _Thread_local int initialising; /* this thread registers the tools */

static void hip_init(void)
{
	int expected = 0;
	if (initialising)
		return; /* a call from a tool's configure or initialize */
	if (!atomic_compare_exchange_strong(&init_state, &expected, 1)) {
		while (atomic_load(&init_state) != 2) /* another thread's first call */
			sleep_ns(100000);
		return;
	}
	initialising = 1;
	machine_devices = (int)env_long("FAKEHIP_DEVICES", 1, 1, MAX_DEVICES);
	int all[MAX_DEVICES], rocr[MAX_DEVICES];
	for (int d = 0; d < machine_devices; d++)
		all[d] = rocr[d] = d;
	int nrocr = machine_devices;
	const char *s = getenv("ROCR_VISIBLE_DEVICES");
	if (s)
		nrocr = parse_visible(s, all, machine_devices, 1, rocr);
	nvisible = nrocr;
	memcpy(visible, rocr, sizeof rocr);
	s = getenv("HIP_VISIBLE_DEVICES");
	if (!s)
		s = getenv("CUDA_VISIBLE_DEVICES");
	if (s)
		nvisible = parse_visible(s, rocr, nrocr, 0, visible);
	init_ms = (double)env_long("FAKEHIP_INIT_MS", 0, 0, 100000);
	trace = env_long("FAKEHIP_TRACE", 0, 0, 1) == 1;
	table.ndevices = machine_devices;
	register_runtime();
	initialising = 0;
	atomic_store(&init_state, 2);
}

/* ---- calls ------------------------------------------------------------- */

struct call {
	int32_t op;
	uint64_t correlation;
	uint64_t state[FAKEHIP_API_STATE];
};

static uint64_t gettid_u64(void)
{
	return (uint64_t)syscall(SYS_gettid);
}

/* Kernel symbol names live as long as the process (records point to them). */
static int intern(const char *symbol)
{
	pthread_mutex_lock(&mu);
	int r = -1;
	for (int i = 0; i < nnames && r < 0; i++)
		if (strcmp(names[i], symbol) == 0)
			r = i;
	if (r < 0 && nnames < MAX_NAMES) {
		names[nnames] = strdup(symbol);
		if (names[nnames])
			r = nnames++;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

/* Loads the code objects of the given symbols for the current device,
 * inside the call (as HIP loads code objects lazily): the SDK reports
 * them before the first dispatch. */
static void load_symbols(const char *const *symbols, int n)
{
	const char *fresh[4];
	int nfresh = 0, dev;
	pthread_mutex_lock(&mu);
	dev = visible[current];
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < n; i++) {
		int id = intern(symbols[i]);
		if (id < 0)
			continue;
		pthread_mutex_lock(&mu);
		if (!devices[dev].loaded[id]) {
			devices[dev].loaded[id] = 1;
			fresh[nfresh++] = names[id];
		}
		pthread_mutex_unlock(&mu);
	}
	const struct fakehip_profiler *p = prof();
	if (nfresh && p)
		p->code_object(dev, fresh, nfresh);
}

/* Enters a call: initialisation of the runtime (and registration of the
 * tools) before the first call goes through the table, then the enter
 * callback, then, inside the call, the runtime's own set-up of the
 * process and of the current device. */
static void call_begin(struct call *c, int32_t op)
{
	if (atomic_load(&init_state) != 2)
		hip_init();
	memset(c, 0, sizeof *c);
	c->op = op;
	const struct fakehip_profiler *p = prof();
	if (p) {
		c->correlation = p->correlation();
		p->api(op, FRP_PHASE_ENTER, c->correlation, c->state);
	}
	static _Atomic int process_ready;
	int expected = 0;
	if (atomic_compare_exchange_strong(&process_ready, &expected, 1) && init_ms > 0)
		sleep_ns((uint64_t)(init_ms * 1e6));
	pthread_mutex_lock(&mu);
	int dev = visible[current];
	int fresh = !devices[dev].initialised;
	devices[dev].initialised = 1;
	pthread_mutex_unlock(&mu);
	if (fresh) {
		static const char *const blits[] = { BLIT_COPY, BLIT_FILL };
		load_symbols(blits, 2);
	}
}

static void call_end(struct call *c)
{
	const struct fakehip_profiler *p = prof();
	if (p)
		p->api(c->op, FRP_PHASE_EXIT, c->correlation, c->state);
}

static int bad_stream(int stream)
{
	return stream < 0 || stream >= FAKEHIP_STREAMS;
}

/* Queues an activity of ms on stream of the current device and returns its
 * end. */
static uint64_t enqueue(struct fakehip_activity *a, double ms, int stream, const struct call *c)
{
	uint64_t dur = (uint64_t)(ms * 1e6 + 0.5);
	uint64_t room = QUEUE_DEPTH * (dur > 1000 ? dur : 1000);
	pthread_mutex_lock(&mu);
	int dev = visible[current];
	pthread_mutex_unlock(&mu);
	for (;;) { /* a full queue blocks the call */
		pthread_mutex_lock(&mu);
		uint64_t busy = devices[dev].busy[stream];
		pthread_mutex_unlock(&mu);
		uint64_t n = now_ns();
		if (busy <= n + room)
			break;
		sleep_ns(busy - n - room + room / 8);
	}
	uint64_t t0 = now_ns() + LAUNCH_LATENCY_NS;
	pthread_mutex_lock(&mu);
	struct device *d = &devices[dev];
	uint64_t start = d->busy[stream] > t0 ? d->busy[stream] : t0;
	uint64_t end = start + dur;
	d->busy[stream] = end;
	pthread_mutex_unlock(&mu);
	a->device = dev;
	a->start = start;
	a->end = end;
	a->stream = (uint32_t)stream;
	a->correlation = c->correlation;
	a->thread_id = gettid_u64();
	const struct fakehip_profiler *p = prof();
	if (p)
		p->activity(a);
	if (trace)
		fprintf(stderr, "fakehip: device %d stream %d %s %.3f ms [%llu, %llu]\n", dev, stream,
			a->name ? a->name : "copy", ms, (unsigned long long)start, (unsigned long long)end);
	return end;
}

int fakehip_set_device(int ordinal)
{
	struct call c;
	if (atomic_load(&init_state) != 2)
		hip_init();
	int ok = ordinal >= 0 && ordinal < nvisible;
	int old = current;
	if (ok)
		current = ordinal; /* the call sets up the device it chooses */
	call_begin(&c, FRP_HIP_hipSetDevice);
	if (!ok)
		current = old;
	call_end(&c);
	return ok ? 0 : -1;
}

int fakehip_get_device(int *ordinal)
{
	struct call c;
	call_begin(&c, FRP_HIP_hipGetDevice);
	if (ordinal)
		*ordinal = current;
	call_end(&c);
	return ordinal ? 0 : -1;
}

int fakehip_get_device_count(int *count)
{
	struct call c;
	call_begin(&c, FRP_HIP_hipGetDeviceCount);
	if (count)
		*count = nvisible;
	call_end(&c);
	return count ? 0 : -1;
}

int fakehip_get_last_error(void)
{
	struct call c;
	call_begin(&c, FRP_HIP_hipGetLastError);
	call_end(&c);
	return 0;
}

static char *symbol_of(const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s.kd", name && *name ? name : "fake_kernel");
	return buf;
}

static int launch_in_call(const char *name, double ms, int stream, const struct call *c)
{
	char sym[160];
	const char *s = symbol_of(name, sym, sizeof sym);
	load_symbols(&s, 1);
	int id = intern(s);
	struct fakehip_activity a = { .what = FAKEHIP_ACT_KERNEL, .src_device = -1, .dst_device = -1,
				      .name = id >= 0 ? names[id] : BLIT_COPY };
	enqueue(&a, ms, stream, c);
	return 0;
}

static int launch(int32_t op, const char *name, double ms, int stream)
{
	if (bad_stream(stream) || !(ms >= 0))
		return -1;
	struct call c;
	call_begin(&c, op);
	launch_in_call(name, ms, stream, &c);
	call_end(&c);
	return 0;
}

int fakehip_launch(const char *name, double ms, int stream)
{
	return launch(FRP_HIP_hipLaunchKernel, name, ms, stream);
}

int fakehip_module_launch(const char *name, double ms, int stream)
{
	return launch(FRP_HIP_hipModuleLaunchKernel, name, ms, stream);
}

int fakehip_nested_launch(const char *name, double ms, int stream)
{
	if (bad_stream(stream) || !(ms >= 0))
		return -1;
	struct call c;
	call_begin(&c, FRP_HIP_hipExtLaunchKernel);
	int rc = fakehip_launch(name, ms, stream); /* through the table: callbacks nest */
	call_end(&c);
	return rc;
}

static uint64_t busy_until(int stream)
{
	pthread_mutex_lock(&mu);
	const struct device *d = &devices[visible[current]];
	uint64_t t = 0;
	for (int s = 0; s < FAKEHIP_STREAMS; s++)
		if ((stream < 0 || s == stream) && d->busy[s] > t)
			t = d->busy[s];
	pthread_mutex_unlock(&mu);
	return t;
}

int fakehip_sync(void)
{
	struct call c;
	call_begin(&c, FRP_HIP_hipDeviceSynchronize);
	sleep_until(busy_until(-1));
	call_end(&c);
	return 0;
}

int fakehip_stream_sync(int stream)
{
	if (bad_stream(stream))
		return -1;
	struct call c;
	call_begin(&c, FRP_HIP_hipStreamSynchronize);
	sleep_until(busy_until(stream));
	call_end(&c);
	return 0;
}

int fakehip_memcpy(size_t bytes, double ms, int kind, int async, int stream, int peer)
{
	if (bad_stream(stream) || !(ms >= 0))
		return -1;
	if (kind != FAKEHIP_HTOD && kind != FAKEHIP_DTOH && kind != FAKEHIP_DTOD && kind != FAKEHIP_HTOH &&
	    kind != FAKEHIP_PTOP)
		return -1;
	int32_t op = kind == FAKEHIP_PTOP ? (async ? FRP_HIP_hipMemcpyPeerAsync : FRP_HIP_hipMemcpyPeer)
					  : (async ? FRP_HIP_hipMemcpyAsync : FRP_HIP_hipMemcpy);
	struct call c;
	call_begin(&c, op);
	if (kind == FAKEHIP_PTOP && (peer < 0 || peer >= nvisible)) {
		call_end(&c);
		return -1;
	}
	uint64_t end = 0;
	if (kind == FAKEHIP_HTOH) { /* the host copies: no device activity */
		if (!async)
			sleep_ns((uint64_t)(ms * 1e6));
	} else if (kind == FAKEHIP_DTOD) { /* a blit kernel on the device */
		int id = intern(BLIT_COPY);
		struct fakehip_activity a = { .what = FAKEHIP_ACT_KERNEL, .src_device = -1, .dst_device = -1,
					      .bytes = bytes, .name = id >= 0 ? names[id] : BLIT_COPY };
		end = enqueue(&a, ms, stream, &c);
	} else { /* the DMA engines */
		pthread_mutex_lock(&mu);
		int dev = visible[current], src = kind == FAKEHIP_PTOP ? visible[peer] : dev;
		pthread_mutex_unlock(&mu);
		struct fakehip_activity a = { .what = FAKEHIP_ACT_COPY, .bytes = bytes };
		a.src_device = kind == FAKEHIP_HTOD ? -1 : src;
		a.dst_device = kind == FAKEHIP_DTOH ? -1 : dev;
		end = enqueue(&a, ms, stream, &c);
	}
	if (!async && end)
		sleep_until(end);
	call_end(&c);
	return 0;
}

int fakehip_memset(size_t bytes, double ms, int stream)
{
	if (bad_stream(stream) || !(ms >= 0))
		return -1;
	struct call c;
	call_begin(&c, FRP_HIP_hipMemsetAsync);
	int id = intern(BLIT_FILL);
	struct fakehip_activity a = { .what = FAKEHIP_ACT_KERNEL, .src_device = -1, .dst_device = -1,
				      .bytes = bytes, .name = id >= 0 ? names[id] : BLIT_FILL };
	enqueue(&a, ms, stream, &c);
	call_end(&c);
	return 0;
}

int fakehip_malloc(size_t bytes, double ms)
{
	(void)bytes;
	if (!(ms >= 0))
		return -1;
	struct call c;
	call_begin(&c, FRP_HIP_hipMalloc);
	sleep_ns((uint64_t)(ms * 1e6));
	call_end(&c);
	return 0;
}

int fakehip_free(double ms)
{
	if (!(ms >= 0))
		return -1;
	struct call c;
	call_begin(&c, FRP_HIP_hipFree);
	sleep_ns((uint64_t)(ms * 1e6));
	call_end(&c);
	return 0;
}

/* hipRuntimeGetVersion: HIP_VERSION's form, major * 10^7 + minor * 10^5 +
 * patch (FAKEHIP_RUNTIME_VERSION, default 60443482: ROCm 6.4). A plain
 * query, as tools call it from their initialize: it does not start the
 * runtime and is not traced. */
int hipRuntimeGetVersion(int *version)
{
	if (!version)
		return 1; /* hipErrorInvalidValue */
	const char *s = getenv("FAKEHIP_RUNTIME_VERSION");
	*version = s && *s ? atoi(s) : 60443482;
	return 0;
}
