/* smoke.c: a standalone test of the fake CUDA stack, with no popmon in it.
 *
 * Built twice (build.sh): as libsmoke.so, an injection library that uses
 * libcupti the way libpopmon does (dlopen + dlsym, timestamp callback on
 * CLOCK_MONOTONIC, one subscriber on the RUNTIME, DRIVER and RESOURCE
 * domains, kernels/copies/memsets as activities, records read at their
 * documented offsets), and, with -DSMOKE_MAIN, as the program `smoke` that
 * links libsmoke.so (as popmon's library is preloaded) and drives the fake
 * runtime:
 *
 *   CUDA_INJECTION64_PATH=OUT/libsmoke.so POPMON_CUPTI_LIBRARY=OUT/libcupti.so \
 *   FAKECUDA_DEVICES=2 OUT/smoke        prints "ok" and exits 0, or names the
 *                                       first check that failed and exits 1
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the library part records, read by the program part. */
struct smoke_record {
	uint32_t kind, device, stream, correlation, extra; /* extra: copyKind / srcDeviceId */
	uint64_t start, end, bytes;
	const char *name;
};
struct smoke_state {
	int injections, contexts_created, contexts_destroyed;
	void *context;
	int enter[4], exit[4]; /* per domain */
	int depth_runtime, driver_outside_runtime, correlation_mismatch;
	uint32_t runtime_correlation;
	int nrecords, starve;
	struct smoke_record records[256];
};

struct smoke_state *smoke_state(void);
int smoke_flush(void);
size_t smoke_dropped(void);
uint64_t smoke_monotonic_ns(void);

#ifndef SMOKE_MAIN /* ---- the injection library ------------------------- */

static struct smoke_state st;

struct smoke_state *smoke_state(void)
{
	return &st;
}

uint64_t smoke_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

typedef void (*cb_t)(void *, int, uint32_t, const void *);
static struct {
	int (*subscribe)(void **, cb_t, void *);
	int (*enable_domain)(uint32_t, void *, int);
	int (*enable_callback)(uint32_t, void *, int, uint32_t);
	int (*register_callbacks)(void (*)(uint8_t **, size_t *, size_t *),
				  void (*)(void *, uint32_t, uint8_t *, size_t, size_t));
	int (*register_timestamp)(uint64_t (*)(void));
	int (*enable)(int);
	int (*flush_all)(uint32_t);
	int (*next_record)(uint8_t *, size_t, void **);
	int (*dropped)(void *, uint32_t, size_t *);
} cupti;

static void callback(void *userdata, int domain, uint32_t cbid, const void *data)
{
	(void)userdata;
	const uint8_t *d = data;
	if (domain == 3) {
		void *ctx;
		memcpy(&ctx, d, sizeof ctx); /* CUpti_ResourceData.context @0 */
		if (cbid == 1) {
			st.contexts_created++;
			st.context = ctx;
		} else if (cbid == 2 && ctx == st.context) {
			st.contexts_destroyed++;
		}
		return;
	}
	uint32_t site, corr;
	memcpy(&site, d, 4); /* callbackSite @0 */
	memcpy(&corr, d + 64, 4); /* correlationId @64 */
	if (domain < 1 || domain > 2 || site > 1)
		return;
	(site == 0 ? st.enter : st.exit)[domain]++;
	if (domain == 2) {
		if (site == 0) {
			st.depth_runtime++;
			st.runtime_correlation = corr;
		} else if (st.depth_runtime > 0) {
			st.depth_runtime--;
			if (corr != st.runtime_correlation)
				st.correlation_mismatch++;
		}
	} else if (st.depth_runtime == 0) {
		st.driver_outside_runtime++;
	}
}

static uint8_t buffers[4][8192];
static int next_buffer;

static void requested(uint8_t **buf, size_t *size, size_t *max)
{
	*max = 0;
	if (st.starve) {
		*buf = NULL;
		*size = 0;
		return;
	}
	*buf = buffers[next_buffer++ % 4];
	*size = sizeof buffers[0];
}

static uint32_t u32(const uint8_t *r, size_t off)
{
	uint32_t v;
	memcpy(&v, r + off, 4);
	return v;
}

static uint64_t u64(const uint8_t *r, size_t off)
{
	uint64_t v;
	memcpy(&v, r + off, 8);
	return v;
}

static void completed(void *ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	void *rec = NULL;
	while (cupti.next_record(buf, valid, &rec) == 0 && st.nrecords < 256) {
		const uint8_t *r = rec;
		struct smoke_record *s = &st.records[st.nrecords++];
		memset(s, 0, sizeof *s);
		s->kind = u32(r, 0);
		s->start = u64(r, 16);
		s->end = u64(r, 24);
		if (s->kind == 3 || s->kind == 10) {
			s->device = u32(r, 40);
			s->stream = u32(r, 48);
			s->correlation = u32(r, 92);
			memcpy(&s->name, r + 104, sizeof s->name);
		} else {
			s->device = u32(r, 32);
			s->stream = u32(r, 40);
			s->bytes = u64(r, 8);
			s->extra = s->kind == 22 ? u32(r, 44) : r[4];
			if (s->kind != 22)
				s->correlation = u32(r, 44);
		}
	}
}

int smoke_flush(void)
{
	return cupti.flush_all ? cupti.flush_all(0) : -1;
}

size_t smoke_dropped(void)
{
	size_t n = 0;
	if (cupti.dropped)
		cupti.dropped(NULL, 0, &n);
	return n;
}

#define SYM(field, name)                                                      \
	do {                                                                  \
		*(void **)&cupti.field = dlsym(h, name);                     \
		if (!cupti.field) {                                           \
			fprintf(stderr, "smoke: %s missing\n", name);        \
			return 1;                                             \
		}                                                             \
	} while (0)

int InitializeInjection(void)
{
	st.injections++;
	const char *lib = getenv("POPMON_CUPTI_LIBRARY");
	void *h = dlopen(lib ? lib : "libcupti.so", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "smoke: %s\n", dlerror());
		return 1;
	}
	SYM(subscribe, "cuptiSubscribe");
	SYM(enable_domain, "cuptiEnableDomain");
	SYM(enable_callback, "cuptiEnableCallback");
	SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
	SYM(register_timestamp, "cuptiActivityRegisterTimestampCallback");
	SYM(enable, "cuptiActivityEnable");
	SYM(flush_all, "cuptiActivityFlushAll");
	SYM(next_record, "cuptiActivityGetNextRecord");
	SYM(dropped, "cuptiActivityGetNumDroppedRecords");
	void *sub;
	if (cupti.register_timestamp(smoke_monotonic_ns) != 0 ||
	    cupti.register_callbacks(requested, completed) != 0 ||
	    cupti.subscribe(&sub, callback, NULL) != 0 || cupti.enable_domain(1, sub, 1) != 0 ||
	    cupti.enable_domain(1, sub, 2) != 0 || cupti.enable_callback(1, sub, 3, 1) != 0 ||
	    cupti.enable_callback(1, sub, 3, 2) != 0)
		return 1;
	const int kinds[] = { 10, 1, 2, 22 };
	for (int i = 0; i < 4; i++)
		if (cupti.enable(kinds[i]) != 0)
			return 1;
	return 0;
}

#else /* ---- the program ------------------------------------------------ */

#include "fakecuda.h"

int cuDriverGetVersion(int *);
int cuDeviceGetCount(int *);
int cuDeviceGetUuid_v2(unsigned char *, int);
int cuDeviceGetName(char *, int, int);

static int failed;
#define CHECK(cond, ...)                                       \
	do {                                                   \
		if (!(cond)) {                                 \
			fprintf(stderr, "smoke: FAIL %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);          \
			fputc('\n', stderr);                   \
			failed = 1;                            \
		}                                              \
	} while (0)

static const struct smoke_record *find(const struct smoke_state *s, uint32_t kind)
{
	for (int i = 0; i < s->nrecords; i++)
		if (s->records[i].kind == kind)
			return &s->records[i];
	return NULL;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

int main(void)
{
	struct smoke_state *s = smoke_state();
	CHECK(fakecuda_set_device(1) == 0, "need FAKECUDA_DEVICES=2");
	CHECK(s->injections == 1, "InitializeInjection called %d times", s->injections);
	int count = 0, version = 0;
	unsigned char uuid[16];
	char name[64];
	CHECK(cuDeviceGetCount(&count) == 0 && count == 2, "%d devices", count);
	CHECK(cuDriverGetVersion(&version) == 0 && version == 13000, "driver %d", version);
	CHECK(cuDeviceGetUuid_v2(uuid, 1) == 0 && memcmp(uuid, "fakecuda", 8) == 0 && uuid[15] == 1,
	      "uuid of device 1");
	CHECK(cuDeviceGetName(name, sizeof name, 1) == 0 && strcmp(name, "Fake GPU 1") == 0, "%s",
	      name);

	uint64_t t0 = smoke_monotonic_ns();
	fakecuda_launch("k1", 30, 0);
	fakecuda_memcpy(1000, 20, FAKECUDA_HTOD, 1, 1, 0);
	fakecuda_memset(500, 5, 2);
	fakecuda_memcpy(2000, 10, FAKECUDA_PTOP, 1, 3, 0);
	smoke_flush(); /* nothing has ended yet: nothing delivered */
	CHECK(s->nrecords == 0, "%d records delivered before the work ended", s->nrecords);
	CHECK(s->contexts_created == 1 && s->context != NULL, "context created %d times",
	      s->contexts_created);
	fakecuda_sync();
	uint64_t t1 = smoke_monotonic_ns();
	CHECK(ms(t1 - t0) >= 30 && ms(t1 - t0) < 60, "sync returned after %.1f ms", ms(t1 - t0));
	smoke_flush();
	CHECK(s->nrecords == 4, "%d records", s->nrecords);
	const struct smoke_record *k = find(s, 10), *c = find(s, 1), *m = find(s, 2), *p = find(s, 22);
	CHECK(k && k->device == 1 && k->stream == 0 && k->name && strcmp(k->name, "k1") == 0 &&
		      k->correlation != 0,
	      "kernel record");
	CHECK(k && k->start >= t0 && k->end <= t1 && ms(k->end - k->start) > 29.9 &&
		      ms(k->end - k->start) < 30.1,
	      "kernel times on CLOCK_MONOTONIC");
	CHECK(c && c->extra == 1 && c->bytes == 1000 && c->stream == 1 && c->start < k->end &&
		      ms(c->end - c->start) > 19.9,
	      "copy record, overlapping the kernel");
	CHECK(m && m->bytes == 500 && m->stream == 2, "memset record");
	CHECK(p && p->extra == 0 && p->device == 1 && p->bytes == 2000, "peer copy record");

	/* Runtime/driver callbacks: the first call's ENTER came before the
	 * injection; every driver callback is nested in a runtime call. */
	int calls = 6; /* set_device, launch, memcpy, memset, memcpy, sync */
	for (int i = 0; i < 1000; i++)
		fakecuda_get_device(&count);
	calls += 1000;
	CHECK(s->enter[2] == calls - 1 && s->exit[2] == calls, "runtime enter %d exit %d, calls %d",
	      s->enter[2], s->exit[2], calls);
	CHECK(s->enter[1] == calls - 1 && s->exit[1] == calls - 1, "driver enter %d exit %d",
	      s->enter[1], s->exit[1]);
	CHECK(s->driver_outside_runtime == 0 && s->correlation_mismatch == 0,
	      "nesting %d, correlation %d", s->driver_outside_runtime, s->correlation_mismatch);

	/* No buffer: the records are dropped and counted once. */
	s->starve = 1;
	for (int i = 0; i < 3; i++)
		fakecuda_launch("k2", 1, 0);
	fakecuda_sync();
	smoke_flush();
	size_t d1 = smoke_dropped(), d2 = smoke_dropped();
	CHECK(d1 == 3 && d2 == 0, "dropped %zu then %zu", d1, d2);
	CHECK(s->nrecords == 4, "%d records after the starved flush", s->nrecords);
	if (failed)
		return 1;
	printf("ok\n");
	return 0;
}

#endif
