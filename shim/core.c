/* core.c: process and thread state, the clock, warnings, start-up and exit.
 *
 * Threads: every thread gets one heap record the first time it needs one
 * (start-up for the primary thread, the first MPI call for the others),
 * listed in a fixed table. Only the owner writes its record; other threads
 * read it with relaxed atomics. The primary thread (the one that ran the
 * library's constructor, which is the one that calls MPI_Init in nearly every
 * program) is a CPU of the POP model. Other threads that call MPI are counted
 * in the MPI call profile but are not CPUs: without a threading runtime's
 * events the library cannot know when they work (OpenMP threads become CPUs
 * through OMPT).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

__thread struct popmon_thread *popmon_tls __attribute__((tls_model("initial-exec")));
int popmon_clock_tsc;
struct popmon_process popmon_proc;

static struct popmon_thread *threads[POPMON_MAX_THREADS];
static int nthreads;

uint64_t popmon_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ warnings */

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

/* ------------------------------------------------------------------ clock */

static int cpu_has_invariant_tsc(void)
{
#if defined(__x86_64__)
	uint32_t a, b, c, d;
	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
	if (a >= 0x80000007u) {
		__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
		if (d & (1u << 8))
			return 1;
	}
	/* Hypervisors often hide the CPUID bit but the kernel still knows. */
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return 0;
	char line[4096];
	int ok = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) == 0) {
			ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
			break;
		}
	}
	fclose(f);
	return ok;
#else
	return 0;
#endif
}

double popmon_ns_per_tick(void)
{
	if (!popmon_clock_tsc)
		return 1.0;
	/* Calibrate over the whole run: the longer, the better. */
	uint64_t t1 = popmon_now();
	uint64_t n1 = popmon_monotonic_ns();
	uint64_t dt = t1 - popmon_proc.t0_tick;
	uint64_t dn = n1 - popmon_proc.t0_ns;
	/* Very early (a region call right after start-up): wait until 20 us
	 * have passed, which bounds the ratio's error by ~0.5 % until the final
	 * conversion at exit recalibrates over the whole run. */
	while (dn < 20000) {
		t1 = popmon_now();
		n1 = popmon_monotonic_ns();
		dt = t1 - popmon_proc.t0_tick;
		dn = n1 - popmon_proc.t0_ns;
	}
	return dt ? (double)dn / (double)dt : 1.0;
}

uint64_t popmon_ticks_to_ns(uint64_t ticks)
{
	static double ratio;
	static uint64_t ratio_at;
	/* Recalibrate at most every 10 ms of run time: cheap and accurate. Only
	 * called under the region lock or at exit. */
	uint64_t now = popmon_monotonic_ns();
	if (ratio == 0 || now - ratio_at > 10000000) {
		ratio = popmon_ns_per_tick();
		ratio_at = now;
	}
	return (uint64_t)((double)ticks * ratio + 0.5);
}

/* ------------------------------------------------------------------ threads */

static struct popmon_thread *new_thread(int accounted, uint32_t state)
{
	int slot = __atomic_fetch_add(&nthreads, 1, __ATOMIC_RELAXED);
	if (slot >= POPMON_MAX_THREADS) {
		__atomic_fetch_sub(&nthreads, 1, __ATOMIC_RELAXED);
		popmon_warn_once("threads", "more than %d threads: the rest are not measured",
				 POPMON_MAX_THREADS);
		return NULL;
	}
	struct popmon_thread *t = aligned_alloc(64, sizeof *t);
	if (!t) {
		popmon_warn_once("nomem", "out of memory for a thread record: thread not measured");
		threads[slot] = NULL;
		return NULL;
	}
	memset(t, 0, sizeof *t);
	t->accounted = (uint32_t)accounted;
	t->slot = (uint32_t)slot;
	t->state = state;
	t->last = popmon_now();
	__atomic_store_n(&threads[slot], t, __ATOMIC_RELEASE);
	popmon_tls = t;
	return t;
}

struct popmon_thread *popmon_thread_slow(void)
{
	if (popmon_proc.inert)
		return NULL;
	if (popmon_tls)
		return popmon_tls;
	return new_thread(0, POPMON_ST_USEFUL);
}

struct popmon_thread *popmon_thread_new(int accounted, uint32_t state)
{
	if (popmon_proc.inert)
		return NULL;
	if (popmon_tls) {
		popmon_tls->accounted = (uint32_t)accounted;
		return popmon_tls;
	}
	return new_thread(accounted, state);
}

struct popmon_thread *popmon_thread_slot(int slot)
{
	if (slot < 0 || slot >= POPMON_MAX_THREADS)
		return NULL;
	return __atomic_load_n(&threads[slot], __ATOMIC_ACQUIRE);
}

int popmon_thread_count(void)
{
	int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE);
	return n < POPMON_MAX_THREADS ? n : POPMON_MAX_THREADS;
}

int popmon_cpus(void)
{
	if (popmon_omp_cpus > 0)
		return popmon_omp_cpus;
	int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE), c = 0;
	for (int i = 0; i < n && i < POPMON_MAX_THREADS; i++) {
		struct popmon_thread *t = __atomic_load_n(&threads[i], __ATOMIC_ACQUIRE);
		if (t && t->accounted)
			c++;
	}
	return c ? c : 1;
}

void popmon_snapshot(uint64_t now, struct popmon_accounts *a, uint64_t *thr_useful)
{
	memset(a, 0, sizeof *a);
	if (thr_useful)
		memset(thr_useful, 0, sizeof(uint64_t) * POPMON_DETAIL_THREADS);
	/* The caller's own record first: exact at now. */
	struct popmon_thread *self = popmon_tls;
	if (self)
		popmon_switch(self, self->state, now);
	int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n && i < POPMON_MAX_THREADS; i++) {
		struct popmon_thread *t = __atomic_load_n(&threads[i], __ATOMIC_ACQUIRE);
		if (!t)
			continue;
		a->mpi_calls += POPMON_LOAD(t->mpi_calls);
		a->omp_parallels += POPMON_LOAD(t->extra[POPMON_X_PARALLELS]);
		a->omp_tasks += POPMON_LOAD(t->extra[POPMON_X_TASKS]);
		if (!t->accounted)
			continue;
		uint64_t acc[POPMON_NSTATES];
		for (int s = 0; s < POPMON_NSTATES; s++)
			acc[s] = POPMON_LOAD(t->acc[s]);
		if (t != self) {
			/* The interval in progress in another thread. */
			uint32_t st = POPMON_LOAD(t->state);
			uint64_t d = popmon_delta(POPMON_LOAD(t->last), now);
			uint32_t rate = POPMON_LOAD(t->rate);
			if (st < POPMON_NSTATES) {
				acc[st] += d;
				if (rate)
					acc[popmon_charge_state(st)] += d * rate;
			}
		}
		for (int s = 0; s < POPMON_NSTATES; s++)
			a->t[s] += acc[s];
		for (int x = 0; x < POPMON_NEXTRA; x++)
			a->x[x] += POPMON_LOAD(t->extra[x]);
		for (int c = 0; c < POPMON_CTR_N; c++)
			a->ctr[c] += POPMON_LOAD(t->ctr.acc[c]);
		if (t->slot == 0) {
			a->prim_useful = acc[POPMON_ST_USEFUL];
			a->prim_mpi = acc[POPMON_ST_MPI];
		}
		if (thr_useful && t->slot < POPMON_DETAIL_THREADS)
			thr_useful[t->slot] = acc[POPMON_ST_USEFUL];
	}
}

void popmon_fn_totals(uint64_t *calls, uint64_t *ticks)
{
	memset(calls, 0, sizeof(uint64_t) * POPMON_FN_COUNT);
	memset(ticks, 0, sizeof(uint64_t) * POPMON_FN_COUNT);
	int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n && i < POPMON_MAX_THREADS; i++) {
		struct popmon_thread *t = __atomic_load_n(&threads[i], __ATOMIC_ACQUIRE);
		if (!t)
			continue;
		for (int f = 0; f < POPMON_FN_COUNT; f++) {
			calls[f] += POPMON_LOAD(t->fn_calls[f]);
			ticks[f] += POPMON_LOAD(t->fn_ticks[f]);
		}
	}
}

/* ------------------------------------------------------------------ dlsym */

void *popmon_dlsym_next(const char *const *names)
{
	for (; names && *names; names++) {
		void *p = dlsym(RTLD_NEXT, *names);
		if (p)
			return p;
	}
	return NULL;
}

/* ------------------------------------------------------------------ start-up */

/* Programs that launch or wrap the application, in which the library stays
 * inert (LD_PRELOAD reaches them too under `popmon run -- mpirun ...`). */
static const char *const inert_names[] = {
	"mpirun", "mpiexec", "orterun", "orted", "prterun", "prte", "prted", "prun",
	"hydra_pmi_proxy", "mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich",
	"mpiexec.openmpi", "mpirun.openmpi", "srun", "slurmstepd", "salloc", "sbatch",
	"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "env", "time", "timeout",
	"nohup", "nice", "taskset", "numactl", "hwloc-bind", "popmon", "ssh", "rsh",
	"make", "gdb", "valgrind", "strace", "ltrace", "perf", "tee", "cat", "sleep",
	NULL,
};

static int exe_is_inert(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (const char *const *p = inert_names; *p; p++)
		if (strcmp(base, *p) == 0)
			return 1;
	return 0;
}

static void atfork_child(void)
{
	/* A forked copy that does not exec is not the application: its
	 * accounts are a copy of the parent's. An exec starts afresh. */
	popmon_proc.inert = 1;
	popmon_counters_atfork_child();
}

static int env_true(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0 && strcmp(v, "no") != 0 && strcmp(v, "off") != 0;
}

__attribute__((constructor)) static void popmon_init(void)
{
	popmon_proc.pid = (int)getpid();
	popmon_proc.size = 1;
	if (env_true("POPMON_DISABLE") || exe_is_inert()) {
		popmon_proc.inert = 1;
		return;
	}
	const char *clk = getenv("POPMON_CLOCK");
	if (clk && strcmp(clk, "monotonic") == 0)
		popmon_clock_tsc = 0;
	else
		popmon_clock_tsc = cpu_has_invariant_tsc();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	popmon_proc.epoch_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	popmon_proc.t0_tick = popmon_now();
	popmon_proc.t0_ns = popmon_monotonic_ns();
	pthread_atfork(NULL, NULL, atfork_child);
	popmon_regions_init();
	struct popmon_thread *primary = new_thread(1, POPMON_ST_USEFUL);
	if (!primary) {
		popmon_proc.inert = 1;
		return;
	}
	popmon_counters_init(primary);
	popmon_ompt_probe();
	/* Without MPI the Global region spans the whole process; MPI_Init
	 * restarts it. */
	popmon_regions_restart_global(popmon_now());
}

__attribute__((destructor)) static void popmon_fini(void)
{
	if (popmon_proc.inert || popmon_proc.finalized)
		return;
	if (popmon_proc.mpi_initialized) {
		popmon_proc.finalized = 1;
		if (popmon_proc.rank == 0)
			popmon_warn_once("nofinalize",
					 "the program exited without MPI_Finalize: no measurement written");
		return;
	}
	popmon_proc.finalized = 1;
	popmon_regions_close_all(popmon_now());
	popmon_write_single();
	popmon_counters_finish();
}

int popmon_api_measured(void)
{
	return !popmon_proc.inert;
}
