/* counters_test.c: unit tests of the hardware-counter code (shim/counters.c)
 * that need no PMU: recorded counter readings are fed through the backend
 * seam (popmon_ctr_backend), fake perf pages through popmon_ctr_page_read
 * with a scripted rdpmc, and read() buffers through popmon_ctr_parse_group.
 *
 * Built and run by internal/shimbuild's TestCountersC:
 *
 *   cc -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -DPOPMON_COUNTERS_TEST -Ishim \
 *      shim/base/{clock,process,threads,warn}.c shim/counters.c shim/test/counters_test.c -ldl -lpthread -o counters_test
 *   ./counters_test SCENARIO      (one process per scenario: counters.c keeps
 *                                  process-wide state)
 *
 * Exits 0 and prints "ok SCENARIO" on success, prints "FAIL ..." lines and
 * exits 1 otherwise; "reasons" prints the reason table (checked by
 * internal/shimbuild TestCountersReasons).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/process.h"
#include "base/threads.h"
#include "counters.h"
#include "mpi/mpi.h"

/* ------------------------------------------------------------------ stubs of mpi/trace.c */

/* The bottom layer (shim/base: the clock, CLOCK_MONOTONIC here as
 * popmon_clock_tsc stays 0; the process; the thread table; warnings) is
 * linked as it is. Tracing is off here (trace.c is not linked). */
int popmon_trace_on;
uint64_t popmon_trace_call(struct popmon_thread *t, int fn, uint64_t enter, uint64_t leave)
{
	(void)t;
	(void)fn;
	(void)enter;
	return leave;
}

#include "test/seam.h"

static struct popmon_thread *new_record(int accounted, uint32_t state, uint32_t slot)
{
	struct popmon_thread *t = aligned_alloc(64, sizeof *t);
	if (!t) {
		printf("FAIL out of memory\n");
		exit(1);
	}
	memset(t, 0, sizeof *t);
	t->accounted = (uint32_t)accounted;
	t->state = state;
	t->slot = slot;
	t->last = popmon_now();
	popmon_tls = t;
	return t;
}

/* ------------------------------------------------------------------ fake backend */

/* A recorded sequence of readings per thread; the fake open gives each
 * thread the next script (its id in fd[0]). */
struct script {
	int n, pos;
	struct popmon_ctr_sample s[16];
};

static struct script scripts[4];
static int fake_opens, fake_closes, fake_reads;
static int fail_open_of_script = -1; /* open of this script fails with EMFILE */
static int fail_open_errno;          /* every open fails with this errno (probe tests) */

static int fake_open(struct popmon_ctr_thread *c)
{
	int id = __atomic_fetch_add(&fake_opens, 1, __ATOMIC_RELAXED);
	if (fail_open_errno)
		return fail_open_errno;
	if (id == fail_open_of_script)
		return EMFILE;
	c->fd[0] = id;
	c->fd[1] = -1;
	return 0;
}

static int fake_read(struct popmon_ctr_thread *c, struct popmon_ctr_sample *s)
{
	__atomic_fetch_add(&fake_reads, 1, __ATOMIC_RELAXED);
	struct script *sc = &scripts[c->fd[0]];
	if (sc->pos >= sc->n) {
		errno = EBADF; /* the script ran out: a read the test did not expect */
		return -1;
	}
	*s = sc->s[sc->pos++];
	return 0;
}

static void fake_close(struct popmon_ctr_thread *c)
{
	(void)c;
	__atomic_fetch_add(&fake_closes, 1, __ATOMIC_RELAXED);
}

static const struct popmon_ctr_backend fake = {"rdpmc", fake_open, fake_read, fake_close};

/* A reading with the counter always running (no multiplexing). */
static struct popmon_ctr_sample plain(uint64_t cycles, uint64_t instructions)
{
	struct popmon_ctr_sample s = {{cycles, instructions}, {1000, 1000}, {1000, 1000}};
	return s;
}

/* ------------------------------------------------------------------ scenarios */

/* Counts only while the thread is useful: MPI calls (also nested), OpenMP
 * idle time and snapshots; the MPI hot path of mpi/mpi.h. */
static void scenario_useful(void)
{
	popmon_ctr_backend = &fake;
	struct script *sc = &scripts[0];
	sc->s[sc->n++] = plain(1000, 2000);   /* 0: start (init, useful) */
	sc->s[sc->n++] = plain(1500, 3000);   /* 1: enter MPI: +500 +1000 */
	sc->s[sc->n++] = plain(9500, 9000);   /* 2: leave MPI: 8000/6000 inside MPI, not counted */
	sc->s[sc->n++] = plain(10000, 10000); /* 3: enter MPI: +500 +1000 */
	sc->s[sc->n++] = plain(20000, 20000); /* 4: leave MPI */
	sc->s[sc->n++] = plain(20100, 20300); /* 5: snapshot (useful -> useful): +100 +300 */
	sc->s[sc->n++] = plain(20200, 20500); /* 6: to OpenMP idle: +100 +200 */
	sc->s[sc->n++] = plain(90000, 90000); /* 7: back to useful */
	sc->s[sc->n++] = plain(90007, 90011); /* 8: finish: +7 +11 */

	struct popmon_thread *t = new_record(1, POPMON_ST_USEFUL, 0);
	popmon_counters_init(t);
	CHECK(popmon_counters_active == 1, "counters not active after a successful probe");
	CHECK(fake_opens == 1 && fake_reads == 1, "init: %d opens, %d reads, want 1, 1", fake_opens, fake_reads);

	popmon_mpi_enter();
	CHECK_U64(t->ctr.acc[POPMON_CTR_CYCLES], 500);
	CHECK_U64(t->ctr.acc[POPMON_CTR_INSTRUCTIONS], 1000);
	popmon_mpi_leave(0);
	popmon_mpi_enter();
	popmon_mpi_enter(); /* nested: counted once, no reading */
	popmon_mpi_leave(0);
	CHECK(fake_reads == 4, "nested MPI call read the counters (%d reads, want 4)", fake_reads);
	popmon_mpi_leave(0);
	CHECK_U64(t->ctr.acc[POPMON_CTR_CYCLES], 1000);
	CHECK_U64(t->ctr.acc[POPMON_CTR_INSTRUCTIONS], 2000);

	popmon_switch(t, POPMON_ST_USEFUL, popmon_now()); /* a snapshot of the caller */
	CHECK_U64(t->ctr.acc[POPMON_CTR_CYCLES], 1100);
	CHECK_U64(t->ctr.acc[POPMON_CTR_INSTRUCTIONS], 2300);

	popmon_switch(t, POPMON_ST_IDLE, popmon_now());
	int reads = fake_reads;
	popmon_switch(t, POPMON_ST_IDLE, popmon_now()); /* idle -> idle: nothing */
	popmon_mpi_enter();                              /* idle -> MPI: nothing */
	popmon_mpi_leave(0);                             /* MPI -> idle: nothing */
	CHECK(fake_reads == reads, "not-useful transitions read the counters (%d reads, want %d)", fake_reads,
	      reads);
	popmon_switch(t, POPMON_ST_USEFUL, popmon_now());
	CHECK_U64(t->ctr.acc[POPMON_CTR_CYCLES], 1200);
	CHECK_U64(t->ctr.acc[POPMON_CTR_INSTRUCTIONS], 2500);

	popmon_switch(t, POPMON_ST_MPI, popmon_now()); /* stands for the final snapshot */
	popmon_counters_finish();
	CHECK_U64(t->ctr.acc[POPMON_CTR_CYCLES], 1207);
	CHECK_U64(t->ctr.acc[POPMON_CTR_INSTRUCTIONS], 2511);
	CHECK(popmon_counters_active == 0, "counting after finish");
	CHECK(fake_closes == 1 && t->ctr.status == POPMON_CTR_CLOSED, "finish did not close (%d closes)",
	      fake_closes);
	popmon_switch(t, POPMON_ST_USEFUL, popmon_now());
	CHECK(fake_reads == 9, "read after finish (%d reads, want 9)", fake_reads);

	struct popmon_ctr_info ci;
	popmon_counters_info(&ci);
	CHECK(ci.available && strcmp(ci.mode, "auto") == 0 && strcmp(ci.method, "rdpmc") == 0 && !*ci.reason,
	      "info: available %d mode %s method %s reason %s", ci.available, ci.mode, ci.method, ci.reason);
	CHECK(nwarned == 0, "warning printed: %s", nwarned ? warned[0] : "");
}

/* Multiplexing: scaled by the interval's enabled/running times, or by the
 * counter's average rate when it did not run at all in the interval. */
static void scenario_multiplex(void)
{
	uint64_t acc[POPMON_CTR_N] = {0, 0};
	struct popmon_ctr_sample a = {{1000, 4000}, {1000, 1000}, {1000, 1000}};
	/* Ran 2000 of 4000 ns: 2000 counted -> 4000 estimated (same for both:
	 * a group is scheduled as a whole). */
	struct popmon_ctr_sample b = {{3000, 10000}, {5000, 5000}, {3000, 3000}};
	popmon_ctr_accumulate(acc, &a, &b);
	CHECK_U64(acc[POPMON_CTR_CYCLES], 4000);
	CHECK_U64(acc[POPMON_CTR_INSTRUCTIONS], 12000);

	/* Not scheduled at all during 1000 ns: rate 3000 cycles / 3000 ns. */
	struct popmon_ctr_sample c = {{3000, 10000}, {6000, 6000}, {3000, 3000}};
	popmon_ctr_accumulate(acc, &b, &c);
	CHECK_U64(acc[POPMON_CTR_CYCLES], 4000 + 1000);
	CHECK_U64(acc[POPMON_CTR_INSTRUCTIONS], 12000 + 3333);

	/* Not multiplexed: exact, whatever the times. */
	struct popmon_ctr_sample d = {{3500, 10700}, {7000, 7000}, {4000, 4000}};
	popmon_ctr_accumulate(acc, &c, &d);
	CHECK_U64(acc[POPMON_CTR_CYCLES], 5500);
	CHECK_U64(acc[POPMON_CTR_INSTRUCTIONS], 16033);

	/* Large counts do not overflow the scaling: 2^62 counted in 1/4 of the time. */
	uint64_t big[POPMON_CTR_N] = {0, 0};
	struct popmon_ctr_sample e = {{0, 0}, {0, 0}, {0, 0}};
	struct popmon_ctr_sample f = {{1ull << 62, 1ull << 60}, {4000, 4000}, {1000, 1000}};
	popmon_ctr_accumulate(big, &e, &f);
	CHECK(big[POPMON_CTR_CYCLES] == UINT64_MAX, "saturation: %llu", (unsigned long long)big[0]);
	CHECK_U64(big[POPMON_CTR_INSTRUCTIONS], 1ull << 62);

	/* read() of the group: {nr, enabled, running, cycles, instructions}. */
	uint64_t buf[5] = {2, 5000, 2500, 111, 222};
	struct popmon_ctr_sample s;
	CHECK(popmon_ctr_parse_group(buf, sizeof buf, &s) == 0, "group read not parsed");
	CHECK(s.count[0] == 111 && s.count[1] == 222 && s.enabled[0] == 5000 && s.enabled[1] == 5000 &&
		      s.running[0] == 2500 && s.running[1] == 2500,
	      "group read parsed wrong");
	errno = 0;
	CHECK(popmon_ctr_parse_group(buf, sizeof buf - 8, &s) == -1 && errno == EIO, "short read accepted");
	buf[0] = 3;
	CHECK(popmon_ctr_parse_group(buf, sizeof buf, &s) == -1, "a group of 3 accepted");
}

/* The fake rdpmc: a script of raw PMC values; on the call numbered
 * bump_at, the page changes under the reader (the kernel's update). */
static uint64_t pmc_script[8];
static int pmc_pos, pmc_bump_at = -1;
static struct popmon_perf_page *pmc_page;
static uint64_t tsc_now;

uint64_t popmon_test_rdpmc(uint32_t counter)
{
	(void)counter;
	if (pmc_pos == pmc_bump_at && pmc_page) {
		pmc_page->lock += 2;
		pmc_page->offset += 1000000;
	}
	return pmc_script[pmc_pos++ % 8];
}

uint64_t popmon_test_rdtsc(void)
{
	return tsc_now;
}

/* The perf page protocol: 48-bit counter wrap (sign extension), a counter
 * not on the PMU (index 0), the seqlock retry, no rdpmc permission, and the
 * time fields when multiplexed. */
/* Capability bits as a kernel since 3.12 sets them. */
#define CAPS (POPMON_PERF_CAP_BIT0_IS_DEPRECATED | POPMON_PERF_CAP_USER_RDPMC)

/* The library's page layout is the kernel's (this header's). */
_Static_assert(offsetof(struct popmon_perf_page, lock) == offsetof(struct perf_event_mmap_page, lock) &&
		       offsetof(struct popmon_perf_page, index) == offsetof(struct perf_event_mmap_page, index) &&
		       offsetof(struct popmon_perf_page, offset) == offsetof(struct perf_event_mmap_page, offset) &&
		       offsetof(struct popmon_perf_page, time_enabled) ==
			       offsetof(struct perf_event_mmap_page, time_enabled) &&
		       offsetof(struct popmon_perf_page, time_running) ==
			       offsetof(struct perf_event_mmap_page, time_running) &&
		       offsetof(struct popmon_perf_page, capabilities) ==
			       offsetof(struct perf_event_mmap_page, capabilities) &&
		       offsetof(struct popmon_perf_page, pmc_width) == offsetof(struct perf_event_mmap_page, pmc_width) &&
		       offsetof(struct popmon_perf_page, time_shift) ==
			       offsetof(struct perf_event_mmap_page, time_shift) &&
		       offsetof(struct popmon_perf_page, time_mult) == offsetof(struct perf_event_mmap_page, time_mult) &&
		       offsetof(struct popmon_perf_page, time_offset) ==
			       offsetof(struct perf_event_mmap_page, time_offset) &&
		       offsetof(struct popmon_perf_page, time_cycles) ==
			       offsetof(struct perf_event_mmap_page, time_cycles) &&
		       offsetof(struct popmon_perf_page, time_mask) == offsetof(struct perf_event_mmap_page, time_mask),
	       "struct popmon_perf_page differs from linux/perf_event.h");

static void scenario_wrap(void)
{
	/* The capability bits where the kernel's header puts them. */
	struct perf_event_mmap_page kp;
	memset(&kp, 0, sizeof kp);
	kp.cap_bit0_is_deprecated = 1;
	kp.cap_user_rdpmc = 1;
	CHECK(kp.capabilities == CAPS, "capability bits %llx, want %llx", (unsigned long long)kp.capabilities,
	      (unsigned long long)CAPS);
	kp.cap_user_time = 1;
	kp.cap_user_time_short = 1;
	CHECK(kp.capabilities == (CAPS | POPMON_PERF_CAP_USER_TIME | POPMON_PERF_CAP_USER_TIME_SHORT),
	      "time capability bits %llx", (unsigned long long)kp.capabilities);

	static struct popmon_perf_page pg;
	memset(&pg, 0, sizeof pg);
	pmc_page = &pg;
	pg.capabilities = CAPS;
	pg.index = 3;
	pg.pmc_width = 48;
	pg.offset = 1000000;
	pg.time_enabled = pg.time_running = 777;
	uint64_t c1, c2, e, r;

	/* The 48-bit PMC wraps from 2^48 - 256 to 256: +512, not -2^48 + 512. */
	pmc_script[0] = 0xFFFFFFFFFF00ull;
	pmc_script[1] = 0x000000000100ull;
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == 0, "page not read");
	CHECK_U64(c1, 1000000 - 256);
	CHECK(e == 777 && r == 777, "times %llu %llu", (unsigned long long)e, (unsigned long long)r);
	CHECK(popmon_ctr_page_read(&pg, &c2, &e, &r) == 0, "page not read");
	CHECK_U64(c2, 1000000 + 256);
	struct popmon_ctr_sample a = {{c1, c1}, {777, 777}, {777, 777}};
	struct popmon_ctr_sample b = {{c2, c2}, {777, 777}, {777, 777}};
	uint64_t acc[POPMON_CTR_N] = {0, 0};
	popmon_ctr_accumulate(acc, &a, &b);
	CHECK_U64(acc[POPMON_CTR_CYCLES], 512);

	/* The 64-bit count wraps too (modulo 2^64). */
	struct popmon_ctr_sample w1 = {{UINT64_MAX - 99, 5}, {1, 1}, {1, 1}};
	struct popmon_ctr_sample w2 = {{50, 5}, {2, 2}, {2, 2}};
	uint64_t acc2[POPMON_CTR_N] = {0, 0};
	popmon_ctr_accumulate(acc2, &w1, &w2);
	CHECK_U64(acc2[POPMON_CTR_CYCLES], 150);
	/* A reading that goes backwards is not a count: dropped. */
	popmon_ctr_accumulate(acc2, &w2, &w1);
	CHECK_U64(acc2[POPMON_CTR_CYCLES], 150);

	/* A full-width PMC is not sign-extended. */
	pg.pmc_width = 64;
	pg.offset = 0;
	pmc_pos = 0;
	pmc_script[0] = 0xFFFFFFFFFF00ull;
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == 0 && c1 == 0xFFFFFFFFFF00ull, "64-bit PMC: %llx",
	      (unsigned long long)c1);

	/* Not on the PMU now (index 0): the count is the offset, no rdpmc. */
	pg.index = 0;
	pg.offset = 4242;
	pmc_pos = 0;
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == 0 && c1 == 4242 && pmc_pos == 0,
	      "index 0: count %llu, %d rdpmc", (unsigned long long)c1, pmc_pos);

	/* The page changes during the reading: read again. */
	pg.index = 1;
	pg.pmc_width = 48;
	pg.offset = 10;
	pmc_pos = 0;
	pmc_bump_at = 0;
	pmc_script[0] = 5;
	pmc_script[1] = 7;
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == 0, "page not read after an update");
	CHECK_U64(c1, 10 + 1000000 + 7);
	CHECK(pmc_pos == 2, "%d rdpmc, want 2 (one retry)", pmc_pos);
	pmc_bump_at = -1;

	/* rdpmc not allowed, or a kernel before 3.12: the caller must read(). */
	pg.capabilities = POPMON_PERF_CAP_BIT0_IS_DEPRECATED;
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == -1, "read without cap_user_rdpmc");
	pg.capabilities = POPMON_PERF_CAP_USER_RDPMC;
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == -1, "read with the capability bits of before 3.12");
	pg.capabilities = CAPS;

	/* Multiplexed (enabled != running): the time since the page's update
	 * is added: delta = offset + (tsc >> shift) * mult + ((tsc & mask) * mult >> shift). */
	pg.time_enabled = 10000;
	pg.time_running = 4000;
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == -1, "multiplexed page read without cap_user_time");
	pg.capabilities |= POPMON_PERF_CAP_USER_TIME;
	pg.time_shift = 1;
	pg.time_mult = 3;
	pg.time_offset = 100;
	tsc_now = 1001; /* delta = 100 + 500 * 3 + ((1 * 3) >> 1) = 1601 */
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == 0, "multiplexed page not read");
	CHECK_U64(e, 10000 + 1601);
	CHECK_U64(r, 4000 + 1601);
	pg.index = 0; /* not running now: running does not advance */
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == 0 && e == 11601 && r == 4000,
	      "index 0 multiplexed: %llu %llu", (unsigned long long)e, (unsigned long long)r);
	/* A short hardware clock (cap_user_time_short): cyc = time_cycles +
	 * ((tsc - time_cycles) & time_mask) = 1000 + (33 & 0xF) = 1001. */
	pg.capabilities |= POPMON_PERF_CAP_USER_TIME_SHORT;
	pg.time_cycles = 1000;
	pg.time_mask = 0xF;
	tsc_now = 1033;
	CHECK(popmon_ctr_page_read(&pg, &c1, &e, &r) == 0 && e == 11601, "short time: enabled %llu",
	      (unsigned long long)e);

	CHECK(popmon_ctr_page_read(NULL, &c1, &e, &r) == -1, "NULL page read");
}

/* Threads get their counters lazily, at their first transition into useful
 * time, only when they are CPUs of the model (accounted); they count their
 * own script; thread exit closes them. */
struct worker_arg {
	int accounted;
	struct popmon_thread *t;
	int opens_before_useful;
};

static void *worker(void *p)
{
	struct worker_arg *w = p;
	struct popmon_thread *t = new_record(w->accounted, POPMON_ST_IDLE, 1);
	w->t = t;
	popmon_switch(t, POPMON_ST_IDLE, popmon_now()); /* idle -> idle: no open */
	popmon_mpi_enter();                              /* idle -> MPI: no open */
	popmon_mpi_leave(0);
	w->opens_before_useful = __atomic_load_n(&fake_opens, __ATOMIC_RELAXED);
	popmon_switch(t, POPMON_ST_USEFUL, popmon_now()); /* opens, starts */
	popmon_mpi_enter();                               /* +40 +80 */
	popmon_mpi_leave(0);
	popmon_switch(t, POPMON_ST_IDLE, popmon_now()); /* +2 +3 */
	return NULL;
}

static void scenario_threads(void)
{
	popmon_ctr_backend = &fake;
	scripts[0].s[scripts[0].n++] = plain(100, 100); /* primary: start */
	scripts[0].s[scripts[0].n++] = plain(160, 190); /* primary: +60 +90 */
	scripts[1].s[scripts[1].n++] = plain(5000, 7000);
	scripts[1].s[scripts[1].n++] = plain(5040, 7080);
	scripts[1].s[scripts[1].n++] = plain(9999, 9999);
	scripts[1].s[scripts[1].n++] = plain(10001, 10002);

	struct popmon_thread *t = new_record(1, POPMON_ST_USEFUL, 0);
	popmon_counters_init(t);
	CHECK(fake_opens == 1, "primary: %d opens", fake_opens);

	struct worker_arg w = {.accounted = 1};
	pthread_t th;
	if (pthread_create(&th, NULL, worker, &w) != 0) {
		printf("FAIL pthread_create\n");
		exit(1);
	}
	pthread_join(th, NULL);
	CHECK(w.opens_before_useful == 1, "thread opened before its first useful time (%d opens)",
	      w.opens_before_useful);
	CHECK(fake_opens == 2, "thread: %d opens, want 2", fake_opens);
	CHECK_U64(w.t->ctr.acc[POPMON_CTR_CYCLES], 42);
	CHECK_U64(w.t->ctr.acc[POPMON_CTR_INSTRUCTIONS], 83);
	CHECK(fake_closes == 1 && w.t->ctr.status == POPMON_CTR_CLOSED,
	      "thread exit did not close its counters (%d closes, status %u)", fake_closes, w.t->ctr.status);

	/* A thread that is not a CPU of the model (accounted 0) never opens. */
	struct worker_arg u = {.accounted = 0};
	if (pthread_create(&th, NULL, worker, &u) != 0) {
		printf("FAIL pthread_create\n");
		exit(1);
	}
	pthread_join(th, NULL);
	CHECK(fake_opens == 2 && u.t->ctr.status == POPMON_CTR_NEW, "unaccounted thread opened counters");

	popmon_tls = t;
	popmon_switch(t, POPMON_ST_IDLE, popmon_now());
	CHECK_U64(t->ctr.acc[POPMON_CTR_CYCLES], 60);
	CHECK_U64(t->ctr.acc[POPMON_CTR_INSTRUCTIONS], 90);
	struct popmon_ctr_info ci;
	popmon_counters_info(&ci);
	CHECK(ci.available, "unavailable: %s", ci.reason);
}

/* A thread whose counters cannot be opened later: counting stops for the
 * process, the file says why, one warning. */
static void scenario_thread_failure(void)
{
	popmon_ctr_backend = &fake;
	scripts[0].s[scripts[0].n++] = plain(100, 100);
	fail_open_of_script = 1;
	struct popmon_thread *t = new_record(1, POPMON_ST_USEFUL, 0);
	popmon_counters_init(t);
	struct worker_arg w = {.accounted = 1};
	pthread_t th;
	if (pthread_create(&th, NULL, worker, &w) != 0) {
		printf("FAIL pthread_create\n");
		exit(1);
	}
	pthread_join(th, NULL);
	CHECK(w.t->ctr.status == POPMON_CTR_FAILED, "status %u, want failed", w.t->ctr.status);
	CHECK(popmon_counters_active == 0, "still counting after a thread failed");
	struct popmon_ctr_info ci;
	popmon_counters_info(&ci);
	CHECK(!ci.available, "available after a thread failed");
	CHECK(strstr(ci.reason, "counters unavailable: too many open files (perf_event_open: EMFILE) on thread 1"),
	      "reason %s", ci.reason);
	CHECK(nwarned == 1 && strstr(warned[0], "counters-thread|hardware counters stopped: too many open files"),
	      "%d warnings: %s", nwarned, nwarned ? warned[0] : "");
	int reads = fake_reads;
	popmon_tls = t;
	popmon_switch(t, POPMON_ST_IDLE, popmon_now());
	CHECK(fake_reads == reads, "the primary still reads");
}

/* The probe: auto is silent when counters are unavailable, on warns once;
 * off never opens. */
static void scenario_probe(const char *mode, int err)
{
	popmon_ctr_backend = &fake;
	fail_open_errno = err;
	if (mode)
		setenv("POPMON_COUNTERS", mode, 1);
	struct popmon_thread *t = new_record(1, POPMON_ST_USEFUL, 0);
	popmon_counters_init(t);
	struct popmon_ctr_info ci;
	popmon_counters_info(&ci);
	CHECK(!ci.available && popmon_counters_active == 0, "available with a failing open");
	CHECK(strcmp(ci.mode, mode ? mode : "auto") == 0, "mode %s", ci.mode);
	if (mode && strcmp(mode, "off") == 0) {
		CHECK(fake_opens == 0, "off opened counters");
		CHECK(strcmp(ci.reason, "counters off (POPMON_COUNTERS=off)") == 0, "reason %s", ci.reason);
		CHECK(nwarned == 0, "off warned");
		return;
	}
	CHECK(strncmp(ci.reason, "counters unavailable: ", 22) == 0 && strstr(ci.reason, "(perf_event_open: ENOENT)"),
	      "reason %s", ci.reason);
	if (mode && strcmp(mode, "on") == 0)
		CHECK(nwarned == 1 && strstr(warned[0], "requested (POPMON_COUNTERS=on) but counters unavailable: "
							"the CPU's performance monitoring unit is not exposed here"),
		      "on: %d warnings: %s", nwarned, nwarned ? warned[0] : "");
	else
		CHECK(nwarned == 0, "auto warned: %s", warned[0]);
	int reads = fake_reads;
	popmon_mpi_enter();
	popmon_mpi_leave(0);
	CHECK(fake_reads == reads && t->ctr.acc[0] == 0, "counter code ran while unavailable");
}

/* Runs popmon_counters_probe with stdout captured into buf. */
static void capture_probe(char *buf, size_t n)
{
	fflush(stdout);
	int saved = dup(1);
	FILE *tmp = tmpfile();
	if (saved < 0 || !tmp) {
		CHECK(0, "cannot capture stdout");
		buf[0] = '\0';
		return;
	}
	dup2(fileno(tmp), 1);
	popmon_counters_probe();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(tmp);
	size_t k = fread(buf, 1, n - 1, tmp);
	buf[k] = '\0';
	fclose(tmp);
}

/* popmon doctor's probe (POPMON_COUNTERS_PROBE): opens the group whatever
 * the mode, closes it, prints the library's own reason and errno. */
static void scenario_doctor_probe(void)
{
	popmon_ctr_backend = &fake;
	setenv("POPMON_COUNTERS", "off", 1);
	char out[1024];
	fail_open_errno = EACCES;
	capture_probe(out, sizeof out);
	char want[512];
	snprintf(want, sizeof want, "counters_available=0\ncounters_reason=counters unavailable: not permitted");
	CHECK(strncmp(out, want, strlen(want)) == 0, "failing probe printed:\n%s", out);
	snprintf(want, sizeof want, "(perf_event_open: EACCES)\ncounters_errno=%d\nperf_event_paranoid=", EACCES);
	CHECK(strstr(out, want) && strstr(out, "\nseccomp="), "failing probe printed:\n%s", out);
	CHECK(fake_opens == 1, "opens %d", fake_opens);
	fail_open_errno = 0;
	capture_probe(out, sizeof out);
	static const char ok_head[] = "counters_available=1\ncounters_method=rdpmc\nperf_event_paranoid=";
	CHECK(strncmp(out, ok_head, sizeof ok_head - 1) == 0,
	      "probe printed:\n%s", out);
	CHECK(fake_opens == 2 && fake_closes == 1, "opens %d, closes %d: the probe closes what it opened", fake_opens,
	      fake_closes);
	CHECK(popmon_counters_active == 0 && nwarned == 0, "the probe started counting or warned");
}

/* The reason table (checked by internal/shimbuild TestCountersReasons). */
static void scenario_reasons(void)
{
	static const struct {
		int err;
		const char *name, *paranoid;
		int seccomp;
	} cases[] = {
		{ENOENT, "ENOENT", "2", 0},  {ENODEV, "ENODEV", "2", 0},  {EOPNOTSUPP, "EOPNOTSUPP", "2", 0},
		{EACCES, "EACCES", "3", 0},  {EACCES, "EACCES", "4", 0},  {EACCES, "EACCES", "1", 0},
		{EACCES, "EACCES", "", 0},   {EPERM, "EPERM", "2", 1},    {EPERM, "EPERM", "3", 0},
		{EPERM, "EPERM", "-1", 0},   {ENOSYS, "ENOSYS", "2", 1},  {ENOSYS, "ENOSYS", "", 0},
		{EINVAL, "EINVAL", "2", 0},  {EMFILE, "EMFILE", "2", 0},  {ENFILE, "ENFILE", "2", 0},
		{EBUSY, "EBUSY", "2", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[256];
		popmon_ctr_reason(buf, sizeof buf, cases[i].err, cases[i].paranoid, cases[i].seccomp);
		printf("%s|%s|%d|%s\n", cases[i].name, cases[i].paranoid, cases[i].seccomp, buf);
	}
}

/* The real read() backend where a PMU exists (skipped elsewhere): counts
 * grow over a busy loop. */
static void scenario_real(void)
{
	struct popmon_ctr_thread c;
	memset(&c, 0, sizeof c);
	int err = popmon_ctr_backend->open(&c);
	if (err) {
		char why[256];
		popmon_ctr_reason(why, sizeof why, err, "", 0);
		printf("skip real: %s\n", why);
		return;
	}
	struct popmon_ctr_sample a, b;
	CHECK(popmon_ctr_backend->read(&c, &a) == 0, "read: %s", strerror(errno));
	volatile uint64_t x = 0;
	for (int i = 0; i < 10000000; i++)
		x += (uint64_t)i;
	if (x == 1)
		printf("unreachable\n");
	CHECK(popmon_ctr_backend->read(&c, &b) == 0, "read: %s", strerror(errno));
	uint64_t acc[POPMON_CTR_N] = {0, 0};
	popmon_ctr_accumulate(acc, &a, &b);
	CHECK(acc[POPMON_CTR_INSTRUCTIONS] > 10000000 && acc[POPMON_CTR_CYCLES] > 1000000,
	      "real counts: %llu instructions, %llu cycles", (unsigned long long)acc[1],
	      (unsigned long long)acc[0]);
	printf("real: %llu instructions, %llu cycles, method %s\n", (unsigned long long)acc[1],
	       (unsigned long long)acc[0], popmon_ctr_backend->method);
	popmon_ctr_backend->close(&c);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s useful|multiplex|wrap|threads|thread-failure|probe-auto|probe-on|"
				"probe-off|doctor-probe|reasons|real\n",
			argv[0]);
		return 2;
	}
	const char *s = argv[1];
	if (strcmp(s, "useful") == 0)
		scenario_useful();
	else if (strcmp(s, "multiplex") == 0)
		scenario_multiplex();
	else if (strcmp(s, "wrap") == 0)
		scenario_wrap();
	else if (strcmp(s, "threads") == 0)
		scenario_threads();
	else if (strcmp(s, "thread-failure") == 0)
		scenario_thread_failure();
	else if (strcmp(s, "probe-auto") == 0)
		scenario_probe(NULL, ENOENT);
	else if (strcmp(s, "probe-on") == 0)
		scenario_probe("on", ENOENT);
	else if (strcmp(s, "probe-off") == 0)
		scenario_probe("off", ENOENT);
	else if (strcmp(s, "doctor-probe") == 0)
		scenario_doctor_probe();
	else if (strcmp(s, "reasons") == 0)
		scenario_reasons();
	else if (strcmp(s, "real") == 0)
		scenario_real();
	else {
		fprintf(stderr, "unknown scenario %s\n", s);
		return 2;
	}
	if (failures) {
		printf("%d failure(s) in %s\n", failures, s);
		return 1;
	}
	if (strcmp(s, "reasons") != 0)
		printf("ok %s\n", s);
	return 0;
}
