/* live.c: the live file (live.h): a process's accounts in a MAP_SHARED
 * file of node-local storage, readable while it runs and after it died.
 *
 * Nothing here runs on the hot path: the thread records and the region
 * table are placed in the mapping once, at start-up, and written as before.
 * The header records how the process ended, as far as the process itself
 * can: MPI_Abort, a fatal signal with its default action (a chained handler
 * that only stores a word and re-raises), an exit without MPI_Finalize. A
 * SIGKILL leaves no trace: the reader infers it. On the nodes other than
 * popmon run's, the first process starts the node agent, which copies the
 * files into the session folder (start_agent).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "counters.h"
#include "live.h"

struct popmon_live_header *popmon_live;
static char *live_base;
static size_t live_len;
static int live_fd = -1; /* kept open to reserve pages as slots are taken */

/* The MPI functions' names (mpi_wrappers.c; absent from a build without MPI). */
extern const char *const popmon_fn_names[POPMON_FN_COUNT] __attribute__((weak));
extern const unsigned short popmon_dfn_fn[POPMON_DFN_COUNT] __attribute__((weak));

/* The header page's last 64 bytes stay zero: a node copy's copy record
 * (docs/live-format.md, "Node copies"). */
_Static_assert(sizeof(struct popmon_live_header) <= POPMON_LIVE_HEADER - 64, "live header too large");
_Static_assert(POPMON_DFN_COUNT <= POPMON_LIVE_DFN, "more calls with bytes than the live header holds");

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* A folder path is usable when it is an existing folder of ours, not
 * writable by others (popmon run creates it 0700). */
int popmon_live_dir_ok(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (st.st_uid != getuid() && st.st_uid != 0)
		return 0;
	return (st.st_mode & 0022) == 0;
}

static void publish_counters(struct popmon_live_header *h);

/* The header's own part of the layout: the thread records, the MPI
 * functions, the counters. The region table's, the accounts' and the
 * OpenMP construct table's come filled in by their owners (live.h). */
static void fill_layout(struct popmon_live_header *h)
{
	h->nstates = POPMON_NSTATES;
	h->nextra = POPMON_NEXTRA;
	h->nfn = POPMON_FN_COUNT;
	h->nctr = POPMON_CTR_N;
	h->thread_size = (uint32_t)sizeof(struct popmon_thread);
	h->max_threads = POPMON_MAX_THREADS;
	h->th_seq = offsetof(struct popmon_thread, seq);
	h->th_last = offsetof(struct popmon_thread, last);
	h->th_state = offsetof(struct popmon_thread, state);
	h->th_accounted = offsetof(struct popmon_thread, accounted);
	h->th_rate = offsetof(struct popmon_thread, rate);
	h->th_slot = offsetof(struct popmon_thread, slot);
	h->th_kind = offsetof(struct popmon_thread, kind);
	h->th_acc = offsetof(struct popmon_thread, acc);
	h->th_extra = offsetof(struct popmon_thread, extra);
	h->th_mpi_calls = offsetof(struct popmon_thread, mpi_calls);
	h->th_fn_calls = offsetof(struct popmon_thread, fn_calls);
	h->th_fn_ticks = offsetof(struct popmon_thread, fn_ticks);
	h->th_ctr_acc = offsetof(struct popmon_thread, ctr) + offsetof(struct popmon_ctr_thread, acc);
	h->th_gpu_calls = offsetof(struct popmon_thread, gpu_calls);
	h->gpu_devices = POPMON_LIVE_GPU_DEVICES;
	/* Without MPI (no wrappers, no bytes) ndfn stays 0. */
	h->size_bins = POPMON_SIZE_BINS;
	h->th_d_bytes = offsetof(struct popmon_thread, d_bytes);
	h->th_d_hist = offsetof(struct popmon_thread, d_hist);
	if (popmon_dfn_fn) {
		h->ndfn = POPMON_DFN_COUNT;
		for (int d = 0; d < POPMON_DFN_COUNT; d++)
			h->dfn_fn[d] = popmon_dfn_fn[d];
	}
}

extern char **environ;

/* Creates the missing folders of path, each private (0700). */
static void make_private_path(const char *path)
{
	char p[PATH_MAX];
	int n = snprintf(p, sizeof p, "%s", path);
	if (n <= 0 || n >= (int)sizeof p)
		return;
	for (char *c = p + 1;; c++) {
		if (*c == '/' || *c == '\0') {
			char was = *c;
			*c = '\0';
			if (mkdir(p, 0700) != 0 && errno != EEXIST)
				return;
			*c = was;
			if (!was)
				return;
		}
	}
}

/* Starts the node's agent (popmon agent DIR SESSION, internal/session/agent.go),
 * which copies this node's live files into the session folder, unless
 * another process of this node holds the folder's lock (its agent runs).
 * The agent inherits the locked descriptor as its fd 3 and so holds the
 * lock while it runs. posix_spawn (no fork: this runs before MPI_Init,
 * but an MPI library may already be loaded), a session of its own, stdio
 * on /dev/null, no other descriptor of the application; the application
 * never waits for it. */
static void start_agent(const char *dir, const char *session, const char *bin)
{
	char lock[PATH_MAX];
	int n = snprintf(lock, sizeof lock, "%s/agent.lock", dir);
	if (n <= 0 || n >= (int)sizeof lock)
		return;
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd); /* the agent of this node runs */
		return;
	}
	if (fd <= 3) { /* fd 3 is the agent's; 0-2 become /dev/null */
		int f2 = fcntl(fd, F_DUPFD_CLOEXEC, 4);
		close(fd);
		if (f2 < 0)
			return;
		fd = f2;
	}
	size_t ne = 0;
	while (environ && environ[ne])
		ne++;
	char **envp = malloc((ne + 1) * sizeof *envp);
	if (!envp) {
		close(fd);
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < ne; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			envp[k++] = environ[i];
	envp[k] = NULL;
	char *argv[] = {(char *)bin, "agent", (char *)dir, (char *)session, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int err = posix_spawn_file_actions_init(&fa);
	if (err == 0) {
		err = posix_spawnattr_init(&attr);
		if (err != 0)
			posix_spawn_file_actions_destroy(&fa);
	}
	if (err == 0) {
		posix_spawn_file_actions_adddup2(&fa, fd, 3);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
		posix_spawn_file_actions_addclosefrom_np(&fa, 4);
#endif
		sigset_t none, def;
		sigemptyset(&none);
		sigemptyset(&def);
		int defaults[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2};
		for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
			sigaddset(&def, defaults[i]);
		short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
#ifdef POSIX_SPAWN_SETSID
		flags |= POSIX_SPAWN_SETSID;
#endif
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setsigdefault(&attr, &def);
		posix_spawnattr_setflags(&attr, flags);
		pid_t pid;
		err = posix_spawn(&pid, bin, &fa, &attr, argv, envp);
		posix_spawnattr_destroy(&attr);
		posix_spawn_file_actions_destroy(&fa);
	}
	free(envp);
	close(fd);
	if (err != 0)
		popmon_warn_once("agent", "cannot start the node agent %s (%s): this node's processes are lost if "
				 "the job is killed", bin, strerror(err));
}

/* On a node other than popmon run's the live folder does not exist: it is
 * created (private) when the session folder is visible here, and the node's
 * agent started, which copies the live files into the session folder.
 * Returns 1 when the folder is there now. */
static int node_dir(const char *dir)
{
	const char *session = getenv("POPMON_SESSION");
	const char *bin = getenv("POPMON_BIN");
	struct stat st;
	if (!session || session[0] != '/' || !bin || bin[0] != '/' || stat(session, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0; /* no shared session folder: no live file here (docs/library.md) */
	make_private_path(dir);
	char parent[PATH_MAX];
	int n = snprintf(parent, sizeof parent, "%s", dir);
	char *slash = n > 0 && n < (int)sizeof parent ? strrchr(parent, '/') : NULL;
	if (!slash || slash == parent || !popmon_live_dir_ok(dir))
		return 0;
	*slash = '\0';
	if (!popmon_live_dir_ok(parent))
		return 0;
	start_agent(dir, session, bin);
	return 1;
}

int popmon_live_open(const struct popmon_live_header *layout)
{
	const char *dir = getenv("POPMON_LIVE_DIR");
	if (!dir || !*dir)
		return 0;
	struct stat st;
	if (stat(dir, &st) != 0 && errno == ENOENT && !node_dir(dir))
		return 0; /* another node than popmon run's, without the session folder */
	if (!popmon_live_dir_ok(dir)) {
		popmon_warn_once("livedir", "the live folder %s is missing or not private: this process's "
				 "accounts are lost if it is killed", dir);
		return 0;
	}
	char host[64] = "";
	gethostname(host, sizeof host - 1);
	for (char *c = host; *c; c++)
		if (*c == '/')
			*c = '_';
	char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s/%s.%d.live", dir, host, popmon_proc.pid);
	if (n <= 0 || n >= (int)sizeof path)
		return 0;
	struct popmon_live_header proto = *layout;
	fill_layout(&proto);
	size_t threads = align_up((size_t)proto.thread_size * POPMON_MAX_THREADS, 4096);
	size_t regions = align_up((size_t)proto.region_size * proto.max_regions, 4096);
	size_t omp = align_up((size_t)proto.omp_size * proto.omp_max, 4096);
	size_t ompidx = align_up(sizeof(uint32_t) * proto.omp_max, 4096);
	size_t names = 0;
	const char *const *fn = popmon_fn_names;
	if (fn)
		for (int i = 0; i < POPMON_FN_COUNT; i++)
			names += strlen(fn[i]) + 1;
	size_t len = POPMON_LIVE_HEADER + threads + regions + omp + ompidx + align_up(names, 4096);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		popmon_warn_once("livedir", "cannot create the live file %s (%s): this process's accounts "
				 "are lost if it is killed", path, strerror(errno));
		return 0;
	}
	/* Sparse: untouched thread and region slots cost no memory. */
	if (ftruncate(fd, (off_t)len) != 0) {
		int e = errno;
		close(fd);
		unlink(path);
		popmon_warn_once("livedir", "cannot size the live file %s (%s): this process's accounts "
				 "are lost if it is killed", path, strerror(e));
		return 0;
	}
	/* The pages written now are reserved now: a store to a page of a full
	 * tmpfs would be a SIGBUS in the application. */
	size_t fixed = POPMON_LIVE_HEADER;
	int e = posix_fallocate(fd, 0, (off_t)fixed);
	if (e == 0)
		e = posix_fallocate(fd, (off_t)(POPMON_LIVE_HEADER + threads + regions + omp),
				    (off_t)(ompidx + align_up(names, 4096)));
	if (e != 0) {
		close(fd);
		unlink(path);
		popmon_warn_once("livedir", "no room for the live file in %s (%s): this process's accounts are "
				 "lost if it is killed", dir, strerror(e));
		return 0;
	}
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		close(fd);
	else
		live_fd = fd;
	if (p == MAP_FAILED) {
		unlink(path);
		popmon_warn_once("livedir", "cannot map the live file %s: this process's accounts are "
				 "lost if it is killed", path);
		return 0;
	}
	/* A forked child must not write into the parent's accounts. */
	madvise(p, len, MADV_DONTFORK);
	struct popmon_live_header *h = p;
	*h = proto;
	h->version = POPMON_LIVE_VERSION;
	h->header_size = POPMON_LIVE_HEADER;
	h->thread_off = POPMON_LIVE_HEADER;
	h->region_off = (uint32_t)(POPMON_LIVE_HEADER + threads);
	h->omp_off = (uint32_t)(POPMON_LIVE_HEADER + threads + regions);
	h->omp_index_off = (uint32_t)(POPMON_LIVE_HEADER + threads + regions + omp);
	h->names_off = (uint32_t)(POPMON_LIVE_HEADER + threads + regions + omp + ompidx);
	h->names_size = (uint32_t)names;
	for (size_t i = 0, at = 0; fn && i < POPMON_FN_COUNT; i++) {
		size_t k = strlen(fn[i]) + 1;
		memcpy((char *)p + h->names_off + at, fn[i], k);
		at += k;
	}
	int cfd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		ssize_t c = read(cfd, h->cmdline, sizeof h->cmdline - 1);
		h->cmdline_len = c > 0 ? (uint32_t)c : 0;
		close(cfd);
	}
	h->pid = popmon_proc.pid;
	h->rank = popmon_env_rank(&h->size);
	h->clock_tsc = popmon_clock_tsc;
	h->t0_tick = popmon_proc.t0_tick;
	h->t0_ns = popmon_proc.t0_ns;
	h->epoch_ns = popmon_proc.epoch_ns;
	h->cal_tick = popmon_proc.t0_tick;
	h->cal_ns = popmon_proc.t0_ns;
	h->start_time_ticks = popmon_proc_start_time(popmon_proc.pid);
	h->state = POPMON_LIVE_STARTING;
	h->cpus = 1;
	snprintf(h->hostname, sizeof h->hostname, "%s", host);
	ssize_t k = readlink("/proc/self/exe", h->exe, sizeof h->exe - 1);
	h->exe[k > 0 ? k : 0] = '\0';
	const char *s = getenv("POPMON_SESSION");
	snprintf(h->session, sizeof h->session, "%s", s ? s : "");
	live_base = p;
	live_len = len;
	publish_counters(h);
	/* The magic last: a reader takes the file only once it is set. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, POPMON_LIVE_MAGIC, sizeof h->magic);
	__atomic_store_n(&popmon_live, h, __ATOMIC_RELEASE);
	return 1;
}

/* Records the hardware counters' state: measured so far or why not. */
static void publish_counters(struct popmon_live_header *h)
{
	struct popmon_ctr_info ci;
	popmon_counters_info(&ci);
	POPMON_STORE(h->ctr_available, ci.available);
	snprintf(h->ctr_mode, sizeof h->ctr_mode, "%s", ci.mode ? ci.mode : "");
	snprintf(h->ctr_method, sizeof h->ctr_method, "%s", ci.method ? ci.method : "");
	snprintf(h->ctr_reason, sizeof h->ctr_reason, "%s", ci.reason ? ci.reason : "");
}

/* Reserves the file's pages of [off, off+n) (0), or says there is no room
 * (-1): the caller then keeps that record out of the file. */
static int reserve(size_t off, size_t n)
{
	if (live_fd < 0)
		return -1;
	return posix_fallocate(live_fd, (off_t)off, (off_t)n) == 0 ? 0 : -1;
}

void *popmon_live_thread(int slot)
{
	if (!popmon_live || slot < 0 || slot >= POPMON_MAX_THREADS)
		return NULL;
	size_t off = popmon_live->thread_off + (size_t)slot * popmon_live->thread_size;
	if (reserve(off, popmon_live->thread_size) != 0) {
		popmon_warn_once("liveroom", "no room left for the live file: threads started from now on "
				 "are lost if the process is killed");
		return NULL; /* on the heap: measured, but not in the file */
	}
	return live_base + off;
}

int popmon_live_reserve_region(int idx)
{
	if (!popmon_live)
		return 0;
	size_t off = popmon_live->region_off + (size_t)idx * popmon_live->region_size;
	return reserve(off, popmon_live->region_size);
}

int popmon_live_reserve_construct(int idx)
{
	if (!popmon_live)
		return 0;
	size_t off = popmon_live->omp_off + (size_t)idx * popmon_live->omp_size;
	return reserve(off, popmon_live->omp_size);
}

void popmon_live_construct_added(int idx)
{
	struct popmon_live_header *h = popmon_live;
	if (!h || idx < 0 || (uint32_t)idx >= h->omp_max)
		return;
	uint32_t k = __atomic_fetch_add(&h->omp_used, 1, __ATOMIC_ACQ_REL);
	if (k < h->omp_max)
		__atomic_store_n((uint32_t *)(live_base + h->omp_index_off) + k, (uint32_t)idx + 1, __ATOMIC_RELEASE);
}

void *popmon_live_regions(void)
{
	if (!popmon_live)
		return NULL;
	return live_base + popmon_live->region_off;
}

void *popmon_live_constructs(void)
{
	if (!popmon_live)
		return NULL;
	return live_base + popmon_live->omp_off;
}

void popmon_live_state(uint32_t state, int32_t arg)
{
	struct popmon_live_header *h = popmon_live;
	if (!h)
		return;
	uint32_t old = POPMON_LOAD(h->state);
	/* The first end wins: an MPI_Abort is not overwritten by the exit
	 * that follows it. */
	if (old >= POPMON_LIVE_FINALIZED && state != POPMON_LIVE_FINALIZED)
		return;
	POPMON_STORE(h->state_arg, arg);
	POPMON_STORE(h->state_tick, popmon_now());
	__atomic_store_n(&h->state, state, __ATOMIC_RELEASE);
}

void popmon_live_publish(void)
{
	struct popmon_live_header *h = popmon_live;
	if (!h)
		return;
	POPMON_STORE(h->nthreads, (uint32_t)popmon_thread_count());
	POPMON_STORE(h->cpus, (uint32_t)popmon_cpus_now());
	POPMON_STORE(h->cpus_accounted, (uint32_t)popmon_cpus());
	publish_counters(h);
	/* The pair is written tick first; a reader takes two reads that agree. */
	POPMON_STORE(h->cal_tick, popmon_now());
	POPMON_STORE(h->cal_ns, popmon_monotonic_ns());
}

void popmon_live_regions_begin(void)
{
	if (popmon_live) {
		POPMON_STORE(popmon_live->regions_seq, popmon_live->regions_seq + 1);
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
}

void popmon_live_regions_end(void)
{
	if (popmon_live)
		__atomic_store_n(&popmon_live->regions_seq, popmon_live->regions_seq + 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ signals */

/* Fatal signals whose arrival is recorded: a crash, or a termination that
 * the launcher or the batch system sent. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM,
				    SIGINT, SIGHUP, SIGQUIT, SIGXCPU};
#define NFATAL ((int)(sizeof fatal_signals / sizeof fatal_signals[0]))
static struct sigaction previous[NFATAL];

static int fatal_index(int sig)
{
	for (int i = 0; i < NFATAL; i++)
		if (fatal_signals[i] == sig)
			return i;
	return -1;
}

/* Async-signal-safe: stores and sigaction/raise only. */
static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct popmon_live_header *h = popmon_live;
	int i = fatal_index(sig);
	if (h) {
		POPMON_STORE(h->last_signal_tick, popmon_now());
		POPMON_STORE(h->last_signal, sig);
	}
	if (i < 0) {
		errno = saved;
		return;
	}
	struct sigaction *p = &previous[i];
	if (p->sa_flags & SA_SIGINFO) {
		if (p->sa_sigaction)
			p->sa_sigaction(sig, si, uc);
	} else if (p->sa_handler == SIG_DFL) {
		/* The default action ends the process: say so, then let it. */
		popmon_live_state(POPMON_LIVE_SIGNALED, sig);
		sigaction(sig, p, NULL);
		raise(sig); /* delivered when this handler returns (a synchronous fault recurs) */
	} else if (p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
	}
	errno = saved;
}

/* Installs the recording handler in front of the handlers in place (the
 * MPI library's included: this runs after MPI_Init). Signals the program
 * ignores stay ignored; POPMON_SIGNALS=off leaves every handler alone. */
static void install_signal_handlers(void)
{
	if (!popmon_env_switch("POPMON_SIGNALS", 1, 1))
		return;
	for (int i = 0; i < NFATAL; i++) {
		struct sigaction cur;
		if (sigaction(fatal_signals[i], NULL, &cur) != 0)
			continue;
		if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
			continue;
		previous[i] = cur;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_fatal_signal;
		sa.sa_mask = cur.sa_mask;
		sa.sa_flags = SA_SIGINFO | (cur.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER));
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

void popmon_live_mpi_init(int rank, int size, uint64_t init_tick)
{
	struct popmon_live_header *h = popmon_live;
	if (!h)
		return;
	POPMON_STORE(h->rank, rank);
	POPMON_STORE(h->size, size);
	POPMON_STORE(h->init_tick, init_tick);
	popmon_live_publish();
	popmon_live_state(POPMON_LIVE_RUNNING, 0);
	install_signal_handlers();
}

void popmon_mpi_abort_hook(int code)
{
	if (popmon_proc.inert)
		return;
	popmon_live_state(POPMON_LIVE_ABORTED, code);
}
