/* gpu.c: the GPU accounting layer of libpopmon (gpu.h), shared by the
 * vendor backends.
 *
 * A backend turns its vendor's callbacks and activity records into calls
 * of this layer: popmon_gpu_api for the host side (a thread inside the
 * GPU runtime), popmon_gpu_account_locked for each decoded kernel, copy or
 * memset, popmon_gpu_set_devices for the device table (gpu_cupti.c: NVIDIA
 * through CUPTI; gpu_rocm.c: AMD through rocprofiler-sdk). The layer keeps,
 * per device ordinal, two incremental unions (K: kernels; A: kernels,
 * copies and memsets), the kernel table, the copy totals and the idle
 * gaps; region snapshots read K and A at the snapshot time after the
 * backend's flush (never a device synchronisation); regions keep their
 * differences, so device time is clipped at region boundaries and a record
 * that arrives late is counted in the next interval.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "counters.h"
#include "gpu.h"
#include "gpu_mode.h"
#include "gpu_counters.h"
#include "gpu_pool.h"
#include "live.h"

int popmon_gpu_active;
const char *const popmon_gpu_copy_names[POPMON_GPU_NCOPY] = {"HtoD", "DtoH", "DtoD", "PtoP", "memset"};

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
	const char *ptr; /* the backend's name pointer: the key, with the device */
	uint32_t device, used;
	int comm; /* device communication (NCCL): not in K */
	uint64_t count, time, min, max;
	char name[POPMON_GPU_NAME];
};

pthread_mutex_t popmon_gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdev devs[POPMON_GPU_DEVICES];
static struct kslot ktab[POPMON_GPU_KERNELS];
static struct kslot kother[POPMON_GPU_DEVICES]; /* kernels past the table, per device */
static struct {
	uint64_t count, bytes, time;
} copies[POPMON_GPU_NCOPY];
static char dev_uuid[POPMON_GPU_DEVICES][48];
static char dev_name[POPMON_GPU_DEVICES][96];
static int ndevices; /* from the backend; 0 while unknown */
static const struct popmon_gpu_ops *ops; /* the backend that measures */
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

/* Copies the NUL-terminated string at p (the vendor's memory, not trusted) into
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

int popmon_gpu_comm_kernel(const char *s)
{
	/* A mangled C++ name (_Z<length>name...): the name itself. */
	if (s[0] == '_' && s[1] == 'Z') {
		s += 2;
		if (*s == 'N') /* a nested name: its first component */
			s++;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return strncmp(s, "ncclKernel", 10) == 0 || strncmp(s, "ncclDevKernel", 13) == 0;
}

/* Under the GPU lock: the kernel into the table; returns its slot. */
static const struct kslot *kernel_add(const struct popmon_gpu_record *r)
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
			s->comm = popmon_gpu_comm_kernel(s->name);
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
	return k;
}

/* Under the GPU lock: one decoded record into the accounts (gpu.h). */
void popmon_gpu_account_locked(const struct popmon_gpu_record *r)
{
	struct gdev *d = &devs[r->device];
	d->used++;
	if (r->cls == POPMON_GPU_KERNEL) {
		if (!kernel_add(r)->comm)
			popmon_gpu_union_add(&d->k, r->start, r->end, NULL, 0);
	} else {
		copies[r->copy].count++;
		copies[r->copy].bytes += r->bytes;
		copies[r->copy].time += r->end - r->start;
	}
	popmon_gpu_union_add(&d->a, r->start, r->end, &d->gaps, global_start_ns());
}

/* Under the GPU lock: the devices' K and A as delivered so far, for the
 * live file's readers (popmon run's sampler, popmon recover). */
void popmon_gpu_publish_locked(uint64_t now)
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

/* ------------------------------------------------------------------ backends */

void popmon_gpu_set_devices(int count, int n, const char uuid[][48], const char name[][96])
{
	if (n > POPMON_GPU_DEVICES)
		n = POPMON_GPU_DEVICES;
	pthread_mutex_lock(&popmon_gpu_lock);
	memcpy(dev_uuid, uuid, sizeof(uuid[0]) * (size_t)n);
	memcpy(dev_name, name, sizeof(name[0]) * (size_t)n);
	__atomic_store_n(&ndevices, count, __ATOMIC_RELEASE);
	if (popmon_live) {
		uint64_t seq = popmon_live->gpu_seq;
		POPMON_STORE(popmon_live->gpu_seq, seq + 1);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		memcpy(popmon_live->gpu_uuid, uuid, sizeof(uuid[0]) * (size_t)n);
		__atomic_store_n(&popmon_live->gpu_seq, seq + 2, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&popmon_gpu_lock);
}

int popmon_gpu_calibrate(int (*get_timestamp)(uint64_t *ns), int64_t *offset)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t ts = 0, m1 = popmon_monotonic_ns();
		if (get_timestamp(&ts) != 0)
			return -1;
		uint64_t m2 = popmon_monotonic_ns();
		if (m2 - m1 < best) {
			best = m2 - m1;
			*offset = (int64_t)(m1 + (m2 - m1) / 2) - (int64_t)ts;
		}
	}
	return 0;
}

int popmon_gpu_device_count(void)
{
	return __atomic_load_n(&ndevices, __ATOMIC_ACQUIRE);
}

int popmon_gpu_activate(const struct popmon_gpu_ops *backend)
{
	const struct popmon_gpu_ops *none = NULL;
	if (!__atomic_compare_exchange_n(&ops, &none, backend, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -1;
	__atomic_store_n(&popmon_gpu_active, 1, __ATOMIC_RELEASE);
	if (backend->device_of && popmon_env_switch("POPMON_GPU_MPI", 1, 1))
		__atomic_store_n(&popmon_gpu_mpi_check, 1, __ATOMIC_RELEASE);
	if (popmon_live)
		__atomic_store_n(&popmon_live->gpu_active, (uint32_t)backend->vendor, __ATOMIC_RELEASE);
	return 0;
}


/* ------------------------------------------------------------------ CUDA-aware MPI */

int popmon_gpu_mpi_check;
static __thread int mpi_device __attribute__((tls_model("initial-exec")));

uint64_t popmon_gpu_mpi_buffers(const void *a, const void *b)
{
	const void *p[2] = {a, b};
	for (int i = 0; i < 2; i++) {
		if (!p[i])
			continue;
		int d = ops->device_of(p[i]);
		if (d >= 0 && d < POPMON_GPU_DEVICES) {
			mpi_device = d;
			uint64_t now = popmon_monotonic_ns();
			return now ? now : 1;
		}
	}
	return 0;
}

void popmon_gpu_mpi_done(uint64_t t0)
{
	uint64_t t1 = popmon_monotonic_ns();
	if (t1 <= t0)
		return;
	pthread_mutex_lock(&popmon_gpu_lock);
	struct gdev *d = &devs[mpi_device];
	d->used++;
	popmon_gpu_union_add(&d->a, t0, t1, &d->gaps, global_start_ns());
	pthread_mutex_unlock(&popmon_gpu_lock);
}

/* ------------------------------------------------------------------ snapshots */

static __thread int flushing __attribute__((tls_model("initial-exec")));

static void flush_as(int final)
{
	if (!__atomic_load_n(&popmon_gpu_active, __ATOMIC_ACQUIRE) || flushing)
		return;
	flushing = 1;
	ops->flush(final);
	flushing = 0;
}

void popmon_gpu_flush(void)
{
	flush_as(0);
}

void popmon_gpu_flush_final(void)
{
	flush_as(1);
}

void popmon_gpu_read(uint64_t now_ns, uint64_t k[POPMON_GPU_DEVICES], uint64_t a[POPMON_GPU_DEVICES])
{
	if (!__atomic_load_n(&popmon_gpu_active, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&popmon_gpu_lock);
	popmon_gpu_pool_drain(); /* what the flush before delivered */
	for (int d = 0; d < POPMON_GPU_DEVICES; d++) {
		if (!devs[d].used)
			continue;
		k[d] = popmon_gpu_union_value(&devs[d].k, now_ns);
		a[d] = popmon_gpu_union_value(&devs[d].a, now_ns);
	}
	pthread_mutex_unlock(&popmon_gpu_lock);
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

int popmon_gpu_finish_measured(struct popmon_gpu_proc *out, uint64_t g0_ns, uint64_t g1_ns)
{
	memset(out, 0, sizeof *out);
	out->mode = popmon_gpu_mode();
	if (!__atomic_load_n(&popmon_gpu_active, __ATOMIC_ACQUIRE))
		return 0;
	popmon_gpu_flush_final();
	out->vendor = ops->vendor;
	ops->measured(out);
	out->ctr_mode = popmon_gpu_counters_mode(); /* the backend says what it read, or why not */
	pthread_mutex_lock(&popmon_gpu_lock);
	popmon_gpu_pool_drain();
	out->status = POPMON_GPU_MEASURED;
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
	pthread_mutex_unlock(&popmon_gpu_lock);
	return 1;
}

