/* misuse.c: every misuse of the popmon region API that popmon.h defines,
 * between ordinary MPI calls. The measurement library must survive all of
 * it: no crash, the program's output and exit status unchanged, at most one
 * "popmon:" warning line on stderr per kind of misuse.
 *
 * Usage: misuse [NAMES [--check-rc]]       defaults: NAMES = 1000000
 *
 * Each rank, between MPI_Barrier/MPI_Allreduce calls and 5 x 100 ms of
 * balanced work (the run takes about 0.6 s), does:
 *   1. stop of a region never started                   -> POPMON_NOUPDT
 *   2. start of an open region (double start)           -> POPMON_NOUPDT
 *      and stop of a closed one (double stop)           -> POPMON_NOUPDT
 *   3. reset of a closed region, then a normal visit    -> POPMON_SUCCESS
 *   4. overlapping (not nested) regions: start x, start y, stop x, stop y
 *                                                       -> POPMON_SUCCESS
 *   5. a handle the library never returned (the address of a zeroed,
 *      aligned static object, so that reading it cannot fault)
 *      to start/stop/reset/report                       -> POPMON_ERR_NOENT
 *   6. stop of POPMON_REGION_LAST with no region open: the Global region is
 *      stopped first, then stop(LAST) twice              -> POPMON_ERR_NOENT
 *      and Global is started again (a second visit)     -> POPMON_SUCCESS
 *   7. a name longer than the name limit, registered twice (cut; same handle)
 *   8. NAMES distinct names registered in a loop (far beyond the library's
 *      region limit), the last one started and stopped  -> >= 0
 * The metrics of this run are not asserted (Global is interrupted on purpose).
 *
 * Rank 0 prints exactly "ok". With --check-rc (and only when measured by
 * popmon) the return codes above are checked too; a wrong one prints
 * "misuse: ..." on stderr and the exit status is 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "popmon.h"
#include "work.h"

static int check_rc;  /* --check-rc given and measured */
static int failures;

static void expect(int rc, int want, const char *what)
{
	if (check_rc && rc != want) {
		fprintf(stderr, "misuse: %s returned %d, expected %d\n", what, rc, want);
		failures++;
	}
}

static void balanced_step(void)
{
	work_ms(100);
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	double arg[1] = { 1000000 };
	int nargs = argc;
	if (argc >= 2 && strcmp(argv[argc - 1], "--check-rc") == 0) {
		check_rc = popmon_measured();
		nargs--;
	}
	if (parse_args(nargs, argv, rank, "[NAMES [--check-rc]]", 1, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const long names = (long)arg[0];

	MPI_Barrier(MPI_COMM_WORLD);

	/* 1. stop of a region never started */
	popmon_region_t a = popmon_region_register("misuse a");
	expect(popmon_region_stop(a), POPMON_NOUPDT, "stop(never started)");

	/* 2. double start, double stop */
	expect(popmon_region_start(a), POPMON_SUCCESS, "start(a)");
	expect(popmon_region_start(a), POPMON_NOUPDT, "start(a) again");
	balanced_step();
	expect(popmon_region_stop(a), POPMON_SUCCESS, "stop(a)");
	expect(popmon_region_stop(a), POPMON_NOUPDT, "stop(a) again");

	/* 3. reset, then use the reset handle normally */
	expect(popmon_region_reset(a), POPMON_SUCCESS, "reset(a)");
	expect(popmon_region_start(a), POPMON_SUCCESS, "start(a) after reset");
	expect(popmon_region_stop(a), POPMON_SUCCESS, "stop(a) after reset");

	/* 4. overlapping regions */
	popmon_region_t x = popmon_region_register("misuse x");
	popmon_region_t y = popmon_region_register("misuse y");
	expect(popmon_region_start(x), POPMON_SUCCESS, "start(x)");
	expect(popmon_region_start(y), POPMON_SUCCESS, "start(y)");
	balanced_step();
	expect(popmon_region_stop(x), POPMON_SUCCESS, "stop(x) before y");
	expect(popmon_region_stop(y), POPMON_SUCCESS, "stop(y)");

	/* 5. a handle the library never returned */
	static alignas(64) unsigned char not_a_region[4096];
	popmon_region_t bogus = (popmon_region_t)(void *)not_a_region;
	expect(popmon_region_start(bogus), POPMON_ERR_NOENT, "start(unknown handle)");
	expect(popmon_region_stop(bogus), POPMON_ERR_NOENT, "stop(unknown handle)");
	expect(popmon_region_reset(bogus), POPMON_ERR_NOENT, "reset(unknown handle)");
	expect(popmon_region_report(bogus), POPMON_ERR_NOENT, "report(unknown handle)");

	/* 6. stop of the last open region when none is open */
	expect(popmon_region_stop(POPMON_REGION_GLOBAL), POPMON_SUCCESS, "stop(Global)");
	expect(popmon_region_stop(POPMON_REGION_LAST), POPMON_ERR_NOENT, "stop(LAST), none open");
	expect(popmon_region_stop(POPMON_REGION_LAST), POPMON_ERR_NOENT, "stop(LAST) again");
	expect(popmon_region_start(POPMON_REGION_GLOBAL), POPMON_SUCCESS, "start(Global) again");

	long one = 1, sum = 0;
	MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

	/* 7. an over-long name, twice */
	char longname[300];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	popmon_region_t l1 = popmon_region_register(longname);
	popmon_region_t l2 = popmon_region_register(longname);
	if (check_rc && l1 != l2) {
		fprintf(stderr, "misuse: the same long name gave two handles\n");
		failures++;
	}
	expect(popmon_region_start(l1), POPMON_SUCCESS, "start(long name)");
	expect(popmon_region_stop(l2), POPMON_SUCCESS, "stop(long name)");

	/* 8. many distinct names */
	popmon_region_t last = POPMON_REGION_GLOBAL;
	for (long i = 0; i < names; i++) {
		char name[32];
		snprintf(name, sizeof name, "misuse name %ld", i);
		last = popmon_region_register(name);
	}
	int rc = popmon_region_start(last);
	if (check_rc && rc < 0) {
		fprintf(stderr, "misuse: start(name %ld) returned %d\n", names - 1, rc);
		failures++;
	}
	balanced_step();
	rc = popmon_region_stop(last);
	if (check_rc && rc < 0) {
		fprintf(stderr, "misuse: stop(name %ld) returned %d\n", names - 1, rc);
		failures++;
	}

	/* The program goes on as if nothing happened. */
	balanced_step();
	balanced_step();
	long total = 0;
	MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	int all_failures = 0;
	MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == (long)size * size)
		printf("ok\n");

	MPI_Finalize();
	return total == (long)size * size && all_failures == 0 ? 0 : 1;
}
