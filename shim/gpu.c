/* gpu.c: GPU (CUDA) measurement through CUPTI, loaded at run time (gpu.h).
 *
 * Nothing here runs unless the CUDA driver calls InitializeInjection. The
 * host side is the callback of CUPTI's RUNTIME and DRIVER API domains,
 * enabled one callback id at a time for the calls whose time matters: a
 * per-thread depth, and the calling thread's state switched like an MPI
 * call's (useful -> GPU runtime -> back). The device side is the activity
 * buffers of gpu_pool.c: preallocated, grown off the program's threads,
 * handed to CUPTI zeroed; a completed buffer is queued and its records are
 * decoded on the pool's thread (or by a reader that needs them now) into
 * per-device unions, a kernel table and copy totals, under the GPU lock
 * only (never the region lock: cuptiActivityFlushAll delivers buffers
 * synchronously on the flushing thread, which may hold the region lock).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core.h"
#include "gpu.h"
#include "gpu_pool.h"
#include "live.h"

int popmon_gpu_active;
const struct popmon_gpu_backend *popmon_gpu_backend;
const char *const popmon_gpu_copy_names[POPMON_GPU_NCOPY] = {"HtoD", "DtoH", "DtoD", "PtoP", "memset"};
const char *const popmon_gpu_mode_names[3] = {"off", "auto", "on"};

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

/* ------------------------------------------------------------------ unions */

#define IV(u, k) ((u)->iv[((u)->head + (k)) % POPMON_GPU_WINDOW])

static void gap_add(struct popmon_gpu_gaps *g, uint64_t a, uint64_t b, uint64_t g0, uint64_t g1)
{
	if (a < g0)
		a = g0;
	if (b > g1)
		b = g1;
	if (b <= a || b - a < POPMON_GPU_IDLE_MIN_NS)
		return;
	g->count++;
	g->idle_ns += b - a;
	if (b - a > g->longest_ns)
		g->longest_ns = b - a;
}

static void evict(struct popmon_gpu_union *u, struct popmon_gpu_gaps *gaps, uint64_t g0)
{
	uint64_t s = IV(u, 0).s, e = IV(u, 0).e;
	if (gaps && u->final_end)
		gap_add(gaps, u->final_end, s, g0, UINT64_MAX);
	u->final_len += e - s;
	u->final_end = e;
	u->head = (u->head + 1) % POPMON_GPU_WINDOW;
	u->n--;
}

void popmon_gpu_union_add(struct popmon_gpu_union *u, uint64_t s, uint64_t e, struct popmon_gpu_gaps *gaps,
			  uint64_t g0)
{
	if (s < u->final_end)
		s = u->final_end; /* older coverage is final */
	if (e <= s)
		return;
	/* The first interval that ends at or after s (ends are sorted too:
	 * the intervals are disjoint). */
	uint32_t lo = 0, hi = u->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (IV(u, mid).e < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t i = lo, j = lo;
	while (j < u->n && IV(u, j).s <= e)
		j++;
	if (j > i) { /* merges with [i, j) */
		uint64_t ns = IV(u, i).s < s ? IV(u, i).s : s;
		uint64_t ne = IV(u, j - 1).e > e ? IV(u, j - 1).e : e;
		IV(u, i).s = ns;
		IV(u, i).e = ne;
		uint32_t gone = j - 1 - i;
		if (gone) {
			for (uint32_t k = i + 1; k + gone < u->n; k++)
				IV(u, k) = IV(u, k + gone);
			u->n -= gone;
		}
		return;
	}
	if (u->n == POPMON_GPU_WINDOW) {
		if (i == 0) {
			/* Older than the whole window and disjoint from it:
			 * final coverage at once. */
			u->final_len += e - s;
			if (e > u->final_end)
				u->final_end = e;
			return;
		}
		evict(u, gaps, g0);
		i--;
	}
	for (uint32_t k = u->n; k > i; k--)
		IV(u, k) = IV(u, k - 1);
	IV(u, i).s = s;
	IV(u, i).e = e;
	u->n++;
}

/* The union's length clipped to (-inf, t], without the floor of earlier
 * values. */
static uint64_t union_peek(const struct popmon_gpu_union *u, uint64_t t)
{
	uint64_t v = u->final_len;
	if (u->final_end > t) {
		uint64_t over = u->final_end - t;
		v = v > over ? v - over : 0;
	}
	for (uint32_t k = 0; k < u->n; k++) {
		uint64_t s = u->iv[(u->head + k) % POPMON_GPU_WINDOW].s, e = u->iv[(u->head + k) % POPMON_GPU_WINDOW].e;
		if (s >= t)
			break;
		v += (e < t ? e : t) - s;
	}
	return v;
}

uint64_t popmon_gpu_union_value(struct popmon_gpu_union *u, uint64_t t)
{
	uint64_t v = union_peek(u, t);
	if (v < u->reported)
		v = u->reported;
	u->reported = v;
	return v;
}

void popmon_gpu_union_gaps(const struct popmon_gpu_union *u, uint64_t g0, uint64_t g1, struct popmon_gpu_gaps *gaps)
{
	uint64_t prev = u->final_end;
	for (uint32_t k = 0; k < u->n; k++) {
		uint64_t s = u->iv[(u->head + k) % POPMON_GPU_WINDOW].s;
		if (prev)
			gap_add(gaps, prev, s, g0, g1);
		prev = u->iv[(u->head + k) % POPMON_GPU_WINDOW].e;
	}
}

/* ------------------------------------------------------------------ host side */

void popmon_gpu_api(struct popmon_thread *t, uint32_t site, uint64_t now)
{
	if (t == NULL || !t->accounted)
		return; /* nothing is allocated for threads that are not CPUs */
	if (site == POPMON_CUPTI_API_ENTER) {
		if (t->gpu_depth++ == 0) {
			/* Only useful time becomes GPU runtime: a CUDA call inside
			 * MPI (CUDA-aware MPI) or an OpenMP wait stays there. */
			t->gpu_in = t->state == POPMON_ST_USEFUL;
			if (t->gpu_in)
				popmon_switch(t, POPMON_ST_GPU_RUNTIME, now);
		}
	} else if (site == POPMON_CUPTI_API_EXIT) {
		if (t->gpu_depth == 0)
			return; /* an exit whose enter came before libpopmon subscribed */
		if (--t->gpu_depth == 0 && t->gpu_in) {
			t->gpu_in = 0;
			if (t->state == POPMON_ST_GPU_RUNTIME)
				popmon_switch(t, POPMON_ST_USEFUL, now);
			POPMON_ADD(t->gpu_calls, 1);
		}
	}
}

/* ------------------------------------------------------------------ state */

struct gdev {
	struct popmon_gpu_union k, a;
	struct popmon_gpu_gaps gaps;
	uint64_t used;
};

struct kslot {
	const char *ptr; /* CUPTI's name pointer: the key, with the device */
	uint32_t device, used;
	uint64_t count, time, min, max;
	char name[POPMON_GPU_NAME];
};

static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdev devs[POPMON_GPU_DEVICES];
static struct kslot ktab[POPMON_GPU_KERNELS];
static struct kslot kother[POPMON_GPU_DEVICES]; /* kernels past the table, per device */
static struct {
	uint64_t count, bytes, time;
} copies[POPMON_GPU_NCOPY];
static char dev_uuid[POPMON_GPU_DEVICES][48];
static char dev_name[POPMON_GPU_DEVICES][96];
static int ndevices; /* from the driver; 0 while unknown */
static uint64_t dropped, rejected, lost;

static int injected;      /* InitializeInjection ran */
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

static uint64_t g0_tick, g0_ns;

/* Global's start (CLOCK_MONOTONIC): MPI_Init, or the process's start. */
static uint64_t global_start_ns(void)
{
	uint64_t tick = popmon_proc.init_tick ? popmon_proc.init_tick : popmon_proc.t0_tick;
	if (tick != g0_tick || g0_ns == 0) {
		g0_tick = tick;
		g0_ns = popmon_proc.t0_ns + (uint64_t)((double)popmon_delta(popmon_proc.t0_tick, tick) *
						       popmon_ns_per_tick());
	}
	return g0_ns;
}

/* Copies the NUL-terminated string at p (CUPTI's memory, not trusted) into
 * out without touching an unmapped page: page by page through
 * process_vm_readv (one system call per new kernel, off the hot path). */
static void safe_name(const char *p, char *out, size_t n)
{
	snprintf(out, n, "%s", "(unnamed kernel)");
	if (!p)
		return;
	size_t got = 0;
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0)
		pg = 4096;
	while (got < n - 1) {
		uintptr_t a = (uintptr_t)(p + got);
		size_t chunk = (size_t)pg - (a % (size_t)pg);
		if (chunk > n - 1 - got)
			chunk = n - 1 - got;
		struct iovec local = {out + got, chunk}, remote = {(void *)a, chunk};
		ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (r <= 0) {
			if (got == 0 && (errno == ENOSYS || errno == EPERM)) {
				/* Not allowed here (seccomp): trust the record. */
				snprintf(out, n, "%s", p);
				return;
			}
			break;
		}
		if (memchr(out + got, '\0', (size_t)r))
			return;
		got += (size_t)r;
	}
	out[got] = '\0';
	if (got == 0)
		snprintf(out, n, "%s", "(unnamed kernel)");
}

static void kernel_add(const struct popmon_gpu_record *r)
{
	uint64_t d = r->end - r->start;
	uintptr_t h = ((uintptr_t)r->name * 0x9e3779b97f4a7c15ull) ^ r->device;
	struct kslot *k = NULL;
	for (int probe = 0; probe < POPMON_GPU_KERNELS; probe++) {
		struct kslot *s = &ktab[(h + (uintptr_t)probe) % POPMON_GPU_KERNELS];
		if (!s->used) {
			s->used = 1;
			s->ptr = r->name;
			s->device = r->device;
			safe_name(r->name, s->name, sizeof s->name);
			k = s;
			break;
		}
		if (s->ptr == r->name && s->device == r->device) {
			k = s;
			break;
		}
	}
	if (!k) {
		k = &kother[r->device];
		if (!k->used) {
			k->used = 1;
			k->device = r->device;
			snprintf(k->name, sizeof k->name, "%s", "(other kernels)");
		}
	}
	if (k->count == 0 || d < k->min)
		k->min = d;
	if (d > k->max)
		k->max = d;
	k->count++;
	k->time += d;
}

/* Under the GPU lock: one decoded record into the accounts. */
static void account(const struct popmon_gpu_record *r)
{
	struct gdev *d = &devs[r->device];
	d->used++;
	if (r->cls == POPMON_GPU_KERNEL) {
		popmon_gpu_union_add(&d->k, r->start, r->end, NULL, 0);
		kernel_add(r);
	} else {
		copies[r->copy].count++;
		copies[r->copy].bytes += r->bytes;
		copies[r->copy].time += r->end - r->start;
	}
	popmon_gpu_union_add(&d->a, r->start, r->end, &d->gaps, global_start_ns());
}

/* Under the GPU lock: the devices' K and A as delivered so far, for the
 * live file's readers (popmon run's sampler, popmon recover). */
static void live_publish_locked(uint64_t now)
{
	struct popmon_live_header *h = popmon_live;
	if (!h)
		return;
	uint64_t seq = h->gpu_seq;
	POPMON_STORE(h->gpu_seq, seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	uint32_t used = 0;
	for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
		if (!devs[d].used)
			continue;
		used |= 1u << d;
		POPMON_STORE(h->gpu_k_now[d], union_peek(&devs[d].k, now));
		POPMON_STORE(h->gpu_a_now[d], union_peek(&devs[d].a, now));
	}
	POPMON_STORE(h->gpu_used, used);
	POPMON_STORE(h->gpu_now_ns, now);
	__atomic_store_n(&h->gpu_seq, seq + 2, __ATOMIC_RELEASE);
}

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
	uint32_t ndev = ndevices > 0 && ndevices < POPMON_GPU_DEVICES ? (uint32_t)ndevices : POPMON_GPU_DEVICES;
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
		account(&r);
	}
	if (discard) {
		lost += n;
		return;
	}
	rejected += bad;
	live_publish_locked(now);
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
	pthread_mutex_lock(&gpu_lock);
	memcpy(dev_uuid, uuid, sizeof(uuid[0]) * (size_t)n);
	memcpy(dev_name, name, sizeof(name[0]) * (size_t)n);
	ndevices = count;
	if (popmon_live) {
		uint64_t seq = popmon_live->gpu_seq;
		POPMON_STORE(popmon_live->gpu_seq, seq + 1);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		memcpy(popmon_live->gpu_uuid, uuid, sizeof(uuid[0]) * (size_t)n);
		__atomic_store_n(&popmon_live->gpu_seq, seq + 2, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&gpu_lock);
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
		if (cbid == POPMON_CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
			device_map();
		else if (cbid == POPMON_CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
			popmon_gpu_flush(); /* the last safe point at exit */
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
		snprintf(buf, n, "the program did not use CUDA");
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

int popmon_gpu_mode(void)
{
	const char *v = getenv("POPMON_GPU");
	if (!v || !*v || strcmp(v, "auto") == 0)
		return 1;
	if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0)
		return 0;
	if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0)
		return 2;
	return 1;
}

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

/* Calibrates clock_offset against cuptiGetTimestamp: the reading with the
 * narrowest CLOCK_MONOTONIC bracket. */
static int calibrate(const struct popmon_gpu_backend *b)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t ts = 0, m1 = popmon_monotonic_ns();
		if (b->get_timestamp(&ts) != 0)
			return -1;
		uint64_t m2 = popmon_monotonic_ns();
		if (m2 - m1 < best) {
			best = m2 - m1;
			clock_offset = (int64_t)(m1 + (m2 - m1) / 2) - (int64_t)ts;
		}
	}
	return 0;
}

/* The API calls whose time matters (CUPTI's callback ids, stable across
 * versions: cupti_runtime_cbid.h and cupti_driver_cbid.h). Trivial getters
 * (cudaGetDevice, cudaGetLastError, cuCtxGetCurrent, ...) are not among
 * them: they cost the program nothing measurable, and a callback on each
 * would cost more than the call. Driver ids are enabled too, for programs
 * that launch through the driver API (Triton, CuPy, Numba); inside a
 * runtime call they only nest (counted once). */
static const uint16_t runtime_cbids[] = {
	/* launches */
	13, 211, 214, 269, 270, 272, 284, 285, 430, 431,
	/* graphs: instantiate, launch, update, upload */
	310, 311, 312, 335, 348, 349, 418, 436,
	/* synchronisation: thread, stream, event, stream-wait-event, device */
	126, 131, 137, 147, 165, 239, 247,
	/* copies */
	31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 144, 145, 160, 161, 162, 163, 215, 216,
	217, 218, 219, 220, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 245, 246, 249, 250, 482, 483,
	/* memsets */
	49, 50, 51, 52, 142, 143, 233, 234, 235, 236, 243, 244,
	/* device set-up and memory: cudaSetDevice (creates the context),
	 * cudaMalloc, MallocPitch, Free, MallocArray, FreeArray, MallocHost,
	 * FreeHost, HostAlloc, HostRegister, DeviceReset, MallocManaged */
	16, 20, 21, 22, 23, 24, 25, 26, 27, 152, 164, 206,
};
static const uint16_t driver_cbids[] = {
	/* launches */
	115, 116, 117, 307, 442, 477, 478, 480, 527, 528, 652, 653,
	/* graphs */
	513, 514, 515, 561, 580, 581, 643, 656,
	/* synchronisation: context, event, stream, stream-wait-event */
	17, 121, 126, 295, 436, 440,
	/* copies */
	276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 305, 306, 318, 319,
	320, 321, 397, 398, 399, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 418, 419, 420, 421, 422, 423,
	424, 425, 426, 427, 776, 777, 778, 779,
	/* memsets */
	216, 218, 220, 222, 224, 226, 249, 250, 251, 252, 253, 254, 411, 412, 413, 414, 415, 416, 428, 429, 430, 431,
	432, 433,
};

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
		if (rc != 0 && runtime_cbids[i] == 211)
			return rc; /* cudaLaunchKernel: every CUPTI since CUDA 7 has it */
	}
	for (size_t i = 0; i < sizeof driver_cbids / sizeof driver_cbids[0]; i++) {
		rc = b->enable_callback(1, subscriber, POPMON_CUPTI_CB_DOMAIN_DRIVER_API, driver_cbids[i]);
		if (rc != 0 && driver_cbids[i] == 307)
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
		if (!b->get_timestamp || calibrate(b) != 0)
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
	popmon_gpu_pool_start(process_buffer, &gpu_lock);
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
	if (popmon_gpu_mode() == 2)
		popmon_warn_once("gpu", "GPU measurement requested but %s", reason);
}

int InitializeInjection(void)
{
	static int once;
	popmon_wake(POPMON_WAKE_COMPUTE); /* a CUDA program named like a utility */
	if (popmon_proc.inert || __atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
		return 1;
	injected = 1;
	if (popmon_live)
		__atomic_store_n(&popmon_live->gpu_mode, (uint32_t)popmon_gpu_mode() + 1, __ATOMIC_RELEASE);
	if (popmon_gpu_mode() == 0)
		return 1; /* off: never probes */
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
	__atomic_store_n(&popmon_gpu_active, 1, __ATOMIC_RELEASE);
	if (popmon_live)
		__atomic_store_n(&popmon_live->gpu_active, 1, __ATOMIC_RELEASE);
	return 1;
}

/* ------------------------------------------------------------------ snapshots */

static __thread int flushing __attribute__((tls_model("initial-exec")));

void popmon_gpu_flush(void)
{
	if (!__atomic_load_n(&popmon_gpu_active, __ATOMIC_ACQUIRE) || flushing)
		return;
	flushing = 1;
	gpu_self = 1;
	popmon_gpu_backend->flush_all(0);
	gpu_self = 0;
	flushing = 0;
}

void popmon_gpu_read(uint64_t now_ns, uint64_t k[POPMON_GPU_DEVICES], uint64_t a[POPMON_GPU_DEVICES])
{
	if (!__atomic_load_n(&popmon_gpu_active, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&gpu_lock);
	popmon_gpu_pool_drain(); /* what the flush before delivered */
	for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
		if (!devs[d].used)
			continue;
		k[d] = popmon_gpu_union_value(&devs[d].k, now_ns);
		a[d] = popmon_gpu_union_value(&devs[d].a, now_ns);
	}
	pthread_mutex_unlock(&gpu_lock);
}

/* ------------------------------------------------------------------ finish */

static int cmp_rows(const void *x, const void *y)
{
	const struct popmon_gpu_kernel_row *a = x, *b = y;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->device > b->device) - (a->device < b->device);
}

/* Under the GPU lock: the process's kernels merged by name and device (a
 * name may come under several pointers), the longest POPMON_GPU_TOP. */
static int kernel_rows(struct popmon_gpu_kernel_row *out)
{
	static struct popmon_gpu_kernel_row all[POPMON_GPU_KERNELS + POPMON_GPU_DEVICES];
	int n = 0;
	for (int i = 0; i < POPMON_GPU_KERNELS + POPMON_GPU_DEVICES; i++) {
		const struct kslot *s = i < POPMON_GPU_KERNELS ? &ktab[i] : &kother[i - POPMON_GPU_KERNELS];
		if (!s->used || s->count == 0)
			continue;
		int j = 0;
		for (; j < n; j++)
			if (all[j].device == (int64_t)s->device && strcmp(all[j].name, s->name) == 0)
				break;
		if (j == n) {
			memset(&all[n], 0, sizeof all[n]);
			snprintf(all[n].name, sizeof all[n].name, "%s", s->name);
			all[n].device = s->device;
			all[n].min_ns = (int64_t)s->min;
			n++;
		}
		all[j].count += (int64_t)s->count;
		all[j].time_ns += (int64_t)s->time;
		if ((int64_t)s->min < all[j].min_ns)
			all[j].min_ns = (int64_t)s->min;
		if ((int64_t)s->max > all[j].max_ns)
			all[j].max_ns = (int64_t)s->max;
	}
	qsort(all, (size_t)n, sizeof all[0], cmp_rows);
	if (n > POPMON_GPU_TOP)
		n = POPMON_GPU_TOP;
	memcpy(out, all, sizeof all[0] * (size_t)n);
	return n;
}

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

void popmon_gpu_finish(struct popmon_gpu_proc *out, uint64_t g0_ns, uint64_t g1_ns, int rank)
{
	memset(out, 0, sizeof *out);
	int mode = popmon_gpu_mode();
	out->mode = mode;
	if (__atomic_load_n(&popmon_gpu_active, __ATOMIC_ACQUIRE)) {
		popmon_gpu_flush();
		size_t n = 0;
		if (popmon_gpu_backend->dropped_records &&
		    popmon_gpu_backend->dropped_records(NULL, 0, &n) == POPMON_CUPTI_SUCCESS && n)
			__atomic_fetch_add(&dropped, (uint64_t)n, __ATOMIC_RELAXED);
		pthread_mutex_lock(&gpu_lock);
		popmon_gpu_pool_drain();
		out->status = POPMON_GPU_MEASURED;
		out->cupti_version = cupti_version;
		out->driver_version = driver_version;
		uint64_t gone = __atomic_load_n(&dropped, __ATOMIC_RELAXED) + lost;
		out->dropped = (int64_t)gone;
		if (gone)
			say_lost(gone);
		out->rejected = (int64_t)rejected;
		out->calibrated = calibrated;
		for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
			if (dev_uuid[d][0])
				memcpy(out->dev[d].uuid, dev_uuid[d], sizeof out->dev[d].uuid);
			else
				snprintf(out->dev[d].uuid, sizeof out->dev[d].uuid, "GPU-ordinal-%d", d);
			memcpy(out->dev[d].name, dev_name[d], sizeof out->dev[d].name);
			out->dev[d].used = (int64_t)devs[d].used;
			struct popmon_gpu_gaps g = devs[d].gaps;
			popmon_gpu_union_gaps(&devs[d].a, g0_ns, g1_ns, &g);
			out->dev[d].gaps = (int64_t)g.count;
			out->dev[d].idle_ns = (int64_t)g.idle_ns;
			out->dev[d].longest_ns = (int64_t)g.longest_ns;
		}
		for (int c = 0; c < POPMON_GPU_NCOPY; c++) {
			out->copies[c].count = (int64_t)copies[c].count;
			out->copies[c].bytes = (int64_t)copies[c].bytes;
			out->copies[c].time_ns = (int64_t)copies[c].time;
		}
		out->nkernels = kernel_rows(out->kernels);
		pthread_mutex_unlock(&gpu_lock);
	} else if (failed) {
		out->status = POPMON_GPU_UNMEASURED;
		out->cupti_version = cupti_version;
		out->driver_version = driver_version;
		snprintf(out->reason, sizeof out->reason, "%s", reason);
	} else if (mode == 0) {
		out->status = POPMON_GPU_UNUSED;
		popmon_gpu_reason(out->reason, sizeof out->reason, POPMON_GPU_WHY_OFF, 0, NULL);
	} else {
		/* Never injected: CUDA used (its driver is loaded) or not. */
		void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
		const char *inj = getenv("CUDA_INJECTION64_PATH");
		if (!h) {
			out->status = POPMON_GPU_UNUSED;
			popmon_gpu_reason(out->reason, sizeof out->reason, POPMON_GPU_WHY_NO_CUDA, 0, NULL);
		} else {
			dlclose(h);
			out->status = POPMON_GPU_UNMEASURED;
			if (inj && *inj && !is_self(inj))
				popmon_gpu_reason(out->reason, sizeof out->reason, POPMON_GPU_WHY_TAKEN, 0, inj);
			else
				popmon_gpu_reason(out->reason, sizeof out->reason, POPMON_GPU_WHY_NOT_INJECTED, 0, NULL);
		}
		if (mode == 2)
			popmon_warn_once("gpu", "GPU measurement requested but %s", out->reason);
	}
	(void)injected;
	const char *distinct = getenv("POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK");
	if (distinct && strcmp(distinct, "1") == 0 && rank >= 0) {
		for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
			size_t l = strlen(out->dev[d].uuid);
			snprintf(out->dev[d].uuid + l, sizeof out->dev[d].uuid - l, "-r%d", rank);
		}
	}
}

/* ------------------------------------------------------------------ doctor */

void popmon_gpu_probe(void)
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
