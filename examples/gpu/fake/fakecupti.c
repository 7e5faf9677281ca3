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
