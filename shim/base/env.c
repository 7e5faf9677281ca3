/* env.c: the POPMON_* variables' values, checked (env.h). Bottom layer:
 * calls nothing above it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "base/process.h"
#include "base/warn.h"

/* The value as printed: at most 40 characters, non-printable ones as '?'. */
static void shown(const char *v, char out[48])
{
	size_t n = 0;
	for (; v[n] && n < 40; n++)
		out[n] = (v[n] >= 0x20 && v[n] < 0x7f) ? v[n] : '?';
	if (v[n]) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}

static void bad(const char *name, const char *v, const char *why, const char *fallback)
{
	char s[48];
	shown(v, s);
	popmon_warn_once(name, "%s=%s: %s; using %s", name, s, why, fallback);
}

/* Parses an integer; 0 with *why set when v is not one. */
static long long parse_int(const char *v, const char **why)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (!*v) {
		*why = "empty, not a number";
	} else if (end == v || (*v != '-' && *v != '+' && (*v < '0' || *v > '9'))) {
		*why = "not a number";
	} else if (errno == ERANGE) {
		*why = "out of range";
	} else if (*end) {
		*why = "trailing characters after the number";
	} else {
		*why = NULL;
	}
	return x;
}

long long popmon_env_int(const char *name, long long dflt, long long lo, long long hi)
{
	const char *v = getenv(name);
	if (!v)
		return dflt;
	const char *why;
	long long x = parse_int(v, &why);
	char text[96], fb[32];
	snprintf(fb, sizeof fb, "%lld", dflt);
	if (why) {
		bad(name, v, why, fb);
		return dflt;
	}
	if (x < lo || x > hi) {
		snprintf(text, sizeof text, "outside %lld-%lld", lo, hi);
		bad(name, v, text, fb);
		return dflt;
	}
	return x;
}

long long popmon_env_seconds_ns(const char *name, long long dflt_ns, long long lo_ns, long long hi_ns)
{
	const char *v = getenv(name);
	if (!v)
		return dflt_ns;
	char fb[32], text[96];
	snprintf(fb, sizeof fb, "%g", (double)dflt_ns / 1e9);
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (!*v) {
		bad(name, v, "empty, not a number of seconds", fb);
		return dflt_ns;
	}
	/* Digits and one point only: no sign, exponent, hex, inf or nan. */
	int digits = 0, points = 0;
	for (const char *c = v; c < end; c++) {
		digits += *c >= '0' && *c <= '9';
		points += *c == '.';
		if ((*c < '0' || *c > '9') && *c != '.')
			digits = -1000;
	}
	if (end == v || digits <= 0 || points > 1) {
		bad(name, v, "not a number of seconds", fb);
		return dflt_ns;
	}
	if (*end) {
		bad(name, v, "trailing characters after the number of seconds", fb);
		return dflt_ns;
	}
	if (errno == ERANGE || d * 1e9 < (double)lo_ns || d * 1e9 > (double)hi_ns) {
		snprintf(text, sizeof text, "outside %g-%g seconds", (double)lo_ns / 1e9, (double)hi_ns / 1e9);
		bad(name, v, text, fb);
		return dflt_ns;
	}
	return (long long)(d * 1e9);
}

/* "64m" as bytes in text. */
static void show_size(unsigned long long b, char *text, size_t n)
{
	if (b >= (1ull << 30) && b % (1ull << 30) == 0)
		snprintf(text, n, "%llug", b >> 30);
	else if (b >= (1ull << 20) && b % (1ull << 20) == 0)
		snprintf(text, n, "%llum", b >> 20);
	else if (b >= (1ull << 10) && b % (1ull << 10) == 0)
		snprintf(text, n, "%lluk", b >> 10);
	else
		snprintf(text, n, "%llu", b);
}

unsigned long long popmon_env_size(const char *name, unsigned long long dflt, unsigned long long lo,
				   unsigned long long hi, const char *why_hi)
{
	const char *v = getenv(name);
	if (!v)
		return dflt;
	char fb[32], l[32], h[32], text[200];
	show_size(dflt, fb, sizeof fb);
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (!*v) {
		bad(name, v, "empty, not a size", fb);
		return dflt;
	}
	if (*v < '0' || *v > '9') {
		bad(name, v, "not a size (a number of bytes with k, m or g)", fb);
		return dflt;
	}
	int shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift && *end == 'i')
		end++;
	if (*end == 'B' || (*end == 'b' && !end[1]))
		end++;
	if (*end) {
		bad(name, v, "trailing characters after the size (k, m or g)", fb);
		return dflt;
	}
	if (errno == ERANGE || (shift && x > (~0ull >> shift))) {
		x = ~0ull;
	} else {
		x <<= shift;
	}
	show_size(lo, l, sizeof l);
	show_size(hi, h, sizeof h);
	if (x < lo) {
		snprintf(text, sizeof text, "below the smallest, %s", l);
		bad(name, v, text, fb);
		return dflt;
	}
	if (x > hi) {
		snprintf(text, sizeof text, "more than %s (%s)", h, why_hi && *why_hi ? why_hi : "the largest popmon takes");
		bad(name, v, text, fb);
		return dflt;
	}
	return x;
}

int popmon_env_word(const char *name, const char *v, const char *const *words, const char *fallback)
{
	if (!v)
		return 1;
	for (const char *const *w = words; *w; w++)
		if (strcmp(v, *w) == 0)
			return 1;
	char why[160];
	size_t n = (size_t)snprintf(why, sizeof why, "%s", *v ? "not one of" : "empty, not one of");
	for (const char *const *w = words; *w && n < sizeof why; w++)
		n += (size_t)snprintf(why + n, sizeof why - n, "%s %s", w == words ? "" : ",", *w);
	bad(name, v, why, fallback);
	return 0;
}

int popmon_env_mode(const char *name, int dflt)
{
	static const char *const words[] = {"auto", "on", "off", "1", "0", "yes", "no", "true", "false", NULL};
	static const char *const names[] = {"off", "auto", "on"};
	const char *v = getenv(name);
	if (!v || !popmon_env_word(name, v, words, names[dflt < 0 || dflt > 2 ? 1 : dflt]))
		return dflt;
	if (strcmp(v, "auto") == 0)
		return 1;
	if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0 || strcmp(v, "false") == 0)
		return 0;
	return 2;
}

int popmon_env_switch(const char *name, int dflt, int bad_as)
{
	static const char *const words[] = {"1", "0", "on", "off", "yes", "no", "true", "false", NULL};
	const char *v = getenv(name);
	if (!v)
		return dflt;
	if (!popmon_env_word(name, v, words, bad_as ? "1" : "0"))
		return bad_as;
	return strcmp(v, "1") == 0 || strcmp(v, "on") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "true") == 0;
}

unsigned long long popmon_physical_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return 0;
	return (unsigned long long)pages * (unsigned long long)size;
}

int popmon_env_true(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	if (popmon_env_rank(NULL) < 0) {
		/* Not a rank: a launcher (or its proxy) has the job's environment
		 * too, and the ranks say what is wrong with the value, once. */
		return strcmp(v, "0") != 0 && strcmp(v, "no") != 0 && strcmp(v, "off") != 0 && strcmp(v, "false") != 0;
	}
	return popmon_env_switch(name, 0, 1); /* another word: true, as always, with one line */
}
