/* work.h: helpers shared by the popmon validation programs.
 *
 * "Work" is sleeping: popmon (like TALP) counts wall-clock time outside the
 * MPI library as useful, so a rank that sleeps k ms does k ms of useful work.
 * Sleeping needs no CPU, so the designed metrics hold even with more ranks
 * than cores (4 ranks on 2 oversubscribed cores).
 *
 * Every program includes this after defining _POSIX_C_SOURCE 200809L (needed
 * for clock_nanosleep under -std=c11).
 */
#ifndef POPMON_EXAMPLES_WORK_H
#define POPMON_EXAMPLES_WORK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Does `ms` milliseconds of "useful work": a relative monotonic sleep,
 * resumed with the remaining time when a signal interrupts it. */
static inline void work_ms(double ms)
{
	if (ms <= 0)
		return;
	long long ns = (long long)(ms * 1e6 + 0.5);
	struct timespec req = { .tv_sec = (time_t)(ns / 1000000000LL),
				.tv_nsec = (long)(ns % 1000000000LL) };
	struct timespec rem;
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem) == EINTR)
		req = rem;
}

/* Reads the optional positional arguments argv[1..n] into vals[0..n-1]
 * (absent ones keep the default already in vals). Each must be a positive
 * number. On error, rank 0 prints the usage line to stderr and -1 is
 * returned (every rank sees the same argv, so all of them fail alike). */
static inline int parse_args(int argc, char **argv, int rank, const char *usage, int n,
			     double *vals)
{
	if (argc - 1 > n)
		goto bad;
	for (int i = 1; i < argc; i++) {
		char *end;
		double v = strtod(argv[i], &end);
		if (end == argv[i] || *end != '\0' || !(v > 0) || v > 1e9)
			goto bad;
		vals[i - 1] = v;
	}
	return 0;
bad:
	if (rank == 0)
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
	return -1;
}

#endif /* POPMON_EXAMPLES_WORK_H */
