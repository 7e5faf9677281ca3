/* warn.c: warnings (warn.h). Bottom layer: calls nothing above it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/process.h"
#include "base/warn.h"

static char warnings[POPMON_MAX_WARNINGS][256];
static char warned_keys[POPMON_MAX_WARNINGS][64];
static int nwarnings;
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

void popmon_warn_once(const char *key, const char *fmt, ...)
{
	if (popmon_proc.inert)
		return;
	pthread_mutex_lock(&warn_lock);
	for (int i = 0; i < nwarnings; i++) {
		if (strncmp(warned_keys[i], key, sizeof warned_keys[i] - 1) == 0) {
			pthread_mutex_unlock(&warn_lock);
			return;
		}
	}
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (nwarnings < POPMON_MAX_WARNINGS) {
		snprintf(warned_keys[nwarnings], sizeof warned_keys[nwarnings], "%s", key);
		snprintf(warnings[nwarnings], sizeof warnings[nwarnings], "%s", line);
		nwarnings++;
	}
	pthread_mutex_unlock(&warn_lock);
	if (!popmon_warns_aloud())
		return; /* recorded; rank 0 writes every process's into the file */
	/* One line, written with one call so ranks do not interleave. */
	char out[300];
	int n = snprintf(out, sizeof out, "popmon: %s\n", line);
	if (n > (int)sizeof out - 1)
		n = (int)sizeof out - 1;
	if (write(2, out, (size_t)n) < 0) {
		/* nothing sensible to do */
	}
}

int popmon_warning_count(void)
{
	return nwarnings;
}

const char *popmon_warning(int i)
{
	return (i >= 0 && i < nwarnings) ? warnings[i] : "";
}

const char *popmon_warning_key(int i)
{
	return (i >= 0 && i < nwarnings) ? warned_keys[i] : "";
}

