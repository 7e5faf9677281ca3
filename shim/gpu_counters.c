/* gpu_counters.c: GPU device counters, the vendor-neutral part
 * (gpu_counters.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_counters.h"

const char *const popmon_gc_keys[POPMON_GC_N] = {
	"instructions", "sm_active_cycles", "sm_elapsed_cycles", "warps_active",
	"dram_read_bytes", "dram_write_bytes", "sampled_ns",
};

#define RING(d, k) ((d)->ring[((d)->head + (k)) % POPMON_GC_RING])

static double clean(double x)
{
	return x > 0 && x < 1e300 ? x : 0; /* also NaN and inf */
}

static void fold(struct popmon_gc_dev *d)
{
	const uint64_t s = RING(d, 0).s, e = RING(d, 0).e;
	for (int q = 0; q < POPMON_GC_NQ; q++)
		d->final[q] += RING(d, 0).v[q];
	d->final[POPMON_GC_SAMPLED] += (double)(e - s);
	d->head = (d->head + 1) % POPMON_GC_RING;
	d->n--;
}

void popmon_gc_add(struct popmon_gc_dev *d, uint64_t s, uint64_t e, const double v[POPMON_GC_NQ])
{
	if (e < s)
		e = s;
	if (d->n == POPMON_GC_RING)
		fold(d);
	uint32_t k = (d->head + d->n) % POPMON_GC_RING;
	d->ring[k].s = s;
	d->ring[k].e = e;
	for (int q = 0; q < POPMON_GC_NQ; q++)
		d->ring[k].v[q] = clean(v[q]);
	d->n++;
}

void popmon_gc_value(struct popmon_gc_dev *d, uint64_t t, uint64_t out[POPMON_GC_N])
{
	double acc[POPMON_GC_N];
	memcpy(acc, d->final, sizeof acc);
	for (uint32_t i = 0; i < d->n; i++) {
		const uint64_t s = RING(d, i).s, e = RING(d, i).e;
		if (s >= t)
			continue;
		double f = e <= t || e == s ? 1.0 : (double)(t - s) / (double)(e - s);
		for (int q = 0; q < POPMON_GC_NQ; q++)
			acc[q] += f * RING(d, i).v[q];
		acc[POPMON_GC_SAMPLED] += (double)((e <= t ? e : t) - s);
	}
	for (int q = 0; q < POPMON_GC_N; q++) {
		uint64_t x = acc[q] >= 1.8e19 ? UINT64_MAX : (uint64_t)(acc[q] + 0.5);
		if (x < d->reported[q])
			x = d->reported[q];
		d->reported[q] = x;
		out[q] = x;
	}
}

/* ------------------------------------------------------------------ the process's devices */

static pthread_mutex_t gc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct popmon_gc_dev gc[POPMON_GC_DEVICES];
static int gc_used[POPMON_GC_DEVICES];

void popmon_gpu_counters_sample(int device, uint64_t s, uint64_t e, const double v[POPMON_GC_NQ])
{
	if (device < 0 || device >= POPMON_GC_DEVICES)
		return;
	pthread_mutex_lock(&gc_lock);
	popmon_gc_add(&gc[device], s, e, v);
	__atomic_store_n(&gc_used[device], 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&gc_lock);
}

void popmon_gpu_counters_read(uint64_t now_ns, uint64_t c[POPMON_GC_DEVICES][POPMON_GC_N])
{
	int any = 0;
	for (int d = 0; d < POPMON_GC_DEVICES; d++)
		any |= __atomic_load_n(&gc_used[d], __ATOMIC_ACQUIRE);
	if (!any)
		return;
	pthread_mutex_lock(&gc_lock);
	for (int d = 0; d < POPMON_GC_DEVICES; d++)
		if (gc_used[d])
			popmon_gc_value(&gc[d], now_ns, c[d]);
	pthread_mutex_unlock(&gc_lock);
}
