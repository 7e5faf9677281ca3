/* threads.h: the thread table and each thread's record (threads.c), the
 * bottom layer.
 *
 * The hot path (every intercepted MPI call) is popmon_mpi_enter() /
 * popmon_mpi_leave() (mpi/mpi.h): one thread-local load, one clock read
 * each, a few adds into the calling thread's own cache-line-aligned record
 * (popmon_account below). No locks, no allocation, no system calls.
 * Registering threads, regions and finalize are off the hot path. The record
 * holds every subsystem's per-thread part (OpenMP, hardware counters, GPU
 * calls, bytes, trace); each subsystem writes only its own.
 */
#ifndef POPMON_THREADS_H
#define POPMON_THREADS_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/clock.h"
#include "mpi_calls.h" /* GENERATED: enum popmon_fn, POPMON_FN_COUNT */

#define POPMON_MAX_THREADS 4096

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
/* User regions one thread can measure on its own at once (regions.c). */
#define POPMON_THREAD_REGIONS 8

/* Message-size histogram buckets (measure.MPICall.SizeHist): bucket 0 holds
 * messages of 0 bytes, bucket k of 2^(k-1) to 2^k - 1 bytes, the last one
 * everything from 2^(POPMON_SIZE_BINS-2) bytes (1 GiB) up. */
#define POPMON_SIZE_BINS 32
/* The bucket of a message of bytes is popmon_size_bin (mpi/mpidata.h). */

/* The counters, in group order (cycles leads the group). */
enum { POPMON_CTR_CYCLES = 0, POPMON_CTR_INSTRUCTIONS, POPMON_CTR_N };

/* Per-thread status of the counters. */
enum popmon_ctr_status {
	POPMON_CTR_NEW = 0, /* not opened yet (opened at the next transition into useful time) */
	POPMON_CTR_OPEN,    /* counting */
	POPMON_CTR_FAILED,  /* could not be opened or read: never tried again */
	POPMON_CTR_CLOSED,  /* closed at thread exit or finalize */
};

/* One reading of a thread's counters: the counts and, per counter, the
 * nanoseconds it was enabled and running (they differ when the kernel
 * multiplexes the PMU between more events than it has counters). */
struct popmon_ctr_sample {
	uint64_t count[POPMON_CTR_N];
	uint64_t enabled[POPMON_CTR_N];
	uint64_t running[POPMON_CTR_N];
};

/* The counters of one thread, inside its record; written by the owner
 * only (acc is read by other threads with relaxed loads). */
struct popmon_ctr_thread {
	uint32_t status;          /* enum popmon_ctr_status */
	uint32_t counting;        /* 1 while a useful interval is open: start holds its first reading */
	int fd[POPMON_CTR_N];     /* perf_event file descriptors (fd[0] leads the group) */
	void *page[POPMON_CTR_N]; /* mmapped perf pages (rdpmc), or NULL */
	struct popmon_ctr_sample start;
	uint64_t acc[POPMON_CTR_N]; /* cycles, instructions during useful time */
};

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
	uint32_t omp_nested;      /* depth of ignored (too deeply nested) parallel regions encountered */
	uint64_t omp_nested_cov;  /* ticks of this thread's time in nested regions it encountered that
				   * those regions' own accounts hold (not busy there): its enclosing
				   * team counts them as busy, so they are not counted twice */
	uint64_t omp_wait_begin;
	uint32_t omp_wait_kind;   /* the current wait is synchronization (explicit) */
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
	/* User regions this thread measures on its own (regions.c: started
	 * inside a parallel region), innermost last: the region, the tick and
	 * the thread's own accounts at its start. */
	uint32_t nregions;
	struct popmon_thread_region {
		int32_t idx;
		uint64_t start;
		uint64_t position; /* popmon_omp_position at the start */
		uint64_t useful, mpi, gpu;
		uint64_t mpi_calls, parallels, tasks, gpu_calls;
		uint64_t ctr[POPMON_CTR_N];
	} regions[POPMON_THREAD_REGIONS];
} __attribute__((aligned(64)));

/* The calling thread's record, or NULL before its first registration.
 * initial-exec TLS: libpopmon is always loaded at start-up (LD_PRELOAD). */
extern __thread struct popmon_thread *popmon_tls
	__attribute__((tls_model("initial-exec")));

/* Registers the calling thread (first MPI call on a thread); returns NULL
 * when the library is inert in this process (launchers) or out of slots.
 * Starts the library up first when an MPI call comes before its
 * constructor; a thread that is neither the primary nor an OpenMP thread
 * is adopted by the start-up layer (popmon_startup's adopt, core.c). */
struct popmon_thread *popmon_thread_slow(void);
/* The calling thread's record, a new one of kind in state when it has
 * none; NULL when the library is inert. */
struct popmon_thread *popmon_thread_new(uint32_t kind, uint32_t state);
struct popmon_thread *popmon_thread_slot(int slot);
int popmon_thread_count(void);

/* Where the records live and who hears of a new one (the live file, live.h,
 * when there is one; else the heap and no one): mem returns slot's record
 * or NULL, publish is called after a record joins the table. */
void popmon_threads_store(void *(*mem)(int slot), void (*publish)(void));
/* Allocates a zeroed record (accounted, of kind, in state since last) in a
 * new slot, without publishing it; NULL (and a warning) when out of slots
 * or memory. */
struct popmon_thread *popmon_thread_alloc(uint32_t kind, uint32_t state, uint64_t last);
/* Lists t in the table and makes it the calling thread's record. */
void popmon_thread_publish(struct popmon_thread *t);
/* The tick at which the calling thread started, when it was created through
 * pthread_create after the library loaded (0 otherwise). */
uint64_t popmon_thread_birth(void);
/* A detached helper thread of the library (the GPU activity pool's, a
 * backend's flusher or sampler) running fn(NULL), with every signal blocked
 * (none of the program's is ever delivered to it): 0, or -1. */
int popmon_helper_thread(void *(*fn)(void *));
/* Vacant slots (an MPI thread that exited; core.c): the lock they are
 * kept under, taking the vacant record whose vacancy began by birth
 * (NULL: none), and vacating t. */
void popmon_threads_lock(void);
void popmon_threads_unlock(void);
struct popmon_thread *popmon_thread_take_vacant_locked(uint64_t birth);
void popmon_thread_vacate(struct popmon_thread *t);
/* One more MPI thread's slot (a CPU beyond the OpenMP team). */
void popmon_mpi_threads_add(void);

/* The CPUs of the process (POP-METRICS.md §1): its largest OpenMP team (1
 * without OpenMP) plus its MPI threads (threads that are neither the primary
 * nor OpenMP threads and called MPI; docs/library.md, "Threads"). */
int popmon_cpus(void);
int popmon_omp_team_cpus(void);   /* the largest OpenMP team, at least 1 */
/* The CPUs the process holds now, for the live file: popmon_cpus, or, once
 * DROM changed the process's mask (drom.c: popmon_cpus_hold(n), n > 0), n
 * plus its MPI threads (published at once). The measurement file keeps
 * popmon_cpus. */
void popmon_cpus_hold(int n);
int popmon_cpus_now(void);
int popmon_mpi_thread_count(void); /* MPI threads' slots (live or vacant) */
/* The OpenMP runtime's max threads, 0 without OMPT (written by ompt.c). */
extern int popmon_omp_cpus;

void popmon_fn_totals(uint64_t *calls, uint64_t *ticks); /* POPMON_FN_COUNT each */
/* The threads' bytes (mpidata.c) summed: per enum popmon_dfn, sent,
 * received, then POPMON_SIZE_BINS histogram buckets. */
#define POPMON_DSUMS (POPMON_DFN_COUNT * (2 + POPMON_SIZE_BINS))
void popmon_dfn_totals(int64_t *out); /* POPMON_DSUMS */
/* Whether the program used MPI Sessions and never MPI_Init. */
int popmon_mpi_sessions_only(void);

/* The account a primary thread charges its idle workers' time to while it
 * is in state st: MPI worker idle inside MPI, serialization otherwise. */
static inline uint32_t popmon_charge_state(uint32_t st)
{
	return st == POPMON_ST_MPI ? POPMON_ST_MPI_WORKER_IDLE : POPMON_ST_OMP_SERIALIZATION;
}

/* Adds the time since the last change to the current state (and the idle
 * workers' charge); returns the elapsed ticks. The record's fields are
 * loaded before seq turns odd (only the owner writes them): the fences
 * below order the compiler, which would otherwise load them again. */
static inline __attribute__((always_inline)) uint64_t popmon_account(struct popmon_thread *t, uint64_t now)
{
	uint32_t st = t->state, rate = t->rate;
	uint64_t d = popmon_delta(t->last, now);
	uint64_t a = t->acc[st];
#ifndef POPMON_NO_LIVE_SEQ /* the benchmarks' baseline: the hot path before live files */
	/* A reader in another process (live.h) retries while seq is odd or
	 * has changed: on x86 the fences cost nothing but the compiler's
	 * ordering of the stores. */
	uint64_t seq = t->seq;
	POPMON_STORE(t->seq, seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
#endif
	POPMON_STORE(t->acc[st], a + d);
	if (__builtin_expect(rate != 0, 0)) {
		uint32_t c = popmon_charge_state(st);
		POPMON_ADD(t->acc[c], d * rate);
	}
	POPMON_STORE(t->last, now);
#ifndef POPMON_NO_LIVE_SEQ
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
#endif
	return d;
}

/* A process's own CPUs over time (LeWI's and DROM's): the n0 CPUs it
 * registered, the n it has had since the tick t of their last change, and
 * the CPU time they differed from the registered ones before t
 * (popmon_now() ticks x CPUs, signed). One thread changes it at a time
 * (its owner's lock or registration); delta is read by others. */
struct popmon_own_cpus {
	int n0, n;
	uint64_t t;
	_Atomic int64_t delta;
};
/* Registered with n CPUs now. */
void popmon_own_start(struct popmon_own_cpus *o, int n);
/* Has n CPUs from now: the time since the last change is folded in. */
void popmon_own_set(struct popmon_own_cpus *o, int n);
/* The change up to now (ticks x CPUs), the open stretch included. */
int64_t popmon_own_delta(const struct popmon_own_cpus *o, uint64_t now);
/* Where a reader outside the process finds them (the live file's words;
 * any pointer NULL: none): n0, n, t and the folded delta, each time they
 * change, so a reader extends the change to the process's end. */
struct popmon_own_words {
	uint32_t *own_cpus, *own_now;
	uint64_t *own_since;
	int64_t *own_delta;
};
int popmon_own_words_ok(const struct popmon_own_words *w);
void popmon_own_publish(const struct popmon_own_cpus *o, const struct popmon_own_words *w);


#endif /* POPMON_THREADS_H */
