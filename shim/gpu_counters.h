/* gpu_counters.h: GPU device counters of libpopmon (the GPU's performance
 * monitors, sampled while the program runs), the vendor-neutral part.
 *
 * A backend (gpu_cupti_pm.c: NVIDIA through CUPTI's PM sampling) decodes
 * samples — an interval of the device's time and the counters' increments
 * over it — and hands them here in time order per device. This layer keeps
 * per device the cumulative value of each quantity as a function of time:
 * samples that ended before t count whole, the sample that straddles t
 * counts in proportion of its time before t, later ones not at all. Region
 * snapshots read these values at the snapshot time (like the device unions
 * K and A of gpu.h), so counters are attributed to regions by time at the
 * resolution of the sampling period; a sample decoded after a snapshot is
 * counted in the next interval (values never go back).
 *
 * Counters are those of the whole device: on a GPU that several processes
 * share, every process's kernels are in them.
 */
#ifndef POPMON_GPU_COUNTERS_H
#define POPMON_GPU_COUNTERS_H

#include <stdint.h>

/* The quantities, in the order of the file's keys (popmon_gc_keys). */
enum {
	POPMON_GC_INST = 0,  /* warp instructions executed, summed over SMs */
	POPMON_GC_ACTIVE,    /* SM active cycles, summed over SMs */
	POPMON_GC_ELAPSED,   /* SM elapsed cycles, summed over SMs */
	POPMON_GC_WARPS,     /* warps active, summed over SMs and active cycles */
	POPMON_GC_DRAM_RD,   /* DRAM bytes read */
	POPMON_GC_DRAM_WR,   /* DRAM bytes written */
	POPMON_GC_NQ,        /* quantities a sample carries */
	POPMON_GC_SAMPLED = POPMON_GC_NQ, /* ns of device time covered by samples */
	POPMON_GC_N,
};
/* Device ordinals whose counters regions keep. */
#define POPMON_GC_DEVICES 8
/* Decoded samples kept exactly per device (older ones are final). */
#define POPMON_GC_RING 1024

extern const char *const popmon_gc_keys[POPMON_GC_N];

/* One device's samples (exported for shim/test/gpu_test.c). */
struct popmon_gc_dev {
	double final[POPMON_GC_N];  /* samples evicted from the ring */
	uint64_t reported[POPMON_GC_N]; /* the largest values returned */
	uint32_t head, n;
	struct {
		uint64_t s, e;
		double v[POPMON_GC_NQ];
	} ring[POPMON_GC_RING];
};
/* Adds a sample [s, e) (CLOCK_MONOTONIC ns) with increments v; a value
 * below 0 or not a number counts as 0. */
void popmon_gc_add(struct popmon_gc_dev *d, uint64_t s, uint64_t e, const double v[POPMON_GC_NQ]);
/* The cumulative values at time t, never less than values returned before. */
void popmon_gc_value(struct popmon_gc_dev *d, uint64_t t, uint64_t out[POPMON_GC_N]);

/* The process's devices (under the counters' own lock; any thread). */
void popmon_gpu_counters_sample(int device, uint64_t s, uint64_t e, const double v[POPMON_GC_NQ]);
/* Per device ordinal below POPMON_GC_DEVICES: the values at now_ns (those
 * of devices without samples are left as they are). */
void popmon_gpu_counters_read(uint64_t now_ns, uint64_t c[POPMON_GC_DEVICES][POPMON_GC_N]);

#endif /* POPMON_GPU_COUNTERS_H */
