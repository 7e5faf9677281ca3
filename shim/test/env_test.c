/* env_test.c: the POPMON_* variables' checks (shim/base/env.c), without MPI.
 *
 * Built and run by internal/shimbuild's TestEnvC, which holds the table of
 * values and what each must give:
 *
 *   ./env_test int NAME DEFAULT LO HI      prints "value N"
 *   ./env_test seconds NAME DFLT_NS LO_NS HI_NS  prints "value N" (nanoseconds)
 *   ./env_test size NAME DEFAULT LO HI     prints "value N"
 *   ./env_test mode NAME DEFAULT           prints "value N" (0 off, 1 auto, 2 on)
 *   ./env_test switch NAME DEFAULT BAD_AS  prints "value N"
 *   ./env_test true NAME                   prints "value N" (popmon_env_true)
 *   ./env_test barrier DLB_ARGS BARRIER FLAGS  prints "value N"
 *                                          (popmon_dlb_barrier_lends: 1 lends)
 *
 * with the variable NAME set (or not) by the caller; the "popmon: ..." line of
 * a bad value goes to stderr, once, however often the variable is read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dlbargs.h"
#include "base/env.h"
#include "base/process.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *kind = argv[1], *name = argv[2];
	long long v = -1;
	for (int twice = 0; twice < 2; twice++) { /* a second read says nothing more */
		if (strcmp(kind, "int") == 0 && argc == 6)
			v = popmon_env_int(name, atoll(argv[3]), atoll(argv[4]), atoll(argv[5]));
		else if (strcmp(kind, "seconds") == 0 && argc == 6)
			v = popmon_env_seconds_ns(name, atoll(argv[3]), atoll(argv[4]), atoll(argv[5]));
		else if (strcmp(kind, "size") == 0 && argc == 6)
			v = (long long)popmon_env_size(name, strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
						       strtoull(argv[5], NULL, 10), "");
		else if (strcmp(kind, "mode") == 0 && argc == 4)
			v = popmon_env_mode(name, atoi(argv[3]));
		else if (strcmp(kind, "switch") == 0 && argc == 5)
			v = popmon_env_switch(name, atoi(argv[3]), atoi(argv[4]));
		else if (strcmp(kind, "true") == 0 && argc == 3)
			v = popmon_env_true(name);
		else if (strcmp(kind, "barrier") == 0 && argc == 5)
			v = popmon_dlb_barrier_lends(argv[3], atoi(argv[4]));
		else
			return 2;
	}
	printf("value %lld\n", v);
	return 0;
}
