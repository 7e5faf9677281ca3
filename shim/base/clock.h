/* clock.h: the clock of libpopmon (clock.c), the bottom layer.
 *
 * rdtsc costs ~9 ns here against ~22 ns for clock_gettime through the vDSO;
 * a state change reads the clock once, so an MPI call costs two reads. With
 * two clock_gettime calls alone (~45 ns) the 30 ns budget per call is out of
 * reach, so the invariant TSC is used when the CPU advertises it (CPUID
 * 0x80000007 EDX bit 8, or constant_tsc+nonstop_tsc on hypervisors that hide
 * the bit) and converted to nanoseconds once, at the end, by a ratio
 * calibrated against CLOCK_MONOTONIC over the whole run (so the conversion
 * error is ~1 ppm even for short runs). Otherwise CLOCK_MONOTONIC is used
 * directly and ticks are nanoseconds. rdtsc is not serialising; that is fine
 * for accounting: the reordering window is a few cycles. */
#ifndef POPMON_CLOCK_H
#define POPMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* 1 when the clock is the invariant TSC, 0 for CLOCK_MONOTONIC. Hidden:
 * the hot path loads it PC-relative, without the GOT. */
extern int popmon_clock_tsc __attribute__((visibility("hidden")));

uint64_t popmon_monotonic_ns(void);

/* Start-up: chooses the clock (mode "monotonic" forces CLOCK_MONOTONIC,
 * else the invariant TSC when the CPU has one) and takes its origin
 * (popmon_proc's t0_tick, t0_ns and epoch_ns, process.h). */
void popmon_clock_start(const char *mode);

static inline __attribute__((always_inline)) uint64_t popmon_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(popmon_clock_tsc, 1)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return popmon_monotonic_ns(); /* out of line: the inlined hot path stays short */
}

/* popmon_now() after every earlier instruction has completed (lfence, as
 * the kernel's rdtsc_ordered): the clock read that opens an MPI call, so
 * that the program's own work just before the call, still in flight when
 * a plain rdtsc would run, is not booked as MPI time (a polling loop's
 * compute chunk was, in full). */
static inline __attribute__((always_inline)) uint64_t popmon_now_ordered(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(popmon_clock_tsc, 1)) {
		uint32_t lo, hi;
		__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return popmon_monotonic_ns();
}

#define POPMON_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define POPMON_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define POPMON_ADD(x, v) POPMON_STORE((x), POPMON_LOAD(x) + (v))

/* Elapsed ticks from a to b; 0 if the clock went backwards (a thread moved to
 * a core whose TSC is a few ticks behind). */
static inline uint64_t popmon_delta(uint64_t a, uint64_t b)
{
	return (int64_t)(b - a) > 0 ? b - a : 0;
}

/* A tick and a CLOCK_MONOTONIC reading taken at the same moment. */
void popmon_clock_pair(uint64_t *tick, uint64_t *ns);
/* CLOCK_MONOTONIC nanoseconds of a tick of popmon_now(). */
int64_t popmon_tick_monotonic_ns(uint64_t tick);
double popmon_ns_per_tick(void);
uint64_t popmon_ticks_to_ns(uint64_t ticks);

#endif /* POPMON_CLOCK_H */
