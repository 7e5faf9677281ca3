/* gpu_test.c: unit tests of the GPU measurement (shim/gpu.c, gpu_cupti.c,
 * gpu_rocm.c, gpu_pool.c) that need no
 * GPU and no CUDA: recorded API enter/exit sequences and activity records
 * are fed through a fake CUPTI/driver backend (popmon_gpu_backend) into the
 * real accounting code; the decoder, the unions and the reason texts are
 * called directly.
 *
 * Built and run by internal/shimbuild's TestGPUC:
 *
 *   cc -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -DPOPMON_GPU_TEST -Ishim \
 *      shim/base/{clock,process,threads,warn}.c shim/gpu.c shim/gpu_cupti.c shim/gpu_cupti_pm.c \
 *      shim/gpu_counters.c shim/gpu_rocm.c shim/gpu_pool.c shim/test/gpu_test.c \
 *      -ldl -lpthread -o gpu_test
 *   ./gpu_test SCENARIO [ARG]   (one process per scenario: gpu.c keeps
 *                                process-wide state and initialises once)
 *
 * Exits 0 and prints "ok SCENARIO" on success, prints "FAIL ..." lines and
 * exits 1 otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/process.h"
#include "base/threads.h"
#include "counters.h"
#include "gpu.h"
#include "gpu_backends.h"
#include "gpu_cupti.h"
#include "gpu_counters.h"
#include "gpu_pool.h"
#include "live.h"

/* ------------------------------------------------------------------ stubs of counters.c and live.c */

/* The bottom layer (shim/base: the clock, CLOCK_MONOTONIC here as
 * popmon_clock_tsc stays 0, so that ticks are nanoseconds; the process,
 * never dormant; the thread table; warnings) is linked as it is. */
int popmon_counters_active;
struct popmon_live_header *popmon_live; /* tests may point it at a header */

void popmon_ctr_transition(struct popmon_thread *t, uint32_t to)
{
	(void)t;
	(void)to;
}

#include "test/seam.h"

static int warnings_with(const char *key)
{
	int n = 0;
	for (int i = 0; i < nwarned; i++)
		n += strncmp(warned[i], key, strlen(key)) == 0 && warned[i][strlen(key)] == '|';
	return n;
}

static struct popmon_thread *new_record(int accounted, uint32_t state)
{
	struct popmon_thread *t = aligned_alloc(64, sizeof *t);
	if (!t) {
		printf("FAIL out of memory\n");
		exit(1);
	}
	memset(t, 0, sizeof *t);
	t->accounted = (uint32_t)accounted;
	t->state = state;
	t->last = 0;
	popmon_tls = t;
	return t;
}

/* ------------------------------------------------------------------ records */

enum { REC = 128 }; /* the fake's record stride (>= every prefix read) */

static void put64(uint8_t *r, size_t off, uint64_t v)
{
	memcpy(r + off, &v, sizeof v);
}

static void put32(uint8_t *r, size_t off, uint32_t v)
{
	memcpy(r + off, &v, sizeof v);
}

static void kernel_rec(uint8_t *r, uint32_t kind, uint32_t dev, uint64_t s, uint64_t e, const char *name)
{
	memset(r, 0, REC);
	put32(r, 0, kind);
	put64(r, 16, s);
	put64(r, 24, e);
	put32(r, 40, dev);
	memcpy(r + 104, &name, sizeof name);
}

/* Memcpy (1), Memset (2) and MemcpyPtoP (22) records share their prefix. */
static void copy_rec(uint8_t *r, uint32_t kind, uint8_t ck, uint32_t dev, uint64_t s, uint64_t e, uint64_t bytes)
{
	memset(r, 0, REC);
	put32(r, 0, kind);
	r[4] = ck;
	put64(r, 8, bytes);
	put64(r, 16, s);
	put64(r, 24, e);
	put32(r, 32, dev);
}

static void memcpy_rec(uint8_t *r, uint8_t ck, uint32_t dev, uint64_t s, uint64_t e, uint64_t bytes)
{
	copy_rec(r, POPMON_CUPTI_ACTIVITY_MEMCPY, ck, dev, s, e, bytes);
}

static void memset_rec(uint8_t *r, uint32_t dev, uint64_t s, uint64_t e, uint64_t bytes)
{
	copy_rec(r, POPMON_CUPTI_ACTIVITY_MEMSET, 0, dev, s, e, bytes);
}

static void ptop_rec(uint8_t *r, uint32_t dev, uint32_t src, uint64_t s, uint64_t e, uint64_t bytes)
{
	copy_rec(r, POPMON_CUPTI_ACTIVITY_MEMCPY2, POPMON_CUPTI_MEMCPY_PTOP, dev, s, e, bytes);
	put32(r, 44, src);
}

/* ------------------------------------------------------------------ fake CUPTI and driver */

static popmon_cupti_callback fake_cb;
static popmon_cupti_buffer_requested fake_req;
static popmon_cupti_buffer_completed fake_done;
static popmon_cupti_timestamp_fn fake_ts;
static int fake_calls, fake_subscribe_rc, fake_ts_rc, fake_devices = 2;
static uint32_t fake_version = 130001;
static size_t fake_dropped;
static int realtime_clock; /* stamps records in CLOCK_REALTIME (no timestamp callback) */
static uint8_t pending[4096 * REC];
static size_t npending;
static pthread_mutex_t *flush_must_not_hold; /* the "region lock" the flush is called under */
/* A record still in progress among the pending ones (a copy the device has
 * not run yet): an unforced flush then hands back nothing, as CUPTI 13
 * kept a buffer back on an H200 while a device-to-device copy was queued;
 * a forced one hands back everything. */
static int in_progress;
static uint32_t last_flush_flag;

static int f_version(uint32_t *v)
{
	fake_calls++;
	*v = fake_version;
	return 0;
}
static int f_subscribe(popmon_cupti_subscriber *s, popmon_cupti_callback cb, void *ud)
{
	(void)ud;
	fake_calls++;
	if (fake_subscribe_rc)
		return fake_subscribe_rc;
	*s = (void *)&fake_cb;
	fake_cb = cb;
	return 0;
}
static int f_unsubscribe(popmon_cupti_subscriber s)
{
	(void)s;
	fake_cb = NULL;
	return 0;
}
static int f_enable_domain(uint32_t en, popmon_cupti_subscriber s, int d)
{
	(void)en;
	(void)s;
	(void)d;
	return 0;
}
static int f_enable_callback(uint32_t en, popmon_cupti_subscriber s, int d, uint32_t cbid)
{
	(void)en;
	(void)s;
	(void)d;
	(void)cbid;
	return 0;
}
static int f_register(popmon_cupti_buffer_requested req, popmon_cupti_buffer_completed done)
{
	fake_req = req;
	fake_done = done;
	return 0;
}
static int f_register_ts(popmon_cupti_timestamp_fn fn)
{
	if (fake_ts_rc)
		return fake_ts_rc;
	fake_ts = fn;
	return 0;
}
static int f_enable(int kind)
{
	(void)kind;
	return 0;
}
/* Delivers the pending records in buffers of at most 64 records, on the
 * calling thread (as cuptiActivityFlushAll does). */
static int f_flush(uint32_t flag)
{
	last_flush_flag = flag;
	if (in_progress && !(flag & POPMON_CUPTI_FLUSH_FORCED))
		return 0;
	if (flush_must_not_hold && pthread_mutex_trylock(flush_must_not_hold) == 0) {
		printf("FAIL the region lock was not held during the flush (test setup)\n");
		failures++;
		pthread_mutex_unlock(flush_must_not_hold);
	}
	size_t at = 0;
	while (at < npending) {
		uint8_t *buf = NULL;
		size_t size = 0, max = 0;
		fake_req(&buf, &size, &max);
		if (!buf)
			return 0;
		size_t n = npending - at < 64 ? npending - at : 64;
		if (n * REC > size)
			n = size / REC;
		memcpy(buf, pending + at * REC, n * REC);
		fake_done(NULL, 0, buf, size, n * REC);
		at += n;
	}
	npending = 0;
	return 0;
}
static int f_next(uint8_t *buf, size_t valid, void **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec + REC : buf;
	if (p + REC > buf + valid)
		return 12; /* CUPTI_ERROR_MAX_LIMIT_REACHED: the end of the buffer */
	*rec = p;
	return 0;
}
static int f_dropped(void *ctx, uint32_t stream, size_t *n)
{
	(void)ctx;
	(void)stream;
	*n = fake_dropped;
	fake_dropped = 0;
	return 0;
}
static int f_get_timestamp(uint64_t *ts)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	*ts = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	return 0;
}
static int f_driver_version(int *v)
{
	*v = 13000;
	return 0;
}
static int f_count(int *n)
{
	*n = fake_devices;
	return 0;
}
static int f_get(int *dev, int ordinal)
{
	*dev = ordinal;
	return 0;
}
static int f_uuid(unsigned char u[16], int dev)
{
	for (int i = 0; i < 16; i++)
		u[i] = (unsigned char)(0x10 * (dev + 1) + i);
	return 0;
}
static int f_name(char *name, int len, int dev)
{
	snprintf(name, (size_t)len, "Fake GPU %d", dev);
	return 0;
}

static struct popmon_gpu_backend fake = {
	.get_version = f_version,
	.subscribe = f_subscribe,
	.unsubscribe = f_unsubscribe,
	.enable_domain = f_enable_domain,
	.enable_callback = f_enable_callback,
	.register_callbacks = f_register,
	.register_timestamp = f_register_ts,
	.activity_enable = f_enable,
	.activity_disable = f_enable,
	.flush_all = f_flush,
	.get_next_record = f_next,
	.dropped_records = f_dropped,
	.get_timestamp = f_get_timestamp,
	.driver_version = f_driver_version,
	.device_count = f_count,
	.device_get = f_get,
	.device_uuid = f_uuid,
	.device_name = f_name,
};

/* Now on the records' clock. */
static uint64_t rec_now(void)
{
	uint64_t ts;
	if (realtime_clock) {
		f_get_timestamp(&ts);
		return ts;
	}
	return popmon_monotonic_ns();
}

static uint8_t *queue(void)
{
	if (npending >= sizeof pending / REC) {
		printf("FAIL too many pending records\n");
		exit(1);
	}
	return pending + REC * npending++;
}

/* The CUDA driver creates a context (device map) after InitializeInjection. */
static void start_fake(void)
{
	popmon_gpu_backend = &fake;
	InitializeInjection();
	CHECK(popmon_gpu_active == 1, "GPU measurement not active with the fake backend");
	if (fake_cb) {
		uint8_t res[16] = {0};
		fake_cb(NULL, POPMON_CUPTI_CB_DOMAIN_RESOURCE, POPMON_CUPTI_CBID_RESOURCE_CONTEXT_CREATED, res);
	}
}

static void api(int domain, uint32_t site)
{
	uint8_t cbdata[72] = {0};
	memcpy(cbdata, &site, sizeof site);
	fake_cb(NULL, domain, 1, cbdata);
}

/* ------------------------------------------------------------------ scenarios */

/* 1. Every record family through the stable prefixes. */
static void scenario_decode(void)
{
	uint8_t r[REC];
	struct popmon_gpu_record d;
	const char *name = "spin_kernel";
	for (uint32_t kind = 3; kind <= 10; kind += 7) {
		kernel_rec(r, kind, 1, 1000, 3000, name);
		popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
		CHECK(d.cls == POPMON_GPU_KERNEL && d.device == 1 && d.start == 1000 && d.end == 3000 && d.name == name,
		      "kernel kind %u: class %d device %u [%llu, %llu]", kind, d.cls, d.device,
		      (unsigned long long)d.start, (unsigned long long)d.end);
	}
	static const struct {
		uint8_t ck;
		int want;
	} kinds[] = {{1, POPMON_GPU_CP_HTOD}, {2, POPMON_GPU_CP_DTOH}, {3, POPMON_GPU_CP_HTOD}, {4, POPMON_GPU_CP_DTOH},
		     {8, POPMON_GPU_CP_DTOD},  {10, POPMON_GPU_CP_PTOP}, {0, POPMON_GPU_CP_DTOD}};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		memcpy_rec(r, kinds[i].ck, 0, 500, 900, 4096);
		popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
		CHECK(d.cls == POPMON_GPU_COPY && d.copy == kinds[i].want && d.bytes == 4096 && d.start == 500 &&
			      d.end == 900 && d.device == 0,
		      "memcpy kind %u: class %d copy %d bytes %llu", kinds[i].ck, d.cls, d.copy,
		      (unsigned long long)d.bytes);
	}
	memcpy_rec(r, POPMON_CUPTI_MEMCPY_HTOH, 0, 500, 900, 4096);
	popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
	CHECK(d.cls == POPMON_GPU_SKIP, "host-to-host copy not skipped (class %d)", d.cls);
	memset_rec(r, 1, 10, 20, 64);
	popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
	CHECK(d.cls == POPMON_GPU_SET && d.copy == POPMON_GPU_CP_SET && d.bytes == 64 && d.device == 1,
	      "memset: class %d", d.cls);
	ptop_rec(r, 1, 0, 10, 20, 128);
	popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
	CHECK(d.cls == POPMON_GPU_COPY && d.copy == POPMON_GPU_CP_PTOP && d.bytes == 128 && d.device == 1,
	      "peer copy: class %d copy %d", d.cls, d.copy);
	kernel_rec(r, 10, 0, 0, 0, name);
	popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
	CHECK(d.cls == POPMON_GPU_SKIP, "zero timestamps not skipped (class %d)", d.cls);
	put32(r, 0, 41); /* a kind libpopmon does not use */
	popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
	CHECK(d.cls == POPMON_GPU_SKIP, "unknown kind not skipped (class %d)", d.cls);
	/* Implausible records. */
	kernel_rec(r, 10, 0, 3000, 1000, name);
	popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
	CHECK(d.cls == POPMON_GPU_REJECT, "end before start not rejected");
	kernel_rec(r, 10, 2, 1000, 3000, name);
	popmon_gpu_decode(r, 0, 1ull << 62, 2, &d);
	CHECK(d.cls == POPMON_GPU_REJECT, "device past the device count not rejected");
	kernel_rec(r, 10, 0, 1000, 3000, name);
	popmon_gpu_decode(r, 2000, 1ull << 62, 2, &d);
	CHECK(d.cls == POPMON_GPU_REJECT, "start before the process not rejected");
	popmon_gpu_decode(r, 0, 2500, 2, &d);
	CHECK(d.cls == POPMON_GPU_REJECT, "end in the future not rejected");

	/* Through the buffers: rejected records are counted, with one warning. */
	popmon_proc.t0_ns = popmon_monotonic_ns();
	start_fake();
	uint64_t now = rec_now();
	kernel_rec(queue(), 10, 0, now - 3000, now - 1000, name);
	kernel_rec(queue(), 10, 0, now - 1000, now - 3000, name); /* rejected */
	kernel_rec(queue(), 10, 7, now - 3000, now - 1000, name); /* rejected: 2 devices */
	memcpy_rec(queue(), POPMON_CUPTI_MEMCPY_HTOH, 0, now - 3000, now - 1000, 1);
	popmon_gpu_flush();
	struct popmon_gpu_proc g;
	popmon_gpu_finish(&g, 0, UINT64_MAX, -1);
	CHECK_U64(g.rejected, 2);
	CHECK(warnings_with("gpu-rejected") == 1, "%d rejected-record warnings, want 1", warnings_with("gpu-rejected"));
	CHECK(g.nkernels == 1 && g.kernels[0].count == 1 && g.kernels[0].time_ns == 2000 &&
		      strcmp(g.kernels[0].name, "spin_kernel") == 0,
	      "kernel table: %lld rows, first %s x%lld", (long long)g.nkernels, g.kernels[0].name,
	      (long long)g.kernels[0].count);
}

/* 2. Unions: overlap, nesting, duplicates, out of order, eviction. */
static void scenario_unions(void)
{
	static struct popmon_gpu_union u;
	memset(&u, 0, sizeof u);
	popmon_gpu_union_add(&u, 100, 200, NULL, 0);
	popmon_gpu_union_add(&u, 150, 250, NULL, 0); /* overlap */
	popmon_gpu_union_add(&u, 160, 170, NULL, 0); /* nested */
	popmon_gpu_union_add(&u, 100, 200, NULL, 0); /* duplicate */
	popmon_gpu_union_add(&u, 400, 500, NULL, 0);
	popmon_gpu_union_add(&u, 300, 350, NULL, 0); /* out of order */
	popmon_gpu_union_add(&u, 240, 310, NULL, 0); /* bridges two */
	CHECK_U64(u.n, 2);
	CHECK_U64(popmon_gpu_union_value(&u, 1000), 350); /* [100,350) + [400,500) */
	memset(&u, 0, sizeof u);
	popmon_gpu_union_add(&u, 100, 200, NULL, 0);
	CHECK_U64(popmon_gpu_union_value(&u, 150), 50); /* clipped at t */
	CHECK_U64(popmon_gpu_union_value(&u, 140), 50); /* never goes back */

	/* 10^6 disjoint intervals: exact sums in a fixed window, and the gaps. */
	memset(&u, 0, sizeof u);
	struct popmon_gpu_gaps gaps = {0};
	const uint64_t N = 1000000, step = 3000000, len = 1000000; /* gaps of 2 ms */
	for (uint64_t i = 0; i < N; i++)
		popmon_gpu_union_add(&u, 1 + i * step, 1 + i * step + len, &gaps, 0);
	CHECK(u.n <= POPMON_GPU_WINDOW, "window holds %u intervals", u.n);
	CHECK_U64(popmon_gpu_union_value(&u, UINT64_MAX), N * len);
	popmon_gpu_union_gaps(&u, 0, UINT64_MAX, &gaps);
	CHECK_U64(gaps.count, N - 1);
	CHECK_U64(gaps.idle_ns, (N - 1) * (step - len));
	CHECK_U64(gaps.longest_ns, step - len);
	/* Out of order within the window still merges exactly. */
	popmon_gpu_union_add(&u, 1 + (N - 5) * step + len, 1 + (N - 4) * step, NULL, 0);
	CHECK_U64(popmon_gpu_union_value(&u, UINT64_MAX), N * len + (step - len));
	/* Older than the window: counted once, disjoint coverage. */
	memset(&u, 0, sizeof u);
	for (uint64_t i = 0; i < POPMON_GPU_WINDOW; i++)
		popmon_gpu_union_add(&u, 1000 + i * 10, 1005 + i * 10, NULL, 0);
	popmon_gpu_union_add(&u, 10, 20, NULL, 0);
	CHECK_U64(popmon_gpu_union_value(&u, UINT64_MAX), POPMON_GPU_WINDOW * 5 + 10);

	/* A - K: a copy under a kernel is hidden; one beside it is not. */
	popmon_proc.t0_ns = 0;
	start_fake();
	uint64_t now = rec_now();
	uint64_t b = now - 10000000;
	kernel_rec(queue(), 10, 0, b, b + 2000000, "k");
	memcpy_rec(queue(), POPMON_CUPTI_MEMCPY_HTOD, 0, b + 500000, b + 1500000, 100); /* hidden */
	memcpy_rec(queue(), POPMON_CUPTI_MEMCPY_DTOH, 0, b + 3000000, b + 4000000, 100); /* exposed */
	memset_rec(queue(), 1, b, b + 100, 8); /* device 1: a memset only */
	popmon_gpu_flush();
	uint64_t k[POPMON_GPU_DEVICES] = {0}, a[POPMON_GPU_DEVICES] = {0};
	popmon_gpu_read(now, k, a);
	CHECK_U64(k[0], 2000000);
	CHECK_U64(a[0], 3000000);
	CHECK_U64(k[1], 0);
	CHECK_U64(a[1], 100);
	struct popmon_gpu_proc g;
	popmon_gpu_finish(&g, 0, UINT64_MAX, -1);
	CHECK(g.copies[POPMON_GPU_CP_HTOD].count == 1 && g.copies[POPMON_GPU_CP_HTOD].bytes == 100 &&
		      g.copies[POPMON_GPU_CP_HTOD].time_ns == 1000000 && g.copies[POPMON_GPU_CP_DTOH].count == 1 &&
		      g.copies[POPMON_GPU_CP_SET].bytes == 8,
	      "copy table wrong");
	CHECK(g.dev[0].used == 3 && g.dev[1].used == 1 && g.dev[2].used == 0, "device use %lld %lld %lld",
	      (long long)g.dev[0].used, (long long)g.dev[1].used, (long long)g.dev[2].used);
	/* One gap of 1 ms on device 0 (kernel end to the exposed copy). */
	CHECK(g.dev[0].gaps == 1 && g.dev[0].idle_ns == 1000000, "device 0 gaps %lld idle %lld",
	      (long long)g.dev[0].gaps, (long long)g.dev[0].idle_ns);
}

/* 3. Clipping at snapshots: a straddling interval is split between two
 * region intervals; a late record is counted in the next one. */
static void scenario_clipping(void)
{
	popmon_proc.t0_ns = 0;
	start_fake();
	uint64_t base = rec_now() - 100000000; /* 100 ms ago */
	uint64_t k[POPMON_GPU_DEVICES] = {0}, a[POPMON_GPU_DEVICES] = {0};
	uint64_t t1 = base + 10000000, t2 = base + 20000000, t3 = base + 30000000;
	kernel_rec(queue(), 10, 0, base + 5000000, base + 15000000, "straddle"); /* across t1 */
	popmon_gpu_flush();
	popmon_gpu_read(t1, k, a);
	uint64_t k1 = k[0];
	CHECK_U64(k1, 5000000);
	popmon_gpu_read(t2, k, a);
	uint64_t k2 = k[0];
	CHECK_U64(k2 - k1, 5000000);
	/* A record of [base + 1 ms, base + 2 ms), before both snapshots,
	 * delivered after the one at t2. */
	kernel_rec(queue(), 10, 0, base + 1000000, base + 2000000, "late");
	popmon_gpu_flush();
	popmon_gpu_read(t3, k, a);
	CHECK_U64(k[0] - k2, 1000000); /* counted in the next interval */
	CHECK_U64(a[0], 11000000);
}

/* 4. The API state machine. */
static void scenario_api(void)
{
	struct popmon_thread *t = new_record(1, POPMON_ST_USEFUL);
	popmon_gpu_api(t, POPMON_CUPTI_API_ENTER, 100);   /* runtime */
	popmon_gpu_api(t, POPMON_CUPTI_API_ENTER, 110);   /* driver, nested */
	popmon_gpu_api(t, POPMON_CUPTI_API_EXIT, 190);
	CHECK(t->state == POPMON_ST_GPU_RUNTIME, "nested exit left GPU runtime (state %u)", t->state);
	popmon_gpu_api(t, POPMON_CUPTI_API_EXIT, 200);
	CHECK(t->state == POPMON_ST_USEFUL, "state %u after the call, want useful", t->state);
	CHECK_U64(t->acc[POPMON_ST_GPU_RUNTIME], 100);
	CHECK_U64(t->acc[POPMON_ST_USEFUL], 100);
	CHECK_U64(t->gpu_calls, 1); /* runtime -> driver counted once */

	/* A CUDA call inside MPI stays MPI, and the MPI state comes back. */
	t->prev_state = t->state;
	popmon_switch(t, POPMON_ST_MPI, 300);
	t->mpi_depth = 1;
	popmon_gpu_api(t, POPMON_CUPTI_API_ENTER, 310);
	CHECK(t->state == POPMON_ST_MPI, "CUDA call inside MPI left MPI (state %u)", t->state);
	popmon_gpu_api(t, POPMON_CUPTI_API_EXIT, 350);
	CHECK(t->state == POPMON_ST_MPI, "state %u after a CUDA call inside MPI, want MPI", t->state);
	popmon_switch(t, POPMON_ST_USEFUL, 400);
	t->mpi_depth = 0;
	CHECK_U64(t->acc[POPMON_ST_MPI], 100);
	CHECK_U64(t->acc[POPMON_ST_GPU_RUNTIME], 100);
	CHECK_U64(t->gpu_calls, 1);

	/* MPI inside a CUDA call: the call resumes in GPU runtime. */
	popmon_gpu_api(t, POPMON_CUPTI_API_ENTER, 500);
	t->prev_state = t->state;
	popmon_switch(t, POPMON_ST_MPI, 520);
	popmon_switch(t, t->prev_state, 540);
	popmon_gpu_api(t, POPMON_CUPTI_API_EXIT, 600);
	CHECK(t->state == POPMON_ST_USEFUL, "state %u, want useful", t->state);
	CHECK_U64(t->acc[POPMON_ST_GPU_RUNTIME], 180);
	CHECK_U64(t->gpu_calls, 2);

	/* An exit whose enter was not seen changes nothing. */
	popmon_gpu_api(t, POPMON_CUPTI_API_EXIT, 700);
	CHECK(t->state == POPMON_ST_USEFUL && t->gpu_depth == 0, "stray exit changed the thread");

	/* Threads that are not CPUs of the model, and unknown threads. */
	struct popmon_thread *u = new_record(0, POPMON_ST_USEFUL);
	popmon_gpu_api(u, POPMON_CUPTI_API_ENTER, 100);
	popmon_gpu_api(u, POPMON_CUPTI_API_EXIT, 200);
	CHECK(u->acc[POPMON_ST_GPU_RUNTIME] == 0 && u->gpu_calls == 0 && u->gpu_depth == 0,
	      "unaccounted thread was accounted");
	popmon_gpu_api(NULL, POPMON_CUPTI_API_ENTER, 100);

	/* Through CUPTI's callback: RUNTIME then DRIVER domains. */
	start_fake();
	struct popmon_thread *c = new_record(1, POPMON_ST_USEFUL);
	c->last = popmon_now();
	api(POPMON_CUPTI_CB_DOMAIN_RUNTIME_API, POPMON_CUPTI_API_ENTER);
	api(POPMON_CUPTI_CB_DOMAIN_DRIVER_API, POPMON_CUPTI_API_ENTER);
	CHECK(c->state == POPMON_ST_GPU_RUNTIME && c->gpu_depth == 2, "callback: state %u depth %u", c->state,
	      c->gpu_depth);
	api(POPMON_CUPTI_CB_DOMAIN_DRIVER_API, POPMON_CUPTI_API_EXIT);
	api(POPMON_CUPTI_CB_DOMAIN_RUNTIME_API, POPMON_CUPTI_API_EXIT);
	CHECK(c->state == POPMON_ST_USEFUL && c->gpu_calls == 1, "callback: state %u calls %llu", c->state,
	      (unsigned long long)c->gpu_calls);
}

/* 5. Devices: ordinal -> UUID and name; records past the table rejected. */
static void scenario_devices(void)
{
	fake_devices = 20; /* more than POPMON_GPU_DEVICES */
	popmon_proc.t0_ns = 0;
	popmon_live = calloc(1, sizeof *popmon_live); /* the live file's header */
	start_fake();
	uint64_t now = rec_now();
	kernel_rec(queue(), 10, 0, now - 3000, now - 2000, "a");
	kernel_rec(queue(), 10, 1, now - 3000, now - 2000, "a");
	kernel_rec(queue(), 10, 15, now - 3000, now - 2000, "a");
	kernel_rec(queue(), 10, 16, now - 3000, now - 2000, "a"); /* past the table */
	popmon_gpu_flush();
	struct popmon_gpu_proc g;
	popmon_gpu_finish(&g, 0, UINT64_MAX, -1);
	CHECK(strcmp(g.dev[0].uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f") == 0, "device 0 UUID %s",
	      g.dev[0].uuid);
	CHECK(strcmp(g.dev[1].uuid, "GPU-20212223-2425-2627-2829-2a2b2c2d2e2f") == 0, "device 1 UUID %s",
	      g.dev[1].uuid);
	CHECK(strcmp(g.dev[1].name, "Fake GPU 1") == 0, "device 1 name %s", g.dev[1].name);
	CHECK(g.dev[0].used == 1 && g.dev[1].used == 1 && g.dev[15].used == 1, "devices not used");
	CHECK_U64(g.rejected, 1);
	/* What the live file's readers see. */
	CHECK(popmon_live->gpu_active == 1 && popmon_live->gpu_used == (1u | 2u | 1u << 15) &&
		      popmon_live->gpu_seq % 2 == 0 && popmon_live->gpu_seq > 0,
	      "live: active %u used %#x seq %llu", popmon_live->gpu_active, popmon_live->gpu_used,
	      (unsigned long long)popmon_live->gpu_seq);
	CHECK(popmon_live->gpu_k_now[1] == 1000 && popmon_live->gpu_a_now[15] == 1000 && popmon_live->gpu_now_ns >= now,
	      "live: K %llu A %llu", (unsigned long long)popmon_live->gpu_k_now[1],
	      (unsigned long long)popmon_live->gpu_a_now[15]);
	CHECK(strcmp(popmon_live->gpu_uuid[1], "GPU-20212223-2425-2627-2829-2a2b2c2d2e2f") == 0, "live UUID %s",
	      popmon_live->gpu_uuid[1]);
	CHECK(g.nkernels == 3, "%lld kernel rows, want 3 (same name, 3 devices)", (long long)g.nkernels);
	CHECK(g.driver_version == 13000 && g.cupti_version == 130001 && g.status == POPMON_GPU_MEASURED,
	      "versions %lld %lld status %lld", (long long)g.driver_version, (long long)g.cupti_version,
	      (long long)g.status);
	/* The test hook for one GPU shared by ranks. */
	setenv("POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK", "1", 1);
	popmon_gpu_finish(&g, 0, UINT64_MAX, 3);
	CHECK(strcmp(g.dev[0].uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f-r3") == 0, "rank-suffixed UUID %s",
	      g.dev[0].uuid);
}

/* 6. Reasons (argument: missing, 15, 35, 39, 27, off, on-nocuda, auto-nocuda). */
static void scenario_reasons(const char *arg)
{
	struct popmon_gpu_proc g;
	if (strcmp(arg, "missing") == 0) {
		setenv("POPMON_CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
		setenv("POPMON_GPU", "on", 1);
		InitializeInjection(); /* the real backend: dlopen fails */
		CHECK(popmon_gpu_active == 0, "active without CUPTI");
		popmon_gpu_finish(&g, 0, 1, -1);
		CHECK(g.status == POPMON_GPU_UNMEASURED && strstr(g.reason, "no usable CUPTI library found") &&
			      strstr(g.reason, "/nonexistent/libcupti.so"),
		      "reason: %s", g.reason);
		CHECK(warnings_with("gpu") == 1, "%d warnings in mode on, want 1", warnings_with("gpu"));
		/* The warning holds the whole reason (base/warn.c's lines are 255 bytes). */
		setenv("POPMON_CUPTI_LIBRARY", "", 1);
		char buf[256];
		popmon_gpu_reason(buf, sizeof buf, POPMON_GPU_WHY_NO_CUPTI, 0,
				  "libcupti.so, .so.13, .so.12, .so.11.8, $CUDA_HOME, /usr/local/cuda");
		CHECK(strlen("GPU measurement requested but ") + strlen(buf) < 255 &&
			      strstr(buf, "set POPMON_CUPTI_LIBRARY to a libcupti.so") != NULL,
		      "reason too long for one warning (%zu bytes): %s", strlen(buf), buf);
		char longd[300];
		memset(longd, 'x', sizeof longd - 1);
		longd[sizeof longd - 1] = '\0';
		for (int why = POPMON_GPU_WHY_NO_CUDA; why <= POPMON_GPU_WHY_NO_CLOCK; why++) {
			static const int errs[] = {15, 39, 35, 27, 14, 99};
			for (size_t e = 0; e < sizeof errs / sizeof errs[0]; e++) {
				popmon_gpu_reason(buf, sizeof buf, why, errs[e], longd);
				CHECK(strlen("GPU measurement requested but ") + strlen(buf) < 255,
				      "reason %d/%d too long for one warning (%zu bytes)", why, errs[e], strlen(buf));
			}
		}
		return;
	}
	if (strcmp(arg, "off") == 0) {
		setenv("POPMON_GPU", "off", 1);
		popmon_gpu_backend = &fake;
		InitializeInjection();
		CHECK(fake_calls == 0, "mode off called CUPTI %d times", fake_calls);
		popmon_gpu_finish(&g, 0, 1, -1);
		CHECK(g.status == POPMON_GPU_UNUSED && g.mode == 0 && strstr(g.reason, "--gpu off"), "off: %s",
		      g.reason);
		CHECK(nwarned == 0, "mode off warned");
		return;
	}
	if (strcmp(arg, "on-nocuda") == 0 || strcmp(arg, "auto-nocuda") == 0) {
		int on = arg[1] == 'n';
		setenv("POPMON_GPU", on ? "on" : "auto", 1);
		popmon_gpu_finish(&g, 0, 1, -1); /* never injected, no libcuda.so.1 loaded */
		CHECK(g.status == POPMON_GPU_UNUSED && strcmp(g.reason, "the program did not use CUDA or HIP") == 0,
		      "no CUDA: status %lld reason %s", (long long)g.status, g.reason);
		popmon_gpu_finish(&g, 0, 1, -1);
		CHECK(warnings_with("gpu") == on, "%d warnings, want %d", warnings_with("gpu"), on);
		if (on)
			CHECK(strstr(warned[0], "GPU measurement requested but the program did not use CUDA") != NULL,
			      "warning: %s", warned[0]);
		return;
	}
	int err = atoi(arg);
	static const struct {
		int err;
		const char *want;
	} texts[] = {
		{15, "CUPTI_ERROR_NOT_INITIALIZED"},
		{35, "NVreg_RestrictProfilingToAdminUsers=0"},
		{39, "another profiler in the program already uses CUPTI"},
		{27, "does not support CUPTI activity tracing"},
	};
	const char *want = NULL;
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		if (texts[i].err == err)
			want = texts[i].want;
	CHECK(want != NULL, "unknown reason scenario %s", arg);
	if (!want)
		return;
	fake_subscribe_rc = err;
	setenv("POPMON_GPU", "auto", 1);
	popmon_gpu_backend = &fake;
	InitializeInjection();
	CHECK(popmon_gpu_active == 0, "active after cuptiSubscribe failed");
	popmon_gpu_finish(&g, 0, 1, -1);
	CHECK(g.status == POPMON_GPU_UNMEASURED && strstr(g.reason, want) && strstr(g.reason, "cuptiSubscribe"),
	      "error %d: %s", err, g.reason);
	CHECK(nwarned == 0, "mode auto warned: %s", warned[0]);
	/* The other texts (doctor shows the same). */
	char buf[256];
	popmon_gpu_reason(buf, sizeof buf, POPMON_GPU_WHY_TAKEN, 0, "/opt/nsys/libToolsInjection64.so");
	CHECK(strstr(buf, "another CUDA tool is injected (CUDA_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so)") !=
		      NULL,
	      "taken: %s", buf);
	popmon_gpu_reason(buf, sizeof buf, POPMON_GPU_WHY_NOT_INJECTED, 0, NULL);
	CHECK(strstr(buf, "CUDA_INJECTION64_PATH") != NULL, "not injected: %s", buf);
}

/* 7. The buffer pool. arg "" (CUPTI >= 12.9): the cap reached, requests
 * refused (CUPTI drops and counts), one warning with the number and the
 * cap, buffers reusable once returned. "old" (CUPTI 12.8): never no buffer,
 * a discard buffer at the cap whose records are lost and counted. "grow":
 * the pool's thread keeps a reserve as threads hold buffers, nothing is
 * allocated on a requesting thread, completed buffers are processed off the
 * requesting thread. */
static void scenario_pool(const char *arg)
{
	popmon_proc.t0_ns = 0;
	int old = strcmp(arg, "old") == 0, grow = strcmp(arg, "grow") == 0;
	if (old)
		fake_version = 26;
	if (!grow)
		setenv("POPMON_GPU_BUFFER_MB", "8", 1); /* two buffers */
	start_fake();
	size_t size, max;
	if (grow) {
		/* Twelve threads' buffers held at once: past the 8 made at the
		 * start; the worker keeps as many free as are held. */
		uint8_t *held[12];
		for (int i = 0; i < 12; i++) {
			fake_req(&held[i], &size, &max);
			CHECK(held[i] != NULL && size == POPMON_GPU_BUFFER_SIZE, "buffer %d not given", i);
			struct timespec ts = {0, 20 * 1000000L};
			nanosleep(&ts, NULL); /* a launch rate the worker keeps up with */
		}
		struct popmon_gpu_pool_stats ps;
		popmon_gpu_pool_stats(&ps);
		CHECK(ps.urgent == 0 && ps.refused == 0, "allocated on the requesting thread %llu, refused %llu",
		      (unsigned long long)ps.urgent, (unsigned long long)ps.refused);
		CHECK(ps.allocated >= 16 && ps.peak_held == 12, "allocated %llu, peak held %llu",
		      (unsigned long long)ps.allocated, (unsigned long long)ps.peak_held);
		/* A completed buffer is processed by the pool's thread. */
		uint64_t rnow = popmon_monotonic_ns();
		for (int i = 0; i < 100; i++)
			kernel_rec(held[0] + (size_t)i * REC, 10, 0, rnow - 100000 + (uint64_t)i * 1000,
				   rnow - 100000 + (uint64_t)i * 1000 + 500, "k");
		fake_done(NULL, 0, held[0], POPMON_GPU_BUFFER_SIZE, 100 * REC);
		struct timespec ts = {0, 300 * 1000000L};
		nanosleep(&ts, NULL);
		struct popmon_gpu_proc g;
		popmon_gpu_finish(&g, 0, UINT64_MAX, -1);
		CHECK(g.nkernels == 1 && g.kernels[0].count == 100 && g.kernels[0].time_ns == 100 * 500,
		      "kernels %lld, count %lld, time %lld", (long long)g.nkernels, (long long)g.kernels[0].count,
		      (long long)g.kernels[0].time_ns);
		CHECK_U64(g.dropped, 0);
		CHECK(nwarned == 0, "warned: %s", nwarned ? warned[0] : "");
		return;
	}
	uint8_t *held[4];
	for (int i = 0; i < 4; i++)
		fake_req(&held[i], &size, &max);
	CHECK(held[0] != NULL && held[1] != NULL, "the cap's two buffers not given");
	struct popmon_gpu_pool_stats ps;
	popmon_gpu_pool_stats(&ps);
	if (old) {
		CHECK(held[2] != NULL && held[3] != NULL, "a CUPTI older than 12.9 was given no buffer");
		CHECK(ps.discarded == 2 && ps.refused == 0, "discarded %llu, refused %llu",
		      (unsigned long long)ps.discarded, (unsigned long long)ps.refused);
		/* 10 records land in a discard buffer: lost, counted, never accounted. */
		uint64_t rnow = popmon_monotonic_ns();
		for (int i = 0; i < 10; i++)
			kernel_rec(held[2] + (size_t)i * REC, 10, 0, rnow - 1000, rnow - 500, "lost");
		fake_done(NULL, 0, held[2], POPMON_GPU_BUFFER_SIZE, 10 * REC);
		fake_done(NULL, 0, held[3], POPMON_GPU_BUFFER_SIZE, 0);
	} else {
		CHECK(held[2] == NULL && held[3] == NULL, "buffers past the cap");
		CHECK(ps.refused == 2 && ps.discarded == 0, "refused %llu, discarded %llu",
		      (unsigned long long)ps.refused, (unsigned long long)ps.discarded);
	}
	CHECK(nwarned == 0, "warned at request time (on the program's thread): %s", nwarned ? warned[0] : "");
	fake_dropped = 5; /* what CUPTI says it dropped */
	for (int i = 0; i < 2; i++)
		fake_done(NULL, 0, held[i], POPMON_GPU_BUFFER_SIZE, 0); /* returned empty */
	struct popmon_gpu_proc g;
	popmon_gpu_finish(&g, 0, UINT64_MAX, -1);
	CHECK_U64(g.dropped, old ? 5 + 10 : 5);
	CHECK(g.nkernels == 0, "a discarded record was accounted");
	CHECK(warnings_with("gpu-dropped") == 1, "%d dropped warnings, want 1", warnings_with("gpu-dropped"));
	const char *want = old ? "15 GPU activity records were lost: the activity buffers reached their cap of 8 MiB"
			       : "5 GPU activity records were lost: the activity buffers reached their cap of 8 MiB";
	CHECK(nwarned && strstr(warned[0], want), "warning: %s", nwarned ? warned[0] : "");
	/* The pool is free again (the pool's thread zeroes returned buffers). */
	struct timespec ts = {0, 300 * 1000000L};
	nanosleep(&ts, NULL);
	uint8_t *b = NULL;
	fake_req(&b, &size, &max);
	CHECK(b != NULL, "pool not released");
	int zero = 1;
	for (size_t i = 0; b && i < 16 * REC; i++)
		zero &= b[i] == 0;
	CHECK(zero, "a returned buffer was handed out again without being zeroed");
}

/* 8. cuptiActivityFlushAll delivers buffers synchronously while the caller
 * holds the region lock: the buffer path must not take it. */
static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "FAIL deadlock: the flush did not return\n";
	if (write(1, msg, sizeof msg - 1) < 0) {
		/* nothing */
	}
	_exit(1);
}

static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;

static void *other_thread(void *p)
{
	(void)p;
	/* Another thread snapshots meanwhile (it takes the GPU lock only). */
	uint64_t k[POPMON_GPU_DEVICES] = {0}, a[POPMON_GPU_DEVICES] = {0};
	for (int i = 0; i < 1000; i++)
		popmon_gpu_read(rec_now(), k, a);
	return NULL;
}

static void scenario_reentrant(void)
{
	signal(SIGALRM, on_alarm);
	alarm(10);
	popmon_proc.t0_ns = 0;
	start_fake();
	uint64_t now = rec_now();
	for (int i = 0; i < 1000; i++)
		kernel_rec(queue(), 10, 0, now - 5000000 + (uint64_t)i * 1000, now - 5000000 + (uint64_t)i * 1000 + 500,
			   "k");
	pthread_t th;
	pthread_create(&th, NULL, other_thread, NULL);
	pthread_mutex_lock(&region_lock);
	flush_must_not_hold = &region_lock;
	popmon_gpu_flush();
	popmon_gpu_flush(); /* nothing pending */
	flush_must_not_hold = NULL;
	uint64_t k[POPMON_GPU_DEVICES] = {0}, a[POPMON_GPU_DEVICES] = {0};
	popmon_gpu_read(now, k, a);
	pthread_mutex_unlock(&region_lock);
	pthread_join(th, NULL);
	CHECK_U64(k[0], 1000 * 500);
	/* A flush from the context-destroy callback (inside the driver). */
	kernel_rec(queue(), 10, 0, now - 100, now - 50, "k");
	uint8_t res[16] = {0};
	fake_cb(NULL, POPMON_CUPTI_CB_DOMAIN_RESOURCE, POPMON_CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, res);
	CHECK(npending == 0, "context destruction did not flush");
	alarm(0);
}

/* A record in progress holds its buffer back from unforced flushes; the
 * last flush (at finish, or a context's end) is forced and delivers the
 * finished records beside it. */
static void scenario_forced(void)
{
	popmon_proc.t0_ns = popmon_monotonic_ns();
	start_fake();
	uint64_t now = rec_now();
	kernel_rec(queue(), 10, 0, now - 3000, now - 1000, "spin_kernel");
	in_progress = 1;
	popmon_gpu_flush();
	CHECK(last_flush_flag == 0 && npending == 1, "a region's flush: flag %u, %zu pending; want 0 and 1",
	      last_flush_flag, npending);
	struct popmon_gpu_proc g;
	popmon_gpu_finish(&g, 0, UINT64_MAX, -1);
	CHECK(last_flush_flag == POPMON_CUPTI_FLUSH_FORCED && npending == 0, "the last flush: flag %u, %zu pending",
	      last_flush_flag, npending);
	CHECK(g.nkernels == 1 && g.kernels[0].count == 1 && g.kernels[0].time_ns == 2000,
	      "kernel table after the last flush: %lld rows", (long long)g.nkernels);
	/* The context-destroy callback's flush is the last one too. */
	kernel_rec(queue(), 10, 0, now - 100, now - 50, "k");
	uint8_t res[16] = {0};
	fake_cb(NULL, POPMON_CUPTI_CB_DOMAIN_RESOURCE, POPMON_CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, res);
	CHECK(last_flush_flag == POPMON_CUPTI_FLUSH_FORCED && npending == 0,
	      "context destruction: flag %u, %zu pending", last_flush_flag, npending);
	in_progress = 0;
}

/* 9. The clock: the registered callback is CLOCK_MONOTONIC; without it the
 * offset to CUPTI's own clock (CLOCK_REALTIME here) is calibrated. */
static void scenario_clock(const char *arg)
{
	popmon_proc.t0_ns = 0;
	if (strcmp(arg, "calibrated") == 0) {
		fake_ts_rc = 1;
		realtime_clock = 1;
	}
	start_fake();
	if (!realtime_clock) {
		CHECK(fake_ts != NULL, "no timestamp callback registered");
		if (fake_ts) {
			uint64_t a = popmon_monotonic_ns(), v = fake_ts(), b = popmon_monotonic_ns();
			CHECK(v >= a && v <= b, "timestamp callback %llu not within [%llu, %llu] (CLOCK_MONOTONIC)",
			      (unsigned long long)v, (unsigned long long)a, (unsigned long long)b);
		}
	}
	uint64_t rnow = rec_now(), mnow = popmon_monotonic_ns();
	kernel_rec(queue(), 10, 0, rnow - 20000000, rnow - 10000000, "k"); /* 20 ms to 10 ms ago */
	popmon_gpu_flush();
	uint64_t k[POPMON_GPU_DEVICES] = {0}, a[POPMON_GPU_DEVICES] = {0};
	popmon_gpu_read(mnow - 15000000, k, a); /* 5 ms of it before then, on CLOCK_MONOTONIC */
	uint64_t want = 5000000, tol = 1000000;
	CHECK(k[0] + tol >= want && k[0] <= want + tol, "K at the snapshot %llu, want %llu +- %llu",
	      (unsigned long long)k[0], (unsigned long long)want, (unsigned long long)tol);
	struct popmon_gpu_proc g;
	popmon_gpu_finish(&g, 0, UINT64_MAX, -1);
	CHECK(g.calibrated == realtime_clock, "calibrated %lld, want %d", (long long)g.calibrated, realtime_clock);
	CHECK_U64(g.rejected, 0);
}

/* The device counters' accumulator (gpu_counters.c): samples attributed
 * to snapshots by time. */
static void scenario_counters(void)
{
	static struct popmon_gc_dev d;
	uint64_t v[POPMON_GC_N];
	double inc[POPMON_GC_NQ] = {1000, 2000, 4000, 8000, 100, 200};
	popmon_gc_add(&d, 1000, 2000, inc); /* [1000, 2000) */
	popmon_gc_add(&d, 2000, 3000, inc);
	popmon_gc_value(&d, 500, v);
	CHECK(v[POPMON_GC_INST] == 0 && v[POPMON_GC_SAMPLED] == 0, "before the samples: %llu, %llu",
	      (unsigned long long)v[POPMON_GC_INST], (unsigned long long)v[POPMON_GC_SAMPLED]);
	popmon_gc_value(&d, 2500, v); /* one sample and half the next */
	CHECK_U64(v[POPMON_GC_INST], 1500);
	CHECK_U64(v[POPMON_GC_ACTIVE], 3000);
	CHECK_U64(v[POPMON_GC_DRAM_WR], 300);
	CHECK_U64(v[POPMON_GC_SAMPLED], 1500);
	popmon_gc_value(&d, 2400, v); /* earlier than a value returned: never goes back */
	CHECK_U64(v[POPMON_GC_INST], 1500);
	popmon_gc_value(&d, 9000, v);
	CHECK_U64(v[POPMON_GC_INST], 2000);
	CHECK_U64(v[POPMON_GC_SAMPLED], 2000);
	/* A full ring: every older sample folded exactly. */
	static struct popmon_gc_dev e;
	double one[POPMON_GC_NQ] = {1, 1, 1, 1, 1, 1};
	for (uint64_t i = 0; i < 3 * POPMON_GC_RING; i++)
		popmon_gc_add(&e, 10 * i, 10 * i + 10, one);
	popmon_gc_value(&e, 10 * 3 * POPMON_GC_RING - 5, v);
	CHECK(v[POPMON_GC_INST] == 3 * POPMON_GC_RING - 1 || v[POPMON_GC_INST] == 3 * POPMON_GC_RING,
	      "after %d samples, half the last: %llu", 3 * POPMON_GC_RING, (unsigned long long)v[POPMON_GC_INST]);
	CHECK_U64(v[POPMON_GC_SAMPLED], 10 * 3 * POPMON_GC_RING - 5);
	/* Hostile increments count 0. */
	static struct popmon_gc_dev h;
	double bad[POPMON_GC_NQ] = {-5, 0.0 / 0.0, 1e308 * 10, 7, 0, 0};
	popmon_gc_add(&h, 0, 10, bad);
	popmon_gc_value(&h, 10, v);
	CHECK(v[POPMON_GC_INST] == 0 && v[POPMON_GC_ACTIVE] == 0 && v[POPMON_GC_ELAPSED] == 0 && v[POPMON_GC_WARPS] == 7,
	      "hostile increments: %llu %llu %llu %llu", (unsigned long long)v[0], (unsigned long long)v[1],
	      (unsigned long long)v[2], (unsigned long long)v[3]);
}

/* NCCL's kernels by name, plain or mangled, are device communication;
 * other kernels, and names that only contain the words, are not. */
static void scenario_commkernel(void)
{
	static const struct {
		const char *name;
		int comm;
	} cases[] = {
		{"ncclKernel_AllReduce_RING_LL_Sum_float", 1},
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1},
		{"ncclDevKernel_Generic", 1},
		{"_Z29ncclDevKernel_Generic_4ncclDevKernelArgs4", 1},
		{"_Z24ncclKernel_SendRecv_RING_LL_Sum_int8_tP11ncclDevComm", 1},
		{"_ZN4nccl13ncclDevKernelEv", 0},
		{"spin_kernel", 0},
		{"my_ncclKernel", 0},
		{"nccl_reduce", 0},
		{"_Z11spin_kernely", 0},
		{"", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK(popmon_gpu_comm_kernel(cases[i].name) == cases[i].comm, "%s: communication %d, want %d",
		      cases[i].name, popmon_gpu_comm_kernel(cases[i].name), cases[i].comm);
}

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "";
	if (strcmp(s, "decode") == 0)
		scenario_decode();
	else if (strcmp(s, "unions") == 0)
		scenario_unions();
	else if (strcmp(s, "clipping") == 0)
		scenario_clipping();
	else if (strcmp(s, "api") == 0)
		scenario_api();
	else if (strcmp(s, "devices") == 0)
		scenario_devices();
	else if (strcmp(s, "reasons") == 0)
		scenario_reasons(arg);
	else if (strcmp(s, "pool") == 0)
		scenario_pool(arg);
	else if (strcmp(s, "reentrant") == 0)
		scenario_reentrant();
	else if (strcmp(s, "clock") == 0)
		scenario_clock(arg);
	else if (strcmp(s, "counters") == 0)
		scenario_counters();
	else if (strcmp(s, "commkernel") == 0)
		scenario_commkernel();
	else if (strcmp(s, "forced") == 0)
		scenario_forced();
	else {
		printf("FAIL unknown scenario %s\n", s);
		return 2;
	}
	if (failures)
		return 1;
	printf("ok %s%s%s\n", s, *arg ? " " : "", arg);
	return 0;
}
