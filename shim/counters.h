/* counters.h: hardware counters of libpopmon (counters.c).
 *
 * Every accounted thread (a CPU of the POP model) counts user-space cycles
 * and instructions with a perf_event group of its own, opened lazily at its
 * first transition into useful time. The counters are read at each
 * useful <-> not-useful transition; what they advance by while the thread is
 * useful is added to the thread's record (POP-METRICS.md §1). Readings come
 * from the mmapped perf page with rdpmc when the kernel allows it, else from
 * read() on the group.
 *
 * The hot-path hook (popmon_ctr_hook below) is one load of
 * popmon_counters_active and one predictable branch when counters are off
 * or unavailable: nothing else runs.
 *
 * The seam for tests: the backend (open, read, close) is behind
 * popmon_ctr_backend, which a unit test replaces to feed recorded readings;
 * the page decoder popmon_ctr_page_read and the group parser
 * popmon_ctr_parse_group are exported for tests that feed fake perf pages
 * and read() buffers (shim/test/counters_test.c).
 */
#ifndef POPMON_COUNTERS_H
#define POPMON_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/threads.h"

/* The counters' per-thread parts (POPMON_CTR_N, struct popmon_ctr_sample,
 * struct popmon_ctr_thread) are in the thread record (base/threads.h). */

/* The head of the kernel's struct perf_event_mmap_page (linux/perf_event.h),
 * declared here with the capability bits as a plain word so that the
 * library builds against any kernel's headers (older ones name the bits
 * differently or lack the later fields; the kernel writes this layout). */
struct popmon_perf_page {
	uint32_t version, compat_version;
	uint32_t lock;          /* seqlock: odd or changed while the kernel updates the page */
	uint32_t index;         /* PMC number + 1; 0: not on the PMU now */
	int64_t offset;         /* add to the PMC value */
	uint64_t time_enabled;  /* ns the event was enabled */
	uint64_t time_running;  /* ns it was on the PMU */
	uint64_t capabilities;  /* POPMON_PERF_CAP_* bits */
	uint16_t pmc_width;     /* bits of the PMC value */
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_offset;
	uint64_t time_zero;
	uint32_t size, reserved_1;
	uint64_t time_cycles;   /* cap_user_time_short */
	uint64_t time_mask;
};
#define POPMON_PERF_CAP_BIT0_IS_DEPRECATED (1ull << 1) /* the bits below have these meanings */
#define POPMON_PERF_CAP_USER_RDPMC (1ull << 2)
#define POPMON_PERF_CAP_USER_TIME (1ull << 3)
#define POPMON_PERF_CAP_USER_TIME_SHORT (1ull << 5)

/* How counters are opened and read; the one in use is popmon_ctr_backend.
 * All functions run on the thread that owns c. */
struct popmon_ctr_backend {
	const char *method; /* "rdpmc" or "read": what the measurement file records */
	/* Opens c's counters for the calling thread: 0, or an errno value. */
	int (*open)(struct popmon_ctr_thread *c);
	/* Reads c's counters into s: 0, or -1 with errno set. */
	int (*read)(struct popmon_ctr_thread *c, struct popmon_ctr_sample *s);
	/* Releases what open acquired. */
	void (*close)(struct popmon_ctr_thread *c);
};

/* 1 while counters are measured in this process: the hot-path gate. Hidden:
 * a PC-relative load, no GOT indirection. */
extern int popmon_counters_active __attribute__((visibility("hidden")));

/* The backend in use (rdpmc or read; tests install their own). */
extern const struct popmon_ctr_backend *popmon_ctr_backend;

/* Slow part of popmon_ctr_hook, on t's own thread: t enters state `to`, and
 * either its current state or `to` is useful. Opens t's counters lazily (at
 * its first transition into useful time, for accounted threads only), reads
 * them, adds what they advanced by since the useful interval began, and
 * starts a new interval when `to` is useful. */
void popmon_ctr_transition(struct popmon_thread *t, uint32_t to) __attribute__((visibility("hidden")));

/* Adds what the counters advanced by from a to b to acc[], scaled for
 * multiplexing: by (enabled delta / running delta) of the interval, or, when
 * the counter did not run at all in it, by its rate over its whole running
 * time. Counts are modulo 2^64 (a reading's count never goes back). */
void popmon_ctr_accumulate(uint64_t acc[POPMON_CTR_N], const struct popmon_ctr_sample *a,
			   const struct popmon_ctr_sample *b);

/* Decodes one counter of a perf_event_mmap_page (the kernel's seqlock
 * protocol: lock, index, offset, pmc_width sign extension, the time fields
 * when multiplexed). Returns 0, or -1 when the page cannot be read in user
 * space (no cap_user_rdpmc, no cap_user_time while multiplexed, or no
 * stable reading): the caller then uses read(). */
int popmon_ctr_page_read(const struct popmon_perf_page *page, uint64_t *count, uint64_t *enabled,
			 uint64_t *running);

/* Parses a read() of the group with PERF_FORMAT_GROUP |
 * PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING
 * ({nr, time_enabled, time_running, value[nr]}) of n bytes into s. Returns 0,
 * or -1 with errno EIO when the buffer is short or holds another group. */
int popmon_ctr_parse_group(const uint64_t *buf, size_t n, struct popmon_ctr_sample *s);

/* Start-up, on the primary thread (its record t is in state useful): reads
 * POPMON_COUNTERS (off | auto | on; default auto), probes perf_event_open
 * by opening t's counters, chooses rdpmc or read() and starts counting, or
 * records why counters are unavailable (in mode on, also as a warning). */
void popmon_counters_init(struct popmon_thread *t);

/* Finalize (or exit): stops counting in this process and closes the calling
 * thread's counters. Call after the last snapshot. */
void popmon_counters_finish(void);

/* A fork()ed child copy: stops counting (its mmapped pages are not
 * inherited). */
void popmon_counters_atfork_child(void);

/* What the measurement file's "counters" object says for this process. */
struct popmon_ctr_info {
	const char *mode;   /* "auto", "on" or "off" */
	int available;      /* counters were measured on every accounted thread */
	const char *method; /* "rdpmc" or "read" when available */
	const char *reason; /* when not available: "counters unavailable: ..." or "counters off ..." */
};
void popmon_counters_info(struct popmon_ctr_info *info);

/* popmon doctor's probe (POPMON_COUNTERS_PROBE=1 in the constructor):
 * opens the calling thread's counter group as popmon_counters_init does,
 * whatever POPMON_COUNTERS says, closes it again, and prints key=value
 * lines on stdout: counters_available (1 or 0); counters_method (rdpmc or
 * read) when available, else counters_reason (the text the measurement
 * file would record) and counters_errno (perf_event_open's errno);
 * perf_event_paranoid (the file's content, empty if unknown) and seccomp
 * (1 when a seccomp filter is active). */
void popmon_counters_probe(void);

/* The reason text for a perf_event_open errno (also used by tests):
 * "counters unavailable: <what> (perf_event_open: <ERRNAME>)", with
 * paranoid the content of /proc/sys/kernel/perf_event_paranoid ("" if
 * unknown) and seccomp whether a seccomp filter is active. */
void popmon_ctr_reason(char *buf, size_t n, int err, const char *paranoid, int seccomp);

/* Hardware counters at a state change of t from `from` to `to`: they are
 * read only where useful time begins or ends. With counters off or
 * unavailable this is one load and one never-taken branch; a build with
 * -DPOPMON_NO_COUNTERS (the benchmarks' baseline) has no counter code here
 * at all. */
static inline __attribute__((always_inline)) void popmon_ctr_hook(struct popmon_thread *t, uint32_t from,
								 uint32_t to)
{
#ifndef POPMON_NO_COUNTERS
	if (__builtin_expect(POPMON_LOAD(popmon_counters_active), 0) &&
	    (from == POPMON_ST_USEFUL || to == POPMON_ST_USEFUL))
		popmon_ctr_transition(t, to);
#else
	(void)t;
	(void)from;
	(void)to;
#endif
}

/* Switches the calling thread's state at time now. */
static inline void popmon_switch(struct popmon_thread *t, uint32_t st, uint64_t now)
{
	popmon_ctr_hook(t, t->state, st);
	popmon_account(t, now);
	POPMON_STORE(t->state, st);
}

#endif /* POPMON_COUNTERS_H */
