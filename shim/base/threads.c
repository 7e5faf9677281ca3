/* threads.c: the thread table and per-thread records (threads.h). Bottom
 * layer: calls nothing above it (the live file's memory for the records
 * comes through popmon_threads_store; an MPI thread's adoption through the
 * start-up hooks, process.h).
 *
 * Threads: every thread gets one record the first time it needs one
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
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"

__thread struct popmon_thread *popmon_tls __attribute__((tls_model("initial-exec")));
int popmon_omp_cpus;

/* Every thread record ever created, by slot; only the owner writes one. A
 * slot of an MPI thread that exited is vacant (its CPU idles, see core.c's
 * thread_gone) until a thread born after the vacancy began takes it over, so
 * that a program creating thousands of short-lived threads keeps every MPI
 * call with a bounded table, and two live threads never share a CPU. */
static struct popmon_thread *threads[POPMON_MAX_THREADS];
static int nthreads;
static int vacant[POPMON_MAX_THREADS]; /* vacant slots, under thr_lock */
static int nvacant;
static int mpi_threads;                /* slots of MPI threads, live or vacant */
static pthread_mutex_t thr_lock = PTHREAD_MUTEX_INITIALIZER;

/* The records' store (popmon_threads_store): NULL, the heap and no one. */
static void *(*store_mem)(int slot);
static void (*store_publish)(void);

void popmon_threads_store(void *(*mem)(int slot), void (*publish)(void))
{
	store_mem = mem;
	store_publish = publish;
}

/* Tick at which the calling thread started, when it was created through
 * pthread_create after the library loaded (0 otherwise). */
static __thread uint64_t birth_tick __attribute__((tls_model("initial-exec")));

uint64_t popmon_thread_birth(void)
{
	return birth_tick;
}

struct popmon_thread *popmon_thread_alloc(uint32_t kind, uint32_t state, uint64_t last)
{
	int slot = __atomic_fetch_add(&nthreads, 1, __ATOMIC_RELAXED);
	if (slot >= POPMON_MAX_THREADS) {
		__atomic_fetch_sub(&nthreads, 1, __ATOMIC_RELAXED);
		popmon_warn_once("threads", "more than %d threads at once: the rest are not measured",
				 POPMON_MAX_THREADS);
		return NULL;
	}
	/* In the live file when there is one (live.h), else on the heap. */
	struct popmon_thread *t = store_mem ? store_mem(slot) : NULL;
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

void popmon_thread_publish(struct popmon_thread *t)
{
	__atomic_store_n(&threads[t->slot], t, __ATOMIC_RELEASE);
	if (store_publish)
		store_publish();
	popmon_tls = t;
}

void popmon_threads_lock(void)
{
	pthread_mutex_lock(&thr_lock);
}

void popmon_threads_unlock(void)
{
	pthread_mutex_unlock(&thr_lock);
}

struct popmon_thread *popmon_thread_take_vacant_locked(uint64_t birth)
{
	for (int i = nvacant - 1; i >= 0; i--) {
		struct popmon_thread *v = threads[vacant[i]];
		if (popmon_delta(POPMON_LOAD(v->last), birth) > 0 || POPMON_LOAD(v->last) == birth) {
			vacant[i] = vacant[--nvacant];
			return v;
		}
	}
	return NULL;
}

void popmon_thread_vacate(struct popmon_thread *t)
{
	pthread_mutex_lock(&thr_lock);
	vacant[nvacant++] = (int)t->slot;
	pthread_mutex_unlock(&thr_lock);
}

void popmon_mpi_threads_add(void)
{
	__atomic_fetch_add(&mpi_threads, 1, __ATOMIC_RELAXED);
}

struct popmon_thread *popmon_thread_slow(void)
{
	if (__builtin_expect(!popmon_started(), 0)) {
		/* An MPI call before libpopmon's constructor ran (a static
		 * constructor of the program or of a library, such as Open MPI's
		 * C++ bindings calling MPI_Initialized): start up first, so that
		 * this thread becomes the primary thread, not an extra CPU. */
		popmon_ensure_init();
		if (!popmon_started())
			return NULL; /* another thread is starting up: not measured */
	}
	if (popmon_proc.inert)
		return NULL;
	if (popmon_tls)
		return popmon_tls;
	struct popmon_thread *(*adopt)(void) = popmon_startup_hooks()->adopt;
	return adopt ? adopt() : NULL;
}

struct popmon_thread *popmon_thread_new(uint32_t kind, uint32_t state)
{
	if (popmon_proc.inert)
		return NULL;
	if (popmon_tls) {
		popmon_tls->accounted = 1;
		return popmon_tls;
	}
	struct popmon_thread *t = popmon_thread_alloc(kind, state, popmon_now());
	if (t)
		popmon_thread_publish(t);
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

static int held_cpus;

void popmon_cpus_hold(int n)
{
	__atomic_store_n(&held_cpus, n, __ATOMIC_RELAXED);
	if (store_publish)
		store_publish(); /* the live header's cpus now */
}

int popmon_cpus_now(void)
{
	int n = __atomic_load_n(&held_cpus, __ATOMIC_RELAXED);
	return n > 0 ? n + __atomic_load_n(&mpi_threads, __ATOMIC_RELAXED) : popmon_cpus();
}

int popmon_mpi_thread_count(void)
{
	return __atomic_load_n(&mpi_threads, __ATOMIC_RELAXED);
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

int popmon_helper_thread(void *(*fn)(void *))
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	int rc = pthread_create(&t, &attr, fn, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? 0 : -1;
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

void popmon_own_start(struct popmon_own_cpus *o, int n)
{
	o->n0 = o->n = n;
	o->t = popmon_now();
	atomic_store(&o->delta, 0);
}

void popmon_own_set(struct popmon_own_cpus *o, int n)
{
	uint64_t now = popmon_now();
	atomic_fetch_add(&o->delta, (int64_t)popmon_delta(o->t, now) * (o->n - o->n0));
	o->t = now;
	o->n = n;
}

int64_t popmon_own_delta(const struct popmon_own_cpus *o, uint64_t now)
{
	return atomic_load(&o->delta) + (int64_t)popmon_delta(o->t, now) * (o->n - o->n0);
}

int popmon_own_words_ok(const struct popmon_own_words *w)
{
	return w && w->own_cpus && w->own_now && w->own_since && w->own_delta;
}

void popmon_own_publish(const struct popmon_own_cpus *o, const struct popmon_own_words *w)
{
	if (!popmon_own_words_ok(w))
		return;
	POPMON_STORE(*w->own_cpus, (uint32_t)o->n0);
	POPMON_STORE(*w->own_delta, atomic_load(&o->delta));
	POPMON_STORE(*w->own_since, o->t);
	POPMON_STORE(*w->own_now, (uint32_t)o->n);
}
