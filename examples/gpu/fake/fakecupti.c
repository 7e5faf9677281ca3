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
#define MAX_PENDING 8192
#define AUTO_DELIVER 1024

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(callback_fn) subscriber;
static void *subscriber_data;
static _Atomic unsigned char enabled_cb[4][MAX_CBID];
static _Atomic unsigned char enabled_kind[MAX_KIND];
static _Atomic(timestamp_fn) timestamp;
static _Atomic(requested_fn) requested;
static _Atomic(completed_fn) completed;

struct pending {
	struct fakecuda_activity a;
	uint32_t kind;
};
static struct pending pending[MAX_PENDING];
static size_t npending;
static size_t dropped;

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

/* Writes p as a record at the documented offsets; returns its size. */
static size_t encode(uint8_t *r, const struct pending *p)
{
	size_t n = record_size(p->kind);
	const struct fakecuda_activity *a = &p->a;
	memset(r, 0, n);
	PUT(r, 0, uint32_t, p->kind);
	PUT(r, 16, uint64_t, a->start);
	PUT(r, 24, uint64_t, a->end);
	switch (p->kind) {
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
		if (p->kind != K_MEMSET)
			PUT(r, 4, uint8_t, a->copy_kind);
		PUT(r, 8, uint64_t, a->bytes);
		PUT(r, 32, uint32_t, a->device);
		PUT(r, 36, uint32_t, a->context_id);
		PUT(r, 40, uint32_t, a->stream);
		PUT(r, 44, uint32_t, p->kind == K_MEMCPY2 ? a->src_device : a->correlation);
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
	pthread_mutex_lock(&mu);
	*n = dropped;
	dropped = 0; /* "reset to zero when this function is called" */
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

/* Takes the pending activities that have ended by t (all if forced) and
 * hands them to the tool in as many buffers as needed. */
int cuptiActivityFlushAll(uint32_t flag)
{
	uint64_t t = now();
	struct pending *ready = malloc(sizeof pending);
	if (!ready)
		return CUPTI_SUCCESS;
	size_t n = 0, keep = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < npending; i++) {
		if ((flag & 1) || pending[i].a.end <= t)
			ready[n++] = pending[i];
		else
			pending[keep++] = pending[i];
	}
	npending = keep;
	pthread_mutex_unlock(&mu);
	requested_fn req = atomic_load(&requested);
	completed_fn comp = atomic_load(&completed);
	size_t i = 0;
	while (i < n) {
		uint8_t *buf = NULL;
		size_t size = 0, max_records = 0;
		if (req && comp)
			req(&buf, &size, &max_records);
		if (!buf || size < SZ_MAX) {
			pthread_mutex_lock(&mu);
			dropped += n - i;
			pthread_mutex_unlock(&mu);
			break;
		}
		size_t off = 0, count = 0;
		while (i < n && off + record_size(ready[i].kind) <= size &&
		       (max_records == 0 || count < max_records)) {
			off += encode(buf + off, &ready[i]);
			i++;
			count++;
		}
		comp(NULL, 0, buf, size, off);
	}
	free(ready);
	return CUPTI_SUCCESS;
}

/* The worker that delivers ended records every period_ms, as CUPTI's own
 * thread does (cuptiActivityFlushPeriod; 0 stops it). */
static _Atomic uint32_t period_ms;
static _Atomic int worker_started;

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		uint32_t ms = atomic_load(&period_ms);
		struct timespec ts = { .tv_sec = (time_t)((ms ? ms : 100) / 1000),
				       .tv_nsec = (long)((ms ? ms : 100) % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		if (atomic_load(&period_ms))
			cuptiActivityFlushAll(0);
	}
	return NULL;
}

int cuptiActivityFlushPeriod(uint32_t ms)
{
	atomic_store(&period_ms, ms);
	int expected = 0;
	if (ms && atomic_compare_exchange_strong(&worker_started, &expected, 1)) {
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, worker, NULL) != 0)
			atomic_store(&worker_started, 0);
		pthread_attr_destroy(&attr);
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
	pthread_mutex_lock(&mu);
	npending = 0;
	pthread_mutex_unlock(&mu);
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
	pthread_mutex_lock(&mu);
	if (npending < MAX_PENDING)
		pending[npending++] = (struct pending){ .a = *a, .kind = kind };
	else
		dropped++;
	size_t n = npending;
	pthread_mutex_unlock(&mu);
	/* CUPTI hands full buffers over by itself, without a flush (from its
	 * own thread); here: the ended records, on the calling thread, when a
	 * buffer's worth is pending. */
	if (n >= AUTO_DELIVER)
		cuptiActivityFlushAll(0);
}

static const struct fakecuda_tool tool = { now, on_api, on_resource, on_activity };

__attribute__((constructor)) static void attach(void)
{
	fakecuda_attach_tool(&tool);
}

__attribute__((destructor)) static void detach(void)
{
	fakecuda_attach_tool(NULL);
}
