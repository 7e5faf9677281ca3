/* popmon_internal.h: the measurement library's internal contract.
 *
 * The hot path (every intercepted MPI call) is popmon_mpi_enter() /
 * popmon_mpi_leave(): one thread-local load, one clock read each, a few adds
 * into the calling thread's own cache-line-aligned record. No locks, no
 * allocation, no system calls. Everything else (thread registration, regions,
 * finalize) lives in core.c and is off the hot path. Hardware counters
 * (counters.h) add one load and one never-taken branch per state change when
 * they are off or unavailable; when they are measured, a transition into or
 * out of useful time also reads them (rdpmc, or read() where the kernel does
 * not allow rdpmc).
 */
#ifndef POPMON_INTERNAL_H
#define POPMON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "counters.h"
#include "mpi_calls.h" /* GENERATED: enum popmon_fn, POPMON_FN_COUNT */

/* Time-account states of POP-METRICS.md §1. Values index
 * popmon_thread.acc[]; keep in sync with the writer in output.c. */
enum popmon_state {
	POPMON_ST_USEFUL = 0,
	POPMON_ST_MPI,
	POPMON_ST_MPI_WORKER_IDLE,
	POPMON_ST_OMP_SERIALIZATION,
	POPMON_ST_OMP_LOAD_IMBALANCE,
	POPMON_ST_OMP_SCHEDULING,
	POPMON_ST_GPU_RUNTIME,
	/* Not an account: an OpenMP thread waiting or in the runtime. Its
	 * time reaches the accounts through the parallel-region instance
	 * (load imbalance, scheduling) or the primary's charge (serialization,
	 * MPI worker idle); see ompt.c. */
	POPMON_ST_IDLE,
	POPMON_NSTATES
};

/* Counters kept next to the states (off the MPI hot path). */
enum popmon_extra {
	POPMON_X_PAR_WALL = 0,    /* wall time inside outermost parallel regions (encountering thread) */
	POPMON_X_PAR_USEFUL,      /* useful time of all team threads inside them */
	POPMON_X_PAR_SELF_USEFUL, /* the encountering thread's own useful time inside them */
	POPMON_X_PARALLELS,       /* outermost parallel regions encountered */
	POPMON_X_TASKS,           /* explicit tasks created */
	POPMON_NEXTRA
};

#define POPMON_STATE_STACK 16

/* Message-size histogram buckets (measure.MPICall.SizeHist): bucket 0 holds
 * messages of 0 bytes, bucket k of 2^(k-1) to 2^k - 1 bytes, the last one
 * everything from 2^(POPMON_SIZE_BINS-2) bytes (1 GiB) up. */
#define POPMON_SIZE_BINS 32
/* The bucket of a message of bytes (mpidata.c). */
int popmon_size_bin(uint64_t bytes);

/* What a thread record stands for (docs/library.md, "Threads"). */
enum popmon_thread_kind {
	POPMON_THR_PRIMARY = 0, /* the thread that loaded the library (calls MPI_Init) */
	POPMON_THR_OPENMP,      /* an OpenMP thread (OMPT thread_begin) */
	POPMON_THR_MPI,         /* another thread that called MPI: a CPU from its birth */
	POPMON_THR_VACANT,      /* an MPI thread's slot after it exited: its CPU is idle */
};

/* One record per thread, written only by its owner thread; other threads
 * read it with relaxed atomic loads (region start/stop, finalize). */
struct popmon_thread {
	uint64_t seq;             /* odd while last and acc[] change (live readers, live.h) */
	uint64_t last;            /* clock value of the last state change */
	uint32_t state;           /* current enum popmon_state */
	uint32_t prev_state;      /* state to return to when leaving MPI */
	uint32_t mpi_depth;       /* >0 while inside an intercepted MPI call */
	uint32_t accounted;       /* 1: a CPU of the POP model (primary, OpenMP or MPI thread) */
	uint32_t rate;            /* idle workers this thread charges for (primary only) */
	uint32_t slot;            /* index in the thread table (0 = primary) */
	uint32_t kind;            /* enum popmon_thread_kind */
	uint64_t acc[POPMON_NSTATES];   /* clock ticks per state */
	uint64_t extra[POPMON_NEXTRA];  /* owner-written counters (ticks or counts) */
	/* OpenMP (ompt.c): the outermost parallel-region instance this thread
	 * works in, its index in the team, and a small stack of states to
	 * return to after waits and explicit tasks. */
	void *omp_inst;           /* instance whose implicit task this thread runs */
	void *omp_parallel;       /* instance this thread encountered (opened) */
	void *omp_ring;           /* instances this thread can open */
	uint32_t omp_index;
	uint32_t omp_nested;      /* depth of ignored (nested) parallel regions encountered */
	uint64_t omp_wait_begin;
	uint32_t omp_wait_kind;
	uint32_t nstack;
	uint32_t stack[POPMON_STATE_STACK];
	uint64_t mpi_calls;             /* completed outermost MPI calls */
	uint64_t fn_calls[POPMON_FN_COUNT];
	uint64_t fn_ticks[POPMON_FN_COUNT];
	/* Hardware counters (counters.c); untouched while counters are off. */
	struct popmon_ctr_thread ctr;
	/* CUDA API calls (gpu.c): nesting depth, whether the outermost one
	 * switched useful time to GPU runtime, and such calls completed. */
	uint32_t gpu_depth;
	uint32_t gpu_in;
	uint64_t gpu_calls;
	/* Bytes of the calls that start transfers (mpidata.c), by enum
	 * popmon_dfn: sent and received, and the message-size histogram
	 * (popmon_size_bin). */
	uint64_t d_bytes[POPMON_DFN_COUNT][2];
	uint64_t d_hist[POPMON_DFN_COUNT][POPMON_SIZE_BINS];
	/* The thread's table of pending requests (mpidata.c), NULL until its
	 * first non-blocking receive or persistent request. */
	void *dreq;
	/* The thread's trace buffer (trace.c), NULL until its first record. */
	void *trace;
} __attribute__((aligned(64)));

/* Tracing (trace.c, trace.h): set while the process traces; the record
 * of the outermost MPI call fn, returning the tick to account it to. */
extern int popmon_trace_on;
uint64_t popmon_trace_call(struct popmon_thread *t, int fn, uint64_t enter, uint64_t leave);

/* The calling thread's record, or NULL before its first registration.
 * initial-exec TLS: libpopmon is always loaded at start-up (LD_PRELOAD). */
extern __thread struct popmon_thread *popmon_tls
	__attribute__((tls_model("initial-exec")));

/* 1 when the clock is the invariant TSC, 0 for CLOCK_MONOTONIC. */
extern int popmon_clock_tsc;

/* Registers the calling thread (first MPI call on a thread); returns NULL
 * when the library is inert in this process (launchers) or out of slots. */
struct popmon_thread *popmon_thread_slow(void);

/* Hooks called by the generated wrappers. */
void popmon_mpi_pre_init_hook(void); /* before PMPI_Init[_thread] */
void popmon_mpi_init_hook(void);     /* after a successful PMPI_Init[_thread] */
void popmon_mpi_finalize_hook(void); /* before PMPI_Finalize */
void popmon_mpi_abort_hook(int code); /* before PMPI_Abort: the live file records it */

/* Dispatch tables (dispatch.c, mpi_wrappers.c): where each exported C
 * entry point MPI_X jumps (its wrapper, or the program's MPI when the
 * library is inert), what each wrapper calls next (another PMPI tool's
 * MPI_X or the MPI library's PMPI_X), and where the PMPI_ and pass-through
 * stubs jump (the program's MPI; popmon_lazy_real until resolved). */
extern void *popmon_entry[POPMON_FN_COUNT] __attribute__((visibility("hidden")));
extern void *popmon_next[POPMON_FN_COUNT] __attribute__((visibility("hidden")));
extern void *popmon_real[POPMON_REAL_COUNT] __attribute__((visibility("hidden")));
extern void *popmon_chain[POPMON_FN_COUNT];
void popmon_lazy_real(void) __attribute__((visibility("hidden")));
void *popmon_resolve_real(unsigned slot) __attribute__((visibility("hidden")));
void *popmon_resolve_next(int id);
/* The program's MPI library's PMPI_ function of id. */
void *popmon_real_fn(int id);

/* What the wrapper of id calls: one load and a never-taken branch. */
static inline __attribute__((always_inline)) void *popmon_next_fn(int id)
{
	void *f = __atomic_load_n(&popmon_next[id], __ATOMIC_RELAXED);
	return __builtin_expect(f != NULL, 1) ? f : popmon_resolve_next(id);
}

/* Resolves the first of a NULL-terminated list of symbol names in the
 * libraries loaded after libpopmon (dlsym(RTLD_NEXT)). Returns NULL when none
 * exists. Used by the Fortran pass-through wrappers, once per function. */
void *popmon_dlsym_next(const char *const *names);

/* Prints one "popmon: ..." line to stderr, at most once per key. */
void popmon_warn_once(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Clock. rdtsc costs ~9 ns here against ~22 ns for clock_gettime through the
 * vDSO; a state change reads the clock once, so an MPI call costs two reads.
 * With two clock_gettime calls alone (~45 ns) the 30 ns budget per call is out
 * of reach, so the invariant TSC is used when the CPU advertises it
 * (CPUID 0x80000007 EDX bit 8, or constant_tsc+nonstop_tsc on hypervisors that
 * hide the bit) and converted to nanoseconds once, at the end, by a ratio
 * calibrated against CLOCK_MONOTONIC over the whole run (so the conversion
 * error is ~1 ppm even for short runs). Otherwise CLOCK_MONOTONIC is used
 * directly and ticks are nanoseconds. rdtsc is not serialising; that is fine
 * for accounting: the reordering window is a few cycles. */
static inline __attribute__((always_inline)) uint64_t popmon_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(popmon_clock_tsc, 1)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define POPMON_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define POPMON_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define POPMON_ADD(x, v) POPMON_STORE((x), POPMON_LOAD(x) + (v))

/* Elapsed ticks from a to b; 0 if the clock went backwards (a thread moved to
 * a core whose TSC is a few ticks behind). */
static inline uint64_t popmon_delta(uint64_t a, uint64_t b)
{
	return (int64_t)(b - a) > 0 ? b - a : 0;
}

/* The account a primary thread charges its idle workers' time to while it
 * is in state st: MPI worker idle inside MPI, serialization otherwise. */
static inline uint32_t popmon_charge_state(uint32_t st)
{
	return st == POPMON_ST_MPI ? POPMON_ST_MPI_WORKER_IDLE : POPMON_ST_OMP_SERIALIZATION;
}

/* Adds the time since the last change to the current state (and the idle
 * workers' charge); returns the elapsed ticks. */
static inline __attribute__((always_inline)) uint64_t popmon_account(struct popmon_thread *t, uint64_t now)
{
	uint64_t d = popmon_delta(t->last, now);
#ifndef POPMON_NO_LIVE_SEQ /* the benchmarks' baseline: the hot path before live files */
	/* A reader in another process (live.h) retries while seq is odd or
	 * has changed: on x86 the fences cost nothing but the compiler's
	 * ordering of the stores. */
	uint64_t seq = t->seq;
	POPMON_STORE(t->seq, seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
#endif
	POPMON_ADD(t->acc[t->state], d);
	if (t->rate)
		POPMON_ADD(t->acc[popmon_charge_state(t->state)], d * t->rate);
	POPMON_STORE(t->last, now);
#ifndef POPMON_NO_LIVE_SEQ
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
#endif
	return d;
}

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

/* Entry of an intercepted MPI call. Nested calls (an MPI function the library
 * implements with other MPI functions, or Fortran bindings calling C ones)
 * are counted once, by the outermost wrapper. */
static inline void popmon_mpi_enter(void)
{
	struct popmon_thread *t = popmon_tls;
	if (__builtin_expect(t == NULL, 0)) {
		t = popmon_thread_slow();
		if (t == NULL)
			return;
	}
	if (t->mpi_depth++ == 0) {
		t->prev_state = t->state;
		popmon_switch(t, POPMON_ST_MPI, popmon_now());
	}
}

/* Exit of an intercepted MPI call fn (enum popmon_fn). */
static inline void popmon_mpi_leave(int fn)
{
	struct popmon_thread *t = popmon_tls;
	if (__builtin_expect(t == NULL, 0))
		return;
	if (--t->mpi_depth == 0) {
		uint64_t now = popmon_now();
		/* Tracing (trace.c): one load and a never-taken branch when off. */
		if (__builtin_expect(POPMON_LOAD(popmon_trace_on), 0))
			now = popmon_trace_call(t, fn, t->last, now);
		uint64_t d = popmon_account(t, now);
		popmon_ctr_hook(t, POPMON_ST_MPI, t->prev_state);
		POPMON_STORE(t->state, t->prev_state);
		POPMON_ADD(t->mpi_calls, 1);
		POPMON_ADD(t->fn_calls[fn], 1);
		POPMON_ADD(t->fn_ticks[fn], d);
	}
}

#endif /* POPMON_INTERNAL_H */
