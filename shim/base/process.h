/* process.h: the process's state and its start-up (process.c), the bottom
 * layer: what the process is (inert, dormant, its rank), starting it up once,
 * and waking a dormant one. The start-up itself (roles, then every
 * subsystem) belongs to core.c, above every subsystem: the bottom layer
 * reaches it through the hooks core.c places with POPMON_STARTUP, without
 * naming it. */
#ifndef POPMON_PROCESS_H
#define POPMON_PROCESS_H

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

#include <stdint.h>

/* Process state shared by the library's files. */
struct popmon_process {
	int inert;            /* launcher/shell or forked child: measure nothing */
	int dormant;          /* inert by its name only (POPMON_DORMANT_*): see popmon_wake */
	int mpi_initialized;  /* popmon_mpi_init_hook ran */
	uint64_t init_tick;   /* MPI_Init returned (Global started) */
	uint64_t fin_tick;    /* MPI_Finalize entered (Global ended) */
	int finalized;        /* the measurement was written (or given up) */
	int rank, size;       /* MPI_COMM_WORLD (0/1 without MPI) */
	int pid;
	uint64_t t0_tick;     /* calibration start */
	uint64_t t0_ns;       /* CLOCK_MONOTONIC at t0_tick */
	uint64_t epoch_ns;    /* CLOCK_REALTIME at t0_tick */
};
extern struct popmon_process popmon_proc;

struct popmon_thread;

/* What the start-up layer gives the bottom layer: placed by POPMON_STARTUP
 * in the section popmon_startup, whose bounds the linker defines
 * (__start_popmon_startup, __stop_popmon_startup). The pointers are there
 * before any constructor runs, as they must be: an MPI call or a region
 * from another library's constructor may come before libpopmon's own. A
 * program without them (the C unit tests) starts nothing. */
struct popmon_startup {
	void (*init)(void);                  /* starts the process up (popmon_ensure_init) */
	void (*wake)(void);                  /* measures a dormant process from now on (popmon_wake) */
	struct popmon_thread *(*adopt)(void); /* the calling thread's first MPI call (popmon_thread_slow) */
};
#define POPMON_STARTUP(name, ...)                                                                 \
	static const struct popmon_startup name                                                    \
		__attribute__((used, section("popmon_startup"), aligned(sizeof(void *)))) = __VA_ARGS__

/* Starts the library up once (the constructor, or the first MPI call when
 * that comes first); a no-op afterwards and while start-up runs. */
void popmon_ensure_init(void);
/* Whether start-up has completed (popmon_ensure_init returned on some
 * thread). */
int popmon_started(void);
/* The start-up layer's hooks (a table of NULLs when there is none). */
const struct popmon_startup *popmon_startup_hooks(void);

/* A process inert by its name only does what only the application does:
 * it is measured from now on. A launcher's name (mpirun, orted, srun, ...)
 * wakes only by MPI_Init (POPMON_WAKE_MPI); a shell's or a utility's also by
 * GPU work or an OpenMP runtime's tool start (POPMON_WAKE_COMPUTE). A no-op
 * otherwise. */
enum { POPMON_DORMANT_LAUNCHER = 1, POPMON_DORMANT_UTILITY = 2 };
enum { POPMON_WAKE_MPI = 1, POPMON_WAKE_COMPUTE = 2 };
void popmon_wake(int by);

/* The MPI rank the launcher's environment gives this process (before
 * MPI_Init too), or -1 when it names none; *size receives the job's size
 * (or 0). */
int popmon_env_rank(int *size);
/* Whether this process prints its warnings: rank 0 (or not an MPI rank);
 * the others' reach the measurement file through rank 0 at finalize. */
int popmon_warns_aloud(void);
/* The hardware CPUs of this process's affinity mask at start-up (before an
 * OpenMP runtime binds the initial thread; 0 when unknown): the bound of
 * the CPUs its threads can run on, which DLB counts as numCpus. */
int popmon_affinity_cpus(void);
/* The start time of process pid (/proc/PID/stat field 22, clock ticks since
 * boot), 0 unknown: with the pid, it names the process even after the pid
 * is reused (the live file's header, LeWI's registry). */
uint64_t popmon_proc_start_time(int pid);
/* The same field of the text of a /proc/PID/stat file (NUL-terminated),
 * 0 when it has none. */
uint64_t popmon_stat_start_time(const char *stat);

/* Parses a CPU list as DLB and the kernel write them ("0,5-7", and DLB's
 * "0xE1", "0b11100001") into mask; 0, or -1 when it is not one. */
int popmon_cpulist_parse(const char *s, cpu_set_t *mask);
/* The NUMA node of each of CPUs 0..n-1 into node[] (-1 unknown), from
 * /sys/devices/system/node/nodeN/cpulist, else each CPU's package
 * (topology/physical_package_id); POPMON_SYSFS replaces /sys (a test's
 * fake tree). Returns how many CPUs got a node. */
int popmon_cpu_nodes(int *node, int n);

#endif /* POPMON_PROCESS_H */
