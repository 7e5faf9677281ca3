/* gpu.h: GPU measurement of libpopmon: the accounting layer (gpu.c) and
 * its backends (gpu_cupti.c: NVIDIA through CUPTI).
 *
 * Activation: only when the CUDA driver calls InitializeInjection (inside
 * cuInit, because `popmon run`/`exec` set CUDA_INJECTION64_PATH to this
 * library): programs without CUDA never load CUPTI or the driver, and the
 * MPI hot path is unchanged (nothing here is on it).
 *
 * Host: CUPTI's RUNTIME and DRIVER API callbacks, enabled for the calls
 * whose time matters (launches, synchronisation, copies, memsets, graphs,
 * allocation; never the trivial getters), switch the calling thread from
 * useful time into POPMON_ST_GPU_RUNTIME and back, with a per-thread depth
 * so that a runtime call that calls the driver counts once; a CUDA call
 * made inside MPI (or any other not-useful state) stays there.
 *
 * Device: activity records (kernels, copies, memsets) arrive in buffers
 * from a growing pool (gpu_pool.h), are processed off the program's
 * threads, and are folded, per device ordinal, into two
 * incremental unions: K (kernels) and A (kernels, copies and memsets).
 * Region snapshots read K and A at the snapshot time (after a
 * cuptiActivityFlushAll(0), never a device synchronisation); regions keep
 * their differences, so device time is clipped at region boundaries and a
 * record that arrives late is counted in the next interval.
 *
 * The seam for tests (shim/test/gpu_test.c, -DPOPMON_GPU_TEST): the CUPTI
 * and driver entry points are behind popmon_gpu_backend; the decoder, the
 * unions, the API state machine and the reason texts are exported.
 */
#ifndef POPMON_GPU_H
#define POPMON_GPU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu_abi.h"

/* Device ordinals a process accounts (records of higher ordinals are
 * rejected); per-device accounts in struct popmon_accounts. */
#define POPMON_GPU_DEVICES 16
/* Merged intervals each union keeps exactly; older coverage is final. */
#define POPMON_GPU_WINDOW 512
/* Kernels kept per process (by name pointer and device), and in the file. */
#define POPMON_GPU_KERNELS 512
#define POPMON_GPU_TOP 50
/* Activity buffers: gpu_pool.h. */
/* Idle gaps shorter than this are not reported. */
#define POPMON_GPU_IDLE_MIN_NS 1000000ull
#define POPMON_GPU_NAME 128

/* 1 once a backend measures this process's GPUs (popmon_gpu_activate). */
extern int popmon_gpu_active;


/* ------------------------------------------------------------------ records */

enum popmon_gpu_class {
	POPMON_GPU_SKIP = 0, /* a kind libpopmon does not use, a host-to-host copy, zero timestamps */
	POPMON_GPU_KERNEL,
	POPMON_GPU_COPY,
	POPMON_GPU_SET,
	POPMON_GPU_REJECT, /* implausible: end before start, outside [lo, hi], unknown device */
};

/* Copy kinds of the file's gpu_copies (POPMON_GPU_CP_SET: memsets). */
enum { POPMON_GPU_CP_HTOD = 0, POPMON_GPU_CP_DTOH, POPMON_GPU_CP_DTOD, POPMON_GPU_CP_PTOP, POPMON_GPU_CP_SET,
       POPMON_GPU_NCOPY };
extern const char *const popmon_gpu_copy_names[POPMON_GPU_NCOPY];

struct popmon_gpu_record {
	int cls;           /* enum popmon_gpu_class */
	uint32_t device;   /* the device ordinal */
	uint64_t start, end; /* ns of the records' clock */
	uint64_t bytes;
	int copy;          /* POPMON_GPU_CP_* for copies and sets */
	const char *name;  /* kernels: CUPTI's name pointer (may be NULL) */
};


/* ------------------------------------------------------------------ unions */

struct popmon_gpu_gaps {
	uint64_t count, idle_ns, longest_ns;
};

/* The union of intervals added so far, exact within the window of the
 * POPMON_GPU_WINDOW latest merged intervals (a ring), older ones folded
 * into final_len. */
struct popmon_gpu_union {
	uint64_t final_len, final_end; /* evicted coverage, and where it ends */
	uint64_t reported;             /* the largest value returned (values never go back) */
	uint32_t head, n;
	struct {
		uint64_t s, e;
	} iv[POPMON_GPU_WINDOW];
};

/* Adds [s, e); an interval evicted from the window adds its gap to the one
 * before it to gaps (when not NULL and the gap starts at or after g0 and is
 * at least POPMON_GPU_IDLE_MIN_NS). */
void popmon_gpu_union_add(struct popmon_gpu_union *u, uint64_t s, uint64_t e, struct popmon_gpu_gaps *gaps,
			  uint64_t g0);
/* Length of the union clipped to (-inf, t], never less than a value
 * returned before. */
uint64_t popmon_gpu_union_value(struct popmon_gpu_union *u, uint64_t t);
/* Adds the gaps still in the window, clipped to [g0, g1], to gaps. */
void popmon_gpu_union_gaps(const struct popmon_gpu_union *u, uint64_t g0, uint64_t g1, struct popmon_gpu_gaps *gaps);

/* ------------------------------------------------------------------ host side */

struct popmon_thread;
/* A CUDA API callback of site (POPMON_CUPTI_API_ENTER / EXIT) on thread t
 * (NULL: not a thread libpopmon accounts) at clock value now. */
void popmon_gpu_api(struct popmon_thread *t, uint32_t site, uint64_t now);


/* ------------------------------------------------------------------ backends */

struct popmon_gpu_proc;

/* A backend: what it is called (the table of backends, gpu_backends.h,
 * lists every one; the file and popmon doctor name it by these), and what
 * the layer asks of the one that measures (it hands them over in
 * popmon_gpu_activate: the layer never names a backend). */
struct popmon_gpu_ops {
	int vendor;              /* POPMON_GPU_VENDOR_*: the record's and the live file's vendor */
	const char *name;        /* the file's "method": "cupti", "rocprofiler-sdk" */
	const char *vendor_name; /* a device's "vendor": "nvidia", "amd" */
	/* The file's keys of the record's cupti_version and driver_version
	 * (the vendor library's and runtime's versions). */
	const char *version_key, *runtime_key;
	/* popmon doctor's probe (POPMON_GPU_PROBE): key=value lines on stdout. */
	void (*probe)(void);
	/* Finish of a process no backend measured: 1 when this backend says
	 * why in out (status, vendor, reason; mode on warns), else 0. */
	int (*why)(struct popmon_gpu_proc *out, int mode);
	/* Delivers what the vendor library holds (called with no GPU lock
	 * held, possibly under the region lock); final: the last flush (at
	 * exit, or a context's end), which hands back records still in
	 * progress too. */
	void (*flush)(int final);
	/* At finish, after the last flush: the backend's part of the record
	 * (versions, lost and rejected records, clock) and its warnings. */
	void (*measured)(struct popmon_gpu_proc *out);
	/* Optional: the device ordinal of the device memory at p, or -1 (host
	 * memory, or not the vendor's): how a CUDA-aware MPI call's device
	 * buffers are found (popmon_gpu_mpi_enter). */
	int (*device_of)(const void *p);
};
/* Makes backend the one that measures this process's GPUs: 0, or -1 when
 * another already does (the first to start wins). */
int popmon_gpu_activate(const struct popmon_gpu_ops *backend);

/* The accounting lock: records are accounted and devices set under it
 * (never the region lock). */
extern pthread_mutex_t popmon_gpu_lock;
/* Under the lock: one decoded record (device below the device count). */
void popmon_gpu_account_locked(const struct popmon_gpu_record *r);
/* Under the lock: the live file's device block refreshed at now_ns. */
void popmon_gpu_publish_locked(uint64_t now_ns);
/* The device table: count devices, the first n (at most
 * POPMON_GPU_DEVICES) with their UUID and name. */
void popmon_gpu_set_devices(int count, int n, const char uuid[][48], const char name[][96]);
/* The devices the backend reported (0 while unknown). */
int popmon_gpu_device_count(void);
/* The offset from a vendor clock to CLOCK_MONOTONIC: the narrowest of 8
 * brackets around get_timestamp (0 success; -1: it failed). */
int popmon_gpu_calibrate(int (*get_timestamp)(uint64_t *ns), int64_t *offset);




/* ------------------------------------------------------------------ device communication */

/* NCCL's kernels (ncclKernel_*, ncclDevKernel_*, mangled or not) move data
 * between devices: they are device communication (the union A), never
 * device computation (K). 1 when the kernel name s is one of them. */
int popmon_gpu_comm_kernel(const char *s);

/* A CUDA-aware MPI given device buffers moves device memory: the MPI call's
 * span is device communication of the buffer's device (added to its union
 * A, so it counts where no kernel runs). The generated wrappers of the calls
 * that start transfers call popmon_gpu_mpi_enter with their buffers before
 * the call (NULL for none) and, when it returned non-zero, popmon_gpu_mpi_done
 * after it. popmon_gpu_mpi_check is 0 (one load, nothing called) unless a
 * backend that can tell device pointers measures this process: the MPI path
 * of a process without GPU measurement is unchanged. */
extern int popmon_gpu_mpi_check;
uint64_t popmon_gpu_mpi_buffers(const void *a, const void *b);
void popmon_gpu_mpi_done(uint64_t t0);
static inline uint64_t popmon_gpu_mpi_enter(const void *a, const void *b)
{
	if (__builtin_expect(!__atomic_load_n(&popmon_gpu_mpi_check, __ATOMIC_RELAXED), 1))
		return 0;
	return popmon_gpu_mpi_buffers(a, b);
}

/* Delivers the records CUPTI holds (cuptiActivityFlushAll(0)); call with no
 * GPU lock held (the region lock may be held: the buffer path never takes
 * it). No-op when GPU measurement is not active. */
void popmon_gpu_flush(void);
/* The last flush (at exit, or when a context ends): also delivers the
 * buffers that hold records still in progress (cuptiActivityFlushAll's
 * forced flush), so that the finished records beside them are not lost;
 * the unfinished ones are not timed and skipped. */
void popmon_gpu_flush_final(void);
/* Per-device K and A (ns) at CLOCK_MONOTONIC time now_ns. */
void popmon_gpu_read(uint64_t now_ns, uint64_t k[POPMON_GPU_DEVICES], uint64_t a[POPMON_GPU_DEVICES]);

/* What the measurement file records of one process (gathered to rank 0 as
 * bytes at MPI finalize). */
enum { POPMON_GPU_UNUSED = 0, POPMON_GPU_MEASURED = 1, POPMON_GPU_UNMEASURED = 2 };
struct popmon_gpu_kernel_row {
	char name[POPMON_GPU_NAME];
	int64_t device, count, time_ns, min_ns, max_ns;
};
enum { POPMON_GPU_VENDOR_NVIDIA = 1, POPMON_GPU_VENDOR_AMD = 2 };
struct popmon_gpu_proc {
	int64_t status; /* POPMON_GPU_* */
	int64_t mode;   /* 0 off, 1 auto, 2 on */
	int64_t vendor; /* POPMON_GPU_VENDOR_* of the backend that measured or said why (0: none) */
	/* NVIDIA: cuptiGetVersion, cuDriverGetVersion; AMD: the rocprofiler-sdk
	 * version (major*10000+minor*100+patch), hipRuntimeGetVersion. */
	int64_t cupti_version, driver_version, dropped, rejected, calibrated;
	char reason[256];
	struct {
		char uuid[48];
		char name[96];
		int64_t used; /* records seen on it */
		int64_t gaps, idle_ns, longest_ns;
		/* Device counters (gpu_counters.h): 1 when this process sampled
		 * the device; its SMs and the most warps an SM holds. */
		int64_t sampled, sms, max_warps;
	} dev[POPMON_GPU_DEVICES];
	/* Device counters: the mode (0 off, 1 auto, 2 on), POPMON_GPU_* status,
	 * why not (or why some devices not), the sampling period, the metric
	 * read for each quantity ("" none), samples lost to overflow. */
	int64_t ctr_mode, ctr_status, ctr_period_ns, ctr_overflows;
	char ctr_reason[256];
	char ctr_metrics[6][80];
	struct {
		int64_t count, bytes, time_ns;
	} copies[POPMON_GPU_NCOPY];
	int64_t nkernels;
	struct popmon_gpu_kernel_row kernels[POPMON_GPU_TOP];
};

/* The layer's part of finish (popmon_gpu_finish, gpu_backends.h): out
 * cleared, the mode, and when a backend measures, its flush and part and
 * the devices, copies and kernels; 1 then, else 0 (no backend measured:
 * the backends say why). g0_ns, g1_ns: Global's span (CLOCK_MONOTONIC) for
 * the idle gaps. */
int popmon_gpu_finish_measured(struct popmon_gpu_proc *out, uint64_t g0_ns, uint64_t g1_ns);




#endif /* POPMON_GPU_H */
