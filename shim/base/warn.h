/* warn.h: warnings of libpopmon (warn.c), the bottom layer: the
 * "popmon: ..." lines and the list the measurement file keeps. */
#ifndef POPMON_WARN_H
#define POPMON_WARN_H

#define POPMON_MAX_WARNINGS 32

/* Prints one "popmon: ..." line to stderr, at most once per key. */
void popmon_warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int popmon_warning_count(void);
const char *popmon_warning(int i);
/* The key warning i was given (popmon_warn_once). */
const char *popmon_warning_key(int i);

#endif /* POPMON_WARN_H */
