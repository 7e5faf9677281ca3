/* gomp.c: GNU libgomp (GCC's OpenMP runtime) measured in place.
 *
 * libgomp has no OMPT. Its entry points, which GCC's outlined code calls,
 * are interposed here (libpopmon is preloaded before libgomp), as Extrae
 * does, and reported through ompt.h's runtime-neutral events, the same
 * ones OMPT's callbacks feed on LLVM's libomp: one accounting for both
 * runtimes (ompt.c's header comment; POP-METRICS.md §1).
 *
 *  - Parallel regions (GOMP_parallel, _loop_*, _sections, _reductions, and
 *    the GCC < 4.9 pairs *_start / GOMP_parallel_end): the encountering
 *    thread opens the instance before the fork and closes it after the
 *    join; the outlined function is wrapped in a trampoline, so that every
 *    team thread's implicit task begins and ends around it (the first
 *    trampoline a libgomp thread runs registers it, as OMPT's thread_begin
 *    does). The encountering thread's implicit task ends before the join
 *    barrier, but its end is not marked: its join wait is load imbalance in
 *    the construct's profile, as with libomp.
 *  - Waits: GOMP_barrier*, GOMP_loop_end*, GOMP_sections_end*,
 *    GOMP_single_copy_start (implicit barriers: GCC emits a plain
 *    GOMP_barrier for the end of a static loop, which is then counted as an
 *    explicit one), GOMP_critical_*start, GOMP_ordered_start,
 *    GOMP_taskwait*, GOMP_taskgroup_end.
 *  - Explicit tasks (GOMP_task): counted, and run through a trampoline that
 *    makes them useful time wherever they run (in a barrier, a taskwait):
 *    the task's data is copied behind a small header naming the outlined
 *    function.
 *  - Not interposed, on purpose: loop chunk dispatch (GOMP_loop_*_start,
 *    _next: on libomp OMPT reports no dispatch event either, so both
 *    runtimes count it as the thread's useful time, and each chunk stays
 *    free of popmon's cost), the nowait ends, single_start, atomics,
 *    taskloop (libgomp writes each task's bounds at the start of its data,
 *    which a header would shift), host teams (GOMP_teams_reg).
 *
 * The wrappers decide once (at start-up for a program linked with libgomp,
 * popmon_gomp_probe; else at the first GOMP call) whether they measure or
 * pass straight through: through in an inert process, with
 * --openmp=off (POPMON_NO_OMPT), and when the runtime is LLVM's libomp
 * (which exports GOMP_* for GCC's programs and reports to OMPT: counting
 * here too would count twice). Hot paths: one thread-local load, no lock,
 * no allocation, no system call; the real functions are looked up once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "drom.h"
#include "gomp.h"
#include "lewi.h"
#include "ompt.h"

enum { UNDECIDED = 0, MEASURE, PASS };
static int mode;
static pthread_once_t decided = PTHREAD_ONCE_INIT;

static int (*num_threads_fn)(void);
static int (*thread_num_fn)(void);
static int (*max_threads_fn)(void);

/* Whether f is defined by a copy of libpopmon: this one, or another one in
 * the same process (a program linked with -ldlb against `popmon dlb-home`'s
 * libdlb.so while libdlb_mpi.so is preloaded), whose GOMP_* are wrappers
 * too, never the runtime. */
static int in_popmon(const void *f)
{
	Dl_info found;
	if (!dladdr(f, &found) || !found.dli_fname)
		return 0;
	Dl_info mine;
	if (dladdr((const void *)(uintptr_t)&popmon_gomp_probe, &mine) && mine.dli_fbase == found.dli_fbase)
		return 1;
	void *h = dlopen(found.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	/* dlsym on a handle also searches the object's dependencies: the
	 * marker must be the object's own. */
	void *mark = dlsym(h, "popmon_gomp_probe");
	Dl_info where;
	int popmon = mark && dladdr(mark, &where) && where.dli_fbase == found.dli_fbase;
	dlclose(h);
	return popmon;
}

/* The runtime's own function name: the next definition after libpopmon's,
 * or, where RTLD_NEXT does not look (a runtime that a library opened
 * privately, RTLD_LOCAL, as Python modules are opened), the one the caller
 * (code at the address caller) would have bound to: its object's own
 * dependencies, then the runtimes already loaded. NULL when none. */
static void *lookup(const char *name, const void *caller)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (f && !in_popmon(f))
		return f;
	Dl_info info;
	if (caller && dladdr(caller, &info) && info.dli_fname) {
		void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			f = dlsym(h, name);
			dlclose(h);
			/* Not libpopmon's (the caller may depend on it). */
			if (f && !in_popmon(f))
				return f;
		}
	}
	static const char *const runtimes[] = {"libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so", NULL};
	for (int i = 0; runtimes[i]; i++) {
		void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		f = dlsym(h, name);
		dlclose(h);
		if (f)
			return f;
	}
	return NULL;
}

/* lookup's result, which must exist (the program called the function):
 * else one line, then abort. */
static void *real_sym(const char *name, const void *caller)
{
	void *f = lookup(name, caller);
	if (!f) {
		static const char head[] = "popmon: the OpenMP runtime's ";
		static const char tail[] = " was not found: cannot continue\n";
		if (write(2, head, sizeof head - 1) < 0 || write(2, name, strlen(name)) < 0 ||
		    write(2, tail, sizeof tail - 1) < 0) {
			/* nothing sensible to do */
		}
		abort();
	}
	return f;
}

/* The real function of a wrapper, looked up at its first call. */
#define REAL(type, name)                                                        \
	static __typeof__(type) real_##name;                                    \
	__typeof__(type) r_ = __atomic_load_n(&real_##name, __ATOMIC_RELAXED);  \
	if (__builtin_expect(!r_, 0)) {                                         \
		r_ = (__typeof__(type))real_sym(#name, __builtin_return_address(0)); \
		__atomic_store_n(&real_##name, r_, __ATOMIC_RELAXED);           \
	}

/* Whether the runtime that defines GOMP_parallel for code at caller is
 * LLVM's (or Intel's) OpenMP runtime, whose GOMP_* compatibility entry
 * points report to OMPT. */
static int llvm_runtime(const void *caller)
{
	if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call"))
		return 1;
	void *gp = lookup("GOMP_parallel", caller);
	Dl_info info;
	if (!gp || !dladdr(gp, &info) || !info.dli_fname)
		return 0;
	void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	int llvm = dlsym(h, "__kmpc_fork_call") != NULL;
	dlclose(h);
	return llvm;
}

static const void *first_caller; /* the code of the first GOMP call */

static int deciding; /* decide is running: start-up's probe must not wait for it */

static void decide(void)
{
	__atomic_store_n(&deciding, 1, __ATOMIC_RELAXED);
	/* A parallel region in another library's constructor may come before
	 * libpopmon's own (whose start-up probes too: see deciding). */
	popmon_ensure_init();
	popmon_wake(POPMON_WAKE_COMPUTE); /* an OpenMP program named like a utility */
	int m = PASS;
	if (popmon_proc.inert) {
		m = PASS;
	} else if (llvm_runtime(first_caller)) {
		m = PASS; /* LLVM's libomp: measured through OMPT (ompt.c) */
	} else if (popmon_env_switch("POPMON_NO_OMPT", 0, 1)) {
		popmon_omp_off("GNU libgomp"); /* --openmp=off */
	} else {
		num_threads_fn = (int (*)(void))lookup("omp_get_num_threads", first_caller);
		thread_num_fn = (int (*)(void))lookup("omp_get_thread_num", first_caller);
		max_threads_fn = (int (*)(void))lookup("omp_get_max_threads", first_caller);
		if (num_threads_fn && thread_num_fn && max_threads_fn) {
			popmon_omp_measured_by("GNU libgomp", POPMON_OMP_BY_GOMP);
			m = MEASURE;
		} else {
			/* GOMP_* without the runtime's query functions: not a
			 * runtime popmon knows; its calls go straight through. */
			popmon_warn_once("gomp-runtime", "the OpenMP runtime that defines GOMP_parallel has no omp_get_num_threads: OpenMP is not measured");
		}
	}
	__atomic_store_n(&mode, m, __ATOMIC_RELEASE);
}

/* Whether the wrappers measure (decided at the first call, from code at
 * caller). */
#define measuring() measuring_from(__builtin_return_address(0))
static inline __attribute__((always_inline)) int measuring_from(const void *caller)
{
	int m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
	if (__builtin_expect(m == UNDECIDED, 0)) {
		__atomic_store_n(&first_caller, caller, __ATOMIC_RELAXED);
		pthread_once(&decided, decide);
		m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
	}
	/* A forked child is inert (core.c): its copy of the thread records
	 * is not even mapped. */
	return m == MEASURE && !popmon_proc.inert;
}

static inline struct popmon_thread *self(void)
{
	struct popmon_thread *t = popmon_tls;
	return t ? t : popmon_thread_slow();
}

void popmon_gomp_probe(void)
{
	/* libgomp initialises in its constructor (reading OMP_NUM_THREADS
	 * then), before the program runs: a program linked with it has its
	 * OpenMP runtime, and the runtime's CPUs, from the start, as a program
	 * on libomp has from the runtime's first use (OMPT's tool start), even
	 * if it never enters a parallel region. A dormant process waits for
	 * its first GOMP call (which wakes it); a libgomp opened later is
	 * decided at its first call. */
	if (__atomic_load_n(&deciding, __ATOMIC_RELAXED) || popmon_proc.inert || popmon_proc.dormant ||
	    !lookup("GOMP_parallel", NULL))
		return; /* (called from decide itself: start-up, a dormant process woken) */
	pthread_once(&decided, decide);
}

unsigned int popmon_gomp_team_size(unsigned int requested)
{
	popmon_drom_parallel_begin(); /* a new mask from DROM: this region's team (omp_set_num_threads) */
	return requested;
}

/* ------------------------------------------------------------------ regions */

/* One parallel region a GOMP wrapper started: the outlined function, its
 * data, and the instance (ompt.h) its team's implicit tasks report to. */
struct region {
	void (*fn)(void *);
	void *data;
	void *inst;
	int primary; /* the encountering thread's implicit task is accounted */
};

/* Every team thread runs the outlined function through this. */
static void trampoline(void *p)
{
	struct region *r = p;
	struct popmon_thread *t = popmon_tls;
	if (__builtin_expect(!t, 0)) /* a libgomp thread's first region */
		t = popmon_thread_new(POPMON_THR_OPENMP, POPMON_ST_IDLE);
	popmon_lewi_implicit_begin((unsigned int)thread_num_fn()); /* LeWI: the thread's CPU */
	int accounted = r->inst && popmon_omp_implicit_begin(t, r->inst, (unsigned int)num_threads_fn(),
							      (unsigned int)thread_num_fn());
	r->fn(r->data);
	if (accounted)
		popmon_omp_implicit_end(t, t->omp_parallel != r->inst);
}

/* Opens r for a team of num_threads (0: the default) encountered at
 * codeptr; returns the team size to ask libgomp for. */
static unsigned int region_open(struct region *r, void (*fn)(void *), void *data,
				unsigned int num_threads, const void *codeptr)
{
	num_threads = popmon_gomp_team_size(num_threads);
	struct popmon_thread *t = self();
	int lewi = popmon_lewi_parallel_begin(t && !t->omp_inst && !t->omp_nested, 0); /* LeWI: the team */
	if (lewi > 0 && num_threads == 0)
		num_threads = (unsigned int)lewi;
	r->fn = fn;
	r->data = data;
	r->primary = 0;
	unsigned int requested = num_threads ? num_threads : (unsigned int)max_threads_fn();
	r->inst = popmon_omp_parallel_begin(t, requested, codeptr);
	return num_threads;
}

static void region_close(struct region *r)
{
	popmon_omp_parallel_end(popmon_tls, r->inst);
	popmon_lewi_parallel_end(popmon_tls && !popmon_tls->omp_inst && !popmon_tls->omp_nested);
}

/* GCC >= 4.9: the encountering thread runs the outlined function inside
 * the call, which returns after the join. */
#define PARALLEL(call)                                                          \
	do {                                                                    \
		struct region r;                                                \
		num_threads = region_open(&r, fn, data, num_threads, __builtin_return_address(0)); \
		call;                                                           \
		region_close(&r);                                               \
	} while (0)

typedef void (*outlined_t)(void *);

void GOMP_parallel(outlined_t fn, void *data, unsigned int num_threads, unsigned int flags);
void GOMP_parallel(outlined_t fn, void *data, unsigned int num_threads, unsigned int flags)
{
	REAL(void (*)(outlined_t, void *, unsigned int, unsigned int), GOMP_parallel);
	if (!measuring())
		{ r_(fn, data, num_threads, flags); return; }
	PARALLEL(r_(trampoline, &r, num_threads, flags));
}

unsigned int GOMP_parallel_reductions(outlined_t fn, void *data, unsigned int num_threads, unsigned int flags);
unsigned int GOMP_parallel_reductions(outlined_t fn, void *data, unsigned int num_threads, unsigned int flags)
{
	REAL(unsigned int (*)(outlined_t, void *, unsigned int, unsigned int), GOMP_parallel_reductions);
	if (!measuring())
		return r_(fn, data, num_threads, flags);
	unsigned int ret;
	PARALLEL(ret = r_(trampoline, &r, num_threads, flags));
	return ret;
}

void GOMP_parallel_sections(outlined_t fn, void *data, unsigned int num_threads, unsigned int count,
			    unsigned int flags);
void GOMP_parallel_sections(outlined_t fn, void *data, unsigned int num_threads, unsigned int count,
			    unsigned int flags)
{
	REAL(void (*)(outlined_t, void *, unsigned int, unsigned int, unsigned int), GOMP_parallel_sections);
	if (!measuring())
		{ r_(fn, data, num_threads, count, flags); return; }
	PARALLEL(r_(trampoline, &r, num_threads, count, flags));
}

/* The combined parallel loops, with and without a chunk size. */
#define PARALLEL_LOOP_CHUNK(name)                                               \
	void name(outlined_t fn, void *data, unsigned int num_threads, long start, long end, \
		  long incr, long chunk, unsigned int flags);                   \
	void name(outlined_t fn, void *data, unsigned int num_threads, long start, long end, \
		  long incr, long chunk, unsigned int flags)                    \
	{                                                                       \
		REAL(void (*)(outlined_t, void *, unsigned int, long, long, long, long, unsigned int), name); \
		if (!measuring())                                               \
			{ r_(fn, data, num_threads, start, end, incr, chunk, flags); return; } \
		PARALLEL(r_(trampoline, &r, num_threads, start, end, incr, chunk, flags)); \
	}
#define PARALLEL_LOOP(name)                                                     \
	void name(outlined_t fn, void *data, unsigned int num_threads, long start, long end, \
		  long incr, unsigned int flags);                               \
	void name(outlined_t fn, void *data, unsigned int num_threads, long start, long end, \
		  long incr, unsigned int flags)                                \
	{                                                                       \
		REAL(void (*)(outlined_t, void *, unsigned int, long, long, long, unsigned int), name); \
		if (!measuring())                                               \
			{ r_(fn, data, num_threads, start, end, incr, flags); return; } \
		PARALLEL(r_(trampoline, &r, num_threads, start, end, incr, flags)); \
	}
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_static)
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_guided)
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_guided)
PARALLEL_LOOP(GOMP_parallel_loop_runtime)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* GCC < 4.9: *_start forks the team and returns; the encountering thread
 * then calls the outlined function itself and GOMP_parallel_end joins.
 * The regions between the two live in a small per-thread stack. */
enum { STARTS = 8 };
static __thread struct region starts[STARTS] __attribute__((tls_model("initial-exec")));
static __thread unsigned int nstarts __attribute__((tls_model("initial-exec")));

static struct region *start_open(void)
{
	unsigned int d = nstarts++;
	return d < STARTS ? &starts[d] : NULL;
}

/* After *_start returned: the encountering thread's implicit task. */
static void start_primary(struct region *r)
{
	struct popmon_thread *t = popmon_tls;
	r->primary = r->inst && popmon_omp_implicit_begin(t, r->inst, (unsigned int)num_threads_fn(), 0);
}

#define PARALLEL_START(call_plain, call_wrapped)                                \
	do {                                                                    \
		if (!measuring())                                               \
			{ call_plain; return; }                                      \
		struct region *r = start_open();                                \
		if (!r)                                                         \
			{ call_plain; return; } /* deeper than STARTS: not accounted */ \
		num_threads = region_open(r, fn, data, num_threads, __builtin_return_address(0)); \
		call_wrapped;                                                   \
		start_primary(r);                                               \
	} while (0)

void GOMP_parallel_start(outlined_t fn, void *data, unsigned int num_threads);
void GOMP_parallel_start(outlined_t fn, void *data, unsigned int num_threads)
{
	REAL(void (*)(outlined_t, void *, unsigned int), GOMP_parallel_start);
	PARALLEL_START(r_(fn, data, num_threads), r_(trampoline, r, num_threads));
}

void GOMP_parallel_sections_start(outlined_t fn, void *data, unsigned int num_threads, unsigned int count);
void GOMP_parallel_sections_start(outlined_t fn, void *data, unsigned int num_threads, unsigned int count)
{
	REAL(void (*)(outlined_t, void *, unsigned int, unsigned int), GOMP_parallel_sections_start);
	PARALLEL_START(r_(fn, data, num_threads, count), r_(trampoline, r, num_threads, count));
}

#define PARALLEL_LOOP_START_CHUNK(name)                                         \
	void name(outlined_t fn, void *data, unsigned int num_threads, long start, long end, \
		  long incr, long chunk);                                       \
	void name(outlined_t fn, void *data, unsigned int num_threads, long start, long end, \
		  long incr, long chunk)                                        \
	{                                                                       \
		REAL(void (*)(outlined_t, void *, unsigned int, long, long, long, long), name); \
		PARALLEL_START(r_(fn, data, num_threads, start, end, incr, chunk), \
			       r_(trampoline, r, num_threads, start, end, incr, chunk)); \
	}
PARALLEL_LOOP_START_CHUNK(GOMP_parallel_loop_static_start)
PARALLEL_LOOP_START_CHUNK(GOMP_parallel_loop_dynamic_start)
PARALLEL_LOOP_START_CHUNK(GOMP_parallel_loop_guided_start)

void GOMP_parallel_loop_runtime_start(outlined_t fn, void *data, unsigned int num_threads, long start,
				      long end, long incr);
void GOMP_parallel_loop_runtime_start(outlined_t fn, void *data, unsigned int num_threads, long start,
				      long end, long incr)
{
	REAL(void (*)(outlined_t, void *, unsigned int, long, long, long), GOMP_parallel_loop_runtime_start);
	PARALLEL_START(r_(fn, data, num_threads, start, end, incr),
		       r_(trampoline, r, num_threads, start, end, incr));
}

void GOMP_parallel_end(void);
void GOMP_parallel_end(void)
{
	REAL(void (*)(void), GOMP_parallel_end);
	if (!measuring() || nstarts == 0)
		{ r_(); return; }
	unsigned int d = --nstarts;
	if (d >= STARTS)
		{ r_(); return; }
	struct region *r = &starts[d];
	if (r->primary)
		popmon_omp_implicit_end(popmon_tls, 0);
	r_();
	region_close(r);
}

/* ------------------------------------------------------------------ waits */

/* A wait around the real call: explicit (synchronization) or an implicit
 * barrier. */
#define WAIT(sync, call)                                                        \
	do {                                                                    \
		struct popmon_thread *t_ = popmon_tls;                          \
		popmon_omp_wait_begin(t_, sync);                                \
		call;                                                           \
		popmon_omp_wait_end(t_);                                        \
	} while (0)

#define WAIT_VOID(name, sync)                                                   \
	void name(void);                                                        \
	void name(void)                                                         \
	{                                                                       \
		REAL(void (*)(void), name);                                     \
		if (!measuring())                                               \
			{ r_(); return; }                                            \
		WAIT(sync, r_());                                               \
	}
#define WAIT_BOOL(name, sync)                                                   \
	bool name(void);                                                        \
	bool name(void)                                                         \
	{                                                                       \
		REAL(bool (*)(void), name);                                     \
		if (!measuring())                                               \
			return r_();                                            \
		bool ret;                                                       \
		WAIT(sync, ret = r_());                                         \
		return ret;                                                     \
	}
#define WAIT_PTR(name, sync)                                                    \
	void name(void **p);                                                    \
	void name(void **p)                                                     \
	{                                                                       \
		REAL(void (*)(void **), name);                                  \
		if (!measuring())                                               \
			{ r_(p); return; }                                           \
		WAIT(sync, r_(p));                                              \
	}

WAIT_VOID(GOMP_barrier, 1)
WAIT_BOOL(GOMP_barrier_cancel, 1)
WAIT_VOID(GOMP_loop_end, 0)
WAIT_BOOL(GOMP_loop_end_cancel, 0)
WAIT_VOID(GOMP_sections_end, 0)
WAIT_BOOL(GOMP_sections_end_cancel, 0)
WAIT_VOID(GOMP_critical_start, 1)
WAIT_PTR(GOMP_critical_name_start, 1)
WAIT_VOID(GOMP_ordered_start, 1)
WAIT_VOID(GOMP_taskwait, 1)
WAIT_PTR(GOMP_taskwait_depend, 1)
WAIT_VOID(GOMP_taskgroup_end, 1)

void *GOMP_single_copy_start(void);
void *GOMP_single_copy_start(void)
{
	REAL(void *(*)(void), GOMP_single_copy_start);
	if (!measuring())
		return r_();
	void *ret;
	WAIT(0, ret = r_());
	return ret;
}

/* ------------------------------------------------------------------ tasks */

enum { TASK_FLAG_REDUCTION = 1 << 12 }; /* libgomp's GOMP_TASK_FLAG_REDUCTION */

/* The header in front of a task's data: its outlined function and where
 * the data begins. */
struct task_box {
	outlined_t fn;
	long off;
};

/* What GOMP_task's wrapper hands libgomp as the data to copy. */
struct task_src {
	outlined_t fn;
	void *data;
	void (*cpyfn)(void *, void *);
	long size, off;
};

static void task_copy(void *dst, void *src)
{
	struct task_src *s = src;
	struct task_box *b = dst;
	b->fn = s->fn;
	b->off = s->off;
	char *to = (char *)dst + s->off;
	if (s->cpyfn)
		s->cpyfn(to, s->data);
	else if (s->size > 0)
		memcpy(to, s->data, (size_t)s->size);
}

static void task_run(void *arg)
{
	struct task_box *b = arg;
	struct popmon_thread *t = popmon_tls;
	popmon_omp_task_run(t, 1);
	b->fn((char *)arg + b->off);
	popmon_omp_task_run(t, 0);
}

void GOMP_task(outlined_t fn, void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
	       bool if_clause, unsigned int flags, void **depend, int priority, void *detach);
void GOMP_task(outlined_t fn, void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
	       bool if_clause, unsigned int flags, void **depend, int priority, void *detach)
{
	REAL(void (*)(outlined_t, void *, void (*)(void *, void *), long, long, bool, unsigned int, void **,
		      int, void *),
	     GOMP_task);
	if (!measuring())
		{ r_(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach); return; }
	popmon_omp_task_created(popmon_tls);
	if (flags & TASK_FLAG_REDUCTION)
		{ r_(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach); return; }
	long align = arg_align > (long)_Alignof(struct task_box) ? arg_align : (long)_Alignof(struct task_box);
	long off = ((long)sizeof(struct task_box) + align - 1) / align * align;
	struct task_src src = {fn, data, cpyfn, arg_size, off};
	r_(task_run, &src, task_copy, off + (arg_size > 0 ? arg_size : 0), align, if_clause, flags, depend,
	   priority, detach);
}
