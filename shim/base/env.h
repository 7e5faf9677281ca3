/* env.h: the values of the POPMON_* variables, checked (env.c), the bottom
 * layer. A variable that is unset gets its default silently; a bad value (not
 * a number, trailing garbage, out of its bounds, empty, an unknown word) gets
 * one line, "popmon: POPMON_X=value: why; using fallback" (once per
 * variable, by the process that speaks: popmon_warn_once), and the fallback,
 * a safe default: a bad value never crashes, hangs or passes silently. */
#ifndef POPMON_ENV_H
#define POPMON_ENV_H

/* An integer in [lo, hi]; dflt when unset or bad. */
long long popmon_env_int(const char *name, long long dflt, long long lo, long long hi);

/* A duration in seconds, with a fraction ("5", "0.5", "2.25"), as
 * nanoseconds in [lo_ns, hi_ns]; dflt_ns when unset or bad. */
long long popmon_env_seconds_ns(const char *name, long long dflt_ns, long long lo_ns, long long hi_ns);

/* A size in bytes: a number with an optional suffix k, m or g (KiB, MiB,
 * GiB; "64m", "1g", "512KiB", "2MB"), in [lo, hi]; dflt when unset or bad.
 * why_hi says why hi is the bound ("" : "the largest popmon takes"). */
unsigned long long popmon_env_size(const char *name, unsigned long long dflt, unsigned long long lo,
				   unsigned long long hi, const char *why_hi);

/* A mode: "auto" (1), "off", "0", "no", "false" (0), "on", "1", "yes",
 * "true" (2); dflt when unset or bad. */
int popmon_env_mode(const char *name, int dflt);

/* A switch: 1 for "1", "on", "yes", "true", 0 for "0", "off", "no",
 * "false"; dflt when unset; bad_as for another value (one line says so). */
int popmon_env_switch(const char *name, int dflt, int bad_as);
/* Whether environment variable name is set to a true value (not empty,
 * "0", "no", "off" or "false"); a word that is not a switch's is true, and
 * rank 0 of a job says so in one line (popmon_env_switch). */
int popmon_env_true(const char *name);

/* Whether value v of variable name is one of words (NULL-terminated); when
 * it is not (or empty), one line names them and the fallback. Unset (v NULL)
 * is fine. */
int popmon_env_word(const char *name, const char *v, const char *const *words, const char *fallback);

/* The machine's physical memory in bytes (0 when unknown). */
unsigned long long popmon_physical_memory(void);

#endif /* POPMON_ENV_H */
