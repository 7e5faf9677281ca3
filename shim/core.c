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
#include "live.h"

__thread struct popmon_thread *popmon_tls __attribute__((tls_model("initial-exec")));
int popmon_clock_tsc;
struct popmon_process popmon_proc;

uint64_t popmon_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ ranks */

int popmon_env_rank(int *size)
{
	/* The variables MPI launchers set in every rank: Open MPI, PMIx (Open
	 * MPI 5, srun --mpi=pmix), PMI (MPICH's Hydra, srun --mpi=pmi2),
	 * MVAPICH; last, inside an srun step, Slurm's task of the step, which
	 * srun sets whatever its --mpi (with --mpi=none it is the only one;
	 * a batch script's shell has SLURM_PROCID but no step). */
	static const char *const ranks[][2] = {
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		{"PMIX_RANK", "PMIX_SIZE"},
		{"PMI_RANK", "PMI_SIZE"},
		{"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
		{"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"},
	};
	for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
		const char *r = getenv(ranks[i][0]);
		if (!r || !*r)
			continue;
		if (i == sizeof ranks / sizeof ranks[0] - 1 && !getenv("SLURM_STEP_ID"))
			break;
		if (size) {
			const char *z = getenv(ranks[i][1]);
			*size = z ? atoi(z) : 0;
		}
		return atoi(r);
	}
	if (size)
		*size = 0;
	return -1;
}

int popmon_warns_aloud(void)
{
	if (popmon_proc.mpi_initialized)
		return popmon_proc.rank == 0;
	return popmon_env_rank(NULL) <= 0;
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

/* A simultaneous reading of the tick and CLOCK_MONOTONIC: the narrowest of
 * a few tick brackets around a clock_gettime, its middle as the tick. One
 * plain pair of reads is off by however long the thread was descheduled
 * between them (possibly milliseconds on a busy node at start-up), an
 * error that would go into the calibration's ratio and into every time
 * the process converts to CLOCK_MONOTONIC. */
void popmon_clock_pair(uint64_t *tick, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 4; i++) {
		uint64_t a = popmon_now();
		uint64_t n = popmon_monotonic_ns();
		uint64_t b = popmon_now();
		if (b >= a && b - a < best) {
			best = b - a;
			*tick = a + (b - a) / 2;
			*ns = n;
		}
	}
	if (best == UINT64_MAX) { /* a tick counter going back: take the last reading as it is */
		*tick = popmon_now();
		*ns = popmon_monotonic_ns();
	}
}

double popmon_ns_per_tick(void)
{
	if (!popmon_clock_tsc)
		return 1.0;
	/* Calibrate over the whole run: the longer, the better. */
	uint64_t t1 = 0, n1 = 0;
	popmon_clock_pair(&t1, &n1);
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

int64_t popmon_tick_monotonic_ns(uint64_t tick)
{
	if (popmon_delta(popmon_proc.t0_tick, tick) == 0)
		return (int64_t)popmon_proc.t0_ns;
	return (int64_t)(popmon_proc.t0_ns + popmon_ticks_to_ns(tick - popmon_proc.t0_tick));
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

/* Every thread record ever created, by slot; only the owner writes one. A
 * slot of an MPI thread that exited is vacant (its CPU idles, see
 * thread_gone) until a thread born after the vacancy began takes it over, so
 * that a program creating thousands of short-lived threads keeps every MPI
 * call with a bounded table, and two live threads never share a CPU. */
static struct popmon_thread *threads[POPMON_MAX_THREADS];
static int nthreads;
static int vacant[POPMON_MAX_THREADS]; /* vacant slots, under thr_lock */
static int nvacant;
static int mpi_threads;                /* slots of MPI threads, live or vacant */
static pthread_mutex_t thr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static int have_exit_key;

/* Tick at which the calling thread started, when it was created through
 * pthread_create after the library loaded (0 otherwise). */
static __thread uint64_t birth_tick __attribute__((tls_model("initial-exec")));

/* Allocates a record in a new slot without publishing it in the table. */
static struct popmon_thread *alloc_thread(uint32_t kind, uint32_t state, uint64_t last)
{
	int slot = __atomic_fetch_add(&nthreads, 1, __ATOMIC_RELAXED);
	if (slot >= POPMON_MAX_THREADS) {
		__atomic_fetch_sub(&nthreads, 1, __ATOMIC_RELAXED);
		popmon_warn_once("threads", "more than %d threads at once: the rest are not measured",
				 POPMON_MAX_THREADS);
		return NULL;
	}
	/* In the live file when there is one (live.h), else on the heap. */
	struct popmon_thread *t = popmon_live_thread(slot);
	if (!t)
		t = aligned_alloc(64, sizeof *t);
	if (!t) {
		popmon_warn_once("nomem", "out of memory for a thread record: thread not measured");
		return NULL;
	}
	memset(t, 0, sizeof *t);
	t->accounted = 1;
	t->kind = kind;
	t->slot = (uint32_t)slot;
	t->state = state;
	t->last = last;
	return t;
}

static void publish_thread(struct popmon_thread *t)
{
	__atomic_store_n(&threads[t->slot], t, __ATOMIC_RELEASE);
	popmon_live_publish();
	popmon_tls = t;
	if (have_exit_key && t->slot != 0)
		pthread_setspecific(exit_key, t);
}

/* A thread that is neither the primary nor an OpenMP thread calls MPI for
 * the first time: it becomes a CPU of the process from its birth (or from
 * now, for a thread the library did not see start). It takes over a vacant
 * slot whose vacancy began before it was born, else a new slot, which adds
 * a CPU to the process. Off the hot path: once per thread. */
static struct popmon_thread *adopt_mpi_thread(void)
{
	uint64_t now = popmon_now();
	uint64_t birth = birth_tick && popmon_delta(birth_tick, now) > 0 ? birth_tick : now;
	struct popmon_thread *t = NULL;
	pthread_mutex_lock(&thr_lock);
	for (int i = nvacant - 1; i >= 0; i--) {
		struct popmon_thread *v = threads[vacant[i]];
		if (popmon_delta(POPMON_LOAD(v->last), birth) > 0 || POPMON_LOAD(v->last) == birth) {
			t = v;
			vacant[i] = vacant[--nvacant];
			break;
		}
	}
	popmon_regions_lock();
	if (t) {
		/* The vacancy ends at birth: serialization until then. */
		popmon_tls = t;
		popmon_switch(t, POPMON_ST_OMP_SERIALIZATION, birth);
		POPMON_STORE(t->kind, POPMON_THR_MPI);
		popmon_switch(t, POPMON_ST_USEFUL, birth);
		popmon_regions_adopt_locked(t, birth, 0);
		if (have_exit_key)
			pthread_setspecific(exit_key, t);
	} else if ((t = alloc_thread(POPMON_THR_MPI, POPMON_ST_USEFUL, birth)) != NULL) {
		popmon_regions_adopt_locked(t, birth, 1);
		publish_thread(t);
		__atomic_fetch_add(&mpi_threads, 1, __ATOMIC_RELAXED);
		popmon_live_publish();
	}
	popmon_regions_unlock();
	pthread_mutex_unlock(&thr_lock);
	return t;
}

/* Thread exit (pthread key destructor): an MPI thread's slot becomes vacant,
 * its CPU idle (serialization) until another thread takes it over. */
static void thread_gone(void *p)
{
	struct popmon_thread *t = p;
	if (!t || popmon_proc.inert || popmon_tls != t || t->kind != POPMON_THR_MPI)
		return;
	t->mpi_depth = 0;
	popmon_switch(t, POPMON_ST_OMP_SERIALIZATION, popmon_now());
	POPMON_STORE(t->kind, POPMON_THR_VACANT);
	popmon_tls = NULL;
	pthread_mutex_lock(&thr_lock);
	vacant[nvacant++] = (int)t->slot;
	pthread_mutex_unlock(&thr_lock);
}

/* Start-up: 0 before, 1 while the calling thread runs it, 2 after. */
static int init_state;

struct popmon_thread *popmon_thread_slow(void)
{
	if (__builtin_expect(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2, 0)) {
		/* An MPI call before libpopmon's constructor ran (a static
		 * constructor of the program or of a library, such as Open MPI's
		 * C++ bindings calling MPI_Initialized): start up first, so that
		 * this thread becomes the primary thread, not an extra CPU. */
		popmon_ensure_init();
		if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2)
			return NULL; /* another thread is starting up: not measured */
	}
	if (popmon_proc.inert)
		return NULL;
	if (popmon_tls)
		return popmon_tls;
	return adopt_mpi_thread();
}

struct popmon_thread *popmon_thread_new(uint32_t kind, uint32_t state)
{
	if (popmon_proc.inert)
		return NULL;
	if (popmon_tls) {
		popmon_tls->accounted = 1;
		return popmon_tls;
	}
	struct popmon_thread *t = alloc_thread(kind, state, popmon_now());
	if (t)
		publish_thread(t);
	return t;
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

int popmon_omp_team_cpus(void)
{
	int n = __atomic_load_n(&popmon_omp_cpus, __ATOMIC_RELAXED);
	return n > 1 ? n : 1;
}

int popmon_cpus(void)
{
	return popmon_omp_team_cpus() + __atomic_load_n(&mpi_threads, __ATOMIC_RELAXED);
}

int popmon_mpi_thread_count(void)
{
	return __atomic_load_n(&mpi_threads, __ATOMIC_RELAXED);
}

void popmon_cpus_grow_omp(int n, uint64_t until)
{
	popmon_regions_lock();
	int old = popmon_omp_team_cpus();
	if (n > old)
		popmon_regions_grow_locked((uint32_t)(n - old), until);
	if (n > __atomic_load_n(&popmon_omp_cpus, __ATOMIC_RELAXED))
		__atomic_store_n(&popmon_omp_cpus, n, __ATOMIC_RELAXED);
	popmon_live_publish();
	popmon_regions_unlock();
}

/* pthread_create, wrapped to note when each thread starts: a thread that
 * later calls MPI is a CPU from then on (its work before its first MPI call
 * is useful time, not an idle CPU). */
struct start_args {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_start(void *p)
{
	struct start_args a = *(struct start_args *)p;
	free(p);
	birth_tick = popmon_now();
	return a.fn(a.arg);
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static pthread_create_fn real;
	pthread_create_fn f = __atomic_load_n(&real, __ATOMIC_RELAXED);
	if (!f) {
		union {
			void *p;
			pthread_create_fn f;
		} u = {.p = dlsym(RTLD_NEXT, "pthread_create")};
		if (!u.p)
			return EAGAIN;
		f = u.f;
		__atomic_store_n(&real, f, __ATOMIC_RELAXED);
	}
	struct start_args *a = popmon_proc.inert ? NULL : malloc(sizeof *a);
	if (!a)
		return f(thread, attr, fn, arg);
	a->fn = fn;
	a->arg = arg;
	int rc = f(thread, attr, thread_start, a);
	if (rc != 0)
		free(a);
	return rc;
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
		a->gpu_calls += POPMON_LOAD(t->gpu_calls);
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
	/* Device time (nothing without CUDA: one load). */
	if (__builtin_expect(__atomic_load_n(&popmon_gpu_active, __ATOMIC_RELAXED), 0)) {
		popmon_gpu_read((uint64_t)popmon_tick_monotonic_ns(now), a->gpu_k, a->gpu_a);
		popmon_gpu_counters_read((uint64_t)popmon_tick_monotonic_ns(now), a->gpu_c);
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

void popmon_dfn_totals(int64_t *out)
{
	memset(out, 0, sizeof(int64_t) * POPMON_DSUMS);
	int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n && i < POPMON_MAX_THREADS; i++) {
		struct popmon_thread *t = __atomic_load_n(&threads[i], __ATOMIC_ACQUIRE);
		if (!t)
			continue;
		for (int d = 0; d < POPMON_DFN_COUNT; d++) {
			int64_t *x = out + (size_t)d * (2 + POPMON_SIZE_BINS);
			x[0] += (int64_t)POPMON_LOAD(t->d_bytes[d][0]);
			x[1] += (int64_t)POPMON_LOAD(t->d_bytes[d][1]);
			for (int b = 0; b < POPMON_SIZE_BINS; b++)
				x[2 + b] += (int64_t)POPMON_LOAD(t->d_hist[d][b]);
		}
	}
}

int popmon_mpi_sessions_only(void)
{
	if (popmon_proc.mpi_initialized)
		return 0;
	uint64_t calls = 0;
	int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n && i < POPMON_MAX_THREADS; i++) {
		struct popmon_thread *t = __atomic_load_n(&threads[i], __ATOMIC_ACQUIRE);
		if (t)
			calls += POPMON_LOAD(t->fn_calls[POPMON_FN_MPI_Session_init]);
	}
	return calls > 0;
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
 * dormant (LD_PRELOAD reaches them too under `popmon run -- mpirun ...`):
 * only MPI_Init makes one the application (their hwloc may well start CUDA
 * to list GPUs). */
static const char *const launcher_names[] = {
	"mpirun", "mpiexec", "orterun", "orted", "prterun", "prte", "prted", "prun",
	"hydra_pmi_proxy", "mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich",
	"mpiexec.openmpi", "mpirun.openmpi", "srun", "slurmstepd", "salloc", "sbatch",
	"popmon", "ssh", "rsh", "gdb", "valgrind", "strace", "ltrace", "perf",
	NULL,
};

/* Shells, wrappers and the utilities a job script runs around the
 * application: measuring one of them would pass for measuring the program.
 * They stay dormant until they do what only the application does (MPI_Init,
 * GPU work, an OpenMP runtime): an MPI program may well be called `test`. */
static const char *const utility_names[] = {
	"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "env", "time", "timeout",
	"nohup", "nice", "taskset", "numactl", "hwloc-bind", "make", "tee", "cat", "sleep",
	"hostname", "date", "bc", "echo", "printf", "true", "false", "test", "[", "expr", "seq",
	"mkdir", "rm", "rmdir", "cp", "mv", "ln", "ls", "touch", "chmod", "chown", "stat", "du",
	"df", "head", "tail", "wc", "grep", "egrep", "fgrep", "sed", "awk", "gawk", "mawk", "cut",
	"tr", "sort", "uniq", "xargs", "find", "basename", "dirname", "readlink", "realpath",
	"uname", "id", "whoami", "which", "tar", "gzip", "gunzip", "zcat", "md5sum", "sha256sum",
	"ps", "kill", "pkill", "nproc", "lscpu", "getconf", "tput", "stty", "tty", "mktemp",
	"logger", "ldd", "hwloc-ls", "lstopo", "scontrol", "squeue", "sacct", "ompi_info",
	"mpichversion", "mpivars",
	NULL,
};

/* POPMON_DORMANT_LAUNCHER, POPMON_DORMANT_UTILITY when the executable's
 * name is in one of the lists, else 0. */
static int exe_dormancy(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (const char *const *p = launcher_names; *p; p++)
		if (strcmp(base, *p) == 0)
			return POPMON_DORMANT_LAUNCHER;
	for (const char *const *p = utility_names; *p; p++)
		if (strcmp(base, *p) == 0)
			return POPMON_DORMANT_UTILITY;
	return 0;
}

static void atfork_child(void)
{
	/* A forked copy that does not exec is not the application: its
	 * accounts are a copy of the parent's. An exec starts afresh. */
	popmon_proc.inert = 1;
	popmon_proc.dormant = 0;
	popmon_counters_atfork_child();
}

static int env_true(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0 && strcmp(v, "no") != 0 && strcmp(v, "off") != 0;
}

static void init_process(void);
static void start_measuring(void);

void popmon_ensure_init(void)
{
	if (__builtin_expect(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2, 1))
		return; /* one load on the region API's path, no locked instruction */
	int expect = 0;
	if (!__atomic_compare_exchange_n(&init_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return; /* done, or running (on this thread: a call from start-up itself) */
	init_process();
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
}

/* The dynamic linker runs the constructors of the program's libraries in
 * dependency order, and a preloaded library's after those it depends on:
 * a library that calls MPI from its own constructor (Open MPI's libmpi_cxx,
 * linked by mpicxx, calls MPI_Initialized) reaches libpopmon's wrappers
 * first, which start it up then (popmon_thread_slow). */
__attribute__((constructor)) static void popmon_init(void)
{
	popmon_ensure_init();
}

static void init_process(void)
{
	popmon_proc.pid = (int)getpid();
	popmon_proc.size = 1;
	if (getenv("POPMON_GPU_PROBE")) { /* popmon doctor: what CUDA and ROCm the library finds */
		popmon_proc.inert = 1;
		popmon_gpu_probe();
		popmon_gpu_rocm_probe();
		return;
	}
	if (getenv("POPMON_COUNTERS_PROBE")) { /* popmon doctor: what hardware counters the library finds */
		popmon_proc.inert = 1;
		popmon_counters_probe();
		return;
	}
	if (env_true("POPMON_DISABLE")) {
		popmon_proc.inert = 1;
		return;
	}
	int dormancy = exe_dormancy();
	if (dormancy) {
		/* Named like a launcher or a job script's utility: dormant
		 * until it does what only the application does (popmon_wake). */
		popmon_proc.inert = 1;
		__atomic_store_n(&popmon_proc.dormant, dormancy, __ATOMIC_RELEASE);
		pthread_atfork(NULL, NULL, atfork_child);
		return;
	}
	start_measuring();
}

/* A dormant process calls MPI_Init (by), or a utility's starts the GPU
 * measurement or an OpenMP runtime: it is the application after all (an MPI
 * program called `test`, `seq` or `sort`), and is measured from now on (its
 * Global region starts here; MPI_Init restarts it anyway). Launchers, shells
 * and a job script's helpers never do these, and stay out. */
void popmon_wake(int by)
{
	int d = __atomic_load_n(&popmon_proc.dormant, __ATOMIC_ACQUIRE);
	if (!d || (by == POPMON_WAKE_COMPUTE && d == POPMON_DORMANT_LAUNCHER))
		return;
	if (!__atomic_compare_exchange_n(&popmon_proc.dormant, &d, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (env_true("POPMON_DISABLE"))
		return;
	popmon_proc.inert = 0;
	start_measuring();
}

/* Start-up of a measured process, after the checks of init_process. */
static void start_measuring(void)
{
	/* Built for another MPI than the program's: pass every call through
	 * untouched and never call MPI (docs/library.md). */
	char why[600];
	if (!popmon_mpi_identity(why, sizeof why)) {
		if (popmon_env_rank(NULL) <= 0) {
			char line[700];
			int n = snprintf(line, sizeof line, "popmon: %s\n", why);
			if (n > (int)sizeof line - 1)
				n = (int)sizeof line - 1;
			if (write(2, line, (size_t)n) < 0) {
				/* nothing sensible to do */
			}
		}
		popmon_proc.inert = 1;
		popmon_entry_passthrough();
		return;
	}
	popmon_chain_init();
	const char *clk = getenv("POPMON_CLOCK");
	if (clk && strcmp(clk, "monotonic") == 0)
		popmon_clock_tsc = 0;
	else
		popmon_clock_tsc = cpu_has_invariant_tsc();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	popmon_proc.epoch_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	popmon_clock_pair(&popmon_proc.t0_tick, &popmon_proc.t0_ns);
	static int atfork_set;
	if (!atfork_set++)
		pthread_atfork(NULL, NULL, atfork_child);
	popmon_live_open();
	have_exit_key = pthread_key_create(&exit_key, thread_gone) == 0;
	if (popmon_regions_init() != 0) {
		popmon_proc.inert = 1;
		return;
	}
	struct popmon_thread *primary = popmon_thread_new(POPMON_THR_PRIMARY, POPMON_ST_USEFUL);
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
		popmon_live_state(POPMON_LIVE_NO_FINALIZE, 0);
		if (popmon_gpu_mode() == 2 && !popmon_gpu_active) { /* --gpu on says why, here too */
			static struct popmon_gpu_proc g;
			popmon_gpu_finish(&g, 0, popmon_monotonic_ns(), popmon_proc.rank);
		}
		if (popmon_live) /* popmon run assembles a partial measurement */
			return;
		if (popmon_proc.rank == 0)
			popmon_warn_once("nofinalize",
					 "the program exited without MPI_Finalize: no measurement written");
		return;
	}
	if (popmon_env_rank(NULL) >= 0 && popmon_program_mpi_static()) {
		/* The launcher started this process as an MPI rank, but its
		 * MPI_Init never came through: MPI is part of the program. */
		popmon_proc.finalized = 1;
		char exe[256], why[512];
		ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[k > 0 ? k : 0] = '\0';
		snprintf(why, sizeof why,
			 "the program's MPI calls did not reach popmon: MPI is linked statically into %s; "
			 "relink it with the shared MPI library (mpicc without -static); no measurement written",
			 k > 0 ? exe : "the program");
		popmon_write_unmeasured(why);
		return;
	}
	if (popmon_mpi_sessions_only()) {
		/* MPI-4 Sessions without MPI_Init: no MPI_COMM_WORLD to gather
		 * over; one process's measurement would pass for the job's. */
		popmon_proc.finalized = 1;
		popmon_write_unmeasured("the program uses MPI Sessions (MPI_Session_init) without MPI_Init: "
				       "popmon measures programs that call MPI_Init or MPI_Init_thread; "
				       "no measurement written");
		return;
	}
	const char *session = getenv("POPMON_SESSION"), *exec_pid = getenv("POPMON_PID");
	if ((!session || !*session) && (!exec_pid || !*exec_pid) && popmon_env_rank(NULL) >= 0) {
		/* A library preloaded by hand into an MPI job (mpirun -x
		 * LD_PRELOAD): a process the launcher started as a rank that never
		 * called MPI_Init is one of the job's helpers (a job script's
		 * tools), not the application; it writes nothing and says
		 * nothing. */
		popmon_proc.finalized = 1;
		return;
	}
	popmon_proc.finalized = 1;
	popmon_regions_close_all(popmon_now());
	popmon_write_single();
	popmon_counters_finish();
	popmon_live_state(POPMON_LIVE_SINGLE, 0);
}

int popmon_api_measured(void)
{
	return !popmon_proc.inert;
}
