/* seam.h: what the C unit tests of libpopmon share (counters_test.c,
 * gpu_test.c): a popmon_warn_once that records warnings instead of
 * printing them, and the CHECK macros. Included once per test program. */
#ifndef POPMON_TEST_SEAM_H
#define POPMON_TEST_SEAM_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Warnings so far, "key|text", at most once per key. */
static char warned[16][512];
static int nwarned;

void popmon_warn_once(const char *key, const char *fmt, ...)
{
	for (int i = 0; i < nwarned; i++)
		if (strncmp(warned[i], key, strlen(key)) == 0 && warned[i][strlen(key)] == '|')
			return;
	if (nwarned >= 16)
		return;
	char line[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	snprintf(warned[nwarned++], sizeof warned[0], "%s|%s", key, line);
}

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
