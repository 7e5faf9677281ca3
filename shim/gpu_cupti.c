/* gpu_cupti.c: the NVIDIA backend of GPU measurement: CUPTI, loaded at
 * run time (gpu.h, gpu_abi.h).
 *
 * Nothing here runs unless the CUDA driver calls InitializeInjection. The
 * host side is CUPTI's RUNTIME and DRIVER API callbacks, enabled one id at
 * a time for the calls whose time matters, handed to the layer's
 * popmon_gpu_api. The device side is the activity buffers of gpu_pool.c:
 * preallocated, grown off the program's threads, handed to CUPTI zeroed; a
 * completed buffer is queued, and its records are decoded through the
 * prefixes that have not moved across CUPTI versions on the pool's thread
 * (or by a reader that needs them now), under the GPU lock only (never the
 * region lock: cuptiActivityFlushAll delivers buffers synchronously on the
 * flushing thread, which may hold the region lock).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "base/clock.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "gpu.h"
#include "gpu_mode.h"
#include "gpu_cbids.h"
#include "gpu_cupti.h"
#include "gpu_cupti_pm.h"
#include "gpu_pool.h"
#include "live.h"

const struct popmon_gpu_backend *popmon_gpu_backend;

/* ------------------------------------------------------------------ records */

static uint64_t rd64(const uint8_t *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

static uint32_t rd32(const uint8_t *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

static int copy_kind(unsigned ck)
{
	switch (ck) {
	case POPMON_CUPTI_MEMCPY_HTOD:
	case POPMON_CUPTI_MEMCPY_HTOA:
		return POPMON_GPU_CP_HTOD;
	case POPMON_CUPTI_MEMCPY_DTOH:
	case POPMON_CUPTI_MEMCPY_ATOH:
		return POPMON_GPU_CP_DTOH;
	case POPMON_CUPTI_MEMCPY_PTOP:
		return POPMON_GPU_CP_PTOP;
	default: /* device, array and unknown kinds: on the device */
		return POPMON_GPU_CP_DTOD;
	}
}

/* Memcpy, MemcpyPtoP and Memset share bytes, start, end and deviceId at
 * the same offsets. */
static void copy_fields(const uint8_t *rec, int cls, int copy, struct popmon_gpu_record *out)
{
	_Static_assert(POPMON_REC_MEMSET_BYTES == POPMON_REC_MEMCPY_BYTES &&
			       POPMON_REC_MEMSET_START == POPMON_REC_MEMCPY_START &&
			       POPMON_REC_MEMSET_END == POPMON_REC_MEMCPY_END &&
			       POPMON_REC_MEMSET_DEVICE == POPMON_REC_MEMCPY_DEVICE,
		       "memset and memcpy prefixes");
	out->cls = cls;
	out->copy = copy;
	out->bytes = rd64(rec, POPMON_REC_MEMCPY_BYTES);
	out->start = rd64(rec, POPMON_REC_MEMCPY_START);
	out->end = rd64(rec, POPMON_REC_MEMCPY_END);
	out->device = rd32(rec, POPMON_REC_MEMCPY_DEVICE);
}

void popmon_gpu_decode(const uint8_t *rec, uint64_t lo, uint64_t hi, uint32_t ndev, struct popmon_gpu_record *out)
{
	memset(out, 0, sizeof *out);
	uint32_t kind = rd32(rec, POPMON_REC_KIND);
	switch (kind) {
	case POPMON_CUPTI_ACTIVITY_KERNEL:
	case POPMON_CUPTI_ACTIVITY_CONCURRENT_KERNEL: {
		out->cls = POPMON_GPU_KERNEL;
		out->start = rd64(rec, POPMON_REC_KERNEL_START);
		out->end = rd64(rec, POPMON_REC_KERNEL_END);
		out->device = rd32(rec, POPMON_REC_KERNEL_DEVICE);
		const char *name;
		memcpy(&name, rec + POPMON_REC_KERNEL_NAME, sizeof name);
		out->name = name;
		break;
	}
	case POPMON_CUPTI_ACTIVITY_MEMCPY: {
		unsigned ck = rec[POPMON_REC_MEMCPY_COPYKIND];
		if (ck == POPMON_CUPTI_MEMCPY_HTOH)
			return; /* no device involved */
		copy_fields(rec, POPMON_GPU_COPY, copy_kind(ck), out);
		break;
	}
	case POPMON_CUPTI_ACTIVITY_MEMCPY2:
		copy_fields(rec, POPMON_GPU_COPY, POPMON_GPU_CP_PTOP, out);
		break;
	case POPMON_CUPTI_ACTIVITY_MEMSET:
		copy_fields(rec, POPMON_GPU_SET, POPMON_GPU_CP_SET, out);
		break;
	default:
		return;
	}
	if (out->start == 0 || out->end == 0) {
		out->cls = POPMON_GPU_SKIP; /* not timed (CUPTI could not) */
		return;
	}
	if (out->end < out->start || out->start < lo || out->end > hi || out->device >= ndev)
		out->cls = POPMON_GPU_REJECT;
}

/* ------------------------------------------------------------------ state */

static uint64_t dropped, rejected, lost;

static int failed;        /* ... and could not measure: reason */
static char reason[256];
static uint32_t cupti_version;
static int driver_version;
static int calibrated;
static int64_t clock_offset; /* added to CUPTI's timestamps (calibrated clock) */
static popmon_cupti_subscriber subscriber;

/* Inside libpopmon's own CUDA calls (device map, flush): their callbacks
 * are not the program's. */
static __thread int gpu_self __attribute__((tls_model("initial-exec")));

static void cupti_flush(int final);
static void cupti_measured(struct popmon_gpu_proc *out);
static int cupti_device_of(const void *p);
static int cupti_why(struct popmon_gpu_proc *out, int mode);
static void cupti_probe(void);
const struct popmon_gpu_ops popmon_gpu_cupti_ops = {.vendor = POPMON_GPU_VENDOR_NVIDIA,
						    .name = "cupti",
						    .vendor_name = "nvidia",
						    .version_key = "cupti_version",
						    .runtime_key = "driver_version",
						    .probe = cupti_probe,
						    .why = cupti_why,
						    .flush = cupti_flush,
						    .measured = cupti_measured,
						    .device_of = cupti_device_of};

/* The pool's process function, under the GPU lock: decodes and accounts
 * every record of a completed buffer (a discard buffer's are counted as
 * lost). On the pool's thread, or on a reader's that drains the queue. */
static void process_buffer(uint8_t *buf, size_t valid, int discard)
{
	const struct popmon_gpu_backend *b = popmon_gpu_backend;
	uint64_t now = popmon_monotonic_ns();
	uint64_t lo = popmon_proc.t0_ns > 1000000000ull ? popmon_proc.t0_ns - 1000000000ull : 0;
	uint64_t hi = now + 1000000000ull;
	/* Bounds in the records' clock. */
	lo = (uint64_t)((int64_t)lo - clock_offset);
	hi = (uint64_t)((int64_t)hi - clock_offset);
	int nd = popmon_gpu_device_count();
	uint32_t ndev = nd > 0 && nd < POPMON_GPU_DEVICES ? (uint32_t)nd : POPMON_GPU_DEVICES;
	uint64_t bad = 0, n = 0;
	void *rec = NULL;
	for (size_t guard = 0; guard < valid / 8 + 1; guard++) {
		if (b->get_next_record(buf, valid, &rec) != POPMON_CUPTI_SUCCESS || !rec)
			break;
		n++;
		if (discard)
			continue;
		struct popmon_gpu_record r;
		popmon_gpu_decode(rec, lo, hi, ndev, &r);
		if (r.cls == POPMON_GPU_SKIP)
			continue;
		if (r.cls == POPMON_GPU_REJECT) {
			bad++;
			continue;
		}
		r.start = (uint64_t)((int64_t)r.start + clock_offset);
		r.end = (uint64_t)((int64_t)r.end + clock_offset);
		popmon_gpu_account_locked(&r);
	}
	if (discard) {
		lost += n;
		return;
	}
	rejected += bad;
	popmon_gpu_publish_locked(now);
	if (bad)
		popmon_warn_once("gpu-rejected", "GPU activity records with implausible times or devices were "
				 "rejected (an unknown CUPTI record layout?): device times are lower bounds");
}

/* ------------------------------------------------------------------ buffers */

/* What the pool does when no buffer is free: a CUPTI older than 12.9
 * (version 27) crashes when given none, so it gets one whatever happens. */
static int pool_policy;

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	*buffer = popmon_gpu_pool_get(pool_policy);
	*size = *buffer ? POPMON_GPU_BUFFER_SIZE : 0;
}

static void count_dropped(void *context, uint32_t stream)
{
	const struct popmon_gpu_backend *b = popmon_gpu_backend;
	size_t n = 0;
	if (!b->dropped_records || b->dropped_records(context, stream, &n) != POPMON_CUPTI_SUCCESS || n == 0)
		return;
	__atomic_fetch_add(&dropped, (uint64_t)n, __ATOMIC_RELAXED);
}

/* CUPTI hands a buffer back (from its thread, or from a flush on the
 * flushing thread): queued for the pool's thread, nothing decoded here. */
static void buffer_completed(void *context, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)size;
	popmon_gpu_pool_done(buffer, valid);
	count_dropped(context, stream);
}

/* ------------------------------------------------------------------ callbacks */

static uint64_t gpu_timestamp(void)
{
	return popmon_monotonic_ns();
}

static void format_uuid(char *out, size_t n, const unsigned char u[16])
{
	snprintf(out, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The device table: ordinal -> UUID and name (a context was created, so
 * the driver is initialised). */
static void device_map(void)
{
	const struct popmon_gpu_backend *b = popmon_gpu_backend;
	int count = 0;
	if (!b->device_count || b->device_count(&count) != 0 || count <= 0)
		return;
	gpu_self = 1;
	char uuid[POPMON_GPU_DEVICES][48], name[POPMON_GPU_DEVICES][96];
	int n = count < POPMON_GPU_DEVICES ? count : POPMON_GPU_DEVICES;
	for (int i = 0; i < n; i++) {
		int dev = i;
		unsigned char u[16] = {0};
		snprintf(uuid[i], sizeof uuid[i], "GPU-ordinal-%d", i);
		snprintf(name[i], sizeof name[i], "%s", "");
		if (b->device_get && b->device_get(&dev, i) != 0)
			continue;
		if (b->device_uuid && b->device_uuid(u, dev) == 0)
			format_uuid(uuid[i], sizeof uuid[i], u);
		if (b->device_name && b->device_name(name[i], (int)sizeof name[i], dev) == 0)
			name[i][sizeof name[i] - 1] = '\0';
		else
			name[i][0] = '\0';
	}
	gpu_self = 0;
	popmon_gpu_set_devices(count, n, uuid, name);
}

static void gpu_callback(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
	(void)userdata;
	if (domain == POPMON_CUPTI_CB_DOMAIN_RUNTIME_API || domain == POPMON_CUPTI_CB_DOMAIN_DRIVER_API) {
		if (gpu_self || !cbdata)
			return;
		uint32_t site;
		memcpy(&site, (const uint8_t *)cbdata + POPMON_CBDATA_SITE, sizeof site);
		popmon_gpu_api(popmon_tls, site, popmon_now());
	} else if (domain == POPMON_CUPTI_CB_DOMAIN_RESOURCE) {
		if (cbid == POPMON_CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			device_map();
			void *ctx = NULL;
			if (cbdata)
				memcpy(&ctx, (const uint8_t *)cbdata + POPMON_RESDATA_CONTEXT, sizeof ctx);
			gpu_self = 1;
			popmon_cupti_pm_context(popmon_gpu_backend, ctx, cupti_version);
			gpu_self = 0;
		}
		else if (cbid == POPMON_CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
			popmon_gpu_flush_final(); /* the last safe point at exit */
	}
}

/* ------------------------------------------------------------------ reasons */

static const char *cupti_error_name(int err)
{
	switch (err) {
	case POPMON_CUPTI_ERROR_NOT_COMPATIBLE:
		return "CUPTI_ERROR_NOT_COMPATIBLE";
	case POPMON_CUPTI_ERROR_NOT_INITIALIZED:
		return "CUPTI_ERROR_NOT_INITIALIZED";
	case POPMON_CUPTI_ERROR_NOT_SUPPORTED:
		return "CUPTI_ERROR_NOT_SUPPORTED";
	case POPMON_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
	case POPMON_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS:
		return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
	}
	return NULL;
}

void popmon_gpu_reason(char *buf, size_t n, int why, int err, const char *detail)
{
	const char *d = detail ? detail : "";
	const char *en = cupti_error_name(err);
	char code[64];
	if (en)
		snprintf(code, sizeof code, "%s", en);
	else
		snprintf(code, sizeof code, "CUPTI error %d", err);
	switch (why) {
	case POPMON_GPU_WHY_NO_CUDA:
		snprintf(buf, n, "the program did not use CUDA or HIP");
		return;
	case POPMON_GPU_WHY_OFF:
		snprintf(buf, n, "GPU measurement is off (--gpu off or POPMON_GPU=off); use --gpu auto to measure it");
		return;
	case POPMON_GPU_WHY_NOT_INJECTED:
		snprintf(buf, n, "the program used CUDA but libpopmon was not injected into the CUDA driver: run it "
			 "under popmon run or popmon exec (or set CUDA_INJECTION64_PATH to libpopmon's path)");
		return;
	case POPMON_GPU_WHY_TAKEN:
		snprintf(buf, n, "another CUDA tool is injected (CUDA_INJECTION64_PATH=%.90s) and the driver loads "
			 "only one: run without it to measure the GPU", d);
		return;
	case POPMON_GPU_WHY_NO_CUPTI:
		/* At most ~215 bytes: the warning line ("GPU measurement
		 * requested but ...") holds 255. */
		snprintf(buf, n, "no usable CUPTI library found (tried %.70s%s): install CUPTI (CUDA toolkit's "
			 "extras/CUPTI) or set POPMON_CUPTI_LIBRARY to a libcupti.so", d, strlen(d) > 70 ? "..." : "");
		return;
	case POPMON_GPU_WHY_NO_DRIVER:
		snprintf(buf, n, "the CUDA driver library libcuda.so.1 is not loaded in the process: check the "
			 "driver installation (popmon doctor)");
		return;
	case POPMON_GPU_WHY_OTHER_BACKEND:
		snprintf(buf, n, "another GPU backend already measures this process's devices: CUPTI's records are "
			 "not counted twice");
		return;
	case POPMON_GPU_WHY_NO_CLOCK:
		snprintf(buf, n, "CUPTI gave no clock to place GPU activity on the host's timeline "
			 "(cuptiActivityRegisterTimestampCallback and cuptiGetTimestamp failed): use a newer CUPTI");
		return;
	}
	switch (err) {
	case POPMON_CUPTI_ERROR_NOT_INITIALIZED:
		snprintf(buf, n, "CUPTI could not initialise (%.40s: %s): the CUDA driver is older than this CUPTI; "
			 "set POPMON_CUPTI_LIBRARY to the libcupti.so of a CUDA version the driver supports", d, code);
		return;
	case POPMON_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS:
		snprintf(buf, n, "another profiler in the program already uses CUPTI (%.40s: %s): stop it (PyTorch "
			 "profiler, Kineto, Nsight) to measure the GPU", d, code);
		return;
	case POPMON_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		snprintf(buf, n, "profiling is restricted to administrators (%.40s: %s): set the driver option "
			 "NVreg_RestrictProfilingToAdminUsers=0", d, code);
		return;
	case POPMON_CUPTI_ERROR_NOT_SUPPORTED:
	case POPMON_CUPTI_ERROR_NOT_COMPATIBLE:
		snprintf(buf, n, "this GPU or driver does not support CUPTI activity tracing (%.40s: %s): use the "
			 "CUPTI of the CUDA version that matches the driver", d, code);
		return;
	}
	snprintf(buf, n, "CUPTI failed (%.40s: %s): GPU not measured; popmon doctor shows the CUDA setup", d, code);
}

/* ------------------------------------------------------------------ loading */

static struct popmon_gpu_backend real;
static void *cupti_handle;

#define RESOLVE(h, field, name)                       \
	do {                                          \
		void *p_ = dlsym((h), (name));        \
		memcpy(&real.field, &p_, sizeof p_); \
	} while (0)

static int load_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
	if (!h)
		return -1;
	RESOLVE(h, driver_version, "cuDriverGetVersion");
	RESOLVE(h, device_count, "cuDeviceGetCount");
	RESOLVE(h, device_get, "cuDeviceGet");
	RESOLVE(h, device_uuid, "cuDeviceGetUuid_v2");
	if (!real.device_uuid)
		RESOLVE(h, device_uuid, "cuDeviceGetUuid");
	RESOLVE(h, device_name, "cuDeviceGetName");
	RESOLVE(h, pointer_attribute, "cuPointerGetAttribute");
	RESOLVE(h, pm.ctx_push, "cuCtxPushCurrent_v2");
	RESOLVE(h, pm.ctx_pop, "cuCtxPopCurrent_v2");
	RESOLVE(h, pm.ctx_device, "cuCtxGetDevice");
	RESOLVE(h, pm.device_attribute, "cuDeviceGetAttribute");
	return 0;
}

/* Opens candidate path as libcupti: 0 with real's CUPTI entries filled. */
static int load_cupti(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	RESOLVE(h, get_version, "cuptiGetVersion");
	RESOLVE(h, subscribe, "cuptiSubscribe");
	RESOLVE(h, unsubscribe, "cuptiUnsubscribe");
	RESOLVE(h, enable_domain, "cuptiEnableDomain");
	RESOLVE(h, enable_callback, "cuptiEnableCallback");
	RESOLVE(h, register_callbacks, "cuptiActivityRegisterCallbacks");
	RESOLVE(h, register_timestamp, "cuptiActivityRegisterTimestampCallback");
	RESOLVE(h, activity_enable, "cuptiActivityEnable");
	RESOLVE(h, activity_disable, "cuptiActivityDisable");
	RESOLVE(h, flush_all, "cuptiActivityFlushAll");
	RESOLVE(h, get_next_record, "cuptiActivityGetNextRecord");
	RESOLVE(h, dropped_records, "cuptiActivityGetNumDroppedRecords");
	RESOLVE(h, result_string, "cuptiGetResultString");
	RESOLVE(h, finalize, "cuptiFinalize");
	RESOLVE(h, get_timestamp, "cuptiGetTimestamp");
	RESOLVE(h, flush_period, "cuptiActivityFlushPeriod");
	RESOLVE(h, set_attribute, "cuptiActivitySetAttribute");
	RESOLVE(h, pm.profiler_initialize, "cuptiProfilerInitialize");
	RESOLVE(h, pm.chip_name, "cuptiDeviceGetChipName");
	RESOLVE(h, pm.availability, "cuptiPmSamplingGetCounterAvailability");
	RESOLVE(h, pm.host_initialize, "cuptiProfilerHostInitialize");
	RESOLVE(h, pm.host_deinitialize, "cuptiProfilerHostDeinitialize");
	RESOLVE(h, pm.host_add_metrics, "cuptiProfilerHostConfigAddMetrics");
	RESOLVE(h, pm.host_image_size, "cuptiProfilerHostGetConfigImageSize");
	RESOLVE(h, pm.host_image, "cuptiProfilerHostGetConfigImage");
	RESOLVE(h, pm.host_passes, "cuptiProfilerHostGetNumOfPasses");
	RESOLVE(h, pm.host_evaluate, "cuptiProfilerHostEvaluateToGpuValues");
	RESOLVE(h, pm.enable, "cuptiPmSamplingEnable");
	RESOLVE(h, pm.disable, "cuptiPmSamplingDisable");
	RESOLVE(h, pm.set_config, "cuptiPmSamplingSetConfig");
	RESOLVE(h, pm.start, "cuptiPmSamplingStart");
	RESOLVE(h, pm.stop, "cuptiPmSamplingStop");
	RESOLVE(h, pm.decode, "cuptiPmSamplingDecodeData");
	RESOLVE(h, pm.data_size, "cuptiPmSamplingGetCounterDataSize");
	RESOLVE(h, pm.data_init, "cuptiPmSamplingCounterDataImageInitialize");
	RESOLVE(h, pm.data_info, "cuptiPmSamplingGetCounterDataInfo");
	RESOLVE(h, pm.sample_info, "cuptiPmSamplingCounterDataGetSampleInfo");
	if (!real.get_version || !real.subscribe || !real.enable_domain || !real.register_callbacks ||
	    !real.activity_enable || !real.flush_all || !real.get_next_record) {
		dlclose(h);
		return -1;
	}
	cupti_handle = h;
	return 0;
}

/* The candidates of research §3.2: POPMON_CUPTI_LIBRARY alone when set,
 * else the loader path, then CUDA_HOME and the usual install prefix. */
static int cupti_candidates(char out[][PATH_MAX], int max)
{
	int n = 0;
	const char *env = getenv("POPMON_CUPTI_LIBRARY");
	if (env && *env) {
		snprintf(out[n++], PATH_MAX, "%s", env);
		return n;
	}
	static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8"};
	for (size_t i = 0; i < sizeof names / sizeof names[0] && n < max; i++)
		snprintf(out[n++], PATH_MAX, "%s", names[i]);
	const char *home = getenv("CUDA_HOME");
	const char *prefixes[] = {home && *home ? home : NULL, "/usr/local/cuda"};
	for (size_t p = 0; p < 2; p++) {
		if (!prefixes[p])
			continue;
		if (n < max)
			snprintf(out[n++], PATH_MAX, "%.3000s/extras/CUPTI/lib64/libcupti.so", prefixes[p]);
		if (n < max)
			snprintf(out[n++], PATH_MAX, "%.3000s/lib64/libcupti.so", prefixes[p]);
	}
	return n;
}

/* The API calls whose time matters: popmon_cupti_runtime_cbids and
 * popmon_cupti_driver_cbids (gpu_cbids.h, generated from the one table
 * shim/gen/cupti_cbids.txt of name -> id per CUDA version). Trivial getters
 * (cudaGetDevice, cudaGetLastError, cuCtxGetCurrent, cuPointerGetAttribute,
 * ...) are not among them: they cost the program nothing measurable, and a
 * callback on each would cost more than the call. Driver ids are enabled
 * too, for programs that launch through the driver API (Triton, CuPy,
 * Numba); inside a runtime call they only nest (counted once). */
#define runtime_cbids popmon_cupti_runtime_cbids
#define driver_cbids popmon_cupti_driver_cbids

/* Enables the callbacks of runtime_cbids and driver_cbids. An id this CUPTI
 * does not know is skipped; the launch ids must be accepted. Without
 * cuptiEnableCallback: both domains whole. */
static int enable_api_callbacks(const struct popmon_gpu_backend *b)
{
	int rc;
	if (!b->enable_callback) {
		if ((rc = b->enable_domain(1, subscriber, POPMON_CUPTI_CB_DOMAIN_RUNTIME_API)) != 0)
			return rc;
		return b->enable_domain(1, subscriber, POPMON_CUPTI_CB_DOMAIN_DRIVER_API);
	}
	for (size_t i = 0; i < sizeof runtime_cbids / sizeof runtime_cbids[0]; i++) {
		rc = b->enable_callback(1, subscriber, POPMON_CUPTI_CB_DOMAIN_RUNTIME_API, runtime_cbids[i]);
		if (rc != 0 && runtime_cbids[i] == POPMON_CBID_RT_cudaLaunchKernel_v7000)
			return rc; /* cudaLaunchKernel: every CUPTI since CUDA 7 has it */
	}
	for (size_t i = 0; i < sizeof driver_cbids / sizeof driver_cbids[0]; i++) {
		rc = b->enable_callback(1, subscriber, POPMON_CUPTI_CB_DOMAIN_DRIVER_API, driver_cbids[i]);
		if (rc != 0 && driver_cbids[i] == POPMON_CBID_DRV_cuLaunchKernel)
			return rc; /* cuLaunchKernel */
	}
	return 0;
}

/* Subscribes and enables everything with backend b: 0, or CUPTI's error
 * with the failing call in *call. */
static int start(const struct popmon_gpu_backend *b, const char **call)
{
	uint32_t v = 0;
	*call = "cuptiGetVersion";
	int rc = b->get_version(&v);
	if (rc != 0)
		return rc;
	cupti_version = v;
	if (b->driver_version)
		b->driver_version(&driver_version);
	/* The clock first: records must never be stamped with another. */
	*call = "cuptiActivityRegisterTimestampCallback";
	rc = b->register_timestamp ? b->register_timestamp(gpu_timestamp) : -1;
	if (rc != 0) {
		if (!b->get_timestamp || popmon_gpu_calibrate(b->get_timestamp, &clock_offset) != 0)
			return -2;
		calibrated = 1;
	}
	*call = "cuptiSubscribe";
	if ((rc = b->subscribe(&subscriber, gpu_callback, NULL)) != 0)
		return rc;
	*call = "cuptiEnableCallback";
	if ((rc = enable_api_callbacks(b)) != 0)
		goto fail;
	if (b->enable_callback) {
		if ((rc = b->enable_callback(1, subscriber, POPMON_CUPTI_CB_DOMAIN_RESOURCE,
					     POPMON_CUPTI_CBID_RESOURCE_CONTEXT_CREATED)) != 0 ||
		    (rc = b->enable_callback(1, subscriber, POPMON_CUPTI_CB_DOMAIN_RESOURCE,
					     POPMON_CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)) != 0)
			goto fail;
	} else if ((rc = b->enable_domain(1, subscriber, POPMON_CUPTI_CB_DOMAIN_RESOURCE)) != 0) {
		goto fail;
	}
	/* The buffers: preallocated before the program's first launch, handed
	 * over zeroed (so CUPTI does not clear them on the program's thread). */
	pool_policy = v >= 27 ? POPMON_GPU_POOL_ALLOCATE : POPMON_GPU_POOL_NEVER_NONE;
	popmon_gpu_pool_start(process_buffer, &popmon_gpu_lock);
	if (b->set_attribute) {
		uint8_t zeroed = 1;
		size_t len = sizeof zeroed;
		b->set_attribute(POPMON_CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &zeroed);
	}
	*call = "cuptiActivityRegisterCallbacks";
	if ((rc = b->register_callbacks(buffer_requested, buffer_completed)) != 0)
		goto fail;
	*call = "cuptiActivityEnable";
	if ((rc = b->activity_enable(POPMON_CUPTI_ACTIVITY_CONCURRENT_KERNEL)) != 0 ||
	    (rc = b->activity_enable(POPMON_CUPTI_ACTIVITY_MEMCPY)) != 0 ||
	    (rc = b->activity_enable(POPMON_CUPTI_ACTIVITY_MEMSET)) != 0)
		goto fail;
	b->activity_enable(POPMON_CUPTI_ACTIVITY_MEMCPY2); /* peer copies: optional */
	/* With a live file, CUPTI's worker delivers buffers every second, so
	 * that a killed job's partial measurement has its device time (else
	 * buffers come only when full or flushed at region boundaries). */
	if (popmon_live && b->flush_period)
		b->flush_period(1000);
	return 0;
fail:
	if (b->unsubscribe)
		b->unsubscribe(subscriber);
	subscriber = NULL;
	return rc;
}

static void fail_with(int why, int err, const char *detail)
{
	failed = 1;
	popmon_gpu_reason(reason, sizeof reason, why, err, detail);
	if (why == POPMON_GPU_WHY_OTHER_BACKEND) /* whatever the mode: device work goes uncounted */
		popmon_warn_once("gpu-both", "this process uses HIP and CUDA: its GPUs are measured through "
				 "rocprofiler-sdk only, CUDA's calls and device work are not measured");
	else if (popmon_gpu_mode() == 2)
		popmon_warn_once("gpu", "GPU measurement requested but %s", reason);
}

int InitializeInjection(void)
{
	static int once;
	popmon_wake(POPMON_WAKE_COMPUTE); /* a CUDA program named like a utility */
	if (popmon_proc.inert || __atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
		return 1;
	if (popmon_live)
		__atomic_store_n(&popmon_live->gpu_mode, (uint32_t)popmon_gpu_mode() + 1, __ATOMIC_RELEASE);
	if (popmon_gpu_mode() == 0)
		return 1; /* off: never probes */
	if (__atomic_load_n(&popmon_gpu_active, __ATOMIC_ACQUIRE)) {
		fail_with(POPMON_GPU_WHY_OTHER_BACKEND, 0, NULL);
		return 1;
	}
	const char *call = "";
	int rc;
	if (popmon_gpu_backend) {
		rc = start(popmon_gpu_backend, &call);
	} else {
		int driver = 0;
		static char cand[12][PATH_MAX];
		int n = cupti_candidates(cand, 12);
		rc = -3;
		for (int i = 0; i < n; i++) {
			if (load_cupti(cand[i]) != 0)
				continue;
			if (!driver && load_driver() != 0) {
				fail_with(POPMON_GPU_WHY_NO_DRIVER, 0, NULL);
				return 1;
			}
			driver = 1;
			popmon_gpu_backend = &real;
			rc = start(&real, &call);
			/* A CUPTI newer than the driver: try an older one. */
			if (rc != POPMON_CUPTI_ERROR_NOT_INITIALIZED || i == n - 1)
				break;
			dlclose(cupti_handle);
			cupti_handle = NULL;
			popmon_gpu_backend = NULL;
		}
		if (rc == -3) {
			/* What was tried, short enough for one warning line. */
			const char *env = getenv("POPMON_CUPTI_LIBRARY");
			fail_with(POPMON_GPU_WHY_NO_CUPTI, 0,
				  env && *env ? env : "libcupti.so, .so.13, .so.12, .so.11.8, $CUDA_HOME, /usr/local/cuda");
			return 1;
		}
	}
	if (rc == -2) {
		fail_with(POPMON_GPU_WHY_NO_CLOCK, 0, NULL);
		return 1;
	}
	if (rc != 0) {
		fail_with(POPMON_GPU_WHY_CUPTI_ERROR, rc, call);
		return 1;
	}
	if (popmon_gpu_activate(&popmon_gpu_cupti_ops) != 0) {
		/* Another backend measures this process's GPUs (a HIP program on
		 * an NVIDIA machine): CUPTI records nothing, times nothing. */
		const struct popmon_gpu_backend *b = popmon_gpu_backend;
		static const int kinds[] = {POPMON_CUPTI_ACTIVITY_CONCURRENT_KERNEL, POPMON_CUPTI_ACTIVITY_MEMCPY,
					    POPMON_CUPTI_ACTIVITY_MEMSET, POPMON_CUPTI_ACTIVITY_MEMCPY2};
		for (size_t i = 0; b->activity_disable && i < sizeof kinds / sizeof kinds[0]; i++)
			b->activity_disable(kinds[i]);
		if (b->unsubscribe)
			b->unsubscribe(subscriber);
		fail_with(POPMON_GPU_WHY_OTHER_BACKEND, 0, NULL);
	}
	return 1;
}

/* ------------------------------------------------------------------ CUDA-aware MPI */

/* The device ordinal of device memory at p, or -1: host memory (the
 * driver's CUDA_ERROR_INVALID_VALUE for memory it does not know), managed
 * or host-registered memory, or no cuPointerGetAttribute. One driver call
 * for a host buffer, two for a device one; never a callback of ours (the
 * id is not enabled, and gpu_self covers a CUPTI without per-id enabling). */
static int cupti_device_of(const void *p)
{
	const struct popmon_gpu_backend *b = popmon_gpu_backend;
	if (!b || !b->pointer_attribute)
		return -1;
	unsigned int type = 0;
	int ordinal = -1, d = -1;
	gpu_self = 1;
	if (b->pointer_attribute(&type, POPMON_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (unsigned long long)(uintptr_t)p) == 0 &&
	    type == POPMON_CU_MEMORYTYPE_DEVICE &&
	    b->pointer_attribute(&ordinal, POPMON_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				 (unsigned long long)(uintptr_t)p) == 0)
		d = ordinal;
	gpu_self = 0;
	return d;
}

/* ------------------------------------------------------------------ snapshots */

static void cupti_flush(int final)
{
	gpu_self = 1;
	/* Unforced, CUPTI keeps a buffer back while one of its records is in
	 * progress (a device-to-device copy still queued at exit, say), and
	 * with it the finished records beside it. */
	popmon_gpu_backend->flush_all(final ? POPMON_CUPTI_FLUSH_FORCED : 0);
	popmon_cupti_pm_flush();
	gpu_self = 0;
}

/* ------------------------------------------------------------------ finish */

/* The path of the object that holds this function (libpopmon). */
static int is_self(const char *path)
{
	Dl_info info;
	union {
		int (*f)(void);
		void *p;
	} u = {.f = InitializeInjection};
	if (!path || !dladdr(u.p, &info) || !info.dli_fname)
		return 0;
	char a[PATH_MAX], b[PATH_MAX];
	if (!realpath(path, a) || !realpath(info.dli_fname, b))
		return strcmp(path, info.dli_fname) == 0;
	return strcmp(a, b) == 0;
}

/* The one warning for lost records, with the number and the cause. */
static void say_lost(uint64_t gone)
{
	struct popmon_gpu_pool_stats ps;
	popmon_gpu_pool_stats(&ps);
	if (ps.refused || ps.discarded)
		popmon_warn_once("gpu-dropped", "%llu GPU activity records were lost: the activity buffers reached "
				 "their cap of %llu MiB (set POPMON_GPU_BUFFER_MB higher); device times are lower bounds",
				 (unsigned long long)gone,
				 (unsigned long long)(ps.cap * POPMON_GPU_BUFFER_SIZE >> 20));
	else
		popmon_warn_once("gpu-dropped", "CUPTI dropped %llu GPU activity records (its device buffers "
				 "overflowed); device times are lower bounds", (unsigned long long)gone);
}

/* The CUPTI part of a measured process's record (gpu.h: popmon_gpu_ops). */
static void cupti_measured(struct popmon_gpu_proc *out)
{
	size_t n = 0;
	if (popmon_gpu_backend->dropped_records &&
	    popmon_gpu_backend->dropped_records(NULL, 0, &n) == POPMON_CUPTI_SUCCESS && n)
		__atomic_fetch_add(&dropped, (uint64_t)n, __ATOMIC_RELAXED);
	pthread_mutex_lock(&popmon_gpu_lock);
	popmon_gpu_pool_drain(); /* the discard buffers' lost records too */
	out->cupti_version = cupti_version;
	out->driver_version = driver_version;
	uint64_t gone = __atomic_load_n(&dropped, __ATOMIC_RELAXED) + lost;
	out->dropped = (int64_t)gone;
	out->rejected = (int64_t)rejected;
	out->calibrated = calibrated;
	pthread_mutex_unlock(&popmon_gpu_lock);
	popmon_cupti_pm_finish(out);
	if (gone)
		say_lost(gone);
}

static int cupti_why(struct popmon_gpu_proc *out, int mode)
{
	if (failed) {
		out->status = POPMON_GPU_UNMEASURED;
		out->vendor = POPMON_GPU_VENDOR_NVIDIA;
		out->cupti_version = cupti_version;
		out->driver_version = driver_version;
		snprintf(out->reason, sizeof out->reason, "%s", reason);
		return 1;
	}
	if (mode == 0) {
		out->status = POPMON_GPU_UNUSED;
		popmon_gpu_reason(out->reason, sizeof out->reason, POPMON_GPU_WHY_OFF, 0, NULL);
		return 1;
	}
	/* Never injected: CUDA used (its driver is loaded) or not. */
	void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (!h) {
		out->status = POPMON_GPU_UNUSED;
		popmon_gpu_reason(out->reason, sizeof out->reason, POPMON_GPU_WHY_NO_CUDA, 0, NULL);
	} else {
		dlclose(h);
		out->status = POPMON_GPU_UNMEASURED;
		out->vendor = POPMON_GPU_VENDOR_NVIDIA;
		if (inj && *inj && !is_self(inj))
			popmon_gpu_reason(out->reason, sizeof out->reason, POPMON_GPU_WHY_TAKEN, 0, inj);
		else
			popmon_gpu_reason(out->reason, sizeof out->reason, POPMON_GPU_WHY_NOT_INJECTED, 0, NULL);
	}
	if (mode == 2)
		popmon_warn_once("gpu", "GPU measurement requested but %s", out->reason);
	return 1;
}

/* ------------------------------------------------------------------ doctor */

static void cupti_probe(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("libcuda=\n");
	} else {
		Dl_info info;
		void *f = dlsym(h, "cuDriverGetVersion");
		printf("libcuda=%s\n", f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "libcuda.so.1");
		int (*ver)(int *);
		memcpy(&ver, &f, sizeof f);
		int v = 0;
		if (ver && ver(&v) == 0)
			printf("driver_version=%d\n", v);
	}
	static char cand[12][PATH_MAX];
	int n = cupti_candidates(cand, 12);
	int found = 0;
	for (int i = 0; i < n && !found; i++) {
		if (load_cupti(cand[i]) != 0)
			continue;
		found = 1;
		Dl_info info;
		void *f;
		memcpy(&f, &real.get_version, sizeof f);
		printf("cupti=%s\n", dladdr(f, &info) && info.dli_fname ? info.dli_fname : cand[i]);
		uint32_t v = 0;
		if (real.get_version(&v) == 0)
			printf("cupti_version=%u\n", v);
		/* Device counters: CUPTI's PM sampling (12.6+), and whether the
		 * driver restricts profiling to administrators. */
		printf("pm_sampling=%d\n", real.pm.enable && real.pm.decode && real.pm.host_evaluate ? 1 : 0);
		FILE *pf = fopen("/proc/driver/nvidia/params", "r");
		char line[256];
		while (pf && fgets(line, sizeof line, pf))
			if (strncmp(line, "RmProfilingAdminOnly:", 21) == 0)
				printf("profiling_admin_only=%d\n", atoi(line + 21));
		if (pf)
			fclose(pf);
		printf("euid=%d\n", (int)geteuid());
	}
	if (!found) {
		printf("cupti=\n");
		for (int i = 0; i < n; i++)
			printf("cupti_tried=%s\n", cand[i]);
	}
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	printf("injection=%s\n", inj ? inj : "");
	fflush(stdout);
}
