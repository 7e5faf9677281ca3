/* process.c: the process's state, its rank and start-up (process.h). Bottom
 * layer: calls nothing above it; the start-up itself is core.c's, reached
 * through the hooks it places (POPMON_STARTUP). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "base/process.h"

struct popmon_process popmon_proc;

/* ------------------------------------------------------------------ start-up */

/* The hooks of the start-up layer (POPMON_STARTUP): the linker's bounds of
 * the section, NULL when no object defines one. Referenced as hidden, they
 * bind inside libpopmon; the linker still lists them in its dynamic symbol
 * table (GNU ld and lld give section bounds default visibility unless told
 * -z start-stop-visibility=hidden, which older linkers do not know). */
extern const struct popmon_startup __start_popmon_startup[] __attribute__((weak, visibility("hidden")));
extern const struct popmon_startup __stop_popmon_startup[] __attribute__((weak, visibility("hidden")));

const struct popmon_startup *popmon_startup_hooks(void)
{
	static const struct popmon_startup none;
	const struct popmon_startup *first = __start_popmon_startup, *end = __stop_popmon_startup;
	if (first && end > first)
		return first;
	return &none;
}

/* Start-up: 0 before, 1 while the calling thread runs it, 2 after. */
static int init_state;
/* The affinity mask's CPUs at start-up (0: not read). */
static int affinity_at_start;
static int read_affinity(void);

void popmon_ensure_init(void)
{
	if (__builtin_expect(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2, 1))
		return; /* one load on the region API's path, no locked instruction */
	int expect = 0;
	if (!__atomic_compare_exchange_n(&init_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return; /* done, or running (on this thread: a call from start-up itself) */
	/* Before an OpenMP runtime binds the initial thread to one place
	 * (OMP_PROC_BIND): the CPUs the process may run on. */
	affinity_at_start = read_affinity();
	const struct popmon_startup *h = popmon_startup_hooks();
	if (h->init)
		h->init();
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
}

int popmon_started(void)
{
	return __atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2;
}

int popmon_env_true(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	if (popmon_env_rank(NULL) < 0) {
		/* Not a rank: a launcher (or its proxy) has the job's environment
		 * too, and the ranks say what is wrong with the value, once. */
		return strcmp(v, "0") != 0 && strcmp(v, "no") != 0 && strcmp(v, "off") != 0 && strcmp(v, "false") != 0;
	}
	return popmon_env_switch(name, 0, 1); /* another word: true, as always, with one line */
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
	if (popmon_env_true("POPMON_DISABLE"))
		return;
	popmon_proc.inert = 0;
	const struct popmon_startup *h = popmon_startup_hooks();
	if (h->wake)
		h->wake();
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

int popmon_affinity_cpus(void)
{
	return affinity_at_start > 0 ? affinity_at_start : read_affinity();
}

static int read_affinity(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 0;
	return CPU_COUNT(&set);
}

uint64_t popmon_process_start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The name (field 2) may hold spaces and parentheses: fields 3 ... 22
	 * (starttime) follow its last ')'. */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	int field = 2;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}
