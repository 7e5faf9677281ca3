/* fakepmu.c: a stand-in PMU for tests on machines without one (virtual
 * machines, containers, CI runners).
 *
 * Preloaded after libpopmon, it interposes syscall() and turns the library's
 * perf_event_open of hardware events into software ones the kernel always
 * has: cycles into PERF_COUNT_SW_TASK_CLOCK and instructions into
 * PERF_COUNT_SW_CPU_CLOCK, both in nanoseconds. The library then runs its
 * whole counter path (lazy per-thread groups, read() of the group, the
 * accumulation during useful time only, the gather at MPI_Finalize, the
 * file) on real kernel counts: for a program that computes (spins) while it
 * is useful, "cycles" during useful time are about the useful time itself,
 * so the reported frequency is about 1 GHz and IPC about 1; time spent
 * busy-waiting inside MPI would raise the frequency above 1 if it were
 * counted.
 *
 *   cc -shared -fPIC -o fakepmu.so fakepmu.c -ldl
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...);

long syscall(long number, ...)
{
	static long (*real)(long, ...);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_list ap;
	va_start(ap, number);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_perf_event_open) {
		struct perf_event_attr *attr = (struct perf_event_attr *)a[0];
		if (attr && attr->type == PERF_TYPE_HARDWARE) {
			attr->config = attr->config == PERF_COUNT_HW_CPU_CYCLES ? PERF_COUNT_SW_TASK_CLOCK
										 : PERF_COUNT_SW_CPU_CLOCK;
			attr->type = PERF_TYPE_SOFTWARE;
		}
	}
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
