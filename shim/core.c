/* core.c: start-up and exit of the process, its roles (inert, dormant), and
 * the calls into the subsystems. The top of the library (below only the MPI
 * path, mpi/): the bottom layer (base/: clock, warnings, process, thread
 * table) reaches it only through the hooks placed here (POPMON_STARTUP). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/dlbargs.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "core.h"
#include "counters.h"
#include "dispatch.h"
#include "drom.h"
#include "gpu.h"
#include "gpu_mode.h"
#include "gpu_backends.h"
#include "intercept.h"
#include "lewi.h"
#include "live.h"
#include "gomp.h"
#include "ompt.h"
#include "output.h"
#include "regions.h"

/* ------------------------------------------------------------------ threads */

/* The thread-exit key: an MPI thread's slot becomes vacant (thread_gone). */
static pthread_key_t exit_key;
static int have_exit_key;

/* The live file, its layout gathered from the owners of the records it
 * holds (live.h), and the OpenMP construct table moved into it. */
static void open_live(void)
{
	struct popmon_live_header layout;
	memset(&layout, 0, sizeof layout);
	popmon_regions_layout(&layout);
	popmon_accounts_layout(&layout);
	popmon_omp_layout(&layout);
	if (popmon_live_open(&layout)) {
		popmon_omp_place_table(popmon_live_constructs());
		POPMON_STORE(popmon_live->affinity_cpus, (uint32_t)popmon_affinity_cpus());
		popmon_lewi_observe(&(struct popmon_lewi_words){
			.on = &popmon_live->lewi_on, .lent = &popmon_live->lewi_lent_ticks,
			.lent_caller = &popmon_live->lewi_lent_caller_ticks, .borrowed = &popmon_live->lewi_borrowed_ticks,
			.own = {&popmon_live->lewi_own_cpus, &popmon_live->lewi_own_now, &popmon_live->lewi_own_since,
				&popmon_live->lewi_own_delta_ticks}});
		popmon_drom_observe(&(struct popmon_drom_words){
			.on = &popmon_live->drom_on,
			.own = {&popmon_live->drom_own_cpus, &popmon_live->drom_own_now, &popmon_live->drom_own_since,
				&popmon_live->drom_own_delta_ticks}});
	}
}

/* A thread that is neither the primary nor an OpenMP thread calls MPI for
 * the first time: it becomes a CPU of the process from its birth (or from
 * now, for a thread the library did not see start). It takes over a vacant
 * slot whose vacancy began before it was born, else a new slot, which adds
 * a CPU to the process. Off the hot path: once per thread. */
static struct popmon_thread *adopt_mpi_thread(void)
{
	uint64_t now = popmon_now();
	uint64_t birth_tick = popmon_thread_birth();
	uint64_t birth = birth_tick && popmon_delta(birth_tick, now) > 0 ? birth_tick : now;
	popmon_threads_lock();
	struct popmon_thread *t = popmon_thread_take_vacant_locked(birth);
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
	} else if ((t = popmon_thread_alloc(POPMON_THR_MPI, POPMON_ST_USEFUL, birth)) != NULL) {
		popmon_regions_adopt_locked(t, birth, 1);
		popmon_thread_publish(t);
		if (have_exit_key)
			pthread_setspecific(exit_key, t);
		popmon_mpi_threads_add();
		popmon_live_publish();
	}
	popmon_regions_unlock();
	popmon_threads_unlock();
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
	popmon_thread_vacate(t);
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
	 * accounts are a copy of the parent's. An exec starts afresh. Inert,
	 * the child writes no measurement and no live file (the parent's live
	 * mapping, with the region table, is not even inherited:
	 * MADV_DONTFORK), and never takes the library's locks (every entry
	 * point checks inert first), so a lock another thread of the parent
	 * held at the fork (a region's, the thread table's) cannot block it:
	 * its region calls, queries and MPI calls pass straight through. */
	popmon_proc.inert = 1;
	popmon_proc.dormant = 0;
	popmon_counters_atfork_child();
}

static void init_process(void);
static void start_measuring(void);

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
		popmon_gpu_backends_probe();
		return;
	}
	if (getenv("POPMON_COUNTERS_PROBE")) { /* popmon doctor: what hardware counters the library finds */
		popmon_proc.inert = 1;
		popmon_counters_probe();
		return;
	}
	if (getenv("POPMON_DLB_HELP")) { /* bin/dlb -h, -hh of popmon dlb-home's prefix */
		popmon_proc.inert = 1;
		popmon_dlb_help(stdout, getenv("POPMON_DLB_HELP")[0] == '2' ? 2 : 1);
		fflush(stdout);
		return;
	}
	if (getenv("POPMON_DLB_AFFINITY")) { /* bin/dlb -l, --affinity */
		popmon_proc.inert = 1;
		popmon_dlb_affinity(stdout);
		fflush(stdout);
		return;
	}
	if (popmon_env_true("POPMON_DISABLE")) {
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
	/* DLB_ARGS (docs/coming-from-dlb.md). Loaded as DLB (libdlb*.so of
	 * popmon dlb-home's prefix), the library measures as DLB does: only
	 * with --talp, unless popmon run or popmon exec asks. */
	popmon_dlb_args_parse();
	const char *session = getenv("POPMON_SESSION"), *exec_pid = getenv("POPMON_PID");
	if (!popmon_dlb.talp && popmon_dlb_loaded_as() && !(session && *session) && !(exec_pid && *exec_pid)) {
		popmon_drom_start(); /* DLB_ARGS=--drom alone: DROM through DLB_PollDROM */
		popmon_proc.inert = 1;
		return;
	}
	start_measuring();
}

/* A dormant process woke (popmon_wake, process.c): measured from now on,
 * unless POPMON_DISABLE says otherwise. */
static void wake(void)
{
	if (popmon_env_true("POPMON_DISABLE"))
		return;
	popmon_proc.inert = 0;
	start_measuring();
}

POPMON_STARTUP(startup, {.init = init_process, .wake = wake, .adopt = adopt_mpi_thread});

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
	popmon_clock_start(getenv("POPMON_CLOCK"));
	static int atfork_set;
	if (!atfork_set++)
		pthread_atfork(NULL, NULL, atfork_child);
	open_live();
	popmon_threads_store(popmon_live_thread, popmon_live_publish);
	have_exit_key = pthread_key_create(&exit_key, thread_gone) == 0;
	if (popmon_regions_init(popmon_omp_position) != 0) {
		popmon_proc.inert = 1;
		return;
	}
	struct popmon_thread *primary = popmon_thread_new(POPMON_THR_PRIMARY, POPMON_ST_USEFUL);
	if (!primary) {
		popmon_proc.inert = 1;
		return;
	}
	popmon_counters_init(primary);
	popmon_gomp_probe();
	popmon_drom_start(); /* DLB_ARGS=--drom, popmon run --drom */
	/* Without MPI the Global region spans the whole process; MPI_Init
	 * restarts it. */
	popmon_regions_restart_global(popmon_now());
}

__attribute__((destructor)) static void popmon_fini(void)
{
	popmon_drom_stop();
	if (popmon_proc.inert || popmon_proc.finalized)
		return;
	if (popmon_proc.mpi_initialized) {
		popmon_proc.finalized = 1;
		popmon_live_state(POPMON_LIVE_NO_FINALIZE, 0);
		if (popmon_gpu_mode() == 2 && !popmon_gpu_active) /* --gpu on says why, here too */
			popmon_run_gpu(POPMON_GPU_WINDOW_EXIT);
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
