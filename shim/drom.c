/* drom.c: DLB's DROM (drom.h) on the node's process-mask registry
 * (drom_shm.c). The semantics and codes are DLB 3.7's
 * (src/apis/DLB_interface_drom.c over src/LB_comm/shmem_procinfo.c) in
 * polling mode: a tool sets a process's new mask, the process adopts it at
 * its next parallel region or DLB_PollDROM. No CPU sharing mode (DLB's
 * allow_cpu_sharing), no Slurm freeing (DLB_FREE_CPUS_SLURM is ignored),
 * and DROM does not move LeWI's registry: with both on, the LeWI registry
 * keeps the CPUs the process had at its start. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/dlbargs.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "drom.h"
#include "drom_shm.h"
#include "lewi.h"
#include "lewi_shm.h"

static struct {
	_Atomic int ready; /* registered (0 again in a child of fork) */
	int slot;
	_Atomic uint64_t seen; /* the slot's seq last looked at */
	int admin;     /* DLB_DROM_Attach'ed */
	int changes;   /* masks adopted */
} D;

/* Its own CPUs over time (popmon_drom_own, adopted masks), once it
 * registered (own_measured). */
static struct popmon_own_cpus own;
static int own_measured;

static struct popmon_drom_words obs;

/* Its own CPUs to the observer's words (relaxed stores: a reader of a
 * process killed between two of them is off by one change at most). */
static void publish_own(void)
{
	if (obs.on == NULL || !own_measured)
		return;
	popmon_own_publish(&own, &obs.own);
	POPMON_STORE(*obs.on, 1);
}

void popmon_drom_observe(const struct popmon_drom_words *w)
{
	struct popmon_drom_words none = {0};
	if (!w || !w->on || !popmon_own_words_ok(&w->own))
		w = &none;
	obs = *w;
	publish_own();
}

/* Has n CPUs from now. */
static void own_now(int n)
{
	popmon_own_set(&own, n);
	publish_own();
}

int popmon_drom_own(int *own_cpus, int64_t *delta)
{
	if (!own_measured)
		return 0;
	*own_cpus = own.n0;
	*delta = popmon_own_delta(&own, popmon_now());
	return 1;
}

static pthread_mutex_t apply_lock = PTHREAD_MUTEX_INITIALIZER;
/* DLB's set_process_mask callback (DLB_CallbackSet), dlb_compat.c's. */
static void (*_Atomic mask_hook)(const cpu_set_t *);

void popmon_drom_mask_hook(void (*fn)(const cpu_set_t *))
{
	atomic_store(&mask_hook, fn);
}
static int atfork_set;

static void drom_forked(void)
{
	atomic_store(&D.ready, 0);
}

int popmon_drom_enabled(void)
{
	popmon_dlb_args_parse();
	return popmon_dlb.drom || popmon_env_switch("POPMON_DROM", 0, 0);
}

static const char *key(void)
{
	const char *k = getenv("POPMON_DROM_KEY");
	if (k && *k)
		return k;
	popmon_dlb_args_parse();
	return popmon_dlb.shm_key;
}

static int attach(void)
{
	char why[512];
	int r = popmon_drom_shm_attach(key(), why, sizeof why);
	if (r != POPMON_DLB_SUCCESS)
		popmon_warn_once("drom", "%s; DROM is off", why);
	return r;
}

/* The process adopts mask: every thread's affinity, the OpenMP team size
 * of its next regions (the calling thread's ICV: the primary's), its own
 * CPUs in LeWI's registry when LeWI is on (whose teams are its own busy
 * CPUs and borrowed ones), the live file's CPUs, one note in the
 * measurement. */
static void adopt(const cpu_set_t *mask)
{
	int n = CPU_COUNT(mask);
	if (n < 1)
		return; /* no CPU left: keep running where it runs */
	pthread_mutex_lock(&apply_lock);
	DIR *d = opendir("/proc/self/task");
	if (d) {
		for (struct dirent *e; (e = readdir(d));)
			if (isdigit((unsigned char)e->d_name[0]))
				sched_setaffinity((pid_t)atoi(e->d_name), sizeof *mask, mask);
		closedir(d);
	} else
		sched_setaffinity(0, sizeof *mask, mask);
	void (*set_threads)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
	if (set_threads)
		set_threads(n);
	popmon_lewi_update_mask(mask);
	if (own_measured)
		own_now(n);
	int first = D.changes++ == 0;
	pthread_mutex_unlock(&apply_lock);
	popmon_cpus_hold(n);
	if (first) {
		double s = (double)(popmon_monotonic_ns() - popmon_proc.t0_ns) / 1e9;
		popmon_warn_once("drom-changed",
				 "DROM changed this process's CPUs during the run (first at %.1f s, to %d CPU%s); "
				 "popmon top shows the CPUs it holds, the measurement counts its largest OpenMP team",
				 s < 0 ? 0.0 : s, n, n == 1 ? "" : "s");
	}
}

void popmon_drom_start(void)
{
	if (atomic_load(&D.ready) || !popmon_drom_enabled())
		return;
	if (attach() != POPMON_DLB_SUCCESS)
		return;
	cpu_set_t own_mask, now;
	if (sched_getaffinity(0, sizeof own_mask, &own_mask) != 0) {
		popmon_warn_once("drom", "cannot read this process's CPUs; DROM is off");
		return;
	}
	int slot = 0;
	const char *pre = getenv("POPMON_DROM_PREINIT_PID"); /* popmon taskset -c LIST -- cmd */
	pid_t preinit_pid = pre ? (pid_t)atoi(pre) : 0;
	int r = popmon_drom_shm_register(getpid(), preinit_pid, &own_mask, 0, POPMON_DROM_FLAGS_NONE, &slot, &now);
	if (r == POPMON_DLB_ERR_PERM) {
		/* A program its parent started (system(), a helper) on the
		 * parent's CPUs: the parent keeps them, quietly. */
		int c = 0;
		while (c < CPU_SETSIZE && !(CPU_ISSET(c, &own_mask) && popmon_drom_shm_owner(c)))
			c++;
		if (c < CPU_SETSIZE && popmon_drom_shm_owner(c) == getppid())
			return;
	}
	if (r < 0) {
		popmon_warn_once("drom", "%s; DROM is off in process %d",
				 r == POPMON_DLB_ERR_PERM    ? "some of this process's CPUs are another process's in the DROM registry"
				 : r == POPMON_DLB_ERR_NOMEM ? "the DROM registry has no free process slot"
				 : r == POPMON_DLB_ERR_INIT  ? "this process is registered in the DROM registry already"
							     : "the DROM registry is not available",
				 (int)getpid());
		return;
	}
	D.slot = slot;
	atomic_store(&D.seen, 0);
	D.changes = 0;
	popmon_own_start(&own, CPU_COUNT(&own_mask));
	own_measured = 1;
	publish_own();
	if (!atfork_set) {
		atfork_set = 1;
		pthread_atfork(NULL, NULL, drom_forked);
	}
	atomic_store_explicit(&D.ready, 1, memory_order_release);
	if (r == POPMON_DLB_NOTED) /* preregistered with another mask */
		adopt(&now);
}

void popmon_drom_stop(void)
{
	if (!atomic_exchange(&D.ready, 0))
		return;
	popmon_drom_shm_unregister(D.slot, 0);
	if (own_measured)
		own_now(own.n0); /* no more CPU time counted against the registered CPUs */
}

/* One thread looks at a change (the one that moves seen on); the others
 * (concurrent parallel regions, DLB_PollDROM) see nothing new. */
static int poll_once(uint64_t seen, cpu_set_t *mask)
{
	uint64_t seq = popmon_drom_shm_seq(D.slot);
	if (seq == seen || !atomic_compare_exchange_strong(&D.seen, &seen, seq))
		return POPMON_DLB_NOUPDT;
	/* This thread owns the change up to seq (a later one moves seen on
	 * again and is looked at next time). */
	return popmon_drom_shm_poll(D.slot, &seen, mask);
}

void popmon_drom_parallel_begin(void)
{
	if (!atomic_load_explicit(&D.ready, memory_order_relaxed))
		return;
	uint64_t seen = atomic_load_explicit(&D.seen, memory_order_relaxed);
	if (popmon_drom_shm_seq(D.slot) == seen)
		return; /* the hot path: nothing new */
	cpu_set_t mask;
	if (poll_once(seen, &mask) == POPMON_DLB_SUCCESS)
		adopt(&mask);
}

/* ---------------------------------------------------------------- process side */

int popmon_drom_poll(int *ncpus, cpu_set_t *mask)
{
	if (!popmon_drom_enabled())
		return POPMON_DLB_ERR_NOCOMP;
	if (!atomic_load(&D.ready))
		return POPMON_DLB_ERR_NOINIT;
	cpu_set_t m;
	int r = poll_once(atomic_load(&D.seen), &m);
	if (r == POPMON_DLB_SUCCESS) {
		if (mask)
			*mask = m;
		if (ncpus)
			*ncpus = CPU_COUNT(&m);
	}
	return r;
}

int popmon_drom_poll_update(void)
{
	cpu_set_t m;
	int r = popmon_drom_poll(NULL, &m);
	if (r == POPMON_DLB_SUCCESS) {
		adopt(&m);
		void (*fn)(const cpu_set_t *) = atomic_load(&mask_hook);
		if (fn)
			fn(&m); /* as DLB's poll_drom_update: the program's own callback */
	}
	return r;
}

/* ---------------------------------------------------------------- administrator */

int popmon_drom_attach(void)
{
	int r = attach();
	if (r == POPMON_DLB_SUCCESS)
		D.admin = 1;
	return r;
}

int popmon_drom_detach(void)
{
	/* The mapping stays (the process may be registered); DLB's codes. */
	if (!D.admin && !atomic_load(&D.ready))
		return POPMON_DLB_ERR_NOSHMEM;
	D.admin = 0;
	return POPMON_DLB_SUCCESS;
}

static int attached(void)
{
	return popmon_drom_shm_attached() && (D.admin || atomic_load(&D.ready));
}

int popmon_drom_get_num_cpus(int *ncpus)
{
	if (ncpus)
		*ncpus = get_nprocs_conf();
	return POPMON_DLB_SUCCESS;
}

int popmon_drom_get_pid_list(int *pidlist, int *nelems, int max_len)
{
	if (nelems)
		*nelems = 0;
	if (!attached())
		return POPMON_DLB_ERR_NOSHMEM;
	if (!pidlist || !nelems || max_len <= 0)
		return POPMON_DLB_SUCCESS;
	pid_t tmp[POPMON_DROM_MAX_SLOTS];
	int n = popmon_drom_shm_pids(tmp, max_len < POPMON_DROM_MAX_SLOTS ? max_len : POPMON_DROM_MAX_SLOTS);
	for (int i = 0; i < n; i++)
		pidlist[i] = (int)tmp[i];
	*nelems = n;
	return POPMON_DLB_SUCCESS;
}

static int self_pid(int pid)
{
	return atomic_load(&D.ready) && (pid == 0 || pid == (int)getpid());
}

/* The slot of pid (0: this process), after attaching for the call when
 * needed as DLB does: DLB_ERR_NOPROC when it has none. */
static int target(int pid, int *slot)
{
	if (self_pid(pid)) {
		*slot = D.slot;
		return POPMON_DLB_SUCCESS;
	}
	if (pid == 0)
		return POPMON_DLB_ERR_NOPROC;
	if (!popmon_drom_shm_attached() && attach() != POPMON_DLB_SUCCESS)
		return POPMON_DLB_ERR_NOSHMEM;
	*slot = popmon_drom_shm_find((pid_t)pid);
	return *slot ? POPMON_DLB_SUCCESS : POPMON_DLB_ERR_NOPROC;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};
	nanosleep(&ts, NULL);
}

int popmon_drom_get_process_mask(int pid, cpu_set_t *mask, int flags)
{
	if (!mask)
		return POPMON_DLB_ERR_UNKNOWN;
	if (pid == 0 && !atomic_load(&D.ready))
		return POPMON_DLB_ERR_NOPROC;
	if (self_pid(pid)) {
		cpu_set_t cur;
		if (poll_once(atomic_load(&D.seen), mask) == POPMON_DLB_SUCCESS)
			return POPMON_DLB_NOTED; /* the new one, now current */
		popmon_drom_shm_masks(D.slot, mask, &cur);
		return POPMON_DLB_SUCCESS;
	}
	int slot = 0, r = target(pid, &slot);
	if (r != POPMON_DLB_SUCCESS)
		return r;
	cpu_set_t cur;
	/* As DLB: 10 ms polls, 1 s timeout. */
	for (int waited = 0;; waited += 10) {
		int dirty = popmon_drom_shm_masks(slot, &cur, mask);
		if (!dirty) {
			*mask = cur;
			return POPMON_DLB_SUCCESS;
		}
		if (!(flags & POPMON_DROM_SYNC_QUERY))
			return POPMON_DLB_SUCCESS; /* the future mask */
		if (waited >= 1000)
			return POPMON_DLB_ERR_TIMEOUT;
		sleep_ms(10);
		if (popmon_drom_shm_pid(slot, NULL) != (pid_t)pid)
			return POPMON_DLB_ERR_NOPROC;
	}
}

int popmon_drom_set_process_mask(int pid, const cpu_set_t *mask, int flags)
{
	if (!mask)
		return POPMON_DLB_ERR_UNKNOWN;
	int slot = 0, r = target(pid, &slot);
	if (r != POPMON_DLB_SUCCESS)
		return r;
	r = popmon_drom_shm_set(slot, mask, self_pid(pid));
	if (r != POPMON_DLB_SUCCESS)
		return r;
	if (self_pid(pid)) {
		if (!(flags & POPMON_DROM_NO_SYNC))
			popmon_drom_poll_update();
		return POPMON_DLB_SUCCESS;
	}
	if (flags & POPMON_DROM_SYNC_QUERY)
		for (int waited = 0;; waited += 10) {
			cpu_set_t cur, fut;
			if (popmon_drom_shm_pid(slot, NULL) != (pid_t)pid)
				return POPMON_DLB_ERR_NOPROC;
			if (!popmon_drom_shm_masks(slot, &cur, &fut))
				break;
			if (waited >= 1000)
				return POPMON_DLB_ERR_TIMEOUT;
			sleep_ms(10);
		}
	return POPMON_DLB_SUCCESS;
}

int popmon_drom_parse_mask(const char *s, cpu_set_t *mask)
{
	return popmon_cpulist_parse(s, mask);
}

int popmon_drom_set_process_mask_str(int pid, const char *mask, int flags)
{
	cpu_set_t m;
	if (popmon_drom_parse_mask(mask, &m) != 0)
		return POPMON_DLB_ERR_UNKNOWN;
	return popmon_drom_set_process_mask(pid, &m, flags);
}

/* DLB's dlb_setenv on an environment array (NULL: the process's own):
 * append adds value to an existing entry (space-separated), else sets it;
 * only_existing changes an entry only when there is one. */
static void env_put(char ***envp, const char *name, const char *value, int append, int only_existing)
{
	if (!envp) {
		const char *old = getenv(name);
		if (only_existing && !old)
			return;
		if (append && old && *old) {
			char buf[4096];
			snprintf(buf, sizeof buf, "%s %s", old, value);
			setenv(name, buf, 1);
		} else
			setenv(name, value, 1);
		return;
	}
	size_t nl = strlen(name), n = 0;
	char **env = *envp;
	for (; env && env[n]; n++)
		if (strncmp(env[n], name, nl) == 0 && env[n][nl] == '=') {
			size_t len = strlen(env[n]) + strlen(value) + nl + 3;
			char *e = malloc(len);
			if (!e)
				return;
			if (append && env[n][nl + 1])
				snprintf(e, len, "%s %s", env[n], value);
			else
				snprintf(e, len, "%s=%s", name, value);
			env[n] = e; /* the old string is the caller's: left alone */
			return;
		}
	if (only_existing)
		return;
	char **ne = realloc(env, (n + 2) * sizeof *ne);
	size_t len = nl + strlen(value) + 2;
	char *e = malloc(len);
	if (!ne || !e) {
		free(e);
		if (ne)
			*envp = ne;
		return;
	}
	snprintf(e, len, "%s=%s", name, value);
	ne[n] = e;
	ne[n + 1] = NULL;
	*envp = ne;
}

int popmon_drom_preinit(int pid, const cpu_set_t *mask, int flags, char ***next_environ)
{
	if (!mask || pid <= 0)
		return POPMON_DLB_ERR_UNKNOWN;
	if (!popmon_drom_shm_attached() && attach() != POPMON_DLB_SUCCESS)
		return POPMON_DLB_ERR_NOSHMEM;
	/* The process to be started registers into the slot: DROM on there. */
	env_put(next_environ, "POPMON_DROM", "1", 0, 0);
	int n = CPU_COUNT(mask);
	if (n > 0) {
		char v[16];
		snprintf(v, sizeof v, "%d", n);
		env_put(next_environ, "OMP_NUM_THREADS", v, 0, 1);
	}
	int slot = 0;
	cpu_set_t out;
	return popmon_drom_shm_register((pid_t)pid, 0, mask, 1, flags, &slot, &out);
}

int popmon_drom_post_finalize(int pid, int flags)
{
	if (!popmon_drom_shm_attached() && attach() != POPMON_DLB_SUCCESS)
		return POPMON_DLB_ERR_NOSHMEM;
	int slot = popmon_drom_shm_find((pid_t)pid);
	if (!slot)
		return POPMON_DLB_ERR_NOPROC;
	popmon_drom_shm_unregister(slot, (flags & POPMON_DROM_RETURN_STOLEN_FLAG) != 0);
	return POPMON_DLB_SUCCESS;
}

int popmon_drom_recover_stolen_cpus(int pid)
{
	if (!popmon_drom_shm_attached() && attach() != POPMON_DLB_SUCCESS)
		return POPMON_DLB_ERR_NOSHMEM;
	int slot = self_pid(pid) ? D.slot : popmon_drom_shm_find((pid_t)pid);
	if (!slot)
		return POPMON_DLB_ERR_NOPROC;
	return popmon_drom_shm_recover(slot);
}
