/* seam.h: what the C unit tests of libpopmon share (counters_test.c,
 * gpu_test.c, reduce_test.c): the warnings so far, read from the bottom
 * layer's warn.c (which the tests link, with the rest of shim/base), and the
 * CHECK macros. Included once per test program. */
#ifndef POPMON_TEST_SEAM_H
#define POPMON_TEST_SEAM_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/warn.h"

/* Warnings so far (the real base/warn.c, linked in), "key|text", at most
 * once per key: nwarned and warned[i] read them. */
static char seam_warned[POPMON_MAX_WARNINGS][512];

static inline int seam_nwarned(void)
{
	int n = popmon_warning_count();
	for (int i = 0; i < n; i++)
		snprintf(seam_warned[i], sizeof seam_warned[i], "%s|%s", popmon_warning_key(i), popmon_warning(i));
	return n;
}
#define nwarned seam_nwarned()
#define warned (seam_nwarned(), seam_warned)

static int failures;

#define CHECK(cond, ...)                                            \
	do {                                                        \
		if (!(cond)) {                                      \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);                        \
			printf("\n");                               \
			failures++;                                 \
		}                                                   \
	} while (0)

#define CHECK_U64(got, want)                                                                                   \
	CHECK((uint64_t)(got) == (uint64_t)(want), "%s = %llu, want %llu", #got, (unsigned long long)(got), \
	      (unsigned long long)(want))

#endif /* POPMON_TEST_SEAM_H */
