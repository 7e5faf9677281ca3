/* fakecupti.c: a fake libcupti.so for popmon's GPU tests (see README.md).
 *
 * Implements the CUPTI subset libpopmon uses (shim/gpu_abi.h declares it on
 * popmon's side) with CUPTI's names, signatures, enum values and record
 * prefixes, written from the public CUPTI documentation:
 *   - one subscriber; callbacks per domain or per callback id; RUNTIME and
 *     DRIVER callbacks get a CUpti_CallbackData-shaped struct (callbackSite
 *     @0, functionName @8, context @40, correlationId @64), RESOURCE ones a
 *     CUpti_ResourceData-shaped one (context @0);
 *   - activity kinds MEMCPY 1, MEMSET 2, KERNEL 3, CONCURRENT_KERNEL 10,
 *     MEMCPY2 22 (peer copies): a device activity becomes a record of the
 *     enabled kind when the driver reports it, is kept pending until it has
 *     ended, and is written into a buffer obtained from the tool's
 *     bufferRequested callback by cuptiActivityFlushAll, which hands every
 *     filled buffer to bufferCompleted synchronously on the calling thread
 *     (forced flush, flag 1, also delivers activities still running); when
 *     1024 records are pending, the driver's next report delivers those
 *     that have ended the same way (CUPTI hands full buffers over by itself);
 *     cuptiActivityFlushPeriod(ms) starts a thread that flushes every ms, as
 *     CUPTI's worker thread does;
 *   - records have fixed sizes (kernel 192, memcpy 80, memset 72, peer copy
 *     96 bytes) with the documented fields at the documented offsets and
 *     zeros elsewhere; cuptiActivityGetNextRecord walks them and returns
 *     CUPTI_ERROR_MAX_LIMIT_REACHED at the end;
 *   - timestamps come from the callback registered with
 *     cuptiActivityRegisterTimestampCallback, else CLOCK_REALTIME (CUPTI's
 *     default on Linux);
 *   - records lost for want of a buffer (bufferRequested gave none, or one
 *     too small) or of pending space (8192 activities) are counted and
 *     reported, then reset, by cuptiActivityGetNumDroppedRecords.
 *
 * Environment (all optional):
 *   FAKECUPTI_VERSION           cuptiGetVersion's answer (default 130001)
 *   FAKECUPTI_SUBSCRIBE_RESULT  cuptiSubscribe fails with this CUptiResult
 *                               (e.g. 39, multiple subscribers; 15, not
 *                               initialised; 35, insufficient privileges)
 *   FAKECUPTI_NO_TIMESTAMP_CALLBACK=1  the timestamp callback is refused
 *                               (27, not supported): records stay REALTIME
 *
 * PM sampling (device counters, CUPTI >= 12.6; the second half of this
 * file): the profiler host API and cuptiPmSampling*, with CUPTI's parameter
 * structs (size first, a reserved pointer second). Samples cover the
 * configured period of the device's time; each one's values follow from
 * the kernels the process ran in it (struct fakecuda_counters, in
 * proportion of each kernel's time inside the sample) and from the
 * simulated device (fakecuda_sms, fakecuda_sm_mhz); their timestamps are
 * CLOCK_REALTIME ns, as the GPU's global timer is. Environment:
 *   FAKECUPTI_PM_METRICS   the metrics the chip knows (comma-separated;
 *                          default: sm__inst_executed.sum,
 *                          sm__cycles_active.sum, sm__cycles_elapsed.sum,
 *                          sm__warps_active.sum, dram__bytes_read.sum,
 *                          dram__bytes_write.sum, and the per-SM averages
 *                          sm__inst_executed_realtime.avg,
 *                          sm__cycles_active.avg, sm__cycles_elapsed.avg,
 *                          gpc__cycles_elapsed.max,
 *                          sm__warps_active_realtime.avg); "none": no PM sampling
 *                          entry points work (CUPTI older than 12.6)
 *   FAKECUPTI_PM_ENABLE_RESULT  cuptiPmSamplingEnable fails with this code
 *                          (35 insufficient privileges, 43 MIG, ...)
 *   FAKECUPTI_PM_MAX_ONE_PASS   metrics one pass reads (default 6)
 *   FAKECUPTI_PM_MULTIPASS the metrics (comma-separated) that need 3 passes
 *                          wherever they are (as GH100 counts some SM sums:
 *                          their .avg forms, per SM, take one)
 *   FAKECUPTI_PM_PAIRS     pairs of metrics (A:B, comma-separated) that one
 *                          pass reads alone but not together: 2 passes
 *   FAKECUPTI_PM_SYSCLK_ONLY=1  the time trigger is refused (Turing, GA100)
 *   FAKECUPTI_PM_CLOCK_SKEW_S   seconds added to every sample's timestamps
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda.h"

/* CUptiResult values (CUPTI documentation). */
enum {
	CUPTI_SUCCESS = 0,
	CUPTI_ERROR_INVALID_PARAMETER = 1,
	CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
	CUPTI_ERROR_INVALID_KIND = 21,
	CUPTI_ERROR_NOT_SUPPORTED = 27,
	CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39
};

/* Activity kinds and record sizes. */
enum { K_MEMCPY = 1, K_MEMSET = 2, K_KERNEL = 3, K_CONCURRENT_KERNEL = 10, K_MEMCPY2 = 22 };
enum { SZ_KERNEL = 192, SZ_MEMCPY = 80, SZ_MEMSET = 72, SZ_MEMCPY2 = 96, SZ_MAX = 192 };

/* The callback data, laid out as CUpti_CallbackData is documented. */
struct callback_data {
	uint32_t callback_site; /* @0: 0 enter, 1 exit */
	const char *function_name; /* @8 */
	const void *function_params; /* @16 */
	void *function_return_value; /* @24 */
	const char *symbol_name; /* @32 */
	void *context; /* @40 */
	uint32_t context_uid; /* @48 */
	uint64_t *correlation_data; /* @56 */
	uint32_t correlation_id; /* @64 */
};
_Static_assert(offsetof(struct callback_data, function_name) == 8, "functionName @8");
_Static_assert(offsetof(struct callback_data, context) == 40, "context @40");
_Static_assert(offsetof(struct callback_data, correlation_id) == 64, "correlationId @64");

/* CUpti_ResourceData: context @0, then a resource handle and descriptor. */
struct resource_data {
	void *context;
	void *resource_handle;
	void *resource_descriptor;
};

typedef void (*callback_fn)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
typedef void (*requested_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*completed_fn)(void *context, uint32_t stream, uint8_t *buffer, size_t size,
			     size_t valid_size);
typedef uint64_t (*timestamp_fn)(void);

#define MAX_CBID 1024
#define MAX_KIND 64
#define MAX_SLOTS 256 /* threads with a buffer of their own; more share the global one */
#define MAX_FULL 4096 /* full buffers waiting for their records to end */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(callback_fn) subscriber;
static void *subscriber_data;
static _Atomic unsigned char enabled_cb[4][MAX_CBID];
static _Atomic unsigned char enabled_kind[MAX_KIND];
static _Atomic(timestamp_fn) timestamp;
static _Atomic(requested_fn) requested;
static _Atomic(completed_fn) completed;
static _Atomic int zeroed_attr; /* CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER */
static _Atomic size_t dropped;

/* A buffer being filled: one per thread (per-thread buffers, CUDA >= 13.0)
 * or one for the process. The owner writes under the slot's lock; a flush
 * takes the buffer under it. */
struct slot {
	pthread_mutex_t mu;
	uint8_t *buf;
	size_t size, used, max_records, count;
	uint64_t max_end; /* the latest end of its records */
};
static struct slot slots[MAX_SLOTS + 1]; /* the last: the process's */
static _Atomic int nslots;
static __thread int my_slot = -1;
static int per_thread = -1; /* decided at the first record */

/* Full buffers, delivered by the worker once their records have ended. */
static struct full {
	uint8_t *buf;
	size_t size, used;
	uint64_t max_end;
} full[MAX_FULL];
static size_t nfull;
static pthread_cond_t full_cv = PTHREAD_COND_INITIALIZER;

static const char *env(const char *name)
{
	const char *s = getenv(name);
	return s && *s ? s : NULL;
}

static uint64_t now(void)
{
	timestamp_fn f = atomic_load(&timestamp);
	if (f)
		return f();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *s = env("FAKECUPTI_VERSION");
	*version = s ? (uint32_t)strtoul(s, NULL, 10) : 130001;
	return CUPTI_SUCCESS;
}

int cuptiGetTimestamp(uint64_t *ts)
{
	if (!ts)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*ts = now();
	return CUPTI_SUCCESS;
}

int cuptiSubscribe(void **handle, callback_fn cb, void *userdata)
{
	if (!handle)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *fail = env("FAKECUPTI_SUBSCRIBE_RESULT");
	if (fail && atoi(fail) != 0)
		return atoi(fail);
	if (!cb)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&mu);
	int taken = atomic_load(&subscriber) != NULL;
	if (!taken) {
		subscriber_data = userdata;
		atomic_store(&subscriber, cb);
	}
	pthread_mutex_unlock(&mu);
	if (taken)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	*handle = (void *)&subscriber;
	return CUPTI_SUCCESS;
}

int cuptiUnsubscribe(void *handle)
{
	if (handle != (void *)&subscriber)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&subscriber, NULL);
	for (int d = 0; d < 4; d++)
		for (int i = 0; i < MAX_CBID; i++)
			atomic_store(&enabled_cb[d][i], 0);
	return CUPTI_SUCCESS;
}

int cuptiEnableDomain(uint32_t enable, void *handle, int domain)
{
	if (handle != (void *)&subscriber || domain < 1 || domain > 3)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (int i = 0; i < MAX_CBID; i++)
		atomic_store(&enabled_cb[domain][i], enable ? 1 : 0);
	return CUPTI_SUCCESS;
}

int cuptiEnableCallback(uint32_t enable, void *handle, int domain, uint32_t cbid)
{
	if (handle != (void *)&subscriber || domain < 1 || domain > 3 || cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&enabled_cb[domain][cbid], enable ? 1 : 0);
	return CUPTI_SUCCESS;
}

int cuptiActivityRegisterCallbacks(requested_fn req, completed_fn comp)
{
	if (!req || !comp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&requested, req);
	atomic_store(&completed, comp);
	return CUPTI_SUCCESS;
}

int cuptiActivityRegisterTimestampCallback(timestamp_fn f)
{
	if (env("FAKECUPTI_NO_TIMESTAMP_CALLBACK"))
		return CUPTI_ERROR_NOT_SUPPORTED;
	if (!f)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&timestamp, f);
	return CUPTI_SUCCESS;
}

int cuptiActivityEnable(int kind)
{
	if (kind <= 0 || kind >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	atomic_store(&enabled_kind[kind], 1);
	return CUPTI_SUCCESS;
}

int cuptiActivityDisable(int kind)
{
	if (kind <= 0 || kind >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	atomic_store(&enabled_kind[kind], 0);
	return CUPTI_SUCCESS;
}

static size_t record_size(uint32_t kind)
{
	switch (kind) {
	case K_KERNEL:
	case K_CONCURRENT_KERNEL:
		return SZ_KERNEL;
	case K_MEMCPY:
		return SZ_MEMCPY;
	case K_MEMSET:
		return SZ_MEMSET;
	case K_MEMCPY2:
		return SZ_MEMCPY2;
	default:
		return 0;
	}
}

#define PUT(rec, off, type, val)                      \
	do {                                          \
		type v_ = (type)(val);                \
		memcpy((rec) + (off), &v_, sizeof v_); \
	} while (0)

/* Writes activity a as a record of kind at the documented offsets (the
 * buffer is zero); returns its size. */
static size_t encode(uint8_t *r, const struct fakecuda_activity *a, uint32_t kind)
{
	size_t n = record_size(kind);
	PUT(r, 0, uint32_t, kind);
	PUT(r, 16, uint64_t, a->start);
	PUT(r, 24, uint64_t, a->end);
	switch (kind) {
	case K_KERNEL:
	case K_CONCURRENT_KERNEL:
		PUT(r, 40, uint32_t, a->device);
		PUT(r, 44, uint32_t, a->context_id);
		PUT(r, 48, uint32_t, a->stream);
		PUT(r, 92, uint32_t, a->correlation);
		PUT(r, 104, const char *, a->name);
		break;
	case K_MEMCPY:
	case K_MEMCPY2:
	case K_MEMSET:
		if (kind != K_MEMSET)
			PUT(r, 4, uint8_t, a->copy_kind);
		PUT(r, 8, uint64_t, a->bytes);
		PUT(r, 32, uint32_t, a->device);
		PUT(r, 36, uint32_t, a->context_id);
		PUT(r, 40, uint32_t, a->stream);
		PUT(r, 44, uint32_t, kind == K_MEMCPY2 ? a->src_device : a->correlation);
		break;
	}
	return n;
}

int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid_size, void **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t off = 0;
	if (*record) {
		uint8_t *cur = *record;
		uint32_t kind;
		if (cur < buffer || cur + 4 > buffer + valid_size)
			return CUPTI_ERROR_INVALID_PARAMETER;
		memcpy(&kind, cur, 4);
		if (!record_size(kind))
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)(cur - buffer) + record_size(kind);
	}
	uint32_t kind;
	if (off + 4 > valid_size)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	memcpy(&kind, buffer + off, 4);
	size_t n = record_size(kind);
	if (!n || off + n > valid_size)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = buffer + off;
	return CUPTI_SUCCESS;
}

int cuptiActivityGetNumDroppedRecords(void *context, uint32_t stream, size_t *n)
{
	(void)context;
	(void)stream;
	if (!n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*n = atomic_exchange(&dropped, 0); /* "reset to zero when this function is called" */
	return CUPTI_SUCCESS;
}

static void deliver(uint8_t *buf, size_t size, size_t used)
{
	completed_fn comp = atomic_load(&completed);
	if (comp)
		comp(NULL, 0, buf, size, used);
}

/* Delivers the full buffers whose records have ended by t (all if forced);
 * returns the earliest end still waiting (0: none). */
static uint64_t deliver_full(uint64_t t, int forced)
{
	struct full ready[64];
	uint64_t next = 0;
	for (;;) {
		size_t n = 0, keep = 0;
		pthread_mutex_lock(&mu);
		for (size_t i = 0; i < nfull; i++) {
			if (n < 64 && (forced || full[i].max_end <= t))
				ready[n++] = full[i];
			else
				full[keep++] = full[i];
		}
		nfull = keep;
		next = 0;
		for (size_t i = 0; i < nfull; i++)
			if (!next || full[i].max_end < next)
				next = full[i].max_end;
		pthread_mutex_unlock(&mu);
		for (size_t i = 0; i < n; i++)
			deliver(ready[i].buf, ready[i].size, ready[i].used);
		if (n < 64)
			return next;
	}
}

/* Delivers the buffers whose records have all ended by now (flag 1, forced:
 * every buffer, ended or not), full ones and those being filled, on the
 * calling thread. */
int cuptiActivityFlushAll(uint32_t flag)
{
	uint64_t t = now();
	int forced = (flag & 1) != 0;
	deliver_full(t, forced);
	int n = atomic_load(&nslots);
	for (int i = 0; i <= MAX_SLOTS; i++) {
		if (i >= n && i < MAX_SLOTS)
			continue;
		struct slot *sl = &slots[i];
		pthread_mutex_lock(&sl->mu);
		uint8_t *buf = NULL;
		size_t size = 0, used = 0;
		if (sl->buf && sl->used && (forced || sl->max_end <= t)) {
			buf = sl->buf;
			size = sl->size;
			used = sl->used;
			sl->buf = NULL;
			sl->used = sl->count = 0;
			sl->max_end = 0;
		}
		pthread_mutex_unlock(&sl->mu);
		if (buf)
			deliver(buf, size, used);
	}
	return CUPTI_SUCCESS;
}

/* CUPTI's worker thread: delivers full buffers once their records have
 * ended, and every period_ms (cuptiActivityFlushPeriod) what has ended. */
static _Atomic uint32_t period_ms;
static _Atomic int worker_started;

static void *worker(void *arg)
{
	(void)arg;
	uint64_t last_period = now();
	for (;;) {
		uint64_t t = now();
		uint64_t next = deliver_full(t, 0);
		uint32_t ms = atomic_load(&period_ms);
		if (ms && t - last_period >= (uint64_t)ms * 1000000ull) {
			cuptiActivityFlushAll(0);
			last_period = t;
		}
		/* Sleep until the next full buffer's records end, the period,
		 * or a new full buffer (at most 100 ms). */
		uint64_t wait = 100000000ull;
		if (next && next > t && next - t < wait)
			wait = next - t;
		else if (next && next <= t)
			wait = 0;
		if (ms && (uint64_t)ms * 1000000ull < wait)
			wait = (uint64_t)ms * 1000000ull;
		if (!wait)
			continue;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + wait;
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		pthread_mutex_lock(&mu);
		if (nfull == 0 || next)
			pthread_cond_timedwait(&full_cv, &mu, &ts);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void start_worker(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&worker_started, &expected, 1))
		return;
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, worker, NULL) != 0)
		atomic_store(&worker_started, 0);
	pthread_attr_destroy(&attr);
}

int cuptiActivityFlushPeriod(uint32_t ms)
{
	atomic_store(&period_ms, ms);
	if (ms)
		start_worker();
	return CUPTI_SUCCESS;
}

/* CUpti_ActivityAttribute: 5 is CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER
 * (a uint8_t); the device-buffer attributes (0-4, 6-8) are accepted and
 * ignored (the fake has no device buffers). */
int cuptiActivitySetAttribute(int attr, size_t *size, void *value)
{
	if (!size || !value || attr < 0 || attr > 8)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (attr == 5) {
		if (*size < 1)
			return CUPTI_ERROR_INVALID_PARAMETER;
		atomic_store(&zeroed_attr, *(uint8_t *)value != 0);
	}
	return CUPTI_SUCCESS;
}

int cuptiGetResultString(int result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	switch (result) {
	case CUPTI_SUCCESS:
		*str = "CUPTI_SUCCESS";
		break;
	case CUPTI_ERROR_INVALID_PARAMETER:
		*str = "CUPTI_ERROR_INVALID_PARAMETER";
		break;
	case 15:
		*str = "CUPTI_ERROR_NOT_INITIALIZED";
		break;
	case CUPTI_ERROR_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_NOT_SUPPORTED";
		break;
	case 35:
		*str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
		break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	default:
		*str = "CUPTI_ERROR_UNKNOWN";
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	return CUPTI_SUCCESS;
}

int cuptiFinalize(void)
{
	atomic_store(&period_ms, 0);
	atomic_store(&subscriber, NULL);
	for (int k = 0; k < MAX_KIND; k++)
		atomic_store(&enabled_kind[k], 0);
	return CUPTI_SUCCESS;
}

/* ---- the driver's side (struct fakecuda_tool) ------------------------- */

static void on_api(uint32_t domain, uint32_t cbid, const char *name, uint32_t site,
		   uint32_t correlation, void *context)
{
	callback_fn cb = atomic_load(&subscriber);
	if (!cb || domain > 3 || cbid >= MAX_CBID || !atomic_load(&enabled_cb[domain][cbid]))
		return;
	struct callback_data d = { .callback_site = site, .function_name = name,
				   .context = context, .correlation_id = correlation };
	cb(subscriber_data, (int)domain, cbid, &d);
}

static void on_resource(uint32_t cbid, void *context)
{
	callback_fn cb = atomic_load(&subscriber);
	if (!cb || cbid >= MAX_CBID || !atomic_load(&enabled_cb[3][cbid]))
		return;
	struct resource_data d = { .context = context };
	cb(subscriber_data, 3, cbid, &d);
}

/* The calling thread's slot (per-thread buffers: CUDA >= 13.0 unless
 * FAKECUPTI_PER_THREAD says otherwise), or the process's. */
static struct slot *my_buffer(void)
{
	if (per_thread < 0) {
		const char *e = env("FAKECUPTI_PER_THREAD");
		uint32_t v = 0;
		cuptiGetVersion(&v);
		per_thread = e ? atoi(e) != 0 : v >= 130000;
	}
	if (!per_thread)
		return &slots[MAX_SLOTS];
	if (my_slot < 0) {
		int i = atomic_fetch_add(&nslots, 1);
		my_slot = i < MAX_SLOTS ? i : MAX_SLOTS;
	}
	return &slots[my_slot];
}

/* Under the slot's lock: a buffer from the tool's bufferRequested (on the
 * calling thread, as CUPTI asks), checked and zeroed as CUPTI does. */
static int take_buffer(struct slot *sl)
{
	requested_fn req = atomic_load(&requested);
	if (!req || !atomic_load(&completed))
		return 0;
	uint8_t *buf = NULL;
	size_t size = 0, max_records = 0;
	req(&buf, &size, &max_records);
	if (!buf) {
		uint32_t v = 0;
		cuptiGetVersion(&v);
		if (v < 27) {
			/* CUPTI before 12.9 dereferences the missing buffer. */
			fprintf(stderr, "fakecupti: bufferRequested gave no buffer: CUPTI %u crashes here\n", v);
			abort();
		}
		return 0;
	}
	if (size < SZ_MAX)
		return 0;
	if (atomic_load(&zeroed_attr)) {
		/* The tool promised zeroed buffers: check it keeps its word. */
		for (size_t i = 0; i < size; i += 64) {
			static const uint8_t zero[64];
			size_t n = size - i < 64 ? size - i : 64;
			if (memcmp(buf + i, zero, n) != 0) {
				fprintf(stderr, "fakecupti: a buffer handed over as zeroed is not (byte %zu)\n", i);
				abort();
			}
		}
	} else {
		memset(buf, 0, size); /* on the application's thread, as CUPTI does */
	}
	sl->buf = buf;
	sl->size = size;
	sl->max_records = max_records;
	sl->used = sl->count = 0;
	sl->max_end = 0;
	return 1;
}

static void pm_log_kernel(const struct fakecuda_activity *a);

static void on_activity(const struct fakecuda_activity *a)
{
	uint32_t kind = 0;
	switch (a->what) {
	case FAKECUDA_ACT_KERNEL:
		kind = atomic_load(&enabled_kind[K_CONCURRENT_KERNEL]) ? K_CONCURRENT_KERNEL
		       : atomic_load(&enabled_kind[K_KERNEL])         ? K_KERNEL
								      : 0;
		break;
	case FAKECUDA_ACT_MEMCPY:
		if (a->copy_kind == FAKECUDA_PTOP)
			kind = atomic_load(&enabled_kind[K_MEMCPY2]) ? K_MEMCPY2 : 0;
		else
			kind = atomic_load(&enabled_kind[K_MEMCPY]) ? K_MEMCPY : 0;
		break;
	case FAKECUDA_ACT_MEMSET:
		kind = atomic_load(&enabled_kind[K_MEMSET]) ? K_MEMSET : 0;
		break;
	}
	if (a->what == FAKECUDA_ACT_KERNEL)
		pm_log_kernel(a);
	if (!kind)
		return;
	struct slot *sl = my_buffer();
	pthread_mutex_lock(&sl->mu);
	if (!sl->buf && !take_buffer(sl)) {
		pthread_mutex_unlock(&sl->mu);
		atomic_fetch_add(&dropped, 1);
		return;
	}
	sl->used += encode(sl->buf + sl->used, a, kind);
	sl->count++;
	if (a->end > sl->max_end)
		sl->max_end = a->end;
	if (sl->used + SZ_MAX > sl->size || (sl->max_records && sl->count >= sl->max_records)) {
		/* Full: CUPTI's worker hands it over once its records have ended. */
		pthread_mutex_lock(&mu);
		if (nfull < MAX_FULL) {
			full[nfull++] = (struct full){ sl->buf, sl->size, sl->used, sl->max_end };
			sl->buf = NULL;
			sl->used = sl->count = 0;
			sl->max_end = 0;
			pthread_cond_signal(&full_cv);
		}
		pthread_mutex_unlock(&mu);
		start_worker();
	}
	pthread_mutex_unlock(&sl->mu);
}

static const struct fakecuda_tool tool = { now, on_api, on_resource, on_activity };

__attribute__((constructor)) static void attach(void)
{
	for (int i = 0; i <= MAX_SLOTS; i++)
		pthread_mutex_init(&slots[i].mu, NULL);
	fakecuda_attach_tool(&tool);
}

__attribute__((destructor)) static void detach(void)
{
	fakecuda_attach_tool(NULL);
}

/* ====================================================================== PM sampling */

enum { CUPTI_ERROR_INVALID_OPERATION = 7, CUPTI_ERROR_INVALID_METRIC_NAME = 17 };
enum { PM_MAX_METRICS = 16, PM_LOG = 1 << 16, PM_DEVICES = 16 };

/* The metrics the fake chip knows, each with what it counts. */
enum { Q_INST, Q_ACTIVE, Q_ELAPSED, Q_WARPS, Q_DRAM_RD, Q_DRAM_WR, Q_N };
/* per_sm: an average over the SMs (or a maximum of equal parts): the sum
 * divided by their number. */
static const struct {
	const char *name;
	int q, per_sm;
} pm_known[] = {
	{"sm__inst_executed.sum", Q_INST, 0},       {"sm__inst_executed_realtime.sum", Q_INST, 0},
	{"sm__cycles_active.sum", Q_ACTIVE, 0},     {"sm__cycles_elapsed.sum", Q_ELAPSED, 0},
	{"sm__warps_active.sum", Q_WARPS, 0},       {"sm__warps_active_realtime.sum", Q_WARPS, 0},
	{"dram__bytes_read.sum", Q_DRAM_RD, 0},     {"dram__bytes_write.sum", Q_DRAM_WR, 0},
	{"sm__inst_executed_realtime.avg", Q_INST, 1}, {"sm__cycles_active.avg", Q_ACTIVE, 1},
	{"sm__cycles_elapsed.avg", Q_ELAPSED, 1},   {"gpc__cycles_elapsed.max", Q_ELAPSED, 1},
	{"sm__warps_active_realtime.avg", Q_WARPS, 1},
};
static const char *pm_default = "sm__inst_executed.sum,sm__cycles_active.sum,sm__cycles_elapsed.sum,"
				"sm__warps_active.sum,dram__bytes_read.sum,dram__bytes_write.sum,"
				"sm__inst_executed_realtime.avg,sm__cycles_active.avg,sm__cycles_elapsed.avg,"
				"gpc__cycles_elapsed.max,sm__warps_active_realtime.avg";

/* 1 when name is in the comma-separated list (NULL: empty). */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (l == n && strncmp(p, name, n) == 0)
			return 1;
		p += l + (c ? 1 : 0);
	}
	return 0;
}

/* name's entry in pm_known, or -1. */
static int pm_entry(const char *name)
{
	for (size_t i = 0; i < sizeof pm_known / sizeof pm_known[0]; i++)
		if (strcmp(pm_known[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* What name counts, -1 when the chip (FAKECUPTI_PM_METRICS) knows it not. */
static int pm_quantity(const char *name)
{
	const char *list = env("FAKECUPTI_PM_METRICS");
	int i = pm_entry(name);
	return in_list(list ? list : pm_default, name) && i >= 0 ? pm_known[i].q : -1;
}

/* 1 when name is an average over the SMs. */
static int pm_per_sm(const char *name)
{
	int i = pm_entry(name);
	return i >= 0 && pm_known[i].per_sm;
}

/* 1 when names[0, n) hold both metrics of a pair of FAKECUPTI_PM_PAIRS. */
static int pm_pair_in(char names[][80], int n)
{
	const char *pairs = env("FAKECUPTI_PM_PAIRS");
	for (int i = 0; pairs && i < n; i++)
		for (int j = 0; j < n; j++) {
			char pair[170];
			snprintf(pair, sizeof pair, "%s:%s", names[i], names[j]);
			if (in_list(pairs, pair))
				return 1;
		}
	return 0;
}

/* The passes n metrics need: 3 with one of FAKECUPTI_PM_MULTIPASS, 2 with
 * a pair of FAKECUPTI_PM_PAIRS, else 1 up to FAKECUPTI_PM_MAX_ONE_PASS of
 * them, 2 beyond. */
static size_t pm_passes(char names[][80], int n)
{
	const char *multi = env("FAKECUPTI_PM_MULTIPASS");
	for (int i = 0; i < n; i++)
		if (in_list(multi, names[i]))
			return 3;
	if (pm_pair_in(names, n))
		return 2;
	const char *one = env("FAKECUPTI_PM_MAX_ONE_PASS");
	return n <= (one ? atoi(one) : 6) ? 1 : 2;
}

static int pm_absent(void)
{
	const char *m = env("FAKECUPTI_PM_METRICS");
	return m && strcmp(m, "none") == 0;
}

/* The kernels the process ran, per device, for the samples. */
struct pm_kernel {
	uint64_t s, e;
	struct fakecuda_counters c;
};
static pthread_mutex_t pm_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int pm_on;
static struct pm_kernel *pm_log[PM_DEVICES];
static uint64_t pm_head[PM_DEVICES], pm_tail[PM_DEVICES];

static void pm_log_kernel(const struct fakecuda_activity *a)
{
	if (!atomic_load(&pm_on) || a->device >= PM_DEVICES)
		return;
	pthread_mutex_lock(&pm_mu);
	uint32_t d = a->device;
	if (pm_log[d]) {
		if (pm_tail[d] - pm_head[d] == PM_LOG)
			pm_head[d]++; /* the oldest is long sampled */
		struct pm_kernel *k = &pm_log[d][pm_tail[d]++ % PM_LOG];
		k->s = a->start;
		k->e = a->end;
		k->c = a->counters;
	}
	pthread_mutex_unlock(&pm_mu);
}

/* Counter increments of [a, b) on device d (pm_mu held). */
static void pm_values(uint32_t d, uint64_t a, uint64_t b, double v[Q_N])
{
	double ghz = fakecuda_sm_mhz() / 1000.0, sms = fakecuda_sms();
	memset(v, 0, sizeof(double) * Q_N);
	v[Q_ELAPSED] = (double)(b - a) * ghz * sms;
	for (uint64_t i = pm_head[d]; i < pm_tail[d]; i++) {
		const struct pm_kernel *k = &pm_log[d][i % PM_LOG];
		uint64_t s = k->s > a ? k->s : a, e = k->e < b ? k->e : b;
		if (e <= s || k->e <= k->s)
			continue;
		double o = (double)(e - s), frac = o / (double)(k->e - k->s);
		double active = o * ghz * sms * k->c.sm_fraction;
		v[Q_INST] += k->c.instructions * frac;
		v[Q_ACTIVE] += active;
		v[Q_WARPS] += active * k->c.occupancy * FAKECUDA_MAX_WARPS;
		v[Q_DRAM_RD] += k->c.dram_read * frac;
		v[Q_DRAM_WR] += k->c.dram_write * frac;
	}
	if (v[Q_ACTIVE] > v[Q_ELAPSED]) { /* concurrent kernels share the SMs */
		double f = v[Q_ELAPSED] / v[Q_ACTIVE];
		v[Q_ACTIVE] *= f;
		v[Q_WARPS] *= f;
	}
	/* Kernels that ended before a can never overlap a later sample. */
	while (pm_head[d] < pm_tail[d] && pm_log[d][pm_head[d] % PM_LOG].e <= a &&
	       pm_log[d][pm_head[d] % PM_LOG].s <= a)
		pm_head[d]++;
}

/* Parameter structs, laid out as cupti_profiler_host.h and
 * cupti_pmsampling.h document them. */
struct p_plain { size_t size; void *priv; };
struct p_chip { size_t size; void *priv; size_t device; const char *chip; };
struct p_avail { size_t size; void *priv; size_t device; size_t image_size; uint8_t *image; };
struct p_hinit { size_t size; void *priv; int type; const char *chip; const uint8_t *avail; void *host; };
struct p_hobj { size_t size; void *priv; void *host; };
struct p_hadd { size_t size; void *priv; void *host; const char **names; size_t n; };
struct p_himg { size_t size; void *priv; void *host; size_t image_size; uint8_t *image; };
struct p_hpass { size_t size; void *priv; size_t image_size; uint8_t *image; size_t passes; };
struct p_heval { size_t size; void *priv; void *host; const uint8_t *data; size_t data_size; size_t index;
		 const char **names; size_t n; double *values; };
struct p_enable { size_t size; void *priv; size_t device; void *obj; };
struct p_obj { size_t size; void *priv; void *obj; };
struct p_config { size_t size; void *priv; void *obj; size_t config_size; const uint8_t *config;
		  size_t hw_size; uint64_t interval; int trigger; };
struct p_decode { size_t size; void *priv; void *obj; uint8_t *data; size_t data_size; int stop; uint8_t overflow; };
struct p_dsize { size_t size; void *priv; void *obj; const char **names; size_t n; uint32_t max_samples;
		 size_t data_size; };
struct p_dinit { size_t size; void *priv; void *obj; size_t data_size; uint8_t *data; };
struct p_dinfo { size_t size; void *priv; const uint8_t *data; size_t data_size; size_t total, populated, completed; };
struct p_sinfo { size_t size; void *priv; void *obj; const uint8_t *data; size_t data_size; size_t index;
		 uint64_t start, end; };

#define NEED(p, type, last) \
	((p) && (p)->size >= offsetof(struct type, last) + sizeof((p)->last) && !(p)->priv)

struct host {
	int n;
	const char *names[PM_MAX_METRICS];
};
struct sampler {
	uint32_t device;
	int configured, started;
	uint64_t period, next, skew;
	int n;
	int q[PM_MAX_METRICS], per_sm[PM_MAX_METRICS];
	char names[PM_MAX_METRICS][80];
};
static struct sampler *samplers[PM_DEVICES];

/* The counter data image: a header, then samples of (start, end,
 * values[n]) in CLOCK_REALTIME ns. */
struct image_head {
	uint64_t magic, max, n, count;
};
#define IMAGE_MAGIC 0x46414b45504d5331ull /* "FAKEPMS1" */

static size_t image_bytes(uint64_t max, uint64_t n)
{
	return sizeof(struct image_head) + (size_t)max * (16 + 8 * (size_t)n);
}

static uint64_t *image_sample(uint8_t *data, const struct image_head *h, uint64_t i)
{
	return (uint64_t *)(data + sizeof *h + (size_t)i * (16 + 8 * (size_t)h->n));
}

static int64_t tool_to_realtime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) - (int64_t)now();
}

int cuptiProfilerInitialize(struct p_plain *p)
{
	if (pm_absent())
		return CUPTI_ERROR_NOT_SUPPORTED;
	return NEED(p, p_plain, priv) || (p && p->size >= 16) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

int cuptiDeviceGetChipName(struct p_chip *p)
{
	if (!NEED(p, p_chip, chip))
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->chip = "FK100";
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingGetCounterAvailability(struct p_avail *p)
{
	if (!NEED(p, p_avail, image))
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (!p->image) {
		p->image_size = 64;
		return CUPTI_SUCCESS;
	}
	if (p->image_size < 64)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memset(p->image, 0, 64);
	memcpy(p->image, "FAKEAVAIL", 9);
	return CUPTI_SUCCESS;
}

int cuptiProfilerHostInitialize(struct p_hinit *p)
{
	if (!NEED(p, p_hinit, host) || p->type != 1 || !p->chip || strcmp(p->chip, "FK100") != 0 || !p->avail ||
	    memcmp(p->avail, "FAKEAVAIL", 9) != 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->host = calloc(1, sizeof(struct host));
	return p->host ? CUPTI_SUCCESS : 8;
}

int cuptiProfilerHostDeinitialize(struct p_hobj *p)
{
	if (!NEED(p, p_hobj, host))
		return CUPTI_ERROR_INVALID_PARAMETER;
	free(p->host);
	return CUPTI_SUCCESS;
}

int cuptiProfilerHostConfigAddMetrics(struct p_hadd *p)
{
	if (!NEED(p, p_hadd, n) || !p->host || !p->names)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct host *h = p->host;
	for (size_t i = 0; i < p->n; i++)
		if (!p->names[i] || pm_quantity(p->names[i]) < 0)
			return CUPTI_ERROR_INVALID_METRIC_NAME;
	for (size_t i = 0; i < p->n && h->n < PM_MAX_METRICS; i++)
		h->names[h->n++] = p->names[i];
	return CUPTI_SUCCESS;
}

/* The config image: the metric names, one per line. */
int cuptiProfilerHostGetConfigImageSize(struct p_himg *p)
{
	if (!NEED(p, p_himg, image_size) || !p->host)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct host *h = p->host;
	size_t n = 8;
	for (int i = 0; i < h->n; i++)
		n += strlen(h->names[i]) + 1;
	p->image_size = n;
	return CUPTI_SUCCESS;
}

int cuptiProfilerHostGetConfigImage(struct p_himg *p)
{
	if (!NEED(p, p_himg, image) || !p->host || !p->image)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct host *h = p->host;
	size_t need = 8;
	for (int i = 0; i < h->n; i++)
		need += strlen(h->names[i]) + 1;
	if (p->image_size < need)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memcpy(p->image, "FAKECFG\n", 8);
	size_t at = 8;
	for (int i = 0; i < h->n; i++) {
		size_t l = strlen(h->names[i]);
		memcpy(p->image + at, h->names[i], l);
		p->image[at + l] = '\n';
		at += l + 1;
	}
	return CUPTI_SUCCESS;
}

static int config_names(const uint8_t *img, size_t size, char names[][80], int max)
{
	if (size < 8 || memcmp(img, "FAKECFG\n", 8) != 0)
		return -1;
	int n = 0;
	size_t at = 8;
	while (at < size && n < max) {
		const uint8_t *nl = memchr(img + at, '\n', size - at);
		if (!nl)
			return -1;
		size_t l = (size_t)(nl - (img + at));
		if (l >= 80)
			return -1;
		memcpy(names[n], img + at, l);
		names[n++][l] = '\0';
		at += l + 1;
	}
	return n;
}

int cuptiProfilerHostGetNumOfPasses(struct p_hpass *p)
{
	if (!NEED(p, p_hpass, passes) || !p->image)
		return CUPTI_ERROR_INVALID_PARAMETER;
	char names[PM_MAX_METRICS][80];
	int n = config_names(p->image, p->image_size, names, PM_MAX_METRICS);
	if (n < 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->passes = pm_passes(names, n);
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingEnable(struct p_enable *p)
{
	if (!NEED(p, p_enable, obj) || p->device >= PM_DEVICES)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *r = env("FAKECUPTI_PM_ENABLE_RESULT");
	if (r && atoi(r) != 0)
		return atoi(r);
	pthread_mutex_lock(&pm_mu);
	if (samplers[p->device]) {
		pthread_mutex_unlock(&pm_mu);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	struct sampler *s = calloc(1, sizeof *s);
	pm_log[p->device] = pm_log[p->device] ? pm_log[p->device] : calloc(PM_LOG, sizeof(struct pm_kernel));
	if (!s || !pm_log[p->device]) {
		pthread_mutex_unlock(&pm_mu);
		free(s);
		return 8;
	}
	s->device = (uint32_t)p->device;
	const char *skew = env("FAKECUPTI_PM_CLOCK_SKEW_S");
	s->skew = skew ? (uint64_t)atoll(skew) * 1000000000ULL : 0;
	samplers[p->device] = s;
	p->obj = s;
	atomic_store(&pm_on, 1);
	pthread_mutex_unlock(&pm_mu);
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingDisable(struct p_obj *p)
{
	if (!NEED(p, p_obj, obj) || !p->obj)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&pm_mu);
	struct sampler *s = p->obj;
	samplers[s->device] = NULL;
	pthread_mutex_unlock(&pm_mu);
	free(s);
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingSetConfig(struct p_config *p)
{
	if (!NEED(p, p_config, trigger) || !p->obj || !p->config || p->hw_size == 0 || p->interval == 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *sys = env("FAKECUPTI_PM_SYSCLK_ONLY");
	if (p->trigger == 1 && sys && strcmp(sys, "1") == 0)
		return CUPTI_ERROR_NOT_SUPPORTED;
	struct sampler *s = p->obj;
	int n = config_names(p->config, p->config_size, s->names, PM_MAX_METRICS);
	if (n <= 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (pm_passes(s->names, n) > 1)
		return CUPTI_ERROR_NOT_SUPPORTED; /* multi-pass configurations */
	for (int i = 0; i < n; i++) {
		s->q[i] = pm_quantity(s->names[i]);
		s->per_sm[i] = pm_per_sm(s->names[i]);
	}
	s->n = n;
	/* The sys clock trigger counts cycles of a 1 GHz clock. */
	s->period = p->interval;
	s->configured = 1;
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingGetCounterDataSize(struct p_dsize *p)
{
	if (!NEED(p, p_dsize, data_size) || !p->obj || !p->names || p->n == 0 || p->max_samples == 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->data_size = image_bytes(p->max_samples, p->n);
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingCounterDataImageInitialize(struct p_dinit *p)
{
	if (!NEED(p, p_dinit, data) || !p->obj || !p->data)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct sampler *s = p->obj;
	size_t per = 16 + 8 * (size_t)s->n;
	if (p->data_size < sizeof(struct image_head) + per)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct image_head h = {IMAGE_MAGIC, (p->data_size - sizeof h) / per, (uint64_t)s->n, 0};
	memset(p->data, 0, p->data_size);
	memcpy(p->data, &h, sizeof h);
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingStart(struct p_obj *p)
{
	if (!NEED(p, p_obj, obj) || !p->obj)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct sampler *s = p->obj;
	if (!s->configured || s->started)
		return CUPTI_ERROR_INVALID_OPERATION;
	pthread_mutex_lock(&pm_mu);
	s->next = now();
	s->started = 1;
	pthread_mutex_unlock(&pm_mu);
	return CUPTI_SUCCESS;
}

/* Writes the samples that ended by t (all of [next, t) when last) into
 * the image (pm_mu held): 1 when the image filled up. */
static int pm_emit(struct sampler *s, uint8_t *data, uint64_t t, int last)
{
	struct image_head h;
	memcpy(&h, data, sizeof h);
	int64_t off = tool_to_realtime() + (int64_t)s->skew;
	while (s->next + (last ? 1 : s->period) <= t) {
		if (h.count == h.max) {
			memcpy(data, &h, sizeof h);
			return 1;
		}
		uint64_t a = s->next, b = a + s->period;
		if (b > t)
			b = t;
		double v[Q_N];
		pm_values(s->device, a, b, v);
		uint64_t *row = image_sample(data, &h, h.count++);
		row[0] = (uint64_t)((int64_t)a + off);
		row[1] = (uint64_t)((int64_t)b + off);
		for (int i = 0; i < s->n; i++) {
			double x = s->q[i] >= 0 ? v[s->q[i]] : 0;
			if (s->per_sm[i])
				x /= (double)fakecuda_sms();
			memcpy(&row[2 + i], &x, sizeof x);
		}
		s->next = b;
	}
	memcpy(data, &h, sizeof h);
	return 0;
}


int cuptiPmSamplingDecodeData(struct p_decode *p)
{
	if (!NEED(p, p_decode, overflow) || !p->obj || !p->data)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct sampler *s = p->obj;
	struct image_head h;
	memcpy(&h, p->data, sizeof h);
	if (h.magic != IMAGE_MAGIC || !s->started)
		return CUPTI_ERROR_INVALID_OPERATION;
	pthread_mutex_lock(&pm_mu);
	int full = pm_emit(s, p->data, now(), s->started == 2);
	pthread_mutex_unlock(&pm_mu);
	p->stop = full ? 1 : 2;
	p->overflow = 0;
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingStop(struct p_obj *p)
{
	if (!NEED(p, p_obj, obj) || !p->obj)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct sampler *s = p->obj;
	if (s->started != 1)
		return CUPTI_ERROR_INVALID_OPERATION;
	/* The partial last sample is completed by the next decode. */
	pthread_mutex_lock(&pm_mu);
	s->started = 2;
	pthread_mutex_unlock(&pm_mu);
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingGetCounterDataInfo(struct p_dinfo *p)
{
	if (!NEED(p, p_dinfo, completed) || !p->data)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct image_head h;
	memcpy(&h, p->data, sizeof h);
	if (h.magic != IMAGE_MAGIC)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->total = h.max;
	p->populated = p->completed = h.count;
	return CUPTI_SUCCESS;
}

int cuptiPmSamplingCounterDataGetSampleInfo(struct p_sinfo *p)
{
	if (!NEED(p, p_sinfo, end) || !p->data)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct image_head h;
	memcpy(&h, p->data, sizeof h);
	if (h.magic != IMAGE_MAGIC || p->index >= h.count)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const uint64_t *row = image_sample((uint8_t *)(uintptr_t)p->data, &h, p->index);
	p->start = row[0];
	p->end = row[1];
	return CUPTI_SUCCESS;
}

int cuptiProfilerHostEvaluateToGpuValues(struct p_heval *p)
{
	if (!NEED(p, p_heval, values) || !p->host || !p->data || !p->names || !p->values)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct image_head h;
	memcpy(&h, p->data, sizeof h);
	if (h.magic != IMAGE_MAGIC || p->index >= h.count)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const struct host *host = p->host;
	const uint64_t *row = image_sample((uint8_t *)(uintptr_t)p->data, &h, p->index);
	for (size_t i = 0; i < p->n; i++) {
		int k = -1;
		for (int j = 0; j < host->n && j < (int)h.n; j++)
			if (p->names[i] && strcmp(host->names[j], p->names[i]) == 0)
				k = j;
		if (k < 0)
			return CUPTI_ERROR_INVALID_METRIC_NAME;
		memcpy(&p->values[i], &row[2 + k], sizeof(double));
	}
	return CUPTI_SUCCESS;
}
