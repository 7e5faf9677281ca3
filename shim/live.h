/* live.h: the live file, where a process keeps its accounts while it runs.
 *
 * Under `popmon run` (POPMON_LIVE_DIR set) every measured process maps one
 * file of node-local storage (tmpfs) with MAP_SHARED and keeps its thread
 * records and its region table in it, written exactly as in memory: the
 * hot path is unchanged, and the kernel keeps the pages when the process is
 * killed. A reader (popmon run's sampler, popmon recover) reads the file at
 * any time: a thread record's `seq` is odd while its accounts change, the
 * header's `regions_seq` while the region table does. The layout is
 * described by the header itself (sizes and offsets), so the reader checks
 * it instead of assuming it; docs/live-format.md documents it.
 */
#ifndef POPMON_LIVE_H
#define POPMON_LIVE_H

#include <stdint.h>

#define POPMON_LIVE_MAGIC "POPMLIV1"
#define POPMON_LIVE_VERSION 1
#define POPMON_LIVE_HEADER 4096
#define POPMON_LIVE_DFN 256
/* The GPU device ordinals the header's GPU block holds (gpu.h's
 * POPMON_GPU_DEVICES, checked there). */
#define POPMON_LIVE_GPU_DEVICES 16

/* How the process ended (or that it has not). */
enum popmon_live_state {
	POPMON_LIVE_STARTING = 0,   /* before MPI_Init */
	POPMON_LIVE_RUNNING = 1,    /* between MPI_Init and MPI_Finalize */
	POPMON_LIVE_FINALIZING = 2, /* inside MPI_Finalize */
	POPMON_LIVE_FINALIZED = 3,  /* the measurement was handed to rank 0 */
	POPMON_LIVE_NO_FINALIZE = 4, /* exited (exit, return from main) without MPI_Finalize */
	POPMON_LIVE_ABORTED = 5,    /* called MPI_Abort (arg: the error code) */
	POPMON_LIVE_SIGNALED = 6,   /* a fatal signal with its default action (arg: the signal) */
	POPMON_LIVE_SINGLE = 7,     /* not an MPI program: the measurement was written */
};

struct popmon_live_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	/* Layout: counts, sizes and offsets (bytes) of what follows. */
	uint32_t nstates, nextra, nfn, nctr, detail_threads, name_max;
	uint32_t thread_off, thread_size, max_threads;
	uint32_t region_off, region_size, max_regions;
	uint32_t names_off, names_size; /* the MPI function names, NUL-separated, by enum popmon_fn */
	uint32_t th_seq, th_last, th_state, th_accounted, th_rate, th_slot, th_kind, th_acc, th_extra,
		th_mpi_calls, th_fn_calls, th_fn_ticks, th_ctr_acc;
	uint32_t rg_name, rg_open, rg_anon, rg_start, rg_elapsed, rg_visits, rg_snap, rg_tot, rg_thr;
	uint32_t ac_size, ac_t, ac_mpi_calls, ac_omp_parallels, ac_omp_tasks, ac_gpu_calls, ac_x,
		ac_prim_useful, ac_prim_mpi, ac_thr_useful_max, ac_ctr;
	/* The process. */
	int32_t pid, rank, size, clock_tsc;
	uint32_t state;          /* enum popmon_live_state */
	int32_t state_arg;       /* MPI_Abort's code, the signal */
	uint64_t state_tick;     /* when the state was set */
	int32_t last_signal;     /* the last fatal signal caught (the process may have survived it) */
	uint32_t nthreads;       /* thread slots in use */
	uint64_t last_signal_tick;
	uint64_t t0_tick, t0_ns, epoch_ns; /* a tick, CLOCK_MONOTONIC and CLOCK_REALTIME together */
	uint64_t cal_tick, cal_ns;         /* a later pair, refreshed (calibration without rdtsc) */
	uint64_t init_tick, fin_tick;      /* MPI_Init returned, MPI_Finalize entered */
	uint64_t regions_seq;    /* odd while the region table changes */
	uint32_t nregions, cpus; /* regions in use; the process's CPUs (popmon_cpus) */
	uint64_t start_time_ticks; /* the process's start time (/proc/PID/stat field 22): pid reuse */
	char hostname[64];
	char exe[256];
	char session[128];
	char cmdline[1024]; /* /proc/self/cmdline (NUL-separated, cut) */
	uint32_t cmdline_len;
	/* The OpenMP construct table (ompt.c: struct popmon_construct): its
	 * place, record size and slots, and the offsets of its fields. A slot
	 * is in use when codeptr is not 0 and executions is not 0. */
	uint32_t omp_off, omp_size, omp_max;
	uint32_t om_codeptr, om_executions, om_threads, om_wall, om_useful, om_imbalance, om_sync,
		om_limited, om_mgmt, om_address, om_module, om_module_max;
	/* The slots in use, in the order they were taken: omp_used entries of
	 * the u32 array at omp_index_off, each the slot's index + 1 (0: being
	 * written). A reader touches only these slots: reading a hole of a
	 * tmpfs mapping would allocate it. */
	uint32_t omp_used, omp_index_off;
	/* Hardware counters: measured on every thread so far (1) or not (0),
	 * the mode, how they are read, or why they are not. */
	int32_t ctr_available;
	char ctr_mode[8];
	char ctr_method[16];
	char ctr_reason[256];
	/* GPU (gpu.c; docs/live-format.md): the offsets of the thread's CUDA
	 * call count and of the accounts' per-device K and A, and how many
	 * device ordinals they hold (0: no GPU support). gpu_seq is odd while
	 * the block below changes: each device's K and A so far (ns, as of
	 * CLOCK_MONOTONIC gpu_now_ns: what CUPTI has delivered), the devices
	 * used (a bit per ordinal), whether GPU measurement is active, its mode
	 * + 1 (0: CUDA never initialised), and the devices' UUIDs. */
	uint32_t th_gpu_calls, ac_gpu_k, ac_gpu_a, gpu_devices;
	uint64_t gpu_seq;
	uint64_t gpu_now_ns;
	uint64_t gpu_k_now[POPMON_LIVE_GPU_DEVICES];
	uint64_t gpu_a_now[POPMON_LIVE_GPU_DEVICES];
	uint32_t gpu_used, gpu_active, gpu_mode;
	char gpu_uuid[POPMON_LIVE_GPU_DEVICES][48];
	/* Bytes (mpidata.c; docs/live-format.md): the calls that start
	 * transfers (ndfn, at most POPMON_LIVE_DFN) with their enum popmon_fn
	 * ids, the histogram's buckets, and the offsets of the thread's
	 * u64 d_bytes[ndfn][2] (sent, received) and d_hist[ndfn][size_bins]. */
	uint32_t ndfn, size_bins, th_d_bytes, th_d_hist;
	uint16_t dfn_fn[POPMON_LIVE_DFN];
	/* LeWI (lewi.c writes them through popmon_lewi_observe; docs/lewi.md):
	 * 1 once LeWI is on in the process, and the CPU time it lent and
	 * borrowed so far (popmon_now() ticks × CPUs), as of its last lend's
	 * and its last borrowing region's end; of the lent time, the lending
	 * thread's own CPU's (plain ticks); the own CPUs it registered, and
	 * their change by DROM over time (ticks x CPUs, signed) up to the
	 * tick of their last change, lewi_own_since, since which it has had
	 * lewi_own_now (a reader extends the change to the process's end).
	 * affinity_cpus: the hardware CPUs of the process's affinity mask at
	 * start-up (0: unknown). */
	uint32_t lewi_on, affinity_cpus;
	uint64_t lewi_lent_ticks, lewi_borrowed_ticks;
	uint64_t lewi_lent_caller_ticks;
	int64_t lewi_own_delta_ticks;
	uint32_t lewi_own_cpus, lewi_own_now;
	uint64_t lewi_own_since;
	/* DROM (drom.c through popmon_drom_observe; docs/drom.md): 1 once the
	 * process registered, and its own CPUs over time as LeWI's words
	 * above (kept whether or not LeWI is on). cpus_accounted: the CPUs
	 * its accounts are set against (popmon_cpus(): its largest OpenMP
	 * team and its MPI threads, as in the measurement), where cpus is
	 * the CPUs it holds now (DROM may have taken some); 0: an older
	 * library's file (cpus then). */
	int64_t drom_own_delta_ticks;
	uint64_t drom_own_since;
	uint32_t drom_on, drom_own_cpus, drom_own_now, cpus_accounted;
};

/* The live mapping (NULL without one): the header, and where thread
 * records and the region table live. */
extern struct popmon_live_header *popmon_live;

/* Whether dir is an existing folder of ours (or root's), not writable by
 * others: where live files may be written and read. */
int popmon_live_dir_ok(const char *dir);
/* Maps the live file when POPMON_LIVE_DIR is set. The layout given holds
 * the parts of the header's layout that the records' owners filled in
 * (popmon_regions_layout, popmon_accounts_layout, popmon_omp_layout: the
 * file knows those records only by their sizes and offsets; core.c gathers
 * them); the header's own part is added here. On a node
 * where that folder does not exist (not popmon run's) it creates it when the
 * session folder is visible, and the node's first process starts the node
 * agent (popmon agent, POPMON_BIN) that copies the node's live files into the
 * session folder. Returns 0 and leaves popmon_live NULL otherwise, or when
 * it cannot (one popmon: line). */
int popmon_live_open(const struct popmon_live_header *layout);
/* Thread record of slot, in the mapping (NULL without a live file). */
void *popmon_live_thread(int slot);
/* Reserves the file's pages of region slot idx before it is written: 0, or
 * -1 when the file system is full (the region is then not created). */
int popmon_live_reserve_region(int idx);
/* Reserves the file's pages of OpenMP construct slot idx before it is
 * written: 0 (also without a live file), or -1 when the file system is full. */
int popmon_live_reserve_construct(int idx);
/* Construct slot idx has been taken (its module is filled). */
void popmon_live_construct_added(int idx);
/* The region table in the mapping (NULL without a live file). */
void *popmon_live_regions(void);
/* The OpenMP construct table in the mapping (NULL without a live file):
 * start-up hands it to ompt.c (popmon_omp_place_table). */
void *popmon_live_constructs(void);
/* Records the process's state (and its tick). */
void popmon_live_state(uint32_t state, int32_t arg);
/* MPI_Init: the rank and size, fatal-signal recording. */
void popmon_live_mpi_init(int rank, int size, uint64_t init_tick);
/* Publishes counts that readers need (threads, regions, CPUs) and a fresh
 * calibration pair. Off the hot path. */
void popmon_live_publish(void);
/* The region table is about to change / has changed (under the region lock). */
void popmon_live_regions_begin(void);
void popmon_live_regions_end(void);

/* MPI_Abort (the generated wrappers, before PMPI_Abort): the live file records it. */
void popmon_mpi_abort_hook(int code);

#endif /* POPMON_LIVE_H */
