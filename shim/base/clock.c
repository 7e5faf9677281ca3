/* clock.c: the clock (clock.h): the invariant TSC or CLOCK_MONOTONIC, and
 * ticks to nanoseconds. Bottom layer: calls nothing above it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/env.h"
#include "base/process.h"

int popmon_clock_tsc;

uint64_t popmon_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cpu_has_invariant_tsc(void)
{
#if defined(__x86_64__)
	uint32_t a, b, c, d;
	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
	if (a >= 0x80000007u) {
		__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
		if (d & (1u << 8))
			return 1;
	}
	/* Hypervisors often hide the CPUID bit but the kernel still knows. */
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return 0;
	char line[4096];
	int ok = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) == 0) {
			ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
			break;
		}
	}
	fclose(f);
	return ok;
#else
	return 0;
#endif
}

/* A simultaneous reading of the tick and CLOCK_MONOTONIC: the narrowest of
 * a few tick brackets around a clock_gettime, its middle as the tick. One
 * plain pair of reads is off by however long the thread was descheduled
 * between them (possibly milliseconds on a busy node at start-up), an
 * error that would go into the calibration's ratio and into every time
 * the process converts to CLOCK_MONOTONIC. */
void popmon_clock_pair(uint64_t *tick, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 4; i++) {
		uint64_t a = popmon_now();
		uint64_t n = popmon_monotonic_ns();
		uint64_t b = popmon_now();
		if (b >= a && b - a < best) {
			best = b - a;
			*tick = a + (b - a) / 2;
			*ns = n;
		}
	}
	if (best == UINT64_MAX) { /* a tick counter going back: take the last reading as it is */
		*tick = popmon_now();
		*ns = popmon_monotonic_ns();
	}
}

double popmon_ns_per_tick(void)
{
	if (!popmon_clock_tsc)
		return 1.0;
	/* Calibrate over the whole run: the longer, the better. */
	uint64_t t1 = 0, n1 = 0;
	popmon_clock_pair(&t1, &n1);
	uint64_t dt = t1 - popmon_proc.t0_tick;
	uint64_t dn = n1 - popmon_proc.t0_ns;
	/* Very early (a region call right after start-up): wait until 20 us
	 * have passed, which bounds the ratio's error by ~0.5 % until the final
	 * conversion at exit recalibrates over the whole run. */
	while (dn < 20000) {
		t1 = popmon_now();
		n1 = popmon_monotonic_ns();
		dt = t1 - popmon_proc.t0_tick;
		dn = n1 - popmon_proc.t0_ns;
	}
	return dt ? (double)dn / (double)dt : 1.0;
}

int64_t popmon_tick_monotonic_ns(uint64_t tick)
{
	if (popmon_delta(popmon_proc.t0_tick, tick) == 0)
		return (int64_t)popmon_proc.t0_ns;
	return (int64_t)(popmon_proc.t0_ns + popmon_ticks_to_ns(tick - popmon_proc.t0_tick));
}

uint64_t popmon_ticks_to_ns(uint64_t ticks)
{
	static double ratio;
	static uint64_t ratio_at;
	/* Recalibrate at most every 10 ms of run time: cheap and accurate. Only
	 * called under the region lock or at exit. */
	uint64_t now = popmon_monotonic_ns();
	if (ratio == 0 || now - ratio_at > 10000000) {
		ratio = popmon_ns_per_tick();
		ratio_at = now;
	}
	return (uint64_t)((double)ticks * ratio + 0.5);
}

void popmon_clock_start(const char *mode)
{
	static const char *const modes[] = {"auto", "tsc", "monotonic", NULL};
	if (!popmon_env_word("POPMON_CLOCK", mode, modes, "auto"))
		mode = NULL;
	if (mode && strcmp(mode, "monotonic") == 0)
		popmon_clock_tsc = 0;
	else
		popmon_clock_tsc = cpu_has_invariant_tsc();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	popmon_proc.epoch_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	popmon_clock_pair(&popmon_proc.t0_tick, &popmon_proc.t0_ns);
}
