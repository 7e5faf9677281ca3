/* counters.c: hardware counters (user-space cycles and instructions during
 * useful time) through the kernel's perf_event interface, without PAPI.
 *
 * Mode (POPMON_COUNTERS, popmon run --counters): off, auto (default) or on.
 * At start-up the primary thread opens its counter group: that is the probe.
 * If it fails (no PMU, perf_event_paranoid, a seccomp filter, ...) the reason
 * is recorded for the measurement file, counting stays off for the whole
 * process and the hot path runs no counter code; mode on also prints one
 * warning. If it succeeds, popmon_counters_active turns on and:
 *
 *  - every accounted thread (a CPU of the POP model: the primary thread,
 *    OpenMP threads) opens its own group (cycles leading, instructions),
 *    user space only, lazily at its first transition into useful time;
 *  - at each transition into useful time the thread reads its counters
 *    (start of the interval); at each transition out of it, reads them again
 *    and adds the difference, scaled for multiplexing, to its record;
 *  - readings use rdpmc on the mmapped perf page (the kernel's seqlock
 *    protocol) when the kernel allows it (cap_user_rdpmc), else one read()
 *    of the group (PERF_FORMAT_GROUP with enabled and running times);
 *  - a thread whose counters cannot be opened or read later makes the
 *    process's counters incomplete: counting stops, the file says why, and
 *    one warning is printed.
 *
 * Descriptors are opened close-on-exec, closed at thread exit (a thread-key
 * destructor) and, for the calling thread, at finalize. A fork()ed child
 * stops counting (the perf pages are not inherited).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#include <linux/perf_event.h>
#define POPMON_HAVE_PERF 1
#endif
#endif

#include "base/clock.h"
#include "base/env.h"
#include "base/threads.h"
#include "base/warn.h"
#include "counters.h"

int popmon_counters_active;

/* ------------------------------------------------------------------ rdpmc */

#if defined(POPMON_COUNTERS_TEST)
/* Unit tests (shim/test/counters_test.c) feed recorded values. */
uint64_t popmon_test_rdpmc(uint32_t counter);
uint64_t popmon_test_rdtsc(void);
#define POPMON_HAVE_RDPMC 1
static inline uint64_t ctr_rdpmc(uint32_t counter)
{
	return popmon_test_rdpmc(counter);
}
static inline uint64_t ctr_rdtsc(void)
{
	return popmon_test_rdtsc();
}
#elif defined(__x86_64__) || defined(__i386__)
#define POPMON_HAVE_RDPMC 1
static inline uint64_t ctr_rdpmc(uint32_t counter)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t ctr_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#else
#define POPMON_HAVE_RDPMC 0
#endif

#define CTR_BARRIER() __asm__ __volatile__("" ::: "memory")

_Static_assert(offsetof(struct popmon_perf_page, capabilities) == 40 &&
		       offsetof(struct popmon_perf_page, pmc_width) == 48 &&
		       offsetof(struct popmon_perf_page, time_offset) == 56 &&
		       offsetof(struct popmon_perf_page, time_mask) == 88,
	       "struct popmon_perf_page must match the kernel's perf_event_mmap_page");

int popmon_ctr_page_read(const struct popmon_perf_page *page, uint64_t *count, uint64_t *enabled,
			 uint64_t *running)
{
#if POPMON_HAVE_RDPMC
	const volatile struct popmon_perf_page *pc = page;
	if (!pc)
		return -1;
	for (int tries = 0; tries < 64; tries++) {
		uint32_t seq = pc->lock;
		CTR_BARRIER();
		uint64_t caps = pc->capabilities;
		if (!(caps & POPMON_PERF_CAP_BIT0_IS_DEPRECATED))
			return -1; /* a kernel before 3.12: other capability bits */
		uint64_t ena = pc->time_enabled, run = pc->time_running;
		uint64_t cyc = 0, toff = 0, tcyc = 0, tmask = 0;
		uint32_t mult = 0;
		uint16_t shift = 0;
		int timed = ena != run;
		if (timed) {
			/* Multiplexed: the time since the page's last update is
			 * needed to scale. */
			if (!(caps & POPMON_PERF_CAP_USER_TIME))
				return -1;
			cyc = ctr_rdtsc();
			toff = pc->time_offset;
			mult = pc->time_mult;
			shift = pc->time_shift;
			if (caps & POPMON_PERF_CAP_USER_TIME_SHORT) {
				tcyc = pc->time_cycles;
				tmask = pc->time_mask;
			}
		}
		uint32_t idx = pc->index;
		uint64_t c = (uint64_t)pc->offset, pmc = 0;
		uint16_t width = 0;
		if (idx) {
			if (!(caps & POPMON_PERF_CAP_USER_RDPMC))
				return -1;
			width = pc->pmc_width;
			pmc = ctr_rdpmc(idx - 1);
		}
		CTR_BARRIER();
		if (pc->lock != seq)
			continue; /* the kernel updated the page meanwhile */
		if (idx) {
			if (width == 0 || width > 64)
				return -1;
			if (width < 64) {
				/* The PMC is pmc_width bits wide: sign-extend it, so
				 * that a counter that wrapped past 2^width is a small
				 * positive value again and offset + pmc stays right. */
				unsigned sh = 64u - width;
				pmc = (uint64_t)((int64_t)(pmc << sh) >> sh);
			}
			c += pmc;
		}
		if (timed) {
			if (shift >= 64)
				return -1;
			if (caps & POPMON_PERF_CAP_USER_TIME_SHORT)
				cyc = tcyc + ((cyc - tcyc) & tmask);
			uint64_t quot = cyc >> shift, rem = cyc & ((1ull << shift) - 1);
			uint64_t delta = toff + quot * mult + ((rem * mult) >> shift);
			ena += delta;
			if (idx)
				run += delta;
		}
		*count = c;
		*enabled = ena;
		*running = run;
		return 0;
	}
	return -1;
#else
	(void)page;
	(void)count;
	(void)enabled;
	(void)running;
	return -1;
#endif
}

int popmon_ctr_parse_group(const uint64_t *buf, size_t n, struct popmon_ctr_sample *s)
{
	if (n < (3 + POPMON_CTR_N) * sizeof(uint64_t) || buf[0] != POPMON_CTR_N) {
		errno = EIO;
		return -1;
	}
	for (int i = 0; i < POPMON_CTR_N; i++) {
		s->count[i] = buf[3 + i];
		s->enabled[i] = buf[1];
		s->running[i] = buf[2];
	}
	return 0;
}

/* v * num / den without overflow (den > 0). */
static uint64_t mul_div(uint64_t v, uint64_t num, uint64_t den)
{
#if defined(__SIZEOF_INT128__)
	unsigned __int128 x = (unsigned __int128)v * num / den;
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
#else
	long double x = (long double)v * (long double)num / (long double)den;
	return x >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)x;
#endif
}

void popmon_ctr_accumulate(uint64_t acc[POPMON_CTR_N], const struct popmon_ctr_sample *a,
			   const struct popmon_ctr_sample *b)
{
	for (int i = 0; i < POPMON_CTR_N; i++) {
		/* Modulo 2^64; a difference above 2^63 is a reading that went
		 * backwards (never a count) and is dropped. */
		uint64_t d = b->count[i] - a->count[i];
		if ((int64_t)d < 0)
			continue;
		uint64_t de = b->enabled[i] - a->enabled[i];
		uint64_t dr = b->running[i] - a->running[i];
		uint64_t v = d;
		if ((int64_t)de <= 0 || (int64_t)dr < 0 || dr == de)
			v = d; /* not multiplexed in this interval */
		else if (dr > 0)
			v = mul_div(d, de, dr); /* counted dr of de ns: extrapolate */
		else if (b->running[i] > 0)
			/* Not scheduled at all in the interval: its average rate
			 * over the time it ran. */
			v = mul_div(b->count[i], de, b->running[i]);
		POPMON_ADD(acc[i], v);
	}
}

/* ------------------------------------------------------------------ perf_event */

#if defined(POPMON_HAVE_PERF) && defined(SYS_perf_event_open)

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3)
#endif

static long perf_open(struct perf_event_attr *a, int group)
{
	long fd = syscall(SYS_perf_event_open, a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		/* Kernels before 3.14 lack the flag. */
		fd = syscall(SYS_perf_event_open, a, 0, -1, group, 0UL);
		if (fd >= 0)
			fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	}
	return fd;
}

static void close_fds(struct popmon_ctr_thread *c)
{
	for (int i = POPMON_CTR_N - 1; i >= 0; i--) {
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		c->fd[i] = -1;
	}
}

/* Opens the calling thread's group: cycles (leader) and instructions,
 * user space only, counting from now. */
static int open_group(struct popmon_ctr_thread *c)
{
	static const uint64_t config[POPMON_CTR_N] = {PERF_COUNT_HW_CPU_CYCLES,
						      PERF_COUNT_HW_INSTRUCTIONS};
	for (int i = 0; i < POPMON_CTR_N; i++) {
		c->fd[i] = -1;
		c->page[i] = NULL;
	}
	for (int i = 0; i < POPMON_CTR_N; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = PERF_TYPE_HARDWARE;
		a.config = config[i];
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		long fd = perf_open(&a, i == 0 ? -1 : c->fd[0]);
		if (fd < 0) {
			int err = errno ? errno : EIO;
			close_fds(c);
			return err;
		}
		c->fd[i] = (int)fd;
	}
	return 0;
}

static int read_syscall(struct popmon_ctr_thread *c, struct popmon_ctr_sample *s)
{
	uint64_t buf[3 + POPMON_CTR_N];
	ssize_t n = read(c->fd[0], buf, sizeof buf);
	if (n < 0)
		return -1;
	return popmon_ctr_parse_group(buf, (size_t)n, s);
}

static void close_read(struct popmon_ctr_thread *c)
{
	close_fds(c);
}

static const struct popmon_ctr_backend backend_read = {"read", open_group, read_syscall, close_read};

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : 4096;
}

static int open_rdpmc(struct popmon_ctr_thread *c)
{
	int err = open_group(c);
	if (err)
		return err;
	for (int i = 0; i < POPMON_CTR_N; i++) {
		void *p = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, c->fd[i], 0);
		c->page[i] = p == MAP_FAILED ? NULL : p; /* NULL: read() for this thread */
	}
	return 0;
}

static int read_rdpmc(struct popmon_ctr_thread *c, struct popmon_ctr_sample *s)
{
	for (int i = 0; i < POPMON_CTR_N; i++)
		if (popmon_ctr_page_read(c->page[i], &s->count[i], &s->enabled[i], &s->running[i]) != 0)
			return read_syscall(c, s); /* not readable in user space right now */
	return 0;
}

static void unmap_pages(struct popmon_ctr_thread *c)
{
	for (int i = 0; i < POPMON_CTR_N; i++) {
		if (c->page[i])
			munmap(c->page[i], page_size());
		c->page[i] = NULL;
	}
}

static void close_rdpmc(struct popmon_ctr_thread *c)
{
	unmap_pages(c);
	close_fds(c);
}

static const struct popmon_ctr_backend backend_rdpmc = {"rdpmc", open_rdpmc, read_rdpmc, close_rdpmc};

#if defined(POPMON_COUNTERS_TEST)
/* The real backends, for the tests' "real" scenario. */
const struct popmon_ctr_backend *const popmon_test_backend_read = &backend_read;
const struct popmon_ctr_backend *const popmon_test_backend_rdpmc = &backend_rdpmc;
#else

/* Whether the kernel lets this process use rdpmc on its mmapped events: the
 * page says so, or the PMU's sysfs "rdpmc" knob is 1 (for mmapped events,
 * the default) or 2 (always); the page's bit may be set only at the next
 * context switch. */
static int rdpmc_allowed(const struct popmon_ctr_thread *c)
{
	if (!POPMON_HAVE_RDPMC)
		return 0;
	for (int i = 0; i < POPMON_CTR_N; i++)
		if (!c->page[i])
			return 0;
	const volatile struct popmon_perf_page *pc = c->page[0];
	if ((pc->capabilities & POPMON_PERF_CAP_BIT0_IS_DEPRECATED) &&
	    (pc->capabilities & POPMON_PERF_CAP_USER_RDPMC))
		return 1;
	static const char *const knobs[] = {"/sys/bus/event_source/devices/cpu/rdpmc",
					    "/sys/bus/event_source/devices/cpu_core/rdpmc", NULL};
	for (const char *const *k = knobs; *k; k++) {
		FILE *f = fopen(*k, "r");
		if (!f)
			continue;
		int v = 0;
		int ok = fscanf(f, "%d", &v) == 1;
		fclose(f);
		if (ok)
			return v >= 1;
	}
	return 0;
}
#endif

#else /* no <linux/perf_event.h> or no perf_event_open system call number */

static int open_none(struct popmon_ctr_thread *c)
{
	(void)c;
	return ENOSYS;
}

static int read_none(struct popmon_ctr_thread *c, struct popmon_ctr_sample *s)
{
	(void)c;
	(void)s;
	errno = ENOSYS;
	return -1;
}

static void close_none(struct popmon_ctr_thread *c)
{
	(void)c;
}

static const struct popmon_ctr_backend backend_read = {"read", open_none, read_none, close_none};
#endif

const struct popmon_ctr_backend *popmon_ctr_backend = &backend_read;

/* ------------------------------------------------------------------ reasons */

static const char *errno_name(int err, char *buf, size_t n)
{
	switch (err) {
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENFILE: return "ENFILE";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	case E2BIG: return "E2BIG";
	case EBADF: return "EBADF";
	case EIO: return "EIO";
	}
	snprintf(buf, n, "errno %d", err);
	return buf;
}

void popmon_ctr_reason(char *buf, size_t n, int err, const char *paranoid, int seccomp)
{
	char what[160], name[32];
	int level = paranoid && *paranoid ? atoi(paranoid) : -1000;
	switch (err) {
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		snprintf(what, sizeof what, "the CPU's performance monitoring unit is not exposed here");
		break;
	case EPERM:
	case EACCES:
		/* EPERM: a seccomp filter (Docker's default profile), else like
		 * EACCES perf_event_paranoid or a security module. */
		if (err == EPERM && seccomp)
			snprintf(what, sizeof what, "perf_event_open is blocked by a seccomp filter");
		else if (level > 2)
			snprintf(what, sizeof what, "not permitted: kernel.perf_event_paranoid=%d must be 2 or lower",
				 level);
		else if (level != -1000)
			snprintf(what, sizeof what, "not permitted, kernel.perf_event_paranoid=%d", level);
		else
			snprintf(what, sizeof what, "not permitted");
		break;
	case ENOSYS:
		snprintf(what, sizeof what, "%s",
			 seccomp ? "perf_event_open is blocked by a seccomp filter"
				 : "the kernel has no perf_event support");
		break;
	case EINVAL:
		snprintf(what, sizeof what, "the PMU cannot count cycles and instructions in user space");
		break;
	case EMFILE:
	case ENFILE:
		snprintf(what, sizeof what, "too many open files");
		break;
	case EBUSY:
		snprintf(what, sizeof what, "the PMU is in use by another tool");
		break;
	default:
		snprintf(what, sizeof what, "%s", strerror(err));
		break;
	}
	snprintf(buf, n, "counters unavailable: %s (perf_event_open: %s)", what,
		 errno_name(err, name, sizeof name));
}

/* The content of /proc/sys/kernel/perf_event_paranoid, trimmed ("" if none). */
static void read_paranoid(char *buf, size_t n)
{
	buf[0] = '\0';
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (!f)
		return;
	if (fgets(buf, (int)n, f)) {
		size_t k = strlen(buf);
		while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == ' '))
			buf[--k] = '\0';
	} else {
		buf[0] = '\0';
	}
	fclose(f);
}

/* Whether a seccomp filter is active in this process (/proc/self/status). */
static int seccomp_filtered(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 0;
	char line[256];
	int mode = 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "Seccomp:", 8) == 0) {
			mode = atoi(line + 8);
			break;
		}
	fclose(f);
	return mode == 2;
}

static void describe_open_error(char *buf, size_t n, int err)
{
	char paranoid[32];
	read_paranoid(paranoid, sizeof paranoid);
	popmon_ctr_reason(buf, n, err, paranoid, seccomp_filtered());
}

/* ------------------------------------------------------------------ process */

enum { MODE_OFF = 0, MODE_AUTO, MODE_ON };
static const char *const mode_names[] = {"off", "auto", "on"};

static int mode = MODE_AUTO;
static int probe_ok;           /* the primary thread's counters opened */
static char probe_reason[256]; /* why not */
static int thread_failed;      /* 0, 1 while the reason is written, 2 when thread_reason is set */
static char thread_reason[256];
static pthread_key_t exit_key;
static int have_exit_key;

/* Whether this process is rank 0 (or not an MPI rank) as far as the
 * launcher's environment tells before MPI_Init: the one to print warnings
 * that every rank would print alike. */
static int likely_rank0(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
					   "SLURM_PROCID", "MV2_COMM_WORLD_RANK", NULL};
	for (const char *const *v = vars; *v; v++) {
		const char *s = getenv(*v);
		if (s && *s)
			return strcmp(s, "0") == 0;
	}
	return 1;
}

/* Gives up counters in this process because thread t's could not be opened
 * or read (err, from what): the first failure stops counting, records why
 * and warns once. */
static void thread_failure(struct popmon_thread *t, int err, const char *what)
{
	struct popmon_ctr_thread *c = &t->ctr;
	if (c->status == POPMON_CTR_OPEN)
		popmon_ctr_backend->close(c);
	c->status = POPMON_CTR_FAILED;
	c->counting = 0;
	int expected = 0;
	if (!__atomic_compare_exchange_n(&thread_failed, &expected, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&popmon_counters_active, 0, __ATOMIC_RELAXED);
	char why[200], name[32];
	if (strcmp(what, "perf_event_open") == 0) {
		describe_open_error(why, sizeof why, err);
		snprintf(thread_reason, sizeof thread_reason, "%s on thread %u", why, t->slot);
	} else {
		snprintf(thread_reason, sizeof thread_reason,
			 "counters unavailable: reading them failed on thread %u (%s: %s)", t->slot, what,
			 errno_name(err, name, sizeof name));
	}
	__atomic_store_n(&thread_failed, 2, __ATOMIC_RELEASE);
	popmon_warn_once("counters-thread", "hardware counters stopped: %s: no computational metrics",
			 thread_reason + strlen("counters unavailable: "));
}

static void thread_exit(void *p)
{
	struct popmon_thread *t = p;
	if (t && t->ctr.status == POPMON_CTR_OPEN) {
		popmon_ctr_backend->close(&t->ctr);
		t->ctr.status = POPMON_CTR_CLOSED;
		t->ctr.counting = 0;
	}
}

void popmon_ctr_transition(struct popmon_thread *t, uint32_t to)
{
	struct popmon_ctr_thread *c = &t->ctr;
	if (__builtin_expect(c->status != POPMON_CTR_OPEN, 0)) {
		/* Lazily, at the first transition into useful time: a thread's
		 * counting starts with a useful interval. */
		if (c->status != POPMON_CTR_NEW || to != POPMON_ST_USEFUL || !t->accounted)
			return;
		int err = popmon_ctr_backend->open(c);
		if (err) {
			thread_failure(t, err, "perf_event_open");
			return;
		}
		c->status = POPMON_CTR_OPEN;
		c->counting = 0;
		if (have_exit_key && t->slot != 0)
			pthread_setspecific(exit_key, t);
	}
	struct popmon_ctr_sample s;
	if (__builtin_expect(popmon_ctr_backend->read(c, &s) != 0, 0)) {
		thread_failure(t, errno, "read");
		return;
	}
	if (c->counting)
		popmon_ctr_accumulate(c->acc, &c->start, &s);
	if (to == POPMON_ST_USEFUL) {
		c->start = s;
		c->counting = 1;
	} else {
		c->counting = 0;
	}
}

void popmon_counters_init(struct popmon_thread *t)
{
	mode = popmon_env_mode("POPMON_COUNTERS", MODE_AUTO); /* 0 off, 1 auto, 2 on */
	if (mode == MODE_OFF) {
		snprintf(probe_reason, sizeof probe_reason, "counters off (POPMON_COUNTERS=off)");
		return;
	}
#ifdef POPMON_NO_COUNTERS
	snprintf(probe_reason, sizeof probe_reason, "counters off (libpopmon built with POPMON_NO_COUNTERS)");
	return;
#endif
	if (!t)
		return;
#if defined(POPMON_HAVE_PERF) && defined(SYS_perf_event_open) && !defined(POPMON_COUNTERS_TEST)
	/* POPMON_COUNTERS_METHOD=read: never rdpmc (benchmarks, diagnosis). */
	static const char *const methods[] = {"auto", "read", NULL};
	const char *method = getenv("POPMON_COUNTERS_METHOD");
	int force_read = popmon_env_word("POPMON_COUNTERS_METHOD", method, methods, "auto") && method &&
			 strcmp(method, "read") == 0;
	popmon_ctr_backend = &backend_rdpmc;
	int err = backend_rdpmc.open(&t->ctr);
	if (!err && (force_read || !rdpmc_allowed(&t->ctr))) {
		unmap_pages(&t->ctr); /* keep the descriptors: read() them */
		popmon_ctr_backend = &backend_read;
	}
#else
	/* Without perf_event support, or in unit tests: the installed backend. */
	int err = popmon_ctr_backend->open(&t->ctr);
#endif
	if (err) {
		t->ctr.status = POPMON_CTR_FAILED;
		describe_open_error(probe_reason, sizeof probe_reason, err);
		if (mode == MODE_ON && likely_rank0())
			popmon_warn_once("counters", "hardware counters requested (POPMON_COUNTERS=on) but %s: "
						     "no IPC, frequency or instruction metrics",
					 probe_reason);
		return;
	}
	t->ctr.status = POPMON_CTR_OPEN;
	t->ctr.counting = 0;
	have_exit_key = pthread_key_create(&exit_key, thread_exit) == 0;
	probe_ok = 1;
	__atomic_store_n(&popmon_counters_active, 1, __ATOMIC_RELEASE);
	if (t->state == POPMON_ST_USEFUL)
		popmon_ctr_transition(t, POPMON_ST_USEFUL);
}

void popmon_counters_finish(void)
{
	__atomic_store_n(&popmon_counters_active, 0, __ATOMIC_RELAXED);
	struct popmon_thread *t = popmon_tls;
	if (t && t->ctr.status == POPMON_CTR_OPEN) {
		popmon_ctr_backend->close(&t->ctr);
		t->ctr.status = POPMON_CTR_CLOSED;
		t->ctr.counting = 0;
	}
}

void popmon_counters_atfork_child(void)
{
	__atomic_store_n(&popmon_counters_active, 0, __ATOMIC_RELAXED);
}

void popmon_counters_probe(void)
{
	struct popmon_ctr_thread c;
	memset(&c, 0, sizeof c);
	char paranoid[32];
	read_paranoid(paranoid, sizeof paranoid);
	int seccomp = seccomp_filtered();
	const char *method = "read";
#if defined(POPMON_HAVE_PERF) && defined(SYS_perf_event_open) && !defined(POPMON_COUNTERS_TEST)
	/* What popmon_counters_init does (POPMON_COUNTERS_METHOD aside). */
	int err = backend_rdpmc.open(&c);
	if (!err) {
		if (rdpmc_allowed(&c))
			method = "rdpmc";
		backend_rdpmc.close(&c);
	}
#else
	const struct popmon_ctr_backend *b = popmon_ctr_backend;
	int err = b->open(&c);
	if (!err) {
		method = b->method;
		b->close(&c);
	}
#endif
	printf("counters_available=%d\n", !err);
	if (err) {
		char reason[256];
		popmon_ctr_reason(reason, sizeof reason, err, paranoid, seccomp);
		printf("counters_reason=%s\ncounters_errno=%d\n", reason, err);
	} else {
		printf("counters_method=%s\n", method);
	}
	printf("perf_event_paranoid=%s\nseccomp=%d\n", paranoid, seccomp);
	fflush(stdout);
}

void popmon_counters_info(struct popmon_ctr_info *info)
{
	int failed = __atomic_load_n(&thread_failed, __ATOMIC_ACQUIRE);
	info->mode = mode_names[mode];
	info->available = probe_ok && failed == 0;
	info->method = info->available ? popmon_ctr_backend->method : "";
	if (info->available)
		info->reason = "";
	else if (failed == 2)
		info->reason = thread_reason;
	else if (failed == 1)
		info->reason = "counters unavailable: they failed on a thread";
	else if (probe_reason[0])
		info->reason = probe_reason;
	else
		info->reason = "counters unavailable: not probed in this process";
}
