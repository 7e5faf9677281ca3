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

uint64_t popmon_stat_start_time(const char *stat)
{
	const char *p = strrchr(stat, ')');
	if (!p)
		return 0;
	/* Fields after the name: 3 (state) ... 22 (starttime). */
	int field = 2;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

uint64_t popmon_proc_start_time(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return popmon_stat_start_time(buf);
}

int popmon_cpulist_parse(const char *s, cpu_set_t *mask)
{
	CPU_ZERO(mask);
	if (!s || !*s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'b' || s[1] == 'B')) {
		int hex = s[1] == 'x' || s[1] == 'X', bits = hex ? 4 : 1;
		size_t n = strlen(s + 2);
		if (n == 0)
			return -1;
		int cpu = 0;
		for (size_t i = n; i-- > 0;) {
			int c = (unsigned char)s[2 + i], v;
			if (c >= '0' && c <= '9')
				v = c - '0';
			else if (hex && c >= 'a' && c <= 'f')
				v = c - 'a' + 10;
			else if (hex && c >= 'A' && c <= 'F')
				v = c - 'A' + 10;
			else
				return -1;
			if (!hex && v > 1)
				return -1;
			for (int b = 0; b < bits; b++, cpu++)
				if ((v >> b) & 1) {
					if (cpu >= CPU_SETSIZE)
						return -1;
					CPU_SET(cpu, mask);
				}
		}
		return 0;
	}
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p || a < 0)
			return -1;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		if (b >= CPU_SETSIZE)
			return -1;
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, mask);
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return 0;
}

/* The contents of file root/rel (at most n-1 bytes, NUL-terminated): 0, or
 * -1 when it cannot be read. */
static int read_small(const char *root, const char *rel, char *buf, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s%s", root, rel);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t k = read(fd, buf, n - 1);
	close(fd);
	if (k <= 0)
		return -1;
	buf[k] = '\0';
	return 0;
}

int popmon_cpu_nodes(int *node, int n)
{
	const char *root = getenv("POPMON_SYSFS");
	if (!root || !*root)
		root = "/sys";
	for (int c = 0; c < n; c++)
		node[c] = -1;
	int got = 0;
	char buf[4096], rel[128];
	/* NUMA nodes (their numbers may have gaps): at most 1024 looked at,
	 * and none after 64 missing in a row. */
	for (int k = 0, misses = 0; k < 1024 && misses < 64; k++) {
		snprintf(rel, sizeof rel, "/devices/system/node/node%d/cpulist", k);
		cpu_set_t m;
		if (read_small(root, rel, buf, sizeof buf) != 0) {
			misses++;
			continue;
		}
		misses = 0;
		buf[strcspn(buf, "\n")] = '\0';
		if (popmon_cpulist_parse(buf, &m) != 0)
			continue;
		for (int c = 0; c < n && c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &m) && node[c] < 0) {
				node[c] = k;
				got++;
			}
	}
	if (got)
		return got;
	for (int c = 0; c < n; c++) {
		snprintf(rel, sizeof rel, "/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		char *end;
		if (read_small(root, rel, buf, sizeof buf) != 0)
			continue;
		long v = strtol(buf, &end, 10);
		if (end != buf && v >= 0 && v < 1 << 20) {
			node[c] = (int)v;
			got++;
		}
	}
	return got;
}
