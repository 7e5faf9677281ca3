/* serial.c: a program without MPI, measured by popmon all the same.
 *
 * Usage: serial [K_MS]                      default: K = 100 ms
 *
 * Works 3*K in total: K inside region "phase" (popmon.h), 2*K outside it.
 * One process, one CPU, no MPI, so (POP-METRICS.md section 2, talp):
 *   Global:  elapsed = 3*K, useful = 3*K, Parallel efficiency = 1,
 *            no MPI metrics (absent, not 1 and not 0)
 *   "phase": elapsed = K, one visit, Parallel efficiency = 1
 * Prints "ok" and exits 0 (3 with a bad argument).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "popmon.h"
#include "work.h"

int main(int argc, char **argv)
{
	double k = 100;
	if (parse_args(argc, argv, 0, "[K_MS]", 1, &k) != 0)
		return 3;
	work_ms(k);
	popmon_region_t phase = popmon_region_register("phase");
	popmon_region_start(phase);
	work_ms(k);
	popmon_region_stop(phase);
	work_ms(k);
	printf("ok\n");
	return 0;
}
